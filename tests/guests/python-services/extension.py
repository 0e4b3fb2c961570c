"""The Python services test guest: every API 0.2 host service of octet's
Python SDK behind a tool, written in the SDK's idiom, for
tests/e2e/python_services.rs (built by scripts/build-guests-python into
target/components/python/services.wasm).

Each tool reports what the service returned as text, so the test can check
both the frames the shim writes and what the guest received.
"""

from octet_extension import (
    Extension,
    RpcError,
    audio_content,
    image_content,
    text_content,
    tool_result,
)

# One instance: the catalog revisions the tools report are this instance's.
ext = Extension(max_concurrent_requests=1)

SIGNATURES = {
    "image/png": b"\x89PNG\r\n\x1a\n",
    "image/gif": b"GIF89a",
    "audio/flac": b"fLaC",
}


@ext.tool(name="artifact", description="Publish an artifact and reference it")
def artifact(args):
    """{"mime_type", "size"?}: publishes the type's signature padded to
    `size` bytes and answers an image or audio part with the id."""
    mime = args.get("mime_type", "image/png")
    size = int(args.get("size", 64))
    data = (SIGNATURES.get(mime, b"") + bytes(size))[:size]
    artifact_id = ext.publish_artifact(mime_type=mime, data=data)
    if mime.startswith("image/"):
        part = image_content(artifact_id, mime, alt="python")
    else:
        part = audio_content(artifact_id, mime)
    return tool_result(text_content(f"id: {artifact_id}"), part)


@ext.tool(name="unlock", description="Register dynamic tools by name")
def unlock(args):
    update = ext.register_tools([{"name": name} for name in args.get("names", ["lint"])])
    return f"revision {update['revision']}: {','.join(update['tools'])}"


@ext.tool(name="lock", description="Unregister tools by name")
def lock(args):
    update = ext.unregister_tools(*args.get("names", ["lint"]))
    return f"revision {update['revision']}: {','.join(update['tools'])}"


@ext.tool(name="adopt", description="Register a tool with a handler made at run time")
def adopt(args):
    prefix = args.get("prefix", "adopted")
    update = ext.register_tool(
        name="adopted",
        description="A tool registered with its handler",
        handler=lambda arguments, context: f"{prefix}: {arguments.get('x')}",
    )
    return f"revision {update['revision']}: {','.join(update['tools'])}"


@ext.dynamic_tool(name="lint", description="Lint (dynamic)")
def lint(args, context):
    return tool_result(
        text_content(f"lint ok: {args.get('path', '.')}"),
        metadata={"request": ext.request_id},
    )


@ext.dynamic_tool(
    name="counted",
    description="A dynamic tool with an output schema",
    output_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
)
def counted(args):
    return tool_result(text_content("counted"), structured_content={"n": 1})


@ext.tool(name="secret", description="Read a secret and report its length")
def secret(args):
    value = ext.get_secret(args["name"])
    return f"secret of {len(value)} bytes"


@ext.tool(name="policy", description="Evaluate a policy intent")
def policy(args):
    hints = {key: args[key] for key in ("read_only", "destructive") if key in args}
    intent = {
        "kind": args.get("kind", "external_side_effect"),
        "operation": args.get("operation", "issues.create"),
        "target": args.get("target", {}),
        "data_classes": args.get("data_classes", []),
    }
    if hints:
        intent["adapter_hints"] = hints
    verdict = ext.evaluate_policy(intent, approval_token=args.get("token"))
    return f"decision: {verdict['decision']}, token: {verdict.get('approval_token') or 'none'}"


@ext.tool(name="present", description="Publish a presentation snapshot")
def present(args, context):
    owner = context["resource_owner"] if args.get("owner") else None
    ext.publish_presentation(args["snapshot"], resource_owner=owner)
    return "presented"


@ext.tool(name="catch", description="Call a service and report the exception it raised")
def catch(args):
    """{"service": "secret"|"artifact"|"register"}: the exception's class,
    code (for RpcError) and text."""
    service = args.get("service")
    try:
        if service == "secret":
            ext.get_secret(args.get("name", "missing"))
        elif service == "artifact":
            ext.publish_artifact(mime_type=args.get("mime_type", "image/svg+xml"), data=b"<svg/>")
        elif service == "register":
            ext.register_tools([{"name": "lint"}])
        else:
            raise RpcError(-32602, f"unknown service {service!r}")
    except (RpcError, ValueError) as exc:
        return f"{type(exc).__name__} {getattr(exc, 'code', '-')}: {exc}"
    return "no error"
