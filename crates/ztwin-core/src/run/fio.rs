//! fio phases in the driver: laying out files, untimed write passes, and timed read
//! phases whose clients are the jobs' in-flight slots; per-job and per-phase results in
//! fio's terms (IOPS, bandwidth, completion-latency percentiles).
//!
//! A read phase starts every selected job's clones at once (fio starts the jobs of a job
//! file together). Each clone has `inflight` clients (`workload::fio::inflight`); a
//! client asks the clone for an I/O, reads it through the filesystem's read path like
//! any other file read (the ZFS walk through dbufs and the ARC, or one device read on
//! XFS/ext4 with O_DIRECT), records its completion latency and asks again.
//!
//! Syncs: an fsync the clone asks for (`fsync=N`, `fdatasync=N`) is an I/O of
//! its own, a `zil_commit` of its file, reported apart as fio 3.x does ("sync": its
//! count and latency percentiles, not in the read or write figures); a write of a job with
//! `sync` (O_SYNC/O_DSYNC) returns after its commit, so its clat includes it. With
//! `end_fsync` or `fsync_on_close` the last of a clone's slots to finish fsyncs each of the
//! clone's files in turn (fio's `fio_file_fsync`, not an I/O in its statistics); the
//! job's runtime includes them. fio's `clat`
//! of a synchronous engine is the whole pread: from the I/O's start (before the system
//! call's CPU) to its completion. A clone stops issuing at its `runtime` (after
//! `ramp_time`) or when its stream ends; statistics count completions after the ramp.
//!
//! Writes go through the filesystem's write path (`zfs_write`, or one O_DIRECT device
//! write on XFS/ext4); a write's clat is the whole pwrite, throttle delays and
//! read-modify-write reads included. With `rw`/`randrw` each I/O's direction is drawn by
//! the clone (`rwmixread`), and each direction is reported apart. Dirty data a phase
//! leaves is synced in the background of the next phase (with end_fsync its log is
//! committed first).
//!
//! Files a read job needs that do not exist yet are laid out first, as fio does at job
//! setup (`extend_file`): that changes what the files hold (`workload::fio::buffers`,
//! `fs::zfs::content`) without simulated time, and caches nothing. A write job's files
//! that do not exist are created sparse (all holes).

use super::*;
use crate::config::{FioPhase, FioWorkload};
use crate::workload::fio::buffers::Writer;
use crate::workload::fio::{self as wf, CloneGen, FioIo};

/// Completions of one direction.
struct DirStats {
    ios: u64,
    bytes: u64,
    hist: LatencyHistogram,
}

impl DirStats {
    fn new() -> DirStats {
        DirStats { ios: 0, bytes: 0, hist: LatencyHistogram::new() }
    }

    fn json(&self, runtime_ns: Nanos) -> Value {
        let secs = runtime_ns.max(1) as f64 / SEC as f64;
        json!({
            "ios": self.ios,
            "io_bytes": self.bytes,
            "iops": self.ios as f64 / secs,
            "bw_mbps": self.bytes as f64 / 1e6 / secs,
            // No I/O completed: no latency (null), not 0 ms.
            "clat_ms": if self.ios == 0 {
                json!({ "p50": null, "p95": null, "p99": null, "max": null, "mean": null })
            } else {
                json!({
                    "p50": self.hist.quantile_ms(0.50),
                    "p95": self.hist.quantile_ms(0.95),
                    "p99": self.hist.quantile_ms(0.99),
                    "max": self.hist.max_ms(),
                    "mean": self.hist.mean_ms(),
                })
            },
        })
    }
}

impl DirStats {
    /// fio 3.x's "sync" entry (fsync/fdatasync): how many, and their latency.
    fn sync_json(&self) -> Value {
        json!({
            "ios": self.ios,
            "lat_ms": {
                "p50": self.hist.quantile_ms(0.50),
                "p95": self.hist.quantile_ms(0.95),
                "p99": self.hist.quantile_ms(0.99),
                "max": self.hist.max_ms(),
                "mean": self.hist.mean_ms(),
            },
        })
    }
}

