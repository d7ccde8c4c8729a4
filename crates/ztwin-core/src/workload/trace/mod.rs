//! Block and cache traces, read as a stream of requests.
//!
//! # What
//!
//! [`open`] opens a trace file, decompresses it if it is zstd (detected from the magic
//! number, never the name), detects its format from the content (or takes the one given),
//! and returns a [`TraceReader`] that yields one [`Request`] at a time from a 1 MiB
//! buffer. Nothing is ever loaded whole: memory is the buffer and the parser's state.
//!
//! Formats, one module each:
//!
//! - [`lis`]: the ARC paper's `.lis` (Megiddo and Modha, FAST 2003, table III traces):
//!   `start_block n_blocks ignored request_number`; a line stands for `n_blocks` requests
//!   of 512-byte blocks `start_block ..= start_block + n_blocks - 1`.
//! - [`oracle`]: libCacheSim's oracleGeneral binary (24-byte records
//!   `u32 time_s | u64 obj_id | u32 obj_size | i64 next_access_vtime`, little-endian).
//! - [`vscsi`]: VMware vscsi version 1 (32-byte records `u32 sn | u32 len | u32 nSG |
//!   u16 cmd | u16 ver | u64 lbn | u64 ts_us`), as libCacheSim reads it (id = lbn, size =
//!   len).
//! - [`text`]: libCacheSim's csv (columns named by a header, or `time,id,size[,op]`),
//!   blkparse's default text output (`Q` events; id = sector, size = sectors x 512), and
//!   plain text with one decimal address per line.
//!
//! # Simplifications
//!
//! 1. vscsi version 2 records and libCacheSim's other binary formats are not read.
//! 2. csv fields are not quoted (libCacheSim's own csv traces never are).
//! 3. Times are kept in nanoseconds where the format has them (`has_time`); a format
//!    without (`.lis`, plain text) reports time 0.
//!
//! Errors name the file and the line (text) or byte offset (binary) and what was expected
//! there; a binary file given as text stops at the first non-text byte.

pub mod lis;
pub mod oracle;
pub mod text;
pub mod vscsi;

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// What a request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Op {
    /// A read (or a get).
    #[default]
    Read,
    /// A write (or a set).
    Write,
    /// Anything else, or not stated by the format.
    Other,
}

/// One request of a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Request {
    /// Object id or block address, as the trace gives it.
    pub id: u64,
    /// Bytes requested (512 for a `.lis` block, 1 for plain text).
    pub size: u32,
    /// Time, ns (0 if the format has no time).
    pub time: u64,
    /// Read, write, other.
    pub op: Op,
}

/// The trace formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The ARC paper's `.lis`.
    Lis,
    /// libCacheSim's csv.
    Csv,
    /// libCacheSim's oracleGeneral binary.
    OracleGeneral,
    /// VMware vscsi version 1 binary.
    Vscsi,
    /// blkparse default text output.
    Blkparse,
    /// One decimal address per line.
    Text,
}

impl Format {
    /// The format's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Format::Lis => "lis",
            Format::Csv => "csv",
            Format::OracleGeneral => "oracle",
            Format::Vscsi => "vscsi",
            Format::Blkparse => "blkparse",
            Format::Text => "txt",
        }
    }

    /// Parses a command-line name.
    pub fn parse(s: &str) -> Result<Format> {
        Ok(match s {
            "lis" => Format::Lis,
            "csv" => Format::Csv,
            "oracle" | "oracleGeneral" | "oracle-general" => Format::OracleGeneral,
            "vscsi" => Format::Vscsi,
            "blkparse" => Format::Blkparse,
            "txt" | "text" | "plain" => Format::Text,
            _ => {
                return Err(Error::config(
                    "format",
                    format!("unknown trace format {s:?}; known: lis, csv, oracle, vscsi, blkparse, txt"),
                ))
            }
        })
    }

    /// True if the format carries times.
    pub fn has_time(self) -> bool {
        !matches!(self, Format::Lis | Format::Text)
    }
}

/// A stream of requests.
pub trait TraceReader: Send {
    /// The next request, `Ok(None)` at the end of the trace.
    fn next_request(&mut self) -> Result<Option<Request>>;

    /// Fills `out` from the front with the next requests; returns how many (0 at the end).
    fn next_batch(&mut self, out: &mut [Request]) -> Result<usize> {
        let mut n = 0;
        while n < out.len() {
            match self.next_request()? {
                Some(r) => out[n] = r,
                None => break,
            }
            n += 1;
        }
        Ok(n)
    }
}

/// zstd frame magic number.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
/// Read buffer size.
const BUF: usize = 1 << 20;

/// A buffered byte stream over the (decompressed) file that knows its offset.
pub struct Source {
    path: PathBuf,
    inner: Box<dyn Read + Send>,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    /// Bytes consumed before `buf[0]`.
    base: u64,
    eof: bool,
    /// True if the file was zstd-compressed (offsets are in the decompressed stream).
    pub compressed: bool,
}

