//! `octet-wasm build DIR` itself (not through a scaffold's `./build`) on a
//! fresh `octet-wasm new` project of each language, started from another
//! directory, against an SDK copy `sdk install` made (what `scripts/install`
//! leaves in the user's home): a progress line before every step, the
//! component beside the manifest, the intermediate files in the project's
//! `target/`, `check` run on the pair, and nothing written into the SDK.
//! The tests of `author.rs` run the same projects through `./build` and
//! call their tools.

use crate::old_scaffolds::{run_in, run_in_env, snapshot};
use crate::support::{repo_root, shim_binary};
use std::path::{Path, PathBuf};

/// An SDK copy in a directory of its own, and its snapshot.
fn sdk_copy(work: &Path) -> (PathBuf, Vec<(PathBuf, u64, std::time::SystemTime)>) {
    let sdk = work.join("sdk");
    let (output, log) = run_in(
        work,
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
    (sdk, before)
}

/// Builds a fresh `lang` project and returns the build's output; `steps`
/// are the progress lines expected, in order, after the first.
fn fresh_project_builds(lang: &str, steps: &[&str]) -> String {
    let work = tempfile::tempdir().unwrap();
    let (sdk, before) = sdk_copy(work.path());
    let project = work.path().join("projects").join("greeter");
    let elsewhere = work.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let (created, log) = run_in_with_sdk(
        &elsewhere,
        &sdk,
        &[
            "new",
            "--lang",
            lang,
            "greeter",
            "--dir",
            &project.display().to_string(),
        ],
    );
    assert!(created.status.success(), "{log}");
    if lang == "rust" {
        // Offline: the dependencies the checkout's lock file already has.
        std::fs::copy(repo_root().join("Cargo.lock"), project.join("Cargo.lock")).unwrap();
    }
    let (output, log) =
        run_in_with_sdk(&elsewhere, &sdk, &["build", &project.display().to_string()]);
    assert!(output.status.success(), "{lang}:\n{log}");
    let progress: Vec<&str> = log
        .lines()
        .filter(|line| line.starts_with("build: ["))
        .collect();
    assert!(
        progress[0].contains(&format!(
            "building greeter ({lang} project in {}",
            project.display()
        )),
        "{log}"
    );
    let mut at = 1;
    for step in steps.iter().chain(&["checking", "built greeter.wasm in"]) {
        let found = progress[at..].iter().position(|line| line.contains(step));
        let Some(found) = found else {
            panic!(
                "{lang}: no progress line {step:?} after {:?}:\n{log}",
                progress[at - 1]
            );
        };
        at += found + 1;
    }
    assert!(
        log.contains("0 problem(s), 0 warning(s)"),
        "check ran:\n{log}"
    );
    assert!(project.join("greeter.wasm").is_file(), "{log}");
    assert!(!elsewhere.join("greeter.wasm").exists(), "{log}");
    if lang != "rust" {
        // (Rust's output goes to the CARGO_TARGET_DIR the tests share.)
        assert!(project.join("target/octet-build").is_dir(), "{log}");
    }
    let mut after = Vec::new();
    snapshot(&sdk, &mut after);
    assert_eq!(
        before, after,
        "{lang}: octet-wasm build wrote into the SDK copy"
    );
    log
}

/// [`run_in`] with `OCTET_WASM_SDK_DIR` naming `sdk`.
fn run_in_with_sdk(dir: &Path, sdk: &Path, args: &[&str]) -> (std::process::Output, String) {
    run_in_env(dir, &shim_binary(), args, &[("OCTET_WASM_SDK_DIR", sdk)])
}

#[test]
fn fresh_rust_project_builds_with_octet_wasm_build() {
    fresh_project_builds("rust", &["cargo build --target wasm32-wasip2"]);
}

#[test]
fn fresh_python_project_builds_with_octet_wasm_build() {
    fresh_project_builds("python", &["componentize-py: greeter.py"]);
}

#[test]
fn fresh_js_project_builds_with_octet_wasm_build() {
    fresh_project_builds("js", &["componentize-qjs: greeter.js"]);
}

#[test]
fn fresh_c_project_builds_with_octet_wasm_build() {
    fresh_project_builds(
        "c",
        &[
            "the C SDK's componentize helper",
            "generating the bindings",
            "clang-19: greeter.c",
            "componentize: the core module",
        ],
    );
}