/// One line of fio's report: a clone, or a job's clones together with group_reporting.
struct Group {
    name: String,
    jobs: u32,
    /// Reads, writes, syncs.
    dirs: [DirStats; 3],
    /// When its statistics start (the phase start plus the ramp) and its last completion.
    from: Nanos,
    last: Nanos,
}

struct CloneRun {
    gen: CloneGen,
    group: usize,
    /// No I/O starts at or after this time.
    issue_until: Nanos,
    ramp_end: Nanos,
    ramp_done: bool,
    /// ZFS: the content class its writes leave in a record (from a sample of its buffers).
    write_class: u8,
    /// Its files are open O_SYNC / O_DSYNC.
    o_sync: bool,
    /// Its syncs are fdatasync (O_DSYNC files, fdatasync=N).
    datasync: bool,
    /// Its files are open O_DIRECT (direct=1).
    o_direct: bool,
    /// end_fsync or fsync_on_close: the files to fsync when its I/O is done.
    end_fsync: bool,
    files: Vec<u32>,
    /// XFS/ext4's page cache: the readahead state of its first file's descriptor (the
    /// others follow in `files` order).
    ra_base: u32,
    /// Its job (index in the workload's jobs).
    job: u32,
    /// Its slots still issuing; its end fsyncs under way and the next file to fsync.
    slots_left: u32,
    ending: bool,
    end_next: usize,
}

/// The state of the fio phase running.
pub(super) struct FioPhaseRun {
    clones: Vec<CloneRun>,
    /// The clone of each client slot (u32::MAX: unused this phase).
    client_clone: Vec<u32>,
    groups: Vec<Group>,
    totals: [DirStats; 3],
    /// Statistics start: the phase start plus the longest ramp.
    pub(super) from: Nanos,
    last: Nanos,
}

impl FioPhaseRun {
    fn clone_of(&self, i: usize) -> Option<&CloneRun> {
        self.clones.get(*self.client_clone.get(i)? as usize)
    }

    /// The readahead state of client `i`'s clone's descriptor of `file` (XFS/ext4's page
    /// cache).
    pub(super) fn ra_of(&self, i: usize, file: u32) -> u32 {
        self.clone_of(i)
            .map_or(0, |cl| cl.ra_base + cl.files.iter().position(|&f| f == file).unwrap_or(0) as u32)
    }
}

/// Most client slots any fio phase needs.
pub(super) fn max_slots(cfg: &VariantConfig, f: &FioWorkload) -> usize {
    cfg.effective_phases()
        .iter()
        .map(|p| match p {
            PhaseConfig::Fio(ph) => ph
                .jobs
                .iter()
                .map(|&j| {
                    let job = &f.jobs[j as usize];
                    job.numjobs as usize * wf::inflight(job, &cfg.filesystem) as usize
                })
                .sum(),
            PhaseConfig::Workload(_)
            | PhaseConfig::Cat(_)
            | PhaseConfig::Restart(_)
            | PhaseConfig::Tune(_) => 0,
        })
        .max()
        .unwrap_or(0)
}

