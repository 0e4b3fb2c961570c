//! `octet-wasm sdk path [LANG]` and `octet-wasm sdk install`: where the
//! guest SDKs are, so that an `octet-wasm new` project never holds a path
//! of the machine it was made on.
//!
//! The SDKs are not published to any registry. A project's `./build` asks
//! `octet-wasm sdk path` at every build and links `.octet-sdk` to the answer
//! (an "SDK root": `guest-sdk/<lang>` and `wit/` side by side, the layout
//! every SDK's build tool resolves `wit/` from), so the project builds
//! wherever it is moved or copied. The root is, in this order:
//!
//! 1. `$OCTET_WASM_SDK_DIR`, when set (the user's own choice);
//! 2. the octet-wasm checkout enclosing the current directory, as a path
//!    relative to it (a project inside a checkout travels with it);
//! 3. the copy `octet-wasm sdk install` made (`scripts/install` runs it) in
//!    `~/.local/share/octet-wasm/sdk` of the user.
//!
//! These are author tools the user runs: started as an extension (a
//! bundle's `[entrypoint].args` naming `sdk install --to` a directory of
//! the user's) they refuse, like every command but `run` (`main` calls
//! [`super::refuse_under_octet`]), so nothing a
//! bundle ships reaches them; `run` reads none of this.

use super::say;
use std::path::{Component, Path, PathBuf};

#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum Lang {
    Rust,
    Python,
    Js,
    C,
}

impl Lang {
    pub const ALL: [Lang; 4] = [Lang::Rust, Lang::Python, Lang::Js, Lang::C];

    pub fn dir_name(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Python => "python",
            Lang::Js => "js",
            Lang::C => "c",
        }
    }

    /// A file the language's SDK directory must hold: one its build uses.
    fn marker(self) -> &'static str {
        match self {
            Lang::Rust => "Cargo.toml",
            Lang::Python => "build.py",
            Lang::Js => "bin/octet-guest-build.mjs",
            Lang::C => "octet.h",
        }
    }
}

/// The variable naming an SDK root (see the module docs).
pub const SDK_DIR_VAR: &str = "OCTET_WASM_SDK_DIR";

#[derive(clap::Args)]
pub struct SdkArgs {
    #[command(subcommand)]
    command: SdkCommand,
}

#[derive(clap::Subcommand)]
enum SdkCommand {
    /// Print the SDK root (`guest-sdk/` and `wit/`), or with LANG that
    /// language's SDK directory: $OCTET_WASM_SDK_DIR, else the octet-wasm
    /// checkout enclosing the current directory (printed relative to it),
    /// else the copy `sdk install` made in ~/.local/share/octet-wasm/sdk.
    Path {
        #[arg(value_enum)]
        lang: Option<Lang>,
    },
    /// Copy the guest SDKs and the WIT package from an octet-wasm checkout
    /// to ~/.local/share/octet-wasm/sdk (or --to DIR), where `sdk path`
    /// finds them outside a checkout. `scripts/install` runs it.
    Install {
        /// The checkout (default: the one enclosing the current directory).
        #[arg(long, value_name = "DIR")]
        from: Option<PathBuf>,
        /// Where to put the copy (default: ~/.local/share/octet-wasm/sdk).
        #[arg(long, value_name = "DIR")]
        to: Option<PathBuf>,
    },
}

pub fn run(args: SdkArgs) -> Result<(), String> {
    match args.command {
        SdkCommand::Path { lang } => {
            let cwd = std::env::current_dir()
                .map_err(|err| format!("cannot read the current directory: {err}"))?;
            let root = locate(&cwd)?;
            let shown = match lang {
                Some(lang) => root.join("guest-sdk").join(lang.dir_name()),
                None => root,
            };
            say(&shown.display().to_string());
            Ok(())
        }
        SdkCommand::Install { from, to } => {
            let from = match from {
                Some(dir) => dir,
                None => {
                    let cwd = std::env::current_dir()
                        .map_err(|err| format!("cannot read the current directory: {err}"))?;
                    enclosing_checkout(&cwd).ok_or(
                        "the current directory is not inside an octet-wasm checkout: pass --from DIR",
                    )?
                }
            };
            let to = match to {
                Some(dir) => dir,
                None => installed_root()
                    .ok_or("this user has no home directory in the user database: pass --to DIR")?,
            };
            install(&from, &to)?;
            say(&format!(
                "installed the guest SDKs ({}) and wit/ from {} in {}",
                Lang::ALL.map(Lang::dir_name).join(", "),
                from.display(),
                to.display()
            ));
            Ok(())
        }
    }
}

