//! The OpenZFS ARC (adaptive replacement cache), byte-sized, per release.
//!
//! # Theory
//!
//! One [`Arc::read`] is one `arc_read()` (or `arc_buf_access()`) of a block by the ZFS read
//! path. The model keeps a header per block in one of the states MRU, MFU, MRU_GHOST,
//! MFU_GHOST (and UNCACHED in 2.2), each with a data list and a metadata list in LRU order,
//! and applies the release's `arc_access()` transitions, target adaptation and eviction.
//! What a release does is read from its features ([`crate::config::ArcFeatures`], resolved
//! once when the ARC is built): the model never compares releases.
//!
//! Sources: `module/zfs/arc.c` (`arc_read()`, `arc_write_done()`, `arc_hdr_alloc()`,
//! `arc_change_state()`, `arc_hdr_destroy()`) at zfs-0.6.1, zfs-0.8.6, zfs-2.1.16 and
//! zfs-2.2.0 .. zfs-2.2.11; each module below names the functions it models.
//!
//! # Modules (one mechanism each; read in this order)
//!
//! - this file: the [`Arc`], the read ([`Arc::access`]: hit, ghost hit, new block or
//!   L2-only block), writes and in-progress reads, and the state accounting every
//!   transition goes through (`enter`, `destroy`);
//! - `types.rs`: block keys, block info, read flags and outcomes, [`ArcParams`];
//! - `limits.rs`: `arc_c_min`, `arc_c_max`, initial `arc_c` / `arc_p`, `arc_meta_limit`
//!   ([`ArcLimits`]), and the tunables;
//! - `stats.rs`: arcstats ([`ArcStats`]) and how reads are counted;
//! - `access.rs`: `arc_access()` per [`ArcAccessRules`] (0.6 .. 2.1, 2.2) and the uncached
//!   state;
//! - `arc_p.rs`: the 0.6 .. 2.1 adaptation (`arc_p`, `arc_adapt`, `arc_adjust`);
//! - `meta_balance.rs`: the 2.2 adaptation (`arc_meta` / `arc_pd` / `arc_pm`,
//!   `arc_evict`);
//! - `evict.rs`: when eviction runs and the scan of one list (`arc_evict_state`, ghosts);
//! - `bufs.rs`: what dbufs, dnodes and bonus buffers hold (references, copies);
//! - `slab.rs`: the header storage (slab, intrusive lists, key table, scan memories).
//!
//! The L2ARC's side of the ARC (the headers' L2 copies, L2-only headers, the feed that
//! walks the ARC's lists) is in [`crate::cache::l2arc`]; the fields and methods it uses
//! are `pub(in crate::cache)`.
//!
//! # Simplifications (numbered across the ARC's modules; each is a deliberate departure
//! from OpenZFS)
//!
//! 1, 2, 7 in `evict.rs`; 3 in `limits.rs`; 6 in `access.rs`; 8, 10 in `arc_p.rs`; 9 in
//! `meta_balance.rs`; 4 and 5 here:
//!
//! 4. References are the dbufs' only: a header a dbuf holds (`add_reference`, with its
//!    buffer: [`Arc::dbuf_created`]) is off its evictable list until the dbuf goes
//!    (`bufs.rs`); reads take and drop theirs at once, and I/O completes instantly in the
//!    ARC (no `IO_IN_PROGRESS` state: the driver knows which reads are in flight and calls
//!    [`Arc::io_wait`] for a read that finds one, the 2.2 iohit), and
//!    `arc_prune_async()` (dnode/dentry release) is a no-op.
//!    A demand access re-inserts the header at the head of its list (as `remove_reference`
//!    does); a prefetch access that finds the block cached takes no reference and leaves it
//!    in place.
//! 5. The consumers' memory (the dbufs' decompressed copies, `overhead_size`; dbufs,
//!    dnodes, bonus buffers) is modelled in `bufs.rs`, with its own simplifications; the
//!    dbuf cache itself is the caller's.

