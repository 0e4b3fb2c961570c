//! Tools that call the API 0.2 service imports: artifacts, the dynamic
//! tool catalog, secrets and policy.

use octet_guest::policy::{Decision, Intent};
use octet_guest::prelude::*;
use octet_guest::{Call, ResourceOwner, artifacts, policy, presentation, secrets, tools_catalog};
use serde::Deserialize;

#[derive(Deserialize)]
struct Artifact {
    mime_type: String,
    size: usize,
    #[serde(default = "one")]
    count: usize,
    #[serde(default = "yes")]
    signature: bool,
    #[serde(default)]
    part: Option<String>,
}

fn one() -> usize {
    1
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
struct Names {
    names: Vec<String>,
}

#[derive(Deserialize)]
struct Secret {
    name: String,
}

#[derive(Deserialize)]
struct Policy {
    kind: String,
    operation: String,
    target: Value,
    #[serde(default)]
    data_classes: Vec<String>,
    #[serde(default)]
    read_only: Option<bool>,
    #[serde(default)]
    destructive: Option<bool>,
    #[serde(default)]
    token: Option<String>,
}

#[derive(Deserialize)]
struct Present {
    snapshot: Value,
    /// `call`: the call's own owner, explicitly; `forged`: an unissued one.
    #[serde(default)]
    owner: Option<String>,
}

#[derive(Deserialize)]
struct Many {
    count: usize,
}

/// `size` bytes that start with `mime`'s signature (zeros when `signature`
/// is false), followed by a counting pattern.
fn artifact_bytes(mime: &str, size: usize, signature: bool) -> Vec<u8> {
    let head: &[u8] = match mime {
        "image/png" => b"\x89PNG\r\n\x1a\n",
        "image/jpeg" => b"\xff\xd8\xff",
        "image/gif" => b"GIF89a",
        "image/webp" => b"RIFF\0\0\0\0WEBP",
        "audio/wav" => b"RIFF\0\0\0\0WAVE",
        "audio/mpeg" => b"ID3",
        "audio/flac" => b"fLaC",
        "audio/opus" => b"OggS\0\x02\0\0\0\0\0\0\0\0OpusHead",
        "audio/aac" => b"\xff\xf1",
        "audio/mp4" => b"\0\0\0\x18ftypM4A ",
        _ => b"",
    };
    let mut data: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
    let n = head.len().min(size);
    if signature {
        data[..n].copy_from_slice(&head[..n]);
    } else {
        data[..n].fill(0);
    }
    data
}

fn update_text(update: &tools_catalog::CatalogUpdate) -> String {
    format!("revision {}: {}", update.revision, update.tools.join(","))
}

pub fn register(ext: &mut Extension) {
    ext.uses_artifacts()
        .uses_dynamic_tools()
        .uses_secrets()
        .uses_approvals();
    // present {snapshot, owner?} → one presentation/update; `presented`
    ext.tool(
        Tool::new("present", "Publish a presentation snapshot").parameters(json!({
            "type": "object",
            "properties": {"snapshot": {"type": "object"}, "owner": {"type": "string"}},
            "required": ["snapshot"],
        })),
        |args: Present, call: &Call| -> Result<String> {
            match args.owner.as_deref() {
                Some("call") => {
                    let owner = call
                        .resource_owner()
                        .ok_or_else(|| Error::failed("no resource owner"))?;
                    presentation::update_for(owner, &args.snapshot)?;
                }
                Some(_) => {
                    let forged = ResourceOwner {
                        session_id: "forged".into(),
                        extension_instance_id: "instance-1".into(),
                        process_generation: 1,
                    };
                    presentation::update_for(&forged, &args.snapshot)?;
                }
                None => presentation::update(&args.snapshot)?,
            }
            Ok("presented".to_owned())
        },
    );
    // secret {name} → `secret of N bytes` (never the value itself)
    ext.tool(
        Tool::new("secret", "Fetch a declared secret").parameters(json!({
            "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"],
        })),
        |args: Secret| -> Result<String> {
            let value = secrets::get(&args.name)?;
            Ok(format!("secret of {} bytes", value.len()))
        },
    );
    // policy {kind, operation, target, data_classes?, read_only?,
    // destructive?, token?} → `decision: allow|ask|deny, token: T|none`
    ext.tool(
        Tool::new("policy", "Evaluate a policy intent").parameters(json!({
            "type": "object",
            "properties": {
                "kind": {"type": "string"}, "operation": {"type": "string"},
                "target": {}, "data_classes": {"type": "array"},
                "read_only": {"type": "boolean"}, "destructive": {"type": "boolean"},
                "token": {"type": "string"},
            },
            "required": ["kind", "operation", "target"],
        })),
        |args: Policy| -> Result<String> {
            let mut intent =
                Intent::new(args.kind, args.operation, args.target).data_classes(args.data_classes);
            if let Some(read_only) = args.read_only {
                intent = intent.read_only(read_only);
            }
            if let Some(destructive) = args.destructive {
                intent = intent.destructive(destructive);
            }
            let verdict = policy::evaluate(&intent, args.token.as_deref())?;
            let decision = match verdict.decision {
                Decision::Allow => "allow",
                Decision::Ask => "ask",
                Decision::Deny => "deny",
            };
            Ok(format!(
                "decision: {decision}, token: {}",
                verdict.approval_token.as_deref().unwrap_or("none")
            ))
        },
    );
    // artifact {mime_type, size, count?, signature?, part?} → publishes
    // `count` artifacts of `size` bytes; text `ids: a,b`, plus an image or
    // audio part (`part`) referencing the last one
    ext.tool(
        Tool::new("artifact", "Publish artifacts").parameters(json!({
            "type": "object",
            "properties": {
                "mime_type": {"type": "string"}, "size": {"type": "integer"},
                "count": {"type": "integer"}, "signature": {"type": "boolean"},
                "part": {"type": "string"},
            },
            "required": ["mime_type", "size"],
        })),
        |args: Artifact| -> Result<ToolResult> {
            let data = artifact_bytes(&args.mime_type, args.size, args.signature);
            let mut ids = Vec::new();
            for _ in 0..args.count {
                ids.push(artifacts::publish(&args.mime_type, &data)?);
            }
            let last = ids.last().cloned().unwrap_or_default();
            let result = ToolResult::text(format!("ids: {}", ids.join(",")));
            Ok(match args.part.as_deref() {
                Some("image") => result.with_image(last, args.mime_type, Some("probe".into())),
                Some("audio") => result.with_audio(last, args.mime_type, None),
                _ => result,
            })
        },
    );
    // dyn_register {names} → registers the named dynamic tools; text
    // `revision N: a,b`
    ext.tool(
        Tool::new("dyn_register", "Register dynamic tools").parameters(json!({
            "type": "object", "properties": {"names": {"type": "array", "items": {"type": "string"}}},
            "required": ["names"],
        })),
        |args: Names| -> Result<String> {
            let names: Vec<&str> = args.names.iter().map(String::as_str).collect();
            Ok(update_text(&tools_catalog::register_dynamic(&names)?))
        },
    );
    // dyn_unregister {names} → `revision N: a,b`
    ext.tool(
        Tool::new("dyn_unregister", "Unregister tools").parameters(json!({
            "type": "object", "properties": {"names": {"type": "array", "items": {"type": "string"}}},
            "required": ["names"],
        })),
        |args: Names| -> Result<String> {
            let names: Vec<&str> = args.names.iter().map(String::as_str).collect();
            Ok(update_text(&tools_catalog::unregister(&names)?))
        },
    );
    // dyn_many {count} → registers `count` handler-less tools gen_0.. in one
    // request (for the bounds); `revision N: ...`
    ext.tool(
        Tool::new("dyn_many", "Register many generated tools").parameters(json!({
            "type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"],
        })),
        |args: Many| -> Result<String> {
            let tools: Vec<Tool> = (0..args.count)
                .map(|i| Tool::new(format!("gen_{i}"), "Generated"))
                .collect();
            let update = tools_catalog::register(&tools)?;
            Ok(format!(
                "revision {}: {} tools",
                update.revision,
                update.tools.len()
            ))
        },
    );
    // dyn_current {} → `revision N: a,b`
    ext.tool(
        Tool::new("dyn_current", "The committed catalog"),
        |_: Value| -> Result<String> { Ok(update_text(&tools_catalog::current())) },
    );
    // dynamic tools (not in the initial catalog): lint → `lint ok`;
    // counted {} → structured {"n": 1} (declares an output schema)
    ext.dynamic_tool(Tool::new("lint", "Lint (dynamic)"), |_: Value| "lint ok");
    ext.dynamic_tool(
        Tool::new("counted", "Counted (dynamic, structured)").output_schema(json!({
            "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"],
        })),
        |_: Value| ToolResult::text("counted").structured(json!({"n": 1})),
    );
}
