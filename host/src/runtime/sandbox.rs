//! The WASI sandbox an instance runs in, from the manifest's capabilities.
//!
//! For a native octet extension `[capabilities]` are consent metadata; here
//! they are the whole of what the guest can reach (docs/choices.md#sandbox):
//!
//! | capability | what the guest gets |
//! |---|---|
//! | `filesystem = "none"` | no directories at all |
//! | `filesystem = "workspace"` | the workspace, read-write, at its own host path (so paths the model names work unchanged); also the cwd |
//! | `filesystem = "unrestricted"` | the host's `/` read-write at `/` (what the user consented to) but procfs ([`super::procfs`]); cwd is the workspace |
//! | `network = false` | no sockets, no name lookups |
//! | `network = true` | TCP, UDP and name lookups to any address |
//! | `environment = [...]` | exactly those variables, when the host passed them |
//! | `process` | nothing: WebAssembly cannot start processes |
//!
//! Escapes out of a granted directory (`..`, absolute paths elsewhere,
//! symlinks pointing outside) are refused by wasmtime-wasi's capability-based
//! filesystem. stdin is empty; stdout and stderr become log records.

use super::output::GuestOutput;
use super::types::{ContentPart, ToolResult};
use crate::log::Level;
use std::path::{Path, PathBuf};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};

/// How much of the filesystem the guest sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsAccess {
    None,
    Workspace,
    Unrestricted,
}

impl FsAccess {
    /// Parses the manifest's `filesystem` value.
    pub fn parse(text: &str) -> Option<FsAccess> {
        match text {
            "none" => Some(FsAccess::None),
            "workspace" => Some(FsAccess::Workspace),
            "unrestricted" => Some(FsAccess::Unrestricted),
            _ => None,
        }
    }
}

/// Everything an instance's WASI context is built from.
#[derive(Debug, Clone)]
pub struct Sandbox {
    pub filesystem: FsAccess,
    /// What the manifest asked for, when the user's ceiling lowered it to
    /// `filesystem`: the key a denied access must name is then the user's.
    pub filesystem_asked: FsAccess,
    /// The active workspace on the host.
    pub workspace: PathBuf,
    pub network: bool,
    /// Variables the guest may read (already filtered by the caller).
    pub env: Vec<(String, String)>,
    /// An extra read-write directory (the host's scratch), at its host path.
    pub scratch: Option<PathBuf>,
    /// Bytes of guest output logged per instance.
    pub output_bytes: usize,
}

impl Sandbox {
    /// The workspace as the guest names it, or `None` when it cannot see it.
    pub fn guest_workspace(&self) -> Option<String> {
        match self.filesystem {
            FsAccess::None => None,
            FsAccess::Workspace | FsAccess::Unrestricted => {
                Some(self.workspace.to_string_lossy().into_owned())
            }
        }
    }

    /// The directories the guest gets: (host path, name the guest sees).
    ///
    /// wasi-libc (the C library of Rust, C and Python guests) starts every
    /// guest in `/` whatever `initial-cwd` says, and resolves a relative
    /// path against the preopen named `.` (its catch-all: the preopen with
    /// the longest matching prefix wins, and `.` has the empty prefix). So
    /// the workspace is preopened twice: at its host path, for absolute
    /// paths, and as `.`, so that relative paths land in the workspace.
    /// A consequence: an absolute path outside every other preopen (say
    /// `/etc/passwd`) resolves inside the workspace (`<workspace>/etc/passwd`)
    /// rather than failing outright; it can never leave the workspace.
    pub fn preopens(&self) -> anyhow::Result<Vec<(PathBuf, String)>> {
        let mut dirs = Vec::new();
        match self.filesystem {
            FsAccess::None => {}
            FsAccess::Workspace => {
                let path = guest_path(&self.workspace)?;
                dirs.push((self.workspace.clone(), path.to_owned()));
                dirs.push((self.workspace.clone(), ".".to_owned()));
            }
            FsAccess::Unrestricted => dirs.push((PathBuf::from("/"), "/".to_owned())),
        }
        if let Some(scratch) = &self.scratch {
            dirs.push((scratch.clone(), guest_path(scratch)?.to_owned()));
        }
        // No grant reaches procfs, the shim's own memory among it.
        let mut reachable = Vec::new();
        for (host, guest) in dirs {
            reachable.extend(
                super::procfs::preopens_without_procfs(&host, &guest).map_err(|err| {
                    anyhow::anyhow!(
                        "cannot open the granted directory {}: {err}",
                        host.display()
                    )
                })?,
            );
        }
        Ok(reachable)
    }

