//! `octet-wasm new --lang LANG NAME [--dir DIR]`: a working extension
//! project from the templates in `host/templates/<lang>/` and the shared
//! `host/templates/extension.toml.tmpl` (compiled into the binary): one
//! `hello` tool, a `build` script writing `NAME.wasm` beside the manifest,
//! a README and a .gitignore.
//!
//! The guest SDKs are not published to a registry, so the project points at
//! an SDK on disk: `--sdk PATH` (the language's SDK directory, e.g.
//! `guest-sdk/python`), else `$OCTET_WASM_SDK_DIR/<lang>` (the repository's
//! `guest-sdk` directory), else `guest-sdk/<lang>` in the current directory
//! or one of its parents (a checkout of octet-wasm). The binary's own path
//! is never used: an installed or copied binary says nothing about where
//! the sources are.

use super::say;
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Lang {
    Rust,
    Python,
    Js,
    C,
}

impl Lang {
    fn dir_name(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Python => "python",
            Lang::Js => "js",
            Lang::C => "c",
        }
    }
}

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
    /// The language's SDK directory (default: $OCTET_WASM_SDK_DIR/<lang>,
    /// else guest-sdk/<lang> in the current directory or a parent).
    #[arg(long, value_name = "PATH")]
    sdk: Option<PathBuf>,
}

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
/// `build`, a README, a .gitignore and the shared extension.toml.
macro_rules! language {
    ($lang:literal: $($path:literal => $source:literal),+) => {
        &[
            $(template_file!($path, false, $lang, "/", $source),)+
            template_file!("build", true, $lang, "/build.tmpl"),
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

impl Lang {
    fn template(self) -> &'static [TemplateFile] {
        match self {
            Lang::Rust => RUST,
            Lang::Python => PYTHON,
            Lang::Js => JS,
            Lang::C => C,
        }
    }

    /// A file the SDK directory must hold: one the build script uses.
    fn sdk_marker(self) -> &'static str {
        match self {
            Lang::Rust => "Cargo.toml",
            Lang::Python => "build.py",
            Lang::Js => "bin/octet-guest-build.mjs",
            Lang::C => "octet.h",
        }
    }
}

fn valid_name(name: &str) -> bool {
    name.len() <= 64
        && name.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

/// The SDK directory for `lang` (see the module docs), checked.
fn sdk_dir(lang: Lang, given: Option<&Path>) -> Result<PathBuf, String> {
    let marker = lang.sdk_marker();
    let lang_dir = lang.dir_name();
    let candidate = given.map(Path::to_path_buf).or_else(|| {
        std::env::var_os("OCTET_WASM_SDK_DIR")
            .filter(|v| !v.is_empty())
            .map(|root| PathBuf::from(root).join(lang_dir))
            .or_else(|| {
                let cwd = std::env::current_dir().ok()?;
                cwd.ancestors()
                    .map(|dir| dir.join("guest-sdk").join(lang_dir))
                    .find(|dir| dir.join(marker).is_file())
            })
    });
    let Some(dir) = candidate else {
        return Err(format!(
            "cannot find the {lang_dir} guest SDK: pass --sdk PATH (the octet-wasm repository's guest-sdk/{lang_dir}) or set OCTET_WASM_SDK_DIR to its guest-sdk directory"
        ));
    };
    let dir = dir
        .canonicalize()
        .map_err(|err| format!("guest SDK {}: {err}", dir.display()))?;
    if !dir.join(marker).is_file() {
        return Err(format!(
            "{} is not the {lang_dir} guest SDK (no {marker} in it)",
            dir.display()
        ));
    }
    if lang == Lang::Rust {
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap_or_default();
        if !manifest.contains("name = \"octet-guest\"") {
            return Err(format!(
                "{} is not the octet-guest crate (guest-sdk/rust)",
                dir.display()
            ));
        }
    }
    Ok(dir)
}

pub fn run(args: NewArgs) -> Result<(), String> {
    if !valid_name(&args.name) {
        return Err(format!(
            "{:?} is not a valid extension name: use 1-64 lowercase letters, digits, '-' and '_', starting with a letter",
            args.name
        ));
    }
    let files = args.lang.template();
    let sdk = sdk_dir(args.lang, args.sdk.as_deref())?;
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
    let sdk_text = sdk.to_string_lossy();
    // The SDK path lands in TOML, JavaScript and shell strings: refuse what
    // would need escaping.
    if sdk_text.contains(['"', '\\', '\n', '$', '`']) {
        return Err(format!(
            "the SDK path {sdk_text} contains characters the project's files cannot hold unescaped"
        ));
    }
    let crate_name = args.name.replace('-', "_");
    let fill = |text: &str| {
        text.replace("{{name}}", &args.name)
            .replace("{{crate}}", &crate_name)
            .replace("{{sdk}}", &sdk_text)
    };
    for file in files {
        let text = fill(file.text);
        let path = dir.join(fill(file.path));
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|err| format!("cannot create {}: {err}", parent.display()))?;
        }
        std::fs::write(&path, text)
            .map_err(|err| format!("cannot write {}: {err}", path.display()))?;
        if file.executable {
            make_executable(&path)?;
        }
    }
    say(&format!(
        "created {} ({} extension {}, SDK {})",
        dir.display(),
        args.lang.dir_name(),
        args.name,
        sdk.display()
    ));
    say(&format!("next: cd {} && ./build", dir.display()));
    Ok(())
}

#[cfg(unix)]
fn make_executable(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(|err| format!("cannot make {} executable: {err}", path.display()))
}

#[cfg(not(unix))]
fn make_executable(_: &Path) -> Result<(), String> {
    Ok(())
}