impl Source {
    /// Opens `path`, decompressing zstd if the content starts with its magic number.
    pub fn open(path: &Path) -> Result<Source> {
        let mut f = File::open(path)
            .map_err(|e| Error::config(path.display().to_string(), format!("cannot open trace: {e}")))?;
        let mut magic = [0u8; 4];
        let mut n = 0;
        while n < 4 {
            let k = f.read(&mut magic[n..]).map_err(|e| io_err(path, 0, e))?;
            if k == 0 {
                break;
            }
            n += k;
        }
        let head = magic[..n].to_vec();
        let compressed = n == 4 && magic == ZSTD_MAGIC;
        let inner: Box<dyn Read + Send> = if compressed {
            let chained = std::io::Cursor::new(head).chain(f);
            let dec = zstd::stream::read::Decoder::new(chained)
                .map_err(|e| Error::config(path.display().to_string(), format!("zstd: {e}")))?;
            Box::new(dec)
        } else {
            Box::new(std::io::Cursor::new(head).chain(f))
        };
        let mut s = Source {
            path: path.to_path_buf(),
            inner,
            buf: vec![0u8; BUF],
            pos: 0,
            end: 0,
            base: 0,
            eof: false,
            compressed,
        };
        s.fill(64 << 10)?;
        Ok(s)
    }

    /// The file name, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Byte offset (in the decompressed stream) of the next unread byte.
    #[inline]
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Unread bytes in the buffer.
    #[inline]
    pub fn available(&self) -> &[u8] {
        &self.buf[self.pos..self.end]
    }

    /// Marks `n` buffered bytes as read.
    #[inline]
    pub fn consume(&mut self, n: usize) {
        debug_assert!(self.pos + n <= self.end);
        self.pos += n;
    }

    /// True once the underlying stream is exhausted (buffered bytes may remain).
    pub fn at_eof(&self) -> bool {
        self.eof
    }

    /// Ensures at least `want` bytes are buffered (fewer only at end of stream); returns
    /// the number buffered.
    pub fn fill(&mut self, want: usize) -> Result<usize> {
        let want = want.min(BUF);
        if self.end - self.pos >= want || self.eof {
            return Ok(self.end - self.pos);
        }
        // Move the unread tail to the front.
        self.buf.copy_within(self.pos..self.end, 0);
        self.base += self.pos as u64;
        self.end -= self.pos;
        self.pos = 0;
        while self.end < want && !self.eof {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(k) => self.end += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io_err(&self.path, self.base + self.end as u64, e)),
            }
        }
        Ok(self.end)
    }

    /// Refills as much as the buffer holds; returns the bytes buffered.
    pub fn refill(&mut self) -> Result<usize> {
        self.fill(BUF)
    }

    /// The next `len` bytes as one record, without consuming them; None at a clean end of
    /// the file, an error naming `what` a record holds when the file ends inside one.
    #[inline]
    pub fn record(&mut self, len: usize, what: &str) -> Result<Option<&[u8]>> {
        if self.available().len() < len {
            let n = self.refill()?;
            if n == 0 {
                return Ok(None);
            }
            if n < len {
                return Err(self.err_at(
                    self.offset(),
                    format!("truncated record: expected {len} bytes ({what}), found {n}"),
                ));
            }
        }
        Ok(Some(&self.available()[..len]))
    }

    /// An error at `offset` of the file (of its decompressed stream if compressed).
    pub fn err_at(&self, offset: u64, what: impl std::fmt::Display) -> Error {
        let z = if self.compressed { " of the decompressed stream" } else { "" };
        Error::config(self.path.display().to_string(), format!("byte offset {offset}{z}: {what}"))
    }

    /// An error on a line of a text trace.
    pub fn err_line(&self, line: u64, what: impl std::fmt::Display) -> Error {
        Error::config(self.path.display().to_string(), format!("line {line}: {what}"))
    }
}

fn io_err(path: &Path, off: u64, e: std::io::Error) -> Error {
    Error::config(path.display().to_string(), format!("read error near byte offset {off}: {e}"))
}

/// Guesses the format from the first buffered bytes.
pub fn detect(src: &Source) -> Result<Format> {
    let head = src.available();
    if head.is_empty() {
        return Err(src.err_at(0, "empty trace: expected at least one request"));
    }
    let sample = &head[..head.len().min(4096)];
    let is_text = sample.iter().all(|&b| b == b'\n' || b == b'\r' || b == b'\t' || (0x20..0x7f).contains(&b));
    if is_text {
        let first =
            sample.split(|&b| b == b'\n').find(|l| !l.iter().all(u8::is_ascii_whitespace)).unwrap_or(&[]);
        let line = std::str::from_utf8(first).unwrap_or("").trim();
        let toks: Vec<&str> = line.split_whitespace().collect();
        if text::looks_like_blkparse(line) {
            return Ok(Format::Blkparse);
        }
        if line.contains(',') {
            return Ok(Format::Csv);
        }
        if toks.len() == 4 && toks.iter().all(|t| t.parse::<i64>().is_ok()) {
            return Ok(Format::Lis);
        }
        if toks.len() == 1 {
            return Ok(Format::Text);
        }
        return Err(src.err_line(
            1,
            format!(
                "cannot tell the text format from {line:?}: expected 4 integers (.lis), \
                 comma-separated fields (csv), a blkparse event, or one address (txt); give --format"
            ),
        ));
    }
    if vscsi::looks_like(head) {
        return Ok(Format::Vscsi);
    }
    if oracle::looks_like(head) {
        return Ok(Format::OracleGeneral);
    }
    Err(src.err_at(
        0,
        "binary content that is neither oracleGeneral (24-byte records, next_access_vtime -1 or \
         ahead) nor vscsi v1 (32-byte records, version byte 1); give --format",
    ))
}