mod access;
mod arc_p;
mod bufs;
mod evict;
mod limits;
mod meta_balance;
pub(in crate::cache) mod slab;
mod stats;
#[cfg(test)]
pub(in crate::cache) mod tests;
mod types;

use slab::{
    list_index, Header, Slab, State, F2_HELD, F2_PREDICTIVE, F_INDIRECT, F_L2, F_LCOPY, F_META, F_PREFETCH,
    NIL,
};

pub use crate::cache::l2arc::L2KeySpace;
pub use bufs::{dbuf_copy_bytes, ObjsetPins, ABD_SCATTER_MIN_SIZE};
pub use evict::MAX_SKIP_SCAN;
pub use limits::ArcLimits;
pub use meta_balance::evict_adj;
pub use stats::ArcStats;
pub use types::{ArcAccess, ArcParams, ArcRead, BlockInfo, BlockKey, BufType, ReadFlags};

use crate::cache::l2arc::L2;
use crate::config::{ArcAccessRules, ArcAdaptation, ArcFeatures, ArcOverflow, ZfsRelease};
use crate::sim::time::Nanos;
use meta_balance::FRAC_ONE;

/// Bytes of simulator memory `headers` ARC headers (live and ghost) take at most: the
/// 40-byte headers in a slab that grows by doubling, and the key table of their slots,
/// grown one insert at a time (`slab.rs`).
pub fn header_memory_bytes(headers: u64) -> u64 {
    let slab = headers.max(1).checked_next_power_of_two().unwrap_or(u64::MAX);
    slab.saturating_mul(std::mem::size_of::<Header>() as u64)
        .saturating_add(crate::support::key_table::grown_bytes(headers))
}

/// ARC_MINTIME: hz >> 4 ticks = 62 ms at HZ=1000.
pub const ARC_MINTIME: Nanos = 62_000_000;
/// arc_min_prefetch_ms = 1000 (zfs_arc_min_prefetch_ms = 0 default).
pub const ARC_MIN_PREFETCH: Nanos = 1_000_000_000;

/// The ARC of one pool (all datasets share it).
pub struct Arc {
    /// The release (the L2ARC resolves its point-release features from it when a device
    /// is attached; the ARC itself reads only `f`).
    pub(in crate::cache) release: ZfsRelease,
    /// HDR_FULL_SIZE (`f.sizes.hdr_full`), read by every `size()`.
    hdr_full: u64,
    /// Compressed ARC in force (`zfs_compressed_arc_enabled` and the release has it).
    pub(in crate::cache) compressed: bool,
    pub(in crate::cache) slab: Slab,
    pub(in crate::cache) c: u64,
    c_min: u64,
    pub(in crate::cache) c_max: u64,
    p: u64,
    pub(in crate::cache) meta_limit: u64,
    meta_min: u64,
    meta_max: u64,
    // 2.2 fractions and eviction memory.
    meta: u64,
    pd: u64,
    pm: u64,
    meta_balance: u64,
    /// Ghost-hit bytes since the last arc_evict pass: [mru_ghost data, mru_ghost meta,
    /// mfu_ghost data, mfu_ghost meta].
    ghost_hit_bytes: [u64; 4],
    /// Ghost caps from the last arc_evict pass (gsrd, gsrm, gsfd, gsfm).
    ghost_caps: [u64; 4],
    data_size: u64,
    metadata_size: u64,
    uncompressed_size: u64,
    /// What dbufs, dnodes and bonus buffers hold (`bufs.rs`).
    consumers: bufs::Consumers,
    /// 0.6: blocks whose header was evicted or destroyed while an unheld dbuf had its
    /// buffer (F2_USER): the eviction callbacks the dbuf layer runs.
    user_evicts: Vec<BlockKey>,
    /// 0.6: the buffer just allocated (its state, type and bytes), whose allocation
    /// evicts ([`ArcFeatures::evicts_on_allocation`]).
    allocated: Option<(State, bool, u64)>,
    /// How far above `c` an allocation may leave the ARC before eviction runs
    /// ([`ArcOverflow::margin`], set from the point release by [`Arc::set_release_patch`]).
    overflow: ArcOverflow,
    /// `arc_evict_needed`: the eviction thread was woken and goes on while it evicts
    /// something and the ARC is over `c`.
    evict_needed: bool,
    /// `zfs_arc_meta_strategy = 0` (0.8/2.1): `arc_adjust_meta_only`.
    meta_only: bool,
    pub(in crate::cache) st: ArcStats,
    /// The cache device, if any.
    pub(in crate::cache) l2: Option<Box<L2>>,
    /// arc_warm: ends the L2ARC write boost and head-first feed scans.
    pub(in crate::cache) arc_warm: bool,
    /// Turn arc_warm on at the first eviction of a live buffer (facts-page rule).
    pub(in crate::cache) warm_on_evict: bool,
    /// Use the remembered skip windows (off only in tests that compare both ways).
    skip_memo: bool,
    /// Resume L2 feed scans after their ineligible tail runs (off only in tests that
    /// compare both ways).
    pub(in crate::cache) l2run_memo: bool,
    /// Scans answered from a remembered skip window, and scans that slid one forward.
    #[cfg(test)]
    skip_memo_used: u64,
    /// Feed scans that resumed after an L2 run.
    #[cfg(test)]
    pub(in crate::cache) l2run_resumed: u64,
    /// Feed scans from the head that passed a head run.
    #[cfg(test)]
    pub(in crate::cache) l2hrun_passed: u64,
    #[cfg(test)]
    skip_memo_slid: u64,
    /// Windows that expired out of order and were passed again from their records.
    #[cfg(test)]
    skip_memo_rescanned: u64,
    /// What the release does.
    pub(in crate::cache) f: ArcFeatures,
}