    /// Builds a fresh WASI context.
    pub fn build(&self) -> anyhow::Result<WasiCtx> {
        let mut builder = WasiCtxBuilder::new();
        let (stdout, stderr) = GuestOutput::pair(self.output_bytes);
        builder.stdout(stdout).stderr(stderr);
        builder.envs(&self.env);
        for (host, guest) in self.preopens()? {
            preopen(&mut builder, &host, &guest)?;
        }
        if self.filesystem != FsAccess::None {
            // For guests whose C library honours it (wasi-libc does not).
            builder.initial_cwd(guest_path(&self.workspace)?);
        }
        if self.network {
            builder
                .inherit_network()
                .allow_tcp(true)
                .allow_udp(true)
                .allow_ip_name_lookup(true);
        } else {
            builder
                .socket_addr_check(|_, _| Box::pin(async { false }))
                .allow_tcp(false)
                .allow_udp(false)
                .allow_ip_name_lookup(false);
        }
        Ok(builder.build())
    }
}

/// wasi-libc's texts for ENOENT and ENOTCAPABLE (Rust, Python and C guests
/// print them): with no directory granted, every path a guest names fails
/// with one of these, and the guest cannot tell why.
const DENIED_TEXTS: [&str; 2] = ["No such file or directory", "Capabilities insufficient"];

impl Sandbox {
    /// For a guest failure that reads like a path refused for want of any
    /// directory, the sentence naming the key that grants one: the
    /// manifest's, or the user's ceiling when that withheld the grant.
    /// `None` when the guest has a directory (its error is then its own).
    pub fn denied_filesystem(&self, failure: &str) -> Option<&'static str> {
        if self.filesystem != FsAccess::None
            || !DENIED_TEXTS.iter().any(|text| failure.contains(text))
        {
            return None;
        }
        Some(if self.filesystem_asked == FsAccess::None {
            "octet-wasm: this extension has no filesystem: its manifest grants none; \
             `filesystem = \"workspace\"` under `[capabilities]` in extension.toml grants the workspace"
        } else {
            "octet-wasm: this extension has no filesystem: its manifest asks for one, and the \
             user's octet-wasm policy (`filesystem` under `[capabilities]`) allows none"
        })
    }
}

/// A failed tool call the sandbox explains (no directory granted) carries
/// the key that grants one after the guest's own text, for the model and
/// the author alike, and the log names it; other failures stay as they are.
pub fn explain_tool_failure(sandbox: &Sandbox, tool: &str, failure: &mut ToolFailure<'_>) {
    let text = match failure {
        ToolFailure::Text(text) => Some(&mut **text),
        ToolFailure::Result(result) if result.is_error => {
            result.content.iter_mut().find_map(|part| match part {
                ContentPart::Text(text) if sandbox.denied_filesystem(text).is_some() => Some(text),
                _ => None,
            })
        }
        ToolFailure::Result(_) => None,
    };
    let Some(text) = text else { return };
    let Some(hint) = sandbox.denied_filesystem(text) else {
        return;
    };
    crate::guest_log!(Level::Warning, "a tool failed on a path with no filesystem granted",
        "tool" => tool, "error" => text.clone(), "grant" => hint);
    text.push_str(" (");
    text.push_str(hint);
    text.push(')');
}

