//! What a run reports: snapshots of the counters, series rows, window summaries in
//! iostat and arcstats terms.

use super::*;
use crate::config::ArcAdaptation;

impl Sim<'_> {
    pub(super) fn snapshot(&self, time: Nanos) -> Snapshot {
        Snapshot {
            time,
            fio_ios: self.fio_ios,
            fio_bytes: self.fio_bytes,
            statements: self.statements,
            by_kind: self.by_kind,
            queries: self.queries,
            rows: self.rows,
            bp_requests: self.bp_requests,
            bp_reads: self.bp_reads,
            cpu_busy: self.cpus.busy_ns_at(time),
            l2_feed_cpu: self.l2_feed_cpu,
            devices: self.devices.iter().map(|d| d.counters_at(time)).collect(),
            arc: match &self.fs {
                Fs::Zfs(z) => Some(z.arc.stats()),
                Fs::Extent(_) => None,
            },
            bcache: match &self.fs {
                Fs::Extent(x) => x.bcache.as_ref().map(|(b, _)| b.stats()),
                Fs::Zfs(_) => None,
            },
            zfetch: match &self.fs {
                Fs::Zfs(z) => Some(z.zfetch.stats()),
                Fs::Extent(_) => None,
            },
            zil: match &self.fs {
                Fs::Zfs(z) => z.zil_stats(),
                Fs::Extent(_) => None,
            },
            db_writes: self.db.as_ref().and_then(|d| d.write_stats()),
            txgs: match &self.fs {
                Fs::Zfs(z) => z.txgs_synced(),
                Fs::Extent(_) => 0,
            },
            journal: match &self.fs {
                Fs::Extent(x) => x.journal.as_ref().map(|j| j.counters()),
                Fs::Zfs(_) => None,
            },
            page_cache: match &self.fs {
                Fs::Extent(x) => x.page_cache.as_ref().map(|b| b.stats()),
                Fs::Zfs(_) => None,
            },
            drives: self
                .devices
                .iter()
                .map(|d| d.port().map(|p| p.controller().drive(p.volume()).counters_at(time)))
                .collect(),
            controllers: self
                .devices
                .iter()
                .enumerate()
                .filter_map(|(device, d)| {
                    let p = d.port().filter(|p| p.volume() == 0)?;
                    let c = p.controller();
                    Some(ControllerSnap { device, held: c.held(), counters: c.counters() })
                })
                .collect(),
        }
    }

    /// Emits the series rows of every report boundary up to `t`, and tells the observer
    /// (if any) the last boundary reached; [`Error::Stopped`] if it asked to stop. Per
    /// event, when no boundary is due, this is one comparison.
    #[inline]
    pub(super) fn report_until(&mut self, rec: &mut Recorder, t: Nanos) -> Result<()> {
        let mut emitted = false;
        // Bounded: a device that never answers (saturated clocks) must not mean endless rows.
        while t >= rec.next_report && (rec.series.rows() as u64) < crate::config::MAX_SERIES_ROWS {
            let now = self.snapshot(rec.next_report);
            self.emit_row(&mut rec.series, &rec.prev, &now);
            rec.prev = now;
            rec.next_report += self.cfg.run.report_interval_ns;
            emitted = true;
        }
        if emitted {
            if let Some(o) = &mut rec.observer {
                o.observe(rec.prev.time, self.phase_index);
                return o.check();
            }
        }
        Ok(())
    }

    pub(super) fn emit_row(&mut self, s: &mut Series, a: &Snapshot, b: &Snapshot) {
        let dt = (b.time - a.time).max(1) as f64 / SEC as f64;
        s.set("time_s", b.time as f64 / SEC as f64);
        s.set("phase", self.phase_index as f64);
        s.set("measured", if self.measuring { 1.0 } else { 0.0 });
        // An interval in which nothing completed has no latency (null), not 0 ms.
        let q = |h: &LatencyHistogram, x: f64| if h.count() == 0 { f64::NAN } else { h.quantile_ms(x) };
        if self.db.is_some() {
            s.set("qps", (b.queries - a.queries) as f64 / dt);
            if self.transactions() {
                s.set("tps", (b.statements - a.statements) as f64 / dt);
            }
            s.set("latency_p50_ms", q(&self.interval_hist, 0.50));
            s.set("latency_p95_ms", q(&self.interval_hist, 0.95));
            s.set("latency_p99_ms", q(&self.interval_hist, 0.99));
        } else {
            // fio: I/Os completed in the interval (all jobs), and their completion latency.
            s.set("fio_iops", (b.fio_ios - a.fio_ios) as f64 / dt);
            s.set("fio_mbps", (b.fio_bytes - a.fio_bytes) as f64 / 1e6 / dt);
            s.set("clat_p50_ms", q(&self.interval_hist, 0.50));
            s.set("clat_p95_ms", q(&self.interval_hist, 0.95));
            s.set("clat_p99_ms", q(&self.interval_hist, 0.99));
        }
        self.interval_hist.reset();
        let vcpus = self.cpus.vcpus() as f64;
        s.set(
            "cpu_utilization",
            (b.cpu_busy.saturating_sub(a.cpu_busy) as f64 / SEC as f64 / dt / vcpus).min(1.0),
        );
        if self.db.is_some() {
            let req = b.bp_requests - a.bp_requests;
            let reads = b.bp_reads - a.bp_reads;
            s.set(
                "innodb_buffer_pool_hit_ratio",
                if req > 0 { 1.0 - reads as f64 / req as f64 } else { f64::NAN },
            );
        }
        if let (Some(x), Some(y)) = (&a.db_writes, &b.db_writes) {
            s.set("innodb_pages_flushed", (y.pages_flushed - x.pages_flushed) as f64 / dt);
            s.set(
                "innodb_os_log_written_mbps",
                (y.redo.os_log_written - x.redo.os_log_written) as f64 / 1e6 / dt,
            );
            s.set("innodb_data_fsyncs", (y.data_fsyncs - x.data_fsyncs) as f64 / dt);
            s.set("innodb_pages_dirty", y.pages_dirty as f64);
            s.set("innodb_checkpoint_age", y.checkpoint_age as f64);
        }
        for (x, y) in a.controllers.iter().zip(&b.controllers) {
            // A RAID controller's cache: its dirty data at the interval's end (full: writes
            // wait for room) and its destaging over it.
            let Some(port) = self.devices[y.device].port() else { continue };
            let ctrl = port.controller();
            let name = ctrl.name();
            s.set(&format!("{name}_dirty_mib"), y.held as f64 / (1u64 << 20) as f64);
            let destaged = y.counters.destage_bytes - x.counters.destage_bytes;
            s.set(&format!("{name}_destage_mbps"), destaged as f64 / 1e6 / dt);
        }
        for (k, d) in self.devices.iter().enumerate() {
            let (x, y) = (&a.devices[k], &b.devices[k]);
            let name = d.name();
            s.set(&format!("{name}_read_iops"), (y.reads - x.reads) as f64 / dt);
            s.set(&format!("{name}_write_iops"), (y.writes - x.writes) as f64 / dt);
            s.set(&format!("{name}_read_mbps"), (y.read_bytes - x.read_bytes) as f64 / 1e6 / dt);
            if a.db_writes.is_some() || a.page_cache.is_some() {
                s.set(&format!("{name}_write_mbps"), (y.write_bytes - x.write_bytes) as f64 / 1e6 / dt);
            }
            s.set(
                &format!("{name}_utilization"),
                (y.busy_ns.saturating_sub(x.busy_ns) as f64 / SEC as f64 / dt).min(1.0),
            );
            if d.has_burst_credits() {
                // CloudWatch's BurstBalance, Azure Monitor's burst credits percentage (as
                // what is left): at the interval's end; and the share of it spent bursting.
                let c = &y.credits;
                if c.io_capacity > 0.0 {
                    s.set(&format!("{name}_burst_io_credits_pct"), 100.0 * c.io_credits / c.io_capacity);
                }
                if c.byte_capacity > 0.0 {
                    s.set(&format!("{name}_burst_bps_credits_pct"), 100.0 * c.byte_credits / c.byte_capacity);
                }
                s.set(
                    &format!("{name}_bursting"),
                    ((c.burst_ns - x.credits.burst_ns) / SEC as f64 / dt).clamp(0.0, 1.0),
                );
            }
            if d.host_cache().is_some() {
                let (h, g) = (&y.host_cache, &x.host_cache);
                s.set(&format!("{name}_host_cache_read_hit_iops"), (h.read_hits - g.read_hits) as f64 / dt);
            }
        }
        if let (Some(x), Some(y)) = (&a.arc, &b.arc) {
            s.set("arc_hits", (y.hits - x.hits) as f64);
            s.set("arc_misses", (y.misses - x.misses) as f64);
            if matches!(&self.cfg.filesystem, FsConfig::Zfs(z) if z.release.features().arc.iohits()) {
                s.set("arc_iohits", (y.iohits - x.iohits) as f64);
            }
            s.set("arc_demand_data_hits", (y.demand_data_hits - x.demand_data_hits) as f64);
            s.set("arc_demand_data_misses", (y.demand_data_misses - x.demand_data_misses) as f64);
            s.set("arc_demand_metadata_hits", (y.demand_metadata_hits - x.demand_metadata_hits) as f64);
            s.set("arc_demand_metadata_misses", (y.demand_metadata_misses - x.demand_metadata_misses) as f64);
            s.set("arc_size", y.size as f64);
            s.set("arc_c", y.c as f64);
            s.set("arc_data_size", y.data_size as f64);
            s.set("arc_metadata_size", y.metadata_size as f64);
            if self.arc_with_cache_device().is_some() {
                // arcstats' l2_* over the interval (arcstat's l2hits, l2miss, l2hit%) and
                // the cache device's fill at its end.
                let (hits, misses) = (y.l2_hits - x.l2_hits, y.l2_misses - x.l2_misses);
                s.set("l2_hits", hits as f64);
                s.set("l2_misses", misses as f64);
                s.set(
                    "l2_hit_ratio",
                    if hits + misses > 0 { hits as f64 / (hits + misses) as f64 } else { f64::NAN },
                );
                s.set("l2_write_bytes", (y.l2_write_bytes - x.l2_write_bytes) as f64);
                s.set("l2_size", y.l2_size as f64);
                s.set("l2_asize", y.l2_asize as f64);
                s.set("l2_hdr_size", y.l2_hdr_size as f64);
                // The feed thread's CPU time in the interval, seconds (of all vCPUs).
                s.set("l2_feed_cpu_s", b.l2_feed_cpu.saturating_sub(a.l2_feed_cpu) as f64 / SEC as f64);
            }
        }
        if let (Some(x), Some(y)) = (&a.page_cache, &b.page_cache) {
            // Bytes at the interval's end; KiB moved in the interval (vmstat's units).
            let bytes = |pages: u64| (pages * crate::fs::page_cache::PAGE_SIZE) as f64;
            s.set("page_cache_cached", bytes(y.cached));
            s.set("page_cache_dirty", bytes(y.nr_dirty));
            s.set("page_cache_pgpgin", (y.pgpgin - x.pgpgin) as f64);
            s.set("page_cache_pgpgout", (y.pgpgout - x.pgpgout) as f64);
        }
        if let (Some(x), Some(y)) = (&a.bcache, &b.bcache) {
            s.set(
                "bcache_hits",
                (y.cache_hits + y.cache_bypass_hits - x.cache_hits - x.cache_bypass_hits) as f64,
            );
            s.set(
                "bcache_misses",
                (y.cache_misses + y.cache_bypass_misses - x.cache_misses - x.cache_bypass_misses) as f64,
            );
            s.set("bcache_bypassed", (y.bypassed - x.bypassed) as f64);
            s.set("bcache_size", y.size as f64);
            if y.writeback_rate > 0 {
                // Writeback mode (the rate is at least writeback_rate_minimum there).
                s.set("bcache_dirty_data", y.dirty_data as f64);
                s.set("bcache_writeback_rate", y.writeback_rate as f64);
            }
        }
        s.end_row();
    }

    /// Devices over a window, as iostat would show them.
    pub(super) fn devices_window(&self, a: &Snapshot, b: &Snapshot) -> Value {
        let window_s = (b.time - a.time).max(1) as f64 / SEC as f64;
        // Flushes are sent by the intent log, the journal and the database's fsyncs: shown
        // where they exist.
        let flushes = a.zil.is_some() || a.journal.is_some() || a.db_writes.is_some();
        let mut devices = Map::new();
        for (k, d) in self.devices.iter().enumerate() {
            let (x, y) = (&a.devices[k], &b.devices[k]);
            let mut doc = io_window(x, y, window_s);
            if flushes {
                doc["flushes_per_sec"] = json!(y.flushes.saturating_sub(x.flushes) as f64 / window_s);
            }
            if d.has_burst_credits() {
                // Credits left at the window's end (null without a bucket for that resource)
                // and the time spent above the provisioned rate in it.
                let (c, pct) = (&y.credits, |v: f64, cap: f64| (cap > 0.0).then(|| 100.0 * v / cap));
                doc["burst"] = json!({
                    "io_credits": (c.io_capacity > 0.0).then_some(c.io_credits),
                    "io_credits_pct": pct(c.io_credits, c.io_capacity),
                    "byte_credits": (c.byte_capacity > 0.0).then_some(c.byte_credits),
                    "byte_credits_pct": pct(c.byte_credits, c.byte_capacity),
                    "burst_s": ((c.burst_ns - x.credits.burst_ns) / SEC as f64).max(0.0),
                });
            }
            if d.host_cache().is_some() {
                let (h, g) = (&y.host_cache, &x.host_cache);
                let (hits, misses) = (h.read_hits - g.read_hits, h.read_misses - g.read_misses);
                doc["host_cache"] = json!({
                    "read_hit_iops": hits as f64 / window_s,
                    "read_hit_mbps": (h.read_hit_bytes - g.read_hit_bytes) as f64 / 1e6 / window_s,
                    "read_hit_ratio": (hits + misses > 0).then(|| hits as f64 / (hits + misses) as f64),
                });
            }
            if let (Some(x), Some(y)) = (&a.drives[k], &b.drives[k]) {
                // The drive behind the controller (its destage writes, the reads it served).
                let mut drive = io_window(x, y, window_s);
                drive["write_kib_per_io"] =
                    json!(kib_per_io(y.writes - x.writes, y.write_bytes - x.write_bytes));
                doc["drive"] = drive;
            }
            if a.db_writes.is_some() || a.page_cache.is_some() {
                // iostat's rareq-sz and wareq-sz.
                doc["read_kib_per_io"] = json!(kib_per_io(y.reads - x.reads, y.read_bytes - x.read_bytes));
                doc["write_kib_per_io"] =
                    json!(kib_per_io(y.writes - x.writes, y.write_bytes - x.write_bytes));
            }
            devices.insert(d.name().to_string(), doc);
        }
        Value::Object(devices)
    }

    /// The RAID controllers over a window (none without one): the cache's dirty data at
    /// the window's end, the writes it took at once and those that waited for room, the
    /// reads it served from dirty data, and its destaging to the drives.
    pub(super) fn controllers_window(&self, a: &Snapshot, b: &Snapshot) -> Option<Value> {
        if b.controllers.is_empty() {
            return None;
        }
        let window_s = (b.time - a.time).max(1) as f64 / SEC as f64;
        let mib = |v: u64| v as f64 / (1u64 << 20) as f64;
        let mut out = Map::new();
        for (x, y) in a.controllers.iter().zip(&b.controllers) {
            let Some(port) = self.devices[y.device].port() else { continue };
            let ctrl = port.controller();
            let (c, d) = (&x.counters, &y.counters);
            let waits = d.write_waits - c.write_waits;
            let writes = d.write_hits - c.write_hits + waits;
            let reads = d.read_hits - c.read_hits + d.read_misses - c.read_misses;
            let destages = d.destage_writes - c.destage_writes;
            let destaged = d.destage_bytes - c.destage_bytes;
            out.insert(
                ctrl.name().to_string(),
                json!({
                    "cache_mib": mib(ctrl.params().cache_bytes),
                    "dirty_mib": mib(y.held),
                    "write_iops": writes as f64 / window_s,
                    "write_wait_share": (writes > 0).then(|| waits as f64 / writes as f64),
                    "write_wait_ms_mean": (waits > 0).then(|| (d.write_wait_ns - c.write_wait_ns) as f64 / waits as f64 / 1e6),
                    "absorbed_mbps": (d.absorbed_bytes - c.absorbed_bytes) as f64 / 1e6 / window_s,
                    "read_hit_share": (reads > 0).then(|| (d.read_hits - c.read_hits) as f64 / reads as f64),
                    "destage_iops": destages as f64 / window_s,
                    "destage_mbps": destaged as f64 / 1e6 / window_s,
                    "destage_kib_per_io": (destages > 0).then(|| destaged as f64 / destages as f64 / 1024.0),
                    "overfull_peak_mib": mib(d.overfull_peak_bytes),
                }),
            );
        }
        Some(Value::Object(out))
    }

    /// arcstats over a window, for ZFS.
    pub(super) fn arc_window_of(&self, a: &Snapshot, b: &Snapshot) -> Option<Value> {
        let (Some(x), Some(y), FsConfig::Zfs(z)) = (&a.arc, &b.arc, &self.cfg.filesystem) else {
            return None;
        };
        Some(arc_window(x, y, z.release.features().arc.adaptation))
    }

    /// Whether the workload's events are transactions of several queries (a "tps"
    /// column beside "qps" in the series).
    pub(super) fn transactions(&self) -> bool {
        self.cfg.sysbench_transactions()
    }

    /// sysbench-tpcc's transactions in a window: each type's count and rate (tps counts
    /// all five, as sysbench prints it), the rolled-back new orders (sysbench's err/s) and
    /// the new orders committed per minute (not printed by sysbench-tpcc: a tpmC-like
    /// figure); null for other workloads.
    fn tpcc_window(&self, a: &Snapshot, b: &Snapshot, window_s: f64) -> Value {
        if !matches!(self.cfg.dataset, DatasetConfig::Tpcc(_)) {
            return Value::Null;
        }
        use crate::workload::tpcc::kind;
        let n = |k: u8| b.by_kind[k as usize] - a.by_kind[k as usize];
        let mut out = serde_json::Map::new();
        for (i, name) in kind::NAMES.iter().enumerate() {
            out.insert((*name).to_string(), json!(n(i as u8 + 1)));
        }
        let rollbacks = n(kind::NEW_ORDER_ROLLBACK);
        out.insert("new_order_total".into(), json!(n(kind::NEW_ORDER) + rollbacks));
        out.insert("errors_per_s".into(), json!(rollbacks as f64 / window_s));
        out.insert("new_orders_per_min".into(), json!(n(kind::NEW_ORDER) as f64 * 60.0 / window_s));
        Value::Object(out)
    }

    /// The summary of a workload phase's measured window.
    pub(super) fn window_summary(&self, a: &Snapshot, b: &Snapshot, warmup_ns: Nanos) -> Value {
        let window_s = (b.time - a.time).max(1) as f64 / SEC as f64;
        let statements = b.statements - a.statements;
        let queries = b.queries - a.queries;
        let qps = queries as f64 / window_s;
        let req = b.bp_requests - a.bp_requests;
        let reads = b.bp_reads - a.bp_reads;
        let mut out = json!({
            "window_s": window_s,
            "warmup_s": secs(warmup_ns),
            "queries": queries,
            "rows": b.rows - a.rows,
            "qps": qps,
            // An event is a transaction for sysbench: oltp_point_select's and
            // select_random_points' single statements outside an explicit one too.
            "tps": statements as f64 / window_s,
            // No statement finished in the window: no latency (null), not 0 ms.
            "latency_ms": if statements == 0 {
                json!({ "p50": null, "p95": null, "p99": null, "max": null, "mean": null })
            } else {
                json!({
                    "p50": self.window_hist.quantile_ms(0.50),
                    "p95": self.window_hist.quantile_ms(0.95),
                    "p99": self.window_hist.quantile_ms(0.99),
                    "max": self.window_hist.max_ms(),
                    "mean": self.window_hist.mean_ms(),
                })
            },
            "cpu_utilization": (b.cpu_busy.saturating_sub(a.cpu_busy) as f64 / SEC as f64 / window_s / self.cpus.vcpus() as f64).min(1.0),
            "devices": self.devices_window(a, b),
        });
        let tpcc = self.tpcc_window(a, b, window_s);
        if !tpcc.is_null() {
            out["tpcc"] = tpcc;
        }
        if self.db.is_some() && statements > 0 {
            // Where the transactions' time went (`waits`).
            let p95 = (self.window_hist.quantile_ms(0.95) * crate::sim::time::MS as f64) as Nanos;
            out["waits"] = self.wait_times.summary(p95);
        }
        if let Some(db) = &self.db {
            out["innodb"] = json!({
                "buffer_pool_hit_ratio": if req > 0 { Some(1.0 - reads as f64 / req as f64) } else { None },
                "pages_read": reads,
                "read_requests": req,
                "buffer_pool_pages": db.cache_pages(),
            });
            if let (Some(x), Some(y)) = (&a.db_writes, &b.db_writes) {
                innodb_write_window(&mut out["innodb"], x, y);
            }
        }
        if let Some(arc) = self.arc_window_of(a, b) {
            out["arc"] = arc;
        }
        if let Some(zfetch) = self.zfetch_window(a, b) {
            out["zfetch"] = zfetch;
        }
        if let Some(zil) = self.zil_window(a, b) {
            out["zil"] = zil;
        }
        if let Some(journal) = self.journal_window(a, b) {
            out["journal"] = journal;
        }
        if let Some(pc) = self.page_cache_window(a, b) {
            out["page_cache"] = pc;
        }
        if let (Fs::Zfs(zfs), Some(_)) = (&self.fs, &a.db_writes) {
            // The txgs synced since the window started (/proc/spl/kstat/zfs/POOL/txgs).
            out["txg"] = zfs.write_report(a.txgs);
        }
        if let (Fs::Zfs(zfs), FsConfig::Zfs(z)) = (&self.fs, &self.cfg.filesystem) {
            let layout = &zfs.layout;
            // `zfs get compressratio` of the data records (dsl_get_refratio).
            out["compressratio"] = json!(layout.compression.mean_stored_ratio(z.recordsize));
        }
        if let Some(l2) = self.l2arc_window(a, b) {
            out["l2arc"] = l2;
        }
        if let Some(ctrl) = self.controllers_window(a, b) {
            out["controllers"] = ctrl;
        }
        if let Some(bc) = self.bcache_window(a, b) {
            out["bcache"] = bc;
        }
        out
    }

    /// bcache over a window: "hits" are reads served whole from the cache device
    /// (cache_hits and cache_bypass_hits), "misses" reads that needed the backing device
    /// (cache_misses and cache_bypass_misses), "bypassed" bytes (as sysfs), "size" bytes
    /// cached now; then the stats_total counters by their sysfs names and the share of
    /// reads each device served.
    pub(super) fn bcache_window(&self, a: &Snapshot, b: &Snapshot) -> Option<Value> {
        let (Fs::Extent(ext), Some(x), Some(y)) = (&self.fs, &a.bcache, &b.bcache) else {
            return None;
        };
        let (c, _) = ext.bcache.as_ref()?;
        let mut m = Map::new();
        macro_rules! counters {
            ($($f:ident),*) => { $( m.insert(stringify!($f).into(), json!(y.$f - x.$f)); )* };
        }
        counters!(
            cache_hits,
            cache_misses,
            cache_bypass_hits,
            cache_bypass_misses,
            cache_readaheads,
            cache_miss_collisions,
            bypassed,
            written,
            cache_read_bytes,
            backing_read_bytes,
            backing_write_bytes,
            buckets_invalidated,
            evicted
        );
        let (hits, misses) = (y.cache_hits - x.cache_hits, y.cache_misses - x.cache_misses);
        // stats.c: DIV_SAFE(cache_hits * 100, cache_hits + cache_misses).
        m.insert("cache_hit_ratio".into(), json!((hits * 100).checked_div(hits + misses).unwrap_or(0)));
        let all_hits = hits + y.cache_bypass_hits - x.cache_bypass_hits;
        let all_misses = misses + y.cache_bypass_misses - x.cache_bypass_misses;
        m.insert("hits".into(), json!(all_hits));
        m.insert("misses".into(), json!(all_misses));
        m.insert("size".into(), json!(y.size));
        m.insert("dirty_data".into(), json!(y.dirty_data));
        m.insert("bucket_size".into(), json!(c.bucket_size()));
        m.insert("nbuckets".into(), json!(c.nbuckets()));
        if c.is_writeback() {
            // The writeback thread (sysfs writeback_rate, writeback_rate_debug's terms; the
            // cache set's writeback_keys_done/failed), in writeback mode only.
            counters!(writeback_bytes, writeback_keys_done, writeback_keys_failed);
            let (target, proportional, integral) = c.writeback_rate_debug();
            m.insert("writeback_rate".into(), json!(y.writeback_rate));
            m.insert("writeback_rate_target".into(), json!(target));
            m.insert("writeback_rate_proportional".into(), json!(proportional));
            m.insert("writeback_rate_integral".into(), json!(integral));
        }
        let total = (all_hits + all_misses).max(1) as f64;
        m.insert(
            "read_share".into(),
            json!({"bcache": all_hits as f64 / total, "backing": all_misses as f64 / total}),
        );
        Some(Value::Object(m))
    }

    /// `/proc/spl/kstat/zfs/zil` over a window, where the dataset has an intent log.
    /// ext4's jbd2 (XFS: its log) over a window, when the run has one.
    pub(super) fn journal_window(&self, a: &Snapshot, b: &Snapshot) -> Option<Value> {
        let (x, y) = (a.journal.as_ref()?, b.journal.as_ref()?);
        Some(json!({
            "kind": if matches!(self.cfg.filesystem, FsConfig::Ext4(_)) { "jbd2" } else { "xfs-log" },
            "commits": y.commits - x.commits,
            "timer_commits": y.timer_commits - x.timer_commits,
            "log_bytes": y.log_bytes - x.log_bytes,
            "syncs": y.syncs - x.syncs,
            "sync_waits": y.sync_waits - x.sync_waits,
            "sync_flushes": y.sync_flushes - x.sync_flushes,
        }))
    }

    /// XFS/ext4's page cache over a window, when the run has buffered files: the gauges of
    /// /proc/meminfo at the window's end (Cached, Active(file), Inactive(file), Dirty,
    /// Writeback, in kB as meminfo shows them) and the thresholds of /proc/vmstat
    /// (nr_dirty_threshold, nr_dirty_background_threshold, pages); the /proc/vmstat
    /// counters over the window (pgpgin and pgpgout in KiB, the others in pages); the
    /// model's own counters (read pages found cached or not, pages readahead brought in,
    /// the dirty throttle's sleeps, flusher runs, pages fio's invalidate dropped); and the
    /// budget (`mem_available_bytes`).
    pub(super) fn page_cache_window(&self, a: &Snapshot, b: &Snapshot) -> Option<Value> {
        let (Fs::Extent(ext), Some(x), Some(y)) = (&self.fs, &a.page_cache, &b.page_cache) else {
            return None;
        };
        let pc = &ext.page_cache.as_ref()?.pc;
        let (bg, thresh) = pc.dirty_limits();
        let kb = |pages: u64| pages * (crate::fs::page_cache::PAGE_SIZE / 1024);
        let mut m = Map::new();
        for (name, v) in [
            ("mem_available_bytes", pc.params().budget_bytes),
            ("cached_kb", kb(y.cached)),
            ("active_file_kb", kb(y.active_file)),
            ("inactive_file_kb", kb(y.inactive_file)),
            ("dirty_kb", kb(y.nr_dirty)),
            ("writeback_kb", kb(y.nr_writeback)),
            ("nr_dirty_threshold", thresh),
            ("nr_dirty_background_threshold", bg),
        ] {
            m.insert(name.into(), json!(v));
        }
        macro_rules! counters {
            ($($f:ident),*) => { $( m.insert(stringify!($f).into(), json!(y.$f - x.$f)); )* };
        }
        counters!(
            pgpgin,
            pgpgout,
            nr_dirtied,
            nr_written,
            pgactivate,
            pgdeactivate,
            pgrefill,
            pgscan_file,
            pgsteal_file,
            pgrotated,
            nr_vmscan_immediate_reclaim,
            workingset_refault_file,
            workingset_activate_file,
            workingset_restore_file,
            read_hit_pages,
            read_miss_pages,
            readahead_pages,
            dirty_throttle_pauses,
            flusher_runs,
            invalidated_pages
        );
        m.insert("dirty_throttle_ms".into(), json!((y.dirty_throttle_ns - x.dirty_throttle_ns) as f64 / 1e6));
        let (hits, misses) = (y.read_hit_pages - x.read_hit_pages, y.read_miss_pages - x.read_miss_pages);
        m.insert(
            "read_hit_ratio".into(),
            if hits + misses > 0 { json!(hits as f64 / (hits + misses) as f64) } else { Value::Null },
        );
        Some(Value::Object(m))
    }

    pub(super) fn zil_window(&self, a: &Snapshot, b: &Snapshot) -> Option<Value> {
        let (Fs::Zfs(z), Some(x), Some(y)) = (&self.fs, &a.zil, &b.zil) else { return None };
        Some(z.zil_report(x, y))
    }

    /// zfetchstats over a window: the rows the release has, counters as differences and
    /// `io_active` (a gauge) at the end.
    pub(super) fn zfetch_window(&self, a: &Snapshot, b: &Snapshot) -> Option<Value> {
        let (Fs::Zfs(z), Some(x), Some(y)) = (&self.fs, &a.zfetch, &b.zfetch) else {
            return None;
        };
        let rules = z.zfetch.params().rules;
        let before: HashMap<&str, u64> = x.rows(rules).into_iter().collect();
        let mut m = Map::new();
        for (name, v) in y.rows(rules) {
            let v = if name == "io_active" { v } else { v.saturating_sub(before[name]) };
            m.insert(name.into(), json!(v));
        }
        Some(Value::Object(m))
    }

    /// L2ARC arcstats over a window, and the share of demand block reads each tier served.
    pub(super) fn l2arc_window(&self, a: &Snapshot, b: &Snapshot) -> Option<Value> {
        let (Some(_), Some(x), Some(y)) = (self.arc_with_cache_device(), &a.arc, &b.arc) else {
            return None;
        };
        let mut m = Map::new();
        macro_rules! counters {
            ($($f:ident),*) => { $( m.insert(stringify!($f).into(), json!(y.$f.saturating_sub(x.$f))); )* };
        }
        macro_rules! sizes {
            ($($f:ident),*) => { $( m.insert(stringify!($f).into(), json!(y.$f)); )* };
        }
        counters!(
            l2_hits,
            l2_misses,
            l2_feeds,
            l2_read_bytes,
            l2_write_bytes,
            l2_writes_sent,
            l2_writes_done,
            l2_abort_lowmem,
            l2_log_blk_writes,
            evict_l2_cached,
            evict_l2_eligible,
            evict_l2_ineligible
        );
        sizes!(l2_size, l2_asize, l2_hdr_size);
        // The feed thread's CPU time (model: l2arc_hdr_ns, zio_ns, ... per pass).
        m.insert("feed_cpu_s".into(), json!(b.l2_feed_cpu.saturating_sub(a.l2_feed_cpu) as f64 / SEC as f64));
        let hits = y.hits.saturating_sub(x.hits) as f64;
        let misses = y.misses.saturating_sub(x.misses) as f64;
        let l2_hits = y.l2_hits.saturating_sub(x.l2_hits) as f64;
        let total = (hits + misses).max(1.0);
        m.insert(
            "read_share".into(),
            json!({"arc": hits / total, "l2arc": l2_hits / total, "pool": (misses - l2_hits) / total}),
        );
        Some(Value::Object(m))
    }
}