/// List type: data.
pub(in crate::cache) const T_DATA: bool = false;
/// List type: metadata.
pub(in crate::cache) const T_META: bool = true;

impl Arc {
    /// Builds an empty ARC with the release's limits for this RAM and these tunables.
    pub fn new(params: &ArcParams) -> Arc {
        let f = params.features();
        let l = ArcLimits::from_params(params);
        let mb = params.tunables.zfs_arc_meta_balance;
        Arc {
            release: params.release,
            f,
            hdr_full: f.sizes.hdr_full,
            compressed: params.tunables.zfs_compressed_arc_enabled.unwrap_or(true) && f.compressed_arc,
            slab: Slab::new(),
            c: l.c,
            c_min: l.c_min,
            c_max: l.c_max,
            p: l.p,
            meta_limit: l.meta_limit,
            meta_min: l.meta_min,
            meta_max: 0,
            meta: FRAC_ONE / 4,
            pd: FRAC_ONE / 2,
            pm: FRAC_ONE / 2,
            meta_balance: if mb == 0 { 500 } else { mb },
            ghost_hit_bytes: [0; 4],
            ghost_caps: [0; 4],
            data_size: 0,
            metadata_size: 0,
            uncompressed_size: 0,
            consumers: bufs::Consumers::new(&f.sizes),
            user_evicts: Vec::new(),
            allocated: None,
            overflow: params.release.features().arc_overflow,
            evict_needed: false,
            meta_only: params.tunables.zfs_arc_meta_strategy == Some(0),
            st: ArcStats::default(),
            l2: None,
            arc_warm: false,
            warm_on_evict: false,
            skip_memo: true,
            l2run_memo: true,
            #[cfg(test)]
            skip_memo_used: 0,
            #[cfg(test)]
            l2run_resumed: 0,
            #[cfg(test)]
            l2hrun_passed: 0,
            #[cfg(test)]
            skip_memo_slid: 0,
            #[cfg(test)]
            skip_memo_rescanned: 0,
        }
    }

    /// How far above `c` an allocation may leave the ARC before eviction runs.
    pub(in crate::cache) fn overflow_margin(&self) -> u64 {
        self.overflow.margin(self.c)
    }

