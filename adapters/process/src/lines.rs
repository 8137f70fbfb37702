//! Splitting a byte stream into bounded lines.
//!
//! Memory stays bounded by `max_line_bytes` plus the read buffer whatever the input: a line
//! that grows past the cap is dropped from memory, only its size and first bytes are kept,
//! and the rest of it is counted as it streams by. Not tokio-util's `LinesCodec`, which
//! errors on a long line and ends a naive read loop.

use std::io;

use memchr::memchr;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// How many bytes of an oversize line are kept.
pub const OVERSIZE_PREFIX_BYTES: usize = 200;

/// Size of the read buffer.
const READ_BUFFER_BYTES: usize = 64 * 1024;

/// One line of input, its terminator removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RawLine {
    /// A line within the cap; a trailing `\r` is removed. `terminated` is false for a last
    /// line that ended at end-of-file without `\n`.
    Line {
        line_no: u64,
        bytes: Vec<u8>,
        terminated: bool,
    },
    /// A line over the cap: its size (terminator excluded) and first bytes.
    Oversize {
        line_no: u64,
        size_bytes: u64,
        prefix: Vec<u8>,
        terminated: bool,
    },
}

/// The state of a line that went over the cap.
#[derive(Debug)]
struct Overflow {
    size: u64,
    prefix: Vec<u8>,
    ends_with_cr: bool,
}

/// Reads `\n`-terminated lines of at most `max_line_bytes` from `R`.
#[derive(Debug)]
pub struct BoundedLines<R> {
    reader: BufReader<R>,
    max_line_bytes: usize,
    line: Vec<u8>,
    overflow: Option<Overflow>,
    line_no: u64,
    bytes_read: u64,
    done: bool,
}

impl<R: AsyncRead + Unpin> BoundedLines<R> {
    pub fn new(inner: R, max_line_bytes: usize) -> Self {
        Self {
            reader: BufReader::with_capacity(READ_BUFFER_BYTES, inner),
            max_line_bytes,
            line: Vec::new(),
            overflow: None,
            line_no: 0,
            bytes_read: 0,
            done: false,
        }
    }

    /// Bytes consumed so far, terminators included.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// True when a whole line is already in the read buffer: the next `next_line` will
    /// not wait for the pipe.
    pub fn has_buffered_line(&self) -> bool {
        memchr(b'\n', self.reader.buffer()).is_some()
    }

    /// Bytes held for the line being assembled: never more than the cap plus one read.
    pub fn buffered_capacity(&self) -> usize {
        self.line.capacity()
    }

    /// The next line; `None` at end-of-file. Numbers count every line from 1, blank included.
    ///
    /// # Errors
    /// A read error of the underlying stream; the reader is finished after it.
    pub async fn next_line(&mut self) -> io::Result<Option<RawLine>> {
        if self.done {
            return Ok(None);
        }
        loop {
            let buf = match self.reader.fill_buf().await {
                Ok(buf) => buf,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => {
                    self.done = true;
                    return Err(err);
                }
            };
            if buf.is_empty() {
                self.done = true;
                if self.line.is_empty() && self.overflow.is_none() {
                    return Ok(None);
                }
                return Ok(Some(self.finish_line(false)));
            }
            let newline = memchr(b'\n', buf);
            let chunk_len = newline.unwrap_or(buf.len());
            append(
                &mut self.line,
                &mut self.overflow,
                self.max_line_bytes,
                &buf[..chunk_len],
            );
            let consumed = chunk_len + usize::from(newline.is_some());
            self.reader.consume(consumed);
            self.bytes_read += consumed as u64;
            if newline.is_some() {
                return Ok(Some(self.finish_line(true)));
            }
        }
    }

    fn finish_line(&mut self, terminated: bool) -> RawLine {
        self.line_no += 1;
        let line_no = self.line_no;
        if let Some(mut overflow) = self.overflow.take() {
            if overflow.ends_with_cr && overflow.prefix.len() as u64 == overflow.size {
                overflow.prefix.pop(); // the prefix is the whole line: drop its `\r` too
            }
            return RawLine::Oversize {
                line_no,
                size_bytes: overflow.size - u64::from(overflow.ends_with_cr),
                prefix: overflow.prefix,
                terminated,
            };
        }
        let mut bytes = std::mem::take(&mut self.line);
        if bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
        RawLine::Line {
            line_no,
            bytes,
            terminated,
        }
    }
}

/// Adds `chunk` to the current line, switching to overflow mode past the cap.
fn append(line: &mut Vec<u8>, overflow: &mut Option<Overflow>, max: usize, chunk: &[u8]) {
    let Some(&last) = chunk.last() else {
        return;
    };
    if let Some(over) = overflow {
        over.size += chunk.len() as u64;
        over.ends_with_cr = last == b'\r';
        return;
    }
    if line.len() + chunk.len() <= max {
        line.extend_from_slice(chunk);
        return;
    }
    let mut prefix = Vec::with_capacity(OVERSIZE_PREFIX_BYTES);
    for part in [line.as_slice(), chunk] {
        let room = OVERSIZE_PREFIX_BYTES - prefix.len();
        prefix.extend_from_slice(&part[..part.len().min(room)]);
    }
    *overflow = Some(Overflow {
        size: (line.len() + chunk.len()) as u64,
        prefix,
        ends_with_cr: last == b'\r',
    });
    // Give the memory back: the point of the cap.
    *line = Vec::new();
}