impl Sim<'_> {
    fn fio_workload(&self) -> &FioWorkload {
        match &self.cfg.workload {
            WorkloadConfig::Fio(f) => f,
            // Guaranteed by validate: phases of type fio need a fio workload.
            WorkloadConfig::Sysbench(_) => unreachable!("fio phases only with a fio workload"),
        }
    }

    /// The next I/O of client `i`'s clone, None when the clone is done for this phase;
    /// `(io, true)` is an end fsync.
    pub(super) fn fio_next(&mut self, i: usize, now: Nanos) -> Option<(FioIo, bool)> {
        let run = self.fio.as_mut()?;
        let k = *run.client_clone.get(i)?;
        let cl = run.clones.get_mut(k as usize)?;
        if !cl.ending {
            let io = if now >= cl.issue_until {
                None
            } else {
                if !cl.ramp_done && now >= cl.ramp_end {
                    cl.ramp_done = true;
                    cl.gen.ramp_over();
                }
                cl.gen.next_io()
            };
            if io.is_some() {
                return io.map(|io| (io, false));
            }
            cl.slots_left -= 1;
            if cl.slots_left > 0 || !cl.end_fsync {
                return None;
            }
            // backend.c, after the last I/O: fsync every file (end_fsync, fsync_on_close).
            cl.ending = true;
        }
        let file = *cl.files.get(cl.end_next)?;
        cl.end_next += 1;
        Some((FioIo { file, offset: 0, len: 0, write: false, sync: true }, true))
    }

    /// Whether client `i`'s clone opened its files O_SYNC / O_DSYNC.
    pub(super) fn fio_o_sync(&self, i: usize) -> bool {
        self.fio.as_ref().and_then(|run| run.clone_of(i)).is_some_and(|cl| cl.o_sync)
    }

    /// Client `i`'s clone syncs with fdatasync (O_DSYNC, fdatasync=N).
    pub(super) fn fio_datasync(&self, i: usize) -> bool {
        self.fio.as_ref().and_then(|run| run.clone_of(i)).is_some_and(|cl| cl.datasync)
    }

    /// Client `i`'s files are open O_DIRECT (its job's direct=1).
    pub(super) fn fio_o_direct(&self, i: usize) -> bool {
        self.fio.as_ref().and_then(|run| run.clone_of(i)).is_some_and(|cl| cl.o_direct)
    }

    /// Client `i`'s I/O completed at `now`.
    pub(super) fn fio_done(&mut self, i: usize, c: &Client, now: Nanos) {
        if matches!(c.fsync, Fsync::Io | Fsync::End) {
            self.fio_sync_done(i, c, now);
            return;
        }
        let (dir, len) = if c.write { (1, c.w_len) } else { (0, c.read_len) };
        self.fio_ios += 1;
        self.fio_bytes += u64::from(len);
        let clat = now - c.started;
        self.interval_hist.record(clat);
        self.fio_count(i, now, Some((dir, u64::from(len), clat)));
    }

    /// Client `i`'s fsync completed at `now`: a sync I/O in fio's statistics, or an end
    /// fsync, which only moves the job's end.
    fn fio_sync_done(&mut self, i: usize, c: &Client, now: Nanos) {
        let io = (c.fsync == Fsync::Io).then(|| (2, 0, now - c.started));
        self.fio_count(i, now, io);
    }

    /// Counts what client `i` completed at `now` in its group's and the phase's statistics
    /// (`io`: direction, bytes and latency, or none for an end fsync) and moves their ends,
    /// unless `now` is within the clone's ramp_time.
    fn fio_count(&mut self, i: usize, now: Nanos, io: Option<(usize, u64, Nanos)>) {
        let Some(run) = self.fio.as_mut() else { return };
        let cl = &run.clones[run.client_clone[i] as usize];
        if now < cl.ramp_end {
            return;
        }
        let g = &mut run.groups[cl.group];
        if let Some((dir, bytes, lat)) = io {
            for d in [&mut g.dirs[dir], &mut run.totals[dir]] {
                d.ios += 1;
                d.bytes += bytes;
                d.hist.record(lat);
            }
        }
        g.last = g.last.max(now);
        run.last = run.last.max(now);
    }

    /// The content class client `i`'s writes leave (its clone's job's buffers).
    pub(super) fn fio_write_class(&self, i: usize) -> u8 {
        // Invariant: writes come only from fio clients, which exist only during a fio phase.
        let run = self.fio.as_ref().expect("fio writes in a fio phase");
        run.clones[run.client_clone[i] as usize].write_class
    }

    /// The content class `job`'s writes leave in `file`'s records (ZFS; 0 elsewhere).
    fn fio_job_class(&mut self, job: u32, file: u32) -> Result<u8> {
        let f = self.fio_workload();
        let j = &f.jobs[job as usize];
        let policy = wf::buffer_policy(f, j)?;
        let writer = Writer::Write { bs: j.bs_write, iodepth: wf::inflight(j, &self.cfg.filesystem) };
        let seed = self.sample_seed(job, file, 0);
        let Fs::Zfs(z) = &mut self.fs else { return Ok(0) };
        let layout = &mut z.layout;
        let rs = layout.files[file as usize].geometry.data_block_size();
        if policy.all_zero(writer) {
            return Ok(crate::fs::zfs::content::CLASS_HOLE);
        }
        layout.class_for_sample(&policy.sample_record(writer, rs, seed))
    }

    /// Content sample seed of `job`'s writes to `file` (deterministic per scenario seed).
    fn sample_seed(&self, job: u32, file: u32, salt: u64) -> u64 {
        self.cfg.seed
            ^ (u64::from(job) << 40)
            ^ (u64::from(file) << 8)
            ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    /// `job` writes bytes as `writer` into records `first..=last` of `file` (ZFS: their
    /// class from a compressed sample record).
    fn fio_set_content(&mut self, job: u32, file: u32, writer: Writer, range: (u64, u64)) -> Result<()> {
        let f = self.fio_workload();
        let policy = wf::buffer_policy(f, &f.jobs[job as usize])?;
        let seed = self.sample_seed(job, file, matches!(writer, Writer::Layout { .. }) as u64);
        if let Fs::Zfs(z) = &mut self.fs {
            let layout = &mut z.layout;
            let object = file + 1;
            let g = &layout.files[file as usize].geometry;
            if g.l0_blocks() == 0 {
                return Ok(());
            }
            let rs = g.data_block_size();
            let class = if policy.all_zero(writer) {
                crate::fs::zfs::content::CLASS_HOLE
            } else {
                layout.class_for_sample(&policy.sample_record(writer, rs, seed))?
            };
            let (first, last) = (range.0 / u64::from(rs), (range.1.max(1) - 1) / u64::from(rs));
            layout.set_records(object, first, last, class);
        }
        Ok(())
    }

    /// What `file` holds now, for reports: logical bytes, allocated bytes (ZFS) and the
    /// ratio `zfs get compressratio` would show for it.
    fn file_report(&self, file: u32) -> Value {
        let name = self.file_name(file as usize);
        let mut doc = json!({"file": name, "size": self.files[file as usize]});
        if let Fs::Zfs(z) = &self.fs {
            let layout = &z.layout;
            let (data, meta, logical) = layout.file_usage(file + 1);
            doc["allocated_bytes"] = json!(data + meta);
            doc["data_physical_bytes"] = json!(data);
            doc["data_logical_bytes"] = json!(logical);
        }
        doc
    }

    /// After files changed: where their blocks live (the pool's allocation replays the
    /// dataset's writes, see `fs::zfs::pool`).
    fn fio_relayout_pool(&mut self) -> Result<()> {
        // Blocks written by timed writes are laid out anew too (a simplification: their
        // copy-on-write places are replaced by the sequential layout).
        self.clock = self.clock.max(self.write_flush());
        if let (Fs::Zfs(zfs), FsConfig::Zfs(z)) = (&mut self.fs, &self.cfg.filesystem) {
            let Zfs { layout, pool, .. } = &mut **zfs;
            **pool = Pool::new(z, &self.cfg.devices, layout.clone(), layout.nfiles(), self.cfg.seed)?;
        }
        Ok(())
    }

    /// Lays out every file of `jobs` that does not exist yet, as its first job in
    /// job-file order would (`extend_file`). Returns the files laid out.
    fn fio_layout(&mut self, jobs: &[u32]) -> Result<Vec<u32>> {
        let mut made = Vec::new();
        for &j in jobs {
            let job = &self.fio_workload().jobs[j as usize];
            if !wf::reads(job) {
                continue;
            }
            let files: Vec<u32> = job.clone_files.iter().flatten().copied().collect();
            let bs = job.bs_write;
            for file in files {
                if self.exists[file as usize] {
                    continue;
                }
                let size = self.files[file as usize];
                self.fio_set_content(j, file, Writer::Layout { bs }, (0, size))?;
                self.exists[file as usize] = true;
                made.push(file);
            }
        }
        if !made.is_empty() {
            self.fio_relayout_pool()?;
        }
        Ok(made)
    }

    fn files_report(&self, files: &[u32]) -> Value {
        // Per file for a few files; the total always.
        let mut total = json!({"files": files.len(), "size": 0u64});
        let mut sums = [0u64; 4];
        let mut list = Vec::new();
        for &f in files {
            let mut r = self.file_report(f);
            for (k, key) in
                ["size", "allocated_bytes", "data_physical_bytes", "data_logical_bytes"].iter().enumerate()
            {
                sums[k] += r[*key].as_u64().unwrap_or(0);
            }
            if let (Some(p), Some(l)) = (r["data_physical_bytes"].as_u64(), r["data_logical_bytes"].as_u64())
            {
                r["compressratio"] = json!(if p == 0 { 1.0 } else { l as f64 / p as f64 });
            }
            if list.len() < 16 {
                list.push(r);
            }
        }
        total["size"] = json!(sums[0]);
        if let Fs::Zfs(_) = &self.fs {
            total["allocated_bytes"] = json!(sums[1]);
            // zfs get compressratio: logical over physical bytes of the data blocks.
            total["compressratio"] = json!(if sums[2] == 0 { 1.0 } else { sums[3] as f64 / sums[2] as f64 });
        }
        json!({"total": total, "each": list})
    }

    /// Sets up a timed fio phase at `start`: lays out missing files, makes the clones and
    /// their client slots, and queues the clients. Returns the layout report, if any.
    pub(super) fn fio_start(&mut self, ph: &FioPhase, index: usize, start: Nanos) -> Result<Option<Value>> {
        let laid_out = self.fio_layout(&ph.jobs)?;
        let mut clones = Vec::new();
        let mut client_clone = vec![u32::MAX; self.clients.len()];
        let mut groups = Vec::new();
        let mut slot = 0usize;
        let mut thread_number = 0u32;
        let mut longest_ramp = 0;
        for &j in &ph.jobs {
            let job = self.fio_workload().jobs[j as usize].clone();
            let depth = wf::inflight(&job, &self.cfg.filesystem) as usize;
            let ramp_end = start + job.ramp_time_ns;
            longest_ramp = longest_ramp.max(job.ramp_time_ns);
            let issue_until = if job.runtime_ns > 0 { ramp_end + job.runtime_ns } else { Nanos::MAX };
            for clone in 0..job.numjobs as usize {
                thread_number += 1;
                if clone == 0 || !job.group_reporting {
                    groups.push(Group {
                        name: job.name.clone(),
                        jobs: if job.group_reporting { job.numjobs } else { 1 },
                        dirs: [DirStats::new(), DirStats::new(), DirStats::new()],
                        from: ramp_end,
                        last: ramp_end,
                    });
                }
                let seed = wf::clone_seed(&job, thread_number, self.cfg.seed, index as u64);
                let k = clones.len() as u32;
                let mut write_class = 0;
                if wf::writes(&job) {
                    // fio opens (creates) the files of a write job: a new file is sparse.
                    for &file in &job.clone_files[clone] {
                        self.exists[file as usize] = true;
                        write_class = self.fio_job_class(j, file)?;
                    }
                }
                clones.push(CloneRun {
                    gen: CloneGen::new(&job, clone, seed),
                    group: groups.len() - 1,
                    issue_until,
                    ramp_end,
                    ramp_done: job.ramp_time_ns == 0,
                    write_class,
                    o_sync: job.sync != crate::config::FioSync::None,
                    // fdatasync=N, or O_DSYNC: the data and what reading it needs.
                    datasync: job.sync == crate::config::FioSync::Dsync
                        || (job.fdatasync > 0 && job.fsync == 0),
                    o_direct: job.direct,
                    end_fsync: wf::writes(&job) && (job.end_fsync || job.fsync_on_close),
                    files: job.clone_files[clone].clone(),
                    ra_base: 0,
                    job: j,
                    slots_left: depth as u32,
                    ending: false,
                    end_next: 0,
                });
                for _ in 0..depth {
                    client_clone[slot] = k;
                    self.clients[slot].state = State::Start;
                    self.queue.at(start, Event::Client(slot));
                    slot += 1;
                }
            }
        }
        self.fio_open_files(&mut clones, start);
        self.fio = Some(Box::new(FioPhaseRun {
            clones,
            client_clone,
            groups,
            totals: [DirStats::new(), DirStats::new(), DirStats::new()],
            from: start + longest_ramp,
            last: start + longest_ramp,
        }));
        self.mode = Mode::Fio;
        Ok((!laid_out.is_empty()).then(|| {
            let mut doc = self.files_report(&laid_out);
            doc["note"] = json!("laid out by fio before the jobs started (untimed, as fio reports no layout time, and not cached: fio's layout writes are not simulated)");
            doc
        }))
    }

    /// XFS/ext4's page cache: each clone opens its files at `now` (`td_io_open_file`): with
    /// `invalidate` (fio's default) POSIX_FADV_DONTNEED over the job's range of each file,
    /// then `fadvise_hint`'s advice (by default POSIX_FADV_RANDOM for a random job,
    /// POSIX_FADV_SEQUENTIAL otherwise) on its descriptor's readahead state.
    fn fio_open_files(&mut self, clones: &mut [CloneRun], now: Nanos) {
        let Fs::Extent(x) = &mut self.fs else { return };
        if !x.buffered() {
            return;
        }
        let WorkloadConfig::Fio(f) = &self.cfg.workload else { return };
        let total: usize = clones.iter().map(|cl| cl.files.len()).sum();
        // Invariant: `buffered()` said the page cache is there.
        let base = x.page_cache.as_deref_mut().map_or(0, |b| b.open_files(total));
        let mut next = base;
        for cl in clones.iter_mut() {
            cl.ra_base = next;
            next += cl.files.len() as u32;
            let job = &f.jobs[cl.job as usize];
            for (k, &file) in cl.files.iter().enumerate() {
                // fio invalidates whatever the job's direct (a direct job drops the pages
                // a buffered one left); the advice only matters to buffered reads.
                if job.invalidate {
                    x.fadvise_dontneed(file, job.offset, job.file_range, now);
                }
                if job.direct {
                    continue;
                }
                let Some(b) = x.page_cache.as_deref_mut() else { continue };
                let bdi = b.ra_pages();
                let ra = b.ra_mut(cl.ra_base + k as u32);
                let random = matches!(
                    job.rw,
                    crate::config::FioRw::Randread
                        | crate::config::FioRw::Randwrite
                        | crate::config::FioRw::Randrw
                );
                match job.fadvise_hint {
                    crate::config::FioFadvise::None => {}
                    crate::config::FioFadvise::Type if random => ra.fadvise_random(),
                    crate::config::FioFadvise::Random => ra.fadvise_random(),
                    crate::config::FioFadvise::Type | crate::config::FioFadvise::Sequential => {
                        ra.fadvise_sequential(bdi)
                    }
                }
            }
        }
    }

    /// The results of the fio phase that ran: fio's totals, one entry per report line.
    pub(super) fn fio_results(&mut self) -> (Value, Nanos) {
        let Some(run) = self.fio.take() else { return (Value::Null, 0) };
        let dirs = |d: &[DirStats; 3], runtime: Nanos| {
            let mut m = Map::new();
            for (k, name) in ["read", "write"].iter().enumerate() {
                if d[k].ios > 0 || k == 0 {
                    m.insert((*name).into(), d[k].json(runtime));
                }
            }
            if d[2].ios > 0 {
                m.insert("sync".into(), d[2].sync_json());
            }
            Value::Object(m)
        };
        let runtime = run.last.saturating_sub(run.from);
        let mut fio = dirs(&run.totals, runtime);
        fio["runtime_s"] = json!(secs(runtime));
        fio["jobs"] = Value::Array(
            run.groups
                .iter()
                .map(|g| {
                    let rt = g.last.saturating_sub(g.from);
                    let mut doc = dirs(&g.dirs, rt);
                    doc["name"] = json!(g.name);
                    doc["jobs"] = json!(g.jobs);
                    doc["runtime_s"] = json!(secs(rt));
                    doc
                })
                .collect(),
        );
        (fio, run.from)
    }
}
