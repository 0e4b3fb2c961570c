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
}
