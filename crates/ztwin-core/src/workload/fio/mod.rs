//! fio jobs: which file, offset, length and direction each I/O of a job has, as fio
//! chooses them (axboe/fio `io_u.c` `get_next_offset`, `get_rw_ddir`, `get_next_file`;
//! `backend.c` `keep_running`; `init.c` `setup_random_seeds`).
//!
//! A job runs `numjobs` clones, each with its own offsets and random state. A clone
//! keeps as many I/Os in flight as its engine allows ([`inflight`]): the driver
//! (`crate::run`) runs each in-flight slot as a closed-loop client that reads through the
//! filesystem's read path and asks the clone's [`CloneGen`] for its next I/O.
//!
//! - Direction: `read`/`randread` read, `write`/`randwrite` write; `rw`/`randrw` draw
//!   each I/O: read when a uniform 1..=100 is at most `rwmixread` (`get_rand_ddir`).
//! - Sequential offsets run from `offset` through the job's range of each file in steps
//!   of `bs`, one position per file and direction (`get_next_seq_offset`); a file is done
//!   when fewer than `bs` bytes are left.
//! - Random offsets: block = floor(u * nblocks), nblocks = range / bs (`last_block`,
//!   `__get_next_rand_offset`); with the random map (default) a block already done this
//!   pass is replaced by the next free one ([`randmap`]), and the file is done when all
//!   are; `norandommap` draws with repeats. `random_distribution` zipf, pareto and
//!   normal draw from [`dist`] instead (fio then turns the random map off).
//! - Files (`get_next_file`): `roundrobin` moves to the next file after
//!   `file_service_type`'s `:N` I/Os (default 1), `sequential` stays on a file until it
//!   is done, `random` picks a random file every N I/Os; done files are skipped.
//! - End (`keep_running`): a loop ends when the clone has transferred `io_size` bytes (or
//!   less than one block is left to do) or every file is done; `loops` loops run; after
//!   the ramp (`ramp_time`) the byte count starts again from zero (`reset_all_stats`).
//!   `time_based` runs until `runtime` whatever the size, starting files over when they
//!   are done; `runtime` without it caps a size-based job (the driver enforces times).
//! - Random state (`setup_random_seeds`): with `randrepeat` (fio's default) the seeds
//!   follow from `randseed` and the clone's thread number alone, so every run of a job
//!   reads the same blocks in the same order; without it they come from the system
//!   (here: the scenario seed and the phase), different on every run.
//!
//! - Syncs (`io_u.c` `get_rw_ddir`, `should_fsync`): a writing job with `fsync=N` (or
//!   `fdatasync=N`) issues an fsync of the file the next I/O would go to once N writes
//!   have been issued since the start (or the ramp's end, `reset_all_stats`), and not
//!   twice in a row (`last_was_sync`); it counts as an I/O on that file for
//!   `file_service_type`. `sync=1` (or `sync`, `dsync`) opens the files O_SYNC / O_DSYNC;
//!   `end_fsync` and `fsync_on_close` fsync every file of the clone when its I/O is done
//!   (the driver does those).
//!
//! Writes go through the filesystem's write path in the driver (`crate::run`); what
//! they leave in the files follows the job's buffer options ([`buffers`]).
//!
//! Simplifications: 1. fio's Tausworthe generator is replaced by PCG (the offset
//! distributions are fio's; the exact blocks are not); 2. blocks are `bs` aligned
//! (blockalign = bs, fio's default); 3. a file's last partial block is not read; 4. one
//! block size per direction (no bs ranges or bssplit).

pub mod buffers;
pub mod dist;
pub mod randmap;

use rand::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::config::{
    FilesDataset, FioDistribution, FioFileService, FioJob, FioPhase, FioRw, FioWorkload, FsConfig,
};
use crate::error::{Error, Result};
use buffers::{BufferPolicy, FioVersion};
use dist::BlockDist;
use randmap::RandMap;

/// fio's FIO_RANDSEED, the default `randseed`.
pub const FIO_RANDSEED: u64 = 0xb189_9bed;

