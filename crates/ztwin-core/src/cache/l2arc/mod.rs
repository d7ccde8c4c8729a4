//! The L2ARC: a second-level ARC on a cache device, per release (configuration, device
//! ring and counters; the ARC side lives in `cache::arc::l2`).
//!
//! # Theory
//!
//! One global `l2arc_feed_thread()` wakes at `next` and does one feed: `l2arc_write_size()`
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
//!   `arc_read_done()` when `l2arc_noprefetch` and the header is a prefetch).
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
//! Counters: `l2_size` is the logical size of L2 blocks (`arcstat_l2_lsize`), `l2_asize`
//! their physical size (`arcstat_l2_psize`: psize, *not* rounded to the cache sector);
//! the allocated bytes on the device are [`L2arcDeviceState::alloc`].
//!
//! # Simplifications (numbered)
//!
//! 1. Writes and reads complete instantly: no `L2_WRITING` or `L2_READING` state, so
//!    `l2_rw_clash`, `l2_evict_reading`, `evict_l2_skip`, `l2_evict_lock_retry`,
//!    `l2_writes_error`, `l2_cksum_bad`, `l2_io_error` cannot happen and are not kept; the
//!    driver charges the device time. `l2_writes_done` = `l2_writes_sent`.
//! 2. The feed scans the exact LRU tail (head while cold) of each list; OpenZFS scans one
//!    random sublist of max(ncpu, 4), so it reaches colder blocks in a fraction of them.
//! 3. One device, one pool, one `secondarycache` value for all reads (the property is per
//!    dataset in OpenZFS). No TRIM (`l2arc_trim_ahead` 0), no `l2arc_norw`, no
//!    `l2arc_exclude_special`, no encryption.
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

use serde::{Deserialize, Serialize};

use crate::config::{CacheProperty, ZfsRelease};
use crate::error::{Error, Result};

/// SPA_MAXBLOCKSHIFT: l2ad_log_entries = dev size >> 24 (capped at 1022).
const SPA_MAXBLOCKSHIFT: u32 = 24;
/// L2ARC_LOG_BLK_MAX_ENTRIES.
pub const LOG_BLK_MAX_ENTRIES: u64 = 1022;
/// sizeof (l2arc_log_blk_phys_t): 64 KiB.
pub const LOG_BLK_SIZE: u64 = 64 << 10;
/// l2arc_rebuild_blocks_min_l2size: 1 GiB (2.0+).
pub const REBUILD_MIN_L2SIZE: u64 = 1 << 30;
/// HDR_L2ONLY_SIZE on 64-bit: 56 B common header + 40 B l2arc_buf_hdr_t (0.8 .. 2.2).
pub const HDR_L2ONLY_SIZE: u64 = 96;
/// Estimated lz4-compressed size of a full log block (simplification 5).
const LOG_BLK_PSIZE_EST: u64 = LOG_BLK_SIZE / 2;

// The data type is config's (config is data); the release's defaults and rules are
// `L2arcTunables::resolve` below.
pub use crate::config::L2arcTunables;

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
    /// The cache device.
    pub device: L2arcDeviceConfig,
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

/// How `arc_read()` treats a prefetch whose block is on L2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrefetchRead {
    /// 0.8 / 2.1: skip L2 if `l2arc_noprefetch` and the header is a prefetch.
    HeaderFlag,
    /// 2.2.0: skip L2 if `l2arc_noprefetch` and this read is a prefetch.
    ReadFlag,
    /// 2.2.1+: always read from L2.
    Always,
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
    /// Persistent L2ARC exists (2.0+) and l2arc_rebuild_enabled.
    pub persistent: bool,
    /// l2arc_rebuild_enabled (false in 0.8).
    pub rebuild_enabled: bool,
    /// Reading prefetches from L2.
    pub prefetch_read: PrefetchRead,
    /// arc_access of an l2c_only header goes to MFU (0.8, 2.1) or MRU (2.2).
    pub l2c_only_to_mfu: bool,
    /// 0.8 l2arc_evict / hand wrap (else the 2.1+ rerun with an evict hand).
    pub evict_08: bool,
    /// 2.1: l2arc_hdr_limit_reached also when l2_hdr_size > arc_meta_limit * 3/4.
    pub hdr_limit_meta_limit: bool,
    /// 2.2.3+: write size capped at a quarter of the device, rounded to the sector.
    pub quarter_cap: bool,
    /// Default of write_max/boost (what 2.1 .. 2.2.2 reset them to).
    pub default_write: u64,
}

