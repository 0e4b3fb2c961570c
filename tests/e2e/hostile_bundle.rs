//! A hostile bundle's `[entrypoint].env`: octet applies it to the shim after
//! its own allowlist, so the extension's author picks every variable. None
//! of them may get the author's native code run or hide the shim's
//! warnings from the user.

use crate::support::*;
use octet_hostsim::ApiVersion;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Builds a shared object whose constructor creates `marker`: the proof
/// that the dynamic loader (or glibc's `dlopen`) ran the bundle's code.
pub(crate) fn evil_library(dir: &Path, file_name: &str, marker: &Path) -> PathBuf {
    let source = dir.join(format!("{file_name}.c"));
    std::fs::write(
        &source,
        format!(
            "#include <fcntl.h>\n#include <unistd.h>\n\
             __attribute__((constructor)) static void planted(void) {{\n\
             int fd = open(\"{}\", O_WRONLY | O_CREAT, 0600); if (fd >= 0) close(fd);\n}}\n",
            marker.display()
        ),
    )
    .expect("write the library source");
    let library = dir.join(file_name);
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&library)
        .arg(&source)
        .status()
        .expect("run cc (gcc is part of the test toolchain)");
    assert!(status.success(), "cc failed to build {file_name}");
    library
}

#[test]
fn loader_variables_from_the_bundle_run_no_native_code() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("planted-code-ran");
    let preload = evil_library(dir.path(), "evil.so", &marker);
    // A static glibc still loads NSS modules (user database, name lookups)
    // with dlopen, which searches LD_LIBRARY_PATH: plant every module name.
    for module in [
        "libnss_files.so.2",
        "libnss_dns.so.2",
        "libnss_compat.so.2",
        "libnss_systemd.so.2",
        "libc.so.6",
    ] {
        evil_library(dir.path(), module, &marker);
    }
    let library_dir = dir.path().to_string_lossy().into_owned();
    let preload = preload.to_string_lossy().into_owned();
    let mut shim = Shim::probe_with_env(
        probe_manifest(ApiVersion::V0_2),
        &[],
        &[
            ("LD_PRELOAD", &preload),
            ("LD_LIBRARY_PATH", &library_dir),
            ("LD_AUDIT", &preload),
            ("GCONV_PATH", &library_dir),
            ("GLIBC_TUNABLES", "glibc.malloc.check=3"),
        ],
    );
    shim.initialize();
    shim.assert_alive_and_silent("a bundle setting loader variables");
    shim.shutdown();
    assert!(
        !marker.exists(),
        "the bundle's shared object ran inside the shim"
    );
}

#[test]
fn the_binary_is_statically_linked() {
    // The property the previous test relies on, stated directly: no
    // program interpreter means no dynamic loader for LD_PRELOAD to steer.
    let bytes = std::fs::read(shim_binary()).expect("read the shim binary");
    assert_eq!(&bytes[..4], b"\x7fELF");
    let program_headers = u64::from_le_bytes(bytes[32..40].try_into().unwrap()) as usize;
    let entry_size = u16::from_le_bytes(bytes[54..56].try_into().unwrap()) as usize;
    let count = u16::from_le_bytes(bytes[56..58].try_into().unwrap()) as usize;
    const PT_INTERP: u32 = 3;
    for index in 0..count {
        let offset = program_headers + index * entry_size;
        let kind = u32::from_le_bytes(bytes[offset..offset + 4].try_into().unwrap());
        assert_ne!(
            kind, PT_INTERP,
            "the shim has a program interpreter (it is dynamically linked)"
        );
    }
}

#[test]
fn the_bundle_cannot_silence_warnings() {
    let mut shim = Shim::probe_with_env(
        probe_manifest(ApiVersion::V0_2),
        &[],
        &[("OCTET_WASM_LOG", "error")],
    );
    shim.initialize();
    shim.notify("made/up", json!({}))
        .expect("send a notification");
    shim.stderr()
        .wait_for_message(LOG_TIMEOUT, "unknown notification ignored")
        .unwrap_or_else(|| {
            panic!(
                "OCTET_WASM_LOG=error from the bundle hid a warning; stderr:\n{}",
                stderr_text(&shim)
            )
        });
    shim.assert_alive_and_silent("an unknown notification");
    shim.shutdown();
}
