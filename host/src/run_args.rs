//! The arguments of `run` and `compile`, in the library so that the binary
//! parses its command line with them and `check` parses a manifest's
//! `[entrypoint].args` with the very same parser: what `check` accepts is
//! what `run` will accept.

use crate::policy::report::Requests;
use clap::{Args, FromArgMatches};
use std::path::PathBuf;

#[derive(Args, Debug, Clone)]
pub struct RuntimeArgs {
    /// Linear memory per guest instance, in MiB, at most the user's ceiling
    /// for the whole process (`memory_mib` in
    /// ~/.config/octet-wasm/policy.toml, else 256) [default: the
    /// component's metadata section, else the ceiling].
    #[arg(long, value_name = "MIB")]
    pub memory_mib: Option<usize>,
    /// Fuel (about one unit per wasm instruction) per call, at most the
    /// user's `fuel` ceiling; off by default (or the component's metadata
    /// section, or the user's ceiling when there is one).
    #[arg(long, value_name = "UNITS")]
    pub fuel: Option<u64>,
    /// Ignored, with a warning: the compiled-component cache is always
    /// ~/.cache/octet-wasm of the user (the home from the user database,
    /// not $HOME). Still accepted so that old manifests start.
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Do not read or write the compiled-component cache.
    #[arg(long)]
    pub no_cache: bool,
}

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// The extension component (.wasm).
    pub component: PathBuf,
    #[command(flatten)]
    pub runtime: RuntimeArgs,
    /// Override a deadline, e.g. `--deadline-ms render=300`, up to the
    /// user's ceiling (`[deadlines]` in ~/.config/octet-wasm/policy.toml).
    /// Names: request, command, before_prompt, after_response,
    /// before_persistence, post_mutation, cache_warming, render, menu,
    /// lifecycle, cancel_grace.
    #[arg(long = "deadline-ms", value_name = "NAME=MS")]
    pub deadlines: Vec<String>,
    /// Refuse to run unless the component's SHA-256 is this (hex).
    #[arg(long, value_name = "HEX")]
    pub sha256: Option<String>,
}

#[derive(Args, Debug, Clone)]
pub struct CompileArgs {
    /// The extension component (.wasm).
    pub component: PathBuf,
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

impl RunArgs {
    /// Parses `[entrypoint].args` (`run` first) as the binary would.
    pub fn parse_entrypoint(args: &[String]) -> Result<RunArgs, EntrypointError> {
        let command = RunArgs::augment_args(clap::Command::new("run"));
        let matches = command.try_get_matches_from(args).map_err(|err| {
            match (err.kind(), err.get(clap::error::ContextKind::InvalidArg)) {
                (
                    clap::error::ErrorKind::UnknownArgument,
                    Some(clap::error::ContextValue::String(flag)),
                ) => EntrypointError::UnknownOption(flag.clone()),
                _ => {
                    let text = err.to_string();
                    let first = text.lines().next().unwrap_or_default();
                    EntrypointError::Invalid(first.strip_prefix("error: ").unwrap_or(first).into())
                }
            }
        })?;
        RunArgs::from_arg_matches(&matches).map_err(|err| EntrypointError::Invalid(err.to_string()))
    }

    /// What these arguments ask for, as the policy report weighs it.
    pub fn requests(&self) -> Requests {
        Requests {
            deadlines: self.deadlines.clone(),
            ..self.runtime.requests()
        }
    }
}

impl RuntimeArgs {
    /// What these arguments ask for, without deadlines (`compile`).
    pub fn requests(&self) -> Requests {
        Requests {
            memory_mib: self.memory_mib,
            fuel: self.fuel,
            deadlines: Vec::new(),
        }
    }
}

/// Why `run` would refuse its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntrypointError {
    /// An option `run` does not have, as written (`check` reports it and
    /// parses the rest without it, to report every mistake at once).
    UnknownOption(String),
    /// Anything else, in clap's words (a missing or malformed value).
    Invalid(String),
}

impl std::fmt::Display for EntrypointError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EntrypointError::UnknownOption(flag) => write!(
                f,
                "`octet-wasm run` has no option {flag:?}; the shim would exit at once"
            ),
            EntrypointError::Invalid(message) => f.write_str(message),
        }
    }
}

/// `--sha256` must name a whole SHA-256 digest.
pub fn check_sha256(hex: &str) -> Result<(), String> {
    if crate::runtime::cache::ComponentDigest::is_hex(hex) {
        Ok(())
    } else {
        Err("--sha256 expects 64 hexadecimal digits".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<RunArgs, String> {
        RunArgs::parse_entrypoint(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>())
            .map_err(|err| err.to_string())
    }

    #[test]
    fn entrypoint_args_parse_like_the_command_line() {
        let args = parse(&[
            "run",
            "x.wasm",
            "--memory-mib=64",
            "--deadline-ms",
            "render=300",
            "--no-cache",
        ])
        .unwrap();
        assert_eq!(args.component, PathBuf::from("x.wasm"));
        assert_eq!(args.runtime.memory_mib, Some(64));
        assert!(args.runtime.no_cache);
        assert_eq!(args.requests().deadlines, ["render=300"]);
    }

    #[test]
    fn unknown_options_and_missing_values_are_named() {
        let err = parse(&["run", "x.wasm", "--memory", "9"]).unwrap_err();
        assert!(err.contains("has no option \"--memory\""), "{err}");
        let err = parse(&["run", "x.wasm", "--fuel"]).unwrap_err();
        assert!(err.contains("--fuel"), "{err}");
        let err = parse(&["run", "x.wasm", "--fuel", "lots"]).unwrap_err();
        assert!(err.contains("lots"), "{err}");
        assert!(parse(&["run"]).is_err());
    }

    #[test]
    fn sha256_is_sixty_four_hex_digits() {
        assert!(check_sha256(&"a".repeat(64)).is_ok());
        assert!(check_sha256(&"a".repeat(63)).is_err());
        assert!(check_sha256(&"g".repeat(64)).is_err());
    }
}
