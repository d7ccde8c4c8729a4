//! Transaction groups and the write throttle: dirty data accounting, when a txg syncs,
//! how long a writer is delayed, and how a txg's writes reach the vdevs' queues.
//!
//! Sources (module/zfs, read at zfs-0.8.6, 2.1.0 and 2.2.7; the mechanisms are the same
//! in the three unless said):
//! - Dirty accounting (`dsl_pool.c`): `dbuf_dirty` of a block not yet dirty in the open
//!   txg charges its size (`dr_accounted` = the dbuf's lsize, a whole record for a 4K
//!   write) through `dmu_objset_willuse_space` -> `dsl_pool_dirty_space` to
//!   `dp_dirty_pertxg[txg]` and `dp_dirty_total`; `dbuf_write_done` gives it back
//!   (`dsl_pool_undirty_space`) when the block's write completes. 0.8 gives it back as
//!   the physical writes complete (`dbuf_write_physdone`), which is what we model in both.
//! - `zfs_dirty_data_max` (`arc_init`): `zfs_dirty_data_max_percent` (10) % of RAM, capped
//!   by `zfs_dirty_data_max_max` = min(4 GiB, `zfs_dirty_data_max_max_percent` (25) % of
//!   RAM).
//! - The throttle (`dmu_tx.c` `dmu_tx_try_assign`, `dmu_tx_wait`, `dmu_tx_delay`): a tx
//!   assigned while `dp_dirty_total` exceeds `zfs_delay_min_dirty_percent` (60) % of the
//!   max waits while it is at or above `zfs_dirty_data_max`, then sleeps until
//!   `max(tx_start + t, dp_last_wakeup + t)` with
//!   `t = min(zfs_delay_scale * (dirty - min) / (max - dirty), zfs_delay_max_ns)`
//!   (`zfs_delay_scale` 500000 ns, `zfs_delay_max_ns` 100 ms), so delayed writers are
//!   spaced `t` apart. The 2.2 TX_WRITE log limit (`zfs_wrlog_data_max`, twice the dirty
//!   max) is not modelled: it needs more log bytes than twice the dirty maximum.
//! - When a txg syncs (`txg.c` `txg_sync_thread`): `zfs_txg_timeout` (5 s) after the start
//!   of the previous sync, or at once when dirty data passes
//!   `zfs_dirty_data_sync_percent` (20) % of the max: 0.8 compares `dp_dirty_total` in
//!   the sync thread's loop; 2.x compares the open txg's `dp_dirty_pertxg` in
//!   `dsl_pool_dirty_space` and kicks the thread (`txg_kick`). One thread syncs txgs one
//!   after the other, so a txg cannot sync before the previous one has finished.
//!   Quiescing takes no time here (writes hold a txg open only for their copy).
//! - The vdev queue's async write class (`vdev_queue.c`, see `fs::zfs::vdev_queue`, which
//!   issues and aggregates the sync's writes): at most `vdev_queue_max_async_writes` per
//!   leaf, which ramps from `zfs_vdev_async_write_min_active` (2) at
//!   `zfs_vdev_async_write_active_min_dirty_percent` (30) % of the dirty max to
//!   `zfs_vdev_async_write_max_active` (10) at `..._max_dirty_percent` (60) %.

pub use crate::config::TxgTunables;
use crate::sim::time::{Nanos, SEC};
use hashbrown::HashMap;

/// zfs_delay_max_ns (dsl_pool.c / dmu_tx.c: 100 ms, not a module parameter).
pub const ZFS_DELAY_MAX_NS: Nanos = 100_000_000;

/// The resolved write-path parameters.
#[derive(Debug, Clone, Copy)]
pub struct WriteParams {
    /// zfs_dirty_data_max, bytes.
    pub dirty_data_max: u64,
    /// zfs_dirty_data_sync_percent.
    pub dirty_data_sync_percent: u32,
    /// zfs_delay_min_dirty_percent.
    pub delay_min_dirty_percent: u32,
    /// zfs_delay_scale, ns.
    pub delay_scale: u64,
    /// zfs_txg_timeout, ns.
    pub txg_timeout_ns: Nanos,
    /// zfs_vdev_aggregation_limit, bytes.
    pub aggregation_limit: u32,
    /// zfs_vdev_aggregation_limit_non_rotating, bytes.
    pub aggregation_limit_non_rotating: u32,
    /// zfs_vdev_async_write_min_active.
    pub async_write_min_active: u32,
    /// zfs_vdev_async_write_max_active.
    pub async_write_max_active: u32,
    /// zfs_vdev_async_write_active_{min,max}_dirty_percent (30, 60).
    pub active_min_dirty_percent: u32,
    /// See `active_min_dirty_percent`.
    pub active_max_dirty_percent: u32,
    /// 0.8 compares dp_dirty_total with the sync threshold; 2.x the open txg's dirty bytes.
    pub sync_on_total: bool,
}

