//! The L2ARC: a second-level ARC on a cache device, per release. All of it lives here:
//! its parameters (this file), the device (`device.rs`), the index of the blocks on it
//! (`index.rs`), the attached device's bookkeeping (`attached.rs`), and the ARC's side of
//! it, which reads and writes the ARC's headers: the hooks of the ARC's read and eviction
//! paths (`hooks.rs`), the feed (`feed.rs`) and device loss and rebuild (`rebuild.rs`).
//! What each release does is [`crate::config::L2arcFeatures`] (point-release dependent in
//! 2.2), read once when a device is attached.
//!
//! # Theory
//!
//! One global `l2arc_feed_thread()` wakes at `next` and does one feed on one cache device:
//! `l2arc_dev_get_next()` picks the device after the last one fed (`l2arc_dev_last`) on
//! `l2arc_dev_list`, to which `l2arc_add_vdev()` adds each device at the head (so the pool's
//! devices are fed from its last to its first, round and round; a dead, rebuilding or
//! trimming device is skipped), and the pass writes to that device only: with N devices
//! each gets one pass in N, and the interval is per pass. Then `l2arc_write_size()`
//! (l2arc_write_max, + l2arc_write_boost while `arc_warm` is false), `l2arc_evict()` of the
//! region ahead of the write hand (the device is a ring; wrapping evicts the oldest
//! blocks), then `l2arc_write_buffers()`: four passes over the ARC lists (MFU metadata,
//! MRU metadata, MFU data, MRU data), each from the cold end (from the hot end while the
//! ARC is not warm), passing at most `target * l2arc_headroom` (x `l2arc_headroom_boost`%
//! with compressed ARC) logical bytes and stopping when the write budget is full. A block
//! is written as the ARC holds it (psize), allocated at `roundup(psize, 2^ashift)` on the
//! device. `l2arc_write_interval()` sets the next feed: `l2arc_feed_min_ms` if the feed
//! wrote more than half its target and `l2arc_feed_again`, else `l2arc_feed_secs`.
//! Sources (`module/zfs/arc.c`): zfs-0.8.6, zfs-2.1.16, zfs-2.2.0 .. zfs-2.2.11:
//!
//! - `l2arc_write_eligible()`: not already on L2, no I/O in progress, `ARC_FLAG_L2CACHE`
//!   (set by `arc_read()` when the dataset's `secondarycache` covers the block, cleared by
//!   `arc_read_done()` when `l2arc_noprefetch` and the header is a prefetch; set too by
//!   `arc_write()` on a block the txg sync writes, `l2arc` being `DBUF_IS_L2CACHEABLE(db)`
//!   (0.8.6) / `dbuf_is_l2cacheable(db)` (2.1+) from `dbuf_write()`, the same
//!   `secondarycache` rule; 2.2+ sets `ARC_FLAG_UNCACHED` instead when the dataset caches
//!   no data (`uncached`), so such a block gets no L2CACHE: a rewritten block is as
//!   eligible as a read one, and under writes the feed finds the lists' tails full of
//!   freshly written blocks).
//! - Several cache devices: an ARC header's L2 copy is on one device (`b_l2hdr.b_dev`); a
//!   hit reads it from that device, and its invalidation (`arc_hdr_l2hdr_destroy()`) and
//!   eviction (`l2arc_evict()` of that device) are that device's. Which header is
//!   eligible does not depend on the device (`l2arc_write_eligible()`). arcstats' `l2_*`
//!   sizes and counters are sums over the devices; each device has its own ring, hands,
//!   log blocks and rebuild (`l2arc_spa_rebuild_start()` starts one per device).
//! - `arc_evict_hdr()`: a live header with an L2 copy goes to its ghost list like any
//!   other (counting `evict_l2_cached`, else `evict_l2_eligible` / `_ineligible`); only
//!   when the *ghost* header is deleted does it become `arc_l2c_only` and
//!   `arc_hdr_realloc()` shrinks it to `HDR_L2ONLY_SIZE` = offsetof(arc_buf_hdr_t,
//!   b_l1hdr) = 96 B on 64-bit (56 B common part + 40 B `l2arc_buf_hdr_t`, all three
//!   releases), counted in `l2_hdr_size` (`ARC_SPACE_L2HDRS`) and hence in `size` and (0.8/2.1)
//!   `arc_meta_used`. A header still in the ARC (live or ghost) counts its full size in
//!   `hdr_size` and nothing in `l2_hdr_size`. (The 74 B per block measured on 2.2.11 is the
//!   96 B averaged over blocks of which some were also in the ARC.)
//! - `arc_read()`: a header without L1 part is reallocated to a full one; then, if it has
//!   an L2 copy and (0.8, 2.1: not `l2arc_noprefetch && HDR_PREFETCH(hdr)`; 2.2.0: not
//!   `l2arc_noprefetch && ARC_FLAG_PREFETCH` on this read; 2.2.1+ (7aef672b77): always)
//!   it is read from the cache device (`l2_hits`, `l2_read_bytes += psize`, device read of
//!   `roundup(arc_hdr_size, 2^ashift)`); otherwise `l2_misses` counts (on every ARC miss
//!   while a cache device exists). The ARC still counts the read as a miss.
//! - `arc_access()` of an `arc_l2c_only` header: 0.8 / 2.1 -> MFU; 2.2 -> MRU ("treat it as
//!   new"). Its `arc_adapt()` is no ghost adaptation.
//! - `l2arc_evict()`: 0.8 evicts to the end once the hand is within `2 * distance` of it and
//!   `l2arc_write_buffers()` wraps the hand once within `target` of the end; 2.1+ evicts to
//!   the end when `hand + distance > end`, wraps and evicts again (`rerun`), keeping an
//!   evict hand (`l2ad_evict`). Evicting a block still in the ARC drops its L2 part
//!   (`l2_evict_l1cached`); an L2-only header is destroyed.
//! - 2.1+: `l2arc_hdr_limit_reached()` skips a feed (`l2_abort_lowmem`) when
//!   `l2_hdr_size > (arc_warm ? arc_c : arc_c_max) * l2arc_meta_percent / 100` (2.1 also
//!   when above `arc_meta_limit * 3 / 4`); `l2arc_mfuonly` skips the MRU passes (1) or
//!   the MRU data pass (2, 2.2.6+, cd42e992b5).
//! - persistent L2ARC (2.0+): devices of at least 1 GiB (`l2arc_rebuild_blocks_min_l2size`)
//!   get `l2ad_log_entries = min(dev_size >> 24, 1022)`; every that many buffers a log
//!   block (`l2arc_log_blk_phys_t`, 64 KiB, lz4-compressed) is written after them
//!   (`l2arc_log_blk_commit()`, counted in the feed's written bytes and `l2_write_bytes`);
//!   the write size grows by the worst-case log-block overhead
//!   (`l2arc_log_blk_overhead()`) and a feed stops 64 KiB early. `l2arc_rebuild()`
//!   walks the log blocks back from the newest, restoring L2-only headers, until one
//!   whose payload was overwritten.
//! - 2.2.3+ (2e259c6f00): the write size is capped at a quarter of the device and rounded
//!   up to its sector; 2.1 .. 2.2.2 reset both tunables to the default if the write size
//!   exceeds the device. 2.2.7+ (022bf86370): write_max/boost 32 MiB, headroom 8.
//!
//! - **The header cap** (0.6.5 .. 2.0; arc.c at zfs-0.8.6, same in 0.7.5 and 0.6.5.11). An
//!   L2-only header is allocated from `hdr_l2only_cache`, whose constructor charges
//!   HDR_L2ONLY_SIZE to ARC_SPACE_L2HDRS (`hdr_l2only_cons`, l. 1331-1338; SPL runs
//!   constructors on every allocation); `arc_space_consume()` adds every space type but
//!   ARC_SPACE_DATA to `arc_meta_used` and all of them to `arc_size` (l. 2740-2774). The
//!   header is on no list (arc_l2c_only keeps none, l. 2730-2736), so `arc_adjust()`,
//!   `arc_adjust_meta_balanced()` (l. 4425-4514, which evicts data first, then metadata
//!   and ghosts, then asks `arc_prune_async()` to drop dnodes and inodes) and
//!   `arc_evict_state()` cannot free it; only `l2arc_evict()` (the ring overwriting it)
//!   or a read (`arc_hdr_realloc()` back to a full header) does. `arc_c` does not move for
//!   it: `arc_adapt()` only grows `arc_c` up to `arc_c_max` (l. 5429-5495) and only memory
//!   pressure (`arc_reap_cb()`, the Linux shrinker, `arc_reduce_target_size()`) shrinks
//!   it. So as L2-only headers grow, `arc_adjust()` (woken by every allocation while
//!   `arc_is_overflowing()`, l. 5503-5620, and looping until nothing more is evictable,
//!   `arc_adjust_cb()` l. 5152-5180) evicts buffers to make room for them; data and
//!   metadata leave the ARC sooner and sooner after they are read, the feed finds fewer
//!   and fewer eligible headers within `l2arc_headroom` of the list tails (a header must
//!   be on an ARC list, i.e. unreferenced and cached, to be written), and the L2ARC stops
//!   growing once about `arc_c` bytes of 96-byte headers exist: `arc_c / 96` blocks, for
//!   16K records about 170 times `arc_c` of logical data, whatever the device's size.
//!   Above `arc_meta_limit` the balanced metadata pass evicts extra data on every
//!   `arc_adjust()`, so a limit close to `arc_c_max` lets the headers approach `arc_c` a
//!   little further. 2.1 added `l2arc_meta_percent` to stop feeding before this happens.
//!   The model counts the headers the same way ([`HDR_L2ONLY_SIZE`] per L2-only block in
//!   `l2_hdr_size`, `size` and, 0.8/2.1, `arc_meta_used`) and runs the same eviction.
//!
//! - **The feed's own time.** The thread (`thread_create(..., defclsyspri)` in
//!   `l2arc_init()`: the default priority, like the database's threads) does all of a
//!   pass on one CPU: `l2arc_evict()` locks and drops every header in the region ahead
//!   of the hand; `l2arc_write_buffers()` takes every header it passes on the four lists
//!   (`mutex_tryenter()` of its hash lock, `l2arc_write_eligible()`), and for each buffer
//!   it writes issues a `zio_write_phys()` with `ZIO_CHECKSUM_OFF` (no checksum is
//!   computed for an L2 data write in 0.8, 2.1, 2.2, 2.3 or master; a log block's is,
//!   `fletcher_4_native()` in `l2arc_log_blk_commit()`, after its lz4 compression). The
//!   buffer is written from `b_pabd` as the ARC holds it when the ARC keeps it as stored
//!   (`HDR_COMPRESSION_ENABLED`, or a block stored uncompressed), no dbuf shares it and
//!   its psize fills whole sectors of the cache device; otherwise
//!   `l2arc_apply_transforms()` allocates an asize buffer and copies the data into it
//!   (zeroing the tail), compressing it again first (`zio_compress_data()`) when
//!   compressed ARC is off. Then `zio_wait(pio)`: the pass lasts its CPU time and its
//!   writes. [`L2Feed`] counts the work (`headers_scanned`, `headers_evicted`,
//!   `copy_bytes`, `compress_bytes`, `log_blocks`); the driver charges it to the machine's
//!   vCPUs (`run::phases::feed_cpu`: `l2arc_hdr_ns` per header, `zio_ns` per buffer and
//!   log block, the memcpy, lz4 and fletcher4 rates, `device_io_ns` per aggregated write)
//!   and issues the writes as the work is done, so a feed on busy CPUs takes longer and
//!   takes CPU time from the database.
//!
//! # What-ifs from master (no release has them; every release accepts them)
//!
//! Off unless the scenario asks (the release table's [`L2arcFeatures::dwpd_feed`] and
//! [`L2arcFeatures::per_device_feed`] are false for every modelled release), so every
//! other config runs as before. Sources: `module/zfs/arc.c` at the cited master commits,
//! and the master of 2026-08 for the later fixes (none of them touches these functions).
//!
//! - **Per-device feed threads**, the model's key `per_device_feed` (b525525b44, "L2ARC:
//!   Implement per-device feed threads for parallel writes"; master has no switch and no
//!   module parameter for it: the name is the model's). `l2arc_add_vdev()` creates one
//!   `l2arc_feed_thread(dev)` per cache device (at `minclsyspri`, the lowest priority,
//!   where the release's thread has `defclsyspri`: the model's vCPUs have no priorities,
//!   so both take their turns as the database's threads do), which runs at once and
//!   then on its own schedule: the same pass as the release's (header limit, write size,
//!   evict, write, interval) on its own device, with no `l2arc_dev_get_next()`; the
//!   devices are fed in parallel, each thread waiting only for its own writes. Its
//!   threads skip a busy ARC sublist another device's thread is scanning; the model's
//!   passes are instants (the driver charges their time afterwards), so two never scan
//!   at once. Master's thread no longer skips a device being rebuilt (the check went with
//!   `l2arc_dev_invalid()`); the model's rebuilds are done before the first pass.
//!
//! - **The DWPD feed**, `l2arc_dwpd_limit` (d1f290f1ea, "L2ARC: Implement DWPD-based rate
//!   limiting with adaptive feed intervals"; man page 48d3f7fac9). `l2arc_write_max`
//!   becomes a rate per second (`l2arc_get_write_rate()`); `l2arc_write_size(dev,
//!   &interval)` feeds a rate above L2ARC_BURST_SIZE_MAX (64 MiB; the commit message says
//!   50 MB, the code 64 MiB) in `ceil(rate / 64 MiB)` passes a second of `rate / n` bytes,
//!   else one pass a second of `rate` bytes; the thread then sleeps `interval` from the
//!   pass's start, `l2arc_feed_secs` if it wrote nothing, `interval * wrote / size` if it
//!   wrote less than asked (replacing `l2arc_write_interval()`: `l2arc_feed_min_ms` and
//!   `l2arc_feed_again` remain parameters and do nothing). `l2arc_write_boost` is gone
//!   (refused with the key set). The rate is limited only once the device has wrapped
//!   (`!l2ad_first`), with `l2arc_dwpd_limit` > 0 and the pool's cache devices at least
//!   twice `arc_c_max` (L2ARC_PERSIST_THRESHOLD): then it is the smaller of
//!   `l2arc_write_max` and `l2arc_dwpd_rate_limit()`, which spreads what is left of the
//!   period's budget (`capacity * l2arc_dwpd_limit / 100`, plus the last period's unused
//!   budget, plus one 64 MiB burst, less `l2ad_dwpd_writes`) over the seconds left of the
//!   24 h period (`gethrestime_sec()`). A period starts at `l2arc_add_vdev()`, 24 h after
//!   the last (carrying the unused budget over), on a parameter change (no carry-over),
//!   and at every wrap of the write hand (`l2arc_evict()`'s `rerun`: the source resets at
//!   every wrap although its comment speaks of the first pass). Master's default is 100;
//!   the what-if keeps the release's other defaults (`l2arc_write_max` 8 MiB in 0.8; 64
//!   MiB in master) and its caps on the write size. Master's persistent markers, which the
//!   same threshold switches on, are not modelled.
//!
//! Counters: `l2_size` is the logical size of L2 blocks (`arcstat_l2_lsize`), `l2_asize`
//! their physical size (`arcstat_l2_psize`: psize, *not* rounded to the cache sector);
//! the allocated bytes on the device are [`L2arcDeviceState::alloc`].
//!
//! # Simplifications (numbered)
//!
//! 1. Writes and reads complete instantly for the ARC: no `L2_WRITING` or `L2_READING` state, so
//!    `l2_rw_clash`, `l2_evict_reading`, `evict_l2_skip`, `l2_evict_lock_retry`,
//!    `l2_writes_error`, `l2_cksum_bad`, `l2_io_error` cannot happen and are not kept; the
//!    driver charges the device time, and its feed thread waits for the writes before it
//!    sleeps (`zio_wait(pio)`, `run::phases`). `l2_writes_done` = `l2_writes_sent`.
//! 2. The feed scans the exact LRU tail (head while cold) of each list; OpenZFS scans one
//!    random sublist of max(ncpu, 4), so it reaches colder blocks in a fraction of them.
//! 3. One pool (`l2arc_dev_list` holds its devices only), at most
//!    [`MAX_CACHE_DEVICES`] cache devices, each of at most `2^(31 - ceil(log2 n))` sectors
//!    (the index packs the device into a location, `attached.rs`), all with the pool's
//!    ashift; one `secondarycache` value for all reads (the property is per dataset in
//!    OpenZFS). No device is ever dead, rebuilding (rebuilds complete before the feed runs)
//!    or trimming when the feed picks it. No TRIM (`l2arc_trim_ahead` 0), no `l2arc_norw`,
//!    no `l2arc_exclude_special`, no encryption. A block the model's key names is on one
//!    device at most: versions of a block share a key (OpenZFS keys them by DVA and
//!    birth), so a rebuild restores the first version it finds and skips the others.
//! 4. `arc_warm` becomes true only when memory reclaim runs in OpenZFS (the Linux shrinker
//!    or `free_memory < 0`), not at the first eviction as OPENZFS-FACTS.md says; the model has
//!    no memory pressure, so the driver turns it on ([`crate::cache::arc::Arc::set_arc_warm`])
//!    or asks for the facts page's rule with [`L2arcParams::arc_warm_at_first_eviction`].
//! 5. Capacity is the usable region `l2ad_end - l2ad_start` (labels and the persistent
//!    device header excluded by the caller). A log block's compressed size is taken as half
//!    of its 64 KiB (lz4 on log entries; estimated), rounded to the sector.
//! 6. Headers destroyed while on L2 (uncacheable reads) leave their data on the device;
//!    it is unreachable until overwritten, as in OpenZFS, and a rebuild restores it.
//! 7. l2arc per-state asize counters (`l2_mru_asize`, `l2_prefetch_asize`, ...),
//!    `l2_data_to_meta_ratio` and rebuild error counters are not kept.
//! 8. Buffers a dbuf still holds are on their ARC list in the model (ARC simplification
//!    4), so the feed may write them; in OpenZFS a referenced header is on no list until
//!    released. Eviction runs as soon as `size > c` (ARC simplification 2), not at
//!    `c + 16 MiB`, so with L2-only headers filling the ARC the model's cap sits at about
//!    `arc_c` of headers where OpenZFS's may reach up to 16 MiB more.
//! 9. The feed's CPU work is counted header by header, except where the simulator's scan
//!    skips a run of ineligible headers it passed before (`L2Run` from the tail,
//!    `L2HeadRun` from the head) and the headroom ends
//!    inside that run: the headers passed are then estimated from the run's bytes (exact
//!    when its blocks have one size). A failed `mutex_tryenter()` (a header skipped) and
//!    the free of the previous pass's buffers (`l2arc_do_free_on_write()`) are not
//!    modelled; the device header update of 2.0+ (`l2arc_dev_hdr_update()`, 512 B per
//!    feed) is neither written nor charged.
//! 10. Time in the DWPD feed is simulated nanoseconds: its intervals are not rounded to
//!     the kernel's ticks (`hz`), and `gethrestime_sec()` is the simulated second.

