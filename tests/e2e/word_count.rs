//! The word-count example (`examples/word-count`): reading a workspace file
//! through the sandbox, with the same transcript in every guest language
//! (`OCTET_WASM_LANG`, see `support::example_dir`).

use crate::support::{Shim, example_dir, expect_error, expect_result, tool_text};
use octet_hostsim::{ApiVersion, ManifestSpec};
use serde_json::{Value, json};

const INITIALIZE_TOOLS: &str = r#"[{"name":"word_count","description":"Count the lines, words, characters and bytes of a text file in the workspace","parameters":{"type":"object","properties":{"path":{"type":"string","description":"A file in the workspace, relative to its root"}},"required":["path"],"additionalProperties":false},"output_schema":{"type":"object","properties":{"lines":{"type":"integer"},"words":{"type":"integer"},"chars":{"type":"integer"},"bytes":{"type":"integer"}},"required":["lines","words","chars","bytes"]}}]"#;

fn manifest() -> ManifestSpec {
    ManifestSpec::new("word-count", ApiVersion::V0_2)
        .description("Line, word, character and byte counts of a text file in the workspace")
        .filesystem("workspace")
        .tools(&["word_count"])
}

fn started() -> Shim {
    let mut shim = Shim::start(&example_dir("word-count"), "word-count.wasm", manifest());
    shim.initialize();
    shim
}

/// The counts the tool must report, computed here independently: `\n`
/// count, runs of non-ASCII-whitespace, Unicode scalar values, bytes.
fn expected(text: &str) -> Value {
    let words = text
        .split([' ', '\t', '\n', '\r', '\u{b}', '\u{c}'])
        .filter(|w| !w.is_empty())
        .count();
    json!({
        "lines": text.matches('\n').count(),
        "words": words,
        "chars": text.chars().count(),
        "bytes": text.len(),
    })
}

/// A failed call: an `is_error` result whose text the model reads.
fn failure(shim: &mut Shim, path: &str) -> String {
    let reply = shim.tool("word_count", json!({"path": path}));
    let result = expect_result(&reply);
    assert_eq!(result["is_error"], true, "{}", reply.frame.raw);
    tool_text(&reply)
}

#[test]
fn initialize_declares_the_same_tool_in_every_language() {
    let mut shim = Shim::start(&example_dir("word-count"), "word-count.wasm", manifest());
    let result = shim.initialize();
    assert_eq!(result["tools"].to_string(), INITIALIZE_TOOLS);
    shim.shutdown();
}

#[test]
fn counts_workspace_files_read_fresh_each_call() {
    let mut shim = started();
    let text = "héllo wörld\nsecond  line\there\r\n\u{b}last😀 word\u{c}end";
    std::fs::write(shim.workspace.join("notes.txt"), text).unwrap();
    let reply = shim.tool("word_count", json!({"path": "notes.txt"}));
    let result = expect_result(&reply).clone();
    assert_eq!(result["is_error"], false, "{}", reply.frame.raw);
    assert_eq!(result["structured_content"], expected(text));
    assert_eq!(
        tool_text(&reply),
        format!(
            "notes.txt: 2 lines, 8 words, {} characters, {} bytes",
            text.chars().count(),
            text.len()
        )
    );

    std::fs::create_dir_all(shim.workspace.join("docs/deep")).unwrap();
    std::fs::write(shim.workspace.join("docs/deep/empty.md"), "").unwrap();
    let reply = shim.tool("word_count", json!({"path": "docs/./deep/empty.md"}));
    assert_eq!(
        tool_text(&reply),
        "docs/./deep/empty.md: 0 lines, 0 words, 0 characters, 0 bytes"
    );

    // Changed on disk: the next call sees the new contents.
    std::fs::write(shim.workspace.join("notes.txt"), "one two\n").unwrap();
    let reply = shim.tool("word_count", json!({"path": "notes.txt"}));
    assert_eq!(
        expect_result(&reply)["structured_content"],
        expected("one two\n")
    );
    shim.shutdown();
}

#[test]
fn a_file_of_exactly_one_mib_is_counted_and_one_byte_more_refused() {
    let mut shim = started();
    let line = "word ".repeat(20) + "\n";
    let mut text = line.repeat((1 << 20) / line.len());
    text.push_str(&"x".repeat((1 << 20) - text.len()));
    assert_eq!(text.len(), 1 << 20);
    std::fs::write(shim.workspace.join("big.txt"), &text).unwrap();
    let reply = shim.tool("word_count", json!({"path": "big.txt"}));
    assert_eq!(expect_result(&reply)["structured_content"], expected(&text));
    text.push('x');
    std::fs::write(shim.workspace.join("big.txt"), &text).unwrap();
    assert_eq!(
        failure(&mut shim, "big.txt"),
        "big.txt is larger than 1 MiB"
    );
    shim.shutdown();
}

#[test]
fn unreadable_paths_are_plain_sentences() {
    let mut shim = started();
    std::fs::create_dir(shim.workspace.join("docs")).unwrap();
    std::fs::write(shim.workspace.join("latin1.txt"), b"caf\xe9\n").unwrap();
    assert_eq!(
        failure(&mut shim, "missing.txt"),
        "missing.txt: no such file in the workspace"
    );
    assert_eq!(
        failure(&mut shim, "docs"),
        "docs is a directory, not a file"
    );
    assert_eq!(
        failure(&mut shim, "latin1.txt"),
        "latin1.txt is not UTF-8 text"
    );
    shim.shutdown();
}

#[test]
fn paths_outside_the_workspace_are_refused() {
    let mut shim = started();
    for path in ["/etc/passwd", "../secret.txt", "docs/../../secret.txt", ""] {
        let reply = shim.tool("word_count", json!({"path": path}));
        let error = expect_error(&reply);
        assert_eq!(error.code, -32602, "{path}: {}", reply.frame.raw);
        assert_eq!(
            error.message,
            "path must be relative to the workspace, without `..`"
        );
    }
    let reply = shim.tool("word_count", json!({"path": 7}));
    assert_eq!(expect_error(&reply).message, "path must be a string");
    let reply = shim.tool("word_count", json!({}));
    assert_eq!(expect_error(&reply).message, "path must be a string");
    shim.shutdown();
}

#[test]
fn a_symlink_out_of_the_workspace_is_stopped_by_the_sandbox() {
    let mut shim = started();
    let outside = shim.workspace.parent().unwrap().join("outside.txt");
    std::fs::write(&outside, "secret words here\n").unwrap();
    std::os::unix::fs::symlink(&outside, shim.workspace.join("escape.txt")).unwrap();
    std::os::unix::fs::symlink("../outside.txt", shim.workspace.join("relative.txt")).unwrap();
    for path in ["escape.txt", "relative.txt"] {
        let text = failure(&mut shim, path);
        assert_eq!(text, format!("{path} cannot be read"));
    }
    // A link that stays inside is followed.
    std::fs::write(shim.workspace.join("real.txt"), "a b c").unwrap();
    std::os::unix::fs::symlink("real.txt", shim.workspace.join("alias.txt")).unwrap();
    let reply = shim.tool("word_count", json!({"path": "alias.txt"}));
    assert_eq!(
        expect_result(&reply)["structured_content"],
        expected("a b c")
    );
    shim.shutdown();
}
