"""hello-delay (API 0.2): the cancellation reference. One tool, `hello`, that
validates its own arguments and waits cooperatively, stopping as soon as the
request is cancelled (written for octet's Python SDK)."""

from octet_extension import Extension, RpcError, current_cancellation

# Longest name accepted, in characters (the schema's `maxLength`).
MAX_NAME_CHARS = 256
# Longest delay accepted, in milliseconds (the schema's `maximum`).
MAX_DELAY_MS = 5000

# Exactly the required features (least privilege), one request at a time.
ext = Extension(
    max_concurrent_requests=1,
    supported_features=("request_cancellation", "content_parts"),
)


def parse(args):
    """The name and delay, checked like the schema (JSON Schema counts
    Unicode scalar values, as Python's `len` does)."""
    if not isinstance(args, dict):
        raise RpcError(-32602, "arguments must be an object")
    unknown = sorted(set(args) - {"name", "delay_ms"})
    if unknown:
        raise RpcError(-32602, f"unknown arguments: {', '.join(unknown)}")
    name = args.get("name")
    if not isinstance(name, str):
        raise RpcError(-32602, "name must be a string")
    if len(name) > MAX_NAME_CHARS:
        raise RpcError(-32602, f"name must be at most {MAX_NAME_CHARS} characters")
    delay_ms = args.get("delay_ms", 0)
    if isinstance(delay_ms, bool) or not isinstance(delay_ms, int) or not 0 <= delay_ms <= MAX_DELAY_MS:
        raise RpcError(-32602, f"delay_ms must be an integer from 0 to {MAX_DELAY_MS}")
    return name, delay_ms


@ext.tool(
    name="hello",
    description="Return a local greeting",
    parameters={
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": MAX_NAME_CHARS},
            "delay_ms": {"type": "integer", "minimum": 0, "maximum": MAX_DELAY_MS, "default": 0},
        },
        "required": ["name"],
        "additionalProperties": False,
    },
)
def hello(args):
    name, delay_ms = parse(args)
    token = current_cancellation()
    if delay_ms > 0 and token.wait(delay_ms / 1000):
        token.raise_if_cancelled()
    return f"Hello, {name}!"


if __name__ == "__main__":
    ext.run()