mod attached;
mod device;
mod feed;
mod hooks;
mod index;
mod rebuild;
#[cfg(test)]
mod tests;

/// How `arc_read()` treats a prefetch whose block is on L2 (a feature of the release).
pub use crate::config::PrefetchRead;
pub(crate) use attached::L2;
pub use device::L2arcDeviceState;
pub use index::L2KeySpace;

use serde::{Deserialize, Serialize};

use crate::config::{CacheProperty, L2arcFeatures, ZfsFeatures, ZfsRelease};
use crate::error::{Error, Result};

/// The most cache devices a pool may have in the model (OpenZFS has no limit): a packed
/// location gives the device 3 of its 31 bits (`attached.rs`).
pub const MAX_CACHE_DEVICES: usize = 8;
/// L2ARC_LOG_BLK_MAX_ENTRIES.
pub const LOG_BLK_MAX_ENTRIES: u64 = 1022;
/// sizeof (l2arc_log_blk_phys_t): 64 KiB.
pub const LOG_BLK_SIZE: u64 = 64 << 10;
/// l2arc_rebuild_blocks_min_l2size: 1 GiB (2.0+).
pub const REBUILD_MIN_L2SIZE: u64 = 1 << 30;
/// HDR_L2ONLY_SIZE on 64-bit: 56 B common header + 40 B l2arc_buf_hdr_t (0.8 .. 2.2).
pub const HDR_L2ONLY_SIZE: u64 = 96;
/// l2arc_dwpd_limit's default in master (d1f290f1ea, arc.c): 100, one drive write per day.
pub const DWPD_LIMIT_DEFAULT: u64 = 100;
/// The largest l2arc_dwpd_limit the model takes: 1000 drive writes per day (master has no
/// bound; the daily budget `capacity * limit / 100` must fit 64 bits).
pub const MAX_DWPD_LIMIT: u64 = 100_000;
/// L2ARC_BURST_SIZE_MAX (d1f290f1ea): the DWPD feed's largest write per pass, 64 MiB
/// (the commit message says 50 MB; the code, which wins, 64 MiB).
pub const BURST_SIZE_MAX: u64 = 64 << 20;

