//! OpenZFS predictive prefetch (zfetch): per-file streams that detect sequential reads
//! and decide which data (L0) and indirect (L1) blocks to prefetch ahead of the reader.
//!
//! # Source
//!
//! `module/zfs/dmu_zfetch.c` and its caller `dmu_buf_hold_array_by_dnode()` in
//! `module/zfs/dmu.c`, read at zfs-0.8.6, zfs-2.1.0 .. 2.1.16 and zfs-2.2.0 .. 2.2.11. The
//! file changed inside both 2.1 and 2.2, so the rules follow the point release (the
//! release's [`ZfetchFeatures`], each citing its commit; a new release is a new row of
//! [`crate::config::ZfsFeatures`]):
//!
//! - **0.8** (`dmu_zfetch()`, one call after the request's demand reads are issued): a
//!   stream matches when the access starts at the block it expects (`zs_blkid`) or one
//!   before it; no match is a miss that creates a stream (reaping first the streams idle
//!   for more than `zfetch_min_sec_reap` whole seconds); a match is a hit that doubles the
//!   data lookahead (`zs_pf_blkid - blkid + nblks` more blocks, at most
//!   `zfetch_max_distance` ahead of the access) and the indirect lookahead ahead of it
//!   (at most `zfetch_max_idistance`), then issues `dbuf_prefetch()` for each new L0 block
//!   and each L1 block covering the new indirect range. Access to block 0 is ignored.
//! - **2.1.0 .. 2.1.5** (`dmu_zfetch_prepare()` before the demand reads,
//!   `dmu_zfetch_run()` after them): the same distances, but data is prefetched only once
//!   the stream has seen a demand read that was not already cached (`zs_missed`); a stream
//!   is removed when an access reaches `dn_maxblkid`; files with `dn_maxblkid < 2` are
//!   skipped; a stream with prefetch reads in flight (`zs_refs`) is not reaped.
//! - **2.1.6 .. 2.1.9** (884364ea85 "More speculative prefetcher improvements"): distance
//!   `zs_pf_dist` in bytes starts at the access size, doubles on each hit up to
//!   `zfetch_min_distance`, then grows by 1/8 only after a prefetch completed too late
//!   (`zs_more`, set by `dmu_zfetch_done()` when a data prefetch finishes behind the
//!   reader), up to `zfetch_max_distance`; the indirect distance doubles up to
//!   `zfetch_max_idistance`; idle streams are reused (`zfetch_max_sec_reap`, and at the
//!   stream limit the oldest idle for `zfetch_min_sec_reap`).
//! - **2.1.10 .. 2.1.16** (9d2e5c14b2 "System-wide speculative prefetch limit"): the
//!   doubling stops beyond one block while prefetch blocks in flight (`io_active`) reach
//!   `arc_c_max >> (4 + datablkshift)` (about 6% of the ARC).
//! - **2.2.0 .. 2.2.3**: as 2.1.10, and the caller no longer limits prefetch to requests
//!   of at most `zfetch_array_rd_sz` nor skips it for `primarycache` (2.2 caches such
//!   prefetches in `arc_uncached`).
//! - **2.2.4 .. 2.2.11** (026fe79646 "Speculative prefetch for reordered requests"): an
//!   access that misses the exact position but lies within `zfetch_max_reorder` ahead of
//!   a stream is kept as a future range (`zs_ranges`, 9 of them) and the stream advances
//!   once the ranges fill the gap to within `1 >> zfetch_hole_shift` holes (kstat
//!   `stride`, else `future`); an access overlapping the position is a hit for its new
//!   part; one shortly behind a recently used stream is ignored (`past`). Stream times are
//!   whole seconds (`gethrestime_sec()`).
//! - **2.3.0 .. 2.3.2** (84d7d53e91 "Improve speculative prefetcher for block cloning",
//!   read at zfs-2.3.2): as 2.2.11, and `dmu_zfetch_prepare()` itself prefetches the L1
//!   blocks the access needs beyond those already prefetched (the prescient indirect
//!   prefetch: L1 blocks from `max(zs_ipf_end before this access, blkid + 1)` to the
//!   access's end, both rounded up to whole L1 blocks, at sync read priority, with no
//!   stream to report to), on a miss too, and only on the paths that go on to prefetch
//!   (not on `past`, nothing new, or the end of the file); `zfetch_max_idistance` is
//!   128 MiB. The caller takes those blocks with [`Zfetch::take_prescient`].
//!
//! # Interface
//!
//! [`Zfetch::prepare`] and [`Zfetch::run`] are `dmu_zfetch_prepare()` and
//! `dmu_zfetch_run()` (for 0.8 `prepare` only records the request and `run` does all of
//! `dmu_zfetch()`); [`Zfetch::access`] is both. `run` returns the blocks to pass to
//! `dbuf_prefetch_impl()`: a range of L0 block ids and a range of L1 block ids, already
//! cut at the end of the file (blocks past it are "not issued" at once, as
//! `dbuf_prefetch_impl()` does). For every block returned the caller reports
//! [`Zfetch::done`] when its prefetch finished or was not issued (`dmu_zfetch_done()`:
//! it releases the stream's reference and may set `zs_more`); the caller also counts the
//! blocks it really issued ([`Zfetch::count_issued`], kstat `io_issued`).
//!
//! # Simplifications
//!
//! 1. The `prefetch` dataset property (2.2.4+) is not modelled (its default `all`).
//! 2. `spa_indirect_vdevs_loaded()` is taken as true (no device removal).
//! 3. Wall-clock seconds of 2.2.4+ (`gethrestime_sec()`) are whole seconds of simulated
//!    time, which starts on a second boundary.
//! 4. Tunables are fixed for the run, so a distance never shrinks below what was
//!    prefetched; a negative lookahead that a lowered tunable would give in 0.8 / 2.1.0 is
//!    taken as zero.
//!
//! Hot path: streams live in one slab with per-file intrusive lists; after the slab and
//! the file table reach their high-water marks no call allocates.

use std::ops::Range;

use crate::config::{CacheProperty, ZfetchFeatures, ZfetchTunables, ZfsFeatures, ZfsRelease};
use crate::error::{Error, Result};
use crate::fs::zfs::geometry::SPA_BLKPTRSHIFT;
use crate::sim::time::{Nanos, SEC};

const NIL: u32 = u32::MAX;
/// `ZFETCH_RANGES` (include/sys/dmu_zfetch.h, 2.2.4+): future ranges kept per stream.
pub const ZFETCH_RANGES: usize = 9;

