//! The shim's own process environment: an allowlist, applied before any
//! library reads it.
//!
//! octet applies the manifest's `[entrypoint].env` to the shim after its
//! own allowlist, so the extension's author chooses every variable the
//! shim's dependencies read: thread pools (`RAYON_NUM_THREADS=1500` gave
//! 1,503 threads), the standard library's stack size and backtraces,
//! wasmtime's and Cranelift's debugging switches, locale and time zone. A
//! denylist of such names is never complete (a dependency update adds
//! one), so `run` and `compile` keep exactly the variables octet sets,
//! `OCTET_*`, and drop every other one as the first thing `main` does.
//!
//! Why in place and not by executing the shim again: the shim is a static
//! musl binary (`.cargo/config.toml`). Nothing runs before `main` that
//! reads the environment: there is no dynamic loader, musl's start-up code
//! reads none, the standard library's start-up on musl reads none (it
//! reads `RUST_MIN_STACK` and `RUST_BACKTRACE` lazily, at the first thread
//! or panic), and no dependency registers a constructor. `main` runs on
//! the only thread, so the removal races nobody, and from then on the
//! process environment holds `OCTET_*` alone, exactly what a second
//! process started with that allowlist would see, without the second
//! start (about a millisecond of a 3.5 ms warm start).
//!
//! The variables a user consents to pass to a guest (`[capabilities]
//! environment` in the manifest and the policy) are taken out with the
//! rest and kept in this module ([`brokered`]): the guest gets them from
//! here; no library of the shim ever sees them.

use std::ffi::OsString;
use std::sync::OnceLock;

/// What octet sets for an extension; the only variables kept.
const KEPT_PREFIX: &str = "OCTET_";

/// The environment as the process received it, for the guest's consented
/// variables.
static TAKEN: OnceLock<Vec<(OsString, OsString)>> = OnceLock::new();

/// Whether `name` stays in the process environment.
fn is_kept(name: &OsString) -> bool {
    name.to_str()
        .is_some_and(|name| name.starts_with(KEPT_PREFIX))
}

/// Removes every variable but `OCTET_*` from the process environment,
/// keeping the originals for [`brokered`]. Call first in `main`, before
/// any thread starts.
pub fn confine() {
    let vars: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    for (name, _) in vars.iter().filter(|(name, _)| !is_kept(name)) {
        // SAFETY: called first in `main`, on the process's only thread
        // (no runtime, pool or logger has started), so nothing reads or
        // writes the environment concurrently.
        unsafe { std::env::remove_var(name) };
    }
    let _ = TAKEN.set(vars);
}

/// The value the process was started with for `name`, if any and not
/// empty: what a guest may be given when the user consented to `name`.
/// Before (or without) [`confine`], the live environment.
pub fn brokered(name: &str) -> Option<String> {
    let value = match TAKEN.get() {
        Some(vars) => vars
            .iter()
            .find(|(key, _)| key == name)
            .and_then(|(_, value)| value.clone().into_string().ok()),
        None => std::env::var(name).ok(),
    };
    value.filter(|value| !value.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_octet_variables_are_kept() {
        let kept = |name: &str| is_kept(&OsString::from(name));
        assert!(kept("OCTET_EXTENSION_DIR"));
        assert!(kept("OCTET_WASM_LOG"));
        for name in [
            "RAYON_NUM_THREADS",
            "LD_PRELOAD",
            "HOME",
            "PATH",
            "RUST_MIN_STACK",
            "TZ",
            "octet_lowercase",
            "OCTET",
        ] {
            assert!(!kept(name), "{name}");
        }
        use std::os::unix::ffi::OsStringExt;
        assert!(!is_kept(&OsString::from_vec(b"OCTET_\xff".to_vec())));
    }
}
