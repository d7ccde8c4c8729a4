//! The pool: top-level vdevs (single devices or n-way mirrors), where each block lives on
//! them, and which device serves a read.
//!
//! Allocation (`metaslab_alloc_dva`, module/zfs/metaslab.c, read at zfs-0.8.6, 2.1.0,
//! 2.2.7). The metaslab class keeps a rotor over the top-level vdevs' metaslab groups and
//! a byte count `mc_aliquot`. Each allocation goes to the rotor's vdev and adds its asize
//! to the count; once the count reaches the group's `mg_aliquot + mg_bias` the rotor moves
//! to the next vdev and the count restarts. So a file written sequentially lies in chunks
//! of about `mg_aliquot` bytes on successive vdevs, each chunk contiguous (the group's
//! metaslab allocates from a cursor), and a vdev's chunks follow one another.
//! - `mg_aliquot` (metaslab_group_activate): 0.8 and 2.1: `metaslab_aliquot` (512 KiB)
//!   times `max(1, vdev_children)`: 1 MiB for a two-way mirror, 512 KiB for a single disk;
//!   2.2 (commit c55b293287, "Improve mg_aliquot math"): `metaslab_aliquot` (1 MiB) times
//!   `max(1, ndisks - nparity)`, and a mirror counts one disk: 1 MiB for both. Both are
//!   the release's [`PoolFeatures`], read when the pool is built.
//! - `mg_bias` (metaslab_bias_enabled = 1), set at the first allocation of a turn:
//!   `((ratio - 100) * mg_aliquot) / 100` with `ratio = vs_free * groups * 100 / (mc_free + 1)`
//!   in integers: nothing on an evenly filled pool; it evens out vdevs of unequal size or
//!   fill. Needs every vdev's size; without one, the bias stays 0.
//! - The rotor starts where metaslab_group_activate leaves it: on the last vdev added.
//! - Blocks with two copies (ditto: indirect blocks under redundant_metadata=all, the
//!   default, get `copies + 1`): the second DVA goes to the vdev after the first's
//!   (`d != 0`: `mg = vdev_mg->mg_next`) and counts towards the rotor like any allocation,
//!   possibly moving it. In a one-vdev pool the copy must be in another metaslab
//!   (metaslab_is_unique); we put those copies after the file data.
//!
//! Write order (our assumption about the files, not OpenZFS's code): the dataset's files
//! (objects 1, 2, ...) are written one after the other, each sequentially as if in one
//! transaction group: its records in order, then its indirect blocks level by level (a
//! parent allocates after its children: zio_write_compress waits for the children's ready
//! stage to fill in their block pointers). A file written over many txgs has its indirect
//! blocks after each txg's records instead; reads of data are not affected.
//! Offsets on a vdev are exact: the stream of every block's asize (psize from the
//! [`CompressionModel`](super::compression::CompressionModel), so it varies per block) is replayed once when the pool is built,
//! keeping where each run of contiguous blocks starts and, every 16 blocks, the run and
//! exact offset of that block; a lookup sums the asizes from the checkpoint or the run's
//! start, whichever is later (at most 15 blocks).
//!
//! Reads (`vdev_mirror_io_start` and `vdev_mirror_child_select`, module/zfs/vdev_mirror.c,
//! the same in 0.8.6 and 2.2.7): a block pointer with two DVAs is read as a "mirror of
//! DVAs" (mm_root) whose children all have equal load, so one copy is picked at random
//! (spa_get_random), then a lower-index copy on the same vdev is preferred
//! (vdev_mirror_dva_select). A mirror vdev reads one child: the least loaded by
//! `vdev_mirror_load` = the child's queue length (`vdev_queue_length`, I/Os issued to it)
//! plus an increment by locality to its last I/O (`vq_last_offset`); ties are broken by
//! `(offset >> vdev_mirror_shift) % ties`. The older policy (OpenSolaris, FreeBSD before
//! r256956, so the pool v28 of FreeBSD 8.3): the child `(offset >> 21) % children`, load
//! ignored ([`MirrorReadPolicy::Offset`]; vdev_mirror_map_alloc at commit 1bd201e70d,
//! 2012). ZoL 0.6.2 to 0.6.5 had a third, queue-length-only policy (556011dbec), not
//! modelled; ZoL took FreeBSD's in 0.7 (9f500936c8).
//!
//! Every I/O of the pool's leaves passes their vdev queues ([`super::vdev_queue`], which
//! the pool owns): a mirror child's queue length is its queue's issued I/Os
//! (`vdev_queue_length`).
//!
//! Simplifications: 1. one rotor; 2.1 and later keep one per allocator (spa_allocators =
//! 4, chosen by a hash of objset, object, level and blkid >> 20), which changes which vdev a
//! file's chunks start on, not the chunking; 2. (gone: the queue length is the vdev
//! queue's); 3. metaslabs are not modelled: each vdev fills from its start (metaslab_weight
//! favours low, outer metaslabs on rotating disks); 4. gang blocks, dedup, and
//! redundant_metadata other than all are not modelled; 5. a pool of one solid-state device
//! lays nothing out (its device ignores positions); the vdev queue needs a read's offset
//! only when it may aggregate it (something is queued on the leaf, or it will be), and then
//! a data record's is its file's start (the files' logical sizes before it) plus the
//! stored sizes of the records before it in the file as they are now (checkpoints every
//! 64 records, computed for a file the first time), indirect blocks lying apart (they
//! never aggregate with data).