/// Release-resolved zfetch parameters.
///
/// Defaults (64-bit kernel; `dmu_zfetch.c` globals of each release):
///
/// | tunable | 0.8.6, 2.1.0-2.1.5 | 2.1.6+, 2.2 |
/// |---|---|---|
/// | `zfs_prefetch_disable` | 0 | 0 |
/// | `zfetch_max_streams` | 8 | 8 |
/// | `zfetch_min_sec_reap` | 2 | 1 |
/// | `zfetch_max_sec_reap` | - | 2 |
/// | `zfetch_min_distance` | - | 4 MiB |
/// | `zfetch_max_distance` | 8 MiB | 64 MiB |
/// | `zfetch_max_idistance` | 64 MiB (a module parameter from 2.0, 7dfc56d866) | 64 MiB; 128 MiB from 2.3.0 (84d7d53e91) |
/// | `zfetch_array_rd_sz` (dmu.c caller) | 1 MiB | 1 MiB in 2.1, removed in 2.2.0 |
/// | `zfetch_max_reorder`, `zfetch_hole_shift` | - | 2.2.4+: 16 MiB, 2 |
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZfetchParams {
    /// The release's rules (at its point release).
    pub rules: ZfetchFeatures,
    /// zfs_prefetch_disable.
    pub prefetch_disable: bool,
    /// zfetch_max_streams.
    pub max_streams: u32,
    /// zfetch_min_sec_reap, seconds.
    pub min_sec_reap: u32,
    /// zfetch_max_sec_reap, seconds (2.1.6+).
    pub max_sec_reap: u32,
    /// zfetch_min_distance, bytes (2.1.6+).
    pub min_distance: u32,
    /// zfetch_max_distance, bytes.
    pub max_distance: u32,
    /// zfetch_max_idistance, bytes.
    pub max_idistance: u32,
    /// zfetch_max_reorder, bytes (2.2.4+).
    pub max_reorder: u32,
    /// zfetch_hole_shift (2.2.4+).
    pub hole_shift: u32,
    /// zfetch_array_rd_sz, bytes (0.8, 2.1; u64::MAX from 2.2.0, where it is gone).
    pub array_rd_sz: u64,
    /// arc_c_max, bytes: the 2.1.10+ `io_active` limit is `arc_c_max >> (4 + dbs)`.
    pub arc_c_max: u64,
    /// Dataset property primarycache: 0.8/2.1 prefetch only if metadata is cacheable
    /// (`DNODE_META_IS_CACHEABLE`) and data only if data is (`DNODE_IS_CACHEABLE`).
    pub primarycache: CacheProperty,
}

impl ZfetchParams {
    /// Fills in the defaults of `release` / `patch` and rejects tunables the release does
    /// not have (field names are `filesystem.zfetch.<tunable>`).
    pub fn resolve(
        release: ZfsRelease,
        patch: u16,
        t: &ZfetchTunables,
        arc_c_max: u64,
        primarycache: CacheProperty,
    ) -> Result<ZfetchParams> {
        let rules = ZfsFeatures::resolve(release, patch).zfetch;
        let new = rules.byte_distances;
        // 0.8's dmu_zfetch() stands for 0.6's too: errors name the modelled code.
        let name = if rules.prepare_run { format!("{}.{patch}", release.name()) } else { "0.8".to_string() };
        let absent = |set: bool, tunable: &str, since: &str| {
            if set {
                Err(Error::config(
                    format!("filesystem.zfetch.{tunable}"),
                    format!("does not exist in release {name} ({since})"),
                ))
            } else {
                Ok(())
            }
        };
        if !new {
            absent(t.zfetch_max_sec_reap.is_some(), "zfetch_max_sec_reap", "added in 2.1.6")?;
            absent(t.zfetch_min_distance.is_some(), "zfetch_min_distance", "added in 2.1.6")?;
        }
        if !rules.idistance_tunable {
            absent(
                t.zfetch_max_idistance.is_some(),
                "zfetch_max_idistance",
                "a module parameter only from 2.0",
            )?;
        }
        if !rules.caller_limits {
            absent(t.zfetch_array_rd_sz.is_some(), "zfetch_array_rd_sz", "removed in 2.2.0")?;
        }
        if !rules.reorder {
            absent(t.zfetch_max_reorder.is_some(), "zfetch_max_reorder", "added in 2.2.4")?;
            absent(t.zfetch_hole_shift.is_some(), "zfetch_hole_shift", "added in 2.2.4")?;
        }
        let max_distance = t.zfetch_max_distance.unwrap_or(if new { 64 << 20 } else { 8 << 20 });
        if max_distance == 0 {
            return Err(Error::config(
                "filesystem.zfetch.zfetch_max_distance",
                "must be at least 1 (dmu_zfetch_stream_create divides by it)",
            ));
        }
        Ok(ZfetchParams {
            rules,
            prefetch_disable: t.zfs_prefetch_disable.unwrap_or(false),
            max_streams: t.zfetch_max_streams.unwrap_or(8),
            min_sec_reap: t.zfetch_min_sec_reap.unwrap_or(if new { 1 } else { 2 }),
            max_sec_reap: t.zfetch_max_sec_reap.unwrap_or(2),
            min_distance: t.zfetch_min_distance.unwrap_or(4 << 20),
            max_distance,
            // 84d7d53e91 (2.3.0) doubled the default.
            max_idistance: t.zfetch_max_idistance.unwrap_or(if rules.prescient_indirect {
                128 << 20
            } else {
                64 << 20
            }),
            max_reorder: t.zfetch_max_reorder.unwrap_or(16 << 20),
            hole_shift: t.zfetch_hole_shift.unwrap_or(2),
            array_rd_sz: if rules.caller_limits { t.zfetch_array_rd_sz.unwrap_or(1 << 20) } else { u64::MAX },
            arc_c_max,
            primarycache,
        })
    }
}

/// The shape of a file's dnode that zfetch reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileShape {
    /// dn_maxblkid: the last L0 block id.
    pub maxblkid: u64,
    /// dn_datablkshift: log2 of the data block size (0 for a single odd-sized block).
    pub datablkshift: u8,
    /// dn_indblkshift: log2 of the indirect block size.
    pub indblkshift: u8,
}

impl FileShape {
    /// log2 of the block pointers per indirect block (`epbs`).
    fn epbs(self) -> u32 {
        self.indblkshift as u32 - SPA_BLKPTRSHIFT
    }
}