    /// Tests of other mechanisms on small ARCs (whose 16 MiB margin would be a large share
    /// of them): every allocation over `c` evicts, as in 0.6.
    #[cfg(test)]
    pub(in crate::cache) fn evict_at_c(&mut self) {
        self.overflow = ArcOverflow::AtC;
    }

    /// The point release (`release_patch`): features that changed within a release line
    /// (2.2.9's eviction trigger, [`ArcOverflow`]) follow it. [`Arc::new`] takes point
    /// release 0.
    pub fn set_release_patch(&mut self, patch: u16) {
        self.overflow = crate::config::ZfsFeatures::resolve(self.release, patch).arc_overflow;
    }

    /// arcstat size: data + metadata + headers + L2-only headers, and what consumers
    /// hold (their buffers' copies, dbufs, dnodes, bonus buffers: `bufs.rs`).
    pub fn size(&self) -> u64 {
        self.data_size + self.metadata_size + self.hdr_size() + self.l2_hdr_size() + self.consumers.size()
    }

    /// arc_c, the target size.
    pub fn c(&self) -> u64 {
        self.c
    }

    fn hdr_size(&self) -> u64 {
        self.slab.len() as u64 * self.hdr_full
    }

    /// arc_meta_used (0.8/2.1): everything but data (the headers' data buffers and the
    /// dbufs' copies of data blocks).
    fn meta_used(&self) -> u64 {
        self.size() - self.data_size - self.consumers.overhead()[0]
    }

    /// A state's arcs_size (evictable, held, and the held headers' copies).
    fn ssize(&self, s: State) -> u64 {
        self.state_size(s, T_DATA) + self.state_size(s, T_META)
    }

    fn lbytes(&self, s: State, meta: bool) -> u64 {
        self.slab.lists[list_index(s, meta)].bytes
    }

    fn sbytes(&self, s: State) -> u64 {
        self.lbytes(s, T_DATA) + self.lbytes(s, T_META)
    }

    /// True if the block is cached with data (MRU, MFU or UNCACHED), not ghost.
    pub fn contains(&self, key: BlockKey) -> bool {
        self.slab.find(key.0).is_some_and(|i| self.slab.hdrs[i as usize].state.is_live())
    }

    /// Number of headers (cached and ghost).
    pub fn headers(&self) -> usize {
        self.slab.len()
    }

    // ---- state changes with accounting -------------------------------------------------

    /// Moves header `i` (already unlinked) to `to` at the head of its list, fixing sizes.
    pub(in crate::cache) fn enter(&mut self, i: u32, to: State) {
        let h = &mut self.slab.hdrs[i as usize];
        let was_live = h.state.is_live();
        let from = h.state;
        h.state = to;
        if h.flags2 & F2_HELD != 0 {
            self.held_moves(i, from, to);
        }
        let h = &mut self.slab.hdrs[i as usize];
        let (meta, asize, lsize) = (h.is_meta(), h.asize() as u64, h.lsize as u64);
        let now_live = to.is_live();
        if was_live != now_live {
            let sz = if meta { &mut self.metadata_size } else { &mut self.data_size };
            if now_live {
                *sz += asize;
                self.uncompressed_size += lsize;
            } else {
                *sz -= asize;
                self.uncompressed_size -= lsize;
            }
        }
        self.slab.push_head(i);
    }

    /// Destroys header `i` (already unlinked): its data and its header bytes go, and
    /// its L2 copy becomes unreachable.
    pub(in crate::cache) fn destroy(&mut self, i: u32) {
        self.user_evict(i);
        let h = self.slab.hdrs[i as usize];
        if h.flags2 & F2_HELD != 0 {
            // The model destroyed a header a dbuf holds (simplification 4): the copy stays.
            self.held_moves(i, h.state, State::Free);
        }
        if h.flags & F_L2 != 0 {
            self.l2_destroy_hdr(h.l2seq);
        }
        if h.state.is_live() {
            if h.is_meta() {
                self.metadata_size -= h.asize() as u64;
            } else {
                self.data_size -= h.asize() as u64;
            }
            self.uncompressed_size -= h.lsize as u64;
        }
        self.slab.free(i);
    }

