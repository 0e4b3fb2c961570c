//! What `scripts/install` puts on PATH: octet copies an extension's
//! entrypoint at every start and refuses files over 64 MiB, and the
//! manifest's `[entrypoint].env` can set `LD_PRELOAD`, so the binary must
//! stay small and statically linked.
//!
//! A release build takes about 10 minutes on 2 cores, so the size is
//! checked on whichever release binaries exist: `$OCTET_WASM_RELEASE_BINARY`
//! (e.g. `~/.cargo/bin/octet-wasm` after `scripts/install`; the test fails
//! if it names nothing) and `target/x86_64-unknown-linux-musl/release/`
//! (what `cargo build --release` and `scripts/install` build). The static
//! linking is checked on the binary under test as well, on every run.

use crate::support::{repo_root, shim_binary};
use std::path::{Path, PathBuf};
use std::process::Command;

/// octet's copy limit for an entrypoint.
const OCTET_COPY_LIMIT: u64 = 64 * 1024 * 1024;
/// "Well under" the limit: `scripts/install` builds 29.0 MiB (30,403,432
/// bytes at API 0.4: wasmtime 48 with Cranelift, static-pie, stripped);
/// this leaves room to grow and stays 24 MiB below octet's limit.
const RELEASE_BUDGET: u64 = 40 * 1024 * 1024;
const _: () = assert!(RELEASE_BUDGET < OCTET_COPY_LIMIT);

fn release_binaries() -> Vec<PathBuf> {
    let mut found = Vec::new();
    if let Some(named) = std::env::var_os("OCTET_WASM_RELEASE_BINARY").filter(|v| !v.is_empty()) {
        let named = PathBuf::from(named);
        assert!(
            named.is_file(),
            "OCTET_WASM_RELEASE_BINARY names {}, which does not exist",
            named.display()
        );
        found.push(named);
    }
    let built = repo_root().join("target/x86_64-unknown-linux-musl/release/octet-wasm");
    if built.is_file() {
        found.push(built);
    }
    found
}

/// Whether the ELF file has a program interpreter (`PT_INTERP`): a
/// dynamically linked program, which the dynamic loader starts, honouring
/// `LD_PRELOAD` before `main` runs.
fn has_interpreter(path: &Path) -> bool {
    let bytes = std::fs::read(path).expect("read the binary");
    assert_eq!(&bytes[..4], b"\x7fELF", "{} is not ELF", path.display());
    assert_eq!(bytes[4], 2, "64-bit ELF");
    let u16_at = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]) as usize;
    let phoff = u64::from_le_bytes(bytes[0x20..0x28].try_into().unwrap()) as usize;
    let (size, count) = (u16_at(0x36), u16_at(0x38));
    assert!(count > 0 && phoff + size * count <= bytes.len());
    (0..count).any(|i| {
        let at = phoff + i * size;
        u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) == 3
    })
}

#[test]
fn the_binary_under_test_is_statically_linked() {
    assert!(
        !has_interpreter(&shim_binary()),
        "{} asks for a dynamic loader: .cargo/config.toml's crt-static did not apply",
        shim_binary().display()
    );
    assert!(has_interpreter(Path::new("/bin/sh")), "the check itself");
}

#[test]
fn the_release_binary_stays_well_under_octets_copy_limit() {
    let binaries = release_binaries();
    if binaries.is_empty() {
        eprintln!(
            "no release binary to measure (scripts/install or `cargo build --release -p octet-wasm` builds one); size not checked"
        );
        return;
    }
    for binary in binaries {
        let size = std::fs::metadata(&binary).unwrap().len();
        assert!(
            size < RELEASE_BUDGET,
            "{} is {size} bytes ({:.1} MiB): over the {} MiB budget that keeps it well under octet's 64 MiB copy limit",
            binary.display(),
            size as f64 / 1048576.0,
            RELEASE_BUDGET / 1048576
        );
        assert!(
            !has_interpreter(&binary),
            "{} is dynamically linked: build it from the repository root (scripts/install) so .cargo/config.toml applies",
            binary.display()
        );
        let version = Command::new(&binary).arg("--version").output().unwrap();
        assert_eq!(
            String::from_utf8_lossy(&version.stdout).trim(),
            format!("octet-wasm {}", env!("CARGO_PKG_VERSION")),
            "{}",
            binary.display()
        );
    }
}
