//! Azure host caching ReadOnly: a read cache on the host in front of a VM's Premium SSDs.
//!
//! Mechanism. A VM size has one host cache ("BlobCache": the host's RAM and local SSD) of
//! the size its table gives ("cache size in GiB": 50 GiB for D2ds_v4 and E2ds_v4), used
//! by its data disks with host caching ReadOnly. A read whose every byte is in the cache
//! is served by the host: it does not count against the disk's limits nor the VM's
//! uncached disk limits, but against the VM's "max cached and temp storage throughput"
//! (shared with the temporary disk: one throttle both pass, `io_limit`), with the service
//! time of the host's local storage. Any other read goes the uncached way (the disk's
//! throttle, with its burst credits, the VM's uncached limit, the disk's service time) and
//! its data enters the cache. A write always goes the uncached way ("Writes initiated by
//! a cached managed disk always follow the path of a cached-miss") and its data enters the
//! cache too (write-through). The guest sees one disk either way: its counters (iostat)
//! count every request.
//!
//! Sources (Microsoft docs; see docs/research/azure-facts.md): premium-storage-performance.md
//! (host caching None / ReadOnly / ReadWrite; ReadOnly reads served from the cache "do not
//! count" toward the disk's and the VM's uncached limits; caching not supported on disks
//! of 4 TiB and more); managed-disks-overview.md, "Disk allocation and performance" (the
//! cached path and the uncached path, writes on the cache-miss path); ddv4-ddsv4-series.md
//! and edv4-edsv4-series.md of 2020 (cache size, the cached and temp storage limit);
//! the disk benchmarking include's "Warm up the Cache" (MicrosoftDocs/azure-docs includes,
//! ms.date 01/29/2021): "You must warm up the cache before running benchmarks every time VM is rebooted": a
//! restart empties the cache ([`HostCache::clear`]).
//!
//! Simplifications (Azure publishes neither the cache's structure nor its policy):
//! 1. the cache is an LRU list of 256 KiB extents (the size Azure counts one I/O up to),
//!    each with a bitmap of the 512-byte sectors it holds; a read hits when every sector
//!    it touches is held, else it is a miss as a whole (a partial hit reads everything
//!    from the disk); eviction takes a whole extent; 2. a miss's data and a write's data
//!    enter the cache at submission (INFERRED: write-through populates the cache); 3. the
//!    cache's capacity counts whole extents, not the sectors held; 4. the host's local
//!    storage serves hits like a device (latency, transfer rate, parallel slots), its
//!    figures the temporary disk preset's (INFERRED: the same local SSD); 5. the cache is
//!    per VM and shared by its cached disks, but the OS disk (ReadWrite by default) is not
//!    modelled and takes none of it.

use std::cell::RefCell;
use std::rc::Rc;

use super::device::{Device, Op};
use crate::cache::lru::Lru;
use crate::config::{DeviceConfig, HostCacheConfig};
use crate::sim::time::Nanos;

/// Bytes per extent: 256 KiB.
pub const EXTENT_SHIFT: u32 = 18;
/// Bytes per sector of an extent's bitmap.
const SECTOR_SHIFT: u32 = 9;
/// Words of an extent's bitmap (512 sectors).
const WORDS: usize = 1 << (EXTENT_SHIFT - SECTOR_SHIFT - 6);
/// Bits of the key that hold the extent number (the rest: the device).
const DEVICE_SHIFT: u32 = 40;
/// The most extents a cache may have (the core's checks bound its size by it): 4 TiB.
pub const MAX_EXTENTS: u64 = 1 << 24;

/// What the host cache did, per disk.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HostCacheCounters {
    /// Reads served by the host cache.
    pub read_hits: u64,
    /// Bytes of those reads.
    pub read_hit_bytes: u64,
    /// Reads that went to the disk.
    pub read_misses: u64,
}

/// The host cache of a VM.
pub struct HostCache {
    extents: Lru,
    /// Sectors held, per slot of `extents`.
    bits: Vec<[u64; WORDS]>,
    /// The host's local storage that serves hits (its throttle: the cached and temp limit).
    medium: Device,
}

impl std::fmt::Debug for HostCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostCache").field("extents", &self.extents.len()).finish()
    }
}

