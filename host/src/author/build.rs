//! `octet-wasm build [DIR]`: builds the extension project in DIR (the
//! directory of its `extension.toml`), whatever its language, into the
//! component the manifest's `[entrypoint]` names beside the manifest, then
//! runs `check` on the pair.
//!
//! The steps that used to live in each scaffold's `./build` live here, so
//! a change of an SDK's layout changes this file and no project: a
//! scaffold's `./build` only calls `octet-wasm build`. Every step says
//! what it does before it starts and how long it took, and the toolchains'
//! own progress goes through (the first C build compiles the componentize
//! helper for minutes: it must not look hung).
//!
//! Nothing is written into the SDK (a checkout or the copy `sdk install`
//! made, which may be shared or read-only): build output goes to the
//! project's `target/`, the C helper to `~/.cache/octet-wasm-build`, and
//! Python is told not to leave byte code beside the SDK's sources.
//!
//! This runs the author's own toolchain on the author's own project: like
//! every author tool it refuses to start as an extension process
//! ([`super::refuse_under_octet`]), so no bundle reaches it.

use super::build_steps::{self, Project, Steps};
use super::new::SDK_LINK;
use super::sdk::{self, Lang};
use std::path::{Path, PathBuf};
use toml::Table;

#[derive(clap::Args)]
pub struct BuildArgs {
    /// The project: the directory holding extension.toml [default: .].
    dir: Option<PathBuf>,
    /// The language, when the project's files do not say it alone
    /// (Cargo.toml is Rust; otherwise the one of NAME.py, NAME.js, NAME.c
    /// or a single *.py, *.js, *.c file).
    #[arg(long, value_enum)]
    lang: Option<Lang>,
    /// Also replace the project's ./build with the current scaffold's (a
    /// one-line call of `octet-wasm build`), for a project an earlier
    /// `octet-wasm new` made.
    #[arg(long)]
    update: bool,
}

pub fn run(args: BuildArgs) -> Result<bool, String> {
    let dir = args.dir.unwrap_or_else(|| PathBuf::from("."));
    // Absolute, so every tool sees the same paths whatever its cwd.
    let dir = dir
        .canonicalize()
        .map_err(|err| format!("{}: {err}", dir.display()))?;
    let manifest = dir.join("extension.toml");
    let text = std::fs::read_to_string(&manifest).map_err(|err| {
        format!(
            "cannot read {}: {err} (octet-wasm build takes the directory of an extension.toml)",
            manifest.display()
        )
    })?;
    let table: Table = toml::from_str(&text)
        .map_err(|err| format!("{}: {}", manifest.display(), err.message()))?;
    let name = table
        .get("name")
        .and_then(toml::Value::as_str)
        .ok_or_else(|| format!("{} has no name", manifest.display()))?
        .to_owned();
    let component = component_name(&table, &name)?;
    let api_version = table
        .get("api_version")
        .and_then(toml::Value::as_str)
        .unwrap_or("0.1")
        .to_owned();
    let lang = match args.lang {
        Some(lang) => lang,
        None => detect(&dir, &name)?,
    };
    let mut steps = Steps::new();
    steps.say(&format!(
        "building {name} ({} project in {}) into {component}",
        lang.dir_name(),
        dir.display()
    ));
    if args.update {
        update_script(&dir, &name)?;
        steps.say("replaced ./build with the current scaffold's (it calls `octet-wasm build`)");
    }
    let sdk_root = link_sdk(&dir)?;
    let project = Project {
        dir: dir.clone(),
        name,
        api_version,
        component: dir.join(&component),
        sdk: sdk_root.join("guest-sdk").join(lang.dir_name()),
        wit: sdk_root.join("wit"),
    };
    match lang {
        Lang::Rust => build_steps::rust(&project, &mut steps)?,
        Lang::Python => build_steps::python(&project, &mut steps)?,
        Lang::Js => build_steps::js(&project, &mut steps)?,
        Lang::C => build_steps::c(&project, &mut steps)?,
    }
    sign_if_asked(&project.component, &mut steps)?;
    steps.say(&format!("checking {}", manifest.display()));
    let passed = super::check::run_on(manifest)?;
    steps.finish(&component);
    Ok(passed)
}

/// The variable naming the author's signing key: the author's own
/// environment (this tool refuses to run under octet), never a bundle's.
pub const SIGNING_KEY_VARIABLE: &str = "OCTET_WASM_SIGNING_KEY";

/// Signs the fresh component when the author's environment names a key
/// (`octet-wasm sign`), so a published build is never left unsigned by
/// accident.
fn sign_if_asked(component: &Path, steps: &mut Steps) -> Result<(), String> {
    let Some(key) = std::env::var_os(SIGNING_KEY_VARIABLE).filter(|key| !key.is_empty()) else {
        return Ok(());
    };
    let key = crate::signing::SigningKey::load(Path::new(&key))
        .map_err(|err| format!("{SIGNING_KEY_VARIABLE}: {err}"))?;
    steps.say(&format!(
        "signing {} by {}",
        component.display(),
        key.publisher
    ));
    let bytes = std::fs::read(component)
        .map_err(|err| format!("cannot read {}: {err}", component.display()))?;
    let signed = crate::signing::sign::sign(&bytes, &key)
        .map_err(|err| format!("{}: {err}", component.display()))?;
    super::write_atomically(component, &signed)
}