// The data type is config's (config is data); the release's defaults and rules are
// `L2arcTunables::resolve` below.
pub use crate::config::L2arcTunables;

/// Bytes of simulator memory an attached cache device takes when it holds `blocks`
/// blocks of a dataset of `space_blocks` blocks (every level of every file): a 16-byte
/// ring entry per block and the index (`attached.rs`). L2-only blocks have no ARC header.
pub fn memory_bytes(blocks: u64, space_blocks: u64) -> u64 {
    device::ring_memory_bytes(blocks).saturating_add(index::memory_bytes(blocks, space_blocks))
}

/// The cache device (a `cache` vdev).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct L2arcDeviceConfig {
    /// Usable bytes, `l2ad_end - l2ad_start` (device size less labels; simplification 5).
    pub capacity: u64,
    /// Sector size exponent of the cache vdev; L2 blocks are allocated in 2^ashift units.
    pub ashift: u8,
}

/// Everything the L2ARC needs, as a scenario would carry it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct L2arcConfig {
    /// The pool's cache devices, in the order `zpool add` (or the pool's config) gives
    /// them: 1 to [`MAX_CACHE_DEVICES`].
    pub devices: Vec<L2arcDeviceConfig>,
    /// Dataset property `secondarycache` (all | metadata | none), default all.
    #[serde(default = "default_secondarycache")]
    pub secondarycache: CacheProperty,
    /// Module parameters.
    #[serde(default)]
    pub tunables: L2arcTunables,
}