/// I/O engines modelled, by how many I/Os a clone keeps in flight ([`inflight`]).
pub const ENGINES: [&str; 6] = ["psync", "sync", "pvsync", "pvsync2", "libaio", "io_uring"];

/// I/Os one clone keeps in flight. Synchronous engines: one (fio HOWTO, `iodepth`:
/// "increasing iodepth beyond 1 will not affect synchronous ioengines"). libaio: iodepth
/// only with O_DIRECT on a filesystem that does direct I/O ("buffered I/O is not async
/// on that OS": io_submit completes a buffered read before it returns); ZFS before 2.3
/// accepts O_DIRECT but buffers the I/O, so there too one, and 2.3's Direct I/O is done
/// within the call too (`zfs_read`/`zfs_write` wait for their zios), so one. io_uring:
/// iodepth (a read that would block is handed to an io-wq worker, buffered or not).
pub fn inflight(job: &FioJob, fs: &FsConfig) -> u32 {
    let direct_io = match fs {
        FsConfig::Zfs(_) => false,
        FsConfig::Xfs(_) | FsConfig::Ext4(_) => true,
    };
    match job.ioengine.as_str() {
        "libaio" if job.direct && direct_io => job.iodepth,
        "io_uring" => job.iodepth,
        _ => 1,
    }
}

/// True if the job issues reads; false for a write-only job.
pub fn reads(job: &FioJob) -> bool {
    match job.rw {
        FioRw::Read | FioRw::Randread => true,
        FioRw::Write | FioRw::Randwrite => false,
        FioRw::Rw | FioRw::Randrw => job.rwmixread > 0,
    }
}

/// True if the job issues writes.
pub fn writes(job: &FioJob) -> bool {
    match job.rw {
        FioRw::Read | FioRw::Randread => false,
        FioRw::Write | FioRw::Randwrite => true,
        FioRw::Rw | FioRw::Randrw => job.rwmixread < 100,
    }
}

/// True if the job commits what it writes: it writes, and fsyncs (`fsync`, `fdatasync`,
/// `end_fsync`, `fsync_on_close`) or opens its files O_SYNC/O_DSYNC (`sync`).
pub fn syncs(job: &FioJob) -> bool {
    writes(job)
        && (job.fsync > 0
            || job.fdatasync > 0
            || job.sync != crate::config::FioSync::None
            || job.end_fsync
            || job.fsync_on_close)
}

fn random(rw: FioRw) -> bool {
    match rw {
        FioRw::Randread | FioRw::Randwrite | FioRw::Randrw => true,
        FioRw::Read | FioRw::Write | FioRw::Rw => false,
    }
}

