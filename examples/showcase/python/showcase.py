"""showcase (API 0.2): the API 0.2 services together, as in the Rust,
JavaScript and C versions (the same transcript: tests/e2e/showcase.rs).

- `chart {values}` draws a bar chart, publishes it as a PNG artifact, shows
  it in the extension's presentation panel and returns it as an image part;
- `unlock_stats {}` registers the dynamic tool `chart_stats` (min, max, mean
  of the last chart) and returns the new catalog revision;
- `/charts` lists how many charts this instance drew (the panel's action).

Written for octet's Python SDK."""

import binascii
import struct

from octet_extension import Extension, RpcError, image_content, text_content, tool_result

# One instance, so the chart a call drew is the one `chart_stats` and
# `/charts` see; and only the features it uses.
ext = Extension(
    max_concurrent_requests=1,
    supported_features=("request_cancellation", "content_parts", "artifacts", "dynamic_tools"),
)

# What this instance drew: kept across requests, lost with the instance.
state = {"charts": 0, "last": []}


def png(width, height, pixel):
    """A grayscale PNG (stored, uncompressed deflate) of `width` x `height`."""
    raw = bytearray()
    for y in range(height):
        raw.append(0)  # filter: none
        raw.extend(pixel(x, y) for x in range(width))
    zlib = bytearray(b"\x78\x01")
    blocks = [raw[at:at + 65535] for at in range(0, len(raw), 65535)] or [b""]
    for i, block in enumerate(blocks):
        zlib.append(1 if i + 1 == len(blocks) else 0)
        zlib += struct.pack("<HH", len(block), len(block) ^ 0xFFFF)
        zlib += block
    a, b = 1, 0
    for byte in raw:
        a = (a + byte) % 65521
        b = (b + a) % 65521
    zlib += struct.pack(">I", (b << 16) | a)
    out = bytearray(b"\x89PNG\r\n\x1a\n")

    def chunk(kind, data):
        body = kind + bytes(data)
        out.extend(struct.pack(">I", len(data)) + body + struct.pack(">I", binascii.crc32(body)))

    chunk(b"IHDR", struct.pack(">II", width, height) + bytes([8, 0, 0, 0, 0]))  # 8-bit grayscale
    chunk(b"IDAT", zlib)
    chunk(b"IEND", b"")
    return bytes(out)


def bar_chart(values):
    bar, height = 8, 64

    def pixel(x, y):
        top = height - values[x // bar] * height // 256
        return 32 if y >= top and x % bar != 0 else 240

    return png(max(len(values), 1) * bar, height, pixel)


def chart_values(args):
    values = args.get("values") if isinstance(args, dict) else None
    if not isinstance(values, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 255 for v in values
    ):
        raise RpcError(-32602, "values must be a list of integers from 0 to 255")
    if not 1 <= len(values) <= 64:
        raise RpcError(-32602, "values must have 1 to 64 entries")
    return values


@ext.tool(
    name="chart",
    description="Draw a bar chart of 1-64 values (0-255) and show it",
    parameters={
        "type": "object",
        "properties": {
            "values": {
                "type": "array",
                "items": {"type": "integer", "minimum": 0, "maximum": 255},
                "minItems": 1,
                "maxItems": 64,
            },
        },
        "required": ["values"],
    },
)
def chart(args):
    values = chart_values(args)
    artifact = ext.publish_artifact(mime_type="image/png", data=bar_chart(values))
    state["charts"] += 1
    state["last"] = list(values)
    n = state["charts"]
    ext.publish_presentation({
        "revision": n,
        "status": {"state": "succeeded", "label": f"{n} chart(s)"},
        "activities": [{
            "id": f"chart:{n}",
            "kind": "chart",
            "state": "succeeded",
            "summary": f"Bar chart of {len(values)} values",
            "references": [{"kind": "artifact", "id": artifact, "label": "Chart"}],
        }],
        "actions": [{"id": "count", "label": "Count charts", "command": "charts"}],
    })
    return tool_result(
        text_content(f"Chart of {len(values)} values."),
        image_content(artifact, "image/png", alt="bar chart"),
    )


@ext.tool(name="unlock_stats", description="Make the chart_stats tool available")
def unlock_stats(args):
    update = ext.register_tools([{"name": "chart_stats"}])
    return f"chart_stats is available from catalog revision {update['revision']}"


@ext.dynamic_tool(
    name="chart_stats",
    description="Min, max and mean of the last chart's values",
    output_schema={
        "type": "object",
        "properties": {
            "min": {"type": "integer"},
            "max": {"type": "integer"},
            "mean": {"type": "number"},
        },
        "required": ["min", "max", "mean"],
    },
)
def chart_stats(args):
    values = state["last"]
    if not values:
        return tool_result(text_content("no chart drawn yet in this instance"), is_error=True)
    low, high, mean = min(values), max(values), sum(values) / len(values)
    # `:.1f` rounds the exact binary value half to even, as Rust's `{:.1}`
    # and C's `%.1f` do (0.25 is "0.2"), so no correction is needed here.
    return tool_result(
        text_content(f"min {low}, max {high}, mean {mean:.1f}"),
        structured_content={"min": low, "max": high, "mean": mean},
    )


@ext.command(name="charts", description="How many charts this session drew")
def charts(arguments):
    return f"{state['charts']} chart(s) drawn"


if __name__ == "__main__":
    ext.run()
