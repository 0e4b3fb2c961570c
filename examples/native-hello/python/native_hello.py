"""native-hello (API 0.4): octet's own first 0.4 example, the Rust/C/C++
`hello` tool over octet's native SDK, here in Python as a sandboxed
component (the Rust port is examples/native-hello/rust).

One tool, `hello`: it checks its arguments as strictly as its schema says
(an object with a `name` of at most 256 Unicode scalars and an optional
integer `delay_ms` from 0 to 5000, nothing else; anything else is -32602),
waits the delay cooperatively, stopping as soon as the request is
cancelled, and greets. Like octet's native SDK it negotiates only the two
required features and serves one call at a time; the wire (cancellation,
shutdown, framing) is the shim's.
"""

from octet_extension import Extension, RpcError

MAX_NAME_CHARS = 256
MAX_DELAY_MS = 5000

ext = Extension(
    api_version="0.4",
    max_concurrent_requests=1,
    supported_features=("request_cancellation", "content_parts"),
)


def arguments(args):
    """(name, delay_ms) as the schema allows them, or -32602."""
    if not isinstance(args, dict):
        raise RpcError(-32602, "arguments must be an object")
    unknown = sorted(set(args) - {"name", "delay_ms"})
    if unknown:
        raise RpcError(-32602, f"unknown argument {unknown[0]!r}")
    name = args.get("name")
    if not isinstance(name, str):
        raise RpcError(-32602, "name must be a string")
    if len(name) > MAX_NAME_CHARS:
        raise RpcError(-32602, f"name must be at most {MAX_NAME_CHARS} characters")
    delay_ms = args.get("delay_ms", 0)
    if isinstance(delay_ms, bool) or not isinstance(delay_ms, int) \
            or not 0 <= delay_ms <= MAX_DELAY_MS:
        raise RpcError(-32602, f"delay_ms must be an integer from 0 to {MAX_DELAY_MS}")
    return name, delay_ms


@ext.tool(
    name="hello",
    description="Return a local greeting",
    parameters={
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": MAX_NAME_CHARS},
            "delay_ms": {"type": "integer", "minimum": 0, "maximum": MAX_DELAY_MS,
                         "default": 0},
        },
        "required": ["name"],
        "additionalProperties": False,
    },
)
def hello(args):
    name, delay_ms = arguments(args)
    if delay_ms and ext.cancellation.wait(delay_ms / 1000):
        ext.cancellation.raise_if_cancelled()
    return f"Hello, {name}!"


if __name__ == "__main__":
    ext.run()
