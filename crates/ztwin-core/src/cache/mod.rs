//! Cache tiers: the OpenZFS ARC (and later L2ARC, the page cache, bcache), and the
//! reference policies trace replay compares it with: LRU and the textbook ARC.
pub mod arc;
pub mod arc_paper;
pub mod lru;
