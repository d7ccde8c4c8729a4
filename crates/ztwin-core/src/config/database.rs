//! The database engine above the filesystem: InnoDB, its settings and the server that
//! wrote its pages.

use serde::{Deserialize, Serialize};

/// The database above the filesystem.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum DatabaseConfig {
    /// MySQL / MariaDB InnoDB.
    Innodb(InnodbConfig),
}

/// InnoDB settings (names as in the MySQL manual).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InnodbConfig {
    /// innodb_buffer_pool_size, bytes.
    pub innodb_buffer_pool_size: u64,
    /// innodb_page_size, bytes (16384 default).
    pub innodb_page_size: u32,
    /// innodb_old_blocks_pct (37 default): share of the LRU list for the old sublist.
    pub innodb_old_blocks_pct: u32,
    /// innodb_old_blocks_time, ns (1000 ms default).
    pub innodb_old_blocks_time_ns: u64,
    /// innodb_flush_method: "fsync" (MySQL 5.7's default on Linux), "O_DSYNC", "O_DIRECT"
    /// (MariaDB 10.6+'s default), "O_DIRECT_NO_FSYNC".
    pub innodb_flush_method: String,
    /// innodb_lru_scan_depth (0: the server's default, 1024 in MySQL 5.7, per buffer pool
    /// instance; 1536 in MariaDB 10.11, for the one pool): the free frames the page cleaner
    /// keeps (see `db::innodb::buffer_pool`).
    #[serde(default)]
    pub innodb_lru_scan_depth: u32,
    /// The server that wrote the pages (their bytes: see `db::innodb::page_image`).
    #[serde(default)]
    pub server: InnodbServer,
    /// character_set_server when the tables were created (sysbench names none): it
    /// decides how `CHAR` columns are stored (see `db::innodb::page_image`).
    #[serde(default)]
    pub character_set_server: CharacterSet,
    // The write path's options below: `None` is the server's default, which the model of
    // that server resolves (`db::innodb::writes::WriteParams`), so one default lives in
    // one place.
    /// innodb_flush_log_at_trx_commit: 1 (default), 0 or 2.
    #[serde(default)]
    pub innodb_flush_log_at_trx_commit: Option<u8>,
    /// innodb_doublewrite (default on).
    #[serde(default)]
    pub innodb_doublewrite: Option<bool>,
    /// innodb_io_capacity (default 200).
    #[serde(default)]
    pub innodb_io_capacity: Option<u64>,
    /// innodb_io_capacity_max (default: max(2 x io_capacity, 2000)).
    #[serde(default)]
    pub innodb_io_capacity_max: Option<u64>,
    /// innodb_max_dirty_pages_pct (MySQL 5.7: 75; MariaDB 10.11: 90).
    #[serde(default)]
    pub innodb_max_dirty_pages_pct: Option<f64>,
    /// innodb_max_dirty_pages_pct_lwm (0 in both).
    #[serde(default)]
    pub innodb_max_dirty_pages_pct_lwm: Option<f64>,
    /// innodb_adaptive_flushing (on).
    #[serde(default)]
    pub innodb_adaptive_flushing: Option<bool>,
    /// innodb_adaptive_flushing_lwm (10 %).
    #[serde(default)]
    pub innodb_adaptive_flushing_lwm: Option<u64>,
    /// innodb_flushing_avg_loops (30).
    #[serde(default)]
    pub innodb_flushing_avg_loops: Option<u64>,
    /// innodb_log_file_size, bytes (MySQL 5.7: 48 MiB; MariaDB 10.11: 96 MiB).
    #[serde(default)]
    pub innodb_log_file_size: Option<u64>,
    /// innodb_log_files_in_group (MySQL 5.7: 2; MariaDB 10.5+ has one file).
    #[serde(default)]
    pub innodb_log_files_in_group: Option<u32>,
    /// innodb_flush_neighbors (1).
    #[serde(default)]
    pub innodb_flush_neighbors: Option<u8>,
    /// innodb_change_buffering (MySQL 5.7: all; MariaDB 10.11: none).
    #[serde(default)]
    pub innodb_change_buffering: Option<String>,
    /// innodb_purge_threads (4 in MySQL 5.7, `srv_n_purge_threads`, and MariaDB 10.11;
    /// 1 to 32).
    #[serde(default)]
    pub innodb_purge_threads: Option<u32>,
    /// innodb_purge_batch_size: undo pages per purge batch (MySQL 5.7: 300,
    /// `srv_purge_batch_size`; MariaDB 10.11: 1000 since 10.11.6, MDEV-32050; 1 to 5000).
    #[serde(default)]
    pub innodb_purge_batch_size: Option<u32>,
    /// innodb_max_purge_lag (0: no DML delay; the delay is not modelled, so only 0).
    #[serde(default)]
    pub innodb_max_purge_lag: Option<u64>,
    /// innodb_purge_rseg_truncate_frequency (128, 1 to 128): MySQL 5.7 truncates the
    /// history every Nth purge batch; MariaDB 10.11 ignores it (MDEV-32050: every batch).
    #[serde(default)]
    pub innodb_purge_rseg_truncate_frequency: Option<u32>,
    /// log_bin: the binary log is on (off by default in 5.7 and 10.11).
    #[serde(default)]
    pub log_bin: Option<bool>,
    /// sync_binlog (MySQL 5.7: 1): fsync the binary log every Nth group commit; 0 never.
    #[serde(default)]
    pub sync_binlog: Option<u32>,
    /// max_binlog_size, bytes (1 GiB).
    #[serde(default)]
    pub max_binlog_size: Option<u64>,
    /// binlog_group_commit_sync_delay, microseconds (0).
    #[serde(default)]
    pub binlog_group_commit_sync_delay: Option<u64>,
    /// binlog_group_commit_sync_no_delay_count (0).
    #[serde(default)]
    pub binlog_group_commit_sync_no_delay_count: Option<u64>,
    // Percona Server 5.7's flushing (refused for the other servers).
    /// innodb_empty_free_list_algorithm: "backoff" (Percona Server 5.7's default) or
    /// "legacy" (see `db::innodb::percona_flush`).
    #[serde(default)]
    pub innodb_empty_free_list_algorithm: Option<String>,
    /// innodb_cleaner_lsn_age_factor: "high_checkpoint" (Percona Server 5.7's default) or
    /// "legacy".
    #[serde(default)]
    pub innodb_cleaner_lsn_age_factor: Option<String>,
    /// innodb_buffer_pool_instances (0 or unset: the server's default, 8 from a 1 GiB
    /// pool on, else 1; at most 64).
    #[serde(default)]
    pub innodb_buffer_pool_instances: Option<u64>,
}