/// Checks a fio workload against its files and filesystem.
pub fn validate(f: &FioWorkload, files: &FilesDataset, fs: &FsConfig) -> Result<()> {
    let version = FioVersion::parse(&f.fio_version, "workload.fio_version")?;
    if f.jobs.is_empty() {
        return Err(Error::config("workload.jobs", "needs at least one job"));
    }
    if files.files.is_empty() || files.files.len() >= 1 << 24 {
        return Err(Error::config("dataset.files", "needs 1 to 16777215 files"));
    }
    for (k, file) in files.files.iter().enumerate() {
        if file.size == 0 || file.size >= 1 << 50 {
            return Err(Error::config(format!("dataset.files[{k}].size"), "must be 1 byte to 1 PiB"));
        }
    }
    for (j, job) in f.jobs.iter().enumerate() {
        let at = |field: &str| format!("workload.jobs[{j}] ({}).{field}", job.name);
        let ensure = |ok: bool, field: &str, what: String| {
            if ok {
                Ok(())
            } else {
                Err(Error::config(at(field), what))
            }
        };
        ensure((1..=4096).contains(&job.numjobs), "numjobs", "must be 1 to 4096".into())?;
        ensure(
            job.clone_files.len() == job.numjobs as usize,
            "clone_files",
            "needs one file list per clone".into(),
        )?;
        for list in &job.clone_files {
            ensure(!list.is_empty(), "clone_files", "every clone needs a file".into())?;
            for &fi in list {
                ensure(
                    (fi as usize) < files.files.len(),
                    "clone_files",
                    format!("names file {fi}, not in the dataset"),
                )?;
                let size = files.files[fi as usize].size;
                ensure(
                    job.offset.checked_add(job.file_range).is_some_and(|end| end <= size),
                    "file_range",
                    format!(
                        "offset + range ({} + {}) exceeds file {} of {size} bytes",
                        job.offset, job.file_range, files.files[fi as usize].name
                    ),
                )?;
            }
        }
        for (name, bs) in [("bs_read", job.bs_read), ("bs_write", job.bs_write)] {
            ensure((1..=1 << 28).contains(&bs), name, "must be 1 byte to 256 MiB".into())?;
        }
        let bs = if reads(job) { job.bs_read } else { job.bs_write };
        ensure(
            job.file_range >= u64::from(bs),
            "file_range",
            format!("must hold at least one block of {bs} bytes"),
        )?;
        ensure(
            job.io_size >= u64::from(bs.min(job.bs_write)),
            "io_size",
            "must be at least one block".into(),
        )?;
        ensure(job.rwmixread <= 100, "rwmixread", "must be 0 to 100".into())?;
        ensure(job.loops >= 1, "loops", "must be at least 1".into())?;
        ensure((1..=65536).contains(&job.iodepth), "iodepth", "must be 1 to 65536".into())?;
        ensure(
            ENGINES.contains(&job.ioengine.as_str()),
            "ioengine",
            format!("{:?} is not modelled; allowed: {}", job.ioengine, ENGINES.join(", ")),
        )?;
        ensure(job.file_service_nr >= 1, "file_service_nr", "must be at least 1".into())?;
        ensure(!job.time_based || job.runtime_ns > 0, "time_based", "needs a runtime".into())?;
        ensure(
            job.runtime_ns.saturating_add(job.ramp_time_ns) <= crate::config::MAX_SIMULATED_NS,
            "runtime",
            "runtime plus ramp_time must be at most 30 days".into(),
        )?;
        let p = job.distribution_param;
        match job.random_distribution {
            FioDistribution::Random => {}
            FioDistribution::Zipf => ensure(
                p.is_finite() && p > 0.0 && p != 1.0,
                "distribution_param",
                "zipf theta must be > 0 and not 1 (fio refuses 1.0)".into(),
            )?,
            FioDistribution::Pareto => {
                ensure(p > 0.0 && p < 1.0, "distribution_param", "pareto h must be between 0 and 1".into())?
            }
            FioDistribution::Normal => ensure(
                (0.0..=100.0).contains(&p),
                "distribution_param",
                "normal sigma must be 0 to 100 (percent)".into(),
            )?,
        }
        if matches!(job.rw, FioRw::Randrw) && (1..100).contains(&job.rwmixread) {
            ensure(
                job.bs_read == job.bs_write,
                "bs",
                "randrw with different read and write block sizes is not modelled".into(),
            )?;
        }
        if let Some(p) = job.buffers.buffer_compress_percentage {
            ensure(p <= 100, "buffers.buffer_compress_percentage", "must be 0 to 100".into())?;
        }
        BufferPolicy::new(&job.buffers, version, &at("buffers"))?;
        match fs {
            FsConfig::Zfs(z) => {
                // 2.3 zfs_setup_direct: with direct=standard an O_DIRECT request whose
                // offset or length is not a multiple of PAGE_SIZE is EINVAL (direct=always
                // sends it through the ARC; disabled, and releases before 2.3, ignore
                // O_DIRECT). fio allocates page-aligned buffers for direct=1.
                let page = crate::fs::zfs::direct::PAGE_SIZE;
                ensure(
                    !job.direct
                        || z.direct() != crate::config::DirectProperty::Standard
                        || (u64::from(job.bs_read) % page == 0
                            && u64::from(job.bs_write) % page == 0
                            && job.offset % page == 0),
                    "bs",
                    format!(
                        "O_DIRECT on a dataset with direct=standard (OpenZFS {}) needs bs and offset in multiples of the page ({page} bytes); fio would fail with EINVAL",
                        z.release.name()
                    ),
                )?;
            }
            FsConfig::Xfs(x) | FsConfig::Ext4(x) => {
                // direct=0 goes through the page cache (`fs::page_cache`), any size.
                let bsz = u64::from(x.block_size);
                ensure(
                    !job.direct
                        || (u64::from(job.bs_read) % bsz == 0
                            && u64::from(job.bs_write) % bsz == 0
                            && job.offset % bsz == 0),
                    "bs",
                    format!("O_DIRECT needs bs and offset in multiples of the filesystem block ({bsz} bytes); fio would fail with EINVAL"),
                )?;
            }
        }
    }
    Ok(())
}

