//! stdin and stdout: one reader (a task, or a thread when stdin cannot be
//! polled) and one locked writer.
//!
//! The reader only frames and parses; it never runs guest code, so control
//! traffic (cancellations, answers to our child requests) is seen at once
//! even while every guest instance is busy (docs/protocol.md#scheduling).
//! The writer is the only code in the process that touches stdout: it writes
//! whole frames and flushes each one (docs/protocol.md#writer), under a lock.

use super::MAX_FRAME_BYTES;
use super::frame::{Frame, FrameReader, LineAssembler};
use super::guard::{Unsendable, check_frame};
use super::message::{Inbound, Rejection, parse_line};
use std::io::{BufReader, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// What the reader delivers.
#[derive(Debug)]
pub enum Input {
    Message(Inbound),
    /// A line that is not a usable message (see [`Rejection`]).
    Rejected(Rejection),
    /// A line over the frame limit, discarded whole.
    TooLong {
        bytes: usize,
    },
    /// End of input or a read error: the transport is gone.
    Closed {
        error: Option<String>,
    },
}

fn to_input(frame: Frame) -> Input {
    match frame {
        Frame::Line(line) => match parse_line(line) {
            Ok(message) => Input::Message(message),
            Err(rejection) => Input::Rejected(rejection),
        },
        Frame::TooLong { bytes } => Input::TooLong { bytes },
    }
}

/// Starts reading stdin; inputs arrive on the returned channel. Must be
/// called inside the protocol runtime.
///
/// When stdin is a pipe (as octet starts us) it is read by a task on the
/// protocol runtime through non-blocking I/O, so a request reaches the
/// server loop without waking another thread; otherwise (a file, a
/// terminal) a reader thread does blocking reads. The channel is bounded so
/// a flood of input waits in the pipe rather than in our memory.
pub fn spawn_reader() -> mpsc::Receiver<Input> {
    let (tx, rx) = mpsc::channel(256);
    match nonblocking_stdin() {
        Ok(stdin) => {
            tokio::spawn(read_async(stdin, tx));
        }
        Err(_) => spawn_reader_thread(tx),
    }
    rx
}

/// fd 0, borrowed (never closed by us).
struct StdinFd;

impl std::os::fd::AsRawFd for StdinFd {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        0
    }
}

fn nonblocking_stdin() -> std::io::Result<tokio::io::unix::AsyncFd<StdinFd>> {
    let flags = rustix::fs::fcntl_getfl(std::io::stdin())?;
    // Register first: epoll refuses regular files, and then stdin is left
    // blocking for the reader thread.
    // SAFETY: fd 0 stays open for the whole process and `StdinFd` always
    // names it; nothing in the shim closes or replaces stdin.
    let fd = unsafe {
        tokio::io::unix::AsyncFd::register_with_interest(StdinFd, tokio::io::Interest::READABLE)
    }
    .map_err(std::io::Error::from)?;
    rustix::fs::fcntl_setfl(std::io::stdin(), flags | rustix::fs::OFlags::NONBLOCK)?;
    Ok(fd)
}

async fn read_async(stdin: tokio::io::unix::AsyncFd<StdinFd>, tx: mpsc::Sender<Input>) {
    let mut lines = LineAssembler::new(MAX_FRAME_BYTES);
    let mut buffer = vec![0u8; 64 * 1024];
    let mut frames = Vec::new();
    loop {
        let read = match stdin.readable().await {
            Ok(mut guard) => match guard.try_io(|_| {
                rustix::io::read(std::io::stdin(), &mut buffer[..]).map_err(std::io::Error::from)
            }) {
                Ok(result) => {
                    // A read that did not fill the buffer emptied the pipe:
                    // waiting for the next readiness event now saves the
                    // `read` that would only return EAGAIN (one syscall per
                    // request). tokio clears only the readiness this guard
                    // saw, so bytes that arrive meanwhile still wake us.
                    if matches!(result, Ok(n) if n > 0 && n < buffer.len()) {
                        guard.clear_ready();
                    }
                    result
                }
                Err(_would_block) => continue,
            },
            Err(err) => Err(err),
        };
        let closed = match read {
            Ok(0) => {
                lines.end(&mut frames);
                Some(None)
            }
            Ok(n) => {
                lines.push(&buffer[..n], &mut frames);
                None
            }
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => None,
            Err(err) => Some(Some(err.to_string())),
        };
        for frame in frames.drain(..) {
            if tx.send(to_input(frame)).await.is_err() {
                return;
            }
        }
        if let Some(error) = closed {
            let _ = tx.send(Input::Closed { error }).await;
            return;
        }
    }
}

fn spawn_reader_thread(tx: mpsc::Sender<Input>) {
    let spawned = std::thread::Builder::new()
        .name("octet-wasm-reader".into())
        .spawn(move || {
            let stdin = std::io::stdin();
            let mut frames = FrameReader::new(
                BufReader::with_capacity(64 * 1024, stdin.lock()),
                MAX_FRAME_BYTES,
            );
            loop {
                let input = match frames.next_frame() {
                    Ok(Some(frame)) => to_input(frame),
                    Ok(None) => Input::Closed { error: None },
                    Err(err) => Input::Closed {
                        error: Some(err.to_string()),
                    },
                };
                let closed = matches!(input, Input::Closed { .. });
                if tx.blocking_send(input).is_err() || closed {
                    return;
                }
            }
        });
    if let Err(err) = spawned {
        crate::log!(crate::log::Level::Error, "cannot start the stdin reader", "error" => err.to_string());
    }
}

