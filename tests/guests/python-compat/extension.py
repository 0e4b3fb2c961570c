"""The compatibility test guest: the scenarios of octet's Python SDK tests
(API 0.1 and 0.2) behind tools, commands, hooks and the other contribution
points, written in the SDK's idiom, for tests/e2e/python_compat.rs (built
by scripts/build-guests-python into target/components/python/compat.wasm).

Handlers report what they received as JSON text, so the test checks both
the frames the shim writes and the arguments the SDK handed over.
"""

import json

from octet_extension import (
    CancelledError,
    Extension,
    RpcError,
    current_cancellation,
    current_request_id,
    image_content,
    text_content,
    tool_result,
)

ext = Extension(max_concurrent_requests=2)
state = {"count": 0, "lifecycle": [], "break_shutdown": False}


def dump(value):
    return json.dumps(value, sort_keys=True)


# --- handler argument shapes ----------------------------------------------


@ext.tool(name="shape_one", description="One parameter: the arguments")
def shape_one(args):
    return dump({"args": args})


@ext.tool(name="shape_two", description="Two parameters: arguments and context")
def shape_two(args, context):
    return dump({"args": args, "context": context})


@ext.tool(name="shape_none", description="No parameters")
def shape_none():
    return "no arguments"


@ext.tool(name="shape_var", description="Variadic parameters")
def shape_var(*values):
    return dump({"count": len(values), "first": values[0]})


@ext.command(name="shape", description="Arguments and context")
def shape_command(arguments, context):
    return {"text": dump({"arguments": arguments, "context": context})}


@ext.hook("before_prompt")
def before_prompt(payload, context):
    if payload.get("prompt") == "not an object":
        return "continue"
    return {"context": [{"label": "payload", "content": dump({"payload": payload,
                                                              "context": context})}]}


@ext.hook("after_response")
def after_response(payload):
    return None


@ext.context
def collect_context(params, context):
    if params.get("prompt") == "not a list":
        return {"label": "x", "content": "y"}
    return [{"label": "params", "content": dump(params), "placement": "prompt_prefix"}]


@ext.status("status")
def status(params):
    return {"surface": params["surface"], "text": dump(params), "priority": 3}


@ext.status("footer")
def footer(params, context):
    return "a string is not a status"


@ext.renderer("shape_one")
def render(params, context):
    if params.get("output") == "plain":
        return "plain text"
    if params.get("output") == "list":
        return [{"text": "a"}]
    return {"segments": [{"text": dump(params), "style_role": None}]}


# --- return conversions ---------------------------------------------------

CONVERSIONS = {
    "string": lambda: "plain text",
    "none": lambda: None,
    "number": lambda: 42,
    "list": lambda: ["a", "b"],
    "dict": lambda: {"content": "via dict", "is_error": True, "metadata": {"k": 1}},
    "dict_extra": lambda: {"content": "x", "extra": 1},
    "dict_list": lambda: {"content": [text_content("part")]},
    "parts": lambda: tool_result(text_content("a"), text_content("b"), metadata={"k": 1}),
    "empty": lambda: {"content": []},
    "too_many": lambda: {"content": [text_content("x") for _ in range(257)]},
    "media_only": lambda: {"content": [image_content("artifact_1", "image/png")]},
    "media": lambda: tool_result(text_content("image"), image_content("artifact_1", "image/png")),
    "unknown_part": lambda: {"content": [{"type": "text", "text": "x", "extra": True}]},
    "bad_is_error": lambda: {"content": [text_content("x")], "is_error": "yes"},
    "structured": lambda: {"content": [text_content("x")], "structured_content": {}},
}


@ext.tool(name="convert", description="Return the value named by kind")
def convert(args):
    kind = args["kind"]
    if kind == "raise":
        raise RuntimeError("boom")
    if kind == "rpc":
        raise RpcError(-32042, "custom failure", {"why": "asked"})
    if kind == "cancelled":
        raise CancelledError("custom")
    return CONVERSIONS[kind]()