use hashbrown::HashMap;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::geometry::DN_MAX_LEVELS;
use super::read_path::ZfsLayout;
use super::vdev_queue::{Priority, Queued, Request, Tag, VdevQueue, VdevQueueParams};
use crate::cache::arc::BlockKey;
use crate::config::{
    DeviceConfig, MgAliquot, MirrorReadPolicy, PoolFeatures, PoolTunables, VdevConfig, ZfsConfig, ZfsFeatures,
};
use crate::dev::device::{Device, Op};
use crate::error::{Error, Result};
use crate::sim::time::Nanos;

/// Bytes before the allocatable space of a leaf: two 256 KiB labels and the 3.5 MiB boot
/// block (`VDEV_LABEL_START_SIZE`, include/sys/vdev_impl.h). DVA offsets start after it.
pub const VDEV_LABEL_START_SIZE: u64 = 4 << 20;
/// Bytes after the allocatable space: two labels (`VDEV_LABEL_END_SIZE`).
pub const VDEV_LABEL_END_SIZE: u64 = 512 << 10;
/// `vdev_mirror_shift` (21, vdev_mirror.c): mirror ties are broken per 2 MiB of offset.
pub const VDEV_MIRROR_SHIFT: u32 = 21;

/// Where one copy of a block lives: top-level vdev and byte offset in its allocatable space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dva {
    /// Top-level vdev index (order of `filesystem.vdevs`).
    pub vdev: u32,
    /// Offset from the start of the allocatable space (add [`VDEV_LABEL_START_SIZE`] for
    /// the byte offset on a leaf device).
    pub offset: u64,
}

/// A top-level vdev: its leaf devices (indices into the run's devices).
#[derive(Debug, Clone)]
struct TopVdev {
    children: Vec<usize>,
    /// Reads need the offset on it: a mirror (locality, tie-break) or a rotating child.
    positional: bool,
}

/// One run of blocks allocated back to back on one vdev, by stream index.
#[derive(Debug, Clone, Copy)]
struct Run {
    first: u64,
    vdev: u32,
    offset: u64,
}

/// Packed DVA of a ditto copy: vdev in the top 16 bits, offset in 512-byte units below.
const DVA_OFFSET_BITS: u32 = 48;

/// Where every block of the dataset lives (see the module docs).
#[derive(Debug)]
struct AllocationMap {
    layout: ZfsLayout,
    files: u32,
    /// Stream index of each file's first block; `[files]` = blocks of the dataset.
    file_start: Vec<u64>,
    /// Per file: stream index, within the file, of each level's first block;
    /// `[nlevels]` = the file's blocks.
    level_start: Vec<[u64; DN_MAX_LEVELS + 1]>,
    /// Per file: index in `ditto` of its first indirect block.
    ditto_start: Vec<u64>,
    runs: Vec<Run>,
    /// Every [`CHECKPOINT_BLOCKS`]-th stream index `c`: the run holding it and its exact
    /// offset, so that a lookup neither searches `runs` nor sums more than
    /// `CHECKPOINT_BLOCKS - 1` asizes (it summed up to an aliquot's blocks, each a
    /// compression draw, and binary-searched `runs`: a tenth of experiment 2's run).
    checkpoints: Vec<Checkpoint>,
    /// Second DVA of every indirect block, in stream order.
    ditto: Vec<u64>,
}

/// Stream indices between two [`AllocationMap::checkpoints`].
const CHECKPOINT_BLOCKS: u64 = 16;

/// Where stream index `c * CHECKPOINT_BLOCKS` lies: its run (index in `runs`) and offset,
/// with that run's vdev and the next run's first index copied in, so that a block in the
/// checkpoint's run is found with this one read.
#[derive(Debug, Clone, Copy)]
struct Checkpoint {
    run: u32,
    vdev: u32,
    offset: u64,
    /// `runs[run + 1].first` (u64::MAX for the last run).
    next_first: u64,
}

impl Checkpoint {
    /// In run `run` at `offset`; the run's vdev and end are filled in once the runs are.
    fn at(run: u32, offset: u64) -> Checkpoint {
        Checkpoint { run, vdev: 0, offset, next_first: u64::MAX }
    }
}

impl AllocationMap {
    fn stream_index(&self, key: BlockKey) -> u64 {
        debug_assert!(
            (1..=self.files).contains(&key.object()),
            "object {} outside the dataset",
            key.object()
        );
        let f = key.object() as usize - 1;
        debug_assert!(key.level() < self.layout.geometry(key.object()).nlevels());
        self.file_start[f] + self.level_start[f][key.level() as usize] + key.blkid()
    }

