//! The toolchain steps of `octet-wasm build` (see `super::build`), one
//! function per language. Each installs what is missing, announcing it
//! first, and leaves its build output in the project's `target/`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// What a language's steps need to know about the project.
pub struct Project {
    pub dir: PathBuf,
    pub name: String,
    pub api_version: String,
    /// Where the component goes: beside the manifest.
    pub component: PathBuf,
    /// The language's SDK directory (`guest-sdk/<lang>`) through the link.
    pub sdk: PathBuf,
    /// The SDK root's `wit/`.
    pub wit: PathBuf,
}

/// Progress on stderr: each step before it starts, with the time since
/// the build began, so a long step never looks like a hang.
pub struct Steps {
    started: Instant,
}

impl Steps {
    pub fn new() -> Self {
        Steps {
            started: Instant::now(),
        }
    }

    #[allow(
        clippy::print_stderr,
        reason = "progress is for the person waiting; stdout carries check's report"
    )]
    pub fn say(&mut self, what: &str) {
        eprintln!(
            "build: [{:>5.1} s] {what}",
            self.started.elapsed().as_secs_f64()
        );
    }

    pub fn finish(&mut self, component: &str) {
        let seconds = self.started.elapsed().as_secs_f64();
        self.say(&format!("built {component} in {seconds:.1} s"));
    }
}

/// The pinned componentize-py the Python SDK is built and tested with.
pub const COMPONENTIZE_PY: &str = "0.25.1";
/// The pinned componentize-qjs (the JS SDK's package.json).
pub const COMPONENTIZE_QJS: &str = "0.4.5";
/// What the C build needs from Debian.
const C_PACKAGES: &str = "clang-19 lld-19 libclang-rt-19-dev-wasm32 wasi-libc";

/// Runs `command`, its output going straight to the terminal.
fn run(command: &mut Command, what: &str) -> Result<(), String> {
    let status = command
        .status()
        .map_err(|err| format!("cannot start {what}: {err}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{what} failed ({status})"))
    }
}

fn succeeds(program: &str, args: &[&str]) -> Option<String> {
    let output = Command::new(program).args(args).output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

fn build_dir(project: &Project) -> Result<PathBuf, String> {
    let dir = project.dir.join("target").join("octet-build");
    std::fs::create_dir_all(&dir)
        .map_err(|err| format!("cannot create {}: {err}", dir.display()))?;
    Ok(dir)
}

/// Moves a finished build output to the component's place in one step.
fn place(output: &Path, project: &Project) -> Result<(), String> {
    std::fs::rename(output, &project.component).or_else(|_| {
        std::fs::copy(output, &project.component)
            .map(drop)
            .map_err(|err| format!("cannot write {}: {err}", project.component.display()))
    })
}

pub fn rust(project: &Project, steps: &mut Steps) -> Result<(), String> {
    let installed = succeeds("rustup", &["target", "list", "--installed"]);
    if !installed.is_some_and(|list| list.lines().any(|line| line.trim() == "wasm32-wasip2")) {
        steps.say("installing the wasm32-wasip2 Rust target (rustup target add wasm32-wasip2)");
        run(
            Command::new("rustup").args(["target", "add", "wasm32-wasip2"]),
            "rustup target add wasm32-wasip2",
        )?;
    }
    steps.say("cargo build --target wasm32-wasip2 --release");
    run(
        Command::new("cargo")
            .args(["build", "--target", "wasm32-wasip2", "--release"])
            .current_dir(&project.dir),
        "cargo build",
    )?;
    let package = package_name(&project.dir.join("Cargo.toml"))?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| project.dir.join("target"));
    let built = target
        .join("wasm32-wasip2/release")
        .join(format!("{}.wasm", package.replace('-', "_")));
    std::fs::copy(&built, &project.component)
        .map(drop)
        .map_err(|err| format!("cannot copy {}: {err}", built.display()))
}

fn package_name(manifest: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(manifest)
        .map_err(|err| format!("cannot read {}: {err}", manifest.display()))?;
    let table: toml::Table = toml::from_str(&text)
        .map_err(|err| format!("{}: {}", manifest.display(), err.message()))?;
    table
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(toml::Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| format!("{} has no package.name", manifest.display()))
}