@ext.command(name="convert", description="Return the value named by the argument")
def convert_command(arguments):
    kind = arguments[0] if arguments else "none"
    if kind == "raise":
        raise ValueError("command broke")
    return {
        "none": None,
        "string": "plain text",
        "number": 7,
        "dict": {
            "text": 5,
            "notifications": [
                {"level": "info", "title": None, "message": "untitled"},
                {"level": "warning", "title": "T", "message": "titled"},
            ],
            "context": [{"label": "l", "content": "c"}],
        },
    }[kind]


# --- requests, cancellation, concurrency ----------------------------------


@ext.tool(name="ambient", description="The ambient request id and token")
def ambient(args):
    token = current_cancellation()
    return dump({
        "current_request_id": current_request_id(),
        "request_id": ext.request_id,
        "same_token": token is ext.cancellation,
        "token_request_id": token.request_id,
        "cancelled": token.cancelled,
        "reason": token.reason,
    })


@ext.tool(name="count", description="Count the calls this instance served")
def count(args):
    state["count"] += 1
    return str(state["count"])


@ext.tool(name="wait", description="Wait cooperatively for cancellation")
def wait(args):
    token = ext.cancellation
    if "request_progress" in ext.negotiated_features:
        ext.progress(message="waiting")  # tells the test the handler runs
    if token.wait(float(args.get("seconds", 30))):
        state["count"] += 100
        token.raise_if_cancelled()
    return "waited"


@ext.tool(name="hold", description="Ask the user, then answer")
def hold(args):
    try:
        confirmed = ext.confirm(
            args.get("prompt", "Continue?"),
            detail=args.get("detail"),
            destructive=bool(args.get("destructive", False)),
        )
    except RpcError as error:
        return f"confirm failed {error.code}: {error.message}"
    return "approved" if confirmed else "denied"


@ext.tool(name="input", description="Ask for input")
def ask_input(args):
    value = ext.request_input(args.get("prompt", "Value:"), secret=bool(args.get("secret")))
    return "none" if value is None else f"got {len(value)} characters"


@ext.tool(name="report", description="Report progress three ways")
def report(args):
    sequences = [
        ext.progress(message=f"start {current_request_id()}", current=1, total=2),
        ext.progress({"type": "output", "stream": "stderr", "encoding": "utf8",
                      "data": str(current_request_id())}),
    ]
    if args.get("decorate"):
        sequences.append(ext.progress_decoration("Reporting", "detail"))
    return dump(sequences)


@ext.tool(name="swap", description="Replace shape_one's handler")
def swap(args):
    try:
        update = ext.register_tool(
            name="shape_one",
            description="Replaced",
            handler=lambda arguments: f"replaced: {dump(arguments)}",
        )
    except RpcError as error:
        return f"rejected {error.code}: {error.message}; revision {ext.tool_catalog_revision}"
    return f"revision {update['revision']}: {','.join(update['tools'])}"


@ext.tool(name="features", description="What initialize settled")
def features(args):
    return dump({
        "api_version": ext.api_version,
        "negotiated_features": sorted(ext.negotiated_features),
        "negotiated_concurrency": ext.negotiated_concurrency,
        "workspace": ext.workspace,
        "host": ext.host,
        "initialized": ext.initialized,
    })


@ext.tool(name="log", description="Write log records")
def log(args):
    ext.log.debug("hidden by the default level", n=1)
    ext.log.info("info record", n=2)
    ext.log.warning("warning record", n=3, nested={"a": [1]})
    ext.log.error("error record", n=4, odd=object())
    return "logged"


@ext.tool(name="break_shutdown", description="Make the shutdown handler fail")
def break_shutdown(args):
    state["break_shutdown"] = True
    return "armed"


# --- lifecycle and shutdown ------------------------------------------------


@ext.on_lifecycle("turn_started")
def turn_started(params):
    state["lifecycle"].append(params)


@ext.command(name="seen", description="The lifecycle events seen")
def seen(arguments):
    return dump(state["lifecycle"])


@ext.on_shutdown
def shutdown(params, context):
    if state["break_shutdown"]:
        raise RuntimeError("shutdown broke")
    ext.log.info("shutdown handler ran", params=params, context=context)


if __name__ == "__main__":
    ext.run()
