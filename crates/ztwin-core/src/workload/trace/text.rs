//! Text traces: libCacheSim's csv, blkparse output, and one address per line.
//!
//! - **csv** (libCacheSim `traceReader/generalReader/csv.c`, unquoted): with a header,
//!   columns are found by name: id from `obj_id`, `id`, `lbn`, `lba`, `key`, `addr`,
//!   `address`, `offset`, `block`; time from `time`, `timestamp`, `clock_time`, `ts`
//!   (seconds, integer or decimal); size from `size`, `obj_size`, `len`, `length`,
//!   `bytes`; op from `op`, `type`, `rw`, `cmd` (`r`, `read`, `get`, SCSI `28`/`08`/`a8`/`88` are
//!   reads; `w`, `write`, `set`, `2a`/`0a`/`aa`/`8a` writes). Without a header: one column
//!   is the id; two are `time,id`; three or more `time,id,size[,op]`.
//! - **blkparse** (blktrace's `blkparse` default output, `%D %2c %8s %5T.%9t %5p %2a %3d`):
//!   `maj,min cpu seq sec.nsec pid action rwbs sector + nsectors [process]`. Only `Q`
//!   (queued) events are requests: id = sector, size = nsectors x 512, op from rwbs.
//!   Lines that do not start with `maj,min` (blkparse's closing summary) are skipped, and
//!   so are `Q` events without a sector range (flushes).
//! - **txt**: one decimal address per line (libCacheSim's plain text trace); size 1, no time.

use super::{parse_u64, show, Lines, Op, Request, Source, TraceReader};
use crate::error::Result;

fn fields(line: &[u8], sep: u8) -> impl Iterator<Item = &[u8]> {
    line.split(move |&b| b == sep).map(|t| t.trim_ascii())
}

fn parse_secs(t: &[u8]) -> Option<u64> {
    if let Some(v) = parse_u64(t) {
        return v.checked_mul(1_000_000_000);
    }
    let s = std::str::from_utf8(t).ok()?;
    let v: f64 = s.parse().ok()?;
    if v.is_finite() && v >= 0.0 {
        Some((v * 1e9).round() as u64)
    } else {
        None
    }
}

fn parse_op(t: &[u8]) -> Option<Op> {
    let l = t.to_ascii_lowercase();
    Some(match l.as_slice() {
        b"r" | b"read" | b"get" | b"gets" | b"28" | b"08" | b"a8" | b"88" | b"0x28" => Op::Read,
        b"w" | b"write" | b"set" | b"sets" | b"2a" | b"0a" | b"aa" | b"8a" | b"0x2a" => Op::Write,
        _ if l.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_') => Op::Other,
        _ => return None,
    })
}

/// Streams a csv trace.
pub struct CsvReader {
    lines: Lines,
    id: usize,
    time: Option<usize>,
    size: Option<usize>,
    op: Option<usize>,
    ncols: usize,
    pending: Option<Request>,
}

const ID_NAMES: &[&str] =
    &["obj_id", "id", "lbn", "lba", "key", "addr", "address", "offset", "block", "obj", "object"];
const TIME_NAMES: &[&str] = &["time", "timestamp", "clock_time", "ts"];
const SIZE_NAMES: &[&str] = &["size", "obj_size", "len", "length", "bytes"];
const OP_NAMES: &[&str] = &["op", "type", "rw", "cmd", "operation"];

impl CsvReader {
    /// Reads the first line to find the columns.
    pub fn new(src: Source) -> Result<Self> {
        let mut lines = Lines::new(src);
        if !lines.next_line()? {
            return Err(lines.src.err_line(1, "empty csv trace: expected a header or a request"));
        }
        let first: Vec<Vec<u8>> = fields(&lines.buf, b',').map(|t| t.to_vec()).collect();
        let lower: Vec<String> =
            first.iter().map(|t| String::from_utf8_lossy(t).to_ascii_lowercase()).collect();
        let find = |names: &[&str]| lower.iter().position(|c| names.contains(&c.as_str()));
        let known = find(ID_NAMES).is_some() || find(TIME_NAMES).is_some() || find(SIZE_NAMES).is_some();
        let all_words = first.iter().all(|t| !t.is_empty() && !t.iter().any(u8::is_ascii_digit));
        let mut r =
            CsvReader { lines, id: 0, time: None, size: None, op: None, ncols: first.len(), pending: None };
        if known || all_words {
            match find(ID_NAMES) {
                Some(i) => r.id = i,
                None => {
                    return Err(r.lines.src.err_line(
                        1,
                        format!(
                            "csv header {:?} names no id column; expected one of {}",
                            lower.join(","),
                            ID_NAMES.join(", ")
                        ),
                    ))
                }
            }
            r.time = find(TIME_NAMES);
            r.size = find(SIZE_NAMES);
            r.op = find(OP_NAMES);
        } else {
            match first.len() {
                1 => r.id = 0,
                2 => (r.time, r.id) = (Some(0), 1),
                n => {
                    (r.time, r.id, r.size) = (Some(0), 1, Some(2));
                    if n > 3 {
                        r.op = Some(3);
                    }
                }
            }
            let line = r.lines.line;
            r.pending = Some(r.parse(&first.iter().map(|v| v.as_slice()).collect::<Vec<_>>(), line)?);
        }
        Ok(r)
    }