/// The app module: NAME.py (with `_` for `-`), else the single .py file.
fn source(project: &Project, file: &str, extension: &str) -> Result<String, String> {
    if project.dir.join(file).is_file() {
        return Ok(file.to_owned());
    }
    let mut found: Vec<String> = std::fs::read_dir(&project.dir)
        .map_err(|err| format!("cannot read {}: {err}", project.dir.display()))?
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(extension) && !name.starts_with('.'))
        .collect();
    match found.len() {
        1 => Ok(found.remove(0)),
        _ => Err(format!(
            "{} holds no {file} and not exactly one *{extension} file: name the source {file}",
            project.dir.display()
        )),
    }
}

pub fn python(project: &Project, steps: &mut Steps) -> Result<(), String> {
    let app = source(
        project,
        &format!("{}.py", project.name.replace('-', "_")),
        ".py",
    )?;
    let python = match std::env::var_os("OCTET_WASM_PYTHON").filter(|p| !p.is_empty()) {
        Some(python) => PathBuf::from(python),
        None => {
            let venv = project.dir.join(".venv");
            let python = venv.join("bin/python");
            if !python.is_file() {
                steps.say("creating .venv for the build tools (python3 -m venv .venv)");
                run(
                    Command::new("python3").arg("-m").arg("venv").arg(&venv),
                    "python3 -m venv",
                )?;
            }
            let wanted = format!("componentize-py {COMPONENTIZE_PY}");
            let have = succeeds(
                &venv.join("bin/componentize-py").to_string_lossy(),
                &["--version"],
            );
            if have.as_deref().map(str::trim) != Some(wanted.as_str()) {
                steps.say(&format!(
                    "installing componentize-py {COMPONENTIZE_PY} into .venv (pip, about 30 MB)"
                ));
                run(
                    Command::new(&python).args([
                        "-m",
                        "pip",
                        "install",
                        "--disable-pip-version-check",
                        "--progress-bar",
                        "on",
                        &format!("componentize-py=={COMPONENTIZE_PY}"),
                    ]),
                    "pip install componentize-py",
                )?;
            }
            python
        }
    };
    let output = build_dir(project)?.join(format!("{}.wasm", project.name));
    steps.say(&format!(
        "componentize-py: {app} with the interpreter (about a minute; the SDK's build.py)"
    ));
    run(
        Command::new(&python)
            .arg(project.sdk.join("build.py"))
            .arg(&app)
            .arg("-o")
            .arg(&output)
            .current_dir(&project.dir)
            .env("PYTHONDONTWRITEBYTECODE", "1"),
        "the Python SDK's build.py",
    )?;
    place(&output, project)
}

pub fn js(project: &Project, steps: &mut Steps) -> Result<(), String> {
    let app = source(project, &format!("{}.js", project.name), ".js")?;
    // The source imports the SDK as the package octet-guest.
    let modules = project.dir.join("node_modules");
    std::fs::create_dir_all(&modules)
        .map_err(|err| format!("cannot create {}: {err}", modules.display()))?;
    let package = modules.join("octet-guest");
    if std::fs::symlink_metadata(&package).is_ok_and(|m| m.file_type().is_symlink()) {
        let _ = std::fs::remove_file(&package);
    }
    if !package.exists() {
        std::os::unix::fs::symlink("../.octet-sdk/guest-sdk/js", &package)
            .map_err(|err| format!("cannot link {}: {err}", package.display()))?;
    }
    // The SDK's own build tools when it carries them (a checkout after
    // scripts/build-guests-js, or its copy); else the project's, installed
    // here, never into the SDK.
    let in_sdk = project.sdk.join("node_modules/componentize-qjs").is_dir();
    if !in_sdk && !modules.join("componentize-qjs").is_dir() {
        steps.say(&format!(
            "installing componentize-qjs {COMPONENTIZE_QJS} into node_modules (npm)"
        ));
        run(
            Command::new("npm")
                .args(["install", "--no-save", "--no-audit", "--no-fund"])
                .arg(format!("componentize-qjs@{COMPONENTIZE_QJS}"))
                .current_dir(&project.dir),
            "npm install componentize-qjs",
        )?;
    }
    let output = build_dir(project)?.join(format!("{}.wasm", project.name));
    steps.say(&format!("componentize-qjs: {app} with QuickJS"));
    let mut node = Command::new("node");
    if !in_sdk {
        // Resolve the build tool's imports from the project's node_modules.
        node.args(["--preserve-symlinks", "--preserve-symlinks-main"]);
        node.arg("node_modules/octet-guest/bin/octet-guest-build.mjs");
    } else {
        node.arg(project.sdk.join("bin/octet-guest-build.mjs"));
    }
    run(
        node.arg(&app)
            .arg("-o")
            .arg(&output)
            .current_dir(&project.dir),
        "the JavaScript SDK's octet-guest-build",
    )?;
    place(&output, project)
}