/// Checks a fio phase: its jobs exist, each once.
pub fn validate_phase(f: &FioWorkload, ph: &FioPhase, field: &str) -> Result<()> {
    if ph.jobs.is_empty() {
        return Err(Error::config(field, "needs at least one job"));
    }
    for (k, &j) in ph.jobs.iter().enumerate() {
        if j as usize >= f.jobs.len() {
            return Err(Error::config(field, format!("job index {j} is not a job of the workload")));
        }
        if ph.jobs[..k].contains(&j) {
            return Err(Error::config(field, format!("job {} is listed twice", f.jobs[j as usize].name)));
        }
    }
    Ok(())
}

/// One I/O of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FioIo {
    /// Index of the file in the dataset.
    pub file: u32,
    /// Byte offset in the file.
    pub offset: u64,
    /// Bytes.
    pub len: u32,
    /// A write (else a read).
    pub write: bool,
    /// An fsync (or fdatasync) of `file` instead of a read or write (`DDIR_SYNC`).
    pub sync: bool,
}

#[derive(Debug, Clone)]
struct FileCursor {
    file: u32,
    /// Next sequential position per direction (read, write), relative to `offset`.
    pos: [u64; 2],
    map: Option<RandMap>,
    dist: Option<BlockDist>,
    done: bool,
}

/// The I/O stream of one clone of a job.
#[derive(Debug, Clone)]
pub struct CloneGen {
    rw: FioRw,
    rwmixread: u32,
    bs: [u32; 2],
    offset: u64,
    range: u64,
    io_size: u64,
    loops_left: u32,
    time_based: bool,
    service: FioFileService,
    service_nr: u32,
    files: Vec<FileCursor>,
    cur: usize,
    ios_on_cur: u32,
    loop_bytes: u64,
    rng_off: Pcg64Mcg,
    rng_mix: Pcg64Mcg,
    rng_file: Pcg64Mcg,
    rng_dist: Pcg64Mcg,
    /// fsync / fdatasync every this many writes (0: none), of a writing job.
    fsync_blocks: u32,
    fdatasync_blocks: u32,
    /// `io_issues[DDIR_WRITE]` and `last_was_sync`.
    write_issues: u64,
    last_was_sync: bool,
}

