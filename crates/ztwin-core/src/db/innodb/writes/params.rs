//! The write path's options, resolved with each server's defaults (one place for them),
//! and the files the database writes.

use crate::config::{CharacterSet, InnodbConfig, InnodbServer};
use crate::db::binlog::BinlogParams;
use crate::db::innodb::page_cleaner::FlushParams;
use crate::db::innodb::percona_flush::{self, EmptyFreeListAlgorithm, LsnAgeFactor, MAX_BUFFER_POOLS};
use crate::db::innodb::purge::PurgeParams;
use crate::error::{Error, Result};

/// `innodb_flush_method`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlushMethod {
    /// fsync: buffered files, fsynced.
    Fsync,
    /// O_DSYNC: log files opened O_SYNC; data files fsynced.
    ODsync,
    /// O_DIRECT: data files O_DIRECT; every file fsynced.
    ODirect,
    /// O_DIRECT_NO_FSYNC: as O_DIRECT without the data files' fsync.
    ODirectNoFsync,
}

impl FlushMethod {
    /// Parses the option as the server spells it.
    pub fn parse(s: &str) -> Option<FlushMethod> {
        match s {
            "fsync" => Some(FlushMethod::Fsync),
            "O_DSYNC" => Some(FlushMethod::ODsync),
            "O_DIRECT" => Some(FlushMethod::ODirect),
            "O_DIRECT_NO_FSYNC" => Some(FlushMethod::ODirectNoFsync),
            _ => None,
        }
    }

    /// Data files are fsynced after writes (`fil_flush` unless O_DIRECT_NO_FSYNC).
    pub fn syncs_data(self) -> bool {
        self != FlushMethod::ODirectNoFsync
    }

    /// The log files are opened O_SYNC: a log write is durable when it returns.
    pub fn log_o_sync(self) -> bool {
        self == FlushMethod::ODsync
    }

    /// Data files are opened O_DIRECT.
    pub fn data_direct(self) -> bool {
        matches!(self, FlushMethod::ODirect | FlushMethod::ODirectNoFsync)
    }
}

/// The write path's options, resolved with the server's defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WriteParams {
    /// innodb_flush_log_at_trx_commit (1).
    pub flush_log_at_trx_commit: u8,
    /// innodb_doublewrite (on).
    pub doublewrite: bool,
    /// The page cleaner's options (io capacity, dirty page percentages, adaptive flushing).
    pub flush: FlushParams,
    /// innodb_log_file_size (MySQL 5.7: 48 MiB, `srv0srv.cc`; MariaDB 10.11: 96 MiB).
    pub log_file_size: u64,
    /// innodb_log_files_in_group (MySQL 5.7: 2; MariaDB 10.5+: one file).
    pub log_files: u32,
    /// innodb_change_buffering: delete-marks of secondary leaves not in the pool are
    /// buffered ("all", MySQL 5.7's default, "deletes", "changes"; not with "none",
    /// MariaDB 10.11's default since 10.5.15, MDEV-27734, "inserts" or "purges").
    pub change_buffering: bool,
    /// Purge's options (`purge`); with innodb_change_buffering "all" or "purges", a
    /// purge's delete may be buffered.
    pub purge: PurgeParams,
    /// innodb_lru_scan_depth (MySQL 5.7: 1024; MariaDB 10.11: 1536).
    pub lru_scan_depth: u64,
    /// innodb_flush_method.
    pub method: FlushMethod,
    /// innodb_flush_neighbors (1: the contiguous dirty run around a page, on rotational
    /// storage; MariaDB's page cleaner).
    pub flush_neighbors: u8,
    /// The binary log (log_bin and its options), None when off.
    pub binlog: Option<BinlogParams>,
    /// The server.
    pub server: InnodbServer,
    /// character_set_server when the tables were created (MariaDB's record sizes).
    pub charset: CharacterSet,
    /// Percona Server 5.7's own options (None for the other servers).
    pub percona: Option<PerconaOptions>,
}

