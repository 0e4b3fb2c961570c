//! `check`'s look at the extension's own source beside its manifest, for
//! the one mistake the component cannot show: code that clearly reads or
//! writes files under `filesystem = "none"`. Every language runtime imports
//! the filesystem whether or not the extension touches files, so the
//! imports alone only make a note; a call in the source makes a warning.
//!
//! Only the author's files count: build outputs, dependencies and the SDK
//! link a scaffold makes are skipped, links are never followed, and the
//! walk is bounded so a large tree costs little.

use std::path::{Path, PathBuf};

/// One clear use: where, and the call that reads or writes files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsUse {
    pub file: PathBuf,
    pub line: usize,
    pub call: &'static str,
}

/// Directories that hold no source of the author's (what the scaffolds'
/// `.gitignore` lists, and version control).
const SKIPPED_DIRS: &[&str] = &[
    "target",
    "node_modules",
    ".octet-sdk",
    ".venv",
    "__pycache__",
    ".git",
];
/// Deeper than a project's source goes.
const MAX_DEPTH: usize = 4;
/// Files read, and bytes per file: a project's sources, not a vendored tree.
const MAX_FILES: usize = 200;
const MAX_FILE_BYTES: u64 = 512 * 1024;

/// What a source scan looks for: the calls per source file extension.
pub type Calls = fn(&str) -> &'static [&'static str];

/// The calls that mean file access, per source extension, in each SDK's
/// language (the JavaScript SDK's `fs` module included).
pub fn file_calls(extension: &str) -> &'static [&'static str] {
    match extension {
        "rs" => &[
            "std::fs",
            "fs::read",
            "fs::write",
            "File::open",
            "File::create",
            "OpenOptions::new",
        ],
        "py" => &[
            "open(",
            "pathlib",
            "os.listdir(",
            "os.scandir(",
            "os.walk(",
            "shutil.",
        ],
        "c" | "h" => &["fopen(", "opendir(", "open(", "stat("],
        "js" | "mjs" => &[
            "fs.read",
            "fs.write",
            "fs.readDir(",
            "fs.metadata(",
            "fs.exists(",
            "fs.createDir",
            "fs.remove",
        ],
        _ => &[],
    }
}

/// The calls that mean sockets or HTTP, per source extension.
pub fn network_calls(extension: &str) -> &'static [&'static str] {
    match extension {
        "rs" => &[
            "TcpStream",
            "TcpListener",
            "UdpSocket",
            "ToSocketAddrs",
            "wasi::http",
        ],
        "py" => &[
            "socket.",
            "import socket",
            "urllib",
            "http.client",
            "requests.",
        ],
        "c" | "h" => &["socket(", "connect(", "getaddrinfo("],
        "js" | "mjs" => &["fetch(", "WebSocket("],
        _ => &[],
    }
}

/// The calls that send a notification, in each SDK's spelling.
pub fn notify_calls(extension: &str) -> &'static [&'static str] {
    match extension {
        "rs" => &["notify(", "notify_titled(", "send_notification("],
        "py" => &["notify("],
        "c" | "h" => &["octet_notify"],
        "js" | "mjs" => &["notify("],
        _ => &[],
    }
}

/// Whether `dir` holds any source file of an SDK language: without one,
/// a scan finding nothing says nothing.
pub fn has_sources(dir: &Path) -> bool {
    let mut files = Vec::new();
    collect(dir, 0, file_calls, &mut files);
    !files.is_empty()
}

/// Comments and docs do not use the filesystem.
fn is_comment(line: &str) -> bool {
    let line = line.trim_start();
    ["//", "#", "/*", "*"]
        .iter()
        .any(|marker| line.starts_with(marker))
}

impl FsUse {
    /// What `check` says of it.
    pub fn message(&self) -> String {
        format!(
            "`{}` reads or writes files, but the manifest grants no filesystem (filesystem = \"none\"), so every such access fails inside the sandbox with a bare OS error",
            self.call
        )
    }
}