/// Sector bitmap words and masks of the part of [start, end) (bytes) inside the extent at
/// `base`, rounded out to sectors: calls `f(word, mask)`.
fn sectors(base: u64, start: u64, end: u64, mut f: impl FnMut(usize, u64)) {
    let lo = (start.max(base) - base) >> SECTOR_SHIFT;
    let hi = ((end.min(base + (1 << EXTENT_SHIFT)) - base) + (1 << SECTOR_SHIFT) - 1) >> SECTOR_SHIFT;
    let mut s = lo;
    while s < hi {
        let w = (s >> 6) as usize;
        let top = ((s | 63) + 1).min(hi);
        let n = top - s;
        let mask = if n == 64 { u64::MAX } else { ((1u64 << n) - 1) << (s & 63) };
        f(w, mask);
        s = top;
    }
}

impl HostCache {
    /// A cache of `cfg.cache_bytes` (at least one extent, at most [`MAX_EXTENTS`]), its
    /// hits served by `medium` (with the cached and temp limit attached by the caller).
    pub fn new(cfg: &HostCacheConfig, seed: u64) -> HostCache {
        let n = (cfg.cache_bytes >> EXTENT_SHIFT).clamp(1, MAX_EXTENTS);
        let medium = Device::new(
            &DeviceConfig {
                name: "host-cache".into(),
                kind: "host-cache".into(),
                iops_limit: None,
                throughput_limit_bytes_per_sec: None,
                read_latency_ns: cfg.read_latency_ns,
                write_latency_ns: cfg.read_latency_ns,
                latency_sigma: cfg.latency_sigma,
                transfer_bytes_per_sec: cfg.transfer_bytes_per_sec,
                parallelism: cfg.parallelism,
                capacity_bytes: Some(cfg.cache_bytes),
                ephemeral: true,
                rotational: None,
                flush_latency_ns: 0,
                queue_rotational: None,
                iops_size_bytes: None,
                burst: None,
                io_limit: None,
                host_cache: false,
            },
            seed,
        );
        HostCache { extents: Lru::new(n), bits: Vec::new(), medium }
    }

    /// The device that serves hits (to attach the cached and temp limit to).
    pub fn medium_mut(&mut self) -> &mut Device {
        &mut self.medium
    }

    fn key(device: u32, extent: u64) -> u64 {
        (u64::from(device) << DEVICE_SHIFT) | extent
    }

    /// Whether every byte of [offset, offset + bytes) of `device` is held; a hit's
    /// extents become the most recently used.
    fn holds(&mut self, device: u32, offset: u64, bytes: u32) -> bool {
        if bytes == 0 {
            return false;
        }
        let end = offset + u64::from(bytes);
        for e in offset >> EXTENT_SHIFT..=(end - 1) >> EXTENT_SHIFT {
            let Some(slot) = self.extents.touch(Self::key(device, e)) else { return false };
            let held = &self.bits[slot as usize];
            let mut all = true;
            sectors(e << EXTENT_SHIFT, offset, end, |w, m| all &= held[w] & m == m);
            if !all {
                return false;
            }
        }
        true
    }

    /// Puts [offset, offset + bytes) of `device` in the cache.
    fn fill(&mut self, device: u32, offset: u64, bytes: u32) {
        let end = offset + u64::from(bytes);
        if bytes == 0 {
            return;
        }
        for e in offset >> EXTENT_SHIFT..=(end - 1) >> EXTENT_SHIFT {
            let k = Self::key(device, e);
            let slot = match self.extents.touch(k) {
                Some(s) => s as usize,
                None => {
                    let s = self.extents.insert(k) as usize;
                    if s == self.bits.len() {
                        self.bits.push([0; WORDS]);
                    } else {
                        self.bits[s] = [0; WORDS];
                    }
                    s
                }
            };
            let held = &mut self.bits[slot];
            sectors(e << EXTENT_SHIFT, offset, end, |w, m| held[w] |= m);
        }
    }

    /// Empties the cache (the VM restarted).
    pub fn clear(&mut self) {
        self.extents = Lru::new(self.extents_capacity());
        self.bits.clear();
    }

    fn extents_capacity(&self) -> u64 {
        // The capacity the cache was built with (`Lru` keeps it).
        self.extents.capacity()
    }

    /// Extents cached.
    pub fn extents(&self) -> usize {
        self.extents.len()
    }

    /// Bytes held by the cache's structures.
    pub fn heap_bytes(&self) -> usize {
        self.extents.heap_bytes() + self.bits.capacity() * std::mem::size_of::<[u64; WORDS]>()
    }
}

/// A disk's way into its VM's host cache.
#[derive(Debug, Clone)]
pub struct CachePort {
    cache: Rc<RefCell<HostCache>>,
    device: u32,
    counters: HostCacheCounters,
}

