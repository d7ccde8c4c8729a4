use super::*;
use proptest::prelude::*;

const GIB: u64 = 1 << 30;

fn params(max: u64) -> WriteParams {
    WriteParams::new(&TxgTunables { zfs_dirty_data_max: max, ..Default::default() }, 16 * GIB, false)
}

#[test]
fn dirty_data_max_is_ten_percent_of_ram_capped() {
    let t = TxgTunables::default();
    // 24 GiB: 10% = 2.4 GiB, under min(4 GiB, 6 GiB).
    assert_eq!(WriteParams::new(&t, 24 * GIB, false).dirty_data_max, 24 * GIB / 10);
    // 64 GiB: 6.4 GiB capped by zfs_dirty_data_max_max = min(4 GiB, 16 GiB).
    assert_eq!(WriteParams::new(&t, 64 * GIB, false).dirty_data_max, 4 * GIB);
    // An explicit max_max caps it lower.
    let t2 = TxgTunables { zfs_dirty_data_max_max: GIB, ..t };
    assert_eq!(WriteParams::new(&t2, 24 * GIB, false).dirty_data_max, GIB);
    let p = WriteParams::new(&t, 24 * GIB, false);
    assert_eq!(p.txg_timeout_ns, 5 * SEC);
    assert_eq!(p.sync_min_bytes(), p.dirty_data_max / 5);
}

#[test]
fn delay_matches_dmu_tx_delay() {
    let max = 1000 * 1_000_000u64;
    let p = params(max);
    // Up to 60% of the max: no delay.
    assert_eq!(tx_delay_ns(&p, 0), 0);
    assert_eq!(tx_delay_ns(&p, max * 6 / 10), 0);
    // 500000 * (dirty - 0.6 max) / (max - dirty): 0.5 ms at 80%, 1.5 ms at 90%,
    // 4.5 ms at 96%, 20 ms at 0.99 * max... capped at 100 ms.
    assert_eq!(tx_delay_ns(&p, max * 8 / 10), 500_000);
    assert_eq!(tx_delay_ns(&p, max * 9 / 10), 1_500_000);
    assert_eq!(tx_delay_ns(&p, max * 96 / 100), 4_500_000);
    assert_eq!(tx_delay_ns(&p, max * 99 / 100), 19_500_000);
    assert_eq!(tx_delay_ns(&p, max - 1), ZFS_DELAY_MAX_NS);
}

#[test]
fn delayed_writers_are_spaced_by_the_delay() {
    let max = 1000 * 1_000_000u64;
    let mut t = Txgs::new(params(max), u32::MAX);
    // Dirty 80% (0.5 ms per tx): two txs started at once wake 0.5 ms apart.
    let rec = 1_000_000u64;
    for k in 0..(max * 8 / 10 / rec) {
        t.dirty(k, rec as u32, 0);
    }
    assert_eq!(t.assign(1000, 1000), Assign::At(501_000));
    assert_eq!(t.assign(1000, 1000), Assign::At(1_001_000));
    // A tx that started long enough ago goes on.
    assert_eq!(t.assign(0, 10_000_000), Assign::At(10_000_000));
    // At the max: wait.
    for k in 10_000..10_300 {
        t.dirty(k, rec as u32, 0);
    }
    assert!(t.dirty_total() >= max);
    assert_eq!(t.assign(0, 0), Assign::Wait);
}

#[test]
fn async_write_concurrency_ramps_with_dirty_data() {
    let p = params(1000);
    assert_eq!(max_async_writes(&p, 0), 2);
    assert_eq!(max_async_writes(&p, 299), 2);
    assert_eq!(max_async_writes(&p, 450), 6);
    assert_eq!(max_async_writes(&p, 601), 10);
}

#[test]
fn a_txg_syncs_at_the_timeout_or_past_the_threshold() {
    let max = 1000 * 1_000_000u64;
    let mut t = Txgs::new(params(max), u32::MAX);
    assert_eq!(t.sync_due(), None, "nothing dirty, nothing to sync");
    t.dirty(1, 131072, 2 * SEC);
    assert!(!t.dirty(1, 131072, 3 * SEC), "a record is charged once per txg");
    assert_eq!(t.open_bytes(), 131072);
    assert_eq!(t.sync_due(), Some(5 * SEC), "zfs_txg_timeout after the last sync start (0)");
    let mut out = Vec::new();
    assert_eq!(t.begin_sync(5 * SEC, &mut out), 1);
    assert_eq!(out, vec![(1, 131072)]);
    // While it syncs, the open txg dirties past 20% of the max: due when the sync ends.
    for k in 10..(10 + max / 5 / 131072 + 1) {
        t.dirty(k, 131072, 6 * SEC);
    }
    assert_eq!(t.sync_due(), None, "one txg syncs at a time");
    t.undirty(131072);
    t.sync_done(7 * SEC);
    assert_eq!(t.sync_due(), Some(7 * SEC), "kicked at 6 s, it waited for the sync to end");
    assert_eq!(t.begin_sync(7 * SEC, &mut out), 2);
}

#[test]
fn release_0_8_compares_the_total_with_the_threshold() {
    let max = 1000 * 1_000_000u64;
    let p = WriteParams { sync_on_total: true, ..params(max) };
    let mut t = Txgs::new(p, u32::MAX);
    let mut out = Vec::new();
    for k in 0..1000 {
        t.dirty(k, 131072, 0);
    }
    let syncing = t.begin_sync(0, &mut out);
    assert_eq!(syncing, 1);
    // The open txg is small, but the total (syncing bytes not yet written) is over 20%.
    t.dirty(5000, 131072, SEC);
    t.sync_done(2 * SEC);
    // sync_done gave back everything: now only the open txg's 128K are dirty.
    assert_eq!(t.dirty_total(), 131072);
    assert_eq!(t.sync_due(), Some(5 * SEC));
}

proptest! {
    /// Dirty bytes: each record charged once per txg; the total is the open txg's bytes
    /// plus the syncing txg's bytes not yet given back, never below zero.
    #[test]
    fn dirty_accounting_balances(keys in proptest::collection::vec(0u64..64, 1..200), split in 0usize..200) {
        let mut t = Txgs::new(params(1 << 40), u32::MAX);
        let split = split.min(keys.len());
        for &k in &keys[..split] {
            t.dirty(k, 4096, 0);
        }
        let mut out = Vec::new();
        t.begin_sync(0, &mut out);
        let first: std::collections::BTreeSet<u64> = keys[..split].iter().copied().collect();
        prop_assert_eq!(out.len(), first.len());
        for &k in &keys[split..] {
            t.dirty(k, 4096, 0);
        }
        let second: std::collections::BTreeSet<u64> = keys[split..].iter().copied().collect();
        prop_assert_eq!(t.dirty_total(), 4096 * (first.len() + second.len()) as u64);
        t.undirty(4096);
        t.sync_done(1);
        prop_assert_eq!(t.dirty_total(), 4096 * second.len() as u64);
    }
}
