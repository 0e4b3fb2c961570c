//! The stdout reader thread: splits the extension's stdout into lines with a
//! bounded buffer, runs each through the [`FrameChecker`] and hands the
//! outcome to the session in order.

use super::checker::{FrameChecker, MAX_LINE_BYTES, Violation};
use super::frame::Frame;
use super::rule::Rule;
use std::io::Read;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};

/// What the reader saw, in stdout order.
#[derive(Debug)]
pub(crate) enum StdoutEvent {
    Frame(Box<Frame>),
    Violation(Box<Violation>),
    /// stdout closed (after any partial-line violation).
    Eof,
}

/// Splits a byte stream at LF while holding at most `limit` bytes of one
/// line: a longer line is reported once by length and then skipped to its LF.
pub(crate) struct LineSplitter {
    buffer: Vec<u8>,
    limit: usize,
    skipping: Option<usize>,
}

/// One piece of output from [`LineSplitter`].
#[derive(Debug, PartialEq)]
pub(crate) enum Line {
    /// A complete line, without its LF.
    Complete(Vec<u8>),
    /// A line reached `limit` bytes; these are its first `limit` bytes.
    Overlong(Vec<u8>),
}

impl LineSplitter {
    pub(crate) fn new(limit: usize) -> LineSplitter {
        LineSplitter {
            buffer: Vec::new(),
            limit,
            skipping: None,
        }
    }

    /// Feeds bytes, calling `emit` for every finished or overlong line.
    pub(crate) fn push(&mut self, mut bytes: &[u8], emit: &mut dyn FnMut(Line)) {
        while !bytes.is_empty() {
            let newline = bytes.iter().position(|b| *b == b'\n');
            let chunk = &bytes[..newline.unwrap_or(bytes.len())];
            bytes = newline.map_or(&[][..], |at| &bytes[at + 1..]);
            if let Some(skipped) = self.skipping.as_mut() {
                *skipped += chunk.len();
                if newline.is_some() {
                    self.skipping = None;
                }
                continue;
            }
            let room = self.limit - self.buffer.len();
            self.buffer
                .extend_from_slice(&chunk[..chunk.len().min(room)]);
            if self.buffer.len() >= self.limit {
                emit(Line::Overlong(std::mem::take(&mut self.buffer)));
                if newline.is_none() {
                    self.skipping = Some(0);
                }
            } else if newline.is_some() {
                emit(Line::Complete(std::mem::take(&mut self.buffer)));
            }
        }
    }

    /// The bytes after the last LF (empty when the stream ended cleanly or
    /// while an overlong line was being skipped).
    pub(crate) fn into_partial(self) -> Vec<u8> {
        self.buffer
    }
}

/// Reads `stdout` to EOF, checking every line and sending the outcome.
pub(crate) fn run_stdout_reader(
    mut stdout: impl Read,
    checker: Arc<Mutex<FrameChecker>>,
    events: Sender<StdoutEvent>,
) {
    let mut splitter = LineSplitter::new(MAX_LINE_BYTES);
    let mut chunk = vec![0u8; 64 * 1024];
    let mut check = |line: Line| {
        let mut checker = checker
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let (Line::Complete(bytes) | Line::Overlong(bytes)) = line;
        let event = match checker.check_line(&bytes) {
            Ok(Some(frame)) => StdoutEvent::Frame(Box::new(frame)),
            Ok(None) => return,
            Err(violation) => StdoutEvent::Violation(Box::new(violation)),
        };
        // The session may be gone; nothing is left to report to then.
        let _ = events.send(event);
    };
    loop {
        match stdout.read(&mut chunk) {
            Ok(0) => break,
            Ok(read) => splitter.push(&chunk[..read], &mut check),
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => {
                let _ = events.send(StdoutEvent::Violation(Box::new(Violation {
                    rule: Rule::Unterminated,
                    detail: format!("reading stdout failed: {error}"),
                    line: String::new(),
                })));
                break;
            }
        }
    }
    let partial = splitter.into_partial();
    let eof = checker
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .check_eof(&partial);
    if let Err(violation) = eof {
        let _ = events.send(StdoutEvent::Violation(Box::new(violation)));
    }
    let _ = events.send(StdoutEvent::Eof);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(limit: usize, pieces: &[&[u8]]) -> (Vec<Line>, Vec<u8>) {
        let mut splitter = LineSplitter::new(limit);
        let mut lines = Vec::new();
        for piece in pieces {
            splitter.push(piece, &mut |line| lines.push(line));
        }
        (lines, splitter.into_partial())
    }

    #[test]
    fn splits_lines_across_chunks() {
        let (lines, partial) = split(100, &[b"ab", b"c\nde\n", b"f"]);
        assert_eq!(
            lines,
            vec![
                Line::Complete(b"abc".to_vec()),
                Line::Complete(b"de".to_vec())
            ]
        );
        assert_eq!(partial, b"f");
    }

    #[test]
    fn reports_an_overlong_line_once_and_resynchronises() {
        let (lines, partial) = split(4, &[b"abcdefgh", b"ij\nok\n"]);
        assert_eq!(
            lines,
            vec![
                Line::Overlong(b"abcd".to_vec()),
                Line::Complete(b"ok".to_vec())
            ]
        );
        assert!(partial.is_empty());
    }

    #[test]
    fn a_line_one_below_the_limit_is_complete() {
        let (lines, _) = split(4, &[b"abc\n"]);
        assert_eq!(lines, vec![Line::Complete(b"abc".to_vec())]);
        let (lines, _) = split(4, &[b"abcd\n"]);
        assert_eq!(lines, vec![Line::Overlong(b"abcd".to_vec())]);
    }
}
