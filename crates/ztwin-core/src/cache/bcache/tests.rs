use super::*;
use proptest::prelude::*;

const KIB: u64 = 1024;

fn config() -> BcacheConfig {
    BcacheConfig {
        cache_device: "nvme".into(),
        cache_mode: BcacheCacheMode::Writethrough,
        sequential_cutoff: 4 << 20,
        bucket_size: 512 * KIB,
        cache_replacement_policy: BcacheReplacement::Lru,
        readahead: 0,
        congested_read_threshold_us: 2000,
        congested_write_threshold_us: 20000,
        ..BcacheConfig::with_defaults("")
    }
}

/// A cache of `nbuckets` buckets of 64 KiB indexing 16 KiB units of a 1 GiB backing device.
fn small(c: &mut BcacheConfig, nbuckets: u64) -> Bcache {
    c.bucket_size = 64 * KIB;
    Bcache::new(&BcacheParams {
        config: c,
        cache_capacity: nbuckets * c.bucket_size,
        backing_size: 1 << 30,
        unit: 16 << 10,
        tasks: 4,
        seed: 1,
    })
}

/// Device I/Os as (target, op, bytes); each completes 100 us after `now`.
#[derive(Default)]
struct Ios(Vec<(Target, Op, u32)>);

impl Ios {
    fn at(&mut self, now: Nanos) -> impl FnMut(Target, Op, u32) -> Nanos + '_ {
        move |t, op, b| {
            self.0.push((t, op, b));
            now + 100_000
        }
    }
    fn bytes(&self, target: Target, op: Op) -> u64 {
        self.0.iter().filter(|(t, o, _)| *t == target && *o == op).map(|x| u64::from(x.2)).sum()
    }
}

impl Bcache {
    /// Whether every unit of a range is cached, without touching priorities.
    fn is_cached(&mut self, offset: u64, bytes: u64) -> bool {
        let s = offset >> self.unit_shift;
        (s..s + (bytes >> self.unit_shift)).all(|u| self.lookup(u).is_some())
    }

    /// A read followed by the insert of its miss, as the driver does.
    fn read_insert(&mut self, task: usize, offset: u64, bytes: u32, now: Nanos, ios: &mut Ios) -> ReadResult {
        let r = self.read(task, offset, bytes, now, ios.at(now));
        if let Some((o, b)) = r.insert {
            self.insert(task, o, b, r.done, ios.at(r.done));
        }
        r
    }

    fn valid_units(&mut self) -> u64 {
        (0..self.slots.len() as u64).filter(|&u| self.lookup(u).is_some()).count() as u64
    }
}

/// The per-bucket state stays at 16 bytes (the memory figure in the module docs).
#[test]
fn a_bucket_takes_sixteen_bytes() {
    assert!(std::mem::size_of::<Bucket>() <= 16);
}

/// bcache stores what it reads, byte for byte: the cache device receives exactly the
/// logical bytes inserted (no compression, no rounding beyond the request), and a second
/// read of each page is a hit served by one cache read of the same size.
#[test]
fn cached_data_is_stored_uncompressed() {
    let mut c = config();
    c.sequential_cutoff = 0;
    let mut b = small(&mut c, 1024);
    let mut ios = Ios::default();
    let pages = 500u64;
    for p in 0..pages {
        let r = b.read_insert(0, p * 7 * 16 * KIB, 16 << 10, p * 1000, &mut ios);
        assert_eq!(r.insert, Some((p * 7 * 16 * KIB, 16 << 10)));
    }
    let logical = pages * 16 * KIB;
    assert_eq!(ios.bytes(Target::Cache, Op::Write), logical);
    assert_eq!(b.stats().written, logical);
    assert_eq!(b.stats().size, logical);
    assert_eq!(ios.bytes(Target::Backing, Op::Read), logical);
    let mut again = Ios::default();
    for p in 0..pages {
        let r = b.read_insert(1, p * 7 * 16 * KIB, 16 << 10, 1_000_000_000 + p, &mut again);
        assert_eq!((r.ios, r.insert), (1, None));
    }
    assert_eq!(again.bytes(Target::Cache, Op::Read), logical);
    assert_eq!(again.bytes(Target::Backing, Op::Read), 0);
    let s = b.stats();
    assert_eq!((s.cache_hits, s.cache_misses), (pages, pages));
}

