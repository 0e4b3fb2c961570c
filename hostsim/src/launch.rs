//! Spawning an extension exactly as octet does (docs/protocol.md#launch).

use super::params::ApiVersion;
use super::session::Session;
use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Host variables copied into the cleared environment when present. octet's
/// allowlist is longer (docs/protocol.md#environment); PATH and HOME are
/// what a shim can depend on.
const PASSED_THROUGH: [&str; 2] = ["PATH", "HOME"];

/// How to start one generation of an extension.
///
/// The child gets a cleared environment plus `PATH`/`HOME`, any extra
/// variables from [`Launch::env`], and last (so they win) the six `OCTET_*`
/// variables; its cwd is the workspace; stdin, stdout and stderr are pipes;
/// on Unix it runs in its own process group.
#[derive(Clone, Debug)]
pub struct Launch {
    program: PathBuf,
    args: Vec<OsString>,
    extension_dir: Option<PathBuf>,
    manifest_path: Option<PathBuf>,
    workspace: Option<PathBuf>,
    scratch: Option<PathBuf>,
    api_version: ApiVersion,
    name: String,
    env: Vec<(OsString, OsString)>,
}

impl Launch {
    /// Starts describing a launch of `program` (API 0.1, name `extension`).
    pub fn new(program: impl Into<PathBuf>) -> Launch {
        Launch {
            program: program.into(),
            args: Vec::new(),
            extension_dir: None,
            manifest_path: None,
            workspace: None,
            scratch: None,
            api_version: ApiVersion::V0_1,
            name: "extension".to_owned(),
            env: Vec::new(),
        }
    }

    /// Appends one argument (passed verbatim, no shell).
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Appends arguments.
    pub fn args<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(mut self, args: I) -> Self {
        self.args
            .extend(args.into_iter().map(|arg| arg.as_ref().to_owned()));
        self
    }

    /// `OCTET_EXTENSION_DIR` (defaults to the manifest's directory).
    pub fn extension_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.extension_dir = Some(dir.into());
        self
    }

    /// `OCTET_EXTENSION_MANIFEST` (required).
    pub fn manifest_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.manifest_path = Some(path.into());
        self
    }

    /// `OCTET_WORKSPACE` and the child's cwd (required).
    pub fn workspace(mut self, dir: impl Into<PathBuf>) -> Self {
        self.workspace = Some(dir.into());
        self
    }

    /// `OCTET_EXTENSION_SCRATCH` (required).
    pub fn scratch(mut self, dir: impl Into<PathBuf>) -> Self {
        self.scratch = Some(dir.into());
        self
    }

    /// `OCTET_EXTENSION_API_VERSION`.
    pub fn api_version(mut self, version: ApiVersion) -> Self {
        self.api_version = version;
        self
    }

    /// `OCTET_EXTENSION_NAME`.
    pub fn name(mut self, name: &str) -> Self {
        self.name = name.to_owned();
        self
    }

    /// An extra variable (e.g. `RUST_BACKTRACE`, or one a manifest's
    /// `[entrypoint].env` sets), set before the six `OCTET_*` variables.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// The workspace directory, if set.
    pub fn workspace_dir(&self) -> Option<&Path> {
        self.workspace.as_deref()
    }

    /// The manifest path, if set.
    pub fn manifest(&self) -> Option<&Path> {
        self.manifest_path.as_deref()
    }

    /// The command octet would run.
    pub fn command(&self) -> io::Result<Command> {
        let missing = |what: &str| {
            io::Error::new(io::ErrorKind::InvalidInput, format!("launch needs {what}"))
        };
        let manifest = self
            .manifest_path
            .as_ref()
            .ok_or_else(|| missing("a manifest path"))?;
        let workspace = self
            .workspace
            .as_ref()
            .ok_or_else(|| missing("a workspace"))?;
        let scratch = self
            .scratch
            .as_ref()
            .ok_or_else(|| missing("a scratch directory"))?;
        let extension_dir = match &self.extension_dir {
            Some(dir) => dir.clone(),
            None => manifest
                .parent()
                .map(Path::to_owned)
                .ok_or_else(|| missing("an extension directory"))?,
        };
        let mut command = Command::new(&self.program);
        command.args(&self.args).current_dir(workspace).env_clear();
        for key in PASSED_THROUGH {
            if let Some(value) = std::env::var_os(key) {
                command.env(key, value);
            }
        }
        for (key, value) in &self.env {
            command.env(key, value);
        }
        command
            .env("OCTET_EXTENSION_API_VERSION", self.api_version.as_str())
            .env("OCTET_EXTENSION_NAME", &self.name)
            .env("OCTET_EXTENSION_DIR", extension_dir)
            .env("OCTET_EXTENSION_MANIFEST", manifest)
            .env("OCTET_WORKSPACE", workspace)
            .env("OCTET_EXTENSION_SCRATCH", scratch)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            command.process_group(0);
        }
        Ok(command)
    }

    /// Spawns the extension and starts the stdout checker and stderr
    /// collector threads.
    pub fn spawn(&self) -> io::Result<Session> {
        let child = self.command()?.spawn()?;
        Session::start(child)
    }
}