/// `~/.local/share/octet-wasm/sdk` of the user (home from the user
/// database, like the compiled cache and the policy).
pub fn installed_root() -> Option<PathBuf> {
    crate::user_dirs::home_dir().map(|home| home.join(".local/share/octet-wasm/sdk"))
}

/// Why `dir` is not an SDK root holding `lang` (`None` checks them all).
fn not_a_root(dir: &Path, lang: Option<Lang>) -> Option<String> {
    if !dir.join("wit/world.wit").is_file() {
        return Some(format!("{} has no wit/world.wit", dir.display()));
    }
    for lang in lang.map_or(Lang::ALL.to_vec(), |lang| vec![lang]) {
        let sdk = dir.join("guest-sdk").join(lang.dir_name());
        if !sdk.join(lang.marker()).is_file() {
            return Some(format!(
                "{} is not the {} guest SDK (no {} in it)",
                sdk.display(),
                lang.dir_name(),
                lang.marker()
            ));
        }
        if lang == Lang::Rust {
            let manifest = std::fs::read_to_string(sdk.join("Cargo.toml")).unwrap_or_default();
            if !manifest.contains("name = \"octet-guest\"") {
                return Some(format!("{} is not the octet-guest crate", sdk.display()));
            }
        }
    }
    None
}

/// The octet-wasm checkout (or SDK copy) enclosing `dir`, if any.
pub fn enclosing_checkout(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|ancestor| not_a_root(ancestor, Some(Lang::Rust)).is_none())
        .map(Path::to_path_buf)
}

/// The SDK root for a project in `dir` (see the module docs): an enclosing
/// checkout as a path relative to `dir`, anything else absolute.
pub fn locate(dir: &Path) -> Result<PathBuf, String> {
    if let Some(root) = std::env::var_os(SDK_DIR_VAR).filter(|v| !v.is_empty()) {
        let root = PathBuf::from(root);
        if let Some(why) = not_a_root(&root, None) {
            return Err(format!(
                "{SDK_DIR_VAR} names no octet-wasm SDK: {why} (set it to an octet-wasm checkout or the copy `octet-wasm sdk install` made, or unset it)"
            ));
        }
        return absolute(&root);
    }
    let dir = dir
        .canonicalize()
        .map_err(|err| format!("{}: {err}", dir.display()))?;
    if let Some(checkout) = enclosing_checkout(&dir) {
        return Ok(relative(&checkout, &dir));
    }
    let installed = installed_root();
    if let Some(root) = &installed
        && not_a_root(root, None).is_none()
    {
        return Ok(root.clone());
    }
    Err(format!(
        "no octet-wasm guest SDK found: {} is not inside an octet-wasm checkout and {} holds no copy; run scripts/install in an octet-wasm checkout (it installs octet-wasm and copies the SDKs there), or set {SDK_DIR_VAR} to a checkout",
        dir.display(),
        installed.map_or_else(
            || "~/.local/share/octet-wasm/sdk".to_owned(),
            |root| root.display().to_string()
        ),
    ))
}

fn absolute(path: &Path) -> Result<PathBuf, String> {
    path.canonicalize()
        .map_err(|err| format!("{}: {err}", path.display()))
}

