"""text-stats (API 0.4): octet's typescript-hello example, whose one tool
`text_stats` counts characters, words, lines and UTF-8 bytes of the text it
is given, here in Python as a sandboxed component (the Rust port is
examples/text-stats/rust). Serves two calls at once.

A call checks for cancellation, reports one progress status when the host
negotiated progress, waits `delayMs` cooperatively, then answers
`characters=… words=… lines=… utf8_bytes=…` with the counts as the
TypeScript original computes them (code points; whitespace-separated tokens
of the trimmed text; pieces between CRLF, CR or LF, 0 for empty text;
bytes).
"""

import re

from octet_extension import Extension, RpcError

MAX_TEXT_CHARS = 65_536
MAX_DELAY_MS = 2_000
# What separates words: Unicode White_Space plus U+FEFF, as in the Rust port
# (Python's own `\s` would also split at U+001C..U+001F).
_SPACE = re.compile("[\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f"
                    "\u3000\ufeff]+")

ext = Extension(
    api_version="0.4",
    max_concurrent_requests=2,
    supported_features=("request_cancellation", "content_parts", "request_progress"),
)


def stats(text):
    characters = len(text)
    words = len([word for word in _SPACE.split(text) if word])
    lines = 0 if not text else len(re.split(r"\r\n|\r|\n", text))
    return (f"characters={characters} words={words} lines={lines} "
            f"utf8_bytes={len(text.encode('utf-8'))}")


def arguments(args):
    """(text, delayMs) as the schema allows them, or -32602."""
    if not isinstance(args, dict):
        raise RpcError(-32602, "arguments must be an object")
    unknown = sorted(set(args) - {"text", "delayMs"})
    if unknown:
        raise RpcError(-32602, f"unknown argument {unknown[0]!r}")
    text = args.get("text")
    if not isinstance(text, str):
        raise RpcError(-32602, "text must be a string")
    if len(text) > MAX_TEXT_CHARS:
        raise RpcError(-32602, f"text must be at most {MAX_TEXT_CHARS} characters")
    delay = args.get("delayMs", 0)
    if isinstance(delay, bool) or not isinstance(delay, int) or not 0 <= delay <= MAX_DELAY_MS:
        raise RpcError(-32602, f"delayMs must be an integer from 0 to {MAX_DELAY_MS}")
    return text, delay


@ext.tool(
    name="text_stats",
    description="Count characters, words, lines and UTF-8 bytes in supplied text locally",
    parameters={
        "type": "object",
        "properties": {
            "text": {"type": "string", "maxLength": MAX_TEXT_CHARS},
            "delayMs": {"type": "integer", "minimum": 0, "maximum": MAX_DELAY_MS},
        },
        "required": ["text"],
        "additionalProperties": False,
    },
)
def text_stats(args):
    text, delay = arguments(args)
    ext.cancellation.raise_if_cancelled()
    if "request_progress" in ext.negotiated_features:
        ext.progress(message="Counting supplied text")
    if delay and ext.cancellation.wait(delay / 1000):
        ext.cancellation.raise_if_cancelled()
    return stats(text)


if __name__ == "__main__":
    ext.run()