/// One `dmu_buf_hold_array_by_dnode()` call: a read (or write) of a range of L0 blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// The file's object number.
    pub object: u32,
    /// First L0 block id of the range.
    pub blkid: u64,
    /// Number of L0 blocks.
    pub nblks: u64,
    /// Bytes requested (compared with `zfetch_array_rd_sz`).
    pub length: u64,
    /// A read (data may be prefetched); a write prefetches indirect blocks only.
    pub read: bool,
    /// The file.
    pub shape: FileShape,
}

/// A stream, as `dmu_zfetch_done()` needs it: slab slot and generation (the slot's
/// streams are told apart in tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StreamId {
    slot: u32,
    generation: u32,
}

impl StreamId {
    /// No stream: a prefetch nobody reports to (2.3's prescient indirect prefetch).
    pub const NONE: StreamId = StreamId { slot: NIL, generation: 0 };
}

/// A prepared prefetch: what `dmu_zfetch_prepare()` hands to `dmu_zfetch_run()`.
#[derive(Debug, Clone, Copy)]
pub struct Pending {
    stream: StreamId,
    /// 0.8 runs the whole of `dmu_zfetch()` in `run`, so it keeps the request.
    request: Request,
    fetch_data: bool,
}

/// What to prefetch: `dbuf_prefetch_impl()` of every L0 block in `data` and every L1
/// block in `l1` (in that order), on behalf of `stream`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prefetch {
    /// The stream to report each block's completion to ([`Zfetch::done`]).
    pub stream: StreamId,
    /// L0 block ids.
    pub data: Range<u64>,
    /// L1 block ids.
    pub l1: Range<u64>,
}

/// zfetchstats (/proc/spl/kstat/zfs/zfetchstats) as counted by the release.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ZfetchStats {
    /// Accesses that continued a stream.
    pub hits: u64,
    /// Accesses that matched no stream (a stream is created for them if allowed).
    pub misses: u64,
    /// Misses that could not create a stream (the file had its maximum).
    pub max_streams: u64,
    /// Prefetch blocks passed to the ARC (2.1+).
    pub io_issued: u64,
    /// Prefetch blocks not yet completed (a gauge; 2.1.10+).
    pub io_active: u64,
    /// Accesses ahead of a stream kept for the future (2.2.4+).
    pub future: u64,
    /// Accesses ahead of a stream that advanced it (2.2.4+).
    pub stride: u64,
    /// Accesses just behind a recently used stream, ignored (2.2.4+).
    pub past: u64,
}

impl ZfetchStats {
    /// The kstat rows the release has, in its order.
    pub fn rows(&self, rules: ZfetchFeatures) -> Vec<(&'static str, u64)> {
        let mut v = vec![("hits", self.hits)];
        if rules.reorder {
            v.extend([("future", self.future), ("stride", self.stride), ("past", self.past)]);
        }
        v.extend([("misses", self.misses), ("max_streams", self.max_streams)]);
        if rules.io_issued_kstat {
            v.push(("io_issued", self.io_issued));
        }
        if rules.io_active_limit {
            v.push(("io_active", self.io_active));
        }
        v
    }
}

/// `zstream_t`. Field meanings per release: 0.8 and 2.1.0 keep `zs_pf_blkid` /
/// `zs_ipf_blkid` in `pf_end` / `ipf_end`, and 2.1.0's `zs_pf_blkid1` / `zs_ipf_blkid1`
/// (where the next run starts) in `pf_start` / `ipf_start`.
#[derive(Debug, Clone, Copy)]
#[repr(C)] // what a list walk reads (blkid, next) first, in one cache line
struct Stream {
    /// zs_blkid: the next block expected.
    blkid: u64,
    /// Next stream of the file's list (NIL at the end).
    next: u32,
    generation: u32,
    /// zs_atime: ns (0.8 .. 2.2.3, signed hrtime) or whole seconds (2.2.4+, wrapping u32).
    atime: i64,
    ranges: [(u16, u16); ZFETCH_RANGES],
    pf_dist: u64,
    ipf_dist: u64,
    pf_start: u64,
    pf_end: u64,
    ipf_start: u64,
    ipf_end: u64,
    missed: bool,
    more: bool,
    /// zs_callers: prepared, not yet run.
    callers: u32,
    /// zs_refs: 1 while on the file's list, plus callers and blocks in flight.
    refs: u32,
}

const EMPTY_STREAM: Stream = Stream {
    blkid: 0,
    atime: 0,
    ranges: [(0, 0); ZFETCH_RANGES],
    pf_dist: 0,
    ipf_dist: 0,
    pf_start: 0,
    pf_end: 0,
    ipf_start: 0,
    ipf_end: 0,
    missed: false,
    more: false,
    callers: 0,
    refs: 0,
    next: NIL,
    generation: 0,
};

/// `zfetch_t`: one file's streams (most recently created first).
#[derive(Debug, Clone, Copy)]
struct Dnode {
    head: u32,
    numstreams: u32,
    /// The slots of the streams linked last (a ring; some may have left the list since):
    /// where [`Zfetch::prefetch_streams`] finds them without walking the list.
    recent: [u32; RECENT_STREAMS],
    recent_next: u32,
}

/// Streams reserved at most when the prefetcher is built (64 K streams, 8 MiB).
pub const STREAMS_RESERVED: usize = 1 << 16;

/// Slots [`Dnode::recent`] remembers: zfetch_max_streams' default.
const RECENT_STREAMS: usize = 8;

const NO_DNODE: Dnode = Dnode { head: NIL, numstreams: 0, recent: [NIL; RECENT_STREAMS], recent_next: 0 };

/// The prefetcher of one pool: every file's streams and the zfetchstats.
#[derive(Debug)]
pub struct Zfetch {
    p: ZfetchParams,
    slab: Vec<Stream>,
    free: Vec<u32>,
    /// Per object number (dense: the dataset's files).
    files: Vec<Dnode>,
    stats: ZfetchStats,
    /// L1 block ids the last `prepare` asked for at once (2.3's prescient prefetch).
    prescient: Range<u64>,
}

impl Zfetch {
    /// Bytes of simulator memory a prefetcher of `files` files with at most
    /// `max_streams` streams a file takes: a dnode entry per file, the streams reserved
    /// when it is built, and, beyond those, one stream per file (a file read at random
    /// keeps one; more only while several readers go through it in sequence).
    pub fn memory_bytes(files: u64, max_streams: u32) -> u64 {
        let room = Self::room(files as usize, max_streams) as u64;
        let streams = room.max(files.min(files.saturating_mul(u64::from(max_streams))));
        let dnodes = files.saturating_add(1).saturating_mul(std::mem::size_of::<Dnode>() as u64);
        dnodes.saturating_add(streams.saturating_mul((std::mem::size_of::<Stream>() + 4) as u64))
    }

