//! The sandbox a session runs its guest in, from the manifest's
//! `[capabilities]` as the host offered them and the user's ceilings.

use super::initialize::HostOffer;
use crate::log::Level;
use crate::runtime::{FsAccess, Limits, Sandbox};
use serde_json::Value;
use std::path::PathBuf;

/// The sandbox for the manifest's `[capabilities]` as the host sent them,
/// within the user's capability ceilings (`limits.capabilities`): what a
/// ceiling forbids is withheld with a warning, and the guest meets the
/// refusal inside its sandbox. An unknown `filesystem` value is refused
/// rather than guessed.
pub(crate) fn sandbox_from(offer: &HostOffer, limits: &Limits) -> anyhow::Result<Sandbox> {
    let capabilities = &offer.capabilities;
    let ceiling = &limits.capabilities;
    let asked = match capabilities.get("filesystem").and_then(Value::as_str) {
        None => FsAccess::None,
        Some(text) => FsAccess::parse(text).ok_or_else(|| {
            anyhow::anyhow!("unknown [capabilities].filesystem value {text:?} (expected none, workspace or unrestricted)")
        })?,
    };
    let filesystem = if breadth(asked) > breadth(ceiling.filesystem) {
        withheld(
            "filesystem",
            &format!(
                "the manifest asks for {}; the user allows at most {}",
                fs_name(asked),
                fs_name(ceiling.filesystem)
            ),
        );
        ceiling.filesystem
    } else {
        asked
    };
    let mut network = capabilities
        .get("network")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if network && !ceiling.network {
        withheld(
            "network",
            "the manifest asks for network access; the user allows none",
        );
        network = false;
    }
    let workspace = match &offer.workspace {
        Some(path) => PathBuf::from(path),
        None => std::env::current_dir()?,
    };
    // Only brokered variables the manifest names reach the guest, only
    // when the host actually passed them, and only those the user allows.
    let names: Vec<&str> = capabilities
        .get("environment")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let (allowed, refused): (Vec<&str>, Vec<&str>) = names.into_iter().partition(|name| {
        ceiling
            .environment
            .as_ref()
            .is_none_or(|allowed| allowed.contains(*name))
    });
    if !refused.is_empty() {
        withheld(
            "environment",
            &format!(
                "the manifest names {}, which the user's list of allowed variables does not",
                refused.join(", ")
            ),
        );
    }
    let env = allowed
        .into_iter()
        .filter_map(|name| crate::process_env::brokered(name).map(|v| (name.to_owned(), v)))
        .collect();
    Ok(Sandbox {
        filesystem,
        filesystem_asked: asked,
        workspace,
        network,
        env,
        scratch: None,
        output_bytes: limits.output_bytes,
    })
}

/// How much of the host a filesystem grant reaches.
fn breadth(access: FsAccess) -> u8 {
    match access {
        FsAccess::None => 0,
        FsAccess::Workspace => 1,
        FsAccess::Unrestricted => 2,
    }
}

fn fs_name(access: FsAccess) -> &'static str {
    match access {
        FsAccess::None => "none",
        FsAccess::Workspace => "workspace",
        FsAccess::Unrestricted => "unrestricted",
    }
}

fn withheld(capability: &str, why: &str) {
    crate::log!(Level::Warning, "capability withheld by the user's policy",
        "capability" => capability,
        "detail" => why,
        "raise_with" => format!("capabilities.{capability} in {}", crate::policy::POLICY_FILE));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::limits::CapabilityLimit;
    use serde_json::json;

    fn offer(capabilities: Value) -> HostOffer {
        HostOffer {
            api: super::super::api_version::ApiVersion::V0_2,
            contributes: Default::default(),
            capabilities,
            workspace: Some("/tmp".into()),
            required: Vec::new(),
            optional: Vec::new(),
            max_concurrent: 1,
        }
    }

    fn limits(ceiling: CapabilityLimit) -> Limits {
        Limits {
            capabilities: ceiling,
            ..Limits::default()
        }
    }

    #[test]
    fn without_ceilings_the_manifest_is_granted() {
        let offer = offer(json!({"filesystem": "unrestricted", "network": true}));
        let sandbox = sandbox_from(&offer, &Limits::default()).unwrap();
        assert_eq!(sandbox.filesystem, FsAccess::Unrestricted);
        assert!(sandbox.network);
    }

    #[test]
    fn ceilings_withhold_what_the_user_forbids() {
        let wide = offer(json!({"filesystem": "unrestricted", "network": true}));
        let sandbox = sandbox_from(
            &wide,
            &limits(CapabilityLimit {
                filesystem: FsAccess::Workspace,
                network: false,
                environment: None,
            }),
        )
        .unwrap();
        assert_eq!(sandbox.filesystem, FsAccess::Workspace);
        assert!(!sandbox.network);
        // Asking for less than the ceiling is granted as asked.
        let narrow = offer(json!({"filesystem": "none"}));
        let sandbox = sandbox_from(
            &narrow,
            &limits(CapabilityLimit {
                filesystem: FsAccess::Workspace,
                ..CapabilityLimit::default()
            }),
        )
        .unwrap();
        assert_eq!(sandbox.filesystem, FsAccess::None);
    }

    #[test]
    fn only_allowed_variables_are_passed() {
        // PATH is set for every test process; the second name never is.
        let offer = offer(json!({"environment": ["PATH", "OCTET_WASM_TEST_UNSET"]}));
        let open = sandbox_from(&offer, &Limits::default()).unwrap();
        assert_eq!(
            open.env.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
            ["PATH"]
        );
        let closed = sandbox_from(
            &offer,
            &limits(CapabilityLimit {
                environment: Some(["HOME".to_owned()].into()),
                ..CapabilityLimit::default()
            }),
        )
        .unwrap();
        assert!(closed.env.is_empty(), "{:?}", closed.env);
    }
}
