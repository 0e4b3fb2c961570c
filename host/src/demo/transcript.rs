//! The demo's transcript: what a session prints is the record a reader
//! checks, so every line goes through here.

#[allow(
    clippy::print_stdout,
    reason = "the demo's output is the transcript itself"
)]
pub(crate) fn say(line: &str) {
    println!("{line}");
}

pub(crate) fn heading(text: &str) {
    say("");
    say(&format!("== {text}"));
}