    fn room(files: usize, max_streams: u32) -> usize {
        files.max(1).saturating_mul(max_streams.clamp(1, 64) as usize).saturating_mul(2).min(STREAMS_RESERVED)
    }

    /// An empty prefetcher, with room for the streams of `files` files (up to
    /// [`STREAMS_RESERVED`]; beyond that the slab grows as streams are created, so a
    /// dataset of millions of files does not reserve room for streams it never has).
    pub fn new(p: ZfetchParams, files: usize) -> Zfetch {
        let room = Self::room(files, p.max_streams);
        Zfetch {
            p,
            slab: Vec::with_capacity(room),
            free: Vec::with_capacity(room),
            files: vec![NO_DNODE; files + 1],
            stats: ZfetchStats::default(),
            prescient: 0..0,
        }
    }

    /// The L1 blocks of the prescient indirect prefetch of the last [`Zfetch::prepare`]
    /// (2.3+; empty otherwise), cut at the file's last L1 block: `dbuf_prefetch()` of each,
    /// at sync read priority, with no stream ([`Zfetch::done`] of `StreamId::NONE`, which
    /// does nothing); the caller counts the issued ones in `io_issued`.
    pub fn take_prescient(&mut self) -> Range<u64> {
        std::mem::replace(&mut self.prescient, 0..0)
    }

    /// The parameters in force.
    pub fn params(&self) -> &ZfetchParams {
        &self.p
    }

    /// zfetchstats so far.
    pub fn stats(&self) -> ZfetchStats {
        self.stats
    }

    /// Starts bringing the streams of `object` (those linked last) into the CPU caches,
    /// for a coming access; changes nothing. The streams of hundreds of files are far
    /// apart, and an access that matches none walks all of them.
    #[inline]
    pub fn prefetch_streams(&self, object: u32) {
        if let Some(d) = self.files.get(object as usize) {
            for &s in &d.recent {
                if let Some(zs) = self.slab.get(s as usize) {
                    crate::support::mem_hint::prefetch(zs);
                }
            }
        }
    }

    /// Streams on `object`'s list.
    pub fn streams(&self, object: u32) -> u32 {
        self.files.get(object as usize).map_or(0, |d| d.numstreams)
    }

    /// Forgets every stream (the machine restarted: new dnodes). Counters are kept.
    pub fn reset(&mut self) {
        self.slab.clear();
        self.free.clear();
        self.files.fill(NO_DNODE);
        self.stats.io_active = 0;
    }

    /// `dmu_zfetch_prepare()` with the caller's conditions of `dmu_buf_hold_array_by_dnode()`.
    /// `Some` means `run` must follow (with whether any of the request's L0 blocks was
    /// not already cached).
    pub fn prepare(&mut self, req: &Request, now: Nanos) -> Option<Pending> {
        let p = &self.p;
        if p.prefetch_disable {
            return None;
        }
        // dmu.c: 0.8 / 2.1 prefetch only small requests on a dnode whose metadata may be
        // cached, and data only if data may be cached; 2.2 always (uncached prefetches).
        let fetch_data = if p.rules.caller_limits {
            // DNODE_META_IS_CACHEABLE, DNODE_IS_CACHEABLE.
            let (meta_cacheable, data_cacheable) = match p.primarycache {
                CacheProperty::All => (true, true),
                CacheProperty::Metadata => (true, false),
                CacheProperty::None => (false, false),
            };
            if req.length > p.array_rd_sz || !meta_cacheable {
                return None;
            }
            req.read && data_cacheable
        } else {
            req.read
        };
        if !p.rules.prepare_run {
            // "As a fast path for small (single-block) files, ignore access to the first
            // block" (2.x applies this only without the struct lock, never from dmu.c).
            return (req.blkid != 0).then_some(Pending { stream: StreamId::NONE, request: *req, fetch_data });
        }
        if req.shape.maxblkid < 2 {
            return None;
        }
        let stream = if p.rules.reorder {
            self.prepare_22(req, fetch_data, now)?
        } else {
            self.prepare_21(req, fetch_data, now)?
        };
        Some(Pending { stream, request: *req, fetch_data })
    }

    /// `dmu_zfetch_run()` (0.8: `dmu_zfetch()`): the blocks to prefetch now, if any.
    pub fn run(&mut self, pending: Pending, missed: bool, now: Nanos) -> Option<Prefetch> {
        if !self.p.rules.prepare_run {
            return self.zfetch_08(&pending.request, pending.fetch_data, now);
        }
        let slot = pending.stream.slot;
        let shape = pending.request.shape;
        // 2.1.0 .. 2.1.5 (prepare/run with block distances).
        let v210 = !self.p.rules.byte_distances;
        let zs = &mut self.slab[slot as usize];
        if missed {
            zs.missed = true;
        }
        // "Postpone the prefetch if there are more concurrent callers ... The last one
        // will run the prefetch for all."
        zs.callers -= 1;
        if zs.callers != 0 {
            self.release(slot);
            return None;
        }
        let data = if zs.missed {
            let r = zs.pf_start..zs.pf_end;
            zs.pf_start = zs.pf_end;
            r
        } else {
            0..0
        };
        // 2.1.0 starts the indirects at MAX(zs_pf_blkid1, zs_ipf_blkid1).
        let ipf_start = if v210 { zs.pf_start.max(zs.ipf_start) } else { zs.ipf_start };
        let ipf_end = zs.ipf_end;
        zs.ipf_start = zs.ipf_end;
        let epbs = shape.epbs();
        let l1 = roundup_shift(ipf_start, epbs)..roundup_shift(ipf_end, epbs);
        let issued = (data.end - data.start) + (l1.end - l1.start);
        if issued == 0 {
            self.release(slot);
            return None;
        }
        // One reference per block on top of the caller's (taken in prepare).
        self.slab[slot as usize].refs += issued as u32 - 1;
        self.stats.io_active += issued;
        let pf = Prefetch { stream: pending.stream, data, l1 };
        Some(self.cut_at_eof(pf, shape)).filter(|pf| !pf.is_empty())
    }