    // ---- the read ----------------------------------------------------------------------

    /// One arc_read()/arc_buf_access() of `key` without an L2ARC: hit or miss, with the
    /// release's state transitions, adaptation and (synchronous) eviction. Allocates
    /// nothing once the header slab and table have reached their high-water mark. With a
    /// cache device attached use [`Arc::access`] (an L2 hit would read as a miss here).
    pub fn read(&mut self, key: BlockKey, info: BlockInfo, flags: ReadFlags, now: Nanos) -> ArcRead {
        debug_assert!(self.l2.is_none(), "Arc::read with an L2ARC attached: use Arc::access");
        match self.access(key, info, flags, now) {
            ArcAccess::Hit => ArcRead::Hit,
            ArcAccess::Miss { ghost } => ArcRead::Miss { ghost },
            ArcAccess::L2Hit { .. } => ArcRead::Miss { ghost: false },
        }
    }

    /// Starts bringing into the CPU caches what a coming [`Arc::access`] of `key` reads
    /// first (its L2ARC index slot); changes nothing.
    #[inline]
    pub fn prefetch(&self, key: BlockKey) {
        self.slab.prefetch(key.0);
        if let Some(l2) = &self.l2 {
            l2.prefetch(key.0);
        }
    }

    /// One arc_read()/arc_buf_access() of `key`, with the L2ARC if attached: a block
    /// absent from memory but on the cache device is an [`ArcAccess::L2Hit`] (l2_hits),
    /// any other miss counts l2_misses. Same transitions, adaptation and eviction as
    /// [`Arc::read`]; allocates nothing in steady state.
    pub fn access(&mut self, key: BlockKey, info: BlockInfo, flags: ReadFlags, now: Nanos) -> ArcAccess {
        if self.f.uncached_state {
            self.flush_uncached(now);
        }
        let meta = info.kind == BufType::Metadata;
        let found = self.slab.find(key.0);
        let r = match found {
            Some(i) if self.slab.hdrs[i as usize].state.is_live() => {
                match self.f.access {
                    ArcAccessRules::AddReferenceFirst => self.hit_08(i, flags, now),
                    ArcAccessRules::WasPrefetch => self.hit_22(i, flags, now, false),
                }
                self.l2_after_read(i, key.0, meta, false, false);
                ArcAccess::Hit
            }
            Some(i) => {
                let probe = self.l2_probe_hdr(i, flags.prefetch);
                let h = self.slab.hdrs[i as usize];
                if let (true, Some(l2)) = (probe.read, &self.l2) {
                    // The caller reads the copy's address (`Arc::l2_daddr`) after the
                    // transitions below.
                    l2.prefetch_entry(h.l2seq);
                }
                match self.f.access {
                    ArcAccessRules::AddReferenceFirst => self.ghost_08(i, info, flags, now),
                    ArcAccessRules::WasPrefetch => self.ghost_22(i, info, flags, now),
                }
                if probe.attached {
                    // The header's prefetch flag when the read completes: 0.6 .. 2.1 keep
                    // the stale flag of its previous life; 2.2's arc_access sets it per read.
                    let stale = h.flags & F_PREFETCH != 0;
                    let pf_done = match self.f.access {
                        ArcAccessRules::AddReferenceFirst => stale || flags.prefetch,
                        ArcAccessRules::WasPrefetch => flags.prefetch,
                    };
                    self.l2_after_read(i, key.0, meta, true, pf_done);
                }
                self.l2_outcome(probe.read, probe.attached, (h.psize, h.asize(), h.l2seq), true)
            }
            None => match self.l2.as_ref().and_then(|l| l.locate(key.0)) {
                Some(loc) => match self.l2only_read(key, info, flags, loc, now) {
                    Some((psize, asize, dev)) => {
                        self.st.l2_hits += 1;
                        self.st.l2_read_bytes += psize as u64;
                        ArcAccess::L2Hit { psize, asize, dev, loc: loc.seq }
                    }
                    None => {
                        self.st.l2_misses += 1;
                        ArcAccess::Miss { ghost: false }
                    }
                },
                None => {
                    let i = self.new_block(key, info, flags, now, true);
                    if self.l2.is_some() {
                        self.l2_after_read(i, key.0, meta, true, flags.prefetch);
                        self.st.l2_misses += 1;
                    }
                    ArcAccess::Miss { ghost: false }
                }
            },
        };
        self.note_meta_max();
        if r != ArcAccess::Hit {
            // Only an allocation (arc_get_data_impl) wakes the eviction thread: a hit
            // allocates nothing and evicts nothing (arc.c@zfs-0.8.6, @zfs-2.2.0).
            self.evict_if_over(now);
        }
        r
    }
    /// arc_read of a block whose read is in progress (the caller waits for it, or a
    /// prefetch finds it already coming). 0.8/2.1 clear ARC_FLAG_PREDICTIVE_PREFETCH
    /// without counting, so a later demand hit does not count either, and change nothing
    /// else. 2.2 counts an iohit and calls arc_access: the prefetch flag follows the read,
    /// ARC_FLAG_L2CACHE is set, the header goes to its list's head as the read completes,
    /// without promotion. If the model has evicted the header meanwhile (it has no
    /// references to stop that; the real ARC cannot), the iohit is only counted.
    pub fn io_wait(&mut self, key: BlockKey, info: BlockInfo, flags: ReadFlags, now: Nanos) {
        match self.f.access {
            ArcAccessRules::AddReferenceFirst => {
                if let Some(i) = self.slab.find(key.0) {
                    self.slab.hdrs[i as usize].flags2 &= !F2_PREDICTIVE;
                }
                return;
            }
            ArcAccessRules::WasPrefetch => {}
        }
        if self.f.uncached_state {
            self.flush_uncached(now);
        }
        let meta = info.kind == BufType::Metadata;
        match self.slab.find(key.0).filter(|&i| self.slab.hdrs[i as usize].state.is_live()) {
            Some(i) => {
                self.hit_22(i, flags, now, true);
                self.l2_after_read(i, key.0, meta, false, false);
            }
            None => self.count_iohit(flags.prefetch, meta),
        }
    }