/// Why a frame was not written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendError {
    /// The frame breaks a rule the host enforces on every line (see
    /// [`guard`](super::guard)); nothing was written.
    Refused(Unsendable),
    /// stdout is gone (broken pipe) or the writer has stopped.
    Closed,
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SendError::Refused(why) => write!(f, "{why}"),
            SendError::Closed => f.write_str("stdout is closed"),
        }
    }
}

/// The one writer of protocol frames. Clones share it; a frame is written
/// whole and flushed under a lock, so frames from concurrent handlers never
/// interleave and each is on the wire when `send` returns.
///
/// Writing in the sender's task (rather than handing frames to a writer
/// thread) saves a thread wake-up per frame, which dominates a round trip
/// on a loaded machine. A write blocks only while the host does not read
/// (a full pipe), and the host reads continuously.
#[derive(Clone)]
pub struct Writer {
    sink: Arc<Mutex<Box<dyn Write + Send>>>,
    broken: Arc<AtomicBool>,
}

impl Writer {
    /// The writer on the real stdout.
    pub fn stdout() -> Writer {
        Self::on(std::io::stdout())
    }

    /// A writer on any sink (tests use a buffer).
    pub fn on<W: Write + Send + 'static>(sink: W) -> Writer {
        Writer {
            sink: Arc::new(Mutex::new(Box::new(sink))),
            broken: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Checks the frame (see [`check_frame`]), then writes `line` (without
    /// LF) and flushes.
    pub async fn send(&self, line: String) -> Result<(), SendError> {
        if let Err(why) = check_frame(&line) {
            // An oversized frame is the guest's doing and answered by the
            // caller; anything else means a boundary check is missing.
            if !matches!(why, Unsendable::TooLarge { .. }) {
                crate::log!(crate::log::Level::Error, "refused to write a frame octet could not read",
                    "error" => why.to_string(), "frame_bytes" => line.len());
            }
            return Err(SendError::Refused(why));
        }
        if self.is_broken() {
            return Err(SendError::Closed);
        }
        let mut sink = self.sink.lock().unwrap_or_else(|e| e.into_inner());
        if self.is_broken() {
            return Err(SendError::Closed);
        }
        // The one place that writes protocol frames.
        let written = sink
            .write_all(line.as_bytes())
            .and_then(|()| sink.write_all(b"\n"))
            .and_then(|()| sink.flush());
        if let Err(err) = written {
            self.broken.store(true, Ordering::Release);
            crate::log!(crate::log::Level::Error, "stdout write failed; the transport is gone", "error" => err.to_string());
            return Err(SendError::Closed);
        }
        Ok(())
    }

    /// Resolves when every frame sent before has been written (each `send`
    /// writes before it returns, so only the lock needs to be passed).
    pub async fn flushed(&self) {
        drop(self.sink.lock().unwrap_or_else(|e| e.into_inner()));
    }

    /// Whether stdout has failed.
    pub fn is_broken(&self) -> bool {
        self.broken.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// A frame of exactly `bytes` bytes: a notification padded with `x`.
    fn frame_of(bytes: usize) -> String {
        let head = r#"{"jsonrpc":"2.0","method":"m","params":""#;
        let tail = "\"}";
        format!(
            "{head}{}{tail}",
            "x".repeat(bytes - head.len() - tail.len())
        )
    }

    #[tokio::test]
    async fn writes_frames_in_order_and_refuses_oversize() {
        let sink = Shared::default();
        let writer = Writer::on(sink.clone());
        let (a, b) = (frame_of(50), frame_of(60));
        writer.send(a.clone()).await.unwrap();
        writer.send(b.clone()).await.unwrap();
        let big = frame_of(MAX_FRAME_BYTES + 1);
        assert_eq!(
            writer.send(big).await,
            Err(SendError::Refused(Unsendable::TooLarge {
                bytes: MAX_FRAME_BYTES + 1
            }))
        );
        writer.send(frame_of(MAX_FRAME_BYTES)).await.unwrap();
        writer.flushed().await;
        let out = sink.0.lock().unwrap().clone();
        assert!(out.starts_with(format!("{a}\n{b}\n").as_bytes()));
        assert_eq!(out.len(), 50 + 1 + 60 + 1 + MAX_FRAME_BYTES + 1);
    }

    /// The guard of last resort: a frame the host's parser would refuse is
    /// never written, and the refusal reads as a sentence.
    #[tokio::test]
    async fn refuses_frames_nested_past_the_bound() {
        let sink = Shared::default();
        let writer = Writer::on(sink.clone());
        let deep = format!(
            r#"{{"jsonrpc":"2.0","method":"m","params":{}0{}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        let refused = writer.send(deep).await.unwrap_err();
        assert_eq!(refused, SendError::Refused(Unsendable::TooDeep));
        assert!(
            refused
                .to_string()
                .starts_with("frame is nested deeper than 100 levels"),
            "{refused}"
        );
        assert_eq!(
            writer.send("{}".into()).await,
            Err(SendError::Refused(Unsendable::NotJsonRpc))
        );
        writer.flushed().await;
        assert!(sink.0.lock().unwrap().is_empty());
    }
}
