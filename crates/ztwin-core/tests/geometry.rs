//! Integration tests of the block-pointer tree and compression models through the public API.

use ztwin_core::config::Compression;
use ztwin_core::fs::zfs::compression::CompressionModel;
use ztwin_core::fs::zfs::geometry::{geometry_json, FileGeometry};

/// Physical metadata of experiment 1's table file (ashift 9, as the zdb sample's 0x1600
/// psize implies): its 1147 indirect blocks, the partial last block of each level
/// compressing to fewer sectors.
#[test]
fn experiment1_physical_metadata() {
    let g = FileGeometry::new(145_447 * 16 * 1024, 16 * 1024, 16 * 1024);
    let m = CompressionModel::new(Compression::Lz4, 1.28, 9, 1).unwrap();
    let mut physical = 0u64;
    for level in 1..g.nlevels() {
        for blkid in 0..g.blocks_at(level) {
            physical += u64::from(m.indirect_psize(g.indirect_block_size(), g.children_of(level, blkid)));
        }
    }
    // 1136 full L1 (5632) + L1 of 39 pointers (1716 -> 2048) + 8 full L2 + L2 of 113
    // (4972 -> 5120) + L3 of 9 (396 -> 512).
    assert_eq!(physical, 1136 * 5632 + 2048 + 8 * 5632 + 5120 + 512);
}

#[test]
fn json_entry_point() {
    let out = geometry_json(
        r#"{"recordsize": 131072, "indirect_block_size": 131072, "files": [{"size": 1073741824, "count": 1}]}"#,
    )
    .unwrap();
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["per_file"]["nlevels"], 3);
    assert_eq!(v["metadata_bytes"], 9 * 131072);
}
