//! Reading bounded lines from the host.
//!
//! A line longer than [`MAX_FRAME_BYTES`](super::MAX_FRAME_BYTES) is never
//! buffered whole: its bytes are counted and discarded up to the next LF, so
//! hostile input cannot grow memory, and the stream stays usable after it.

use std::io::{self, BufRead};

/// One unit read from the input.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A complete line without its LF (and without a CR right before it).
    Line(Vec<u8>),
    /// A line over the limit; `bytes` counts what was discarded (before LF).
    TooLong { bytes: usize },
}

/// Reads frames from any buffered reader.
pub struct FrameReader<R> {
    input: R,
    limit: usize,
}

impl<R: BufRead> FrameReader<R> {
    pub fn new(input: R, limit: usize) -> Self {
        Self { input, limit }
    }

    /// The next frame, skipping blank lines; `None` at end of input. A last
    /// line without LF at EOF still counts as a frame.
    pub fn next_frame(&mut self) -> io::Result<Option<Frame>> {
        loop {
            match self.read_line()? {
                None => return Ok(None),
                Some(Frame::Line(line)) if line.is_empty() => continue,
                Some(frame) => return Ok(Some(frame)),
            }
        }
    }

    fn read_line(&mut self) -> io::Result<Option<Frame>> {
        let mut line = Vec::new();
        let mut total = 0usize;
        let mut overflow = false;
        loop {
            let available = match self.input.fill_buf() {
                Ok(buf) => buf,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err),
            };
            if available.is_empty() {
                if total == 0 {
                    return Ok(None);
                }
                break;
            }
            let (chunk, found_lf) = match available.iter().position(|&b| b == b'\n') {
                Some(pos) => (&available[..pos], true),
                None => (available, false),
            };
            total += chunk.len();
            if !overflow {
                // The CR the host might strip is allowed one extra byte here;
                // it is removed below and the limit applies to the rest.
                if total > self.limit + 1 {
                    overflow = true;
                    line = Vec::new();
                } else {
                    line.extend_from_slice(chunk);
                }
            }
            let consumed = chunk.len() + usize::from(found_lf);
            self.input.consume(consumed);
            if found_lf {
                break;
            }
        }
        if !overflow && line.last() == Some(&b'\r') {
            line.pop();
            total -= 1;
        }
        if overflow || total > self.limit {
            return Ok(Some(Frame::TooLong { bytes: total }));
        }
        Ok(Some(Frame::Line(line)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &[u8], limit: usize) -> Vec<Frame> {
        let mut reader = FrameReader::new(io::BufReader::with_capacity(4, input), limit);
        let mut out = Vec::new();
        while let Some(frame) = reader.next_frame().unwrap() {
            out.push(frame);
        }
        out
    }

    #[test]
    fn splits_lines_and_skips_blank_ones() {
        assert_eq!(
            frames(b"{}\n\n{\"a\":1}\r\nlast", 100),
            vec![
                Frame::Line(b"{}".to_vec()),
                Frame::Line(b"{\"a\":1}".to_vec()),
                Frame::Line(b"last".to_vec())
            ]
        );
    }

    #[test]
    fn limit_is_inclusive_and_stream_recovers() {
        let mut input = vec![b'x'; 10];
        input.push(b'\n');
        input.extend(vec![b'y'; 11]);
        input.extend(b"\nok\n");
        assert_eq!(
            frames(&input, 10),
            vec![
                Frame::Line(vec![b'x'; 10]),
                Frame::TooLong { bytes: 11 },
                Frame::Line(b"ok".to_vec())
            ]
        );
    }
}