    /// Sum of the asizes of stream indices `from..to` (one file lookup per file crossed).
    fn asize_sum(&self, from: u64, to: u64) -> u64 {
        let mut sum = 0u64;
        let mut i = from;
        while i < to {
            let f = self.file_start.partition_point(|&s| s <= i) - 1;
            let object = f as u32 + 1;
            let start = self.file_start[f];
            let end = self.file_start[f + 1].min(to);
            let starts = &self.level_start[f];
            for level in 0..self.layout.geometry(object).nlevels() {
                let (ls, le) = (starts[level as usize] + start, starts[level as usize + 1] + start);
                for j in i.max(ls)..end.min(le) {
                    let psize = self.layout.psize_at(object, level, j - ls);
                    sum += u64::from(self.layout.compression.asize(psize));
                }
            }
            i = end;
        }
        sum
    }

    /// Starts bringing the checkpoint `dva0` reads for `key` into the CPU caches.
    #[inline]
    fn prefetch(&self, key: BlockKey) {
        if let Some(c) = self.checkpoints.get((self.stream_index(key) / CHECKPOINT_BLOCKS) as usize) {
            crate::support::mem_hint::prefetch(c);
        }
    }

    /// First DVA of `key`; the offset is exact when `exact`, else 0 (not needed).
    fn dva0(&self, key: BlockKey, exact: impl Fn(u32) -> bool) -> Dva {
        let j = self.stream_index(key);
        let c = self.checkpoints[(j / CHECKPOINT_BLOCKS) as usize];
        if j < c.next_first {
            // In the checkpoint's run.
            let offset =
                if exact(c.vdev) { c.offset + self.asize_sum(j - j % CHECKPOINT_BLOCKS, j) } else { 0 };
            return Dva { vdev: c.vdev, offset };
        }
        // Past the checkpoint's run: the run holding `j` is a later one.
        let mut r = c.run as usize + 1;
        while r + 1 < self.runs.len() && self.runs[r + 1].first <= j {
            r += 1;
        }
        let run = self.runs[r];
        let offset = if exact(run.vdev) { run.offset + self.asize_sum(run.first, j) } else { 0 };
        Dva { vdev: run.vdev, offset }
    }

    /// [`AllocationMap::dva0`] (exact) by its definition: the run found by a binary
    /// search, the asizes summed from its start (what the checkpoints shortcut).
    #[cfg(test)]
    fn dva0_by_runs(&self, key: BlockKey) -> Dva {
        let j = self.stream_index(key);
        let run = self.runs[self.runs.partition_point(|r| r.first <= j) - 1];
        Dva {
            vdev: run.vdev,
            offset: run.offset + (run.first..j).map(|i| self.asize_sum(i, i + 1)).sum::<u64>(),
        }
    }

    /// Second DVA of indirect block `key`.
    fn ditto(&self, key: BlockKey) -> Dva {
        debug_assert!(key.level() > 0);
        let f = key.object() as usize - 1;
        let i = self.ditto_start[f] + self.level_start[f][key.level() as usize] - self.level_start[f][1]
            + key.blkid();
        let packed = self.ditto[i as usize];
        Dva { vdev: (packed >> DVA_OFFSET_BITS) as u32, offset: (packed & ((1 << DVA_OFFSET_BITS) - 1)) << 9 }
    }
}

/// The metaslab class's rotor while the dataset is written, and after (COW writes).
#[derive(Debug)]
struct Rotor {
    rotor: usize,
    /// mc_aliquot
    count: u64,
    mg_aliquot: Vec<u64>,
    mg_bias: Vec<i64>,
    bias_enabled: bool,
    /// vs_space per vdev, when every size is known.
    space: Option<Vec<u64>>,
    alloc: Vec<u64>,
    cursor: Vec<u64>,
    /// Copies that had to stay on the vdev of their first copy (one-vdev pool).
    same_vdev_cursor: u64,
}

impl Rotor {
    /// Allocates `asize` bytes on group `mg`; returns the offset (for `same_vdev` copies,
    /// relative to the region placed after the data).
    fn alloc(&mut self, mg: usize, asize: u64, same_vdev: bool) -> u64 {
        if self.count == 0 && self.bias_enabled {
            if let Some(space) = &self.space {
                let groups = space.len() as i64;
                let mc_free: i64 = space.iter().zip(&self.alloc).map(|(s, a)| *s as i64 - *a as i64).sum();
                let vs_free = space[mg] as i64 - self.alloc[mg] as i64;
                let ratio = vs_free * groups * 100 / (mc_free + 1);
                self.mg_bias[mg] = (ratio - 100) * self.mg_aliquot[mg] as i64 / 100;
            }
        } else if !self.bias_enabled {
            self.mg_bias[mg] = 0;
        }
        let offset = if same_vdev {
            let o = self.same_vdev_cursor;
            self.same_vdev_cursor += asize;
            o
        } else {
            let o = self.cursor[mg];
            self.cursor[mg] += asize;
            o
        };
        self.alloc[mg] += asize;
        self.count += asize;
        if self.count as i64 >= self.mg_aliquot[mg] as i64 + self.mg_bias[mg] {
            self.rotor = (mg + 1) % self.cursor.len();
            self.count = 0;
        }
        offset
    }
}

