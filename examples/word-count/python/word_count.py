"""word-count (API 0.2): the file-reading reference. One tool,
`word_count {path}`, that reads a text file of the workspace (granted by
`filesystem = "workspace"`) and returns its line, word, character and byte
counts, as text and as structured content.

Files are Python's own `os.stat` and `open`: relative paths resolve in the
workspace. The Rust, JavaScript and C versions answer word for word the same
(tests/e2e/word_count.rs). Written for octet's Python SDK."""

import os
import stat

from octet_extension import Extension, RpcError, text_content, tool_result

# Files above this size are refused rather than read into memory.
MAX_BYTES = 1 << 20

# Stateless, so any instance of a pool serves any call; only the features
# it uses.
ext = Extension(supported_features=("request_cancellation", "content_parts"))


def checked_path(args):
    """A relative path that stays in the workspace: not empty, not
    absolute, no `..` component."""
    path = args.get("path") if isinstance(args, dict) else None
    if not isinstance(path, str):
        raise RpcError(-32602, "path must be a string")
    if path == "" or path.startswith("/") or ".." in path.split("/"):
        raise RpcError(-32602, "path must be relative to the workspace, without `..`")
    return path


def failed(text):
    """A failure the model reads: an `is_error` result."""
    return tool_result(text_content(text), is_error=True)


@ext.tool(
    name="word_count",
    description="Count the lines, words, characters and bytes of a text file in the workspace",
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "A file in the workspace, relative to its root"},
        },
        "required": ["path"],
        "additionalProperties": False,
    },
    output_schema={
        "type": "object",
        "properties": {
            "lines": {"type": "integer"},
            "words": {"type": "integer"},
            "chars": {"type": "integer"},
            "bytes": {"type": "integer"},
        },
        "required": ["lines", "words", "chars", "bytes"],
    },
)
def word_count(args):
    path = checked_path(args)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return failed(f"{path}: no such file in the workspace")
    except OSError:
        return failed(f"{path} cannot be read")
    if stat.S_ISDIR(info.st_mode):
        return failed(f"{path} is a directory, not a file")
    if info.st_size > MAX_BYTES:
        return failed(f"{path} is larger than 1 MiB")
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_BYTES + 1)
    except OSError:
        return failed(f"{path} cannot be read")
    if len(data) > MAX_BYTES:
        # It grew between the stat and the read.
        return failed(f"{path} is larger than 1 MiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return failed(f"{path} is not UTF-8 text")
    # bytes.split() splits on ASCII whitespace only (space, \t, \n, \r, \v,
    # \f): the same set in every language. len(str) counts code points.
    lines, words, chars = data.count(b"\n"), len(data.split()), len(text)
    return tool_result(
        text_content(f"{path}: {lines} lines, {words} words, {chars} characters, "
                     f"{len(data)} bytes"),
        structured_content={"lines": lines, "words": words, "chars": chars, "bytes": len(data)},
    )


if __name__ == "__main__":
    ext.run()