/// Percona Server 5.7's flushing options, with its defaults (`handler/ha_innodb.cc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerconaOptions {
    /// innodb_empty_free_list_algorithm (backoff).
    pub empty_free_list_algorithm: EmptyFreeListAlgorithm,
    /// innodb_cleaner_lsn_age_factor (high_checkpoint).
    pub cleaner_lsn_age_factor: LsnAgeFactor,
    /// innodb_buffer_pool_instances (0: the server's default, see `percona_flush`).
    pub buffer_pool_instances: u64,
}

impl WriteParams {
    /// The options of `cfg` with its server's defaults; errors name the option.
    pub fn new(cfg: &InnodbConfig) -> Result<WriteParams> {
        let mariadb = cfg.server == InnodbServer::Mariadb1011;
        let field = |f: &str| format!("database.{f}");
        let method = FlushMethod::parse(&cfg.innodb_flush_method).ok_or_else(|| {
            Error::config(
                field("innodb_flush_method"),
                format!(
                    "'{}' is not a flush method: fsync, O_DSYNC, O_DIRECT or O_DIRECT_NO_FSYNC",
                    cfg.innodb_flush_method
                ),
            )
        })?;
        let flush_log = cfg.innodb_flush_log_at_trx_commit.unwrap_or(1);
        if flush_log > 2 {
            return Err(Error::config(field("innodb_flush_log_at_trx_commit"), "must be 0, 1 or 2"));
        }
        let io_capacity = cfg.innodb_io_capacity.unwrap_or(200);
        if io_capacity < 100 || io_capacity > u64::from(u32::MAX) {
            return Err(Error::config(
                field("innodb_io_capacity"),
                "must be 100 to 4294967295 (the server's range)",
            ));
        }
        let io_capacity_max = cfg.innodb_io_capacity_max.unwrap_or(0);
        if io_capacity_max > u64::from(u32::MAX) {
            return Err(Error::config(field("innodb_io_capacity_max"), "must be at most 4294967295"));
        }
        let pct = |v: Option<f64>, default: f64, name: &str| -> Result<f64> {
            let v = v.unwrap_or(default);
            if !(0.0..=99.999).contains(&v) {
                return Err(Error::config(field(name), "must be 0 to 99.999 (the server's range)"));
            }
            Ok(v)
        };
        let max_dirty = pct(
            cfg.innodb_max_dirty_pages_pct,
            if mariadb { 90.0 } else { 75.0 },
            "innodb_max_dirty_pages_pct",
        )?;
        let lwm = pct(cfg.innodb_max_dirty_pages_pct_lwm, 0.0, "innodb_max_dirty_pages_pct_lwm")?;
        let adaptive_lwm = cfg.innodb_adaptive_flushing_lwm.unwrap_or(10);
        if adaptive_lwm > 70 {
            return Err(Error::config(
                field("innodb_adaptive_flushing_lwm"),
                "must be 0 to 70 (the server's range)",
            ));
        }
        let avg_loops = cfg.innodb_flushing_avg_loops.unwrap_or(30);
        if !(1..=1000).contains(&avg_loops) {
            return Err(Error::config(
                field("innodb_flushing_avg_loops"),
                "must be 1 to 1000 (the server's range)",
            ));
        }
        let log_file_size = cfg.innodb_log_file_size.unwrap_or(if mariadb { 96 << 20 } else { 48 << 20 });
        // MySQL 5.7: 4 MiB to 512 GiB / files; the model's bound keeps LSN arithmetic small.
        if !((4 << 20)..=(1 << 40)).contains(&log_file_size) {
            return Err(Error::config(field("innodb_log_file_size"), "must be 4M to 1T"));
        }
        let log_files = cfg.innodb_log_files_in_group.unwrap_or(if mariadb { 1 } else { 2 });
        if mariadb && log_files != 1 {
            return Err(Error::config(
                field("innodb_log_files_in_group"),
                "MariaDB 10.5 and later have one redo log file (the option is gone)",
            ));
        }
        if !(1..=100).contains(&log_files) {
            return Err(Error::config(field("innodb_log_files_in_group"), "must be 1 to 100"));
        }
        let (change_buffering, buffer_purges) = match cfg.innodb_change_buffering.as_deref() {
            None => (!mariadb, !mariadb),
            // ibuf_insert's switch on ibuf_use (`ibuf0ibuf.cc`).
            Some("all") => (true, true),
            Some("deletes" | "changes") => (true, false),
            Some("purges") => (false, true),
            Some("none" | "inserts") => (false, false),
            Some(other) => {
                return Err(Error::config(
                    field("innodb_change_buffering"),
                    format!("'{other}' is not a value: none, inserts, deletes, changes, purges or all"),
                ))
            }
        };
        let purge = purge_params(cfg, buffer_purges)?;
        let lru_scan_depth = match cfg.innodb_lru_scan_depth {
            0 if mariadb => 1536,
            0 => 1024,
            n => u64::from(n),
        };
        Ok(WriteParams {
            flush_log_at_trx_commit: flush_log,
            doublewrite: cfg.innodb_doublewrite.unwrap_or(true),
            flush: FlushParams {
                io_capacity,
                io_capacity_max,
                max_dirty_pages_pct: max_dirty,
                max_dirty_pages_pct_lwm: lwm,
                adaptive_flushing: cfg.innodb_adaptive_flushing.unwrap_or(true),
                adaptive_flushing_lwm: adaptive_lwm,
                flushing_avg_loops: avg_loops,
            },
            log_file_size,
            log_files,
            change_buffering,
            purge,
            lru_scan_depth,
            method,
            flush_neighbors: {
                let n = cfg.innodb_flush_neighbors.unwrap_or(1);
                if n > 2 {
                    return Err(Error::config(field("innodb_flush_neighbors"), "must be 0, 1 or 2"));
                }
                n
            },
            binlog: binlog_params(cfg, flush_log)?,
            server: cfg.server,
            charset: cfg.character_set_server,
            percona: percona_options(cfg)?,
        })
    }