fn or(v: u64, default: u64) -> u64 {
    if v == 0 {
        default
    } else {
        v
    }
}

impl WriteParams {
    /// The parameters of a machine with `ram_bytes` of memory (arc_init's computation of
    /// zfs_dirty_data_max), `sync_on_total` for 0.8.
    pub fn new(t: &TxgTunables, ram_bytes: u64, sync_on_total: bool) -> WriteParams {
        let max_max = or(t.zfs_dirty_data_max_max, (4u64 << 30).min(pct(ram_bytes, 25)));
        let dirty_data_max = or(t.zfs_dirty_data_max, pct(ram_bytes, 10).min(max_max)).max(1);
        WriteParams {
            dirty_data_max,
            dirty_data_sync_percent: or(t.zfs_dirty_data_sync_percent.into(), 20) as u32,
            delay_min_dirty_percent: or(t.zfs_delay_min_dirty_percent.into(), 60) as u32,
            delay_scale: or(t.zfs_delay_scale, 500_000),
            txg_timeout_ns: or(t.zfs_txg_timeout.into(), 5) * SEC,
            aggregation_limit: or(t.zfs_vdev_aggregation_limit.into(), 1 << 20) as u32,
            aggregation_limit_non_rotating: or(t.zfs_vdev_aggregation_limit_non_rotating.into(), 128 << 10)
                as u32,
            async_write_min_active: or(t.zfs_vdev_async_write_min_active.into(), 2) as u32,
            async_write_max_active: or(t.zfs_vdev_async_write_max_active.into(), 10) as u32,
            active_min_dirty_percent: 30,
            active_max_dirty_percent: 60,
            sync_on_total,
        }
    }

    /// Dirty bytes above which writers are delayed.
    pub fn delay_min_bytes(&self) -> u64 {
        pct(self.dirty_data_max, self.delay_min_dirty_percent)
    }

    /// Dirty bytes above which a txg syncs before its timeout.
    pub fn sync_min_bytes(&self) -> u64 {
        pct(self.dirty_data_max, self.dirty_data_sync_percent)
    }
}

fn pct(v: u64, p: u32) -> u64 {
    (u128::from(v) * u128::from(p) / 100) as u64
}

/// dmu_tx_delay's minimum transaction time at `dirty` bytes (< the max): 0 up to the
/// delay threshold, then `zfs_delay_scale * (dirty - min) / (max - dirty)`, at most 100 ms.
pub fn tx_delay_ns(p: &WriteParams, dirty: u64) -> Nanos {
    let min = pct(p.dirty_data_max, p.delay_min_dirty_percent);
    if dirty <= min {
        return 0;
    }
    debug_assert!(dirty < p.dirty_data_max, "the caller waited until under the max");
    let left = p.dirty_data_max.saturating_sub(dirty).max(1);
    let t = u128::from(p.delay_scale) * u128::from(dirty - min) / u128::from(left);
    t.min(u128::from(ZFS_DELAY_MAX_NS)) as Nanos
}

/// vdev_queue_max_async_writes: writes one leaf keeps issued at `dirty` bytes.
pub fn max_async_writes(p: &WriteParams, dirty: u64) -> u32 {
    let min_bytes = pct(p.dirty_data_max, p.active_min_dirty_percent);
    let max_bytes = pct(p.dirty_data_max, p.active_max_dirty_percent);
    if dirty < min_bytes {
        return p.async_write_min_active;
    }
    if dirty > max_bytes {
        return p.async_write_max_active;
    }
    let span = u64::from(p.async_write_max_active - p.async_write_min_active.min(p.async_write_max_active));
    ((dirty - min_bytes) * span / (max_bytes - min_bytes).max(1)) as u32 + p.async_write_min_active
}

/// What a tx must do before it may dirty data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Assign {
    /// Dirty data is at the maximum: wait until writes free some (dmu_tx_wait).
    Wait,
    /// Go on at this time (the tx's start, or later by dmu_tx_delay).
    At(Nanos),
}

/// A record's charge in the open txg carries this bit once dmu_sync has written it for the
/// intent log (`DR_OVERRIDDEN`): the sync then writes no data for it (charges are at most
/// 16 MiB, so the bit is free).
pub const OVERRIDDEN: u32 = 1 << 31;

/// With [`OVERRIDDEN`]: a Direct I/O write (2.3, `dmu_write_direct`) wrote the record; its
/// dbuf holds no data (`DB_NOFILL`, then `DB_UNCACHED` with `dr_diowrite`), so a reader or
/// a partial write reads it from its new place.
pub const DIRECT: u32 = 1 << 30;

