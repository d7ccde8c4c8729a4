//! fio phases in the driver: laying out files, untimed write passes, and timed read
//! phases whose clients are the jobs' in-flight slots; per-job and per-phase results in
//! fio's terms (IOPS, bandwidth, completion-latency percentiles).
//!
//! A read phase starts every selected job's clones at once (fio starts the jobs of a job
//! file together). Each clone has `inflight` clients (`workload::fio::inflight`); a
//! client asks the clone for an I/O, reads it through the filesystem's read path like
//! any other file read (the ZFS walk through dbufs and the ARC, or one device read on
//! XFS/ext4 with O_DIRECT), records its completion latency and asks again. fio's `clat`
//! of a synchronous engine is the whole pread: from the I/O's start (before the system
//! call's CPU) to its completion. A clone stops issuing at its `runtime` (after
//! `ramp_time`) or when its stream ends; statistics count completions after the ramp.
//!
//! Files a read job needs that do not exist yet are laid out first, as fio does at job
//! setup (`extend_file`), and a phase of write jobs rewrites its files' ranges: both
//! change what the files hold (`workload::fio::buffers`, `fs::zfs::content`) without
//! simulated time. The write path is not modelled, so the ARC, the dbuf cache and the
//! L2ARC are emptied after a write phase (ZFS frees the overwritten blocks' cached copies,
//! and caches the new ones as it writes them, which is not simulated); a layout writes
//! files nothing has cached yet, and leaves the caches as they were. Both say so in the
//! phase's report.

use super::build::new_arc;
use super::*;
use crate::config::{FioJob, FioPhase, FioWorkload};
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
            "clat_ms": {
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
    dirs: [DirStats; 2],
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
}

/// The state of the fio phase running.
pub(super) struct FioPhaseRun {
    clones: Vec<CloneRun>,
    /// The clone of each client slot (u32::MAX: unused this phase).
    client_clone: Vec<u32>,
    groups: Vec<Group>,
    totals: [DirStats; 2],
    /// Statistics start: the phase start plus the longest ramp.
    pub(super) from: Nanos,
    last: Nanos,
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
            _ => 0,
        })
        .max()
        .unwrap_or(0)
}