    /// `prepare` then `run` (`dmu_zfetch()`), for callers that know `missed` up front.
    pub fn access(&mut self, req: &Request, missed: bool, now: Nanos) -> Option<Prefetch> {
        let pending = self.prepare(req, now)?;
        self.run(pending, missed, now)
    }

    /// `dmu_zfetch_done()`: the prefetch of block `blkid` at `level` finished
    /// (`io_issued`: the ARC was asked for it) or was not issued.
    pub fn done(&mut self, stream: StreamId, level: u8, blkid: u64, io_issued: bool) {
        if !self.p.rules.prepare_run || stream.slot == NIL {
            return;
        }
        let zs = &mut self.slab[stream.slot as usize];
        debug_assert_eq!(zs.generation, stream.generation, "done() for a freed stream");
        if self.p.rules.byte_distances && io_issued && level == 0 && blkid < zs.blkid {
            zs.more = true;
        }
        self.stats.io_active = self.stats.io_active.saturating_sub(1);
        self.release(stream.slot);
    }

    /// Adds `n` to kstat `io_issued` (blocks `dbuf_prefetch_impl()` issued; 2.1+).
    pub fn count_issued(&mut self, n: u64) {
        if self.p.rules.io_issued_kstat {
            self.stats.io_issued += n;
        }
    }

    // ---- 0.8 ---------------------------------------------------------------------------

    fn zfetch_08(&mut self, req: &Request, fetch_data: bool, now: Nanos) -> Option<Prefetch> {
        let (mut blkid, mut nblks) = (req.blkid, req.nblks);
        let end = blkid + nblks;
        let shape = req.shape;
        let mut found = NIL;
        let mut s = self.head(req.object);
        while s != NIL {
            let zs = &self.slab[s as usize];
            if blkid == zs.blkid {
                found = s;
                break;
            } else if blkid + 1 == zs.blkid {
                blkid += 1;
                nblks -= 1;
                if nblks == 0 {
                    // "Already prefetched this before."
                    return None;
                }
                found = s;
                break;
            }
            s = zs.next;
        }
        if found == NIL {
            self.stats.misses += 1;
            self.create_08(req.object, shape, end, now);
            return None;
        }
        let dbs = shape.datablkshift as u32;
        let max_distance = self.p.max_distance;
        let max_idistance = self.p.max_idistance;
        let zs = &mut self.slab[found as usize];
        let pf_start = zs.pf_end.max(end);
        let pf_nblks = if fetch_data {
            // "Double our amount of prefetched data, but don't let the prefetch get
            // further ahead than zfetch_max_distance."
            let max_dist_blks = (max_distance >> dbs) as i64;
            let ahead = zs.pf_end as i64 - blkid as i64 + nblks as i64;
            let max_blks = max_dist_blks - (pf_start - end) as i64;
            ahead.min(max_blks).max(0) as u64
        } else {
            0
        };
        zs.pf_end = pf_start + pf_nblks;
        let ipf_start = zs.ipf_end.max(zs.pf_end);
        let max_dist_blks = (max_idistance >> dbs) as i64;
        let ahead = zs.ipf_end as i64 - blkid as i64 + nblks as i64 + pf_nblks as i64;
        let max_blks = max_dist_blks - (ipf_start - end) as i64;
        zs.ipf_end = ipf_start + ahead.min(max_blks).max(0) as u64;
        let epbs = shape.epbs();
        let l1 = roundup_shift(ipf_start, epbs)..roundup_shift(zs.ipf_end, epbs);
        zs.atime = now as i64;
        zs.blkid = end;
        let stream = StreamId { slot: found, generation: zs.generation };
        self.stats.hits += 1;
        let pf = Prefetch { stream, data: pf_start..pf_start + pf_nblks, l1 };
        Some(self.cut_at_eof(pf, shape)).filter(|pf| !pf.is_empty())
    }

    /// 0.8 `dmu_zfetch_stream_create()`: reap streams idle for more than
    /// `zfetch_min_sec_reap` whole seconds, then add one unless at the limit.
    fn create_08(&mut self, object: u32, shape: FileShape, blkid: u64, now: Nanos) {
        let mut s = self.head(object);
        while s != NIL {
            let zs = self.slab[s as usize];
            if (now as i64 - zs.atime) / SEC as i64 > self.p.min_sec_reap as i64 {
                self.remove(object, s);
            }
            s = zs.next;
        }
        if self.streams(object) >= self.max_streams(shape) {
            self.stats.max_streams += 1;
            return;
        }
        let slot = self.insert_new(object);
        self.reset_stream(slot, blkid, now as i64);
    }

    // ---- 2.1.0 .. 2.2.3 ----------------------------------------------------------------

    fn prepare_21(&mut self, req: &Request, fetch_data: bool, now: Nanos) -> Option<StreamId> {
        let (mut blkid, mut nblks) = (req.blkid, req.nblks);
        let shape = req.shape;
        let mut found = NIL;
        let mut s = self.head(req.object);
        while s != NIL {
            let zs = &self.slab[s as usize];
            if blkid == zs.blkid {
                found = s;
                break;
            } else if blkid + 1 == zs.blkid {
                blkid += 1;
                nblks -= 1;
                found = s;
                break;
            }
            s = zs.next;
        }
        let end = blkid + nblks;
        // "If the file is ending, remove the matching stream if found. If not found then
        // it is too late to create a new one now."
        if end >= shape.maxblkid {
            if found != NIL {
                self.remove(req.object, found);
            }
            return None;
        }
        if nblks == 0 {
            return None;
        }
        if found == NIL {
            self.create_21(req.object, shape, end, now);
            self.stats.misses += 1;
            return None;
        }
        if self.p.rules.byte_distances {
            self.distances(found, shape, end, nblks, fetch_data);
        } else {
            self.distances_210(found, shape, blkid, end, nblks, fetch_data);
        }
        let zs = &mut self.slab[found as usize];
        zs.blkid = end;
        zs.atime = now as i64;
        zs.refs += 1;
        zs.callers += 1;
        self.stats.hits += 1;
        Some(StreamId { slot: found, generation: zs.generation })
    }

