//! bcache between an extent filesystem and its backing device: the cache set, its mode,
//! replacement policy and bypass thresholds.

use serde::{Deserialize, Serialize};

/// bcache's `cache_mode` (sysfs of the backing device; `CACHE_MODE_*` in bcache.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BcacheCacheMode {
    /// Writes go to the backing device and the cache; reads are cached (the default:
    /// make-bcache without --writeback).
    Writethrough,
    /// Writes go to the cache only (dirty), written back later.
    Writeback,
    /// Writes go to the backing device only and drop cached copies; reads are cached.
    Writearound,
    /// Nothing new is cached; reads still hit what the cache holds.
    None,
}

/// `cache_replacement_policy` of the cache device (`CACHE_REPLACEMENT_*`, alloc.c
/// `invalidate_buckets_lru/fifo/random()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BcacheReplacement {
    /// Least recently used bucket first (bucket `prio`); make-bcache's default.
    Lru,
    /// Buckets in device order.
    Fifo,
    /// Random buckets.
    Random,
}

/// A bcache cache set of one cache device with one backing device attached. Names and
/// defaults as in the kernel's Documentation/admin-guide/bcache.rst and bcache-tools'
/// make-bcache; the model is `cache::bcache`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BcacheConfig {
    /// The cache device (a name of the scenario's devices; needs a size).
    pub cache_device: String,
    /// cache_mode: writethrough (default), writeback, writearound, none.
    pub cache_mode: BcacheCacheMode,
    /// sequential_cutoff, bytes: a task's sequential I/O bypasses the cache once its
    /// stream (or the running average of its streams) reaches this; 0 = never.
    /// Default 4 MiB (super.c `cached_dev_init()`: `dc->sequential_cutoff = 4 << 20`).
    pub sequential_cutoff: u64,
    /// Bucket size, bytes: the cache device's allocation and eviction unit. make-bcache
    /// --bucket, default 1024 sectors = 512 KiB.
    pub bucket_size: u64,
    /// cache_replacement_policy: lru (make-bcache default), fifo, random.
    pub cache_replacement_policy: BcacheReplacement,
    /// readahead, bytes: a cache miss also reads and caches up to this much beyond the
    /// request (`cached_dev_cache_miss()`, kernels up to 5.x); default 0.
    pub readahead: u64,
    /// congested_read_threshold_us: cache reads slower than this make bcache bypass the
    /// cache for sequential-ish I/O (`bch_get_congested()`); default 2000, 0 = off.
    pub congested_read_threshold_us: u64,
    /// congested_write_threshold_us: the same for cache writes; default 20000, 0 = off.
    pub congested_write_threshold_us: u64,
}