/// `ancestor` as seen from `dir` (which lies inside it): `..` per level.
fn relative(ancestor: &Path, dir: &Path) -> PathBuf {
    let depth = dir
        .strip_prefix(ancestor)
        .map(|rest| rest.components().count())
        .unwrap_or(0);
    if depth == 0 {
        return PathBuf::from(".");
    }
    (0..depth).map(|_| Component::ParentDir).collect()
}

/// What a checkout's SDK directories hold that a copy leaves out: build
/// output and caches (the JS SDK's `node_modules` is kept: it is the
/// pinned build tool, and copying it spares a download).
const SKIPPED: &[&str] = &["target", "__pycache__", ".venv", ".pytest_cache"];

/// Copies `from`'s `guest-sdk/` and `wit/` to `to`, replacing an earlier
/// copy only once the new one is complete.
pub fn install(from: &Path, to: &Path) -> Result<(), String> {
    if let Some(why) = not_a_root(from, None) {
        return Err(format!(
            "{} is not an octet-wasm checkout: {why}",
            from.display()
        ));
    }
    let from = absolute(from)?;
    if to.exists() && !replaceable(to) {
        return Err(format!(
            "{} exists and is not an SDK copy `octet-wasm sdk install` made; choose another --to, or remove it yourself",
            to.display()
        ));
    }
    let parent = match to.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent)
        .map_err(|err| format!("cannot create {}: {err}", parent.display()))?;
    let name = to
        .file_name()
        .ok_or_else(|| format!("{} names no directory", to.display()))?
        .to_string_lossy()
        .into_owned();
    let staging = parent.join(format!(".{name}.new-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    let copied = copy_tree(&from.join("guest-sdk"), &staging.join("guest-sdk"))
        .and_then(|()| copy_tree(&from.join("wit"), &staging.join("wit")))
        .and_then(|()| standalone_rust_manifest(&from, &staging))
        .and_then(|()| {
            let stamp = format!(
                "octet-wasm {} SDK copy of {}\n",
                env!("CARGO_PKG_VERSION"),
                from.display()
            );
            std::fs::write(staging.join("SOURCE"), stamp)
                .map_err(|err| format!("cannot write {}: {err}", staging.display()))
        });
    if let Err(err) = copied {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(err);
    }
    let old = parent.join(format!(".{name}.old-{}", std::process::id()));
    if to.exists() {
        // What builds left in the old copy (the C SDK's componentize
        // helper, minutes to build) carries over.
        let _ = std::fs::rename(to.join("target"), staging.join("target"));
        std::fs::rename(to, &old)
            .map_err(|err| format!("cannot replace {}: {err}", to.display()))?;
    }
    std::fs::rename(&staging, to).map_err(|err| {
        let _ = std::fs::rename(&old, to);
        format!("cannot move the copy to {}: {err}", to.display())
    })?;
    let _ = std::fs::remove_dir_all(&old);
    Ok(())
}

/// Whether `dir` may be replaced by a new copy: an empty directory, or a
/// copy this command made (it holds `SOURCE` and is an SDK root), never
/// anything else a mistyped `--to` could name.
fn replaceable(dir: &Path) -> bool {
    let empty = std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_none());
    let copy = std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir())
        && std::fs::read_to_string(dir.join("SOURCE"))
            .is_ok_and(|stamp| stamp.starts_with("octet-wasm "))
        && not_a_root(dir, None).is_none();
    empty || copy
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    let fail = |path: &Path, err: std::io::Error| format!("cannot copy {}: {err}", path.display());
    std::fs::create_dir_all(to).map_err(|err| fail(to, err))?;
    for entry in std::fs::read_dir(from).map_err(|err| fail(from, err))? {
        let entry = entry.map_err(|err| fail(from, err))?;
        let name = entry.file_name();
        if SKIPPED.iter().any(|skipped| name == *skipped) {
            continue;
        }
        let (source, target) = (entry.path(), to.join(&name));
        let kind = entry.file_type().map_err(|err| fail(&source, err))?;
        if kind.is_symlink() {
            // node_modules/.bin holds relative links; they stay links.
            let link = std::fs::read_link(&source).map_err(|err| fail(&source, err))?;
            std::os::unix::fs::symlink(&link, &target).map_err(|err| fail(&source, err))?;
        } else if kind.is_dir() {
            copy_tree(&source, &target)?;
        } else {
            std::fs::copy(&source, &target).map_err(|err| fail(&source, err))?;
        }
    }
    Ok(())
}