    /// Percona Server 5.7's flushing parameters (`percona_flush::Params`) for a pool of
    /// `cfg`'s size (None for the other servers).
    pub fn percona_params(&self, cfg: &InnodbConfig) -> Option<percona_flush::Params> {
        let o = self.percona?;
        Some(percona_flush::Params {
            innodb_buffer_pool_instances: o.buffer_pool_instances,
            innodb_lru_scan_depth: self.lru_scan_depth,
            innodb_io_capacity: self.flush.io_capacity,
            innodb_io_capacity_max: self.flush.io_capacity_max,
            innodb_max_dirty_pages_pct: self.flush.max_dirty_pages_pct,
            innodb_max_dirty_pages_pct_lwm: self.flush.max_dirty_pages_pct_lwm,
            innodb_adaptive_flushing: self.flush.adaptive_flushing,
            innodb_adaptive_flushing_lwm: self.flush.adaptive_flushing_lwm,
            innodb_flushing_avg_loops: self.flush.flushing_avg_loops,
            innodb_flush_neighbors: u64::from(self.flush_neighbors),
            innodb_doublewrite: self.doublewrite,
            innodb_cleaner_lsn_age_factor: o.cleaner_lsn_age_factor,
            innodb_empty_free_list_algorithm: o.empty_free_list_algorithm,
            ..percona_pool(cfg, o.buffer_pool_instances)
        })
    }
}

