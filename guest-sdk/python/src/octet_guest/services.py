"""The process-based SDK's API 0.2 services (artifacts, policy intents,
secrets and the dynamic tool catalog) as :class:`~octet_guest.Extension`
methods.

Each validates like the SDK (same exception, same text) and calls the WIT
import; the shim checks the feature, the active parent and every bound
again before anything is written. The catalog keeps the SDK's local
bookkeeping (eight committed revisions plus the staged one) so a call
pinned to a revision reaches that revision's handler.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any, Optional

from wit_world.imports import artifacts, policy, secrets, tools_catalog
from wit_world.imports import types as wit

from . import wit_version
from .hostcalls import call
from .protocol import RpcError
from .values import MAX_DYNAMIC_TOOLS, MAX_SECRET_VALUE_BYTES, MISSING

MAX_TOOL_CATALOG_REVISIONS = 8
_DEFINITION_FIELDS = {"name", "description", "parameters", "output_schema", "handler",
                      "prompt_snippet", "prompt_guidelines"}
_INTENT_FIELDS = {"kind", "operation", "target", "data_classes", "adapter_hints"}


def _valid_approval_token(value: str) -> bool:
    return len(value) == 64 and all(c in "0123456789abcdef" for c in value)


def _valid_identifier(value: Any) -> bool:
    if not isinstance(value, str) or not value or len(value.encode("utf-8")) > 64:
        return False
    first, rest = value[0], value[1:]
    return (first.isascii() and (first.isalpha() or first == "_")) and all(
        c.isascii() and (c.isalnum() or c in {"_", "-", "."}) for c in rest
    )


class Services:
    """Artifacts, policy, secrets and dynamic tools."""

    # --- artifacts ------------------------------------------------------------

    def publish_artifact(self, *, mime_type: str, data: Any = MISSING, path: Any = MISSING,
                         size: Optional[int] = None, sha256: Optional[str] = None,
                         parent_request_id: Any = MISSING) -> str:
        """Publish bounded bytes as an artifact and return its id. The shim
        sends up to 256 KiB inline and larger data through the host's
        scratch directory itself."""

        from .unavailable import UnsupportedInComponent

        if not isinstance(mime_type, str) or "/" not in mime_type:
            raise ValueError("mime_type must be a media type")
        if (data is MISSING) == (path is MISSING):
            raise ValueError("provide exactly one of data or path")
        if data is MISSING:
            if not isinstance(path, str) or not path:
                raise ValueError("artifact path must be non-empty")
            if os.path.isabs(path) or ".." in path.replace("\\", "/").split("/"):
                raise ValueError("artifact path must be relative and cannot traverse parents")
            raise UnsupportedInComponent(
                "publish_artifact(path=...) is not available in an octet-wasm component: "
                "the guest cannot see the host's scratch directory; pass the bytes as "
                "data= (the shim moves artifacts over 256 KiB through the scratch "
                "directory itself)"
            )
        if isinstance(data, str):
            raw = data.encode("utf-8")
        elif isinstance(data, (bytes, bytearray, memoryview)):
            raw = bytes(data)
        else:
            raise TypeError("artifact data must be bytes or a string")
        if size is not None and size != len(raw):
            raise ValueError("artifact size does not match inline data")
        if sha256 is not None and sha256.lower() != hashlib.sha256(raw).hexdigest():
            raise ValueError("artifact sha256 does not match inline data")
        self._require_feature("artifacts")
        self._resolve_parent(parent_request_id, required=True)
        return call(artifacts.publish, mime_type, raw)

    # --- policy and secrets ---------------------------------------------------

    def evaluate_policy(self, intent: Mapping, *, approval_token: Optional[str] = None,
                        parent_request_id: Any = MISSING) -> dict:
        """Ask the host to classify a structured, non-authoritative action
        intent; returns the host's verdict (``decision``, and
        ``approval_token`` with an approved ``ask``)."""

        value = _intent(intent)
        self._require_feature("policy_intents")
        if approval_token is not None:
            if not isinstance(approval_token, str) or not _valid_approval_token(approval_token):
                raise ValueError("approval_token must be 64 lowercase hexadecimal characters")
            self._require_feature("approvals")
        self._resolve_parent(parent_request_id, required=True)
        hints = value.get("adapter_hints") or {}
        wit_intent = policy.Intent(
            value["kind"],
            value["operation"],
            json.dumps(value["target"], ensure_ascii=False, separators=(",", ":")),
            list(value.get("data_classes", [])),
            hints.get("read_only"),
            hints.get("destructive"),
        )
        verdict = call(policy.evaluate, wit_intent, approval_token)
        decisions = {policy.Decision.ALLOW: "allow", policy.Decision.ASK: "ask",
                     policy.Decision.DENY: "deny"}
        response: dict = {"decision": decisions[verdict.decision]}
        if verdict.approval_token is not None:
            response["approval_token"] = verdict.approval_token
        return response

    def get_secret(self, name: str, *, parent_request_id: Any = MISSING) -> str:
        """Resolve one manifest-allowlisted, owner-scoped host secret."""

        if not _valid_identifier(name):
            raise ValueError("secret name must be a valid extension identifier")
        self._require_feature("secrets")
        self._resolve_parent(parent_request_id, required=True)
        value = call(secrets.get, name)
        if len(value.encode("utf-8")) > MAX_SECRET_VALUE_BYTES:
            raise RpcError(-32603, "invalid secret lookup response")
        return value

    # --- the dynamic tool catalog -----------------------------------------------

    @property
    def tool_catalog_revision(self) -> int:
        """The last host revision returned by a dynamic tool mutation."""
        return self._tool_catalog_revision

    def register_tool(self, *, name: str, description: Optional[str] = None,
                      handler: Any = None, parameters: Optional[Mapping] = None,
                      output_schema: Optional[Mapping] = None,
                      prompt_snippet: Optional[str] = None,
                      prompt_guidelines: Optional[Sequence[str]] = None) -> dict:
        """Add or replace one live API 0.2 tool and its local handler
        (``prompt_snippet``/``prompt_guidelines``: API 0.4 prompt metadata)."""
        definition: dict = {"name": name}
        for key, value in (("description", description), ("handler", handler),
                           ("parameters", parameters), ("output_schema", output_schema),
                           ("prompt_snippet", prompt_snippet),
                           ("prompt_guidelines", prompt_guidelines)):
            if value is not None:
                definition[key] = value
        return self.register_tools([definition])

    def register_tools(self, tools: Sequence[Mapping]) -> dict:
        """Transactionally add or replace live tools through
        ``tools/register``. A definition without ``handler`` (and without
        ``description``) names a tool registered with ``@ext.dynamic_tool``."""

        from .extension import Tool

        self._require_feature("dynamic_tools")
        if isinstance(tools, (str, bytes)) or not isinstance(tools, Sequence):
            raise TypeError("tools must be a sequence of tool definitions")
        if not tools:
            raise ValueError("tools/register requires at least one tool")
        if len(tools) > MAX_DYNAMIC_TOOLS:
            raise ValueError(f"tools/register accepts at most {MAX_DYNAMIC_TOOLS} tools")
        registrations = []
        names: set = set()
        for registration in tools:
            if not isinstance(registration, Mapping):
                raise TypeError("dynamic tool definitions must be objects")
            unknown = set(registration) - _DEFINITION_FIELDS
            if unknown:
                raise ValueError(f"unknown dynamic tool fields: {sorted(map(str, unknown))}")
            registration = self._with_module_handler(registration)
            if "name" not in registration or "description" not in registration:
                raise ValueError("dynamic tools require name and description")
            if "handler" not in registration or not callable(registration["handler"]):
                raise TypeError("dynamic tools require a callable handler")
            name, description = registration["name"], registration["description"]
            self._validate_name("tool", name)
            if name in names:
                raise ValueError(f"duplicate dynamic tool: {name}")
            names.add(name)
            if not isinstance(description, str) or not description.strip():
                raise ValueError("tool description must be non-empty")
            parameters = registration.get("parameters")
            if parameters is not None and not isinstance(parameters, Mapping):
                raise TypeError("tool parameters must be an object or None")
            output_schema = registration.get("output_schema")
            if output_schema is not None and not isinstance(output_schema, Mapping):
                raise TypeError("tool output_schema must be an object or None")
            snippet, guidelines = self._prompt_metadata(
                name, registration.get("prompt_snippet"), registration.get("prompt_guidelines"))
            registrations.append(Tool(
                name, description,
                dict(parameters) if parameters is not None else {"type": "object"},
                dict(output_schema) if output_schema is not None else None,
                registration["handler"], snippet, guidelines,
            ))
        staged = dict(self._tools)
        for tool in registrations:
            staged[tool.name] = tool
        if len(staged) > MAX_DYNAMIC_TOOLS:
            raise ValueError(f"live tool catalog exceeds {MAX_DYNAMIC_TOOLS} tools")
        definitions = [_definition(tool) for tool in registrations]
        return self._mutate(staged, lambda: call(tools_catalog.register, definitions))

    def unregister_tool(self, name: str) -> dict:
        """Remove one live API 0.2 tool."""
        return self.unregister_tools(name)

    def unregister_tools(self, *names: str) -> dict:
        """Transactionally remove live tools through ``tools/unregister``."""

        self._require_feature("dynamic_tools")
        if not names:
            raise ValueError("tools/unregister requires at least one tool name")
        if len(names) > MAX_DYNAMIC_TOOLS:
            raise ValueError(f"tools/unregister accepts at most {MAX_DYNAMIC_TOOLS} names")
        if len(set(names)) != len(names):
            raise ValueError("tools/unregister contains duplicate names")
        for name in names:
            self._validate_name("tool", name)
        staged = {name: tool for name, tool in self._tools.items() if name not in names}
        return self._mutate(staged, lambda: call(tools_catalog.unregister, list(names)))

    def _with_module_handler(self, registration: Mapping) -> Mapping:
        """A definition naming only a ``@ext.dynamic_tool`` tool, completed
        from it (its handler exists in every instance)."""
        known = self._dynamic_handlers.get(registration.get("name"))
        if known is None or "handler" in registration:
            return registration
        completed = {"description": known.description, "parameters": known.parameters,
                     "output_schema": known.output_schema, "handler": known.handler,
                     "prompt_snippet": known.prompt_snippet,
                     "prompt_guidelines": known.prompt_guidelines}
        completed.update(registration)
        return completed

    def _mutate(self, staged: dict, send: Any) -> dict:
        """Stage the next revision, ask the host, commit what it accepted.

        The shim keeps the one catalog of the process; an instance of a
        concurrency pool may have missed revisions another instance made,
        so the next revision follows the shim's, and tools this instance
        has no handler for stay unknown here."""

        latest = max(self._tool_catalog_revision, tools_catalog.current().revision)
        self._staged_tool_catalog = staged
        self._staged_tool_catalog_revision = latest + 1
        try:
            update = send()
            names = list(update.tools)
            if len(set(names)) != len(names):
                raise RpcError(-32603, "invalid dynamic tool catalog names")
            if update.revision != self._staged_tool_catalog_revision:
                raise RpcError(
                    -32603,
                    "invalid dynamic tool catalog revision: expected "
                    f"{self._staged_tool_catalog_revision}, got {update.revision}",
                )
        finally:
            revision = self._staged_tool_catalog_revision
            self._staged_tool_catalog = None
            self._staged_tool_catalog_revision = None
        known = {**self._dynamic_handlers, **staged}
        active = {name: known[name] for name in names if name in known}
        self._tools = active
        self._tool_catalog_revision = revision
        self._tool_catalogs[revision] = dict(active)
        while len(self._tool_catalogs) > MAX_TOOL_CATALOG_REVISIONS:
            self._tool_catalogs.popitem(last=False)
        return {"revision": revision, "tools": names}

    def _resolve_tool(self, name: Any, catalog_revision: Optional[int]) -> Any:
        """The tool a call reaches: from the catalog of the pinned revision,
        or from the module-level dynamic tools when this instance never saw
        that revision committed (another instance registered it)."""
        if catalog_revision is None:
            catalog = self._tools
        else:
            catalog = self._tool_catalogs.get(catalog_revision)
            if catalog is None and catalog_revision == self._staged_tool_catalog_revision:
                catalog = self._staged_tool_catalog
            if catalog is None and catalog_revision > self._tool_catalog_revision:
                # The shim has checked the call against the revision the
                # model saw; a module-level handler serves it in any
                # instance (never an older revision's handler).
                tool = self._dynamic_handlers.get(name)
                if tool is not None:
                    return tool
            if catalog is None:
                raise RpcError(-32602,
                               f"unknown or retired tool catalog revision: {catalog_revision}")
        tool = catalog.get(name) if isinstance(name, str) else None
        if tool is None and catalog_revision is None:
            tool = self._dynamic_handlers.get(name)
        if tool is None:
            raise RpcError(-32601, f"unknown tool: {name}")
        return tool


def _definition(tool: Any) -> Any:

    def text(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    fields = [tool.name, tool.description, text(tool.parameters),
              None if tool.output_schema is None else text(tool.output_schema)]
    if wit_version.V0_4:
        fields += [tool.prompt_snippet, list(tool.prompt_guidelines)]
    return wit.ToolDefinition(*fields)


def _intent(intent: Any) -> dict:
    if not isinstance(intent, Mapping):
        raise TypeError("policy intent must be an object")
    value = dict(intent)
    if not isinstance(value.get("kind"), str) or not value["kind"].strip():
        raise ValueError("policy intent kind must be non-empty")
    if not isinstance(value.get("operation"), str) or not value["operation"].strip():
        raise ValueError("policy intent operation must be non-empty")
    if not isinstance(value.get("target"), Mapping):
        raise ValueError("policy intent target must be an object")
    if "data_classes" in value and (
        not isinstance(value["data_classes"], list)
        or not all(isinstance(item, str) for item in value["data_classes"])
    ):
        raise ValueError("policy intent data_classes must be an array of strings")
    if "adapter_hints" in value and not isinstance(value["adapter_hints"], Mapping):
        raise ValueError("policy intent adapter_hints must be an object")
    unknown = set(value) - _INTENT_FIELDS
    if unknown:
        raise ValueError(f"unknown policy intent fields: {sorted(unknown)}")
    hints = value.get("adapter_hints", {})
    unknown_hints = set(hints) - {"read_only", "destructive"}
    if unknown_hints:
        raise ValueError(f"unknown adapter_hints fields: {sorted(unknown_hints)}")
    if any(hint is not None and not isinstance(hint, bool) for hint in hints.values()):
        raise ValueError("policy adapter hints must be booleans or null")
    return value
