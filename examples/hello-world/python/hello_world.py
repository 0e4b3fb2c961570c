"""hello-world (API 0.1): the whole API 0.1 surface in one small extension —
a tool, a command, two hooks, context, a status line and a renderer —
written for octet's Python SDK and built unchanged into a component."""

from octet_extension import Extension, RpcError

# The name greeted when none is given.
DEFAULT_NAME = "tinkerer"

ext = Extension()


def greeting(name):
    return f"Hello, {name}!"


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
def hello_world(args):
    name = args.get("name", DEFAULT_NAME)
    if not isinstance(name, str):
        raise RpcError(-32602, "name must be a string")
    ext.notify(f"hello_world greeted {name}", level="success")
    return {"content": greeting(name)}


@ext.command(name="hello", description="Show a greeting notification", usage="/hello [name]")
def hello(arguments):
    return {"text": greeting(arguments[0] if arguments else DEFAULT_NAME)}


@ext.hook("before_prompt")
@ext.hook("after_response")
def proceed(payload):
    return None


@ext.context
def context(params):
    return [
        {
            "label": "hello-world",
            "content": "The hello-world extension is active.",
            "placement": "system_suffix",
        }
    ]


@ext.status("status")
def status(params):
    return {
        "surface": params.get("surface", "status"),
        "text": "hello",
        "style_role": "extension.hello_world.status",
        "priority": 0,
    }


@ext.renderer("hello_world")
def render(params):
    output = params.get("output") or "waiting"
    return {
        "segments": [
            {"text": f"hello_world · {output}", "style_role": "extension.hello_world.tool"}
        ]
    }


if __name__ == "__main__":
    ext.run()
