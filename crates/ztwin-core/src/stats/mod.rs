//! Statistics: latency histograms and per-interval series.
pub mod histogram;
pub mod series;