/// `bytes` as text, invalid UTF-8 replaced (no copy when it is valid).
pub fn lossy(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes)
        .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned())
}

/// A cut prefix as text: a character split by the cut is dropped rather than replaced.
pub fn lossy_prefix(bytes: &[u8]) -> String {
    String::from_utf8_lossy(without_split_char(bytes)).into_owned()
}

fn without_split_char(bytes: &[u8]) -> &[u8] {
    let len = bytes.len();
    for back in 1..=len.min(3) {
        let byte = bytes[len - back];
        if byte & 0xC0 == 0x80 {
            continue; // a continuation byte: look further back for the lead byte
        }
        let needed = match byte {
            0xF8.. => 1, // never a lead byte: invalid, replaced like any other
            0xF0.. => 4,
            0xE0.. => 3,
            0xC0.. => 2,
            _ => 1,
        };
        return if needed > back {
            &bytes[..len - back]
        } else {
            bytes
        };
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Splits `input` with `max` and renders each line as `no:text` / `no:oversize(size,prefix)`,
    /// with `$` marking an unterminated last line.
    async fn split(input: &[u8], max: usize) -> Vec<String> {
        let mut lines = BoundedLines::new(input, max);
        let mut out = Vec::new();
        while let Some(line) = lines.next_line().await.unwrap() {
            out.push(match line {
                RawLine::Line {
                    line_no,
                    bytes,
                    terminated,
                } => {
                    format!(
                        "{line_no}:{}{}",
                        lossy(bytes),
                        if terminated { "" } else { "$" }
                    )
                }
                RawLine::Oversize {
                    line_no,
                    size_bytes,
                    prefix,
                    terminated,
                } => format!(
                    "{line_no}:oversize({size_bytes},{}){}",
                    lossy_prefix(&prefix),
                    if terminated { "" } else { "$" }
                ),
            });
        }
        assert_eq!(lines.bytes_read(), input.len() as u64);
        out
    }

    async fn check(input: &[u8], max: usize, want: &[&str]) {
        assert_eq!(
            split(input, max).await,
            want,
            "input: {:?}",
            String::from_utf8_lossy(input)
        );
    }

    #[tokio::test]
    async fn lines_are_split_terminators_stripped_and_numbered() {
        check(b"", 10, &[]).await;
        check(b"a\nb\n", 10, &["1:a", "2:b"]).await;
        check(b"a\r\nb\r\n", 10, &["1:a", "2:b"]).await;
        check(b"a\n\n\r\nb", 10, &["1:a", "2:", "3:", "4:b$"]).await;
        check(b"{\"cut\n", 10, &["1:{\"cut"]).await;
        check(b"bad \xff\xfe!\n", 10, &["1:bad \u{fffd}\u{fffd}!"]).await;
    }

    #[tokio::test]
    async fn long_lines_become_oversize_and_reading_goes_on() {
        check(b"0123456789\nok\n", 10, &["1:0123456789", "2:ok"]).await;
        check(
            b"0123456789A\nok\n",
            10,
            &["1:oversize(11,0123456789A)", "2:ok"],
        )
        .await;
        check(
            b"0123456789AB\r\nok",
            10,
            &["1:oversize(12,0123456789AB)", "2:ok$"],
        )
        .await;
        check(b"0123456789ABC", 10, &["1:oversize(13,0123456789ABC)$"]).await;
    }

    #[tokio::test]
    async fn a_huge_line_is_counted_not_buffered() {
        const SIZE: usize = 50 * 1024 * 1024;
        let mut input = vec![b'x'; SIZE];
        input.extend_from_slice(b"\nnext\n");
        let max = 1024 * 1024;
        let mut lines = BoundedLines::new(input.as_slice(), max);
        let first = lines.next_line().await.unwrap().unwrap();
        let RawLine::Oversize {
            line_no,
            size_bytes,
            prefix,
            ..
        } = first
        else {
            panic!("not oversize: {first:?}");
        };
        assert_eq!(
            (line_no, size_bytes, prefix.len()),
            (1, SIZE as u64, OVERSIZE_PREFIX_BYTES)
        );
        assert!(lines.buffered_capacity() <= max + READ_BUFFER_BYTES);
        let next = lines.next_line().await.unwrap().unwrap();
        assert!(matches!(next, RawLine::Line { line_no: 2, ref bytes, .. } if bytes == b"next"));
    }

    #[test]
    fn a_prefix_cut_inside_a_character_drops_it() {
        let text = "aé€😀".as_bytes();
        let cuts: Vec<String> = (0..=text.len()).map(|n| lossy_prefix(&text[..n])).collect();
        assert_eq!(
            cuts,
            [
                "",
                "a",
                "a",
                "aé",
                "aé",
                "aé",
                "aé€",
                "aé€",
                "aé€",
                "aé€",
                "aé€😀"
            ]
        );
        assert_eq!(lossy_prefix(b"x\xff"), "x\u{fffd}");
    }
}
