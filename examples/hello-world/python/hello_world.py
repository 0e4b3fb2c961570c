"""hello-world (API 0.1): the whole API 0.1 surface in one small extension —
a tool, a command, two hooks, context, a status line and a renderer."""

from octet_extension import Extension, InvalidParams

# The name greeted when none is given.
DEFAULT_NAME = "tinkerer"

ext = Extension("hello-world")


def greeting(name):
    return f"Hello, {name}!"


@ext.tool(
    "hello_world",
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
        raise InvalidParams("name must be a string")
    ext.notify(level="success", message=f"hello_world greeted {name}")
    return greeting(name)


@ext.command("hello", description="Show a greeting notification", usage="/hello [name]")
def hello(args):
    return greeting(args[0] if args else DEFAULT_NAME)


@ext.hook("before_prompt")
@ext.hook("after_response")
def proceed(payload):
    return None


@ext.context
def context(prompt):
    return {
        "label": "hello-world",
        "content": "The hello-world extension is active.",
        "placement": "system_suffix",
    }


@ext.status("status")
def status(surface):
    return {"surface": surface, "text": "hello", "style_role": "extension.hello_world.status"}


@ext.renderer("hello_world")
def render(request):
    return {
        "text": f"hello_world · {request.output or 'waiting'}",
        "style_role": "extension.hello_world.tool",
    }
