//! The demo's answers to the extension's own requests, as a permissive
//! local octet would give them: artifacts are checked the way octet checks
//! them and get ids, catalog mutations get revisions, policy answers what
//! the user configured, secrets come from the environment variables or the
//! file the user names, confirmations and input from flags.

use crate::protocol::imports::artifacts::signature_matches;
use crate::runtime::cache::sha256_hex;
use crate::wire::error_code::ErrorCode;
use base64::Engine as _;
use serde_json::{Value, json};
use std::collections::{BTreeMap, VecDeque};
use std::path::{Component, Path, PathBuf};

/// octet's code for `secret is unavailable` (docs/services.md#refusals):
/// a code of the host's, which the shim itself never answers with, so it
/// is not an [`ErrorCode`].
const SECRET_UNAVAILABLE: i64 = -32004;

/// How the user asked the host to answer.
#[derive(Clone, Debug, Default)]
pub struct Answers {
    /// `confirmation/request`: confirmed or not.
    pub confirm: bool,
    /// `input/request` answers, in order; then `null` (a headless host).
    pub inputs: Vec<String>,
    /// `policy/evaluate`: `allow`, `ask` or `deny`.
    pub policy: String,
    /// `secret/get` values by name.
    pub secrets: BTreeMap<String, String>,
    /// Where to save published artifacts (`None`: not saved).
    pub artifacts_dir: Option<PathBuf>,
}

/// What one answer is, for the wire and for the transcript.
pub struct Answer {
    /// `Ok(result)` or `Err((code, message))`.
    pub outcome: Result<Value, (i64, String)>,
    /// One line for the transcript: what the host did.
    pub note: String,
    /// The result carries a secret (`{"value": ...}`) to keep out of
    /// recordings.
    pub secret: bool,
}

impl Answer {
    fn ok(result: Value, note: String) -> Answer {
        Answer {
            outcome: Ok(result),
            note,
            secret: false,
        }
    }

    fn refuse(code: i64, message: &str, note: String) -> Answer {
        Answer {
            outcome: Err((code, message.to_owned())),
            note,
            secret: false,
        }
    }
}

/// octet's artifact bounds (docs/services.md#artifact-checks).
const MAX_ARTIFACT_BYTES: usize = 20 * 1024 * 1024;
const MAX_ARTIFACTS: usize = 64;
const MAX_RETAINED_BYTES: usize = 64 * 1024 * 1024;

/// The host's state for one generation.
pub struct LocalHost {
    answers: Answers,
    inputs: VecDeque<String>,
    /// Declared in `[capabilities] secrets`.
    allowed_secrets: Vec<String>,
    scratch: PathBuf,
    artifacts: usize,
    retained: usize,
    /// The catalog revision (0: the initialize tool list).
    pub revision: u64,
    /// The extension's active tool names.
    pub tools: Vec<String>,
    composition: super::composition::Composition,
}

impl LocalHost {
    pub fn new(answers: Answers, allowed_secrets: Vec<String>, scratch: &Path) -> LocalHost {
        LocalHost {
            inputs: answers.inputs.iter().cloned().collect(),
            answers,
            allowed_secrets,
            scratch: scratch.to_path_buf(),
            artifacts: 0,
            retained: 0,
            revision: 0,
            tools: Vec::new(),
            composition: Default::default(),
        }
    }

    /// The answer to child request `method` with `params`.
    pub fn answer(&mut self, method: &str, params: &Value) -> Answer {
        if let Some(reply) = self.composition.answer(method, params) {
            return Answer {
                outcome: reply.outcome,
                note: reply.note,
                secret: false,
            };
        }
        match method {
            "confirmation/request" => {
                let confirmed = self.answers.confirm;
                Answer::ok(
                    json!({"confirmed": confirmed}),
                    format!(
                        "confirmation {} (--confirm)",
                        if confirmed { "given" } else { "refused" }
                    ),
                )
            }
            "input/request" => {
                let value = self.inputs.pop_front();
                let note = match &value {
                    Some(_) => "input answered from --input".to_owned(),
                    None => "input answered null: no --input left (a headless host)".to_owned(),
                };
                let secret = params["secret"] == Value::Bool(true) && value.is_some();
                Answer {
                    outcome: Ok(json!({"value": value})),
                    note,
                    secret,
                }
            }
            "policy/evaluate" => {
                let decision = self.answers.policy.clone();
                let operation = params["intent"]["operation"].as_str().unwrap_or("?");
                Answer::ok(
                    json!({"decision": decision, "approval_token": null}),
                    format!("policy for {operation}: {decision} (--policy)"),
                )
            }
            "secret/get" => self.secret(params),
            "artifact/publish" => self.publish(params),
            "tools/register" => self.register(params),
            "tools/unregister" => self.unregister(params),
            other => Answer::refuse(
                ErrorCode::MethodNotFound.code(),
                &format!("method not found: {other}"),
                format!("{other} is not a service the demo host offers"),
            ),
        }
    }