impl CachePort {
    /// The port of disk number `device` (any number unique among the VM's disks).
    pub fn new(cache: Rc<RefCell<HostCache>>, device: u32) -> CachePort {
        CachePort { cache, device, counters: HostCacheCounters::default() }
    }

    /// A read at `now`: its completion if the cache holds it (served by the host), None if
    /// it must go to the disk (its data is then put in the cache).
    pub fn read(&mut self, now: Nanos, offset: u64, bytes: u32) -> Option<Nanos> {
        let mut c = self.cache.borrow_mut();
        if c.holds(self.device, offset, bytes) {
            self.counters.read_hits += 1;
            self.counters.read_hit_bytes += u64::from(bytes);
            return Some(c.medium.submit(now, Op::Read, bytes));
        }
        self.counters.read_misses += 1;
        c.fill(self.device, offset, bytes);
        None
    }

    /// A write (to the disk, write-through): its data enters the cache.
    pub fn write(&mut self, offset: u64, bytes: u32) {
        self.cache.borrow_mut().fill(self.device, offset, bytes);
    }

    /// What the cache did for this disk.
    pub fn counters(&self) -> HostCacheCounters {
        self.counters
    }

    /// The cache this port leads to.
    pub fn cache(&self) -> &Rc<RefCell<HostCache>> {
        &self.cache
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::US;

    fn cfg(bytes: u64) -> HostCacheConfig {
        HostCacheConfig {
            cache_bytes: bytes,
            io_limit: None,
            read_latency_ns: 150 * US,
            latency_sigma: 0.0,
            transfer_bytes_per_sec: 1e15,
            parallelism: 32,
        }
    }

    #[test]
    fn a_read_hits_only_what_was_read_or_written_before() {
        let c = Rc::new(RefCell::new(HostCache::new(&cfg(1 << 30), 1)));
        let mut p = CachePort::new(Rc::clone(&c), 0);
        let mut q = CachePort::new(Rc::clone(&c), 1);
        assert_eq!(p.read(0, 16384, 16384), None, "cold");
        assert_eq!(p.read(10, 16384, 16384), Some(10 + 150 * US));
        assert_eq!(p.read(10, 16384, 8192), Some(10 + 150 * US), "inside what was read");
        assert_eq!(p.read(20, 16384 + 8192, 16384), None, "half outside: a miss");
        assert_eq!(q.read(30, 16384, 16384), None, "another disk's same offset");
        q.write(1 << 20, 4096);
        assert!(q.read(40, 1 << 20, 4096).is_some(), "a write fills the cache");
        // Across an extent boundary.
        let b = 1u64 << EXTENT_SHIFT;
        assert_eq!(p.read(50, b - 4096, 8192), None);
        assert!(p.read(60, b - 4096, 8192).is_some());
        assert_eq!(p.counters().read_hits, 3);
        assert_eq!(p.counters().read_misses, 3);
        c.borrow_mut().clear();
        assert_eq!(p.read(70, 16384, 16384), None, "a restart empties it");
    }

    /// Least recently used extents go first: a cache of 4 extents keeps the last 4.
    #[test]
    fn extents_are_evicted_least_recently_used_first() {
        let c = Rc::new(RefCell::new(HostCache::new(&cfg(4 << EXTENT_SHIFT), 1)));
        let mut p = CachePort::new(c, 0);
        for e in 0..4u64 {
            p.read(0, e << EXTENT_SHIFT, 4096);
        }
        assert!(p.read(0, 0, 4096).is_some(), "extent 0 is now the most recent");
        p.read(0, 4 << EXTENT_SHIFT, 4096); // evicts extent 1
        assert!(p.read(0, 1 << EXTENT_SHIFT, 4096).is_none());
        // That miss evicted extent 2 (the oldest then).
        assert!(p.read(0, 2 << EXTENT_SHIFT, 4096).is_none());
        assert!(p.read(0, 0, 4096).is_some());
    }

    #[test]
    fn sector_masks_cover_the_range_rounded_out() {
        let mut got = Vec::new();
        sectors(0, 512 * 63, 512 * 130 + 1, |w, m| got.push((w, m)));
        assert_eq!(got, vec![(0, 1 << 63), (1, u64::MAX), (2, 0b111)]);
        let mut got = Vec::new();
        sectors(1 << EXTENT_SHIFT, 0, 4 << EXTENT_SHIFT, |w, m| got.push((w, m)));
        assert_eq!(got.len(), WORDS);
        assert!(got.iter().all(|&(_, m)| m == u64::MAX));
    }
}
