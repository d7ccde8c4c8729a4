use super::*;
use std::io::Write;

pub(crate) fn shared(p: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces").join(p)
}

fn all(path: &Path, f: Option<Format>) -> Result<(Format, Vec<Request>)> {
    let (fmt, mut r) = open(path, f)?;
    let mut v = Vec::new();
    while let Some(q) = r.next_request()? {
        v.push(q);
    }
    Ok((fmt, v))
}

fn tmp(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ztwin-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::File::create(&p).unwrap().write_all(bytes).unwrap();
    p
}

#[test]
fn oltp_lis_counts_as_the_paper() {
    let p = shared("arc-paper/OLTP.lis.zst");
    if !p.exists() {
        return;
    }
    let (fmt, v) = all(&p, None).unwrap();
    assert_eq!(fmt, Format::Lis);
    assert_eq!(v.len(), 914_145);
    let u: hashbrown::HashSet<u64> = v.iter().map(|r| r.id).collect();
    assert_eq!(u.len(), 186_880);
}

#[test]
fn cloudphysics_four_encodings_same_ids() {
    let names = [
        ("cloudPhysicsIO.vscsi", Format::Vscsi),
        ("cloudPhysicsIO.oracleGeneral.bin", Format::OracleGeneral),
        ("cloudPhysicsIO.csv", Format::Csv),
        ("cloudPhysicsIO.txt", Format::Text),
    ];
    if !shared(names[0].0).exists() {
        return;
    }
    let mut seqs = Vec::new();
    for (n, f) in names {
        let (fmt, v) = all(&shared(n), None).unwrap();
        assert_eq!(fmt, f, "{n}");
        assert_eq!(v.len(), 113_872, "{n}");
        seqs.push(v);
    }
    for s in &seqs[1..] {
        assert!(s.iter().zip(&seqs[0]).all(|(a, b)| a.id == b.id));
    }
    // vscsi and csv carry the same sizes, ops and times (csv in whole seconds).
    assert!(seqs[0].iter().zip(&seqs[2]).all(|(a, b)| a.size == b.size && a.op == b.op));
    assert_eq!(seqs[0].iter().filter(|r| r.op == Op::Read).count(), 46_974);
}

#[test]
fn zstd_is_detected_from_content() {
    let text = b"5\n7\n5\n";
    let z = zstd::encode_all(&text[..], 3).unwrap();
    let p = tmp("ids.not-a-zst-name", &z);
    let (fmt, v) = all(&p, None).unwrap();
    assert_eq!(fmt, Format::Text);
    assert_eq!(v.iter().map(|r| r.id).collect::<Vec<_>>(), vec![5, 7, 5]);
}

#[test]
fn blkparse_q_events() {
    let text = "  8,0    3        1     0.000000000   697  Q   R 223490 + 8 [kjournald]\n\
                  8,0    3        2     0.000001000   697  G   R 223490 + 8 [kjournald]\n\
                  8,0    3        3     0.000002500   697  Q  WS 100 + 16 [mysqld]\n\
                  8,0    3        4     0.000003000   697  Q  FWS [mysqld]\n\
                CPU3 (8,0):\n Reads Queued:           1,        4KiB\n";
    let p = tmp("b.txt", text.as_bytes());
    let (fmt, v) = all(&p, None).unwrap();
    assert_eq!(fmt, Format::Blkparse);
    assert_eq!(v.len(), 2);
    assert_eq!(v[0], Request { id: 223490, size: 4096, time: 0, op: Op::Read });
    assert_eq!(v[1], Request { id: 100, size: 8192, time: 2500, op: Op::Write });
}

#[test]
fn csv_without_header_and_bad_fields() {
    let p = tmp("c.csv", b"1,10,4096,r\n2,11,4096,w\n");
    let (_, v) = all(&p, None).unwrap();
    assert_eq!(v[1], Request { id: 11, size: 4096, time: 2_000_000_000, op: Op::Write });
    let p = tmp("c2.csv", b"time,obj_id,size\n1,10,4096\n2,x11,4096\n");
    let e = all(&p, None).unwrap_err().to_string();
    assert!(e.contains("line 3") && e.contains("column 2 (id)") && e.contains("x11"), "{e}");
}