/// A pool of top-level vdevs holding one dataset's files.
#[derive(Debug)]
pub struct Pool {
    vdevs: Vec<TopVdev>,
    log: Vec<TopVdev>,
    /// None: one plain solid-state vdev, where nothing depends on the position.
    map: Option<AllocationMap>,
    /// The rotor where the layout left it (with `map`): copy-on-write allocations go on.
    rotor: Option<Rotor>,
    /// Blocks rewritten since the layout: their new copies (copy on write).
    moved: HashMap<u64, (Dva, Option<Dva>)>,
    tunables: PoolTunables,
    sector: u32,
    rng: Pcg64Mcg,
    /// The vdev queues of the run's devices (the pool's leaves use theirs).
    pub vq: Box<VdevQueue>,
    /// A one-device solid-state pool's data positions, as the vdev queue needs them.
    plain: PlainPositions,
}

/// Records between two checkpoints of [`PlainPositions`].
const PLAIN_CHECKPOINT: u64 = 64;

/// Where a one-device solid-state pool's data records lie, for the vdev queue's
/// aggregation (module docs, simplification 5): per file its start, and once a file is
/// needed, the offset of every 64th record.
#[derive(Debug, Default)]
struct PlainPositions {
    bases: Vec<u64>,
    checkpoints: Vec<Vec<u64>>,
    /// Per file, the last record placed, its offset and its stored size: a sequential
    /// reader's next record is that size further.
    cursors: Vec<(u64, u64, u32)>,
}

impl PlainPositions {
    fn new(layout: &ZfsLayout, files: u32) -> PlainPositions {
        let mut base = 0u64;
        let bases = (1..=files)
            .map(|o| {
                let g = layout.geometry(o);
                let b = base;
                base = base.saturating_add(g.l0_blocks().saturating_mul(u64::from(g.data_block_size())));
                b
            })
            .collect();
        PlainPositions {
            bases,
            checkpoints: vec![Vec::new(); files as usize],
            // Record 0 at 0 (as if record "-1" ended there).
            cursors: vec![(u64::MAX, 0, 0); files as usize],
        }
    }

    /// The offset of block `key` of `layout`'s files on the device.
    fn offset(&mut self, layout: &ZfsLayout, key: BlockKey, asize: u32) -> u64 {
        let f = key.object() as usize - 1;
        if key.level() > 0 || f >= self.bases.len() {
            // Indirect blocks: apart from the data (never aggregated with it).
            return (1 << 62) | (key.0 & ((1 << 62) - 1));
        }
        let stored = |b: u64| u64::from(layout.compression.asize(layout.psize_at(key.object(), 0, b)));
        let blkid = key.blkid();
        let (cur_b, cur_at, cur_size) = self.cursors[f];
        let at = if blkid == cur_b.wrapping_add(1) {
            // A sequential reader's next record: no size to compute.
            cur_at + u64::from(cur_size)
        } else if cur_b <= blkid && blkid - cur_b < PLAIN_CHECKPOINT {
            (cur_b..blkid).fold(cur_at, |at, b| at + stored(b))
        } else {
            let cps = &mut self.checkpoints[f];
            if cps.is_empty() {
                let n = layout.geometry(key.object()).l0_blocks();
                let mut at = 0u64;
                for b in 0..n {
                    if b % PLAIN_CHECKPOINT == 0 {
                        cps.push(at);
                    }
                    at += stored(b);
                }
            }
            let c = blkid / PLAIN_CHECKPOINT;
            let from = cps.get(c as usize).copied().unwrap_or(0);
            (c * PLAIN_CHECKPOINT..blkid).fold(from, |at, b| at + stored(b))
        };
        self.cursors[f] = (blkid, at, asize);
        self.bases[f] + at
    }
}

impl Pool {
    /// Bytes of simulator memory the pool of `z` over `devices` takes for `files` files
    /// of `indirect_blocks` indirect blocks and `allocated` bytes in all: nothing for a
    /// one-device solid-state pool; else the allocation map (per file its starts, per
    /// indirect block its second copy, per run of contiguous blocks on one vdev its start:
    /// a run per aliquot with several vdevs; a checkpoint per [`CHECKPOINT_BLOCKS`] of
    /// the `blocks` blocks, data and indirect). The copies of rewritten blocks are the
    /// write path's (`moved`, see [`Pool::moved_memory_bytes`]).
    pub fn memory_bytes(
        z: &ZfsConfig,
        devices: &[DeviceConfig],
        files: u64,
        blocks: u64,
        indirect_blocks: u64,
        allocated: u64,
    ) -> u64 {
        let rotational = |name: &String| devices.iter().any(|d| &d.name == name && d.rotational.is_some());
        let positional = z.vdevs.len() > 1
            || z.vdevs.iter().any(|v| v.devices().len() > 1 || v.devices().iter().any(rotational));
        if !positional {
            // The data positions the vdev queue may ask for: a start per file, a checkpoint
            // per 64 records (the records at the recordsize, at most).
            let records = allocated / u64::from(z.recordsize.max(512));
            return files.saturating_add(records / PLAIN_CHECKPOINT + files).saturating_mul(8);
        }
        let per_file =
            (3 * std::mem::size_of::<u64>() + std::mem::size_of::<[u64; DN_MAX_LEVELS + 1]>()) as u64;
        let pow2 = |n: u64| n.max(1).checked_next_power_of_two().unwrap_or(u64::MAX);
        let ditto = pow2(indirect_blocks).saturating_mul(std::mem::size_of::<u64>() as u64);
        // The smallest aliquot of any release unless set.
        let aliquot = if z.pool.metaslab_aliquot == 0 { 512 << 10 } else { z.pool.metaslab_aliquot };
        let runs = if z.vdevs.len() > 1 { files.saturating_add(allocated / aliquot.max(1)) } else { files };
        files
            .saturating_mul(per_file)
            .saturating_add(ditto)
            .saturating_add(pow2(runs).saturating_mul(std::mem::size_of::<Run>() as u64))
            .saturating_add(
                pow2(blocks.div_ceil(CHECKPOINT_BLOCKS))
                    .saturating_mul(std::mem::size_of::<Checkpoint>() as u64),
            )
    }

