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
    /// innodb_flush_method ("O_DIRECT" or "fsync").
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
    /// MySQL 5.7 (and Percona Server 5.7).
    #[default]
    #[serde(rename = "mysql-5.7")]
    Mysql57,
    /// MariaDB 10.11.
    #[serde(rename = "mariadb-10.11")]
    Mariadb1011,
}