    /// arc_write_done of a block's new version (copy on write): the old version's header
    /// and its L2 copy go (its DVA is freed), and the new buffer moves from anon to MRU
    /// by arc_access (2.2: UNCACHED if the dataset caches no data), counting neither a
    /// hit nor a miss, L2-eligible as `arc_write()` made it. Eviction as after a read.
    pub fn write_done(&mut self, key: BlockKey, info: BlockInfo, flags: ReadFlags, now: Nanos) {
        if self.f.uncached_state {
            self.flush_uncached(now);
        }
        if let Some(i) = self.slab.find(key.0) {
            self.slab.unlink(i);
            self.destroy(i);
        } else if let Some(seq) = self.l2.as_ref().and_then(|l| l.find(key.0)) {
            self.l2_destroy_l2only(seq);
        }
        let i = self.new_block(key, info, ReadFlags { prefetch: false, ..flags }, now, false);
        let uncached = flags.uncacheable && self.f.uncached_state;
        // A hole or an embedded block (psize 0) has nothing on a device to copy: OpenZFS's
        // arc_write_done() discards its identity (buf_discard_identity() for
        // BP_IS_HOLE / BP_IS_EMBEDDED: "the buffer must therefore remain anonymous (and
        // uncached)", arc.c at zfs-2.2.7), so the header never reaches a list the feed scans.
        // The model keeps it (the dbuf's buffer), never L2-eligible.
        self.l2_after_write(i, key.0, info.kind == BufType::Metadata, uncached || info.psize == 0);
        self.note_meta_max();
        self.evict_if_over(now);
    }

