//! Guest stdout and stderr, captured into bounded stderr log records.
//!
//! Nothing a guest prints may reach the process's stdout (it would be a
//! fatal non-protocol line for octet), and a guest that prints megabytes
//! must neither block nor fail: every write is accepted, complete lines are
//! logged while the instance's budget lasts, and the rest is counted and
//! dropped with one notice.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};

use crate::log::Level;

/// Longest line logged as one record; longer lines are split.
const MAX_LINE: usize = 4096;

/// One guest output stream (`stdout` or `stderr`) of one instance.
#[derive(Clone)]
pub struct GuestOutput {
    inner: Arc<Mutex<State>>,
}

struct State {
    stream: &'static str,
    pending: Vec<u8>,
    /// Bytes still allowed into the log, shared by both streams.
    budget: Arc<Mutex<usize>>,
    dropped: usize,
}

impl GuestOutput {
    /// A pair of streams sharing one budget of `bytes`.
    pub fn pair(bytes: usize) -> (GuestOutput, GuestOutput) {
        let budget = Arc::new(Mutex::new(bytes));
        let make = |stream| GuestOutput {
            inner: Arc::new(Mutex::new(State {
                stream,
                pending: Vec::new(),
                budget: budget.clone(),
                dropped: 0,
            })),
        };
        (make("stdout"), make("stderr"))
    }

    fn accept(&self, bytes: &[u8]) {
        let Ok(mut state) = self.inner.lock() else {
            return;
        };
        state.pending.extend_from_slice(bytes);
        while let Some(end) = line_end(&state.pending) {
            let line: Vec<u8> = state.pending.drain(..end).collect();
            state.emit(&line);
        }
    }
}

fn line_end(pending: &[u8]) -> Option<usize> {
    match pending.iter().position(|&b| b == b'\n') {
        Some(pos) => Some(pos + 1),
        None if pending.len() >= MAX_LINE => Some(MAX_LINE),
        None => None,
    }
}

impl State {
    fn emit(&mut self, line: &[u8]) {
        let text = String::from_utf8_lossy(line);
        let text = text.trim_end_matches(['\n', '\r']);
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
        if allowed {
            if !text.is_empty() {
                crate::log!(Level::Info, "guest output", "stream" => self.stream, "text" => text);
            }
        } else {
            if self.dropped == 0 {
                crate::log!(Level::Warning, "guest output budget exhausted; further output of this instance is dropped",
                    "stream" => self.stream);
            }
            self.dropped += line.len();
        }
    }
}

impl Drop for State {
    fn drop(&mut self) {
        if !self.pending.is_empty() {
            let rest = std::mem::take(&mut self.pending);
            self.emit(&rest);
        }
        if self.dropped > 0 {
            crate::log!(Level::Warning, "guest output dropped", "stream" => self.stream, "bytes" => self.dropped);
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

    #[test]
    fn budget_drops_excess_without_failing() {
        let (out, _err) = GuestOutput::pair(10);
        out.accept(b"hello\nworld, this is long\n");
        let state = out.inner.lock().unwrap();
        assert!(state.pending.is_empty());
        assert_eq!(state.dropped, "world, this is long\n".len());
    }
}
