#!/usr/bin/env python3
"""An API 0.1 extension written for octet's Python SDK: a tool, commands,
every legacy hook, context, two status surfaces and a renderer, plus
notifications, a confirmation and structured logging."""

from octet_extension import Extension, current_request_id

ext = Extension()
greeted = []


@ext.tool(
    name="hello_world",
    description="Greet someone from an executable extension",
    parameters={
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
        "additionalProperties": False,
    },
)
def hello(args):
    name = args.get("name", "tinkerer")
    greeted.append(name)
    ext.notify(f"hello_world greeted {name}", level="success")
    ext.log.info("greeted", name=name, request_id=current_request_id())
    return {"content": f"Hello, {name}!"}


@ext.tool(name="whoami", description="Report the request and its context")
def whoami(args, context):
    host = ext.host
    return (
        f"request {ext.request_id} in {context['workspace']} "
        f"for {host.get('model', 'no model')}; "
        f"context keys {sorted(context)}"
    )


@ext.tool(name="explode", description="Fail, to show what the model reads")
def explode(args):
    raise RuntimeError(f"exploded on {args.get('what', 'nothing')}")


@ext.command(name="hello", description="Show a greeting notification", usage="/hello [name]")
def hello_command(arguments):
    name = arguments[0] if arguments else "tinkerer"
    return {
        "text": f"Hello, {name}!",
        "notifications": [{"level": "info", "title": None, "message": f"greeted {name}"}],
    }


@ext.command(name="checkpoint", description="Confirm, then report what was greeted")
def checkpoint(arguments, context):
    if not ext.confirm("Write a checkpoint?", detail=f"{len(greeted)} greetings"):
        return "Checkpoint skipped."
    return {
        "text": f"Checkpoint of {len(greeted)} greetings.",
        "context": [{"label": "checkpoint", "content": ", ".join(greeted),
                     "placement": "prompt_prefix"}],
    }


@ext.hook("before_prompt")
def before_prompt(payload, context):
    if "forbidden" in payload.get("prompt", ""):
        return {"disposition": {"action": "deny", "reason": "that word is forbidden"}}
    return {"disposition": {"action": "continue"}, "context": [], "notifications": []}


@ext.hook("after_response")
def after_response(payload):
    return None


@ext.hook("before_tool_call")
def before_tool_call(payload):
    return {"context": [{"label": "tool", "content": f"calling {payload['name']}"}]}


@ext.hook("after_tool_call")
def after_tool_call(payload, context):
    raise ValueError("after_tool_call is broken")


@ext.context
def collect_context(params):
    return [
        {
            "label": "hello-world",
            "content": f"The prompt was {params['prompt']!r}.",
            "placement": "system_suffix",
        }
    ]


@ext.status("status")
def collect_status(params):
    return {
        "surface": params.get("surface", "status"),
        "text": f"{len(greeted)} greeted",
        "style_role": "extension.hello_world.status",
        "priority": 0,
    }


@ext.status("footer")
def footer(params, context):
    return None


@ext.renderer("hello_world")
def render_tool(params):
    output = params.get("output") or "waiting"
    return {
        "segments": [
            {"text": f"hello_world · {output}", "style_role": "extension.hello_world.tool"}
        ]
    }


@ext.on_shutdown
def shutdown(params, context):
    ext.log.info("shutting down", params=params, context=context, greeted=len(greeted))


if __name__ == "__main__":
    ext.run()
