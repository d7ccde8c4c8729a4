//! Published table sizes against the InnoDB layout model (no fitting: the model comes
//! from the record format and InnoDB's space management; see `db::innodb::btree`).

use ztwin_core::db::innodb::btree::TableLayout;

const MIB: f64 = 1024.0 * 1024.0;

/// Experiment 1: one 10M-row table, ZFS shows 145447 L0 blocks of 16 KiB per file
/// (about 2.38 GB). zdb counts blocks exactly and zero-filled (extended, never written)
/// pages are holes under compression, so it compares with the pages InnoDB writes. 0.1%
/// covers the few pages the model leaves out (see the module's simplifications).
#[test]
fn experiment1_ten_million_rows() {
    let t = TableLayout::sysbench(10_000_000, 16384);
    let d = t.data_pages();
    println!(
        "10M rows: data pages {d}, file pages {}, file {:.3} GB",
        t.file_pages(),
        t.file_size() as f64 / 1e9
    );
    assert!((d as f64 / 145_447.0 - 1.0).abs() < 0.001, "{d}");
    assert!((d as f64 * 16384.0 / 1e9 - 2.38).abs() < 0.01);
}

/// Experiment 7: 8 tables of 500k rows, "about 966 MB of data and index". The unit and
/// the tool are not stated (du/ls of .ibd files, or information_schema sizes, in MB or
/// MiB: 4.9% apart), and the published figure is rounded to "about": we accept 5%
/// around the file sizes in MiB.
#[test]
fn experiment7_eight_half_million_row_tables() {
    let t = TableLayout::sysbench(500_000, 16384);
    let total = 8.0 * t.file_size() as f64 / MIB;
    let data = 8.0 * t.data_pages() as f64 * 16384.0 / MIB;
    println!("8 x 500k: files {total:.1} MiB, data {data:.1} MiB");
    assert!((total / 966.0 - 1.0).abs() < 0.05, "{total}");
}

/// Experiment 8: one table of 2.65M rows, "636 MB of data and index". Same 5% as
/// experiment 7, for the same reasons.
#[test]
fn experiment8_one_table() {
    let t = TableLayout::sysbench(2_650_000, 16384);
    let total = t.file_size() as f64 / MIB;
    let data = t.data_pages() as f64 * 16384.0 / MIB;
    println!(
        "2.65M: file {total:.1} MiB, data {data:.1} MiB, depth {} / {}",
        t.clustered_depth(),
        t.secondary_depth()
    );
    assert!((total / 636.0 - 1.0).abs() < 0.05, "{total}");
}
