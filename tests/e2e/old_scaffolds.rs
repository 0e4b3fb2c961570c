//! Projects made by every earlier `octet-wasm new` (tests/fixtures/scaffolds,
//! rendered from the templates of the commits named in its README) still
//! build with today's SDKs through their own, unchanged `./build`, the
//! deprecated names they use warning once; and `octet-wasm build --update`
//! moves such a project to the current `./build`, which never writes into
//! the SDK it builds against.

use crate::support::{repo_root, shim_binary};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const VERSIONS: &[&str] = &["v1", "v2", "v3", "v4"];

/// A copy of a fixture inside the checkout (where the `.octet-sdk`
/// scaffolds find their SDK), `{{sdk}}` (the absolute SDK path the first
/// scaffolds wrote) filled with this checkout's.
pub(crate) fn project(version: &str, lang: &str) -> tempfile::TempDir {
    let root = repo_root();
    // The first C scaffold wrote its SDK's absolute path and builds its
    // helper without --target, into the host's default layout: outside the
    // checkout, as an author's project is, the checkout's
    // .cargo/config.toml (musl) does not move that output.
    let scratch = if version == "v1" && lang == "c" {
        std::env::temp_dir().join("octet-wasm-old-scaffolds")
    } else {
        root.join("target/old-scaffolds")
    };
    std::fs::create_dir_all(&scratch).unwrap();
    let dir = tempfile::Builder::new()
        .prefix(&format!("{version}-{lang}-"))
        .tempdir_in(&scratch)
        .unwrap();
    let sdk = root.join("guest-sdk").join(lang);
    copy_filled(
        &root
            .join("tests/fixtures/scaffolds")
            .join(version)
            .join(lang),
        dir.path(),
        &sdk.display().to_string(),
    );
    if lang == "rust" {
        // Offline: the dependencies the checkout's lock file already has.
        std::fs::copy(root.join("Cargo.lock"), dir.path().join("Cargo.lock")).unwrap();
    }
    dir
}

fn copy_filled(from: &Path, to: &Path, sdk: &str) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type().unwrap().is_dir() {
            copy_filled(&source, &target, sdk);
            continue;
        }
        let text = std::fs::read_to_string(&source).unwrap();
        std::fs::write(&target, text.replace("{{sdk}}", sdk)).unwrap();
        let mode = std::fs::metadata(&source).unwrap().permissions();
        std::fs::set_permissions(&target, mode).unwrap();
    }
}

/// `program` in `dir` with this octet-wasm first on PATH and the caches
/// the other author tests use.
pub(crate) fn run_in(dir: &Path, program: &Path, args: &[&str]) -> (Output, String) {
    run_in_env(dir, program, args, &[])
}

/// [`run_in`] with `env` added.
pub(crate) fn run_in_env(
    dir: &Path,
    program: &Path,
    args: &[&str],
    env: &[(&str, &Path)],
) -> (Output, String) {
    let root = repo_root();
    let bin_dir = shim_binary().parent().unwrap().to_owned();
    let path = std::env::join_paths(std::iter::once(bin_dir).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    let output = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("PATH", path)
        .env_remove("OCTET_WASM_SDK_DIR")
        .env(
            "OCTET_WASM_PYTHON",
            root.join("target/python-venv/bin/python"),
        )
        .env("CARGO_NET_OFFLINE", "true")
        .env("CARGO_TARGET_DIR", root.join("target/guest-build"))
        .envs(env.iter().copied())
        .output()
        .expect("the build starts");
    let log = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output, log)
}

fn built(dir: &Path, output: &Output, log: &str) {
    assert!(output.status.success(), "{}:\n{log}", dir.display());
    assert!(log.contains("0 problem(s)"), "the build ran check:\n{log}");
    assert!(dir.join("greeter.wasm").is_file(), "{log}");
}