fn mix(a: u64, b: u64) -> u64 {
    let mut z = a ^ b.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed base of a clone: fio's `randseed` and thread number with `randrepeat`, else
/// the scenario seed and the phase (a fresh system seed every run in fio).
pub fn clone_seed(job: &FioJob, thread_number: u32, scenario_seed: u64, phase: u64) -> u64 {
    if job.randrepeat {
        mix(job.randseed, u64::from(thread_number))
    } else {
        mix(mix(scenario_seed, phase.wrapping_add(0x5eed)), u64::from(thread_number))
    }
}

impl CloneGen {
    /// The stream of clone `clone` of `job`, seeded by `seed` (see [`clone_seed`]).
    pub fn new(job: &FioJob, clone: usize, seed: u64) -> CloneGen {
        let random = random(job.rw);
        let dir_bs = if reads(job) { job.bs_read } else { job.bs_write };
        let mut rng_dist = Pcg64Mcg::seed_from_u64(mix(seed, 4));
        let files = job.clone_files[clone]
            .iter()
            .map(|&file| {
                let nblocks = job.file_range / u64::from(dir_bs);
                let uniform = job.random_distribution == FioDistribution::Random;
                FileCursor {
                    file,
                    pos: [0, 0],
                    map: (random && uniform && !job.norandommap).then(|| RandMap::new(nblocks)),
                    dist: (random && !uniform).then(|| {
                        BlockDist::new(
                            job.random_distribution,
                            job.distribution_param,
                            nblocks,
                            &mut rng_dist,
                        )
                    }),
                    done: false,
                }
            })
            .collect();
        CloneGen {
            rw: job.rw,
            rwmixread: job.rwmixread,
            bs: [job.bs_read, job.bs_write],
            offset: job.offset,
            range: job.file_range,
            io_size: job.io_size,
            loops_left: job.loops,
            time_based: job.time_based,
            service: job.file_service_type,
            service_nr: job.file_service_nr,
            files,
            cur: 0,
            ios_on_cur: 0,
            loop_bytes: 0,
            rng_off: Pcg64Mcg::seed_from_u64(mix(seed, 1)),
            rng_mix: Pcg64Mcg::seed_from_u64(mix(seed, 2)),
            rng_file: Pcg64Mcg::seed_from_u64(mix(seed, 3)),
            rng_dist,
            fsync_blocks: if writes(job) { job.fsync } else { 0 },
            fdatasync_blocks: if writes(job) { job.fdatasync } else { 0 },
            write_issues: 0,
            last_was_sync: false,
        }
    }

    /// The ramp is over: the byte count of the loop and the writes issued start again
    /// (reset_all_stats).
    pub fn ramp_over(&mut self) {
        self.loop_bytes = 0;
        self.write_issues = 0;
    }

    /// `get_rw_ddir`'s first question: time for an fsync or fdatasync?
    fn sync_due(&self) -> bool {
        let w = self.write_issues;
        let every = |n: u32| n > 0 && w > 0 && w.is_multiple_of(u64::from(n));
        !self.last_was_sync && (every(self.fsync_blocks) || every(self.fdatasync_blocks))
    }

    fn reset_file(f: &mut FileCursor) {
        f.pos = [0, 0];
        if let Some(m) = &mut f.map {
            m.reset();
        }
        f.done = false;
    }

    fn loop_over(&self) -> bool {
        let max_bs = u64::from(self.bs[0].max(self.bs[1]));
        let bytes_done = !self.time_based && self.io_size.saturating_sub(self.loop_bytes) < max_bs;
        bytes_done || self.files.iter().all(|f| f.done)
    }

    /// The direction of the next I/O: 0 read, 1 write.
    fn direction(&mut self) -> usize {
        match self.rw {
            FioRw::Read | FioRw::Randread => 0,
            FioRw::Write | FioRw::Randwrite => 1,
            FioRw::Rw | FioRw::Randrw => {
                let v = 1 + (self.rng_mix.next_u64() % 100) as u32;
                usize::from(v > self.rwmixread)
            }
        }
    }

    /// Moves `cur` to the file of the next I/O (some file is not done).
    fn pick_file(&mut self) {
        let n = self.files.len();
        let switch = self.ios_on_cur >= self.service_nr || self.files[self.cur].done;
        match self.service {
            FioFileService::Sequential => {}
            FioFileService::Roundrobin => {
                if switch {
                    self.cur = (self.cur + 1) % n;
                    self.ios_on_cur = 0;
                }
            }
            FioFileService::Random => {
                if switch {
                    self.cur = (self.rng_file.next_u64() % n as u64) as usize;
                    self.ios_on_cur = 0;
                }
            }
        }
        // Done files are skipped: the next one that is not.
        while self.files[self.cur].done {
            self.cur = (self.cur + 1) % n;
            self.ios_on_cur = 0;
        }
    }

    /// The next I/O, or None when the clone is done.
    pub fn next_io(&mut self) -> Option<FioIo> {
        loop {
            if self.loop_over() {
                if self.time_based {
                    self.files.iter_mut().for_each(Self::reset_file);
                } else if self.loops_left > 1 {
                    self.loops_left -= 1;
                    self.files.iter_mut().for_each(Self::reset_file);
                } else {
                    return None;
                }
                self.loop_bytes = 0;
            }
            if self.sync_due() {
                self.last_was_sync = true;
                self.pick_file();
                self.ios_on_cur += 1;
                return Some(FioIo {
                    file: self.files[self.cur].file,
                    offset: 0,
                    len: 0,
                    write: false,
                    sync: true,
                });
            }
            let dir = self.direction();
            self.pick_file();
            let bs = self.bs[dir];
            let f = &mut self.files[self.cur];
            let block = if random(self.rw) {
                let nblocks = self.range / u64::from(bs);
                if nblocks == 0 {
                    f.done = true;
                    continue;
                }
                if let Some(d) = &f.dist {
                    d.next(&mut self.rng_dist)
                } else {
                    let u = (self.rng_off.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                    let b = ((u * nblocks as f64) as u64).min(nblocks - 1);
                    match &mut f.map {
                        Some(m) => match m.free_at_or_after(b) {
                            Some(free) => {
                                m.set(free);
                                free
                            }
                            None => {
                                f.done = true;
                                if self.time_based {
                                    Self::reset_file(f);
                                }
                                continue;
                            }
                        },
                        None => b,
                    }
                }
            } else {
                let p = f.pos[dir];
                if p + u64::from(bs) > self.range {
                    f.done = true;
                    if self.time_based {
                        Self::reset_file(f);
                    }
                    continue;
                }
                f.pos[dir] = p + u64::from(bs);
                p / u64::from(bs)
            };
            self.ios_on_cur += 1;
            self.loop_bytes += u64::from(bs);
            self.last_was_sync = false;
            self.write_issues += dir as u64;
            return Some(FioIo {
                file: f.file,
                offset: self.offset + block * u64::from(bs),
                len: bs,
                write: dir == 1,
                sync: false,
            });
        }
    }
}

/// The buffer policy of a job: what its layouts and writes put in files.
pub fn buffer_policy(f: &FioWorkload, job: &FioJob) -> Result<BufferPolicy> {
    BufferPolicy::new(
        &job.buffers,
        FioVersion::parse(&f.fio_version, "workload.fio_version")?,
        "workload.buffers",
    )
}

#[cfg(test)]
pub(crate) fn test_job(rw: FioRw, file_range: u64, bs: u32) -> FioJob {
    FioJob {
        name: "t".into(),
        rw,
        rwmixread: 50,
        bs_read: bs,
        bs_write: bs,
        numjobs: 1,
        clone_files: vec![vec![0]],
        offset: 0,
        file_range,
        io_size: file_range,
        loops: 1,
        runtime_ns: 0,
        time_based: false,
        ramp_time_ns: 0,
        ioengine: "psync".into(),
        iodepth: 1,
        direct: false,
        file_service_type: FioFileService::Roundrobin,
        file_service_nr: 1,
        random_distribution: FioDistribution::Random,
        distribution_param: 0.0,
        norandommap: false,
        randrepeat: true,
        randseed: FIO_RANDSEED,
        group_reporting: false,
        buffers: Default::default(),
        fsync: 0,
        fdatasync: 0,
        sync: Default::default(),
        end_fsync: false,
        fsync_on_close: false,
        invalidate: true,
        fadvise_hint: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(g: &mut CloneGen) -> Vec<FioIo> {
        std::iter::from_fn(|| g.next_io()).take(10_000_000).collect()
    }

    #[test]
    fn sequential_covers_each_file_once_per_loop() {
        let mut job = test_job(FioRw::Read, 1 << 20, 4096);
        job.loops = 3;
        job.offset = 8192;
        let mut g = CloneGen::new(&job, 0, 1);
        let ios = all(&mut g);
        assert_eq!(ios.len(), 3 * 256);
        for (k, io) in ios.iter().enumerate() {
            assert_eq!(io.offset, 8192 + (k as u64 % 256) * 4096);
            assert!(!io.write && io.len == 4096);
        }
    }

    #[test]
    fn random_with_the_map_covers_every_block_once_and_without_repeats() {
        let job = test_job(FioRw::Randread, 4 << 20, 4096);
        let ios = all(&mut CloneGen::new(&job, 0, 1));
        let mut offsets: Vec<u64> = ios.iter().map(|io| io.offset).collect();
        assert_eq!(offsets.len(), 1024);
        let in_order = offsets.windows(2).filter(|w| w[1] == w[0] + 4096).count();
        assert!(in_order < 200, "random order, not sequential: {in_order}");
        offsets.sort_unstable();
        offsets.dedup();
        assert_eq!(offsets.len(), 1024, "each block once");
    }

    #[test]
    fn norandommap_repeats_blocks() {
        let mut job = test_job(FioRw::Randread, 4 << 20, 4096);
        job.norandommap = true;
        let ios = all(&mut CloneGen::new(&job, 0, 1));
        assert_eq!(ios.len(), 1024, "io_size still ends the loop");
        let mut offsets: Vec<u64> = ios.iter().map(|io| io.offset).collect();
        offsets.sort_unstable();
        offsets.dedup();
        // Drawing 1024 of 1024 with repeats leaves about 1/e unread.
        let distinct = offsets.len() as f64 / 1024.0;
        assert!((distinct - (1.0 - (-1.0f64).exp())).abs() < 0.05, "{distinct}");
    }

    #[test]
    fn randrepeat_repeats_runs_and_randrepeat_0_does_not() {
        let mut job = test_job(FioRw::Randread, 4 << 20, 4096);
        let run = |job: &FioJob, phase: u64| {
            let seed = clone_seed(job, 1, 42, phase);
            all(&mut CloneGen::new(job, 0, seed))
        };
        assert_eq!(run(&job, 0), run(&job, 1), "randrepeat=1: the same blocks every run");
        job.randrepeat = false;
        assert_ne!(run(&job, 0), run(&job, 1));
        assert_eq!(run(&job, 3), run(&job, 3), "deterministic per scenario seed and phase");
        // Clones differ (thread numbers).
        job.randrepeat = true;
        let a = all(&mut CloneGen::new(&job, 0, clone_seed(&job, 1, 0, 0)));
        let b = all(&mut CloneGen::new(&job, 0, clone_seed(&job, 2, 0, 0)));
        assert_ne!(a, b);
    }

    #[test]
    fn rwmixread_splits_directions() {
        let mut job = test_job(FioRw::Randrw, 64 << 20, 4096);
        job.rwmixread = 70;
        job.norandommap = true;
        let ios = all(&mut CloneGen::new(&job, 0, 5));
        let reads = ios.iter().filter(|io| !io.write).count() as f64 / ios.len() as f64;
        let n = ios.len() as f64;
        assert!((reads - 0.7).abs() < 5.0 * (0.21 / n).sqrt(), "{reads} of {n}");
        // Sequential rw keeps one position per direction.
        job.rw = FioRw::Rw;
        let ios = all(&mut CloneGen::new(&job, 0, 5));
        let r: Vec<u64> = ios.iter().filter(|io| !io.write).map(|io| io.offset).collect();
        let w: Vec<u64> = ios.iter().filter(|io| io.write).map(|io| io.offset).collect();
        assert!(r.windows(2).all(|p| p[1] == p[0] + 4096) && w.windows(2).all(|p| p[1] == p[0] + 4096));
        assert_eq!((r.len() + w.len()) as u64 * 4096, 64 << 20);
    }

    #[test]
    fn file_service_types() {
        let mut job = test_job(FioRw::Read, 1 << 16, 4096);
        job.clone_files = vec![vec![0, 1, 2]];
        job.io_size = 3 << 16;
        let files =
            |job: &FioJob| all(&mut CloneGen::new(job, 0, 1)).iter().map(|io| io.file).collect::<Vec<_>>();
        let rr = files(&job);
        assert_eq!(&rr[..6], &[0, 1, 2, 0, 1, 2]);
        assert_eq!(rr.len(), 48);
        job.file_service_nr = 2;
        assert_eq!(&files(&job)[..6], &[0, 0, 1, 1, 2, 2]);
        job.file_service_type = FioFileService::Sequential;
        let seq = files(&job);
        assert!(seq[..16].iter().all(|&f| f == 0) && seq[16..32].iter().all(|&f| f == 1));
        job.file_service_type = FioFileService::Random;
        job.file_service_nr = 1;
        let r = files(&job);
        assert_eq!(r.len(), 48, "every block of every file once");
        assert!(r.windows(3).any(|w| w[0] == w[1] && w[1] == w[2]) || r[..6] != [0, 1, 2, 0, 1, 2]);
    }

    #[test]
    fn time_based_never_ends_and_starts_files_over() {
        let mut job = test_job(FioRw::Read, 1 << 16, 4096);
        job.time_based = true;
        job.runtime_ns = 1;
        let mut g = CloneGen::new(&job, 0, 1);
        let offs: Vec<u64> = (0..40).map(|_| g.next_io().unwrap().offset).collect();
        assert_eq!(offs[16], 0);
        assert_eq!(offs[17], 4096);
    }

    #[test]
    fn size_ends_before_the_files_do() {
        let mut job = test_job(FioRw::Randread, 1 << 20, 4096);
        job.io_size = 100 * 4096 + 100;
        assert_eq!(all(&mut CloneGen::new(&job, 0, 1)).len(), 100);
        job.ramp_time_ns = 1;
        let mut g = CloneGen::new(&job, 0, 1);
        for _ in 0..50 {
            g.next_io();
        }
        g.ramp_over();
        assert_eq!(all(&mut g).len(), 100, "the loop's bytes count again after the ramp");
    }

    /// fsync=4: one sync after every 4 writes, never two in a row; a read job never
    /// syncs; fdatasync counts the same way.
    #[test]
    fn fsync_every_n_writes() {
        let mut job = test_job(FioRw::Write, 1 << 20, 4096);
        job.fsync = 4;
        let ios = all(&mut CloneGen::new(&job, 0, 1));
        let syncs: Vec<usize> = ios.iter().enumerate().filter(|(_, io)| io.sync).map(|(k, _)| k).collect();
        assert_eq!(ios.len(), 256 + 63, "a sync after writes 4, 8, ..., 252 (the 256th ends the job)");
        assert_eq!(&syncs[..3], &[4, 9, 14]);
        assert!(ios.windows(2).all(|w| !(w[0].sync && w[1].sync)));
        job.fsync = 0;
        job.fdatasync = 100;
        let ios = all(&mut CloneGen::new(&job, 0, 1));
        assert_eq!(ios.iter().filter(|io| io.sync).count(), 2);
        job.rw = FioRw::Read;
        assert!(all(&mut CloneGen::new(&job, 0, 1)).iter().all(|io| !io.sync));
    }

    #[test]
    fn engines_and_depth() {
        let mut job = test_job(FioRw::Randread, 1 << 20, 4096);
        job.iodepth = 32;
        let zfs = crate::config::test_variant().filesystem;
        let xfs = FsConfig::Xfs(crate::config::ExtentFsConfig {
            device: "disk".into(),
            block_size: 4096,
            bcache: None,
        });
        assert_eq!(inflight(&job, &xfs), 1, "psync");
        job.ioengine = "libaio".into();
        assert_eq!(inflight(&job, &xfs), 1, "buffered libaio is synchronous");
        job.direct = true;
        assert_eq!(inflight(&job, &xfs), 32);
        assert_eq!(inflight(&job, &zfs), 1, "ZFS < 2.3 buffers O_DIRECT");
        job.ioengine = "io_uring".into();
        assert_eq!(inflight(&job, &zfs), 32);
    }
}
