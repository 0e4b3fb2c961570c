//! Guest stdout and stderr, captured into bounded stderr log records.
//!
//! Nothing a guest prints may reach the process's stdout (it would be a
//! fatal non-protocol line for octet), and a guest that prints megabytes
//! must neither block nor fail: every write is accepted, and each complete
//! line becomes one guest-driven record (`crate::log::guest`), so it draws
//! on the process's one guest budget. Two more bounds apply here: an
//! instance logs at most its `output_bytes` (what is past that is counted
//! as dropped), and a line keeps its first [`KEEP_LINE_BYTES`] bytes (the
//! record says how many were cut), so a 2 MB line without a newline costs
//! one record, not hundreds.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};

use crate::log::{Level, MAX_LINE_BYTES};

/// Bytes of one line kept: a record's line bound less room for the rest of
/// the record, so plain text is not cut twice.
const KEEP_LINE_BYTES: usize = MAX_LINE_BYTES - 1024;

/// One guest output stream (`stdout` or `stderr`) of one instance.
#[derive(Clone)]
pub struct GuestOutput {
    inner: Arc<Mutex<State>>,
}

struct State {
    stream: &'static str,
    /// The current line's first bytes (at most [`KEEP_LINE_BYTES`]).
    pending: Vec<u8>,
    /// Bytes of the current line past `pending`, discarded.
    cut: usize,
    /// Bytes this instance may still log, shared by both streams.
    budget: Arc<Mutex<usize>>,
}

impl GuestOutput {
    /// A pair of streams sharing one per-instance cap of `bytes`.
    pub fn pair(bytes: usize) -> (GuestOutput, GuestOutput) {
        let budget = Arc::new(Mutex::new(bytes));
        let make = |stream| GuestOutput {
            inner: Arc::new(Mutex::new(State {
                stream,
                pending: Vec::new(),
                cut: 0,
                budget: budget.clone(),
            })),
        };
        (make("stdout"), make("stderr"))
    }

    fn accept(&self, mut bytes: &[u8]) {
        let Ok(mut state) = self.inner.lock() else {
            return;
        };
        while !bytes.is_empty() {
            let (segment, complete) = match bytes.iter().position(|&b| b == b'\n') {
                Some(pos) => (&bytes[..pos], Some(pos + 1)),
                None => (bytes, None),
            };
            let room = KEEP_LINE_BYTES.saturating_sub(state.pending.len());
            let kept = segment.len().min(room);
            state.pending.extend_from_slice(&segment[..kept]);
            state.cut += segment.len() - kept;
            match complete {
                Some(next) => {
                    state.finish_line();
                    bytes = &bytes[next..];
                }
                None => break,
            }
        }
    }
}

impl State {
    fn finish_line(&mut self) {
        let line = std::mem::take(&mut self.pending);
        let cut = std::mem::take(&mut self.cut);
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches('\r');
        if text.is_empty() && cut == 0 {
            return;
        }
        let allowed = {
            let Ok(mut budget) = self.budget.lock() else {
                return;
            };
            if *budget >= line.len() {
                *budget -= line.len();
                true
            } else {
                *budget = 0;
                false
            }
        };
        if !allowed {
            crate::log::guest_dropped(line.len() + cut);
        } else if cut == 0 {
            crate::guest_log!(Level::Info, "guest output", "stream" => self.stream, "text" => text);
        } else {
            crate::guest_log!(Level::Info, "guest output", "stream" => self.stream, "text" => text,
                "cut_bytes" => cut, "line_bytes" => line.len() + cut);
        }
    }
}

impl Drop for State {
    fn drop(&mut self) {
        if !self.pending.is_empty() || self.cut > 0 {
            self.finish_line();
        }
    }
}

impl IsTerminal for GuestOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for GuestOutput {
    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

impl AsyncWrite for GuestOutput {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.accept(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget_left(out: &GuestOutput) -> usize {
        *out.inner.lock().unwrap().budget.lock().unwrap()
    }

    #[test]
    fn the_instance_cap_is_shared_and_never_fails_a_write() {
        let (out, err) = GuestOutput::pair(10);
        out.accept(b"hello\n");
        assert_eq!(budget_left(&err), 5, "both streams draw on one cap");
        err.accept(b"world, this is long\n");
        assert_eq!(budget_left(&out), 0, "a line past the cap empties it");
        assert!(out.inner.lock().unwrap().pending.is_empty());
    }

    #[test]
    fn a_line_keeps_its_first_bytes_and_counts_the_rest() {
        let (out, _err) = GuestOutput::pair(usize::MAX);
        let flood = vec![b'o'; 3 * KEEP_LINE_BYTES + 5];
        for chunk in flood.chunks(4096) {
            out.accept(chunk);
        }
        {
            let state = out.inner.lock().unwrap();
            assert_eq!(state.pending.len(), KEEP_LINE_BYTES);
            assert_eq!(state.cut, 2 * KEEP_LINE_BYTES + 5);
        }
        out.accept(b"\nnext");
        let state = out.inner.lock().unwrap();
        assert_eq!(state.pending, b"next", "the newline ends the cut line");
        assert_eq!(state.cut, 0);
    }

    #[test]
    fn several_lines_in_one_write_are_split() {
        let (out, _err) = GuestOutput::pair(100);
        out.accept(b"a\nbb\nccc");
        assert_eq!(budget_left(&out), 100 - 1 - 2);
        assert_eq!(out.inner.lock().unwrap().pending, b"ccc");
    }
}
