//! Cache tiers: the OpenZFS ARC and its L2ARC (later the page cache, bcache).
pub mod arc;
pub mod l2arc;