fn old_scaffolds_build(lang: &str, deprecations: &[(&str, &str)]) {
    for version in VERSIONS {
        let dir = project(version, lang);
        let (output, log) = run_in(dir.path(), &dir.path().join("build"), &[]);
        built(dir.path(), &output, &log);
        for (only_in, warning) in deprecations {
            if only_in == version {
                let lines = log.lines().filter(|line| line.contains(warning)).count();
                assert_eq!(lines, 1, "{version} warns once: {warning}\n{log}");
            }
        }
    }
}

#[test]
fn old_c_scaffolds_build() {
    old_scaffolds_build(
        "c",
        &[(
            "v1",
            "warning: \"guest-sdk/c/octet.c and guest-sdk/c/gen/ are deprecated",
        )],
    );
    // The bindings kept for v1 are what the pinned generator writes today.
    let root = repo_root();
    let helper = std::fs::read_dir(root.join("target/guest-c-build"))
        .unwrap()
        .flatten()
        .map(|entry| entry.path().join("release/octet-c-componentize"))
        .find(|path| path.is_file())
        .expect("the C builds above built the componentize helper");
    let fresh = tempfile::tempdir().unwrap();
    let status = Command::new(helper)
        .arg("bindgen")
        .arg(root.join("wit"))
        .arg(fresh.path())
        .status()
        .unwrap();
    assert!(status.success());
    for file in ["extension.c", "extension.h", "extension_component_type.o"] {
        assert!(
            std::fs::read(fresh.path().join(file)).unwrap()
                == std::fs::read(root.join("guest-sdk/c/gen").join(file)).unwrap(),
            "guest-sdk/c/gen/{file} differs from what the pinned bindgen writes for wit/: regenerate it"
        );
    }
}

#[test]
fn old_python_scaffolds_build() {
    old_scaffolds_build(
        "python",
        &[
            ("v1", "octet_guest.InvalidParams is deprecated"),
            ("v1", "Extension(name) is deprecated"),
        ],
    );
}

#[test]
fn old_js_scaffolds_build() {
    old_scaffolds_build("js", &[]);
}

#[test]
fn old_rust_scaffolds_build() {
    old_scaffolds_build("rust", &[]);
}

/// Every file under `dir` with its size and modification time.
pub(crate) fn snapshot(dir: &Path, out: &mut Vec<(PathBuf, u64, std::time::SystemTime)>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let meta = entry.path().symlink_metadata().unwrap();
        if meta.is_dir() {
            snapshot(&entry.path(), out);
        }
        out.push((entry.path(), meta.len(), meta.modified().unwrap()));
    }
    out.sort();
}

/// `octet-wasm build --update` on the first C scaffold: its ./build now
/// calls `octet-wasm build`, which builds against an SDK copy without
/// writing into it, and the deprecated octet.c is no longer compiled.
#[test]
fn build_update_moves_an_old_project_to_octet_wasm_build() {
    let dir = project("v1", "c");
    let copy = tempfile::tempdir().unwrap();
    let sdk = copy.path().join("sdk");
    let (output, log) = run_in(
        dir.path(),
        &shim_binary(),
        &[
            "sdk",
            "install",
            "--from",
            &repo_root().display().to_string(),
            "--to",
            &sdk.display().to_string(),
        ],
    );
    assert!(output.status.success(), "{log}");
    let mut before = Vec::new();
    snapshot(&sdk, &mut before);
    let with_copy = |args: &[&str]| {
        let mut command = Command::new(shim_binary());
        command
            .args(args)
            .current_dir(dir.path())
            .env("OCTET_WASM_SDK_DIR", &sdk);
        let output = command.output().unwrap();
        let log = format!(
            "{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        (output, log)
    };
    let (output, log) = with_copy(&["build", "--update", "."]);
    built(dir.path(), &output, &log);
    assert!(!log.contains("deprecated"), "{log}");
    for step in ["build: [", "clang-19:", "componentize", "checking"] {
        assert!(log.contains(step), "progress names {step:?}:\n{log}");
    }
    let script = std::fs::read_to_string(dir.path().join("build")).unwrap();
    assert!(script.contains("exec octet-wasm build"), "{script}");
    let mut after = Vec::new();
    snapshot(&sdk, &mut after);
    assert_eq!(before, after, "octet-wasm build wrote into the SDK copy");
}