/// The flag bits of a record's charge.
pub const FLAGS: u32 = OVERRIDDEN | DIRECT;

/// The pool's txgs: the open one's dirty records, the one syncing, and the throttle's state.
#[derive(Debug)]
pub struct Txgs {
    /// The resolved parameters.
    pub params: WriteParams,
    /// Number of the open txg.
    open_txg: u64,
    /// Records dirtied in the open txg (BlockKey of the L0 block) and the bytes charged.
    open: HashMap<u64, u32>,
    open_bytes: u64,
    /// dp_dirty_total: open plus syncing bytes not yet written.
    dirty_total: u64,
    /// The txg syncing, if any, and its dirty bytes not yet written.
    syncing: Option<u64>,
    syncing_bytes: u64,
    /// When the last sync started (the timeout counts from it) and ended (the next cannot
    /// start before: one txg syncs at a time).
    last_sync_start: Nanos,
    last_sync_end: Nanos,
    /// When dirty data passed the sync threshold (the thread is kicked then).
    kicked_at: Option<Nanos>,
    /// dp_last_wakeup.
    last_wakeup: Nanos,
    /// Most dirty bytes seen.
    pub dirty_high: u64,
    /// Txgs synced.
    pub txgs_synced: u64,
    /// Txs delayed by dmu_tx_delay.
    pub delayed_txs: u64,
    /// Txs that found dirty data at the max (dmu_tx_dirty_over_max).
    pub waited_txs: u64,
}

impl Txgs {
    /// Bytes of simulator memory the open txg's map takes as [`Txgs::new`] makes it.
    pub fn memory_bytes(params: &WriteParams, record_bytes: u32) -> u64 {
        let records = (params.dirty_data_max / u64::from(record_bytes.max(512))).min(1 << 20);
        // hashbrown: a power of two of buckets at most 7/8 full, a control byte each.
        let buckets = (records * 8).div_ceil(7).max(1).next_power_of_two();
        buckets * (std::mem::size_of::<(u64, u32)>() + 1) as u64
    }

    /// No txg synced yet, nothing dirty. The open txg's map is sized for
    /// `zfs_dirty_data_max` of records of `record_bytes` (at most 2^20 entries; beyond that
    /// it grows to its high-water mark once and is reused: draining keeps the capacity).
    pub fn new(params: WriteParams, record_bytes: u32) -> Txgs {
        let records = params.dirty_data_max / u64::from(record_bytes.max(512));
        Txgs {
            params,
            open_txg: 1,
            open: HashMap::with_capacity(records.min(1 << 20) as usize),
            open_bytes: 0,
            dirty_total: 0,
            syncing: None,
            syncing_bytes: 0,
            last_sync_start: 0,
            last_sync_end: 0,
            kicked_at: None,
            last_wakeup: 0,
            dirty_high: 0,
            txgs_synced: 0,
            delayed_txs: 0,
            waited_txs: 0,
        }
    }

    /// dp_dirty_total.
    pub fn dirty_total(&self) -> u64 {
        self.dirty_total
    }

    /// Dirty bytes of the open txg.
    pub fn open_bytes(&self) -> u64 {
        self.open_bytes
    }

    /// Whether record `key` is dirty in the open txg with its data in memory (its dbuf
    /// holds it; not after a Direct I/O write, whose data went to disk).
    pub fn is_dirty(&self, key: u64) -> bool {
        self.open.get(&key).is_some_and(|v| v & DIRECT == 0)
    }

    /// A Direct I/O write of record `key` (lsize `bytes`) at `now` (`dmu_write_direct`):
    /// `dmu_buf_will_clone_or_dio` undirties what the open txg had of it, then the record
    /// is dirty again, charged its size (`dr_accounted`), and overridden: the sync writes no
    /// data for it.
    pub fn dirty_direct(&mut self, key: u64, bytes: u32, now: Nanos) {
        self.dirty(key, bytes, now);
        if let Some(v) = self.open.get_mut(&key) {
            *v |= OVERRIDDEN | DIRECT;
        }
    }

    /// The txg syncing, if any.
    pub fn syncing(&self) -> Option<u64> {
        self.syncing
    }

    /// Number of the open txg.
    pub fn open_txg(&self) -> u64 {
        self.open_txg
    }

    /// The last txg on disk (`spa_last_synced_txg`; 0 before the first).
    pub fn last_synced(&self) -> u64 {
        self.open_txg - 1 - u64::from(self.syncing.is_some())
    }