#[test]
fn errors_name_the_place() {
    // Truncated oracleGeneral record.
    let mut b = Vec::new();
    for i in 0..3u64 {
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&i.to_le_bytes());
        b.extend_from_slice(&512u32.to_le_bytes());
        b.extend_from_slice(&(-1i64).to_le_bytes());
    }
    b.extend_from_slice(&[1, 2, 3, 4, 5]);
    let p = tmp("t.bin", &b);
    let e = all(&p, None).unwrap_err().to_string();
    assert!(e.contains("byte offset 72") && e.contains("truncated record") && e.contains("found 5"), "{e}");
    // A non-numeric .lis field.
    let p = tmp("t.lis", b"1 2 0 0\n3 x 0 1\n");
    let e = all(&p, None).unwrap_err().to_string();
    assert!(e.contains("line 2") && e.contains("number_of_blocks") && e.contains("\"x\""), "{e}");
    // A binary file given as text.
    let p = tmp("t2.bin", &b[..48]);
    let e = all(&p, Some(Format::Text)).unwrap_err().to_string();
    assert!(e.contains("byte offset 0") && e.contains("expected text"), "{e}");
    // A .lis line with 3 fields.
    let p = tmp("t3.lis", b"1 2 0 0\n3 4 0\n");
    let e = all(&p, Some(Format::Lis)).unwrap_err().to_string();
    assert!(e.contains("line 2") && e.contains("expected 4 integers"), "{e}");
}

#[test]
fn oracle_roundtrip() {
    let reqs: Vec<Request> = [3u64, 4, 3, 9, 4]
        .iter()
        .enumerate()
        .map(|(i, &id)| Request { id, size: 512, time: i as u64 * 1_000_000_000, op: Op::Other })
        .collect();
    let mut out = Vec::new();
    oracle::write_oracle(&reqs, &mut out).unwrap();
    assert_eq!(i64::from_le_bytes(out[16..24].try_into().unwrap()), 3);
    let p = tmp("rt.bin", &out);
    let (fmt, v) = all(&p, None).unwrap();
    assert_eq!(fmt, Format::OracleGeneral);
    assert_eq!(v.iter().map(|r| r.id).collect::<Vec<_>>(), vec![3, 4, 3, 9, 4]);
}

#[test]
fn a_negative_lis_count_is_an_error_not_endless_requests() {
    let p = tmp("neg.lis", b"0 10 0 0\n100 -5 0 0\n");
    let e = all(&p, Some(Format::Lis)).unwrap_err().to_string();
    assert!(
        e.contains("line 2") && e.contains("number_of_blocks") && e.contains("must not be negative"),
        "{e}"
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// A `.lis` read in batches (a line's run at once) gives the requests read one at a time.
    #[test]
    fn lis_batches_equal_single_requests(
        lines in proptest::collection::vec((0u64..1_000_000, 0u64..300, proptest::bool::weighted(0.05)), 0..80),
        batch in 1usize..700,
    ) {
        let mut text = String::new();
        for (k, (start, n, blank)) in lines.iter().enumerate() {
            if *blank {
                text.push('\n');
            }
            text.push_str(&format!("{start} {n} 0 {k}\n"));
        }
        let p = tmp(&format!("batch-{}.lis", lines.len() * 1000 + batch), text.as_bytes());
        let (_, one) = all(&p, Some(Format::Lis)).unwrap();
        let (_, mut r) = open(&p, Some(Format::Lis)).unwrap();
        let mut got = Vec::new();
        let mut buf = vec![Request::default(); batch];
        loop {
            let k = r.next_batch(&mut buf).unwrap();
            if k == 0 {
                break;
            }
            got.extend_from_slice(&buf[..k]);
        }
        proptest::prop_assert_eq!(got, one);
    }
}