    /// Bytes of simulator memory the new places of `records` rewritten blocks take at most.
    pub fn moved_memory_bytes(records: u64) -> u64 {
        // hashbrown: a power of two of buckets at most 7/8 full, a control byte each.
        let buckets =
            records.saturating_mul(8).div_ceil(7).max(1).checked_next_power_of_two().unwrap_or(u64::MAX);
        buckets.saturating_mul((std::mem::size_of::<(u64, (Dva, Option<Dva>))>() + 1) as u64)
    }

    /// Readies the pool's devices (by the index of their configs): nothing to do (a
    /// mirror child's queue length is its vdev queue's, [`VdevQueue::length`]).
    pub fn prepare_devices(&self, devices: &mut [Device]) {
        let _ = devices;
    }

    /// `vdev_queue_io` of `req` at `now` (see [`VdevQueue::submit`]).
    pub fn submit(&mut self, req: Request, now: Nanos, devices: &mut [Device]) -> Option<Nanos> {
        self.vq.submit(req, now, devices)
    }

    /// Lays out `files` files (objects 1 to `files`) of `layout` on the pool `z` over the
    /// run's `devices`; `seed` drives the choice of metadata copy on reads. Errors name the
    /// field at fault (an unknown device, a dataset that does not fit).
    pub fn new(
        z: &ZfsConfig,
        devices: &[DeviceConfig],
        layout: ZfsLayout,
        files: u32,
        seed: u64,
    ) -> Result<Pool> {
        let top = |list: &[VdevConfig], field: &str| -> Result<Vec<TopVdev>> {
            list.iter()
                .enumerate()
                .map(|(k, v)| {
                    let children = v
                        .devices()
                        .iter()
                        .map(|name| {
                            devices.iter().position(|d| &d.name == name).ok_or_else(|| {
                                Error::config(
                                    format!("{field}[{k}]"),
                                    format!("names unknown device '{name}'"),
                                )
                            })
                        })
                        .collect::<Result<Vec<_>>>()?;
                    let positional =
                        children.len() > 1 || children.iter().any(|&c| devices[c].rotational.is_some());
                    Ok(TopVdev { children, positional })
                })
                .collect()
        };
        let vdevs = top(&z.vdevs, "filesystem.vdevs")?;
        let log = top(&z.log, "filesystem.log")?;
        if vdevs.is_empty() {
            return Err(Error::config("filesystem.vdevs", "needs at least one device"));
        }
        let sector = layout.compression.sector_size();
        let (map, rotor, plain) = if vdevs.len() > 1 || vdevs[0].positional {
            let (m, r) = Self::allocate(z, devices, &vdevs, layout, files)?;
            (Some(m), Some(r), PlainPositions::default())
        } else {
            Self::check_fits(devices, &vdevs[0], &layout, files, z.recordsize)?;
            (None, None, PlainPositions::new(&layout, files))
        };
        let features = ZfsFeatures::resolve(z.release, z.release_patch);
        // vdev_nonrot is what the kernel reports (vdev_disk_open: blk_queue_nonrot).
        let non_rotating: Vec<bool> = devices.iter().map(|d| !d.reports_rotational()).collect();
        let vq = VdevQueue::new(VdevQueueParams::new(&features, &z.pool, &z.txg), &non_rotating);
        Ok(Pool {
            vdevs,
            log,
            map,
            rotor,
            moved: HashMap::new(),
            tunables: z.pool.clone(),
            sector,
            rng: Pcg64Mcg::seed_from_u64(seed ^ 0x706f_6f6c_5f64_7661),
            vq: Box::new(vq),
            plain,
        })
    }

