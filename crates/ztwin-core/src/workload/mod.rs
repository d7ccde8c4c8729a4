//! Workloads: sysbench tests and their random distributions.
pub mod rand;
pub mod sysbench;
pub mod trace;