    /// 2.1.0 .. 2.1.5 distances (0.8's doubling; `pf_start` / `ipf_start` are
    /// `zs_pf_blkid1` / `zs_ipf_blkid1`).
    fn distances_210(
        &mut self,
        slot: u32,
        shape: FileShape,
        blkid: u64,
        end: u64,
        nblks: u64,
        fetch_data: bool,
    ) {
        let dbs = shape.datablkshift as u32;
        let (max_distance, max_idistance) = (self.p.max_distance, self.p.max_idistance);
        let zs = &mut self.slab[slot as usize];
        let pf_start = zs.pf_end.max(end);
        zs.pf_start = zs.pf_start.max(end);
        zs.ipf_start = zs.ipf_start.max(end);
        let pf_nblks = if fetch_data {
            let max_dist_blks = (max_distance >> dbs) as i64;
            let ahead = zs.pf_end as i64 - blkid as i64 + nblks as i64;
            let max_blks = max_dist_blks - (pf_start - end) as i64;
            ahead.min(max_blks).max(0) as u64
        } else {
            0
        };
        zs.pf_end = pf_start + pf_nblks;
        let ipf_start = zs.ipf_end.max(zs.pf_end);
        let max_dist_blks = (max_idistance >> dbs) as i64;
        let ahead = zs.ipf_end as i64 - blkid as i64 + nblks as i64 + pf_nblks as i64;
        // Unlike 0.8, measured from the end of the data prefetch.
        let max_blks = max_dist_blks - (ipf_start - zs.pf_end) as i64;
        zs.ipf_end = ipf_start + ahead.min(max_blks).max(0) as u64;
    }

    /// 2.1.6+ distances: "Start prefetch from the demand access size (nblks). Double the
    /// distance every access up to zfetch_min_distance. After that only if needed
    /// increase the distance by 1/8 up to zfetch_max_distance."
    fn distances(&mut self, slot: u32, shape: FileShape, end: u64, nblks: u64, fetch_data: bool) {
        let dbs = shape.datablkshift as u32;
        let p = &self.p;
        // 2.1.10+: "Don't double the distance beyond single block if we have more than ~6%
        // of ARC held by active prefetches."
        let room = !p.rules.io_active_limit || self.stats.io_active < p.arc_c_max >> (4 + dbs);
        let zs = &mut self.slab[slot as usize];
        let nbytes = nblks << dbs;
        let pf_nblks = if fetch_data {
            if zs.pf_dist < nbytes {
                zs.pf_dist = nbytes;
            } else if zs.pf_dist < p.min_distance as u64 && (zs.pf_dist < 1 << dbs || room) {
                zs.pf_dist *= 2;
            } else if zs.more {
                zs.pf_dist += zs.pf_dist / 8;
            }
            zs.more = false;
            zs.pf_dist = zs.pf_dist.min(p.max_distance as u64);
            zs.pf_dist >> dbs
        } else {
            0
        };
        zs.pf_start = zs.pf_start.max(end);
        zs.pf_end = zs.pf_end.max(end + pf_nblks);
        // "Do the same for indirects, starting where we will stop reading data blocks."
        if zs.ipf_dist < nbytes {
            zs.ipf_dist = nbytes;
        } else {
            zs.ipf_dist *= 2;
        }
        zs.ipf_dist = zs.ipf_dist.min(p.max_idistance as u64);
        let ipf_nblks = zs.ipf_dist >> dbs;
        zs.ipf_start = zs.ipf_start.max(zs.pf_end);
        zs.ipf_end = zs.ipf_end.max(zs.pf_end + ipf_nblks);
    }

    /// 2.1 / 2.2.0-2.2.3 `dmu_zfetch_stream_create()` (2.1.0 .. 2.1.5: the 0.8 reaping,
    /// sparing streams with references).
    fn create_21(&mut self, object: u32, shape: FileShape, blkid: u64, now: Nanos) {
        let now = now as i64;
        let p = &self.p;
        if !p.rules.byte_distances {
            let min_reap = p.min_sec_reap as i64;
            let mut s = self.head(object);
            while s != NIL {
                let zs = self.slab[s as usize];
                if zs.refs == 1 && (now - zs.atime) / SEC as i64 > min_reap {
                    self.remove(object, s);
                }
                s = zs.next;
            }
            if self.streams(object) >= self.max_streams(shape) {
                self.stats.max_streams += 1;
                return;
            }
            let slot = self.insert_new(object);
            self.reset_stream(slot, blkid, now);
            return;
        }
        // "Delete too old streams, reusing the first found one."
        let (min_reap, max_reap) = (p.min_sec_reap as i64 * SEC as i64, p.max_sec_reap as i64 * SEC as i64);
        let t = now - max_reap;
        let mut old = NIL;
        let mut s = self.head(object);
        while s != NIL {
            let zs = self.slab[s as usize];
            if zs.refs == 1 && zs.atime <= t {
                if old != NIL {
                    self.remove(object, s);
                } else {
                    old = s;
                }
            }
            s = zs.next;
        }
        if old == NIL && self.streams(object) >= self.max_streams(shape) {
            let t = now - min_reap;
            let mut s = self.head(object);
            while s != NIL {
                let zs = self.slab[s as usize];
                if zs.refs == 1 && zs.atime <= t && (old == NIL || zs.atime < self.slab[old as usize].atime) {
                    old = s;
                }
                s = zs.next;
            }
            if old == NIL {
                self.stats.max_streams += 1;
                return;
            }
        }
        let slot = if old != NIL { old } else { self.insert_new(object) };
        // "Allow immediate stream reuse until first hit."
        self.reset_stream(slot, blkid, now - min_reap);
    }

    // ---- 2.2.4+ ------------------------------------------------------------------------

