//! Generic building blocks the models share, none of them a model: maps keyed by 64-bit
//! ids (a large open-addressing table with slot indices, a small one for in-flight sets)
//! and memory hints and probes (huge pages for large tables, measured memory read costs).
pub(crate) mod key_table;
pub mod mem_hint;
pub mod mem_probe;
pub(crate) mod small_map;

/// Bytes as a scenario writes sizes, in GiB to two decimals ("15.25 GiB"), for messages.
pub fn gib(bytes: u64) -> String {
    format!("{} GiB", (bytes as f64 / (1u64 << 30) as f64 * 100.0).round() / 100.0)
}