    /// The block's cached version is gone without a new buffer (a Direct I/O write put
    /// the new one on disk, 2.3): its header and L2 copy go, as in [`Arc::write_done`]. The
    /// real header, keyed by the old block pointer, lingers unreachable until `arc_freed`
    /// when the txg frees the old block (`fs::zfs::direct`, simplification 2).
    pub fn free(&mut self, key: BlockKey) {
        if let Some(i) = self.slab.find(key.0) {
            self.slab.unlink(i);
            self.destroy(i);
        } else if let Some(seq) = self.l2.as_ref().and_then(|l| l.find(key.0)) {
            self.l2_destroy_l2only(seq);
        }
    }

    /// F_LCOPY when buffers are kept uncompressed (zfs_compressed_arc_enabled = 0).
    pub(in crate::cache) fn copy_flag(&self) -> u8 {
        if self.compressed {
            0
        } else {
            F_LCOPY
        }
    }

    /// Bytes the ARC holds for a block: psize with compressed ARC, else lsize.
    pub(in crate::cache) fn asize_of(&self, info: &BlockInfo) -> u32 {
        if self.compressed {
            info.psize
        } else {
            info.lsize
        }
    }

    /// A new header: arc_hdr_alloc (header bytes), arc_adapt + data allocation in anon,
    /// then arc_access (anon -> MRU, or UNCACHED in 2.2).
    /// Returns the header's slot (freed again if the block is not kept).
    fn new_block(
        &mut self,
        key: BlockKey,
        info: BlockInfo,
        flags: ReadFlags,
        now: Nanos,
        demand: bool,
    ) -> u32 {
        let meta = info.kind == BufType::Metadata;
        let mut f = if meta { F_META } else { 0 };
        if key.level() > 0 {
            f |= F_INDIRECT;
        }
        if flags.prefetch {
            f |= F_PREFETCH;
        }
        let asize = self.asize_of(&info);
        let h = Header {
            key: key.0,
            access: now,
            prev: NIL,
            next: NIL,
            lsize: info.lsize,
            psize: info.psize,
            l2seq: 0,
            state: State::Free,
            flags: f | self.copy_flag(),
            flags2: match self.f.access {
                ArcAccessRules::AddReferenceFirst if flags.prefetch => F2_PREDICTIVE,
                ArcAccessRules::AddReferenceFirst | ArcAccessRules::WasPrefetch => 0,
            },
        };
        // The header is allocated (hdr_size grows) before its data buffer.
        let i = self.slab.alloc(h);
        let bytes = asize as u64;
        match self.f.adaptation {
            ArcAdaptation::ArcP => {
                self.adapt_08(bytes, None);
                self.grow_p_on_alloc(bytes);
            }
            ArcAdaptation::MetaBalance => self.adapt_22(bytes),
        }
        let uncached = flags.uncacheable && self.f.uncached_state;
        self.enter(i, if uncached { State::Uncached } else { State::Mru });
        if self.f.evicts_on_allocation {
            self.allocated = Some((State::Mru, meta, bytes));
        }
        if demand {
            self.count(false, flags.prefetch, meta);
        }
        // An uncacheable block goes at once: 0.6 .. 2.1 by the dbuf release's arc_freed();
        // in the uncached state, remove_reference kills a demand read's buffer on release
        // and a prefetch stays until flushed.
        if flags.uncacheable && !(uncached && flags.prefetch) {
            self.slab.unlink(i);
            self.destroy(i);
        }
        i
    }

    /// arc_adapt for `bytes` coming into the ARC from `from` (a ghost state or
    /// arc_l2c_only; None: a new block), per the release's adaptation. 2.2 records a ghost
    /// hit for its next arc_evict pass.
    pub(in crate::cache) fn adapt(&mut self, bytes: u64, from: Option<State>, meta: bool) {
        match self.f.adaptation {
            ArcAdaptation::ArcP => self.adapt_08(bytes, from),
            ArcAdaptation::MetaBalance => {
                self.note_ghost_hit(from, meta, bytes);
                self.adapt_22(bytes);
            }
        }
    }
}
