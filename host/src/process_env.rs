//! The shim's own process environment, cleaned before anything reads it.
//!
//! octet applies the manifest's `[entrypoint].env` to the shim, so the
//! extension's author chooses every variable the C library consults. The
//! shim is linked statically (`.cargo/config.toml`), so `LD_PRELOAD` and
//! friends have no dynamic loader to act on before `main`; but a static
//! glibc still reads some of them while it starts (the `LD_LIBRARY_PATH`
//! its `dlopen` uses for NSS modules, behind `getpwuid_r` and name lookups;
//! malloc tunables; resolver options). Clearing them inside `main` is too
//! late for what was read at start-up, so a process that finds any of them
//! executes itself again without them: the second process starts clean.
//!
//! The list is glibc's own set of variables it drops for privileged
//! (AT_SECURE) programs, which is exactly the "environment chosen by
//! someone we do not trust" case, plus `GLIBC_TUNABLES`.

use std::ffi::OsString;

/// Variables the C library acts on that an untrusted party may not choose.
const LOADER_VARIABLES: &[&str] = &[
    "GCONV_PATH",
    "GETCONF_DIR",
    "GLIBC_TUNABLES",
    "HOSTALIASES",
    "LOCALDOMAIN",
    "LOCPATH",
    "MALLOC_ARENA_MAX",
    "MALLOC_ARENA_TEST",
    "MALLOC_MMAP_MAX_",
    "MALLOC_MMAP_THRESHOLD_",
    "MALLOC_PERTURB_",
    "MALLOC_TOP_PAD_",
    "MALLOC_TRACE",
    "MALLOC_TRIM_THRESHOLD_",
    "NIS_PATH",
    "NLSPATH",
    "RESOLV_HOST_CONF",
    "RES_OPTIONS",
    "TMPDIR",
    "TZDIR",
];

/// Whether the C library would act on `name` at start-up.
fn is_loader_variable(name: &str) -> bool {
    name.starts_with("LD_") || LOADER_VARIABLES.contains(&name)
}

/// The names of such variables present in `vars`.
fn loader_variables(vars: impl Iterator<Item = (OsString, OsString)>) -> Vec<String> {
    vars.filter_map(|(name, _)| name.into_string().ok())
        .filter(|name| is_loader_variable(name))
        .collect()
}

/// Re-executes the shim without the loader variables when any is set.
/// Returns only when the environment is already clean; when the second
/// start cannot be made, the process exits rather than run with them.
pub fn ensure_clean() {
    let found = loader_variables(std::env::vars_os());
    if found.is_empty() {
        return;
    }
    use std::os::unix::process::CommandExt;
    let mut args = std::env::args_os();
    let arg0 = args.next().unwrap_or_else(|| OsString::from("octet-wasm"));
    let mut command = std::process::Command::new("/proc/self/exe");
    command.arg0(arg0).args(args);
    for name in &found {
        command.env_remove(name);
    }
    // `exec` only returns on failure.
    let error = command.exec();
    crate::log!(crate::log::Level::Error,
        "the environment sets variables the C library would act on, and the shim could not restart without them; refusing to run",
        "variables" => found, "error" => error.to_string());
    std::process::exit(2);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_loader_variables_only() {
        let vars = [
            ("LD_PRELOAD", "./evil.so"),
            ("LD_LIBRARY_PATH", "."),
            ("GCONV_PATH", "."),
            ("OCTET_WORKSPACE", "/w"),
            ("HOME", "/h"),
            ("PATH", "/bin"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        assert_eq!(
            loader_variables(vars.into_iter()),
            ["LD_PRELOAD", "LD_LIBRARY_PATH", "GCONV_PATH"]
        );
    }
}