/// The fix `check` names.
pub const FIX: &str = "filesystem = \"workspace\" under [capabilities] in extension.toml (`--deny filesystem` leaves this warning out)";

/// The clear file accesses beside a manifest (its `text`, in `dir`) that
/// grants no filesystem; none when it grants one or is not TOML (`check`
/// reports that on its own).
pub fn without_grant(text: &str, dir: &Path) -> Vec<FsUse> {
    let Ok(table) = toml::from_str::<toml::Table>(text) else {
        return Vec::new();
    };
    let filesystem = table
        .get("capabilities")
        .and_then(|c| c.get("filesystem"))
        .and_then(|f| f.as_str())
        .unwrap_or("none");
    if filesystem != "none" {
        return Vec::new();
    }
    filesystem_uses(dir)
}

/// The first clear file access in each source file under `dir`, in path
/// order.
pub fn filesystem_uses(dir: &Path) -> Vec<FsUse> {
    uses(dir, file_calls)
}

/// The first of `calls` in each source file under `dir`, in path order.
pub fn uses(dir: &Path, calls: Calls) -> Vec<FsUse> {
    let mut files = Vec::new();
    collect(dir, 0, calls, &mut files);
    files.sort();
    files
        .iter()
        .filter_map(|file| first_use(file, calls))
        .collect()
}

fn collect(dir: &Path, depth: usize, calls: Calls, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        if files.len() >= MAX_FILES {
            return;
        }
        // `file_type` does not follow links: a link is neither.
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        let name = entry.file_name();
        if kind.is_dir() {
            if depth < MAX_DEPTH && !SKIPPED_DIRS.iter().any(|skip| name == *skip) {
                collect(&path, depth + 1, calls, files);
            }
        } else if kind.is_file() && !calls(extension(&path)).is_empty() {
            files.push(path);
        }
    }
}

fn extension(path: &Path) -> &str {
    path.extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default()
}

fn first_use(file: &Path, calls: Calls) -> Option<FsUse> {
    let size = std::fs::symlink_metadata(file).ok()?.len();
    if size > MAX_FILE_BYTES {
        return None;
    }
    let text = std::fs::read_to_string(file).ok()?;
    let calls = calls(extension(file));
    text.lines().enumerate().find_map(|(index, line)| {
        if is_comment(line) {
            return None;
        }
        let call = calls.iter().find(|call| line.contains(*call))?;
        Some(FsUse {
            file: file.to_path_buf(),
            line: index + 1,
            call,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_file_access_in_each_language_and_skips_comments_and_outputs() {
        let dir = tempfile::tempdir().unwrap();
        let write = |path: &str, text: &str| {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            "src/lib.rs",
            "// std::fs is not used here\nfn f() { let _ = std::fs::read_to_string(\"a\"); }\n",
        );
        write("extension.py", "# open(\nwith open(path) as f:\n    pass\n");
        write(
            "main.c",
            "int main(void) { FILE *f = fopen(\"a\", \"r\"); }\n",
        );
        write("main.js", "const text = fs.readToString(path);\n");
        write("quiet.py", "def hello(name):\n    return name\n");
        write("target/gen.rs", "std::fs::write(\"x\", \"\");\n");
        write("node_modules/x/index.js", "fs.write(x)\n");
        let uses = filesystem_uses(dir.path());
        let found: Vec<(String, usize, &str)> = uses
            .iter()
            .map(|u| {
                let file = u.file.strip_prefix(dir.path()).unwrap();
                (file.display().to_string(), u.line, u.call)
            })
            .collect();
        assert_eq!(
            found,
            vec![
                ("extension.py".to_owned(), 2, "open("),
                ("main.c".to_owned(), 1, "fopen("),
                ("main.js".to_owned(), 1, "fs.read"),
                ("src/lib.rs".to_owned(), 2, "std::fs"),
            ]
        );
    }

    #[test]
    fn links_are_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("x.rs"), "std::fs::read(\"a\");\n").unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("src")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("x.rs"), dir.path().join("lib.rs")).unwrap();
        assert!(filesystem_uses(dir.path()).is_empty());
    }
}
