//! The WASI sandbox an instance runs in, from the manifest's capabilities.
//!
//! For a native octet extension `[capabilities]` are consent metadata; here
//! they are the whole of what the guest can reach (design §5):
//!
//! | capability | what the guest gets |
//! |---|---|
//! | `filesystem = "none"` | no directories at all |
//! | `filesystem = "workspace"` | the workspace, read-write, at its own host path (so paths the model names work unchanged); also the cwd |
//! | `filesystem = "unrestricted"` | the host's `/` read-write at `/` (what the user consented to); cwd is the workspace |
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

    /// Builds a fresh WASI context.
    pub fn build(&self) -> anyhow::Result<WasiCtx> {
        let mut builder = WasiCtxBuilder::new();
        let (stdout, stderr) = GuestOutput::pair(self.output_bytes);
        builder.stdout(stdout).stderr(stderr);
        builder.envs(&self.env);
        match self.filesystem {
            FsAccess::None => {}
            FsAccess::Workspace => {
                let path = guest_path(&self.workspace)?;
                preopen(&mut builder, &self.workspace, path)?;
                builder.initial_cwd(path);
            }
            FsAccess::Unrestricted => {
                preopen(&mut builder, Path::new("/"), "/")?;
                builder.initial_cwd(guest_path(&self.workspace)?);
            }
        }
        if let Some(scratch) = &self.scratch {
            preopen(&mut builder, scratch, guest_path(scratch)?)?;
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