/// Purge's options of `cfg` with its server's defaults: MySQL 5.7.29 (and Percona Server
/// 5.7) `handler/ha_innodb.cc`'s system variables (innodb_purge_threads 4, 1..32;
/// innodb_purge_batch_size 300, 1..5000; innodb_max_purge_lag 0;
/// innodb_purge_rseg_truncate_frequency 128, 1..128); MariaDB 10.11.18's
/// (innodb_purge_batch_size 1000, MDEV-32050, whose truncation follows every batch).
fn purge_params(cfg: &InnodbConfig, buffer_purges: bool) -> Result<PurgeParams> {
    let mariadb = cfg.server == InnodbServer::Mariadb1011;
    let field = |f: &str| format!("database.{f}");
    let range = |name: &str, v: u32, lo: u32, hi: u32| -> Result<u32> {
        if (lo..=hi).contains(&v) {
            Ok(v)
        } else {
            Err(Error::config(field(name), format!("must be {lo} to {hi} (the server's range)")))
        }
    };
    let threads = range("innodb_purge_threads", cfg.innodb_purge_threads.unwrap_or(4), 1, 32)?;
    let batch = cfg.innodb_purge_batch_size.unwrap_or(if mariadb { 1000 } else { 300 });
    let batch_size = range("innodb_purge_batch_size", batch, 1, 5000)?;
    let freq = cfg.innodb_purge_rseg_truncate_frequency.unwrap_or(128);
    let freq = range("innodb_purge_rseg_truncate_frequency", freq, 1, 128)?;
    if cfg.innodb_max_purge_lag.is_some_and(|v| v != 0) {
        return Err(Error::config(
            field("innodb_max_purge_lag"),
            "only 0 (the default: no DML delay) is modelled; the delay trx_purge_dml_delay computes is not",
        ));
    }
    Ok(PurgeParams {
        threads,
        batch_size,
        truncate_frequency: if mariadb { 1 } else { freq },
        wake_on_commit: !mariadb,
        buffer_purges,
        recheck: !mariadb,
    })
}

/// `percona_flush::Params` at Percona Server 5.7's defaults for `cfg`'s pool with
/// `instances` (0: the default): its frames are `buffer_pool::pool_frames`'.
pub(crate) fn percona_pool(cfg: &InnodbConfig, instances: u64) -> percona_flush::Params {
    percona_flush::Params {
        innodb_buffer_pool_size: cfg.innodb_buffer_pool_size,
        innodb_page_size: u64::from(cfg.innodb_page_size),
        innodb_buffer_pool_instances: instances,
        ..percona_flush::Params::default()
    }
}

/// Percona Server 5.7's options of `cfg`: its defaults for Percona Server, refused (naming
/// the option) for the other servers.
fn percona_options(cfg: &InnodbConfig) -> Result<Option<PerconaOptions>> {
    let field = |f: &str| format!("database.{f}");
    if cfg.server != InnodbServer::Percona57 {
        for (set, name) in [
            (cfg.innodb_empty_free_list_algorithm.is_some(), "innodb_empty_free_list_algorithm"),
            (cfg.innodb_cleaner_lsn_age_factor.is_some(), "innodb_cleaner_lsn_age_factor"),
            (cfg.innodb_buffer_pool_instances.is_some(), "innodb_buffer_pool_instances"),
        ] {
            if set {
                return Err(Error::config(
                    field(name),
                    "is Percona Server 5.7's option here (server = \"percona-5.7\"): the other servers' \
                     flushing runs one buffer pool instance",
                ));
            }
        }
        return Ok(None);
    }
    let empty_free_list_algorithm = match cfg.innodb_empty_free_list_algorithm.as_deref() {
        None | Some("backoff") => EmptyFreeListAlgorithm::Backoff,
        Some("legacy") => EmptyFreeListAlgorithm::Legacy,
        Some(other) => {
            return Err(Error::config(
                field("innodb_empty_free_list_algorithm"),
                format!("'{other}' is not a value: backoff or legacy"),
            ))
        }
    };
    let cleaner_lsn_age_factor = match cfg.innodb_cleaner_lsn_age_factor.as_deref() {
        None | Some("high_checkpoint") => LsnAgeFactor::HighCheckpoint,
        Some("legacy") => LsnAgeFactor::Legacy,
        Some(other) => {
            return Err(Error::config(
                field("innodb_cleaner_lsn_age_factor"),
                format!("'{other}' is not a value: high_checkpoint or legacy"),
            ))
        }
    };
    let buffer_pool_instances = cfg.innodb_buffer_pool_instances.unwrap_or(0);
    if buffer_pool_instances > MAX_BUFFER_POOLS as u64 {
        return Err(Error::config(
            field("innodb_buffer_pool_instances"),
            "must be 0 to 64 (0: the server's default)",
        ));
    }
    Ok(Some(PerconaOptions { empty_free_list_algorithm, cleaner_lsn_age_factor, buffer_pool_instances }))
}

