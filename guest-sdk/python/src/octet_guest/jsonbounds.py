"""Size and nesting of JSON values a handler hands the host, checked with
the shim's own definitions before anything crosses the WIT boundary."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Optional


def dumps(value: Any, what: str) -> str:
    """Compact JSON text of ``value``, or a ``ValueError`` naming ``what``."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError, RecursionError) as error:
        raise ValueError(f"{what} is not JSON: {error}") from None


def shape_problem(value: Any, what: str, *, max_depth: int,
                  max_nodes: Optional[int] = None) -> Optional[str]:
    """Why ``value`` is nested deeper than ``max_depth`` containers or has
    more than ``max_nodes`` values, or None (walked without recursion, so
    a hostile depth cannot exhaust the interpreter's stack)."""
    nodes = 0
    stack = [(value, 0)]
    while stack:
        item, outer = stack.pop()
        nodes += 1
        if max_nodes is not None and nodes > max_nodes:
            return f"{what} has more than {max_nodes} JSON values"
        if isinstance(item, Mapping):
            children = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        depth = outer + 1
        if depth > max_depth:
            return f"{what} is nested deeper than {max_depth} levels"
        stack.extend((child, depth) for child in children)
    return None
