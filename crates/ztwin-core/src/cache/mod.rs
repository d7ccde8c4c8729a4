//! Cache tiers: the OpenZFS ARC and its L2ARC, Linux's bcache (a block-layer cache under
//! XFS/ext4), and the reference policies trace replay compares them with: LRU and the
//! textbook ARC.
pub mod arc;
pub mod arc_paper;
pub mod bcache;
pub mod l2arc;
pub mod lru;
