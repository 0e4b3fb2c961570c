"""The Python services test guest: every API 0.2 host service of the Python
SDK behind a tool, for tests/e2e/python_services.rs (built by
scripts/build-guests-python into target/components/python/services.wasm).

Each tool reports what the service returned as text, so the test can check
both the frames the shim writes and what the guest received.
"""

import base64

from octet_guest import (
    Extension,
    HostError,
    InvalidParams,
    RpcError,
    audio_content,
    image_content,
    intent,
    text_content,
    tool_result,
)

ext = Extension("python-services")
ext.uses_artifacts().uses_dynamic_tools().uses_secrets().uses_approvals()

SIGNATURES = {
    "image/png": b"\x89PNG\r\n\x1a\n",
    "image/gif": b"GIF89a",
    "audio/flac": b"fLaC",
}


@ext.tool("artifact", description="Publish an artifact and reference it")
def artifact(args):
    """{"mime_type", "size"?}: publishes the type's signature padded to
    `size` bytes and answers an image or audio part with the id."""
    mime = args.get("mime_type", "image/png")
    size = int(args.get("size", 64))
    data = (SIGNATURES.get(mime, b"") + bytes(size))[:size]
    artifact_id = ext.publish_artifact(mime, data)
    if mime.startswith("image/"):
        part = image_content(artifact_id, mime, alt="python")
    else:
        part = audio_content(artifact_id, mime)
    return [text_content(f"id: {artifact_id}"), part]


@ext.tool("unlock", description="Register dynamic tools by name")
def unlock(args):
    update = ext.register_tools(args.get("names", ["lint"]))
    return f"revision {update.revision}: {','.join(update.tools)}"


@ext.tool("lock", description="Unregister tools by name")
def lock(args):
    update = ext.unregister_tools(args.get("names", ["lint"]))
    return f"revision {update.revision}: {','.join(update.tools)}"


@ext.tool("catalog", description="The current catalog")
def catalog(args):
    update = ext.current_tools()
    return f"revision {update.revision}: {','.join(update.tools)}"


@ext.dynamic_tool("lint", description="Lint (dynamic)")
def lint(args, ctx):
    return tool_result(f"lint ok: {args.get('path', '.')}", metadata={"request": ctx.request_id})


@ext.dynamic_tool(
    "counted",
    description="A dynamic tool with an output schema",
    output_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
)
def counted(args):
    return tool_result("counted", structured_content={"n": 1})


@ext.tool("secret", description="Read a secret and report its length")
def secret(args):
    value = ext.get_secret(args["name"])
    return f"secret of {len(value)} bytes"


@ext.tool("policy", description="Evaluate a policy intent")
def policy(args):
    verdict = ext.evaluate_policy(
        intent(
            args.get("kind", "external_side_effect"),
            args.get("operation", "issues.create"),
            args.get("target", {}),
            data_classes=args.get("data_classes", []),
            read_only=args.get("read_only"),
            destructive=args.get("destructive"),
        ),
        token=args.get("token"),
    )
    return f"decision: {verdict.decision}, token: {verdict.approval_token or 'none'}"


@ext.tool("present", description="Publish a presentation snapshot")
def present(args, ctx):
    ext.update_presentation(args["snapshot"], owner=ctx if args.get("owner") else None)
    return "presented"


@ext.tool("catch", description="Call a service and report the exception it raised")
def catch(args):
    """{"service": "secret"|"artifact"|"register"}: the exception's class,
    code (for RpcError) and text."""
    service = args.get("service")
    try:
        if service == "secret":
            ext.get_secret(args.get("name", "missing"))
        elif service == "artifact":
            ext.publish_artifact(args.get("mime_type", "image/svg+xml"), b"<svg/>")
        elif service == "register":
            ext.register_tools(["lint"])
        else:
            raise InvalidParams(f"unknown service {service!r}")
    except (RpcError, HostError, InvalidParams) as exc:
        kinds = [c.__name__ for c in (RpcError, HostError, InvalidParams) if isinstance(exc, c)]
        return f"{'+'.join(kinds)} {getattr(exc, 'code', '-')}: {exc}"
    return "no error"