/// Opens a trace: decompression and format detected from the content unless `format` is given.
pub fn open(path: &Path, format: Option<Format>) -> Result<(Format, Box<dyn TraceReader>)> {
    let src = Source::open(path)?;
    let fmt = match format {
        Some(f) => f,
        None => detect(&src)?,
    };
    let r: Box<dyn TraceReader> = match fmt {
        Format::Lis => Box::new(lis::LisReader::new(src)),
        Format::OracleGeneral => Box::new(oracle::OracleReader::new(src)),
        Format::Vscsi => Box::new(vscsi::VscsiReader::new(src)),
        Format::Csv => Box::new(text::CsvReader::new(src)?),
        Format::Blkparse => Box::new(text::BlkparseReader::new(src)),
        Format::Text => Box::new(text::PlainReader::new(src)),
    };
    Ok((fmt, r))
}

/// Iterates the lines of a text source, yielding (line number, line without the newline).
/// Stops with an error at the first byte that is not text.
pub(crate) struct Lines {
    pub src: Source,
    pub line: u64,
    pub buf: Vec<u8>,
}

impl Lines {
    pub fn new(src: Source) -> Self {
        Lines { src, line: 0, buf: Vec::with_capacity(256) }
    }

    /// Reads the next line into `buf` (without its newline); false at end of file.
    #[inline]
    pub fn next_line(&mut self) -> Result<bool> {
        loop {
            let avail = self.src.available();
            if let Some(nl) = memchr(b'\n', avail) {
                self.line += 1;
                let line = &avail[..nl];
                self.check_text(line)?;
                self.buf.clear();
                self.buf.extend_from_slice(line);
                self.src.consume(nl + 1);
                return Ok(true);
            }
            if self.src.at_eof() {
                let avail = self.src.available();
                if avail.is_empty() {
                    return Ok(false);
                }
                // Last line without a newline.
                self.line += 1;
                self.check_text(avail)?;
                self.buf.clear();
                self.buf.extend_from_slice(avail);
                let n = avail.len();
                self.src.consume(n);
                return Ok(true);
            }
            let before = self.src.available().len();
            let after = self.src.refill()?;
            if after == before && before >= BUF {
                return Err(self
                    .src
                    .err_at(self.src.offset(), format!("line {}: longer than 1 MiB", self.line + 1)));
            }
        }
    }
}

impl Lines {
    /// An error at the first byte of the current line (at the source's offset) that text
    /// does not have.
    fn check_text(&self, line: &[u8]) -> Result<()> {
        let Some(bad) = line.iter().position(|&b| b < 0x20 && b != b'\t' && b != b'\r' || b >= 0x7f) else {
            return Ok(());
        };
        Err(self.src.err_at(
            self.src.offset() + bad as u64,
            format!(
                "line {}: expected text, found byte 0x{:02x} (a binary file given as text?)",
                self.line, line[bad]
            ),
        ))
    }
}

#[inline]
fn memchr(needle: u8, hay: &[u8]) -> Option<usize> {
    hay.iter().position(|&b| b == needle)
}

/// The little-endian `u32` at byte `at` of a binary record (read whole by
/// [`Source::record`], which guarantees its length, so the bytes are there).
#[inline]
pub(crate) fn le_u32(r: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&r[at..at + 4]);
    u32::from_le_bytes(b)
}

/// The little-endian `u64` at byte `at` of a binary record (see [`le_u32`]).
#[inline]
pub(crate) fn le_u64(r: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&r[at..at + 8]);
    u64::from_le_bytes(b)
}

/// Parses an unsigned decimal integer field.
#[inline]
pub(crate) fn parse_u64(t: &[u8]) -> Option<u64> {
    if t.is_empty() || t.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in t {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(d as u64)?;
    }
    Some(v)
}

/// Shows a field in an error message (cut short).
pub(crate) fn show(t: &[u8]) -> String {
    let s = String::from_utf8_lossy(&t[..t.len().min(40)]).into_owned();
    if t.len() > 40 {
        format!("{s:?}...")
    } else {
        format!("{s:?}")
    }
}

#[cfg(test)]
mod tests;
