//! Each guest SDK installed the way its ecosystem installs packages, outside
//! the checkout: `npm pack` and `npm install` of the tarball, the Python
//! wheel into a fresh venv, `cargo package` and a path dependency on the
//! packaged crate, and the C SDK's pkg-config file. Every test builds a hello
//! world with nothing but the installed package and then has `octet-wasm`
//! inspect or check the component: a package that leaves out a file it
//! needs (the WIT, above all, which the checkout reaches through a symlink)
//! fails here.

use crate::old_scaffolds::run_in_env;
use crate::support::{repo_root, shim_binary};
use std::path::{Path, PathBuf};
use std::process::Output;

/// `program` in `dir`, `env` added to what [`run_in_env`] sets; panics with
/// the log when it fails.
fn ok(dir: &Path, program: &str, args: &[&str], env: &[(&str, &Path)]) -> String {
    let (output, log) = run_in_env(dir, Path::new(program), args, env);
    assert!(
        output.status.success(),
        "{program} {args:?} in {}:\n{log}",
        dir.display()
    );
    log
}

/// `octet-wasm inspect COMPONENT`, which must succeed.
fn inspect(component: &Path) -> String {
    assert!(component.is_file(), "no component {}", component.display());
    let (output, log) = run_shim(&["inspect", &component.display().to_string()]);
    assert!(output.status.success(), "inspect:\n{log}");
    log
}

fn run_shim(args: &[&str]) -> (Output, String) {
    let here = std::env::temp_dir();
    run_in_env(&here, &shim_binary(), args, &[])
}

/// The only file `dir` holds whose name ends in `suffix`.
fn only_file(dir: &Path, suffix: &str) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_string_lossy().ends_with(suffix))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "{suffix} files in {}: {found:?}",
        dir.display()
    );
    found[0].clone()
}

const JS_HELLO: &str = r#"import { Extension } from "octet-guest";

const ext = new Extension("installed-hello");
ext.tool(
  {
    name: "hello",
    description: "Greet someone",
    parameters: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
  },
  (args) => `Hello, ${args.name}!`,
);

export const guest = ext.exports();
"#;

#[test]
fn npm_tarball_installs_and_builds_hello_world() {
    let work = tempfile::tempdir().unwrap();
    let packs = work.path().join("packs");
    std::fs::create_dir_all(&packs).unwrap();
    let sdk = repo_root().join("guest-sdk/js");
    ok(
        &sdk,
        "npm",
        &[
            "pack",
            "--silent",
            "--pack-destination",
            &packs.display().to_string(),
        ],
        &[],
    );
    assert!(
        !sdk.join("octet-wit").exists(),
        "postpack leaves no WIT copy in the SDK"
    );
    let tarball = only_file(&packs, ".tgz");
    let project = work.path().join("installed-hello");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("package.json"),
        r#"{ "name": "installed-hello", "private": true, "type": "module" }"#,
    )
    .unwrap();
    // The npm cache answers when it holds componentize-qjs; else the registry.
    ok(
        &project,
        "npm",
        &[
            "install",
            "--prefer-offline",
            "--no-audit",
            "--no-fund",
            &tarball.display().to_string(),
        ],
        &[],
    );
    let installed = project.join("node_modules/octet-guest");
    assert!(
        installed.join("octet-wit/world.wit").is_file()
            && installed.join("octet-wit/0.4.0/world.wit").is_file(),
        "the tarball carries both octet WIT packages as files"
    );
    assert!(
        !installed.join("octet-wit").is_symlink(),
        "octet-wit is a copy"
    );
    std::fs::write(project.join("hello.js"), JS_HELLO).unwrap();
    let build = project.join("node_modules/.bin/octet-guest-build");
    let build = build.display().to_string();
    // No manifest: API 0.2, the package's octet-wit/ itself.
    let log = ok(&project, &build, &["hello.js"], &[]);
    assert!(log.contains("octet:extension@0.2.0"), "{log}");
    let wasm = project.join("hello.wasm");
    let shown = inspect(&wasm);
    assert!(
        shown.contains("wit          octet:extension@0.2.0"),
        "{shown}"
    );
    assert!(shown.contains("hello — Greet someone"), "{shown}");
    let manifest = project.join("extension.toml");
    let wasm_arg = wasm.display().to_string();
    let manifest_arg = manifest.display().to_string();
    let (output, log) = run_shim(&["manifest", &wasm_arg, "--out", &manifest_arg]);
    assert!(output.status.success(), "{log}");
    let (output, log) = run_shim(&["check", &manifest_arg]);
    assert!(output.status.success(), "{log}");
    assert!(log.contains("0 problem(s), 0 warning(s)"), "{log}");
    // An API 0.4 manifest: the package's octet-wit/0.4.0.
    let v04 = project.join("v04.toml");
    std::fs::write(&v04, "name = \"installed-hello\"\napi_version = \"0.4\"\n").unwrap();
    let log = ok(
        &project,
        &build,
        &[
            "hello.js",
            "--manifest",
            &v04.display().to_string(),
            "-o",
            "hello04.wasm",
        ],
        &[],
    );
    assert!(log.contains("octet:extension@0.4.0"), "{log}");
    let shown = inspect(&project.join("hello04.wasm"));
    assert!(
        shown.contains("wit          octet:extension@0.4.0"),
        "{shown}"
    );
}