fn default_secondarycache() -> CacheProperty {
    CacheProperty::All
}

/// Release-resolved L2ARC settings (every default filled in, every rule chosen).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct L2arcSettings {
    /// l2arc_write_max.
    pub write_max: u64,
    /// l2arc_write_boost.
    pub write_boost: u64,
    /// l2arc_headroom.
    pub headroom: u64,
    /// l2arc_headroom_boost (percent).
    pub headroom_boost: u64,
    /// l2arc_feed_secs.
    pub feed_secs: u64,
    /// l2arc_feed_min_ms.
    pub feed_min_ms: u64,
    /// l2arc_feed_again.
    pub feed_again: bool,
    /// l2arc_noprefetch.
    pub noprefetch: bool,
    /// l2arc_mfuonly (0 in 0.8, where it does not exist).
    pub mfuonly: u8,
    /// l2arc_meta_percent (None in 0.8).
    pub meta_percent: Option<u64>,
    /// l2arc_rebuild_enabled (false in 0.8).
    pub rebuild_enabled: bool,
    /// l2arc_dwpd_limit: Some with master's DWPD feed (a what-if, d1f290f1ea), None with
    /// the release's.
    pub dwpd_limit: Option<u64>,
    /// Master's per-device feed threads (a what-if, b525525b44; the model's key
    /// `per_device_feed`, not a module parameter).
    pub per_device_feed: bool,
    /// What the release (at its point release) does.
    pub features: L2arcFeatures,
}