/// What a failed tool call returned: its failure text, or a result that
/// may be an error (the Python SDK answers an exception that way).
pub enum ToolFailure<'a> {
    Text(&'a mut String),
    Result(&'a mut ToolResult),
}

fn guest_path(path: &Path) -> anyhow::Result<&str> {
    path.to_str().ok_or_else(|| {
        anyhow::anyhow!(
            "path {} is not UTF-8 and cannot be shown to a WASI guest",
            path.display()
        )
    })
}

fn preopen(builder: &mut WasiCtxBuilder, host: &Path, guest: &str) -> anyhow::Result<()> {
    builder
        .preopened_dir(host, guest, FsPerms::ReadWrite)
        .map(|_| ())
        .map_err(|err| anyhow::anyhow!("cannot open {} for the guest: {err}", host.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sandbox(filesystem: FsAccess) -> Sandbox {
        Sandbox {
            filesystem,
            filesystem_asked: filesystem,
            workspace: PathBuf::from("/home/ada/project"),
            network: false,
            env: Vec::new(),
            scratch: None,
            output_bytes: 0,
        }
    }

    /// The e2e `workspace_filesystem_grants_the_workspace_and_nothing_else`
    /// found relative paths failing: wasi-libc ignores `initial-cwd`, so
    /// the workspace must also be the `.` preopen.
    #[test]
    fn the_workspace_is_preopened_at_its_path_and_as_dot() {
        let ws = PathBuf::from("/home/ada/project");
        assert_eq!(
            sandbox(FsAccess::Workspace).preopens().unwrap(),
            vec![
                (ws.clone(), "/home/ada/project".to_owned()),
                (ws, ".".to_owned())
            ]
        );
        assert!(sandbox(FsAccess::None).preopens().unwrap().is_empty());
        // `/` but procfs (runtime/procfs.rs).
        let unrestricted = sandbox(FsAccess::Unrestricted).preopens().unwrap();
        assert!(unrestricted.contains(&(PathBuf::from("/etc"), "/etc".to_owned())));
        assert!(
            !unrestricted
                .iter()
                .any(|(host, _)| host.starts_with("/proc"))
        );
    }

    #[test]
    fn a_failure_without_any_directory_names_the_key_that_grants_one() {
        let none = sandbox(FsAccess::None);
        for failure in [
            "read x: No such file or directory (os error 44)",
            "[Errno 76] Capabilities insufficient: 'notes.txt'",
        ] {
            let hint = none.denied_filesystem(failure).unwrap();
            assert!(
                hint.contains(
                    "`filesystem = \"workspace\"` under `[capabilities]` in extension.toml"
                )
            );
        }
        assert_eq!(none.denied_filesystem("connection refused"), None);
        // A granted workspace: a missing file is the guest's own business.
        let workspace = sandbox(FsAccess::Workspace);
        assert_eq!(
            workspace.denied_filesystem("No such file or directory (os error 44)"),
            None
        );
        // The user's ceiling withheld the manifest's grant: the user's key.
        let clamped = Sandbox {
            filesystem_asked: FsAccess::Workspace,
            ..none
        };
        let hint = clamped
            .denied_filesystem("No such file or directory (os error 44)")
            .unwrap();
        assert!(hint.contains("policy"), "{hint}");
    }

    /// The Python SDK answers an exception as an `is_error` result, not as
    /// a failure: its text part gets the grant, a success is left alone.
    #[test]
    fn an_error_result_gets_the_grant_in_its_text_part() {
        let none = sandbox(FsAccess::None);
        let denied = "FileNotFoundError: [Errno 44] No such file or directory: 'notes.txt'";
        let mut result = ToolResult {
            content: vec![ContentPart::Text(denied.to_owned())],
            structured_content: None,
            is_error: true,
            metadata: None,
        };
        explain_tool_failure(&none, "t", &mut ToolFailure::Result(&mut result));
        let ContentPart::Text(text) = &result.content[0] else {
            panic!("a text part");
        };
        assert!(
            text.starts_with(denied) && text.contains("extension.toml"),
            "{text}"
        );
        let mut success = ToolResult {
            is_error: false,
            content: vec![ContentPart::Text(denied.to_owned())],
            ..result
        };
        explain_tool_failure(&none, "t", &mut ToolFailure::Result(&mut success));
        assert_eq!(success.content, vec![ContentPart::Text(denied.to_owned())]);
    }
}
