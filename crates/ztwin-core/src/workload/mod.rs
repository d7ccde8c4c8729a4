//! Workloads: sysbench tests and their random distributions, fio jobs, block traces.
pub mod fio;
pub mod rand;
pub mod sysbench;
pub mod trace;
