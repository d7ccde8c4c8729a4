//! libCacheSim's oracleGeneral binary traces.
//!
//! No header; 24-byte little-endian records `u32 clock_time (s) | u64 obj_id | u32
//! obj_size (bytes) | i64 next_access_vtime` (1-based index of the next request of the
//! same id, -1 if none). Source: libCacheSim `traceReader/customizedReader/oracle/
//! oracleGeneralBin.h`. next_access_vtime is not used here. A file whose length is not a
//! multiple of 24 stops at the truncated record with its byte offset.

use super::{le_u32, le_u64, Op, Request, Source, TraceReader};
use crate::error::Result;

/// Bytes per record.
pub const RECORD: usize = 24;

/// Streams oracleGeneral records.
pub struct OracleReader {
    src: Source,
}

impl OracleReader {
    /// Reads from `src`.
    pub fn new(src: Source) -> Self {
        OracleReader { src }
    }
}

/// True if the first records look like oracleGeneral: next_access_vtime is -1 or ahead of
/// the record's own index, for the first (up to) 64 records.
pub fn looks_like(head: &[u8]) -> bool {
    let n = (head.len() / RECORD).min(64);
    if n == 0 {
        return false;
    }
    (0..n).all(|i| {
        let r = &head[i * RECORD..(i + 1) * RECORD];
        let next = le_u64(r, 16) as i64;
        next == -1 || next == i64::MAX || next > i as i64 + 1
    })
}

/// Writes requests as oracleGeneral records (next_access_vtime filled in exactly).
pub fn write_oracle(reqs: &[Request], out: &mut impl std::io::Write) -> std::io::Result<()> {
    let mut next = vec![-1i64; reqs.len()];
    let mut last: hashbrown::HashMap<u64, usize> = hashbrown::HashMap::new();
    for i in (0..reqs.len()).rev() {
        if let Some(&j) = last.get(&reqs[i].id) {
            next[i] = j as i64 + 1;
        }
        last.insert(reqs[i].id, i);
    }
    let mut buf = Vec::with_capacity(RECORD * 4096);
    for (r, n) in reqs.iter().zip(next) {
        buf.extend_from_slice(&((r.time / 1_000_000_000) as u32).to_le_bytes());
        buf.extend_from_slice(&r.id.to_le_bytes());
        buf.extend_from_slice(&r.size.to_le_bytes());
        buf.extend_from_slice(&n.to_le_bytes());
        if buf.len() >= RECORD * 4096 {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    out.write_all(&buf)
}

impl TraceReader for OracleReader {
    #[inline]
    fn next_request(&mut self) -> Result<Option<Request>> {
        let Some(r) = self.src.record(RECORD, "u32 time, u64 id, u32 size, i64 next")? else {
            return Ok(None);
        };
        let time = le_u32(r, 0) as u64 * 1_000_000_000;
        let id = le_u64(r, 4);
        let size = le_u32(r, 12);
        self.src.consume(RECORD);
        Ok(Some(Request { id, size, time, op: Op::Other }))
    }

    fn next_batch(&mut self, out: &mut [Request]) -> Result<usize> {
        let mut n = 0;
        while n < out.len() {
            let avail = self.src.available();
            let k = (avail.len() / RECORD).min(out.len() - n);
            if k == 0 {
                match self.next_request()? {
                    Some(r) => {
                        out[n] = r;
                        n += 1;
                        continue;
                    }
                    None => break,
                }
            }
            for (rec, o) in avail.chunks_exact(RECORD).take(k).zip(&mut out[n..n + k]) {
                *o = Request {
                    time: le_u32(rec, 0) as u64 * 1_000_000_000,
                    id: le_u64(rec, 4),
                    size: le_u32(rec, 12),
                    op: Op::Other,
                };
            }
            self.src.consume(k * RECORD);
            n += k;
        }
        Ok(n)
    }
}