    /// dmu_sync of record `key` dirty in the open txg: marks it overridden (the sync will
    /// not write its data). False if it is not dirty in the open txg or already
    /// overridden (`EALREADY`).
    pub fn override_record(&mut self, key: u64) -> bool {
        match self.open.get_mut(&key) {
            Some(v) if *v & OVERRIDDEN == 0 => {
                *v |= OVERRIDDEN;
                true
            }
            _ => false,
        }
    }

    /// dmu_tx_assign of a tx started at `tx_start`, at `now`.
    pub fn assign(&mut self, tx_start: Nanos, now: Nanos) -> Assign {
        let p = self.params;
        if self.dirty_total <= p.delay_min_bytes() {
            return Assign::At(now);
        }
        if self.dirty_total >= p.dirty_data_max {
            self.waited_txs += 1;
            return Assign::Wait;
        }
        let t = tx_delay_ns(&p, self.dirty_total);
        if t == 0 || now > tx_start + t {
            return Assign::At(now);
        }
        let wakeup = (tx_start + t).max(self.last_wakeup + t);
        self.last_wakeup = wakeup;
        self.delayed_txs += 1;
        Assign::At(wakeup.max(now))
    }

    /// dbuf_dirty of record `key` (lsize `bytes`) at `now`: true if newly dirty in the
    /// open txg (its bytes are charged).
    pub fn dirty(&mut self, key: u64, bytes: u32, now: Nanos) -> bool {
        if let Some(v) = self.open.get_mut(&key) {
            // Dirtied again after dmu_sync (or a Direct I/O write) wrote it:
            // dbuf_unoverride, the sync writes it.
            *v &= !FLAGS;
            return false;
        }
        self.open.insert(key, bytes);
        self.open_bytes += u64::from(bytes);
        self.dirty_total += u64::from(bytes);
        self.dirty_high = self.dirty_high.max(self.dirty_total);
        let over = if self.params.sync_on_total {
            self.dirty_total >= self.params.sync_min_bytes()
        } else {
            self.open_bytes > self.params.sync_min_bytes()
        };
        if over && self.kicked_at.is_none() {
            self.kicked_at = Some(now);
        }
        true
    }

    /// When the sync thread starts the next sync (None: nothing to sync, or a sync runs).
    pub fn sync_due(&self) -> Option<Nanos> {
        if self.syncing.is_some() || self.open.is_empty() {
            return None;
        }
        let timeout = self.last_sync_start + self.params.txg_timeout_ns;
        // A txg kicked (or timed out) while the previous one synced waits for it.
        Some(self.kicked_at.map_or(timeout, |k| k.min(timeout)).max(self.last_sync_end))
    }

    /// Quiesces the open txg and starts syncing it at `now`: its records (L0 keys and
    /// charged bytes, with [`OVERRIDDEN`] set on those dmu_sync wrote), sorted by key, go to
    /// `out`. Returns the txg number.
    pub fn begin_sync(&mut self, now: Nanos, out: &mut Vec<(u64, u32)>) -> u64 {
        debug_assert!(self.syncing.is_none());
        out.clear();
        out.extend(self.open.drain());
        out.sort_unstable();
        let txg = self.open_txg;
        self.open_txg += 1;
        self.syncing = Some(txg);
        self.syncing_bytes = self.open_bytes;
        self.open_bytes = 0;
        self.last_sync_start = now;
        // Dirty data of the new open txg may pass the threshold again.
        self.kicked_at = None;
        txg
    }

    /// dsl_pool_undirty_space: `bytes` of the syncing txg are written.
    pub fn undirty(&mut self, bytes: u64) {
        let b = bytes.min(self.syncing_bytes);
        self.syncing_bytes -= b;
        self.dirty_total -= b;
    }

    /// The syncing txg is on disk (after its uberblock): whatever it had not given back
    /// is given back (dsl_pool_sync's final undirty), and the next may sync.
    pub fn sync_done(&mut self, now: Nanos) {
        self.last_sync_end = now;
        let left = self.syncing_bytes;
        self.undirty(left);
        self.syncing = None;
        self.txgs_synced += 1;
        // The open txg may have passed the threshold while this one synced.
        let over = if self.params.sync_on_total {
            self.dirty_total >= self.params.sync_min_bytes()
        } else {
            self.open_bytes > self.params.sync_min_bytes()
        };
        if over && self.kicked_at.is_none() {
            self.kicked_at = Some(now);
        }
    }
}

/// One write to a leaf device: where, how many bytes, and the dirty bytes its completion
/// gives back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeafWrite {
    /// Byte offset on the leaf.
    pub offset: u64,
    /// Bytes.
    pub bytes: u32,
    /// Dirty bytes given back when it completes.
    pub undirty: u64,
}

#[cfg(test)]
mod tests;
