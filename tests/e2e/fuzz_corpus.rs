//! Replays the committed fuzz corpus (`fuzz/seeds/<target>/` and
//! `fuzz/regressions/<target>/`) through the same property checks the
//! cargo-fuzz targets run (`fuzz/checks.rs`), so every seed and every past
//! crash is re-checked by `cargo test` without cargo-fuzz or nightly.

#[path = "../../fuzz/checks.rs"]
mod checks;

use crate::support::repo_root;
use std::path::PathBuf;

/// Every corpus file of `target`, sorted.
fn corpus(target: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for kind in ["seeds", "regressions"] {
        let dir = repo_root().join("fuzz").join(kind).join(target);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.expect("read a corpus entry").path();
            let hidden = path
                .file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with('.'));
            if path.is_file() && !hidden {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

fn replay(target: &str, check: fn(&[u8])) {
    let files = corpus(target);
    assert!(!files.is_empty(), "no corpus for fuzz target {target}");
    for path in files {
        let data = std::fs::read(&path).expect("read a corpus file");
        if std::panic::catch_unwind(|| check(&data)).is_err() {
            panic!("fuzz target {target} fails on {}", path.display());
        }
    }
}

#[test]
fn the_frame_reader_corpus_replays_clean() {
    replay("frame_reader", checks::frame_reader);
}

#[test]
fn the_message_corpus_replays_clean() {
    replay("message", checks::message);
}

#[test]
fn the_guest_json_corpus_replays_clean() {
    replay("guest_json", checks::guest_json);
}