    fn prepare_22(&mut self, req: &Request, fetch_data: bool, now: Nanos) -> Option<StreamId> {
        let (mut blkid, mut nblks) = (req.blkid, req.nblks);
        let shape = req.shape;
        let dbs = shape.datablkshift as u32;
        let now_s = now_secs(now);
        let end_blkid = blkid + nblks;
        // Find the perfect stream.
        let mut found = NIL;
        let mut s = self.head(req.object);
        while s != NIL {
            let zs = &self.slab[s as usize];
            if blkid == zs.blkid {
                found = s;
                break;
            } else if blkid + 1 == zs.blkid {
                blkid += 1;
                nblks -= 1;
                found = s;
                break;
            }
            s = zs.next;
        }
        let mut hit = found != NIL;
        if !hit {
            // "Find close enough prefetch stream."
            let max_reorder = ((self.p.max_reorder >> dbs) as u64 + 1).min(u16::MAX as u64);
            let t = now_s.wrapping_sub(self.p.max_sec_reap);
            let mut s = self.head(req.object);
            while s != NIL {
                let zs = self.slab[s as usize];
                if blkid > zs.blkid {
                    if end_blkid <= zs.blkid + max_reorder {
                        if !fetch_data {
                            nblks = self.zfetch_hit(s, end_blkid - zs.blkid);
                            self.stats.stride += 1;
                        } else {
                            nblks = self.zfetch_future(s, blkid, nblks);
                            if nblks > 0 {
                                self.stats.stride += 1;
                            } else {
                                self.stats.future += 1;
                            }
                        }
                        found = s;
                        break;
                    }
                } else if end_blkid >= zs.blkid {
                    nblks -= zs.blkid - blkid;
                    blkid = zs.blkid;
                    found = s;
                    hit = true;
                    break;
                } else if end_blkid + max_reorder > zs.blkid && (zs.atime as u32).wrapping_sub(t) as i32 >= 0
                {
                    self.stats.past += 1;
                    self.slab[s as usize].atime = now_s as i64;
                    return None;
                }
                s = zs.next;
            }
            if found == NIL {
                // "Create a new stream for it unless we are at the end of file."
                if end_blkid < shape.maxblkid {
                    self.create_22(req.object, shape, end_blkid, now_s);
                }
                self.stats.misses += 1;
                self.set_prescient(0, blkid, end_blkid, shape);
                return None;
            }
        }
        if hit {
            debug_assert_eq!(blkid, self.slab[found as usize].blkid);
            nblks = self.zfetch_hit(found, nblks);
            self.stats.hits += 1;
        }
        self.slab[found as usize].atime = now_s as i64;
        // "Exit if we already prefetched for this position before."
        if nblks == 0 {
            return None;
        }
        let end = self.slab[found as usize].blkid;
        if end >= shape.maxblkid {
            self.remove(req.object, found);
            return None;
        }
        let ipf_end_before = self.slab[found as usize].ipf_end;
        self.distances(found, shape, end, nblks, fetch_data);
        let zs = &mut self.slab[found as usize];
        zs.refs += 1;
        zs.callers += 1;
        let id = StreamId { slot: found, generation: zs.generation };
        self.set_prescient(ipf_end_before, blkid, end, shape);
        Some(id)
    }

    /// 2.3's prescient indirect prefetch (`prescient:` in `dmu_zfetch_prepare()`): L1
    /// blocks from `max(ipf_start, blkid + 1)` to `end_blkid`, each rounded up to a whole
    /// L1 block, cut at the file's last L1 block (`dbuf_prefetch_impl()` issues nothing
    /// past the end).
    fn set_prescient(&mut self, ipf_start: u64, blkid: u64, end_blkid: u64, shape: FileShape) {
        if !self.p.rules.prescient_indirect {
            return;
        }
        let epbs = shape.epbs();
        let start = roundup_shift(ipf_start.max(blkid + 1), epbs);
        let last_l1 = shape.maxblkid >> epbs;
        let end = roundup_shift(end_blkid, epbs).min(last_l1 + 1);
        self.prescient = start..end.max(start);
    }

    /// `dmu_zfetch_hit()`: the stream advances by `nblks` and through any future ranges
    /// that the access reaches; returns how far it advanced.
    fn zfetch_hit(&mut self, slot: u32, mut nblks: u64) -> u64 {
        let zs = &mut self.slab[slot as usize];
        if zs.ranges[0].0 != 0 {
            let r = &mut zs.ranges;
            let mut i = 0;
            while i < ZFETCH_RANGES {
                let (start, end) = (r[i].0 as u64, r[i].1 as u64);
                if start == 0 || start > nblks {
                    break;
                }
                if end >= nblks {
                    nblks = end;
                    i += 1;
                    break;
                }
                i += 1;
            }
            // Delete the ranges passed, shift the rest to the new position.
            let mut j = 0;
            while i < ZFETCH_RANGES {
                if r[i].0 == 0 {
                    break;
                }
                r[j] = ((r[i].0 as u64 - nblks) as u16, (r[i].1 as u64 - nblks) as u16);
                i += 1;
                j += 1;
            }
            if j < ZFETCH_RANGES {
                r[j] = (0, 0);
            }
        }
        zs.blkid += nblks;
        nblks
    }

    /// `dmu_zfetch_future()`: keeps an access ahead of the stream as a range (relative to
    /// `zs_blkid`); once the ranges leave few enough holes, the stream jumps to the end of
    /// the filled part. Returns how far it advanced (0: kept for the future).
    fn zfetch_future(&mut self, slot: u32, blkid: u64, nblks: u64) -> u64 {
        let hole_shift = self.p.hole_shift;
        let zs = &mut self.slab[slot as usize];
        let b = blkid - zs.blkid;
        let e = b + nblks;
        debug_assert!(e <= u16::MAX as u64);
        let (b, e) = (b as u16, e as u16);
        let r = &mut zs.ranges;
        // First and last intersecting range, or the insertion point.
        let (mut f, mut l, mut i) = (ZFETCH_RANGES, 0, 0);
        while i < ZFETCH_RANGES {
            if r[i].0 == 0 || r[i].0 > e {
                break;
            }
            if r[i].1 >= b {
                f = f.min(i);
                l = l.max(i);
            }
            i += 1;
        }
        if f <= l {
            // Expand the first intersecting range; fold the others into it (the source
            // shifts the rest left and clears one slot).
            if r[f].0 > b {
                r[f].0 = b;
            }
            r[f].1 = r[l].1.max(e);
            if f < l {
                let (mut f2, mut l2) = (f + 1, l + 1);
                while l2 < ZFETCH_RANGES {
                    r[f2] = r[l2];
                    f2 += 1;
                    l2 += 1;
                }
                r[f2] = (0, 0);
            }
        } else if i < ZFETCH_RANGES {
            let mut k = ZFETCH_RANGES - 1;
            while k > i {
                r[k] = r[k - 1];
                k -= 1;
            }
            r[i] = (b, e);
        } else {
            // "No space left to insert. Drop the range."
            return 0;
        }
        // "Check if with the new access addition we reached fill threshold."
        if hole_shift >= 16 {
            return 0;
        }
        let (mut hole, mut prev_end, mut reach) = (0u32, 0u32, 0u32);
        for &(start, end) in r.iter() {
            if start == 0 {
                break;
            }
            hole += start as u32 - prev_end;
            prev_end = end as u32;
            if hole <= (end as u32) >> hole_shift {
                reach = end as u32;
            }
        }
        if reach > 0 {
            return self.zfetch_hit(slot, reach as u64);
        }
        0
    }