const PY_HELLO: &str = r#"from octet_extension import Extension

ext = Extension()

@ext.tool(name="hello_world", description="Greet someone")
def hello(args):
    return {"content": f"Hello, {args.get('name', 'world')}!"}

if __name__ == "__main__":
    ext.run()
"#;

#[test]
fn python_wheel_installs_and_builds_hello_world() {
    let root = repo_root();
    let tools = root.join("target/python-venv/bin");
    let python = tools.join("python");
    let (output, log) = run_in_env(
        &root,
        &python,
        &["-c", "import setuptools, wheel, componentize_py"],
        &[],
    );
    assert!(
        output.status.success(),
        "target/python-venv lacks what the wheel build takes: run scripts/build-guests-python\n{log}"
    );
    let work = tempfile::tempdir().unwrap();
    let wheels = work.path().join("wheels");
    let python = python.display().to_string();
    ok(
        &root,
        &python,
        &[
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--disable-pip-version-check",
            "--no-build-isolation",
            "--no-index",
            "--no-deps",
            "-w",
            &wheels.display().to_string(),
            "guest-sdk/python",
        ],
        &[],
    );
    let wheel = only_file(&wheels, ".whl");
    let venv = work.path().join("venv");
    ok(
        work.path(),
        "python3",
        &["-m", "venv", &venv.display().to_string()],
        &[],
    );
    // componentize-py is the wheel's one dependency: the build venv's.
    ok(
        work.path(),
        &venv.join("bin/pip").display().to_string(),
        &[
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-index",
            "--no-deps",
            &wheel.display().to_string(),
        ],
        &[],
    );
    let project = work.path().join("hello-world");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("extension.py"), PY_HELLO).unwrap();
    let path = std::env::join_paths([
        venv.join("bin"),
        tools,
        PathBuf::from("/usr/local/bin"),
        PathBuf::from("/usr/bin"),
        PathBuf::from("/bin"),
    ])
    .unwrap();
    let log = ok(
        &project,
        &venv.join("bin/octet-guest-build").display().to_string(),
        &["extension.py", "-o", "hello-world.wasm"],
        &[("PATH", Path::new(&path))],
    );
    let installed = venv.display().to_string();
    assert!(
        log.contains(&format!("-d {installed}/lib/")),
        "the WIT comes from the installed package:\n{log}"
    );
    let shown = inspect(&project.join("hello-world.wasm"));
    assert!(
        shown.contains("wit          octet:extension@0.2.0"),
        "{shown}"
    );
    assert!(shown.contains("hello_world — Greet someone"), "{shown}");
}