impl L2arcTunables {
    /// Fills in the defaults of `release` (`patch` = the 2.2.x patch level; ignored for 0.8,
    /// modelled as 0.8.6, and 2.1, modelled as 2.1.16) and rejects parameters the release
    /// does not have.
    pub fn resolve(&self, release: ZfsRelease, patch: u16) -> Result<L2arcSettings> {
        if !release.features().l2arc_modelled {
            return Err(Error::config(
                "filesystem.cache",
                "the L2ARC of release 0.6 is not modelled (use release 0.8 or later)",
            ));
        }
        let v08 = release == ZfsRelease::V0_8;
        let v22 = release == ZfsRelease::V2_2;
        let new_defaults = v22 && patch >= 7;
        let dw: u64 = if new_defaults { 32 << 20 } else { 8 << 20 };
        let zero_default = |v: Option<u64>| match v {
            Some(0) | None => dw,
            Some(x) => x,
        };
        if v08 {
            for (set, name) in [
                (self.l2arc_mfuonly.is_some(), "l2arc_mfuonly"),
                (self.l2arc_meta_percent.is_some(), "l2arc_meta_percent"),
                (self.l2arc_rebuild_enabled.is_some(), "l2arc_rebuild_enabled"),
            ] {
                if set {
                    return Err(Error::config(
                        format!("l2arc.{name}"),
                        "does not exist in release 0.8 (added in 2.0/2.1)",
                    ));
                }
            }
        }
        let mfu_max = if v22 && patch >= 6 { 2 } else { 1 };
        let mfuonly = self.l2arc_mfuonly.unwrap_or(0);
        if mfuonly > mfu_max {
            return Err(Error::config(
                "l2arc.l2arc_mfuonly",
                format!("must be 0..={mfu_max} in this release (2 exists from 2.2.6)"),
            ));
        }
        let rebuild_enabled = !v08 && self.l2arc_rebuild_enabled.unwrap_or(true);
        Ok(L2arcSettings {
            write_max: zero_default(self.l2arc_write_max),
            write_boost: self.l2arc_write_boost.unwrap_or(dw),
            headroom: self.l2arc_headroom.unwrap_or(if new_defaults { 8 } else { 2 }),
            headroom_boost: self.l2arc_headroom_boost.unwrap_or(200),
            feed_secs: self.l2arc_feed_secs.unwrap_or(1),
            feed_min_ms: self.l2arc_feed_min_ms.unwrap_or(200),
            feed_again: self.l2arc_feed_again.unwrap_or(true),
            noprefetch: self.l2arc_noprefetch.unwrap_or(true),
            mfuonly,
            meta_percent: if v08 { None } else { Some(self.l2arc_meta_percent.unwrap_or(33)) },
            persistent: !v08,
            rebuild_enabled,
            prefetch_read: match (release, patch) {
                (ZfsRelease::V2_2, 0) => PrefetchRead::ReadFlag,
                (ZfsRelease::V2_2, _) => PrefetchRead::Always,
                _ => PrefetchRead::HeaderFlag,
            },
            l2c_only_to_mfu: !v22,
            evict_08: v08,
            hdr_limit_meta_limit: release == ZfsRelease::V2_1,
            quarter_cap: v22 && patch >= 3,
            default_write: dw,
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
    /// a dense array when that is no larger (see `cache::arc::l2index`); results do not
    /// depend on it.
    pub key_space: crate::cache::arc::L2KeySpace,
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
    /// The target (`l2arc_write_size()`), bytes.
    pub target: u64,
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

/// One block (or log block) on the device, in write order: 16 bytes.
///
/// Sizes are kept in 512-byte units (SPA_MINBLOCKSIZE: every lsize and psize is a
/// multiple, at most SPA_MAXBLOCKSIZE), less one, in 15 bits each; a log block keeps the
/// number of entries it describes in place of its lsize. The flags take the spare bits.
/// (The type and state of the header when written, which le_prop also records, are not
/// kept: no rebuild of the model restores them.)
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct L2Ent {
    /// BlockKey.0 (log blocks: 0).
    pub key: u64,
    /// Device address in 2^ashift units from l2ad_start (a device has fewer than 2^31
    /// sectors), and DEAD_BIT.
    addr: u32,
    /// lsize field (bits 0..15), psize field (15..30), PREFETCH_BIT, LOG_BIT.
    sizes: u32,
}

/// `addr`: no in-memory header refers to the entry (destroyed or dropped).
const DEAD_BIT: u32 = 1 << 31;
/// `sizes`: the header was a prefetch when written (le_prop PREFETCH, what a rebuild
/// restores); the in-memory header's flag since then is in the ARC's L2 index.
const PREFETCH_BIT: u32 = 1 << 30;
/// `sizes`: a log block (persistent L2ARC), not a data buffer.
const LOG_BIT: u32 = 1 << 31;
const SIZE_BITS: u32 = 15;
const SIZE_MASK: u32 = (1 << SIZE_BITS) - 1;

impl L2Ent {
    fn pack_size(bytes: u32) -> u32 {
        assert!(
            bytes >= 512 && bytes.is_multiple_of(512) && bytes <= 512 << SIZE_BITS,
            "L2 entry size {bytes}"
        );
        (bytes >> 9) - 1
    }

    /// A data (or metadata) buffer of `lsize` / `psize` bytes at sector `daddr`.
    pub(crate) fn block(key: u64, daddr: u32, lsize: u32, psize: u32, prefetch: bool) -> L2Ent {
        assert!(daddr & DEAD_BIT == 0, "L2 address past 2^31 sectors");
        let pf = if prefetch { PREFETCH_BIT } else { 0 };
        L2Ent { key, addr: daddr, sizes: Self::pack_size(lsize) | Self::pack_size(psize) << SIZE_BITS | pf }
    }

    /// A log block of `psize` bytes at sector `daddr` describing `entries` buffers.
    pub(crate) fn log_block(daddr: u32, entries: u32, psize: u32) -> L2Ent {
        assert!(daddr & DEAD_BIT == 0 && entries <= SIZE_MASK, "L2 log block");
        L2Ent { key: 0, addr: daddr, sizes: entries | Self::pack_size(psize) << SIZE_BITS | LOG_BIT }
    }

    /// Device address in 2^ashift units.
    pub(crate) fn daddr(&self) -> u32 {
        self.addr & !DEAD_BIT
    }
    /// Logical size, bytes (log blocks: number of entries it describes).
    pub(crate) fn lsize(&self) -> u32 {
        let f = self.sizes & SIZE_MASK;
        if self.is_log() {
            f
        } else {
            (f + 1) << 9
        }
    }
    /// Physical size, bytes (log blocks: its asize).
    pub(crate) fn psize(&self) -> u32 {
        ((self.sizes >> SIZE_BITS & SIZE_MASK) + 1) << 9
    }
    /// The header was a prefetch when written.
    pub(crate) fn prefetch(&self) -> bool {
        self.sizes & PREFETCH_BIT != 0
    }
    /// A log block.
    pub(crate) fn is_log(&self) -> bool {
        self.sizes & LOG_BIT != 0
    }
    /// No in-memory header refers to it.
    pub(crate) fn is_dead(&self) -> bool {
        self.addr & DEAD_BIT != 0
    }
    pub(crate) fn set_dead(&mut self, dead: bool) {
        self.addr = if dead { self.addr | DEAD_BIT } else { self.addr & !DEAD_BIT };
    }
}

/// Entries per chunk of the ring (chunks recycle; no allocation in steady state).
const CHUNK: usize = 4096;

/// The device's content in write order: a FIFO of chunks addressed by sequence number.
#[derive(Default)]
pub(crate) struct Ring {
    chunks: std::collections::VecDeque<Box<[L2Ent]>>,
    spare: Vec<Box<[L2Ent]>>,
    /// Sequence number of the oldest entry.
    pub head: u64,
    /// Sequence number one past the newest entry.
    pub tail: u64,
}

impl Ring {
    fn base(&self) -> u64 {
        self.head - self.head % CHUNK as u64
    }
    pub(crate) fn len(&self) -> u64 {
        self.tail - self.head
    }
    pub(crate) fn get(&self, seq: u64) -> &L2Ent {
        let off = (seq - self.base()) as usize;
        &self.chunks[off / CHUNK][off % CHUNK]
    }
    pub(crate) fn get_mut(&mut self, seq: u64) -> &mut L2Ent {
        let off = (seq - self.base()) as usize;
        &mut self.chunks[off / CHUNK][off % CHUNK]
    }
    pub(crate) fn push(&mut self, e: L2Ent) -> u64 {
        let off = (self.tail - self.base()) as usize;
        if off / CHUNK == self.chunks.len() {
            let c = self.spare.pop().unwrap_or_else(|| vec![L2Ent::default(); CHUNK].into_boxed_slice());
            self.chunks.push_back(c);
        }
        self.chunks[off / CHUNK][off % CHUNK] = e;
        self.tail += 1;
        self.tail - 1
    }
    pub(crate) fn front(&self) -> Option<&L2Ent> {
        (self.head < self.tail).then(|| self.get(self.head))
    }
    pub(crate) fn pop_front(&mut self) {
        debug_assert!(self.head < self.tail);
        self.head += 1;
        if self.head.is_multiple_of(CHUNK as u64) || self.head == self.tail {
            if self.head.is_multiple_of(CHUNK as u64) {
                let c = self.chunks.pop_front().expect("chunk");
                self.spare.push(c);
            }
            if self.head == self.tail {
                // Empty: restart at a chunk boundary so the first chunk is reused.
                while let Some(c) = self.chunks.pop_front() {
                    self.spare.push(c);
                }
                let next = self.tail.div_ceil(CHUNK as u64) * CHUNK as u64;
                self.head = next;
                self.tail = next;
            }
        }
    }
    /// Drops entries from the back down to sequence `to` (exclusive end).
    pub(crate) fn truncate(&mut self, to: u64) {
        debug_assert!(to >= self.head && to <= self.tail);
        self.tail = to;
        let need = (self.tail - self.base()).div_ceil(CHUNK as u64) as usize;
        while self.chunks.len() > need {
            let c = self.chunks.pop_back().expect("chunk");
            self.spare.push(c);
        }
        if self.head == self.tail {
            while let Some(c) = self.chunks.pop_front() {
                self.spare.push(c);
            }
            let next = self.tail.div_ceil(CHUNK as u64) * CHUNK as u64;
            self.head = next;
            self.tail = next;
        }
    }
    /// Bytes of simulator memory held (entries and spare chunks).
    pub(crate) fn heap_bytes(&self) -> usize {
        (self.chunks.len() + self.spare.len()) * CHUNK * std::mem::size_of::<L2Ent>()
    }
}

/// The cache device: ring of blocks, hands, and what it holds. It outlives an ARC across
/// a simulated export/import when persistent ([`crate::cache::arc::Arc::l2arc_detach`]).
pub struct L2arcDeviceState {
    pub(crate) ring: Ring,
    /// Sector shift.
    pub(crate) ashift: u8,
    /// Usable bytes.
    pub(crate) capacity: u64,
    /// l2ad_hand, bytes from l2ad_start.
    pub(crate) hand: u64,
    /// l2ad_evict (2.1+), bytes from l2ad_start.
    pub(crate) evict: u64,
    /// l2ad_first: the first sweep, nothing to evict.
    pub(crate) first: bool,
    /// l2ad_log_entries (0: no log blocks).
    pub(crate) log_entries: u64,
    /// Entries in the open log block (l2ad_log_ent_idx).
    pub(crate) log_ent_idx: u64,
    /// vdev space allocated: data asize + log blocks.
    pub alloc: u64,
}

impl L2arcDeviceState {
    pub(crate) fn new(dev: &L2arcDeviceConfig, persistent: bool) -> L2arcDeviceState {
        let sector = 1u64 << dev.ashift;
        let capacity = dev.capacity / sector * sector;
        assert!(capacity >> dev.ashift <= u32::MAX as u64, "cache device too large for u32 sector addresses");
        let log_entries = if persistent && capacity >= REBUILD_MIN_L2SIZE {
            (capacity >> SPA_MAXBLOCKSHIFT).min(LOG_BLK_MAX_ENTRIES)
        } else {
            0
        };
        L2arcDeviceState {
            ring: Ring::default(),
            ashift: dev.ashift,
            capacity,
            hand: 0,
            evict: 0,
            first: true,
            log_entries,
            log_ent_idx: 0,
            alloc: 0,
        }
    }
    /// vdev_psize_to_asize on the cache device.
    pub(crate) fn asize(&self, psize: u64) -> u64 {
        let s = 1u64 << self.ashift;
        psize.div_ceil(s) * s
    }
    /// Allocated size of one log block (simplification 5).
    pub(crate) fn log_blk_asize(&self) -> u64 {
        self.asize(LOG_BLK_PSIZE_EST)
    }
    /// l2arc_log_blk_overhead: worst case (uncompressed) log blocks for `write_sz`.
    pub(crate) fn log_blk_overhead(&self, write_sz: u64) -> u64 {
        if self.log_entries == 0 {
            0
        } else {
            let entries = write_sz >> 9;
            entries.div_ceil(self.log_entries) * self.asize(LOG_BLK_SIZE)
        }
    }
    /// Usable bytes of the device.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }
    /// Write hand, bytes from the start of the usable region.
    pub fn hand(&self) -> u64 {
        self.hand
    }
    /// Entries (blocks and log blocks, including unreachable ones) on the device.
    pub fn entries(&self) -> u64 {
        self.ring.len()
    }
}

#[cfg(test)]
mod ring_tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The ring behaves as a FIFO addressed by sequence number, across chunk
        /// boundaries, emptying and truncation.
        #[test]
        fn ring_is_a_fifo(ops in prop::collection::vec((0u8..3, 1usize..3 * CHUNK), 1..40)) {
            let mut r = Ring::default();
            let mut model = std::collections::VecDeque::new();
            let mut next = 0u64;
            for (op, n) in ops {
                match op {
                    0 => {
                        for _ in 0..n {
                            let seq = r.push(L2Ent { key: next, ..Default::default() });
                            model.push_back((seq, next));
                            next += 1;
                        }
                    }
                    1 => {
                        for _ in 0..n.min(model.len()) {
                            r.pop_front();
                            model.pop_front();
                        }
                    }
                    _ => {
                        let keep = model.len().saturating_sub(n);
                        let to = model.get(keep).map_or(r.tail, |&(s, _)| s);
                        r.truncate(to);
                        model.truncate(keep);
                    }
                }
                prop_assert_eq!(r.len(), model.len() as u64);
                if let Some(&(s, _)) = model.front() {
                    prop_assert_eq!(r.head, s);
                }
                for &(s, k) in &model {
                    prop_assert_eq!(r.get(s).key, k);
                }
                prop_assert!(r.chunks.len() as u64 <= r.len().div_ceil(CHUNK as u64) + 1);
            }
        }
    }
}

#[cfg(test)]
mod entry_tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// An entry gives back what it was made of, dead or alive.
        #[test]
        fn entries_keep_what_they_are_made_of(
            key in any::<u64>(),
            daddr in 0u32..(1 << 31),
            lunits in 1u32..=(1 << 15),
            punits in 1u32..=(1 << 15),
            prefetch in any::<bool>(),
            entries in 0u32..(1 << 15),
            dead in any::<bool>(),
        ) {
            let (lsize, psize) = (lunits << 9, punits << 9);
            let mut e = L2Ent::block(key, daddr, lsize, psize, prefetch);
            e.set_dead(dead);
            prop_assert_eq!((e.key, e.daddr(), e.lsize(), e.psize()), (key, daddr, lsize, psize));
            prop_assert_eq!((e.prefetch(), e.is_log(), e.is_dead()), (prefetch, false, dead));
            e.set_dead(!dead);
            prop_assert_eq!((e.is_dead(), e.daddr()), (!dead, daddr));
            let mut l = L2Ent::log_block(daddr, entries, psize);
            l.set_dead(dead);
            prop_assert_eq!((l.daddr(), l.lsize(), l.psize()), (daddr, entries, psize));
            prop_assert_eq!((l.prefetch(), l.is_log(), l.is_dead()), (false, true, dead));
        }
    }

    #[test]
    #[should_panic(expected = "L2 entry size")]
    fn a_size_off_the_512_byte_grid_is_a_bug() {
        L2Ent::block(1, 0, 1000, 512, false);
    }
}
