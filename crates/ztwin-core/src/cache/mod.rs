//! Cache tiers: the OpenZFS ARC and its L2ARC (later the page cache, bcache), and the
//! reference policies trace replay compares it with: LRU and the textbook ARC.
pub mod arc;
pub mod arc_paper;
pub mod l2arc;
pub mod lru;