    /// 2.2.4+ `dmu_zfetch_stream_create()`: as 2.1.6 with whole-second wrapping times; a
    /// reused stream moves to the head of the list.
    fn create_22(&mut self, object: u32, shape: FileShape, blkid: u64, now_s: u32) {
        let p = &self.p;
        let (min_reap, max_reap) = (p.min_sec_reap, p.max_sec_reap);
        let active = |atime: i64, t: u32| (atime as u32).wrapping_sub(t) as i32 >= 0;
        let t = now_s.wrapping_sub(max_reap);
        let mut old = NIL;
        let mut s = self.head(object);
        while s != NIL {
            let zs = self.slab[s as usize];
            if !active(zs.atime, t) && zs.refs == 1 {
                if old != NIL {
                    self.remove(object, s);
                } else {
                    old = s;
                }
            }
            s = zs.next;
        }
        if old == NIL && self.streams(object) >= self.max_streams(shape) {
            let t = now_s.wrapping_sub(min_reap);
            let mut s = self.head(object);
            while s != NIL {
                let zs = self.slab[s as usize];
                let older =
                    |o: u32| (self.slab[o as usize].atime as u32).wrapping_sub(zs.atime as u32) as i32 >= 0;
                if !active(zs.atime, t) && zs.refs == 1 && (old == NIL || older(old)) {
                    old = s;
                }
                s = zs.next;
            }
            if old == NIL {
                self.stats.max_streams += 1;
                return;
            }
        }
        let slot = if old != NIL {
            self.unlink(object, old);
            self.link_head(object, old);
            old
        } else {
            self.insert_new(object)
        };
        self.reset_stream(slot, blkid, now_s.wrapping_sub(min_reap) as i64);
    }

    // ---- streams and lists -------------------------------------------------------------

    /// The limit of streams for a file: "for small files we lower it such that it's at
    /// least possible for all the streams to be non-overlapping."
    fn max_streams(&self, shape: FileShape) -> u32 {
        let bytes = shape.maxblkid << shape.datablkshift;
        (self.p.max_streams as u64).min(bytes / self.p.max_distance as u64).max(1) as u32
    }

    /// `object`'s dnode (the table grows for an object beyond the dataset's files).
    fn dnode(&mut self, object: u32) -> &mut Dnode {
        let o = object as usize;
        if o >= self.files.len() {
            self.files.resize(o + 1, NO_DNODE);
        }
        &mut self.files[o]
    }

    fn head(&self, object: u32) -> u32 {
        self.files.get(object as usize).map_or(NIL, |d| d.head)
    }

    /// A new stream (one reference: the list's) at the head of `object`'s list.
    fn insert_new(&mut self, object: u32) -> u32 {
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.slab.push(EMPTY_STREAM);
                (self.slab.len() - 1) as u32
            }
        };
        let generation = self.slab[slot as usize].generation;
        self.slab[slot as usize] = Stream { refs: 1, generation, ..EMPTY_STREAM };
        self.link_head(object, slot);
        self.dnode(object).numstreams += 1;
        slot
    }

    /// The stream's state for a (re)start at `blkid` with access time `atime`: a new
    /// stream, reused or not (a reused one has no block in flight).
    fn reset_stream(&mut self, slot: u32, blkid: u64, atime: i64) {
        let zs = &mut self.slab[slot as usize];
        zs.generation = zs.generation.wrapping_add(1);
        zs.blkid = blkid;
        zs.atime = atime;
        zs.ranges = [(0, 0); ZFETCH_RANGES];
        zs.pf_dist = 0;
        zs.ipf_dist = 0;
        zs.pf_start = blkid;
        zs.pf_end = blkid;
        zs.ipf_start = blkid;
        zs.ipf_end = blkid;
        zs.missed = false;
        zs.more = false;
    }

    fn link_head(&mut self, object: u32, slot: u32) {
        let head = self.dnode(object).head;
        self.slab[slot as usize].next = head;
        let d = self.dnode(object);
        d.head = slot;
        d.recent[d.recent_next as usize % RECENT_STREAMS] = slot;
        d.recent_next = d.recent_next.wrapping_add(1);
    }

    fn unlink(&mut self, object: u32, slot: u32) {
        let next = self.slab[slot as usize].next;
        let d = self.dnode(object);
        if d.head == slot {
            d.head = next;
        } else {
            let mut s = d.head;
            while self.slab[s as usize].next != slot {
                s = self.slab[s as usize].next;
            }
            self.slab[s as usize].next = next;
        }
        self.slab[slot as usize].next = NIL;
    }

    /// `dmu_zfetch_stream_remove()`: off the list; freed once its references are gone.
    fn remove(&mut self, object: u32, slot: u32) {
        self.unlink(object, slot);
        self.dnode(object).numstreams -= 1;
        if !self.p.rules.prepare_run {
            self.free_slot(slot);
        } else {
            self.release(slot);
        }
    }

    fn release(&mut self, slot: u32) {
        let zs = &mut self.slab[slot as usize];
        debug_assert!(zs.refs > 0);
        zs.refs -= 1;
        if zs.refs == 0 {
            self.free_slot(slot);
        }
    }

    fn free_slot(&mut self, slot: u32) {
        self.slab[slot as usize].generation = self.slab[slot as usize].generation.wrapping_add(1);
        self.free.push(slot);
    }

    /// `dbuf_prefetch_impl()` issues nothing past `dn_maxblkid` (L0: `blkid > maxblkid`;
    /// L1: `maxblkid < blkid << epbs`); those blocks are done at once.
    fn cut_at_eof(&mut self, mut pf: Prefetch, shape: FileShape) -> Prefetch {
        let data_end = pf.data.end.min(shape.maxblkid + 1).max(pf.data.start);
        let l1_end = pf.l1.end.min((shape.maxblkid >> shape.epbs()) + 1).max(pf.l1.start);
        let cut = (pf.data.end - data_end) + (pf.l1.end - l1_end);
        pf.data.end = data_end;
        pf.l1.end = l1_end;
        for _ in 0..cut {
            self.done(pf.stream, 0, u64::MAX, false);
        }
        pf
    }
}

impl Prefetch {
    /// Nothing to prefetch.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty() && self.l1.is_empty()
    }
}

/// `P2ROUNDUP(x, 1 << shift) >> shift`.
fn roundup_shift(x: u64, shift: u32) -> u64 {
    (x + (1u64 << shift) - 1) >> shift
}

/// `gethrestime_sec()` on the simulated clock.
fn now_secs(now: Nanos) -> u32 {
    (now / SEC) as u32
}

#[cfg(test)]
#[path = "zfetch_tests.rs"]
mod tests;