    /// A one-device solid-state pool lays nothing out (positions are not modelled), so
    /// whether the dataset fits is estimated: each file's records at the compressor's mean
    /// stored size rounded to the sector, and its indirect blocks twice
    /// (redundant_metadata=all), at their stored size, against the device less its labels.
    fn check_fits(
        devices: &[DeviceConfig],
        vdev: &TopVdev,
        layout: &ZfsLayout,
        files: u32,
        recordsize: u32,
    ) -> Result<()> {
        let Some(capacity) = vdev.children.iter().map(|&c| devices[c].capacity_bytes).min().flatten() else {
            return Ok(());
        };
        let space = capacity.saturating_sub(VDEV_LABEL_START_SIZE + VDEV_LABEL_END_SIZE);
        let ratio = layout.compression.mean_stored_ratio(recordsize).max(1.0);
        let mut used = 0u64;
        for object in 1..=files {
            let g = layout.geometry(object);
            let lsize = g.data_block_size();
            let record = layout.compression.asize(((f64::from(lsize) / ratio) as u32).max(1));
            used = used.saturating_add(g.blocks_at(0).saturating_mul(u64::from(record)));
            for level in 1..g.nlevels() {
                let indirect = u64::from(layout.compression.asize(layout.psize_at(object, level, 0)));
                used = used.saturating_add(g.blocks_at(level).saturating_mul(2 * indirect));
            }
        }
        if used > space {
            let name = &devices[vdev.children[0]].name;
            return Err(Error::config(
                "filesystem.vdevs[0]",
                format!(
                    "the dataset does not fit: its {files} files take about {} on the pool (at the \
                     compressor's mean ratio {ratio:.2}), more than the {} device '{name}' holds",
                    crate::support::gib(used),
                    crate::support::gib(space)
                ),
            ));
        }
        Ok(())
    }

    /// Replays the writes of every file through the rotor (see the module docs).
    fn allocate(
        z: &ZfsConfig,
        devices: &[DeviceConfig],
        vdevs: &[TopVdev],
        layout: ZfsLayout,
        files: u32,
    ) -> Result<(AllocationMap, Rotor)> {
        let n = vdevs.len();
        let f: PoolFeatures = ZfsFeatures::resolve(z.release, z.release_patch).pool;
        let aliquot = if z.pool.metaslab_aliquot == 0 { f.metaslab_aliquot } else { z.pool.metaslab_aliquot };
        let mg_aliquot = vdevs
            .iter()
            .map(|v| match f.mg_aliquot {
                // vdev_children of a leaf is 0; of a mirror, its width.
                MgAliquot::VdevChildren => aliquot * (v.children.len() as u64).max(1),
                // vdev_get_ndisks: a mirror has no vdev_op_ndisks, so 1.
                MgAliquot::DataDisks => aliquot,
            })
            .collect();
        // vs_space: the smallest child less the labels (a mirror is as big as its smallest side).
        let vdev_space: Vec<Option<u64>> = vdevs
            .iter()
            .map(|v| {
                v.children
                    .iter()
                    .map(|&c| devices[c].capacity_bytes)
                    .collect::<Option<Vec<u64>>>()
                    .map(|caps| caps.into_iter().min().unwrap_or(0))
                    .map(|c| c.saturating_sub(VDEV_LABEL_START_SIZE + VDEV_LABEL_END_SIZE))
            })
            .collect();
        let space: Option<Vec<u64>> = vdev_space.iter().copied().collect();
        let mut rotor = Rotor {
            rotor: n - 1,
            count: 0,
            mg_aliquot,
            mg_bias: vec![0; n],
            bias_enabled: z.pool.metaslab_bias_enabled,
            space,
            alloc: vec![0; n],
            cursor: vec![0; n],
            same_vdev_cursor: 0,
        };

        let mut file_start = Vec::with_capacity(files as usize + 1);
        let mut level_start = Vec::with_capacity(files as usize);
        let mut ditto_start = Vec::with_capacity(files as usize);
        let mut runs: Vec<Run> = Vec::new();
        let mut checkpoints: Vec<Checkpoint> = Vec::new();
        let mut ditto: Vec<u64> = Vec::new();
        let mut run_end = u64::MAX;
        let mut same_vdev_copies: Vec<usize> = Vec::new();
        let mut j = 0u64;
        for object in 1..=files {
            let g = layout.geometry(object);
            let nlevels = g.nlevels();
            let mut starts = [0u64; DN_MAX_LEVELS + 1];
            for l in 0..nlevels as usize {
                starts[l + 1] = starts[l] + g.blocks_at(l as u8);
            }
            file_start.push(j);
            level_start.push(starts);
            ditto_start.push(ditto.len() as u64);
            for level in 0..nlevels {
                for blkid in 0..g.blocks_at(level) {
                    let asize = u64::from(layout.compression.asize(layout.psize_at(object, level, blkid)));
                    if asize == 0 {
                        // A hole or an embedded block: nothing allocated, never read.
                        if level > 0 {
                            ditto.push(0);
                        }
                        if j % CHECKPOINT_BLOCKS == 0 {
                            // Before the first run: that run's start (holes take no space).
                            let run = runs.len().checked_sub(1).map_or(u32::MAX, |r| r as u32);
                            checkpoints.push(Checkpoint::at(run, run_end));
                        }
                        j += 1;
                        continue;
                    }
                    let mg = rotor.rotor;
                    let offset = rotor.alloc(mg, asize, false);
                    match runs.last() {
                        Some(r) if r.vdev as usize == mg && offset == run_end => {}
                        _ => runs.push(Run { first: j, vdev: mg as u32, offset }),
                    }
                    run_end = offset + asize;
                    if j % CHECKPOINT_BLOCKS == 0 {
                        checkpoints.push(Checkpoint::at((runs.len() - 1) as u32, offset));
                    }
                    if level > 0 {
                        let mg1 = (mg + 1) % n;
                        let same = mg1 == mg;
                        let o1 = rotor.alloc(mg1, asize, same);
                        if same {
                            same_vdev_copies.push(ditto.len());
                        }
                        ditto.push(((mg1 as u64) << DVA_OFFSET_BITS) | (o1 >> 9));
                    }
                    j += 1;
                }
            }
        }
        file_start.push(j);
        for c in checkpoints.iter_mut().filter(|c| c.run == u32::MAX) {
            *c = Checkpoint::at(0, runs.first().map_or(0, |r| r.offset));
        }
        for c in checkpoints.iter_mut() {
            c.vdev = runs.get(c.run as usize).map_or(0, |r| r.vdev);
            c.next_first = runs.get(c.run as usize + 1).map_or(u64::MAX, |r| r.first);
        }
        // Copies kept on their first copy's vdev go after the data (another metaslab).
        let base = rotor.cursor[0];
        for i in same_vdev_copies {
            ditto[i] += base >> 9;
        }
        for (k, space) in vdev_space.iter().enumerate() {
            let used = rotor.cursor[k] + if n == 1 { rotor.same_vdev_cursor } else { 0 };
            if let Some(space) = *space {
                if used > space {
                    return Err(Error::config(
                        format!("filesystem.vdevs[{k}]"),
                        format!(
                            "the dataset does not fit: the allocator puts {used} bytes on this vdev, which \
                             holds {space}"
                        ),
                    ));
                }
            }
        }
        // New allocations go after everything laid out (the one-vdev copies too).
        if n == 1 {
            rotor.cursor[0] += rotor.same_vdev_cursor;
            rotor.same_vdev_cursor = 0;
        }
        Ok((
            AllocationMap { layout, files, file_start, level_start, ditto_start, runs, checkpoints, ditto },
            rotor,
        ))
    }