/// The component file the manifest's `octet-wasm run` args name, which
/// must be a plain file name: the component goes beside the manifest.
fn component_name(table: &Table, name: &str) -> Result<String, String> {
    let args = table
        .get("entrypoint")
        .and_then(|entry| entry.get("args"))
        .and_then(toml::Value::as_array);
    let named = match args.map(Vec::as_slice) {
        Some([run, component, ..]) if run.as_str() == Some("run") => component.as_str(),
        _ => None,
    };
    let Some(component) = named else {
        return Ok(format!("{name}.wasm"));
    };
    let plain = Path::new(component)
        .file_name()
        .is_some_and(|file| file == component)
        && !component.starts_with('.');
    if !plain || !component.ends_with(".wasm") {
        return Err(format!(
            "extension.toml's [entrypoint] args name {component:?}; octet-wasm build writes the component beside the manifest: name a file like \"{name}.wasm\""
        ));
    }
    Ok(component.to_owned())
}

/// The project's language from its files (see [`BuildArgs::lang`]).
pub fn detect(dir: &Path, name: &str) -> Result<Lang, String> {
    if dir.join("Cargo.toml").is_file() {
        return Ok(Lang::Rust);
    }
    let crate_name = name.replace('-', "_");
    let named = [
        (Lang::Python, format!("{crate_name}.py")),
        (Lang::Js, format!("{name}.js")),
        (Lang::C, format!("{name}.c")),
    ];
    let found: Vec<Lang> = named
        .iter()
        .filter(|(_, file)| dir.join(file).is_file())
        .map(|(lang, _)| *lang)
        .collect();
    if let [lang] = found.as_slice() {
        return Ok(*lang);
    }
    let mut by_extension = Vec::new();
    let entries =
        std::fs::read_dir(dir).map_err(|err| format!("cannot read {}: {err}", dir.display()))?;
    for entry in entries.flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        let lang = match Path::new(&file).extension().and_then(|e| e.to_str()) {
            Some("py") => Lang::Python,
            Some("js" | "mjs") => Lang::Js,
            Some("c") => Lang::C,
            _ => continue,
        };
        if !file.starts_with('.') && !by_extension.contains(&lang) {
            by_extension.push(lang);
        }
    }
    match by_extension.as_slice() {
        [lang] => Ok(*lang),
        [] => Err(format!(
            "{} holds no Cargo.toml and no .py, .js or .c source: which language is it? (pass --lang)",
            dir.display()
        )),
        several => Err(format!(
            "{} holds sources of several languages ({}): pass --lang",
            dir.display(),
            several
                .iter()
                .map(|lang| lang.dir_name())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Renews the project's `.octet-sdk` link to the root `sdk path` names
/// (what every scaffold's `./build` did), and returns the root as seen
/// from the current directory.
fn link_sdk(dir: &Path) -> Result<PathBuf, String> {
    let root = sdk::locate(dir)?;
    let link = dir.join(SDK_LINK);
    match std::fs::symlink_metadata(&link) {
        Ok(meta) if !meta.file_type().is_symlink() => {
            return Err(format!(
                "{} is not a link; octet-wasm build links it to the SDK: move it away",
                link.display()
            ));
        }
        Ok(_) => std::fs::remove_file(&link)
            .map_err(|err| format!("cannot replace {}: {err}", link.display()))?,
        Err(_) => {}
    }
    std::os::unix::fs::symlink(&root, &link).map_err(|err| {
        format!(
            "cannot link {} to {}: {err}",
            link.display(),
            root.display()
        )
    })?;
    Ok(if root.is_absolute() {
        root
    } else {
        dir.join(root)
    })
}

/// Writes the current scaffold's `./build` into `dir`.
fn update_script(dir: &Path, name: &str) -> Result<(), String> {
    let path = dir.join("build");
    let text = super::new::build_script(name);
    super::write_atomically(&path, text.as_bytes())?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .map_err(|err| format!("cannot make {} executable: {err}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for file in files {
            std::fs::write(dir.path().join(file), "").unwrap();
        }
        dir
    }

    #[test]
    fn the_language_comes_from_the_projects_files() {
        let rust = project(&["Cargo.toml", "helper.py"]);
        assert_eq!(detect(rust.path(), "my-ext").unwrap(), Lang::Rust);
        let named = project(&["my_ext.py", "tool.js"]);
        assert_eq!(detect(named.path(), "my-ext").unwrap(), Lang::Python);
        let single = project(&["main.c", "README.md"]);
        assert_eq!(detect(single.path(), "my-ext").unwrap(), Lang::C);
        let mixed = project(&["a.py", "b.js"]);
        let err = detect(mixed.path(), "my-ext").unwrap_err();
        assert!(err.contains("pass --lang"), "{err}");
        let none = project(&["README.md"]);
        assert!(
            detect(none.path(), "x")
                .unwrap_err()
                .contains("no Cargo.toml")
        );
    }

    #[test]
    fn the_component_goes_beside_the_manifest() {
        let table = |args: &str| -> Table {
            toml::from_str(&format!(
                "[entrypoint]\ncommand = \"octet-wasm\"\nargs = {args}\n"
            ))
            .unwrap()
        };
        assert_eq!(
            component_name(&table(r#"["run", "x.wasm", "--fuel", "9"]"#), "x").unwrap(),
            "x.wasm"
        );
        assert_eq!(component_name(&Table::new(), "y").unwrap(), "y.wasm");
        for bad in [
            r#"["run", "../x.wasm"]"#,
            r#"["run", "/tmp/x.wasm"]"#,
            r#"["run", "x"]"#,
        ] {
            assert!(component_name(&table(bad), "x").is_err(), "{bad}");
        }
    }
}
