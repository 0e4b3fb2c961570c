//! `octet-wasm new --lang LANG NAME [--dir DIR]`: a working extension
//! project from the templates in `host/templates/<lang>/` and the shared
//! `host/templates/extension.toml.tmpl` (compiled into the binary): one
//! `hello` tool, a `build` script that runs `octet-wasm build` (which
//! writes `NAME.wasm` beside the manifest), a README and a .gitignore.
//!
//! No file of the project names the guest SDK's location, so the project
//! builds wherever it moves: `octet-wasm build` links `.octet-sdk` (ignored
//! by git) to the root `octet-wasm sdk path` names at every build, and the sources
//! reach the SDK through that link (see [`super::sdk`]). `new` makes the
//! link too, so an editor finds the SDK before the first build, and refuses
//! to start when there is no SDK to link to. The binary's own path is never
//! used: an installed or copied binary says nothing about where the sources
//! are.

use super::say;
use super::sdk::{self, Lang};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct NewArgs {
    /// The guest language.
    #[arg(long, value_enum)]
    lang: Lang,
    /// The extension's name: lowercase letters, digits, `-` and `_`,
    /// starting with a letter (also the component's file name).
    name: String,
    /// Where to create the project (default: ./NAME). Must not exist or be
    /// empty.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

/// The link to the SDK root in every project (see the module docs).
pub const SDK_LINK: &str = ".octet-sdk";

/// One file of a template: its path in the project (`{{name}}` and
/// `{{crate}}` allowed) and its text.
struct TemplateFile {
    path: &'static str,
    text: &'static str,
    executable: bool,
}

macro_rules! template_file {
    ($path:literal, $executable:literal, $($part:literal),+) => {
        TemplateFile {
            path: $path,
            text: include_str!(concat!("../../templates/", $($part),+)),
            executable: $executable,
        }
    };
}

/// A language's template: its sources (`project path => template file`
/// under `templates/<lang>/`), then what every language has: an executable
/// `build` (the same for all: it calls `octet-wasm build`), a README, a
/// .gitignore and the shared extension.toml.
macro_rules! language {
    ($lang:literal: $($path:literal => $source:literal),+) => {
        &[
            $(template_file!($path, false, $lang, "/", $source),)+
            template_file!("build", true, "build.tmpl"),
            template_file!("README.md", false, $lang, "/README.md.tmpl"),
            template_file!(".gitignore", false, $lang, "/gitignore.tmpl"),
            template_file!("extension.toml", false, "extension.toml.tmpl"),
        ]
    };
}

const RUST: &[TemplateFile] = language!("rust":
    "Cargo.toml" => "Cargo.toml.tmpl",
    "src/lib.rs" => "src/lib.rs.tmpl");
const PYTHON: &[TemplateFile] = language!("python": "{{crate}}.py" => "main.py.tmpl");
const JS: &[TemplateFile] = language!("js": "{{name}}.js" => "main.js.tmpl");
const C: &[TemplateFile] = language!("c": "{{name}}.c" => "main.c.tmpl");

fn template(lang: Lang) -> &'static [TemplateFile] {
    match lang {
        Lang::Rust => RUST,
        Lang::Python => PYTHON,
        Lang::Js => JS,
        Lang::C => C,
    }
}

fn valid_name(name: &str) -> bool {
    name.len() <= 64
        && name.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

fn fill(text: &str, name: &str) -> String {
    text.replace("{{name}}", name)
        .replace("{{crate}}", &name.replace('-', "_"))
}

pub fn run(args: NewArgs) -> Result<(), String> {
    if !valid_name(&args.name) {
        return Err(format!(
            "{:?} is not a valid extension name: use 1-64 lowercase letters, digits, '-' and '_', starting with a letter",
            args.name
        ));
    }
    let dir = args.dir.unwrap_or_else(|| PathBuf::from(&args.name));
    if dir.exists()
        && std::fs::read_dir(&dir)
            .map(|mut entries| entries.next().is_some())
            .unwrap_or(true)
    {
        return Err(format!(
            "{} already exists and is not empty; choose another --dir",
            dir.display()
        ));
    }
    let created = !dir.exists();
    std::fs::create_dir_all(&dir)
        .map_err(|err| format!("cannot create {}: {err}", dir.display()))?;
    let sdk = match sdk::locate(&dir) {
        Ok(sdk) => sdk,
        Err(err) => {
            if created {
                let _ = std::fs::remove_dir(&dir);
            }
            return Err(err);
        }
    };
    for file in template(args.lang) {
        let path = dir.join(fill(file.path, &args.name));
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|err| format!("cannot create {}: {err}", parent.display()))?;
        }
        std::fs::write(&path, fill(file.text, &args.name))
            .map_err(|err| format!("cannot write {}: {err}", path.display()))?;
        if file.executable {
            make_executable(&path)?;
        }
    }
    let link = dir.join(SDK_LINK);
    std::os::unix::fs::symlink(&sdk, &link)
        .map_err(|err| format!("cannot link {} to {}: {err}", link.display(), sdk.display()))?;
    say(&format!(
        "created {} ({} extension {}; {SDK_LINK} links to the SDK at {}, and `octet-wasm build` renews the link from `octet-wasm sdk path`)",
        dir.display(),
        args.lang.dir_name(),
        args.name,
        sdk.display()
    ));
    say(&format!("next: cd {} && ./build", dir.display()));
    Ok(())
}

/// The current scaffold's `./build` for a project named `name` (what
/// `octet-wasm build --update` writes into an earlier scaffold's project).
pub fn build_script(name: &str) -> String {
    fill(include_str!("../../templates/build.tmpl"), name)
}

fn make_executable(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(|err| format!("cannot make {} executable: {err}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every placeholder is filled, and no template writes a location of
    /// the SDK into the project (only the link does).
    #[test]
    fn templates_name_no_sdk_location() {
        for lang in Lang::ALL {
            for file in template(lang) {
                let text = fill(file.text, "my-ext");
                assert!(!text.contains("{{"), "{}: {text}", file.path);
                for line in text.lines().filter(|line| line.contains("guest-sdk/")) {
                    assert!(line.contains(SDK_LINK), "{}: {line}", file.path);
                }
            }
        }
    }
}