/// LRU replacement evicts the bucket used least recently: fill the cache with one bucket
/// per 64 KiB read, touch the first 100 again, then read new data. Every bucket evicted
/// is untouched, and the untouched ones go oldest first.
#[test]
fn lru_evicts_the_least_recently_used_bucket_first() {
    let mut c = config();
    c.sequential_cutoff = 0;
    let mut b = small(&mut c, 1024);
    let mut ios = Ios::default();
    let bucket = 64 * KIB;
    let mut now = 0;
    let mut step = |b: &mut Bcache, off: u64, ios: &mut Ios| {
        now += 1_000_000;
        b.read_insert(0, off, bucket as u32, now, ios);
    };
    // ~1000 data buckets fit (1024 less superblock, journal, prios and free reserves).
    for k in 0..990 {
        step(&mut b, k * bucket, &mut ios);
    }
    assert_eq!(b.stats().buckets_invalidated, 0);
    assert_eq!(b.stats().size, 990 * bucket);
    for k in 0..100 {
        step(&mut b, k * bucket, &mut ios);
    }
    assert_eq!(b.stats().cache_hits, 100);
    for k in 0..200 {
        step(&mut b, (2000 + k) * bucket, &mut ios);
    }
    assert!(b.stats().buckets_invalidated >= 150, "{:?}", b.stats());
    for k in 0..100 {
        assert!(b.is_cached(k * bucket, bucket), "touched bucket {k} was evicted");
    }
    let evicted: Vec<u64> = (100..990).filter(|&k| !b.is_cached(k * bucket, bucket)).collect();
    assert_eq!(evicted.len() as u64, b.stats().buckets_invalidated);
    // Oldest first: the evicted ones are exactly the oldest untouched ones.
    assert_eq!(evicted, (100..100 + evicted.len() as u64).collect::<Vec<_>>());
}

/// FIFO replacement ignores hits: touched buckets go in device order like the others.
#[test]
fn fifo_evicts_in_bucket_order_regardless_of_hits() {
    let mut c = config();
    c.sequential_cutoff = 0;
    c.cache_replacement_policy = BcacheReplacement::Fifo;
    let mut b = small(&mut c, 1024);
    let mut ios = Ios::default();
    let bucket = 64 * KIB;
    for k in 0..990 {
        b.read_insert(0, k * bucket, bucket as u32, k * 1_000_000, &mut ios);
    }
    for k in 0..100 {
        b.read_insert(0, k * bucket, bucket as u32, 2_000_000_000, &mut ios);
    }
    for k in 0..200 {
        b.read_insert(0, (2000 + k) * bucket, bucket as u32, 3_000_000_000 + k, &mut ios);
    }
    assert!(!b.is_cached(0, bucket), "the first bucket goes first under fifo even when hit");
}

/// A sequential stream is bypassed once it reaches sequential_cutoff (4 MiB): the first
/// 32 reads of 128 KiB are cached, the rest read from the backing device, counted as
/// bypass misses with their bytes in `bypassed`, and not inserted.
#[test]
fn a_sequential_stream_over_the_cutoff_is_bypassed_and_counted() {
    let mut c = config();
    let mut b = small(&mut c, 1024);
    let mut ios = Ios::default();
    let read = 128u64 << 10;
    for k in 0..64 {
        b.read_insert(3, k * read, read as u32, k * 1_000_000, &mut ios);
    }
    let s = b.stats();
    assert_eq!((s.cache_misses, s.cache_bypass_misses), (31, 33));
    assert_eq!(s.bypassed, 33 * read);
    assert_eq!(s.written, 31 * read);
    assert!(b.is_cached(0, 31 * read) && !b.is_cached(31 * read, read));
    // Random 16 KiB reads of another task are cached as usual.
    let r = b.read_insert(1, 900 << 20, 16 << 10, 70_000_000, &mut ios);
    assert!(r.insert.is_some());
    // With sequential_cutoff = 0 nothing is bypassed.
    let mut c0 = config();
    c0.sequential_cutoff = 0;
    let mut b0 = small(&mut c0, 1024);
    for k in 0..64 {
        b0.read_insert(3, k * read, read as u32, k * 1_000_000, &mut ios);
    }
    assert_eq!((b0.stats().cache_misses, b0.stats().bypassed), (64, 0));
}

