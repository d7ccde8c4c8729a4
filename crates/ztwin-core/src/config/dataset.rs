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
    /// The nine tables of Percona-Lab/sysbench-tpcc per table set, as its `prepare`
    /// leaves them (`crate::db::innodb::tpcc_schema`).
    Tpcc(TpccDataset),
}

/// sysbench-tpcc's tables: `--tables` sets of warehouse, district, customer, history,
/// orders, new_orders, order_line, stock and item, each set holding `--scale` warehouses
/// (tpcc_common.lua `create_tables`, `load_tables`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TpccDataset {
    /// --scale: warehouses in every table set (tpcc_common.lua default 100).
    pub scale: u32,
    /// --tables: table sets (default 1); a transaction picks one uniformly.
    pub tables: u32,
    /// Mean ratio (uncompressed / compressed) of the data under the dataset's compression.
    /// The loader's strings repeat one random letter (`string.rep(sysbench.rand.string("@"),
    /// n)`), so the data compresses well; the pages are not generated, so give the ratio
    /// measured (`zfs get compressratio`) or assumed.
    pub compress_ratio: f64,
    /// Orders per district the growing tables' files are sized for, the 3000 loaded ones
    /// included (default 6000): the run's inserts land in space laid out for them
    /// (`tpcc_schema`, simplification 2); past it they reuse that space from its start.
    #[serde(default = "default_order_capacity")]
    pub order_capacity: u32,
}

fn default_order_capacity() -> u32 {
    6000
}

impl TpccDataset {
    /// Tables in all (nine per set).
    pub fn table_count(&self) -> u32 {
        self.tables.saturating_mul(9)
    }
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