    /// Copy on write: block `key` is written anew with `asize` bytes (`ditto`: a second
    /// copy on the next vdev, as metadata gets under redundant_metadata=all). Its copies
    /// are allocated by the rotor after everything allocated so far; the old copies are
    /// not reused (frees and metaslab reuse are not modelled). Returns the new copies;
    /// None on a one-disk solid-state pool, where positions are not modelled.
    pub fn cow_write(&mut self, key: BlockKey, asize: u64, ditto: bool) -> Option<(Dva, Option<Dva>)> {
        let rotor = self.rotor.as_mut()?;
        let n = rotor.cursor.len();
        let mg = rotor.rotor;
        let d0 = Dva { vdev: mg as u32, offset: rotor.alloc(mg, asize, false) };
        let d1 = ditto.then(|| {
            let mg1 = (mg + 1) % n;
            Dva { vdev: mg1 as u32, offset: rotor.alloc(mg1, asize, false) }
        });
        self.moved.insert(key.0, (d0, d1));
        Some((d0, d1))
    }

    /// `asize` bytes from the normal class's rotor, for no block of the dataset (a log
    /// block, `zio_alloc_zil` without a SLOG or embedded log metaslab): the rotor moves as
    /// for any allocation. None on a one-disk solid-state pool (positions not modelled).
    pub fn alloc(&mut self, asize: u64) -> Option<Dva> {
        let rotor = self.rotor.as_mut()?;
        let mg = rotor.rotor;
        Some(Dva { vdev: mg as u32, offset: rotor.alloc(mg, asize, false) })
    }

    /// A one-disk solid-state pool, where positions are not modelled.
    pub fn is_plain(&self) -> bool {
        self.map.is_none()
    }

    /// Number of top-level log (SLOG) vdevs.
    pub fn nlog(&self) -> usize {
        self.log.len()
    }

    /// Leaf devices of top-level log vdev `k`.
    pub fn log_children(&self, k: usize) -> &[usize] {
        &self.log[k].children
    }

    /// Whether top-level vdev `k`'s leaves are rotational (aggregation limit).
    pub fn positional(&self, k: usize) -> bool {
        self.vdevs[k].positional
    }

    /// Number of top-level data vdevs.
    pub fn nvdevs(&self) -> usize {
        self.vdevs.len()
    }

    /// Leaf devices of top-level vdev `k`.
    pub fn children(&self, k: usize) -> &[usize] {
        &self.vdevs[k].children
    }

