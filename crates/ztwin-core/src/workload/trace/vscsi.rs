//! VMware vscsi traces, version 1, as libCacheSim reads them
//! (`traceReader/customizedReader/vscsi.h`).
//!
//! No header; 32-byte little-endian records `u32 sn | u32 len (bytes) | u32 nSG | u16 cmd
//! (SCSI opcode) | u16 ver (ver >> 8 == 1) | u64 lbn | u64 ts (microseconds)`. A request
//! is id = lbn, size = len, time = ts; READ(6/10/12/16) opcodes are reads, WRITE ones
//! writes. Version 2 records (simplification 1 of the trace module) are rejected.

use super::{le_u32, le_u64, Op, Request, Source, TraceReader};
use crate::error::Result;

/// Bytes per version-1 record.
pub const RECORD: usize = 32;

/// Streams vscsi v1 records.
pub struct VscsiReader {
    src: Source,
}

impl VscsiReader {
    /// Reads from `src`.
    pub fn new(src: Source) -> Self {
        VscsiReader { src }
    }
}

/// True if the first (up to 16) 32-byte records all carry version byte 1.
pub fn looks_like(head: &[u8]) -> bool {
    let n = (head.len() / RECORD).min(16);
    n > 0 && (0..n).all(|i| head[i * RECORD + 15] == 1)
}

fn op_of(cmd: u16) -> Op {
    match cmd {
        0x08 | 0x28 | 0xa8 | 0x88 => Op::Read,
        0x0a | 0x2a | 0xaa | 0x8a => Op::Write,
        _ => Op::Other,
    }
}

impl TraceReader for VscsiReader {
    #[inline]
    fn next_request(&mut self) -> Result<Option<Request>> {
        let Some(r) = self.src.record(RECORD, "a vscsi v1 record")? else {
            return Ok(None);
        };
        let ver = u16::from_le_bytes([r[14], r[15]]);
        let size = le_u32(r, 4);
        let cmd = u16::from_le_bytes([r[12], r[13]]);
        let id = le_u64(r, 16);
        let ts = le_u64(r, 24);
        if ver >> 8 != 1 {
            return Err(self.src.err_at(
                self.src.offset() + 14,
                format!("expected vscsi version 1 (ver >> 8 == 1), found ver 0x{ver:04x}"),
            ));
        }
        self.src.consume(RECORD);
        Ok(Some(Request { id, size, time: ts.saturating_mul(1000), op: op_of(cmd) }))
    }
}