/// The C SDK's componentize helper, built once per SDK version outside
/// the SDK (it takes minutes: the progress is cargo's own).
fn c_helper(project: &Project, steps: &mut Steps) -> Result<PathBuf, String> {
    let host = succeeds("rustc", &["-vV"])
        .and_then(|text| {
            text.lines()
                .find_map(|line| line.strip_prefix("host: ").map(str::to_owned))
        })
        .ok_or("cannot ask rustc for the host triple (is Rust installed?)")?;
    let cache = crate::user_dirs::home_dir()
        .map(|home| home.join(".cache/octet-wasm-build/c-componentize"))
        .ok_or("this user has no home directory in the user database")?;
    let helper = cache.join(&host).join("release/octet-c-componentize");
    steps.say(&format!(
        "cargo: the C SDK's componentize helper (minutes the first time, then seconds) in {}",
        cache.display()
    ));
    run(
        Command::new("cargo")
            .args(["build", "--release", "--locked", "--target", &host])
            .arg("--manifest-path")
            .arg(project.sdk.join("componentize/Cargo.toml"))
            .arg("--target-dir")
            .arg(&cache),
        "cargo build of the componentize helper",
    )?;
    Ok(helper)
}

fn c_toolchain(steps: &mut Steps) -> Result<(), String> {
    let ready = || {
        on_path("clang-19")
            && on_path("wasm-ld-19")
            && Path::new("/usr/include/wasm32-wasi").is_dir()
    };
    if ready() {
        return Ok(());
    }
    let root = crate::user_dirs::trusted_path::euid() == 0;
    if !root || !on_path("apt-get") {
        return Err(format!(
            "the C build needs clang-19, lld-19 and wasi-libc: install them (as root: apt-get install {C_PACKAGES}) and run octet-wasm build again"
        ));
    }
    steps.say(&format!("installing {C_PACKAGES} (apt-get)"));
    run(Command::new("apt-get").arg("update"), "apt-get update")?;
    run(
        Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends"])
            .args(C_PACKAGES.split(' ')),
        "apt-get install",
    )?;
    if ready() {
        Ok(())
    } else {
        Err(
            "apt-get installed the C toolchain but clang-19 or wasm-ld-19 is still not on PATH"
                .into(),
        )
    }
}

pub fn c(project: &Project, steps: &mut Steps) -> Result<(), String> {
    let app = source(project, &format!("{}.c", project.name), ".c")?;
    c_toolchain(steps)?;
    let helper = c_helper(project, steps)?;
    let wit = match project.api_version.as_str() {
        "0.1" | "0.2" => project.wit.clone(),
        "0.4" => project.wit.join("0.4.0"),
        other => {
            return Err(format!(
                "extension.toml says api_version = \"{other}\"; the C SDK builds API 0.1, 0.2 and 0.4 extensions"
            ));
        }
    };
    let out = build_dir(project)?;
    let generated = out.join("gen");
    steps.say(&format!("generating the bindings from {}", wit.display()));
    run(
        Command::new(&helper)
            .arg("bindgen")
            .arg(&wit)
            .arg(&generated),
        "the bindings generator",
    )?;
    let mut sources: Vec<PathBuf> = std::fs::read_dir(project.sdk.join("src"))
        .map_err(|err| format!("cannot read the C SDK's src/: {err}"))?
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "c"))
        .collect();
    sources.sort();
    let core = out.join(format!("{}.core.wasm", project.name));
    steps.say(&format!("clang-19: {app} and the C SDK"));
    // -s keeps the component-type section extension_component_type.o carries.
    run(
        Command::new("clang-19")
            .args([
                "--target=wasm32-wasi",
                "-mexec-model=reactor",
                "-O2",
                "-s",
                "-std=gnu11",
                "-Wall",
                "-Wextra",
                "-Wno-unused-parameter",
            ])
            .arg(format!("-I{}", project.sdk.display()))
            .arg(format!("-I{}", project.sdk.join("src").display()))
            .arg(format!("-I{}", generated.display()))
            .arg(&app)
            .args(&sources)
            .arg(generated.join("extension.c"))
            .arg(generated.join("extension_component_type.o"))
            .arg("-o")
            .arg(&core)
            .current_dir(&project.dir),
        "clang-19",
    )?;
    let output = out.join(format!("{}.wasm", project.name));
    steps.say("componentize: the core module into a component");
    run(
        Command::new(&helper).arg(&core).arg(&output),
        "the componentize helper",
    )?;
    place(&output, project)
}