impl Sim<'_> {
    fn fio_workload(&self) -> &FioWorkload {
        match &self.cfg.workload {
            WorkloadConfig::Fio(f) => f,
            WorkloadConfig::Sysbench(_) => unreachable!("fio phases only with a fio workload"),
        }
    }

    /// The next I/O of client `i`'s clone, None when the clone is done for this phase.
    pub(super) fn fio_next(&mut self, i: usize, now: Nanos) -> Option<FioIo> {
        let run = self.fio.as_mut()?;
        let k = *run.client_clone.get(i)?;
        let cl = run.clones.get_mut(k as usize)?;
        if now >= cl.issue_until {
            return None;
        }
        if !cl.ramp_done && now >= cl.ramp_end {
            cl.ramp_done = true;
            cl.gen.ramp_over();
        }
        let io = cl.gen.next_io()?;
        debug_assert!(!io.write, "timed phases only read (validate_phase)");
        Some(io)
    }

    /// Client `i`'s I/O completed at `now`.
    pub(super) fn fio_done(&mut self, i: usize, c: &Client, now: Nanos) {
        self.fio_ios += 1;
        self.fio_bytes += u64::from(c.read_len);
        let clat = now - c.started;
        self.interval_hist.record(clat);
        let Some(run) = self.fio.as_mut() else { return };
        let k = run.client_clone[i] as usize;
        let cl = &run.clones[k];
        if now < cl.ramp_end {
            return;
        }
        let g = &mut run.groups[cl.group];
        for d in [&mut g.dirs[0], &mut run.totals[0]] {
            d.ios += 1;
            d.bytes += u64::from(c.read_len);
            d.hist.record(clat);
        }
        g.last = g.last.max(now);
        run.last = run.last.max(now);
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
        if let Fs::Zfs { layout, .. } = &mut self.fs {
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
        let name = match &self.cfg.dataset {
            DatasetConfig::Files(f) => f.files[file as usize].name.clone(),
            DatasetConfig::Sysbench(_) => format!("sbtest{}.ibd", file + 1),
        };
        let mut doc = json!({"file": name, "size": self.files[file as usize]});
        if let Fs::Zfs { layout, .. } = &self.fs {
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
        if let (Fs::Zfs { layout, pool, .. }, FsConfig::Zfs(z)) = (&mut self.fs, &self.cfg.filesystem) {
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

    /// An untimed phase of write jobs: every clone writes its range of each of its files
    /// (validated: whole ranges, once per loop); then the caches are emptied.
    pub(super) fn fio_write_phase(&mut self, ph: &FioPhase, start: Nanos) -> Result<Value> {
        if let Fs::Extent { bcache: Some(_), .. } = &self.fs {
            return Err(Error::config(
                format!("phases ({})", ph.name),
                "a fio write phase over bcache is not modelled: what bcache keeps of overwritten blocks depends on the write path",
            ));
        }
        let mut written = Vec::new();
        let mut bytes = 0u64;
        for &j in &ph.jobs {
            let job: FioJob = self.fio_workload().jobs[j as usize].clone();
            let writer =
                Writer::Write { bs: job.bs_write, iodepth: wf::inflight(&job, &self.cfg.filesystem) };
            for list in &job.clone_files {
                for &file in list {
                    self.fio_set_content(j, file, writer, (job.offset, job.offset + job.file_range))?;
                    self.exists[file as usize] = true;
                    bytes += job.io_size / list.len() as u64 * u64::from(job.loops);
                    if !written.contains(&file) {
                        written.push(file);
                    }
                }
            }
        }
        self.fio_relayout_pool()?;
        let caches = if let (Fs::Zfs { arc, dbufs, cache_device, .. }, FsConfig::Zfs(z)) =
            (&mut self.fs, &self.cfg.filesystem)
        {
            // The L2ARC device keeps no stale copies either: a fresh, empty one.
            **arc = new_arc(self.cfg, z, *cache_device)?;
            **dbufs = DbufLayer::new();
            if cache_device.is_some() {
                self.next_feed = Some(start + SEC);
            }
            "ARC, dbuf cache and L2ARC emptied: the blocks' old versions are freed and their new versions are not cached, because the write path is not simulated"
        } else {
            "no cache in front of the device (O_DIRECT)"
        };
        let mut doc = json!({
            "name": ph.name,
            "type": "fio",
            "start_s": secs(start),
            "end_s": secs(start),
            "timing_modelled": false,
            "note": "write jobs change the files' contents only: the write path (dirty data, txg sync every zfs_txg_timeout, the write throttle) is not modelled, so this phase takes no simulated time and reports no rates",
            "caches": caches,
            "fio": {"write": {"io_bytes": bytes}},
        });
        doc["files"] = self.files_report(&written);
        Ok(doc)
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
        if let Fs::Zfs { .. } = &self.fs {
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
                        dirs: [DirStats::new(), DirStats::new()],
                        from: ramp_end,
                        last: ramp_end,
                    });
                }
                let seed = wf::clone_seed(&job, thread_number, self.cfg.seed, index as u64);
                let k = clones.len() as u32;
                clones.push(CloneRun {
                    gen: CloneGen::new(&job, clone, seed),
                    group: groups.len() - 1,
                    issue_until,
                    ramp_end,
                    ramp_done: job.ramp_time_ns == 0,
                });
                for _ in 0..depth {
                    client_clone[slot] = k;
                    self.clients[slot].state = State::Start;
                    self.queue.push(start, slot as u32);
                    slot += 1;
                }
            }
        }
        self.fio = Some(Box::new(FioPhaseRun {
            clones,
            client_clone,
            groups,
            totals: [DirStats::new(), DirStats::new()],
            from: start + longest_ramp,
            last: start + longest_ramp,
        }));
        self.mode = Mode::Fio;
        Ok((!laid_out.is_empty()).then(|| {
            let mut doc = self.files_report(&laid_out);
            doc["note"] = json!("laid out by fio before the jobs started (untimed, as fio reports no layout time); the written data is not cached: the write path is not simulated");
            doc
        }))
    }

    /// The results of the fio phase that ran: fio's totals, one entry per report line.
    pub(super) fn fio_results(&mut self) -> (Value, Nanos) {
        let Some(run) = self.fio.take() else { return (Value::Null, 0) };
        let dirs = |d: &[DirStats; 2], runtime: Nanos| {
            let mut m = Map::new();
            for (k, name) in ["read", "write"].iter().enumerate() {
                if d[k].ios > 0 || k == 0 {
                    m.insert((*name).into(), d[k].json(runtime));
                }
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
