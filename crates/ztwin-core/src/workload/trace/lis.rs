//! The ARC paper's `.lis` traces (Megiddo and Modha, "ARC: A Self-Tuning, Low Overhead
//! Replacement Cache", USENIX FAST 2003, table III: OLTP, P1..P14, ...).
//!
//! A line is `starting_block number_of_blocks ignored request_number`, space-separated
//! integers; it stands for `number_of_blocks` requests of the 512-byte blocks
//! `starting_block`, `starting_block + 1`, ... Counted that way OLTP.lis gives the paper's
//! 914,145 requests and 186,880 unique pages. The third and fourth fields are checked to
//! be integers and otherwise ignored. No times: every request has time 0.

use super::{parse_u64, show, Lines, Op, Request, Source, TraceReader};
use crate::error::Result;

/// Bytes of one `.lis` block.
pub const LIS_BLOCK: u32 = 512;

/// Streams a `.lis` trace, one request per block.
pub struct LisReader {
    lines: Lines,
    next: u64,
    left: u64,
}

impl LisReader {
    /// Reads from `src`.
    pub fn new(src: Source) -> Self {
        LisReader { lines: Lines::new(src), next: 0, left: 0 }
    }
}

impl LisReader {
    /// Reads lines until one with a run of blocks; false at the end of the trace.
    fn next_run(&mut self) -> Result<bool> {
        while self.left == 0 {
            if !self.lines.next_line()? {
                return Ok(false);
            }
            let line = &self.lines.buf;
            let mut it = line.split(|&b| b == b' ' || b == b'\t' || b == b'\r').filter(|t| !t.is_empty());
            let mut f = [0u64; 4];
            let names = ["starting_block", "number_of_blocks", "ignored field", "request_number"];
            let mut n = 0;
            for (k, name) in names.iter().enumerate() {
                match it.next() {
                    Some(t) if k < 2 && t.first() == Some(&b'-') => {
                        // A negative block or count once wrapped to 2^64 - n requests.
                        return Err(self.lines.src.err_line(
                            self.lines.line,
                            format!("field {} ({name}): must not be negative, found {}", k + 1, show(t)),
                        ));
                    }
                    Some(t) => match parse_u64(t).or_else(|| parse_i64(t).map(|v| v as u64)) {
                        Some(v) => f[k] = v,
                        None => {
                            return Err(self.lines.src.err_line(
                                self.lines.line,
                                format!("field {} ({name}): expected an integer, found {}", k + 1, show(t)),
                            ))
                        }
                    },
                    None if n == 0 => break, // blank line
                    None => {
                        return Err(self.lines.src.err_line(
                            self.lines.line,
                            format!("expected 4 integers (start, count, ignored, request number), found {n}"),
                        ))
                    }
                }
                n += 1;
            }
            if n == 0 {
                continue;
            }
            if let Some(t) = it.next() {
                return Err(self
                    .lines
                    .src
                    .err_line(self.lines.line, format!("expected 4 fields, found a fifth: {}", show(t))));
            }
            self.next = f[0];
            self.left = f[1];
        }
        Ok(true)
    }
}

impl TraceReader for LisReader {
    #[inline]
    fn next_request(&mut self) -> Result<Option<Request>> {
        if !self.next_run()? {
            return Ok(None);
        }
        let id = self.next;
        self.next = self.next.wrapping_add(1);
        self.left -= 1;
        Ok(Some(Request { id, size: LIS_BLOCK, time: 0, op: Op::Read }))
    }

    /// A line's run of blocks at once (the same requests as one at a time).
    fn next_batch(&mut self, out: &mut [Request]) -> Result<usize> {
        let mut n = 0;
        while n < out.len() && self.next_run()? {
            let take = (out.len() - n).min(usize::try_from(self.left).unwrap_or(usize::MAX));
            for (k, r) in out[n..n + take].iter_mut().enumerate() {
                *r = Request { id: self.next.wrapping_add(k as u64), size: LIS_BLOCK, time: 0, op: Op::Read };
            }
            self.next = self.next.wrapping_add(take as u64);
            self.left -= take as u64;
            n += take;
        }
        Ok(n)
    }
}

fn parse_i64(t: &[u8]) -> Option<i64> {
    if let Some(rest) = t.strip_prefix(b"-") {
        parse_u64(rest).and_then(|v| i64::try_from(v).ok()).map(|v| -v)
    } else {
        None
    }
}
