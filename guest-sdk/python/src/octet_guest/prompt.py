"""Tool prompt metadata (API 0.4, feature ``tool_prompt_metadata_v1``): a
``prompt_snippet`` the host may put in the system prompt's list of tools
and ``prompt_guidelines`` for the model (docs/api-0.4.md#v04-prompt-metadata).

octet refuses the whole tool catalog for one string out of bounds, so the
bounds are checked here when the tool is registered (at build time for
``@ext.tool``), with the sentence the shim would log: each string at most
1,024 UTF-8 bytes with LF and TAB the only control characters, at most 16
guidelines.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Any, Optional

FEATURE = "tool_prompt_metadata_v1"
MAX_PROMPT_TEXT_BYTES = 1024
MAX_PROMPT_GUIDELINES = 16


def _text_problem(text: Any) -> Optional[str]:
    if not isinstance(text, str):
        return f"must be a string, not {type(text).__name__}"
    size = len(text.encode("utf-8"))
    if size > MAX_PROMPT_TEXT_BYTES:
        return f"has {size} bytes; the limit is {MAX_PROMPT_TEXT_BYTES}"
    for char in text:
        if char not in "\n\t" and unicodedata.category(char) == "Cc":
            return (f"contains the control character U+{ord(char):04X} "
                    "(only LF and TAB are allowed)")
    return None


def check(tool: str, snippet: Any, guidelines: Any) -> tuple:
    """The metadata of ``tool`` as ``(snippet, [guidelines])``, or a
    ``ValueError`` (``TypeError`` for a wrong type) naming the bound."""
    if snippet is not None:
        problem = _text_problem(snippet)
        if problem is not None:
            error = TypeError if not isinstance(snippet, str) else ValueError
            raise error(f"tool {tool}: prompt_snippet {problem}")
    if guidelines is None:
        return snippet, []
    if isinstance(guidelines, (str, bytes)) or not isinstance(guidelines, Sequence):
        raise TypeError(f"tool {tool}: prompt_guidelines must be a sequence of strings")
    values = list(guidelines)
    if len(values) > MAX_PROMPT_GUIDELINES:
        raise ValueError(f"tool {tool} has {len(values)} prompt guidelines; "
                         f"the limit is {MAX_PROMPT_GUIDELINES}")
    for index, guideline in enumerate(values, start=1):
        problem = _text_problem(guideline)
        if problem is not None:
            error = TypeError if not isinstance(guideline, str) else ValueError
            raise error(f"tool {tool}: prompt guideline {index} {problem}")
    return snippet, values


def has(tool: Any) -> bool:
    return tool.prompt_snippet is not None or bool(tool.prompt_guidelines)