/// The binary log's options (MySQL 5.7's defaults), None with log_bin off.
fn binlog_params(cfg: &InnodbConfig, flush_log: u8) -> Result<Option<BinlogParams>> {
    let field = |f: &str| format!("database.{f}");
    if !cfg.log_bin.unwrap_or(false) {
        for (set, name) in [
            (cfg.sync_binlog.is_some(), "sync_binlog"),
            (cfg.max_binlog_size.is_some(), "max_binlog_size"),
            (cfg.binlog_group_commit_sync_delay.is_some(), "binlog_group_commit_sync_delay"),
            (
                cfg.binlog_group_commit_sync_no_delay_count.is_some(),
                "binlog_group_commit_sync_no_delay_count",
            ),
        ] {
            if set {
                return Err(Error::config(field(name), "applies to the binary log: set log_bin = true"));
            }
        }
        return Ok(None);
    }
    if cfg.server == InnodbServer::Mariadb1011 {
        return Err(Error::config(
            field("log_bin"),
            "MariaDB's binary log (its group commit, GTID and statement events) is not modelled: MySQL 5.7's is",
        ));
    }
    let d = BinlogParams::default();
    let max = cfg.max_binlog_size.unwrap_or(d.max_binlog_size);
    // sys_vars.cc: 4096 to 1 GiB.
    if !(4096..=1 << 30).contains(&max) {
        return Err(Error::config(field("max_binlog_size"), "must be 4096 to 1G (the server's range)"));
    }
    let delay = cfg.binlog_group_commit_sync_delay.unwrap_or(0);
    if delay > 1_000_000 {
        return Err(Error::config(
            field("binlog_group_commit_sync_delay"),
            "must be 0 to 1000000 (microseconds)",
        ));
    }
    let count = cfg.binlog_group_commit_sync_no_delay_count.unwrap_or(0);
    if count > 100_000 {
        return Err(Error::config(field("binlog_group_commit_sync_no_delay_count"), "must be 0 to 100000"));
    }
    Ok(Some(BinlogParams {
        sync_binlog: cfg.sync_binlog.unwrap_or(d.sync_binlog),
        sync_delay_us: delay,
        sync_no_delay_count: count,
        max_binlog_size: max,
        flush_log_at_trx_commit: flush_log,
        ..d
    }))
}

/// The binary log's files the run keeps: file N is slot (N - 1) mod this (a rotated
/// file's place is taken again by a later one, as purge would free it: the new file is
/// created empty there, `FileOp::Create`).
pub const BINLOG_SLOTS: u32 = 4;

/// The database's files as the driver numbers them: the tables first, then the system
/// tablespace (ibdata1), then the redo log files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DbFiles {
    /// Tables (their files are 0..tables).
    pub tables: u32,
    /// Redo log files (ib_logfile0..).
    pub logs: u32,
    /// Binary log file slots (0 without the binary log).
    pub binlogs: u32,
}

impl DbFiles {
    /// The system tablespace's file.
    pub fn system(&self) -> u32 {
        self.tables
    }

    /// Redo log file `n`'s file.
    pub fn log(&self, n: u32) -> u32 {
        self.tables + 1 + n
    }

    /// Binary log file number `n` (1-based, as mysql-bin.00000N)'s file.
    pub fn binlog(&self, n: u32) -> u32 {
        self.tables + 1 + self.logs + n.saturating_sub(1) % self.binlogs.max(1)
    }

    /// Files in all.
    pub fn count(&self) -> u32 {
        self.tables + 1 + self.logs + self.binlogs
    }

    /// The file holding a page of tablespace `space` (the key's space: a table's number,
    /// or [`DbFiles::system`]).
    pub(crate) fn of_space(&self, space: u32) -> u32 {
        space.min(self.tables)
    }
}