impl L2arcTunables {
    /// Fills in the defaults of `release` at point release `patch` (the L2ARC's rules
    /// change only inside 2.2; 0.8 is modelled as 0.8.6, 2.1 as 2.1.16) and rejects
    /// parameters the release does not have.
    pub fn resolve(&self, release: ZfsRelease, patch: u16) -> Result<L2arcSettings> {
        let zf = ZfsFeatures::resolve(release, patch);
        if !zf.l2arc_modelled {
            return Err(Error::config(
                "filesystem.cache",
                format!("the L2ARC of release {} is not modelled (use release 0.8 or later)", release.name()),
            ));
        }
        let f = zf.l2arc;
        let dw = f.write_default;
        let zero_default = |v: Option<u64>| match v {
            Some(0) | None => dw,
            Some(x) => x,
        };
        for (set, exists, name, since) in [
            (self.l2arc_mfuonly.is_some(), f.mfuonly_max > 0, "l2arc_mfuonly", "added in 2.1"),
            (self.l2arc_meta_percent.is_some(), f.hdr_limit, "l2arc_meta_percent", "added in 2.1"),
            (self.l2arc_rebuild_enabled.is_some(), f.persistent, "l2arc_rebuild_enabled", "added in 2.0"),
        ] {
            if set && !exists {
                return Err(Error::config(
                    format!("l2arc.{name}"),
                    format!("does not exist in release {} ({since})", release.name()),
                ));
            }
        }
        // The DWPD feed (d1f290f1ea) replaced l2arc_write_boost: with it, the key does not
        // exist.
        let dwpd_limit = self.l2arc_dwpd_limit.or(f.dwpd_feed.then_some(DWPD_LIMIT_DEFAULT));
        if dwpd_limit.is_some() && self.l2arc_write_boost.is_some() {
            return Err(Error::config(
                "l2arc.l2arc_write_boost",
                "does not exist with master's DWPD feed (l2arc_dwpd_limit is set; d1f290f1ea removed it): unset one of them",
            ));
        }
        if dwpd_limit.is_some_and(|d| d > MAX_DWPD_LIMIT) {
            return Err(Error::config(
                "l2arc.l2arc_dwpd_limit",
                format!("must be 0 to {MAX_DWPD_LIMIT} (percent of a drive write per day)"),
            ));
        }
        let mfu_max = f.mfuonly_max;
        let mfuonly = self.l2arc_mfuonly.unwrap_or(0);
        if mfuonly > mfu_max {
            return Err(Error::config(
                "l2arc.l2arc_mfuonly",
                format!("must be 0..={mfu_max} in this release (2 exists from 2.2.6)"),
            ));
        }
        Ok(L2arcSettings {
            write_max: zero_default(self.l2arc_write_max),
            write_boost: if dwpd_limit.is_some() { 0 } else { self.l2arc_write_boost.unwrap_or(dw) },
            headroom: self.l2arc_headroom.unwrap_or(f.headroom_default),
            headroom_boost: self.l2arc_headroom_boost.unwrap_or(200),
            feed_secs: self.l2arc_feed_secs.unwrap_or(1),
            feed_min_ms: self.l2arc_feed_min_ms.unwrap_or(200),
            feed_again: self.l2arc_feed_again.unwrap_or(true),
            noprefetch: self.l2arc_noprefetch.unwrap_or(true),
            mfuonly,
            meta_percent: if f.hdr_limit { Some(self.l2arc_meta_percent.unwrap_or(33)) } else { None },
            rebuild_enabled: f.persistent && self.l2arc_rebuild_enabled.unwrap_or(true),
            dwpd_limit,
            per_device_feed: self.per_device_feed.unwrap_or(f.per_device_feed),
            features: f,
        })
    }
}

