"""The API 0.2 host services: artifacts, the dynamic tool catalog, secrets,
policy intents and presentation snapshots.

Each function calls the matching WIT import (``services.wit``). The shim
checks the negotiated feature, the request the call acts for and every bound
before anything reaches the host, so nothing is validated here: a refused
call raises :class:`~octet_guest.InvalidParams` (a bound, -32602),
:class:`~octet_guest.RpcError` (a missing feature -32601, or the host's own
error, e.g. -32004 ``secret is unavailable``) or
:class:`~octet_guest.HostError`, and writes nothing. Raised from a tool
handler, each is answered as is.

Declare the features the extension uses (see
:meth:`~octet_guest.Extension.uses_artifacts` and its siblings): the shim
negotiates exactly the declared ones and refuses the services of the others.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

from wit_world.imports import artifacts as wit_artifacts
from wit_world.imports import policy as wit_policy
from wit_world.imports import presentation as wit_presentation
from wit_world.imports import secrets as wit_secrets
from wit_world.imports import tools_catalog as wit_catalog
from wit_world.imports import types as wit

from .host import _call
from .values import AttrDict

# --- artifacts (feature `artifacts`) --------------------------------------

#: The MIME types the host accepts; the bytes must start with the type's
#: signature.
MIME_TYPES = (
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "audio/wav",
    "audio/mpeg",
    "audio/flac",
    "audio/opus",
    "audio/aac",
    "audio/mp4",
)


def publish_artifact(mime_type: str, data: Union[bytes, bytearray, memoryview]) -> str:
    """Publishes ``data`` as an artifact of ``mime_type`` for the tool call or
    command being served and returns its id, for :func:`image_content` /
    :func:`audio_content` parts of any tool result of the same session.

    At most 20 MiB per artifact, 64 artifacts and 64 MiB per process
    generation (the shim names the bound it refuses)."""
    return _call(wit_artifacts.publish, str(mime_type), bytes(data))


# --- the dynamic tool catalog (feature `dynamic_tools`) --------------------


class CatalogUpdate(AttrDict):
    """A catalog the host accepted: ``revision`` (0 is the described
    catalog) and ``tools``, the complete list of the extension's active tool
    names. Keys read as attributes."""

    __slots__ = ()


def _catalog(update: Any) -> CatalogUpdate:
    return CatalogUpdate(revision=update.revision, tools=list(update.tools))


def _json_text(value: Any, what: str) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{what} is not JSON: {exc}") from None


def tool_definition(name: str, description: Optional[str] = None,
                    parameters: Optional[Mapping[str, Any]] = None, *,
                    output_schema: Optional[Mapping[str, Any]] = None) -> Any:
    """The WIT definition of a tool, as :meth:`Extension.tool` makes it
    (the description defaults to the name, the parameters to
    ``{"type": "object"}``)."""
    return wit.ToolDefinition(
        str(name),
        str(description or name),
        _json_text({"type": "object"} if parameters is None else parameters, "parameters"),
        None if output_schema is None else _json_text(output_schema, "output_schema"),
    )


def _definition(tool: Any, known: Mapping[str, Any]) -> Any:
    if isinstance(tool, wit.ToolDefinition):
        return tool
    if isinstance(tool, str):
        definition = known.get(tool)
        if definition is None:
            raise ValueError(
                f"no tool named {tool!r} is registered: use @ext.dynamic_tool, or pass "
                "the definition as a dict"
            )
        return definition
    if isinstance(tool, Mapping):
        unknown = sorted(set(tool) - {"name", "description", "parameters", "output_schema"})
        if unknown or "name" not in tool:
            raise ValueError(
                "a tool definition is {name, description?, parameters?, output_schema?}"
                + (f", not {', '.join(unknown)}" if unknown else "")
            )
        return tool_definition(
            tool["name"],
            tool.get("description"),
            tool.get("parameters"),
            output_schema=tool.get("output_schema"),
        )
    raise TypeError(f"a tool is a name, a definition dict or a ToolDefinition, not {tool!r}")


def _names(items: Union[str, Iterable[Any]]) -> list:
    return [items] if isinstance(items, (str, Mapping)) else list(items)


def register_tools(tools: Union[str, Mapping[str, Any], Iterable[Any]],
                   known: Optional[Mapping[str, Any]] = None) -> CatalogUpdate:
    """Adds or replaces 1..=256 tools in the catalog. Each item is the name
    of a tool the extension registered (``@ext.dynamic_tool`` or
    ``@ext.tool``: its definition is sent), a definition dict
    ``{"name", "description", "parameters", "output_schema"}`` or a
    ``ToolDefinition``. Calls of a tool with no handler in this guest are
    answered ``unknown tool``. Returns the accepted :class:`CatalogUpdate`
    (host policy may omit requested names)."""
    if known is None:
        from .extension import served_extension

        known = served_extension()._definitions()
    definitions = [_definition(tool, known) for tool in _names(tools)]
    return _catalog(_call(wit_catalog.register, definitions))


def unregister_tools(names: Union[str, Iterable[str]]) -> CatalogUpdate:
    """Removes 1..=256 tools by name (names not in the catalog are
    ignored); returns the accepted :class:`CatalogUpdate`."""
    return _catalog(_call(wit_catalog.unregister, [str(name) for name in _names(names)]))


def current_tools() -> CatalogUpdate:
    """The committed catalog: its revision and tool names."""
    return _catalog(wit_catalog.current())


# --- secrets (feature `secrets`) -------------------------------------------


def get_secret(name: str) -> str:
    """The value of the secret ``name`` (declared under ``[capabilities]
    secrets``), for the tool call or command being served. A secret the
    broker does not have is the host's :class:`RpcError` -32004. Never log
    a value or put it in results, progress, metadata or presentation."""
    return _call(wit_secrets.get, str(name))


# --- policy (features `policy_intents`, `approvals`) -----------------------

_DECISIONS = {
    wit_policy.Decision.ALLOW: "allow",
    wit_policy.Decision.ASK: "ask",
    wit_policy.Decision.DENY: "deny",
}


def intent(kind: str, operation: str, target: Optional[Mapping[str, Any]] = None, *,
           data_classes: Sequence[str] = (), read_only: Optional[bool] = None,
           destructive: Optional[bool] = None) -> dict:
    """A policy intent in the wire's shape: ``kind`` (e.g.
    ``external_side_effect``), ``operation`` (a stable dotted name such as
    ``issues.create``), ``target`` (a JSON object for display and audit,
    default ``{}``), ``data_classes`` and the optional hints (which can only
    raise caution)."""
    value: dict = {
        "kind": kind,
        "operation": operation,
        "target": {} if target is None else target,
        "data_classes": list(data_classes),
    }
    if read_only is not None:
        value["read_only"] = read_only
    if destructive is not None:
        value["destructive"] = destructive
    return value


class Verdict(AttrDict):
    """The host's classification: ``decision`` (``"allow"``, ``"ask"`` or
    ``"deny"``) and ``approval_token`` (with ``ask``, when a frontend
    approved: evaluate the identical intent again with it, from the same
    request, to get ``allow``). ``ask`` without a token means: not
    authorized."""

    __slots__ = ()

    @property
    def allowed(self) -> bool:
        """Whether the decision is ``allow``."""
        return self["decision"] == "allow"


def _intent(value: Any) -> Any:
    if isinstance(value, wit_policy.Intent):
        return value
    if not isinstance(value, Mapping):
        raise TypeError(f"an intent is a dict (see octet_guest.intent), not {value!r}")
    unknown = sorted(
        set(value) - {"kind", "operation", "target", "data_classes", "read_only", "destructive"}
    )
    if unknown:
        raise ValueError(f"intent: unknown keys {', '.join(unknown)}")
    return wit_policy.Intent(
        str(value.get("kind", "")),
        str(value.get("operation", "")),
        _json_text(value.get("target", {}), "intent target"),
        [str(c) for c in value.get("data_classes") or []],
        value.get("read_only"),
        value.get("destructive"),
    )


def evaluate_policy(intent: Any, token: Optional[str] = None) -> Verdict:
    """Asks the host to classify ``intent`` (a dict, see :func:`intent`)
    for the tool call or command being served; ``token`` redeems an approval
    (needs ``approvals``). Returns a :class:`Verdict`."""
    verdict = _call(wit_policy.evaluate, _intent(intent), token)
    return Verdict(decision=_DECISIONS[verdict.decision], approval_token=verdict.approval_token)


# --- presentation (manifest `[contributes] presentation = true`) -----------


def _owner(owner: Any) -> Any:
    if owner is None or isinstance(owner, wit.ResourceOwner):
        return owner
    if isinstance(owner, Mapping) and "resource_owner" in owner:
        # A call Context: its owner.
        owner = owner["resource_owner"]
        if owner is None:
            raise ValueError("the call context has no resource owner (API 0.1)")
    if not isinstance(owner, Mapping):
        raise TypeError(f"an owner is ctx.resource_owner (a dict), not {owner!r}")
    return wit.ResourceOwner(
        str(owner["session_id"]),
        str(owner["extension_instance_id"]),
        int(owner["process_generation"]),
    )


def update_presentation(snapshot: Any, owner: Any = None) -> None:
    """Publishes ``snapshot``, a complete replacement of what the frontend
    shows for the extension (a dict: ``revision``, strictly increasing,
    ``status``, ``activities``, ``collection``, ``actions``). Inside a
    request the request is the parent (the host derives the owner) unless
    ``owner`` names one the host issued to this process
    (``ctx.resource_owner``, or the call context itself); outside a request
    with no owner the snapshot is process-scoped."""
    _call(wit_presentation.update, _json_text(snapshot, "snapshot"), _owner(owner))


__all__ = [
    "MIME_TYPES",
    "CatalogUpdate",
    "Verdict",
    "current_tools",
    "evaluate_policy",
    "get_secret",
    "intent",
    "publish_artifact",
    "register_tools",
    "tool_definition",
    "unregister_tools",
    "update_presentation",
]
