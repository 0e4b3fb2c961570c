"""What octet_guest 0.1 spelled that 0.2 replaced, and the replacement each
deprecation warning names: data only, no imports, so ``build.py``'s source
scan (``sandbox_check``) can load this module alone, outside a component,
and print the same warnings before componentize-py runs. componentize-py
does not show what the app writes to stderr while it runs at build time,
so the warnings an alias prints when the app uses it (``deprecated``)
would otherwise never reach the author.
"""

from __future__ import annotations

from typing import Dict

SINCE = "0.2.0"
UNTIL = "1.0.0"

#: The package's 0.1 names (``octet_guest.NAME``) and what replaces each.
NAMES: Dict[str, str] = {
    "InvalidParams": "RpcError(-32602, message)",
    "ToolError": "any exception (a tool call answers it as an is_error result)",
    "ExtensionError": "any exception, or RpcError(code, message)",
    "HostError": "RpcError (what a refused host call raises)",
    "JsonRpcError": "RpcError",
    "Cancelled": "CancelledError",
    "ExtensionCancelled": "CancelledError",
    "Cancellation": "CancellationToken (ext.cancellation)",
    "AttrDict": "plain dicts",
    "Context": "the handler's ctx as given",
    "CatalogUpdate": "the dict ext.register_tools returns",
    "Verdict": "the dict ext.evaluate_policy returns",
    "MIME_TYPES": "the MIME types in the README's artifacts section",
    "AGENT_TOOLS": "the tools= list of ext.spawn_agent",
    "log": "ext.log.info(message, **fields) (ext.log is a logger)",
    "notify": "ext.notify(message, level=..., title=...)",
    "confirm": "ext.confirm(prompt, detail=..., destructive=...)",
    "request_input": "ext.request_input(prompt, secret=...)",
    "progress": "ext.progress(message=, current=, total=, unit=) or ext.progress_decoration",
    "contribute_context": "ext.contribute_context(item)",
    "contribute_status": "ext.contribute_status(item)",
    "sleep": "ext.cancellation.wait(seconds)",
    "publish_artifact": "ext.publish_artifact(mime_type=, data=)",
    "tool_definition": "a dict {name, description, parameters}",
    "register_tools": "ext.register_tools([definition, ...])",
    "unregister_tools": "ext.unregister_tools(*names)",
    "current_tools": "ext.tool_catalog_revision()",
    "get_secret": "ext.get_secret(name)",
    "intent": "a dict {kind, operation, target, data_classes}",
    "evaluate_policy": "ext.evaluate_policy(intent, approval_token=...)",
    "update_presentation": "ext.publish_presentation(snapshot, resource_owner=...)",
    "hook_result": "the wire's dict {disposition, context, ...}",
    "spawn_agent": "ext.spawn_agent(task_name=, message=, ...)",
    "message_agent": "ext.send_agent_message(target, message)",
    "follow_up_agent": "ext.follow_up_agent(target, message)",
    "list_agents": "ext.list_agents()",
    "wait_agents": "ext.wait_agents(timeout_ms=...)",
    "interrupt_agent": "ext.interrupt_agent(target)",
    "list_models": "ext.list_agent_models(query=, limit=)",
}

#: 0.1's call forms and what replaces each.
FORMS: Dict[str, str] = {
    "Extension(name)": "Extension() (the manifest's name is the extension's)",
    '@ext.tool("name", ...)': '@ext.tool(name="name", description=...)',
    '@ext.command("name", ...)': '@ext.command(name="name", description=...)',
}


def warning(old: str) -> str:
    """The line for ``old`` (``octet_guest.NAME`` or a form of ``FORMS``)."""
    new = FORMS.get(old) or NAMES[old.removeprefix("octet_guest.")]
    return f"{old} is deprecated since {SINCE} and goes in {UNTIL}: use {new}"
