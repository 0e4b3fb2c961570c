#!/usr/bin/env python3
"""Index a list of items with progress, up to four calls at once: the
Python SDK's API 0.2 progress and cancellation idiom."""

from octet_extension import (
    Extension,
    current_cancellation,
    current_request_id,
    text_content,
    tool_result,
)

ext = Extension(api_version="0.2", max_concurrent_requests=4)


@ext.tool(
    name="index",
    description="Index items, reporting progress",
    parameters={
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"type": "string"}}},
        "required": ["items"],
    },
)
def index(args):
    items = args["items"]
    token = current_cancellation()
    ext.progress_decoration("Indexing", f"{len(items)} items")
    for number, item in enumerate(items, start=1):
        token.raise_if_cancelled()
        ext.progress(
            message=f"Indexed {number} of {len(items)}",
            current=number,
            total=len(items),
            unit="items",
        )
    sequence = ext.progress(
        {"type": "output", "stream": "stdout", "encoding": "utf8", "data": "done\n"}
    )
    if args.get("ask") and not ext.confirm(f"Keep the index of request {current_request_id()}?"):
        return tool_result(text_content("Index discarded."), is_error=True)
    return tool_result(
        text_content(f"Indexed {len(items)} items in {sequence} reports."),
        metadata={"request": current_request_id()},
    )


@ext.tool(name="countdown", description="Wait cooperatively, then finish")
def countdown(args):
    seconds = float(args.get("seconds", 0))
    if ext.cancellation.wait(seconds):
        ext.cancellation.raise_if_cancelled()
    return f"waited {seconds:g}s"


if __name__ == "__main__":
    ext.run()
