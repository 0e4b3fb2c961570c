#!/usr/bin/env python3
"""Render a (tiny) chart as a PNG artifact and unlock a tool about it at run
time: the Python SDK's API 0.2 media and dynamic-catalog idiom."""

import struct
import zlib

from octet_extension import Extension, image_content, text_content, tool_result

ext = Extension(api_version="0.2", max_concurrent_requests=1)
charts = []

CHART_SCHEMA = {
    "type": "object",
    "properties": {"bars": {"type": "integer"}, "peak": {"type": "integer"}},
    "required": ["bars", "peak"],
}


def png(width, height):
    """A black PNG of the given size."""

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


@ext.tool(
    name="chart",
    description="Draw a bar chart",
    parameters={
        "type": "object",
        "properties": {"values": {"type": "array", "items": {"type": "integer"}}},
        "required": ["values"],
    },
    output_schema=CHART_SCHEMA,
)
def chart(args):
    values = args["values"]
    if not values:
        return tool_result(text_content("Nothing to draw."), is_error=True)
    artifact_id = ext.publish_artifact(mime_type="image/png", data=png(len(values), max(values)))
    charts.append(values)
    return tool_result(
        text_content(f"Drew {len(values)} bars."),
        image_content(artifact_id, "image/png", alt="bar chart"),
        structured_content={"bars": len(values), "peak": max(values)},
        metadata={"artifact": artifact_id},
    )


def chart_stats(args):
    values = charts[-1] if charts else []
    return f"{len(charts)} charts; the last has {len(values)} bars, sum {sum(values)}"


@ext.tool(name="unlock", description="Offer chart_stats from now on")
def unlock(args):
    update = ext.register_tool(
        name="chart_stats",
        description="Statistics of the last chart",
        handler=chart_stats,
    )
    return f"revision {update['revision']}: {', '.join(update['tools'])}"


@ext.tool(name="lock", description="Stop offering chart_stats")
def lock(args):
    update = ext.unregister_tool("chart_stats")
    return f"revision {update['revision']}: {', '.join(update['tools'])}"


if __name__ == "__main__":
    ext.run()
