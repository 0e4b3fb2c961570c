//! Author tools: `new`, `build`, `sdk`, `inspect`, `manifest`, `check` and
//! `embed-metadata`. They run offline (no octet host, a guest sandbox with
//! nothing in it) and reuse the shim's own rules (`protocol::imports::tools_catalog::definitions`,
//! `protocol::initialize`), so what they accept is what `run` accepts.
//!
//! Each command is one file holding its clap arguments and a function
//! returning `Err(message)` for the caller to print; output for people goes
//! to stdout through [`say`].

pub mod api_rules;
pub mod build;
mod build_steps;
pub mod check;
mod check_component;
mod check_sections;
mod check_sources;
pub mod component;
mod finding;
pub mod inspect;
pub mod manifest;
mod manifest_merge;
pub mod metadata;
pub mod new;
pub mod sdk;
pub mod sign;

use std::path::Path;

/// What octet sets last for an extension process, so a bundle's
/// `[entrypoint].env` cannot remove it.
const EXTENSION_VARIABLES: [&str; 3] = [
    "OCTET_EXTENSION_API_VERSION",
    "OCTET_EXTENSION_DIR",
    "OCTET_EXTENSION_MANIFEST",
];

/// Refuses to run `command` as an extension process. Started by octet,
/// the command line is the manifest's `[entrypoint].args`, which the
/// extension's author writes: an extension could otherwise have
/// `sdk install --to ~/.config/octet-wasm` replace the user's policy, or
/// `demo --record FILE` overwrite any file the user can write. Only `run`
/// is for octet; the tools that write files are for the user.
pub fn refuse_under_octet(command: &str) -> Result<(), String> {
    match EXTENSION_VARIABLES
        .iter()
        .find(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()))
    {
        Some(name) => Err(format!(
            "`octet-wasm {command}` does not run as an octet extension ({name} is set): an extension's entrypoint may only `run` a component; run {command} yourself, outside octet"
        )),
        None => Ok(()),
    }
}

/// Prints one line of a command's output on stdout. A reader that went
/// away (`inspect | head`) ends the command quietly, as a pipe's SIGPIPE
/// would, instead of a panic.
pub fn say(line: &str) {
    use std::io::Write;
    if writeln!(std::io::stdout().lock(), "{line}").is_err() {
        std::process::exit(0);
    }
}

/// Writes `bytes` to `path` through a temporary file beside it, so no
/// reader sees half a file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&temp, bytes)
        .and_then(|()| std::fs::rename(&temp, path))
        .map_err(|err| {
            let _ = std::fs::remove_file(&temp);
            format!("cannot write {}: {err}", path.display())
        })
}