/// A bypassed read still hits what the cache holds (cache_lookup runs for it).
#[test]
fn bypassed_reads_still_hit_cached_data() {
    let mut c = config();
    c.cache_mode = BcacheCacheMode::None;
    let mut b = small(&mut c, 1024);
    let mut ios = Ios::default();
    let r = b.read_insert(0, 0, 16 << 10, 0, &mut ios);
    assert_eq!(r.insert, None);
    assert_eq!(b.stats().cache_bypass_misses, 1);
    b.mode = BcacheCacheMode::Writethrough;
    b.read_insert(0, 0, 16 << 10, 1, &mut ios);
    b.mode = BcacheCacheMode::None;
    b.read_insert(0, 0, 16 << 10, 2, &mut ios);
    assert_eq!(b.stats().cache_bypass_hits, 1);
}

/// Writethrough writes go to both devices and leave the data cached; writearound writes
/// go to the backing device only and drop the cached copy; writeback writes go to the
/// cache only, dirty.
#[test]
fn write_modes_send_data_where_the_mode_says() {
    let unit = 16u32 << 10;
    for (mode, backing, cache, cached) in [
        (BcacheCacheMode::Writethrough, 1, 1, true),
        (BcacheCacheMode::Writearound, 1, 0, false),
        (BcacheCacheMode::Writeback, 0, 1, true),
        (BcacheCacheMode::None, 1, 0, false),
    ] {
        let mut c = config();
        c.cache_mode = BcacheCacheMode::Writethrough;
        let mut b = small(&mut c, 1024);
        let mut ios = Ios::default();
        b.read_insert(0, 0, unit, 0, &mut ios); // cached before the write
        b.mode = mode;
        let mut w = Ios::default();
        let r = b.write(0, 0, unit, true, 1_000_000, w.at(1_000_000));
        assert_eq!(w.bytes(Target::Backing, Op::Write), backing * u64::from(unit), "{mode:?}");
        assert_eq!(w.bytes(Target::Cache, Op::Write), cache * u64::from(unit), "{mode:?}");
        assert_eq!(r.done, 1_100_000);
        assert_eq!(b.is_cached(0, u64::from(unit)), cached, "{mode:?}");
        let dirty = if mode == BcacheCacheMode::Writeback { u64::from(unit) } else { 0 };
        assert_eq!(b.stats().dirty_data, dirty, "{mode:?}");
        assert_eq!(b.stats().size, if cached { u64::from(unit) } else { 0 }, "{mode:?}");
    }
}

/// A reboot keeps the cache set (and costs a btree walk); a blank device after the VM
/// moved is a new, empty cache set, and dirty data on it is lost.
#[test]
fn restart_keeps_the_cache_unless_the_device_came_back_blank() {
    let mut c = config();
    c.sequential_cutoff = 0;
    let mut b = small(&mut c, 1024);
    let mut ios = Ios::default();
    for p in 0..100 {
        b.read_insert(0, p * (16 << 10), 16 << 10, p, &mut ios);
    }
    let r = b.restart(false);
    assert!(!r.lost);
    assert_eq!(r.btree_read_bytes, b.keys * 24);
    assert!(r.btree_read_bytes > 0);
    assert_eq!(b.stats().cache_misses, 0, "counters start again at boot");
    assert_eq!(b.stats().size, 100 * (16 << 10));
    assert!(b.is_cached(0, 100 * (16 << 10)));
    b.write(0, 200 << 20, 16 << 10, true, 10, ios.at(10));
    b.mode = BcacheCacheMode::Writeback;
    b.write(0, 300 << 20, 16 << 10, true, 10, ios.at(10));
    let r = b.restart(true);
    assert!(r.lost);
    assert_eq!(r.dirty_lost, 16 << 10);
    assert_eq!(b.stats().size, 0);
    assert_eq!(b.valid_units(), 0);
}