    fn parse(&self, f: &[&[u8]], line: u64) -> Result<Request> {
        let err = |col: usize, what: &str| {
            let found = f.get(col).map(|t| show(t)).unwrap_or_else(|| "nothing".into());
            self.lines.src.err_line(
                line,
                format!("column {} ({what}): expected {}, found {found}", col + 1, expected(what)),
            )
        };
        fn expected(what: &str) -> &'static str {
            match what {
                "id" => "a non-negative integer",
                "time" => "seconds (a non-negative number)",
                "size" => "bytes (a non-negative integer below 2^32)",
                _ => "r/w/read/write/get/set or a SCSI opcode",
            }
        }
        if f.len() < self.ncols {
            return Err(self
                .lines
                .src
                .err_line(line, format!("expected {} columns, found {}", self.ncols, f.len())));
        }
        let id = f.get(self.id).and_then(|t| parse_u64(t)).ok_or_else(|| err(self.id, "id"))?;
        let time = match self.time {
            Some(c) => parse_secs(f[c]).ok_or_else(|| err(c, "time"))?,
            None => 0,
        };
        let size = match self.size {
            Some(c) => parse_u64(f[c]).and_then(|v| u32::try_from(v).ok()).ok_or_else(|| err(c, "size"))?,
            None => 1,
        };
        let op = match self.op {
            Some(c) => parse_op(f[c]).ok_or_else(|| err(c, "op"))?,
            None => Op::Other,
        };
        Ok(Request { id, size, time, op })
    }
}

impl TraceReader for CsvReader {
    fn next_request(&mut self) -> Result<Option<Request>> {
        if let Some(r) = self.pending.take() {
            return Ok(Some(r));
        }
        let mut buf: [&[u8]; 16] = [&[]; 16];
        loop {
            let line_no = self.lines.line + 1;
            if !self.lines.next_line()? {
                return Ok(None);
            }
            if self.lines.buf.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let line = std::mem::take(&mut self.lines.buf);
            let mut n = 0;
            for t in fields(&line, b',') {
                if n < buf.len() {
                    buf[n] = t;
                }
                n += 1;
            }
            let n = n.min(buf.len());
            let r = self.parse(&buf[..n], line_no).map(Some);
            self.lines.buf = line;
            return r;
        }
    }
}

/// True if the line looks like a blkparse event (`maj,min cpu seq time pid action ...`).
pub fn looks_like_blkparse(line: &str) -> bool {
    let t: Vec<&str> = line.split_whitespace().collect();
    t.len() >= 6
        && t[0].split_once(',').is_some_and(|(a, b)| a.parse::<u32>().is_ok() && b.parse::<u32>().is_ok())
        && t[1].parse::<u32>().is_ok()
        && t[2].parse::<u64>().is_ok()
        && t[3].contains('.')
        && t[3].parse::<f64>().is_ok()
}

/// Streams the `Q` events of blkparse output.
pub struct BlkparseReader {
    lines: Lines,
}

impl BlkparseReader {
    /// Reads from `src`.
    pub fn new(src: Source) -> Self {
        BlkparseReader { lines: Lines::new(src) }
    }
}

impl TraceReader for BlkparseReader {
    fn next_request(&mut self) -> Result<Option<Request>> {
        loop {
            if !self.lines.next_line()? {
                return Ok(None);
            }
            let line = &self.lines.buf;
            let t: Vec<&[u8]> = line.split(|b| b.is_ascii_whitespace()).filter(|t| !t.is_empty()).collect();
            let dev = t
                .first()
                .is_some_and(|d| d.contains(&b',') && d.iter().all(|&b| b == b',' || b.is_ascii_digit()));
            if !dev {
                continue; // summary or blank
            }
            let ln = self.lines.line;
            let src = &self.lines.src;
            if t.len() < 7 {
                return Err(src.err_line(
                    ln,
                    format!("expected at least 7 fields of a blkparse event, found {}", t.len()),
                ));
            }
            let time = parse_secs(t[3]).ok_or_else(|| {
                src.err_line(
                    ln,
                    format!("field 4 (time): expected seconds.nanoseconds, found {}", show(t[3])),
                )
            })?;
            if t[5] != b"Q" {
                continue;
            }
            if t.len() < 10 || t[8] != b"+" {
                continue; // no sector range (flush, barrier)
            }
            let sector = parse_u64(t[7]).ok_or_else(|| {
                src.err_line(ln, format!("field 8 (sector): expected an integer, found {}", show(t[7])))
            })?;
            let n = parse_u64(t[9]).and_then(|v| u32::try_from(v).ok()).ok_or_else(|| {
                src.err_line(ln, format!("field 10 (sectors): expected an integer, found {}", show(t[9])))
            })?;
            let rwbs = t[6];
            let op = if rwbs.contains(&b'W') {
                Op::Write
            } else if rwbs.contains(&b'R') {
                Op::Read
            } else {
                Op::Other
            };
            return Ok(Some(Request { id: sector, size: n.saturating_mul(512), time, op }));
        }
    }
}

/// Streams one decimal address per line.
pub struct PlainReader {
    lines: Lines,
}

impl PlainReader {
    /// Reads from `src`.
    pub fn new(src: Source) -> Self {
        PlainReader { lines: Lines::new(src) }
    }
}

impl TraceReader for PlainReader {
    #[inline]
    fn next_request(&mut self) -> Result<Option<Request>> {
        loop {
            if !self.lines.next_line()? {
                return Ok(None);
            }
            let t = self.lines.buf.trim_ascii();
            if t.is_empty() {
                continue;
            }
            let Some(id) = parse_u64(t) else {
                let ln = self.lines.line;
                return Err(self
                    .lines
                    .src
                    .err_line(ln, format!("expected one decimal address, found {}", show(t))));
            };
            return Ok(Some(Request { id, size: 1, time: 0, op: Op::Other }));
        }
    }
}