/// Only the arcstats the modelled release has are reported: those of its ARC's generation
/// (arc_p's, 0.6 to 2.1: p and the arc_meta_* limits; the 2.2 balance: meta, pd, pm,
/// the uncached state and the iohits).
fn arc_window(a: &ArcStats, b: &ArcStats, adaptation: ArcAdaptation) -> Value {
    let mut m = Map::new();
    macro_rules! counters {
        ($($f:ident),*) => { $( m.insert(stringify!($f).into(), json!(b.$f - a.$f)); )* };
    }
    macro_rules! sizes {
        ($($f:ident),*) => { $( m.insert(stringify!($f).into(), json!(b.$f)); )* };
    }
    counters!(
        hits,
        misses,
        demand_data_hits,
        demand_data_misses,
        demand_metadata_hits,
        demand_metadata_misses,
        prefetch_data_hits,
        prefetch_data_misses,
        prefetch_metadata_hits,
        prefetch_metadata_misses,
        mru_hits,
        mfu_hits,
        mru_ghost_hits,
        mfu_ghost_hits,
        deleted,
        evict_skip,
        demand_hit_predictive_prefetch
    );
    sizes!(
        size,
        c,
        c_min,
        c_max,
        data_size,
        metadata_size,
        hdr_size,
        overhead_size,
        dbuf_size,
        dnode_size,
        bonus_size,
        compressed_size,
        uncompressed_size,
        mru_size,
        mfu_size,
        mru_ghost_size,
        mfu_ghost_size,
        mru_data,
        mru_metadata,
        mfu_data,
        mfu_metadata
    );
    match adaptation {
        ArcAdaptation::ArcP => {
            sizes!(p, arc_meta_used, arc_meta_limit, arc_meta_min, arc_meta_max);
            counters!(arc_prune);
        }
        ArcAdaptation::MetaBalance => {
            counters!(
                uncached_hits,
                iohits,
                demand_data_iohits,
                demand_metadata_iohits,
                prefetch_data_iohits,
                prefetch_metadata_iohits,
                demand_iohit_predictive_prefetch
            );
            sizes!(meta, pd, pm, uncached_size);
        }
    }
    Value::Object(m)
}