    /// Leaf devices of the log (SLOG) vdevs, in order.
    pub fn log_devices(&self) -> impl Iterator<Item = usize> + '_ {
        self.log.iter().flat_map(|v| v.children.iter().copied())
    }

    /// The copies of `key` (the second for indirect blocks only), exact offsets; None for a
    /// pool with one plain solid-state vdev, where the position is not modelled.
    pub fn dvas(&self, key: BlockKey) -> Option<(Dva, Option<Dva>)> {
        let map = self.map.as_ref()?;
        if let Some(&moved) = self.moved.get(&key.0) {
            return Some(moved);
        }
        let d0 = map.dva0(key, |_| true);
        Some((d0, (key.level() > 0).then(|| map.ditto(key))))
    }

    /// Starts bringing what a read of `key` looks up first (where the block lives) into
    /// the CPU caches; changes nothing.
    #[inline]
    pub fn prefetch(&self, key: BlockKey) {
        if let Some(map) = &self.map {
            map.prefetch(key);
        }
    }

    /// Reads block `key` of physical size `psize` (> 0) at `now` from one copy on one
    /// device through its vdev queue, in class `prio` for `tag`; returns the completion
    /// time if the queue issued it at once, else where the queue holds it (the queue
    /// reports its completion with `tag` when it issues it).
    #[allow(clippy::too_many_arguments)]
    pub fn read(
        &mut self,
        layout: &ZfsLayout,
        key: BlockKey,
        psize: u32,
        prio: Priority,
        tag: Tag,
        now: Nanos,
        devices: &mut [Device],
    ) -> std::result::Result<Nanos, Queued> {
        debug_assert!(psize > 0, "holes and embedded blocks are not read");
        // zio_vdev_io_start pads a read to the vdev's sector size.
        let asize = psize.div_ceil(self.sector) * self.sector;
        let Some(map) = &self.map else {
            let leaf = self.vdevs[0].children[0];
            // The device ignores the offset; the queue needs it only to aggregate.
            let offset = if self.vq.issues_at_once(leaf, prio, now) {
                0
            } else {
                self.plain.offset(layout, key, asize)
            };
            return self.vq.submit_tracked(
                Request::new(leaf, offset, asize, Op::Read, prio, tag),
                now,
                devices,
            );
        };
        let vdevs = &self.vdevs;
        let moved = self.moved.get(&key.0).copied();
        let mut dva = moved.map_or_else(|| map.dva0(key, |v| vdevs[v as usize].positional), |m| m.0);
        if key.level() > 0 {
            // Two DVAs: spa_get_random picks one; vdev_mirror_dva_select then prefers the
            // first if it is on the same vdev.
            if self.rng.random_range(0..2u32) == 1 {
                let d1 = moved.map_or_else(|| Some(map.ditto(key)), |m| m.1).unwrap_or(dva);
                if d1.vdev != dva.vdev {
                    dva = d1;
                }
            }
        }
        let top = &self.vdevs[dva.vdev as usize];
        let child = if top.children.len() == 1 {
            top.children[0]
        } else {
            mirror_child(&self.tunables, &top.children, dva.offset, now, &mut self.vq, devices)
        };
        let req = Request::new(child, dva.offset + VDEV_LABEL_START_SIZE, asize, Op::Read, prio, tag);
        self.vq.submit_tracked(req, now, devices)
    }
}

/// The child of a mirror that serves a read at `io_offset` (vdev_mirror_child_select).
fn mirror_child(
    t: &PoolTunables,
    children: &[usize],
    io_offset: u64,
    now: Nanos,
    vq: &mut VdevQueue,
    devices: &mut [Device],
) -> usize {
    let n = children.len() as u64;
    match t.mirror_read_policy {
        MirrorReadPolicy::Offset => return children[((io_offset >> VDEV_MIRROR_SHIFT) % n) as usize],
        MirrorReadPolicy::Load => {}
    }
    let zio_offset = io_offset + VDEV_LABEL_START_SIZE;
    let mut lowest = u64::MAX;
    let mut ties = 0u64;
    for &c in children {
        let load = mirror_load(t, vq, c, &devices[c], zio_offset, now);
        if load < lowest {
            lowest = load;
            ties = 1;
        } else if load == lowest {
            ties += 1;
        }
    }
    // vdev_mirror_preferred_child_randomize: the offset picks among the least loaded.
    let mut p = if ties > 1 { (io_offset >> VDEV_MIRROR_SHIFT) % ties } else { 0 };
    for &c in children {
        if mirror_load(t, vq, c, &devices[c], zio_offset, now) == lowest {
            if p == 0 {
                return c;
            }
            p -= 1;
        }
    }
    // Invariant: `mirror_load` is a function of the devices' state at `now` (the first loop
    // released what completed), so the second loop finds the `lowest` the first one saw.
    unreachable!("a least loaded child exists")
}

/// vdev_mirror_load: queue length (`vdev_queue_length`: the I/Os issued to the child)
/// plus a locality increment.
fn mirror_load(
    t: &PoolTunables,
    vq: &mut VdevQueue,
    child: usize,
    dev: &Device,
    zio_offset: u64,
    now: Nanos,
) -> u64 {
    let load = u64::from(vq.length(child, now));
    let last = dev.last_offset();
    let inc = if vq.non_rotating(child) {
        if last == zio_offset {
            t.zfs_vdev_mirror_non_rotating_inc
        } else {
            t.zfs_vdev_mirror_non_rotating_seek_inc
        }
    } else if last == zio_offset {
        t.zfs_vdev_mirror_rotating_inc
    } else if last.abs_diff(zio_offset) < t.zfs_vdev_mirror_rotating_seek_offset {
        t.zfs_vdev_mirror_rotating_seek_inc / 2
    } else {
        t.zfs_vdev_mirror_rotating_seek_inc
    };
    load + u64::from(inc)
}

#[cfg(test)]
mod tests;
