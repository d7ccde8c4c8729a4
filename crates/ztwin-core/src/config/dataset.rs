//! What is stored: sysbench tables as `prepare` leaves them, or plain files.

use serde::{Deserialize, Serialize};

/// `--rand-type` when `sysbench prepare` drew k.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PrepareRandType {
    /// sysbench 1.0.x's default.
    #[default]
    Special,
    /// --rand-type=uniform.
    Uniform,
}

/// The stored data.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum DatasetConfig {
    /// Tables as `sysbench oltp_common prepare` creates them.
    Sysbench(SysbenchDataset),
    /// Plain files, as a fio job file names them; they exist once a fio job lays them out
    /// or writes them.
    Files(FilesDataset),
}

/// Plain files (object numbers 1..=N in the order given).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FilesDataset {
    /// The files.
    pub files: Vec<FileConfig>,
}

/// One plain file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// Path as fio names it (reporting).
    pub name: String,
    /// Size in bytes once laid out.
    pub size: u64,
}

impl SysbenchDataset {
    /// Table `k`'s name (0-based): `sbtest1` to `sbtestN`, as oltp_common.lua names them.
    pub fn table_name(k: usize) -> String {
        format!("sbtest{}", k + 1)
    }
}

/// sysbench tables: sbtest1..N with `table_size` rows each.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SysbenchDataset {
    /// --tables
    pub tables: u32,
    /// --table-size (rows per table)
    pub table_size: u64,
    /// Mean ratio (uncompressed / compressed) the dataset's compression achieves on this
    /// data, per block, before rounding to sectors: for data other than sysbench's (a
    /// measured `zfs get compressratio`). None: the pages are generated as prepare leaves
    /// them and each record's stored size follows from its bytes
    /// (`db::innodb::ibd_records`).
    #[serde(default)]
    pub compress_ratio: Option<f64>,
    /// --rand-type of the prepare (k's distribution in the rows).
    #[serde(default)]
    pub prepare_rand_type: PrepareRandType,
}