/// InnoDB's write counters over a window, by their SHOW GLOBAL STATUS names (the gauges
/// at the window's end). MariaDB 10.11 has no Innodb_os_log_fsyncs (its log's fdatasyncs
/// are in Innodb_data_fsyncs: shown as log_fdatasyncs), and its Innodb_os_log_written
/// counts the LSN bytes appended, not the bytes written. Percona Server 5.7 counts as it
/// does: Innodb_buffer_pool_pages_flushed includes its LRU manager's evictions,
/// Innodb_buffer_pool_pages_LRU_flushed reads 0, Innodb_buffer_pool_wait_free counts
/// rounds; it adds Innodb_checkpoint_age and Innodb_checkpoint_max_age.
fn innodb_write_window(doc: &mut Value, x: &WriteStats, y: &WriteStats) {
    let log_fsyncs = if y.mariadb { "log_fdatasyncs" } else { "Innodb_os_log_fsyncs" };
    let pairs = [
        ("Innodb_buffer_pool_pages_flushed", y.pages_flushed - x.pages_flushed),
        ("Innodb_buffer_pool_pages_LRU_flushed", y.pages_lru_flushed - x.pages_lru_flushed),
        ("Innodb_buffer_pool_wait_free", y.wait_free - x.wait_free),
        ("Innodb_dblwr_pages_written", y.dblwr_pages_written - x.dblwr_pages_written),
        ("Innodb_dblwr_writes", y.dblwr_writes - x.dblwr_writes),
        ("Innodb_data_fsyncs", y.data_fsyncs - x.data_fsyncs),
        ("Innodb_data_writes", y.data_writes - x.data_writes),
        ("Innodb_data_written", y.data_written - x.data_written),
        ("Innodb_log_write_requests", y.redo.log_write_requests - x.redo.log_write_requests),
        ("Innodb_log_writes", y.redo.log_writes - x.redo.log_writes),
        ("Innodb_os_log_written", y.redo.os_log_written - x.redo.os_log_written),
        (log_fsyncs, y.redo.os_log_fsyncs - x.redo.os_log_fsyncs),
        ("Innodb_rows_updated", y.rows_updated - x.rows_updated),
        ("Innodb_rows_deleted", y.rows_deleted - x.rows_deleted),
        ("Innodb_rows_inserted", y.rows_inserted - x.rows_inserted),
        ("Innodb_row_lock_waits", y.row_locks.waits - x.row_locks.waits),
        ("Innodb_row_lock_time", y.row_locks.wait_ms() - x.row_locks.wait_ms()),
        ("Innodb_row_lock_current_waits", y.row_locks.current_waits),
        ("commits_with_redo", y.commits - x.commits),
        ("checkpoint_age_waits", y.checkpoint_waits - x.checkpoint_waits),
        ("page_cleaner_passes", y.cleaner_passes - x.cleaner_passes),
        ("Innodb_buffer_pool_pages_dirty", y.pages_dirty),
        ("checkpoint_age_bytes", y.checkpoint_age),
    ];
    for (name, v) in pairs {
        doc[name] = json!(v);
    }
    // Purge: SHOW ENGINE INNODB STATUS's "History list length" at the window's end and
    // its INNODB_METRICS counters over the window (`innodb::purge`).
    let (p, q) = (&x.purge, &y.purge);
    doc["history_list_length"] = json!(q.history_len);
    doc["purge"] = json!({
        "trx_rseg_history_len": q.history_len,
        "purge_invoked": q.invoked - p.invoked,
        "purge_undo_log_pages": q.undo_log_pages - p.undo_log_pages,
        "purge_del_mark_records": q.del_mark_records - p.del_mark_records,
        "purge_upd_exist_or_extern_records": q.upd_exist_or_extern_records - p.upd_exist_or_extern_records,
        "purge_ibuf_deletes": q.ibuf_deletes - p.ibuf_deletes,
        "purge_logs_truncated": q.logs_truncated - p.logs_truncated,
        "purge_truncations": q.truncations - p.truncations,
        "purge_records_dropped": q.records_dropped - p.records_dropped,
    });
    if let (Some(a), Some(b)) = (&x.percona, &y.percona) {
        // Percona Server 5.7's own: its status variables (Innodb_checkpoint_age: lsn -
        // last_checkpoint_lsn, the checkpoint taken at the oldest modification), its
        // INNODB_METRICS counters of the flushing, and its LRU manager.
        let (f, g) = (&a.flush, &b.flush);
        doc["Innodb_checkpoint_age"] = json!(y.checkpoint_age);
        doc["Innodb_checkpoint_max_age"] = json!(b.checkpoint_max_age);
        doc["innodb_metrics"] = json!({
            "buffer_LRU_batch_flush_total_pages": g.lru_batch_flush_total_pages - f.lru_batch_flush_total_pages,
            "buffer_LRU_batch_evict_total_pages": g.lru_batch_evict_total_pages - f.lru_batch_evict_total_pages,
            "buffer_LRU_batch_scanned": g.lru_batch_scanned - f.lru_batch_scanned,
            "buffer_LRU_get_free_loops": g.lru_get_free_loops - f.lru_get_free_loops,
            "buffer_LRU_get_free_waits": g.lru_get_free_waits - f.lru_get_free_waits,
            "buffer_flush_adaptive_total_pages": g.flush_adaptive_total_pages - f.flush_adaptive_total_pages,
            "buffer_flush_sync_total_pages": g.flush_sync_total_pages - f.flush_sync_total_pages,
            "buffer_flush_background_total_pages": g.flush_background_total_pages - f.flush_background_total_pages,
            "buffer_flush_n_to_flush_requested": g.flush_n_to_flush_requested,
            "buffer_flush_pct_for_lsn": g.flush_pct_for_lsn,
            "buffer_flush_pct_for_dirty": g.flush_pct_for_dirty,
        });
        doc["lru_manager"] = json!({
            "instances": b.instances,
            "loops": g.lru_manager_loops - f.lru_manager_loops,
            "pages_written": g.lru_batch_written - f.lru_batch_written,
            "sleep_ms": b.lru_sleep_ms,
        });
    }
    if let (Some(a), Some(b)) = (&x.binlog, &y.binlog) {
        // The binary log's group commit (MySQL 5.7 has no status variables for it; Percona
        // Server's Binlog_group_commits counts the sync stages).
        doc["binlog"] = json!({
            "commits": b.commits - a.commits,
            "flush_groups": b.flush_groups - a.flush_groups,
            "commit_groups": b.commit_groups - a.commit_groups,
            "redo_flushes": b.redo_flushes - a.redo_flushes,
            "bytes_written": b.bytes_written - a.bytes_written,
            "writes": b.writes - a.writes,
            "fsyncs": b.fsyncs - a.fsyncs,
            "rotations": b.rotations - a.rotations,
        });
    }
}

/// A device's I/O between two of its counters `window_s` seconds apart, as iostat shows it:
/// read and write IOPS and MB/s, utilization.
fn io_window(x: &DeviceCounters, y: &DeviceCounters, window_s: f64) -> Value {
    json!({
        "read_iops": (y.reads - x.reads) as f64 / window_s,
        "write_iops": (y.writes - x.writes) as f64 / window_s,
        "read_mbps": (y.read_bytes - x.read_bytes) as f64 / 1e6 / window_s,
        "write_mbps": (y.write_bytes - x.write_bytes) as f64 / 1e6 / window_s,
        "utilization": (y.busy_ns.saturating_sub(x.busy_ns) as f64 / SEC as f64 / window_s).min(1.0),
    })
}

/// The mean request size of `n` requests of `bytes` in all, KiB (iostat's rareq-sz and
/// wareq-sz); none without a request.
fn kib_per_io(n: u64, bytes: u64) -> Option<f64> {
    (n > 0).then(|| bytes as f64 / n as f64 / 1024.0)
}