impl Default for InnodbConfig {
    /// MySQL 5.7's defaults (a 128 MiB pool of 16 KiB pages, fsync).
    fn default() -> Self {
        InnodbConfig {
            innodb_buffer_pool_size: 128 << 20,
            innodb_page_size: 16384,
            innodb_old_blocks_pct: 37,
            innodb_old_blocks_time_ns: 1_000_000_000,
            innodb_flush_method: "fsync".into(),
            innodb_lru_scan_depth: 0,
            server: InnodbServer::default(),
            character_set_server: CharacterSet::default(),
            innodb_flush_log_at_trx_commit: None,
            innodb_doublewrite: None,
            innodb_io_capacity: None,
            innodb_io_capacity_max: None,
            innodb_max_dirty_pages_pct: None,
            innodb_max_dirty_pages_pct_lwm: None,
            innodb_adaptive_flushing: None,
            innodb_adaptive_flushing_lwm: None,
            innodb_flushing_avg_loops: None,
            innodb_log_file_size: None,
            innodb_log_files_in_group: None,
            innodb_flush_neighbors: None,
            innodb_change_buffering: None,
            innodb_purge_threads: None,
            innodb_purge_batch_size: None,
            innodb_max_purge_lag: None,
            innodb_purge_rseg_truncate_frequency: None,
            log_bin: None,
            sync_binlog: None,
            max_binlog_size: None,
            binlog_group_commit_sync_delay: None,
            binlog_group_commit_sync_no_delay_count: None,
            innodb_empty_free_list_algorithm: None,
            innodb_cleaner_lsn_age_factor: None,
            innodb_buffer_pool_instances: None,
        }
    }
}

/// A server character set, as far as it decides the bytes of a row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CharacterSet {
    /// latin1: the compiled default of MySQL 5.7 and MariaDB 10.11 (one byte per
    /// character, `CHAR(n)` fixed length).
    #[default]
    Latin1,
    /// utf8mb4: MySQL 8.0's default and what Debian's and Ubuntu's MariaDB packages set
    /// (`50-server.cnf`); `CHAR(n)` then has a length byte.
    Utf8mb4,
}

/// The server behind `[database] type = "innodb"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum InnodbServer {
    /// MySQL 5.7.
    #[default]
    #[serde(rename = "mysql-5.7")]
    Mysql57,
    /// MariaDB 10.11.
    #[serde(rename = "mariadb-10.11")]
    Mariadb1011,
    /// Percona Server 5.7: MySQL 5.7's pages, redo log, binary log and doublewrite, with
    /// its own flushing (`db::innodb::percona_flush`: LRU manager threads, backoff waits
    /// for free frames, the high_checkpoint page cleaner, buffer pool instances).
    #[serde(rename = "percona-5.7")]
    Percona57,
}