/// Parameters of [`crate::cache::arc::Arc::attach_l2arc`].
#[derive(Debug, Clone)]
pub struct L2arcParams {
    /// The 2.2.x patch level (0 ..= 11) for the rules that changed inside 2.2; ignored
    /// for 0.8 and 2.1. The ARC's own release is used for everything else.
    pub patch: u16,
    /// Device, secondarycache and tunables.
    pub config: L2arcConfig,
    /// Facts-page rule: `arc_warm` turns true at the first ARC eviction. OpenZFS sets it
    /// only on memory reclaim (simplification 4), so the default is false.
    pub arc_warm_at_first_eviction: bool,
    /// Blocks the device is expected to hold at most (0: unknown), to size the
    /// simulator's index up front; results do not depend on it.
    pub expected_blocks: u64,
    /// The dataset's blocks (per object number, per level), if known: the index is then
    /// a dense array when that is no larger (see `index.rs`); results do not
    /// depend on it.
    pub key_space: L2KeySpace,
}

/// One feed's outcome (see [`crate::cache::arc::Arc::l2arc_feed`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct L2Feed {
    /// Data bytes written as psize (`l2_write_bytes` from the data).
    pub bytes_written: u64,
    /// Bytes the cache device writes: data asize plus log blocks.
    pub asize_written: u64,
    /// ARC buffers written.
    pub buffers: u32,
    /// Log blocks written (persistent L2ARC).
    pub log_blocks: u32,
    /// ARC headers `l2arc_write_buffers()` passed on its lists (each: the list step, the
    /// hash lock's `mutex_tryenter()`, `l2arc_write_eligible()`), the one that ended a
    /// pass over its headroom included.
    pub headers_scanned: u64,
    /// Entries of the device's list `l2arc_evict()` dropped (`arc_hdr_l2hdr_destroy()`
    /// or, L2-only, `arc_hdr_destroy()`), log blocks included.
    pub headers_evicted: u64,
    /// Bytes `l2arc_apply_transforms()` copied into a buffer of its own (asize: the
    /// copy and the zeroed tail) for buffers that cannot be written from `b_pabd`.
    pub copy_bytes: u64,
    /// Logical bytes it compressed again (compressed ARC off, block compressed on disk).
    pub compress_bytes: u64,
    /// Bytes of the log blocks written (each lz4-compressed from 64 KiB and checksummed).
    pub log_bytes: u64,
    /// The target (`l2arc_write_size()`), bytes.
    pub target: u64,
    /// The cache device the pass wrote to (its number in the pool's list).
    pub dev: usize,
    /// Where its writes begin on that device (`l2ad_hand` when `l2arc_write_buffers()`
    /// began, bytes): they follow one another from there, log blocks among them.
    pub start: u64,
    /// False if the feed was skipped (no device, or l2arc_hdr_limit_reached).
    pub fed: bool,
    /// When the feed thread runs next.
    pub next_feed_at: crate::sim::time::Nanos,
}

/// Outcome of a persistent-L2ARC rebuild.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct L2Rebuild {
    /// Headers restored (`l2_rebuild_bufs`).
    pub headers: u64,
    /// Their logical bytes (`l2_rebuild_size`).
    pub bytes: u64,
    /// Their allocated bytes on the device (`l2_rebuild_asize`).
    pub asize: u64,
    /// Log blocks read and restored (`l2_rebuild_log_blks`).
    pub log_blocks: u64,
    /// Device reads the rebuild costs: count (device header + log blocks) ...
    pub reads: u64,
    /// ... and bytes.
    pub read_bytes: u64,
}
