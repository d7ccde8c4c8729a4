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

/// The kernel whose bcache the run models, where releases differ (the feature table of
/// `cache::bcache::writeback`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum BcacheKernel {
    /// Ubuntu 18.04's 4.15 (the bionic tree): writeback writes issued as their reads
    /// complete; the idle fast path of later bionic updates included.
    #[default]
    #[serde(rename = "4.15")]
    V4_15,
    /// A 2021 5.x kernel (Debian 11's 5.10, Ubuntu 21.04's 5.11): writeback writes to the
    /// backing device in key order (`writeback_sequence_next`), the idle fast path.
    #[serde(rename = "5.10")]
    V5_10,
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
    /// writeback_percent: the writeback rate controller aims at this share of the cache
    /// dirty; 0 = write back at full speed (no rate). Default 10, at most 40
    /// (writeback.c `bch_cached_dev_writeback_init()`; sysfs.c clamps to 0..40).
    #[serde(default = "default_writeback_percent")]
    pub writeback_percent: u32,
    /// writeback_delay, seconds: the writeback thread sleeps this long after a pass that
    /// scanned the whole index. Default 30 (`bch_cached_dev_writeback_init()`).
    #[serde(default = "default_writeback_delay")]
    pub writeback_delay: u32,
    /// writeback_running: false stops the writeback thread (dirty data stays). Default true.
    #[serde(default = "default_true")]
    pub writeback_running: bool,
    /// writeback_rate_update_seconds: period of the rate controller. Default 5, 1..60
    /// (writeback.h `WRITEBACK_RATE_UPDATE_SECS_DEFAULT`, `_MAX`).
    #[serde(default = "default_update_seconds")]
    pub writeback_rate_update_seconds: u32,
    /// writeback_rate_p_term_inverse: the proportional term writes the error (dirty data
    /// above the target) back in this many seconds. Default 40
    /// (`bch_cached_dev_writeback_init()`).
    #[serde(default = "default_p_term_inverse")]
    pub writeback_rate_p_term_inverse: u32,
    /// writeback_rate_i_term_inverse: the integral term adds 1/this of the accumulated
    /// error per second. Default 10000 (`bch_cached_dev_writeback_init()`).
    #[serde(default = "default_i_term_inverse")]
    pub writeback_rate_i_term_inverse: u32,
    /// writeback_rate_minimum, sectors per second: the controller's floor. Default 8
    /// (`bch_cached_dev_writeback_init()`).
    #[serde(default = "default_rate_minimum")]
    pub writeback_rate_minimum: u32,
    /// The kernel's bcache ("4.15" or "5.10"; default "4.15", Ubuntu 18.04).
    #[serde(default)]
    pub kernel: BcacheKernel,
}

impl BcacheConfig {
    /// make-bcache's and the kernel's defaults on cache device `cache_device`.
    pub fn with_defaults(cache_device: impl Into<String>) -> Self {
        BcacheConfig {
            cache_device: cache_device.into(),
            cache_mode: BcacheCacheMode::Writethrough,
            sequential_cutoff: 4 << 20,
            bucket_size: 512 << 10,
            cache_replacement_policy: BcacheReplacement::Lru,
            readahead: 0,
            congested_read_threshold_us: 2000,
            congested_write_threshold_us: 20000,
            writeback_percent: default_writeback_percent(),
            writeback_delay: default_writeback_delay(),
            writeback_running: true,
            writeback_rate_update_seconds: default_update_seconds(),
            writeback_rate_p_term_inverse: default_p_term_inverse(),
            writeback_rate_i_term_inverse: default_i_term_inverse(),
            writeback_rate_minimum: default_rate_minimum(),
            kernel: BcacheKernel::V4_15,
        }
    }
}

fn default_writeback_percent() -> u32 {
    10
}
fn default_writeback_delay() -> u32 {
    30
}
fn default_true() -> bool {
    true
}
fn default_update_seconds() -> u32 {
    5
}
fn default_p_term_inverse() -> u32 {
    40
}
fn default_i_term_inverse() -> u32 {
    10000
}
fn default_rate_minimum() -> u32 {
    8
}