/// Readahead extends a miss's backing read and insert, up to the next cached unit.
#[test]
fn readahead_extends_a_miss_up_to_the_next_cached_key() {
    let mut c = config();
    c.sequential_cutoff = 0;
    c.readahead = 128 << 10;
    let mut b = small(&mut c, 1024);
    let mut ios = Ios::default();
    let u = 16u64 << 10;
    b.read_insert(0, 4 * u, u as u32, 0, &mut ios); // caches units 4..12
    assert!(b.is_cached(4 * u, 9 * u));
    let r = b.read_insert(1, 0, u as u32, 1, &mut ios); // stops at unit 4
    assert_eq!(r.insert, Some((0, 4 * u as u32)));
    assert_eq!(b.stats().cache_readaheads, 2);
}

/// Gens wrap at 256; the GC sweep keeps a bucket's gen from running far enough ahead
/// that an old index entry would look valid: after hundreds of passes of distinct data
/// through a small cache, only recently inserted data is cached, and the index agrees
/// with the size.
#[test]
fn many_cache_cycles_never_resurrect_old_data() {
    let mut c = config();
    c.sequential_cutoff = 0;
    let mut b = small(&mut c, 600);
    let mut ios = Ios::default();
    let bucket = 64u64 << 10;
    let capacity_buckets = 600;
    let total = 600 * 300; // each data bucket reused about 300 times
    for k in 0..total {
        b.read_insert(0, (k % 16000) * bucket, bucket as u32, k, &mut ios);
        ios.0.clear();
    }
    // Every insert found a bucket: the GC sweep let buckets be reused past 96 gens.
    assert_eq!(b.stats().written, total * bucket);
    let recent = |k: u64| k + capacity_buckets >= total;
    let cached_units = b.valid_units();
    assert_eq!(cached_units * (16 << 10), b.stats().size);
    for slot in 0..16000u64 {
        // The last insert of this address is old unless it was among the last ones.
        let last = (0..total).rev().find(|k| k % 16000 == slot).unwrap();
        if !recent(last) {
            assert!(!b.is_cached(slot * bucket, bucket), "address {slot} last written at {last}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Under any mix of reads and writes, in every mode and policy: the index, the
    /// buckets' live counts and `size` agree; the cache never holds more than its data
    /// buckets; every read is counted once.
    #[test]
    fn accounting_is_consistent(
        ops in proptest::collection::vec((0u8..4, 0u64..4096, 1u32..9, 0usize..4), 1..400),
        mode in 0u8..4,
        policy in 0u8..3,
        cutoff in prop_oneof![Just(0u64), Just(256u64 << 10)],
    ) {
        let mut c = config();
        c.cache_mode = [BcacheCacheMode::Writethrough, BcacheCacheMode::Writeback,
            BcacheCacheMode::Writearound, BcacheCacheMode::None][mode as usize];
        c.cache_replacement_policy =
            [BcacheReplacement::Lru, BcacheReplacement::Fifo, BcacheReplacement::Random][policy as usize];
        c.sequential_cutoff = cutoff;
        let mut b = small(&mut c, 520);
        let mut ios = Ios::default();
        let mut reads = 0;
        for (k, (op, at, len, task)) in ops.into_iter().enumerate() {
            let (off, bytes) = (at * (16 << 10), len * (16 << 10));
            let now = k as u64 * 1_000_000;
            if op < 3 {
                b.read_insert(task, off, bytes, now, &mut ios);
                reads += 1;
            } else {
                b.write(task, off, bytes, k % 2 == 0, now, ios.at(now));
            }
        }
        let s = b.stats();
        prop_assert_eq!(s.cache_hits + s.cache_misses + s.cache_bypass_hits + s.cache_bypass_misses, reads);
        let live: u64 = b.buckets.iter().map(|x| u64::from(x.live)).sum();
        prop_assert_eq!(live * (16 << 10), s.size);
        prop_assert_eq!(b.valid_units() * (16 << 10), s.size);
        let dirty: u64 = b.buckets.iter().map(|x| u64::from(x.dirty)).sum();
        prop_assert_eq!(dirty * (16 << 10), s.dirty_data);
        prop_assert!(s.size <= (b.nbuckets() - u64::from(b.first_data)) * b.bucket_size());
        prop_assert!(s.written >= s.size);
        prop_assert_eq!(s.written, ios.bytes(Target::Cache, Op::Write));
        prop_assert!(b.in_use() <= 100);
    }
}