/// The Rust SDK inherits its package fields and lints from the checkout's
/// workspace; a copy has no workspace above it, so the fields are written
/// out (and the lints, which only concern the SDK's own development,
/// dropped).
fn standalone_rust_manifest(checkout: &Path, copy: &Path) -> Result<(), String> {
    let read = |path: &Path| -> Result<toml::Table, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|err| format!("cannot read {}: {err}", path.display()))?;
        toml::from_str(&text).map_err(|err| format!("{}: {}", path.display(), err.message()))
    };
    let workspace = read(&checkout.join("Cargo.toml"))?;
    let inherited = workspace
        .get("workspace")
        .and_then(|w| w.get("package"))
        .and_then(toml::Value::as_table)
        .cloned()
        .unwrap_or_default();
    let path = copy.join("guest-sdk/rust/Cargo.toml");
    let mut manifest = read(&path)?;
    manifest.remove("lints");
    if let Some(package) = manifest
        .get_mut("package")
        .and_then(toml::Value::as_table_mut)
    {
        for (key, value) in package.iter_mut() {
            let inherits = value
                .as_table()
                .and_then(|t| t.get("workspace"))
                .and_then(toml::Value::as_bool)
                == Some(true);
            if inherits {
                let Some(resolved) = inherited.get(key) else {
                    return Err(format!(
                        "{}: package.{key} inherits from the workspace, which does not set it",
                        path.display()
                    ));
                };
                *value = resolved.clone();
            }
        }
    }
    let text = toml::to_string(&manifest)
        .map_err(|err| format!("cannot write {}: {err}", path.display()))?;
    std::fs::write(
        &path,
        format!(
            "# guest-sdk/rust/Cargo.toml of {}, with the workspace's package fields written out.\n{text}",
            checkout.display()
        ),
    )
    .map_err(|err| format!("cannot write {}: {err}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_root_climbs_one_level_per_component() {
        let root = Path::new("/a/b");
        assert_eq!(relative(root, Path::new("/a/b")), PathBuf::from("."));
        assert_eq!(
            relative(root, Path::new("/a/b/c/d")),
            PathBuf::from("../..")
        );
    }

    #[test]
    fn the_copy_is_a_root_and_its_rust_manifest_stands_alone() {
        let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let to = dir.path().join("sdk");
        install(checkout, &to).unwrap();
        assert_eq!(not_a_root(&to, None), None);
        let manifest: toml::Table =
            toml::from_str(&std::fs::read_to_string(to.join("guest-sdk/rust/Cargo.toml")).unwrap())
                .unwrap();
        let package = manifest["package"].as_table().unwrap();
        assert_eq!(package["name"].as_str(), Some("octet-guest"));
        assert!(package["version"].is_str() && package["edition"].is_str());
        assert!(!manifest.contains_key("lints"));
        // A second install replaces the first whole, but for build output.
        std::fs::write(to.join("stale"), "x").unwrap();
        std::fs::create_dir_all(to.join("target/guest-c-build")).unwrap();
        install(checkout, &to).unwrap();
        assert!(!to.join("stale").exists());
        assert!(to.join("target/guest-c-build").is_dir());
        assert!(not_a_root(dir.path(), None).is_some());
        // Anything else stays: a mistyped --to never removes a directory.
        let mine = dir.path().join("mine");
        std::fs::create_dir(&mine).unwrap();
        std::fs::write(mine.join("notes.txt"), "keep").unwrap();
        let refused = install(checkout, &mine).unwrap_err();
        assert!(refused.contains("is not an SDK copy"), "{refused}");
        assert_eq!(
            std::fs::read_to_string(mine.join("notes.txt")).unwrap(),
            "keep"
        );
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
}
