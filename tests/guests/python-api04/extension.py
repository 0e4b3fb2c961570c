"""python-api04: the Python SDK's API 0.4 surface, written in the idiom of
octet's Python SDK and built against octet:extension@0.4.0
(tests/e2e/python_api_04.rs).

Tools: `prompted` (a prompt snippet and two guidelines, with the TAB and LF
they may hold), `plain` (none). Composition (`tool_composition_v1`,
declared by `uses_composition()`): `compose_call {name, arguments, full}`
answers the other tool's value (or outcome) as JSON text,
`compose_stream {name, arguments, full, first}` starts a streaming call
(`call_streaming`) and answers the updates it read and the value, or with
`first` abandons the call after the first update,
`compose_context` the context, `compose_store {set, delete}` `stored`,
`compose_bad {case}` a request the SDK refuses before anything is written;
command `compose` tries to compose from a command.

Hooks: `cache_warming_decision` (typed: `stop` above 5,000 microdollars),
`compaction_strategy` (`text` names how many 16-byte PNG frames, or `gif`
for one that is not a PNG), `before_provider_request` (adds
`"temperature": 0`, or a scalar payload for `"scalar": true`),
`before_provider_headers` (sets, replaces and deletes headers),
`after_provider_response` (observes).
"""

import json

from octet_extension import (
    Extension,
    compaction_frames,
    composition,
    provider_headers,
    provider_payload,
)

ext = Extension(api_version="0.4", max_concurrent_requests=1).uses_composition()


@ext.tool(name="prompted", description="A tool with prompt metadata",
          prompt_snippet="prompted: shows what prompt metadata looks like",
          prompt_guidelines=["Use it for tests only", "Columns:\tname\nthen value"])
def prompted(args):
    return "prompted"


@ext.tool(name="plain", description="A tool without prompt metadata")
def plain(args):
    return "plain"


@ext.tool(name="compose_call", description="Call another tool through octet")
def compose_call(args):
    value = composition.call(args["name"], args.get("arguments"),
                             full_outcome=bool(args.get("full")))
    return json.dumps(value, separators=(",", ":"))


@ext.tool(name="compose_stream", description="Call another tool, reading its partial results")
def compose_stream(args):
    call = composition.call_streaming(args["name"], args.get("arguments"),
                                      full_outcome=bool(args.get("full")))
    updates = []
    with call:
        for update in call:
            updates.append([update.sequence, update.result])
            if args.get("first"):
                return json.dumps({"updates": updates}, separators=(",", ":"))
        value = call.finish()
    return json.dumps({"updates": updates, "value": value}, separators=(",", ":"))


@ext.tool(name="compose_context", description="Read the composition context")
def compose_context(args):
    return json.dumps(composition.context(), separators=(",", ":"))


@ext.tool(name="compose_store", description="Commit to the composition store")
def compose_store(args):
    composition.store(args.get("set"), args.get("delete", []))
    return "stored"


_BAD = {
    "name": lambda: composition.call("not a name"),
    "arguments": lambda: composition.call("plain", {"text": "x" * (128 * 1024)}),
    "twice": lambda: composition.store({"k": 1}, ["k"]),
}


@ext.tool(name="compose_bad", description="A composition the SDK refuses")
def compose_bad(args):
    _BAD[args["case"]]()
    return "sent"


@ext.command(name="compose", description="Compose from a command")
def compose(args):
    return json.dumps(composition.call("plain"))


@ext.cache_warming_decision
def warming(payload):
    return "stop" if payload["decision"]["warm_cost_microdollars"] > 5000 else None


@ext.hook("compaction_strategy")
def compaction(payload):
    text = payload["text"]
    if text == "gif":
        return {"compaction_frames": [b"GIF89a"]}
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(8))
    return compaction_frames(*[png] * int(text)) if text != "0" else None


@ext.hook("before_provider_request")
def provider_request(payload):
    if payload["payload"].get("scalar"):
        return {"provider_payload": "scalar"}
    return provider_payload({**payload["payload"], "temperature": 0})


@ext.hook("before_provider_headers")
def provider_header_changes(payload):
    return provider_headers({"x-trace": "on", "accept": ["a/b", "c/d"], "x-secret": None})


observed = []


@ext.hook("after_provider_response")
def provider_response(payload):
    observed.append(payload["status"])


if __name__ == "__main__":
    ext.run()
