//! Cache tiers: the OpenZFS ARC (and later L2ARC, the page cache, bcache).
pub mod arc;
