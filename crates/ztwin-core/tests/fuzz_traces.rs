//! The trace readers' fuzz harness: valid traces of every format (`.lis`, csv, blkparse,
//! plain text, oracleGeneral, vscsi), zstd-compressed or not, with bytes flipped,
//! inserted or cut, and plain random bytes, read with the format detected and with each
//! format forced, then replayed through every policy: an answer or an error naming the
//! place, never a panic, and never more requests than the bytes can hold (a negative
//! `.lis` count once looped for ever).
//!
//! Bounded for CI (proptest's case count; `PROPTEST_CASES` raises it).

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use ztwin_core::replay::replay_json;
use ztwin_core::workload::trace::{self, Format, Request};

static CASE: AtomicUsize = AtomicUsize::new(0);

fn file(bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ztwin-fuzz-traces-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("t{}", CASE.fetch_add(1, Ordering::Relaxed)));
    std::fs::File::create(&p).unwrap().write_all(bytes).unwrap();
    p
}

/// A valid trace of `kind` holding these requests (ids, sizes, times).
fn valid(kind: u8, reqs: &[(u64, u32, u32)]) -> Vec<u8> {
    let mut out = Vec::new();
    match kind % 6 {
        0 => {
            for (k, &(id, n, _)) in reqs.iter().enumerate() {
                out.extend_from_slice(format!("{} {} 0 {k}\n", id % 1_000_000, n % 64).as_bytes());
            }
        }
        1 => {
            out.extend_from_slice(b"time,id,size\n");
            for &(id, n, t) in reqs {
                out.extend_from_slice(format!("{t},{id},{n}\n").as_bytes());
            }
        }
        2 => {
            for (k, &(id, n, t)) in reqs.iter().enumerate() {
                let line = format!("  8,0    1   {k}  {t}.000000000  123  Q   R {id} + {} [fio]\n", n % 256);
                out.extend_from_slice(line.as_bytes());
            }
        }
        3 => {
            for &(id, _, _) in reqs {
                out.extend_from_slice(format!("{id}\n").as_bytes());
            }
        }
        4 => {
            let v: Vec<Request> = reqs
                .iter()
                .map(|&(id, n, t)| Request {
                    id,
                    size: n,
                    time: u64::from(t) * 1_000_000_000,
                    ..Default::default()
                })
                .collect();
            trace::oracle::write_oracle(&v, &mut out).unwrap();
        }
        _ => {
            for (k, &(id, n, t)) in reqs.iter().enumerate() {
                out.extend_from_slice(&(k as u32).to_le_bytes());
                out.extend_from_slice(&n.to_le_bytes());
                out.extend_from_slice(&1u32.to_le_bytes());
                out.extend_from_slice(&0x28u16.to_le_bytes());
                out.extend_from_slice(&0x0100u16.to_le_bytes());
                out.extend_from_slice(&id.to_le_bytes());
                out.extend_from_slice(&u64::from(t).to_le_bytes());
            }
        }
    }
    out
}

/// Byte edits: (position, kind, byte): overwrite, insert, cut the rest.
fn edit(mut b: Vec<u8>, edits: &[(usize, u8, u8)]) -> Vec<u8> {
    for &(pos, kind, byte) in edits {
        if b.is_empty() {
            b.push(byte);
            continue;
        }
        let i = pos % b.len();
        match kind % 4 {
            0 | 1 => b[i] = byte,
            2 => b.insert(i, byte),
            _ => b.truncate(i),
        }
    }
    b
}

/// Reads every request (an error is fine), no more than the bytes can describe.
fn read_all(path: &std::path::Path, format: Option<Format>, len: usize) {
    let Ok((_, mut r)) = trace::open(path, format) else { return };
    let mut batch = vec![Request::default(); 64];
    let mut n = 0u64;
    // A .lis line of 30 bytes may stand for 2^63 requests: the bound is per line there.
    let bound = (len as u64 + 1) * 1_000_000;
    while let Ok(k) = r.next_batch(&mut batch) {
        if k == 0 {
            return;
        }
        n += k as u64;
        assert!(n <= bound, "{n} requests from {len} bytes");
        if n > 200_000 {
            return;
        }
    }
}

fn check(bytes: Vec<u8>, compress: bool) {
    let data = if compress { zstd::encode_all(&bytes[..], 1).unwrap() } else { bytes };
    let path = file(&data);
    read_all(&path, None, data.len());
    for f in ["lis", "csv", "oracle", "vscsi", "blkparse", "txt"] {
        read_all(&path, Some(Format::parse(f).unwrap()), data.len());
    }
    for (policies, sizes, block_size) in [
        (r#"["lru","arc"]"#, "[1,3,100]", 4096),
        (r#"["lru"]"#, "[1,2,3,4,5,6]", 512),
        (r#"["zfs-arc"]"#, "[16384]", 4096),
    ] {
        let spec = format!(
            r#"{{"trace":{:?},"policies":{policies},"sizes":{sizes},"block_size":{block_size},"max_requests":100000,"threads":2}}"#,
            path.display().to_string()
        );
        let _ = replay_json(&spec);
    }
    let _ = std::fs::remove_file(&path);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn edited_traces_are_read_or_refused_never_panic(
        kind in 0u8..6,
        reqs in proptest::collection::vec((any::<u64>(), any::<u32>(), any::<u32>()), 0..40),
        edits in proptest::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 0..4),
        compress in proptest::bool::weighted(0.25),
    ) {
        check(edit(valid(kind, &reqs), &edits), compress);
    }

    #[test]
    fn random_bytes_are_read_or_refused_never_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..400),
        compress in proptest::bool::weighted(0.25),
    ) {
        check(bytes, compress);
    }
}