    fn secret(&self, params: &Value) -> Answer {
        let name = params["name"].as_str().unwrap_or_default();
        if !self.allowed_secrets.iter().any(|allowed| allowed == name) {
            return Answer::refuse(
                ErrorCode::InvalidParams.code(),
                "secret name is not declared by this extension",
                format!("secret {name:?} refused: not in the manifest's [capabilities] secrets"),
            );
        }
        match self.answers.secrets.get(name) {
            Some(value) => Answer {
                outcome: Ok(json!({"value": value})),
                note: format!("secret {name:?} handed out ({} bytes)", value.len()),
                secret: true,
            },
            None => Answer::refuse(
                SECRET_UNAVAILABLE,
                "secret is unavailable",
                format!(
                    "secret {name:?} unavailable: give it with --secret {name}=ENV_VAR or --secrets-file"
                ),
            ),
        }
    }

    fn publish(&mut self, params: &Value) -> Answer {
        let reject = |reason: &str| {
            Answer::refuse(
                ErrorCode::InvalidParams.code(),
                &format!("artifact publication rejected: {reason}"),
                format!("artifact rejected: {reason}"),
            )
        };
        let bytes = match (params.get("data"), params.get("path")) {
            (Some(data), None) => {
                if data["encoding"] != "base64" {
                    return reject("inline artifact encoding must be base64");
                }
                match base64::engine::general_purpose::STANDARD
                    .decode(data["data"].as_str().unwrap_or_default())
                {
                    Ok(bytes) => bytes,
                    Err(_) => return reject("inline artifact data is not valid base64"),
                }
            }
            (None, Some(path)) => match self.scratch_file(path.as_str().unwrap_or_default()) {
                Ok(bytes) => bytes,
                Err(reason) => return reject(&reason),
            },
            _ => return reject("exactly one of data and path is required"),
        };
        let size = params["size"].as_u64().unwrap_or(u64::MAX);
        let digest = sha256_hex(&bytes);
        let mime = params["mime_type"].as_str().unwrap_or_default();
        if bytes.len() > MAX_ARTIFACT_BYTES {
            return reject("artifact exceeds 20 MiB");
        }
        if self.artifacts >= MAX_ARTIFACTS || self.retained + bytes.len() > MAX_RETAINED_BYTES {
            return reject("the generation's artifact budget (64 artifacts, 64 MiB) is spent");
        }
        if size != bytes.len() as u64 {
            return reject("artifact size mismatch");
        }
        if params["sha256"].as_str() != Some(digest.as_str()) {
            return reject("artifact SHA-256 mismatch");
        }
        if !signature_matches(mime, &bytes) {
            return reject(&format!(
                "{mime:?} is not a supported type whose signature the bytes carry"
            ));
        }
        self.artifacts += 1;
        self.retained += bytes.len();
        let id = format!("artifact_{:032x}", self.artifacts);
        let mut note = format!(
            "artifact {id}: {mime}, {} bytes, SHA-256 verified",
            bytes.len()
        );
        if let Some(dir) = &self.answers.artifacts_dir {
            let file = dir.join(format!("{id}.{}", mime.rsplit('/').next().unwrap_or("bin")));
            match std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&file, &bytes)) {
                Ok(()) => note.push_str(&format!(", saved as {}", file.display())),
                Err(err) => note.push_str(&format!(", not saved ({}: {err})", file.display())),
            }
        }
        Answer::ok(json!({"artifact_id": id}), note)
    }

    /// A file under the scratch directory, by the rules octet applies: a
    /// relative path of normal components, a regular file, no symlink.
    fn scratch_file(&self, path: &str) -> Result<Vec<u8>, String> {
        let relative = Path::new(path);
        if path.is_empty()
            || path.len() > 4096
            || relative.components().count() > 64
            || !relative
                .components()
                .all(|c| matches!(c, Component::Normal(_)))
        {
            return Err(format!("{path:?} is not a relative scratch path"));
        }
        let full = self.scratch.join(relative);
        let metadata = std::fs::symlink_metadata(&full)
            .map_err(|err| format!("cannot read scratch file {path:?}: {err}"))?;
        if !metadata.file_type().is_file() {
            return Err(format!("scratch path {path:?} is not a regular file"));
        }
        if metadata.len() > MAX_ARTIFACT_BYTES as u64 {
            return Err("artifact exceeds 20 MiB".into());
        }
        std::fs::read(&full).map_err(|err| format!("cannot read scratch file {path:?}: {err}"))
    }

    fn register(&mut self, params: &Value) -> Answer {
        let definitions = params["tools"].as_array().cloned().unwrap_or_default();
        let mut names: Vec<String> = Vec::new();
        for definition in &definitions {
            let Some(name) = definition["name"].as_str() else {
                return Answer::refuse(
                    ErrorCode::InvalidParams.code(),
                    "tool definition without a name",
                    "registration refused: a definition has no name".into(),
                );
            };
            if names.iter().any(|n| n == name) {
                return Answer::refuse(
                    ErrorCode::InvalidParams.code(),
                    &format!("duplicate tool name: {name}"),
                    format!("registration refused: {name} twice"),
                );
            }
            names.push(name.to_owned());
        }
        let mut tools = self.tools.clone();
        for name in &names {
            if !tools.contains(name) {
                tools.push(name.clone());
            }
        }
        if names.is_empty() || tools.len() > 256 {
            return Answer::refuse(
                ErrorCode::InvalidParams.code(),
                "a registration holds 1 to 256 tools and leaves at most 256",
                "registration refused: empty, or over 256 tools".into(),
            );
        }
        self.commit(tools, format!("registered {}", names.join(", ")))
    }

    fn unregister(&mut self, params: &Value) -> Answer {
        let names: Vec<String> = params["names"]
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(|n| n.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let tools = self
            .tools
            .iter()
            .filter(|tool| !names.contains(tool))
            .cloned()
            .collect();
        self.commit(tools, format!("unregistered {}", names.join(", ")))
    }

    fn commit(&mut self, tools: Vec<String>, what: String) -> Answer {
        self.revision += 1;
        self.tools = tools;
        Answer::ok(
            json!({"revision": self.revision, "tools": self.tools}),
            format!(
                "{what}: catalog revision {}, tools {}",
                self.revision,
                self.tools.join(", ")
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host() -> LocalHost {
        let answers = Answers {
            confirm: true,
            inputs: vec!["first".into()],
            policy: "deny".into(),
            secrets: BTreeMap::from([("api.key".to_owned(), "s3cret".to_owned())]),
            artifacts_dir: None,
        };
        LocalHost::new(
            answers,
            vec!["api.key".into(), "unset".into()],
            Path::new("/nonexistent"),
        )
    }

    fn png() -> Vec<u8> {
        b"\x89PNG\r\n\x1a\nrest".to_vec()
    }

    fn publish_params(bytes: &[u8], mime: &str) -> Value {
        json!({"parent_request_id": 3, "mime_type": mime, "size": bytes.len(), "sha256": sha256_hex(bytes),
            "data": {"encoding": "base64", "data": base64::engine::general_purpose::STANDARD.encode(bytes)}})
    }

    #[test]
    fn artifacts_are_verified_and_numbered() {
        let mut host = host();
        let first = host.answer("artifact/publish", &publish_params(&png(), "image/png"));
        assert_eq!(
            first.outcome.unwrap()["artifact_id"],
            "artifact_00000000000000000000000000000001"
        );
        let wrong_type = host.answer("artifact/publish", &publish_params(&png(), "image/gif"));
        assert_eq!(wrong_type.outcome.unwrap_err().0, -32602);
        let mut lying = publish_params(&png(), "image/png");
        lying["size"] = json!(3);
        let (code, message) = host.answer("artifact/publish", &lying).outcome.unwrap_err();
        assert_eq!(
            (code, message.as_str()),
            (
                -32602,
                "artifact publication rejected: artifact size mismatch"
            )
        );
        let escape = json!({"parent_request_id": 3, "mime_type": "image/png", "size": 1, "sha256": "0", "path": "../x"});
        assert!(
            host.answer("artifact/publish", &escape)
                .note
                .contains("not a relative scratch path")
        );
    }

    #[test]
    fn catalog_revisions_count_accepted_mutations() {
        let mut host = host();
        host.tools = vec!["a".into()];
        let registered = host.answer(
            "tools/register",
            &json!({"tools": [{"name": "b", "description": "d", "parameters": {}}]}),
        );
        assert_eq!(
            registered.outcome.unwrap(),
            json!({"revision": 1, "tools": ["a", "b"]})
        );
        let refused = host.answer(
            "tools/register",
            &json!({"tools": [{"name": "c"}, {"name": "c"}]}),
        );
        assert!(refused.outcome.is_err());
        let removed = host.answer("tools/unregister", &json!({"names": ["a"]}));
        assert_eq!(
            removed.outcome.unwrap(),
            json!({"revision": 2, "tools": ["b"]})
        );
    }

    #[test]
    fn secrets_policy_input_and_confirmations_follow_the_flags() {
        let mut host = host();
        let secret = host.answer("secret/get", &json!({"name": "api.key"}));
        assert!(secret.secret);
        assert_eq!(secret.outcome.unwrap(), json!({"value": "s3cret"}));
        assert_eq!(
            host.answer("secret/get", &json!({"name": "unset"}))
                .outcome
                .unwrap_err()
                .0,
            -32004
        );
        assert_eq!(
            host.answer("secret/get", &json!({"name": "other"}))
                .outcome
                .unwrap_err()
                .0,
            -32602
        );
        assert_eq!(
            host.answer("policy/evaluate", &json!({"intent": {}}))
                .outcome
                .unwrap()["decision"],
            "deny"
        );
        assert_eq!(
            host.answer("input/request", &json!({})).outcome.unwrap(),
            json!({"value": "first"})
        );
        assert_eq!(
            host.answer("input/request", &json!({})).outcome.unwrap(),
            json!({"value": null})
        );
        assert_eq!(
            host.answer("confirmation/request", &json!({}))
                .outcome
                .unwrap(),
            json!({"confirmed": true})
        );
        assert_eq!(
            host.answer("agent/spawn", &json!({}))
                .outcome
                .unwrap_err()
                .0,
            -32601
        );
    }
}