const RUST_HELLO: &str = r#"use octet_guest::prelude::*;
use serde::Deserialize;

#[derive(Deserialize)]
struct Args { name: String }

fn setup(ext: &mut Extension) {
    ext.tool(Tool::new("hello", "Greet someone"), |args: Args| format!("Hello, {}!", args.name));
}

octet_guest::extension!(setup);
"#;

#[test]
fn packaged_rust_crate_builds_hello_world() {
    let root = repo_root();
    let target = root.join("target/guest-build");
    // Offline, from the checkout's lock file; --allow-dirty: a working tree.
    ok(
        &root,
        "cargo",
        &[
            "package",
            "--quiet",
            "--offline",
            "--allow-dirty",
            "-p",
            "octet-guest",
            "--target",
            "wasm32-wasip2",
        ],
        &[],
    );
    let packaged = target.join("package/octet-guest-0.2.0");
    assert!(
        packaged.join("wit/world.wit").is_file() && !packaged.join("wit").is_symlink(),
        "the crate carries its WIT as files"
    );
    let work = tempfile::tempdir().unwrap();
    let project = work.path().join("octet-installer-hello");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(
        project.join("Cargo.toml"),
        format!(
            "[package]\nname = \"octet-installer-hello\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
             [lib]\ncrate-type = [\"cdylib\"]\n\n[dependencies]\n\
             octet-guest = {{ path = {:?} }}\nserde = {{ version = \"1\", features = [\"derive\"] }}\n",
            packaged.display().to_string()
        ),
    )
    .unwrap();
    std::fs::write(project.join("src/lib.rs"), RUST_HELLO).unwrap();
    std::fs::copy(root.join("Cargo.lock"), project.join("Cargo.lock")).unwrap();
    ok(
        &project,
        "cargo",
        &["build", "--quiet", "--offline", "--target", "wasm32-wasip2"],
        &[],
    );
    let shown = inspect(&target.join("wasm32-wasip2/debug/octet_installer_hello.wasm"));
    assert!(
        shown.contains("wit          octet:extension@0.4.0"),
        "{shown}"
    );
    assert!(shown.contains("hello — Greet someone"), "{shown}");
}

const C_HELLO: &str = r#"#include "octet.h"

static int hello(const char *args, octet_tool_result *res, const octet_call *cx)
{
    (void)cx;
    const char *name = octet_arg_string(args, "name");
    if (name == NULL) return octet_invalid_params("name must be a string");
    return octet_tool_text(res, "Hello, %s!", name);
}

void octet_setup(octet_ext *ext) { octet_tool(ext, "hello", "Greet someone", NULL, hello); }
"#;

#[test]
fn pkg_config_flags_compile_c_hello_world() {
    let work = tempfile::tempdir().unwrap();
    let source = work.path().join("hello.c");
    std::fs::write(&source, C_HELLO).unwrap();
    let pc_dir = repo_root().join("guest-sdk/c");
    let flags = ok(
        work.path(),
        "pkg-config",
        &["--cflags", "--libs", "octet-guest"],
        &[("PKG_CONFIG_PATH", &pc_dir)],
    );
    let flags: Vec<&str> = flags.split_whitespace().collect();
    assert!(!flags.is_empty(), "pkg-config gave no flags");
    let compile = |extra: &[&str]| {
        let mut args = vec![
            "--target=wasm32-wasi",
            "-std=gnu11",
            "-Wall",
            "-Werror",
            "-c",
            "hello.c",
            "-o",
            "hello.o",
        ];
        args.extend_from_slice(extra);
        run_in_env(work.path(), Path::new("clang-19"), &args, &[])
    };
    let (output, log) = compile(&flags);
    assert!(output.status.success(), "flags {flags:?}:\n{log}");
    assert!(work.path().join("hello.o").is_file());
    // Without them the header is not found: the flags are what compiled it.
    let (output, log) = compile(&[]);
    assert!(!output.status.success(), "{log}");
    assert!(log.contains("octet.h"), "{log}");
}
