//! `check_should_bypass()` (request.c): the per-task sequential-I/O detector and the
//! congestion estimate that decide whether a request skips the cache.
//!
//! Sequential detection: the cached device keeps the last `RECENT_IO` = 128 requests
//! (`struct io`: the sector where each ended, the bytes of its stream so far, an expiry 5 s
//! after its last use) on an LRU list and in a hash of their end sector. A request that
//! starts where a live entry ended continues that stream; any other request takes the LRU
//! entry, folds the task's finished stream into the task's running average
//! (`add_sequential()`: `ewma_add(sequential_io_avg, sequential_io, 8, 0)`) and starts a
//! new stream at 0. The task's `sequential_io` becomes the stream's bytes, and the request
//! bypasses when `max(sequential_io, sequential_io_avg) >= sequential_cutoff`.
//!
//! Congestion (`bch_get_congested()`, io.c `bch_bbio_count_io_errors()`): each cache-device
//! I/O slower than its threshold subtracts its latency in ~ms from `congested` (at most
//! down to -`CONGESTED_MAX`) and stamps `congested_last_us`; a faster one adds 1 back while
//! negative. While `congested` plus the ~ms since the stamp is negative, requests of a
//! stream of at least `2^((congested + CONGESTED_MAX) / 64)` sectors (less a binomial(32,
//! 1/2) draw) bypass.

use rand::Rng;
use rand_pcg::Pcg64Mcg;

use crate::sim::time::Nanos;

/// RECENT_IO (bcache.h: `1 << RECENT_IO_BITS`, RECENT_IO_BITS = 7).
pub const RECENT_IO: usize = 128;
const RECENT_IO_BITS: u32 = 7;
/// A stream entry expires 5 s after its last request (`msecs_to_jiffies(5000)`).
const RECENT_IO_LIFETIME: Nanos = 5_000_000_000;
/// CONGESTED_MAX (bcache.h).
const CONGESTED_MAX: i64 = 1024;
/// GOLDEN_RATIO_64 of `hash_64()` (include/linux/hash.h).
const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;
const NIL: u8 = u8::MAX;

/// One `struct io`.
#[derive(Debug, Clone, Copy)]
struct RecentIo {
    /// Sector where the stream's last request ended (`i->last`).
    last: u64,
    /// Bytes of the stream (`unsigned sequential`; saturates instead of wrapping).
    sequential: u32,
    /// `i->jiffies`: the entry counts until this time.
    expires: Nanos,
    /// Hash chain (`io_hash`), LRU list (`io_lru`).
    hash: u8,
    next_hash: u8,
    lru_prev: u8,
    lru_next: u8,
}

/// A task's `sequential_io` and `sequential_io_avg` (`struct task_struct`, both unsigned int).
#[derive(Debug, Clone, Copy, Default)]
struct TaskSeq {
    sequential_io: u32,
    sequential_io_avg: u32,
}

/// The recent-I/O table of the cached device and the tasks' stream state.
#[derive(Debug, Clone)]
pub struct SeqDetector {
    io: [RecentIo; RECENT_IO],
    /// `io_hash[RECENT_IO + 1]`: chain heads; the last one holds the entries never used.
    heads: [u8; RECENT_IO + 1],
    lru_head: u8,
    lru_tail: u8,
    tasks: Vec<TaskSeq>,
}

fn hash_64(k: u64) -> usize {
    (k.wrapping_mul(GOLDEN_RATIO_64) >> (64 - RECENT_IO_BITS)) as usize
}

impl SeqDetector {
    /// A fresh table (`cached_dev_init()`) for `tasks` tasks.
    pub fn new(tasks: usize) -> Self {
        let mut s = SeqDetector {
            io: [RecentIo {
                last: 0,
                sequential: 0,
                expires: 0,
                hash: RECENT_IO as u8,
                next_hash: NIL,
                lru_prev: NIL,
                lru_next: NIL,
            }; RECENT_IO],
            heads: [NIL; RECENT_IO + 1],
            lru_head: NIL,
            lru_tail: NIL,
            tasks: vec![TaskSeq::default(); tasks],
        };
        s.reset();
        s
    }

    /// Back to the state after boot (the table is in memory only).
    pub fn reset(&mut self) {
        self.heads = [NIL; RECENT_IO + 1];
        for k in 0..RECENT_IO {
            let e = &mut self.io[k];
            *e = RecentIo {
                last: 0,
                sequential: 0,
                expires: 0,
                hash: RECENT_IO as u8,
                next_hash: self.heads[RECENT_IO],
                lru_prev: if k == 0 { NIL } else { k as u8 - 1 },
                lru_next: if k + 1 == RECENT_IO { NIL } else { k as u8 + 1 },
            };
            self.heads[RECENT_IO] = k as u8;
        }
        self.lru_head = 0;
        self.lru_tail = RECENT_IO as u8 - 1;
        self.tasks.fill(TaskSeq::default());
    }

    /// Tracks a request of `bytes` at `sector` by `task` and returns
    /// `max(sequential_io, sequential_io_avg)` of the task afterwards, in bytes.
    pub fn track(&mut self, task: usize, sector: u64, bytes: u32, now: Nanos) -> u32 {
        let h = hash_64(sector);
        let mut k = self.heads[h];
        while k != NIL && !(self.io[k as usize].last == sector && now < self.io[k as usize].expires) {
            k = self.io[k as usize].next_hash;
        }
        let k = if k == NIL {
            // A new stream: take the least recently used entry.
            let k = self.lru_head;
            let t = &mut self.tasks[task];
            // ewma_add(avg, val, 8, 0) in unsigned int arithmetic, as the kernel does.
            t.sequential_io_avg = t.sequential_io_avg.wrapping_mul(7).wrapping_add(t.sequential_io) / 8;
            t.sequential_io = 0;
            self.io[k as usize].sequential = 0;
            k
        } else {
            k
        };
        let e = &mut self.io[k as usize];
        e.sequential = e.sequential.saturating_add(bytes);
        e.last = sector + u64::from(bytes >> 9);
        e.expires = now + RECENT_IO_LIFETIME;
        let seq = e.sequential;
        self.tasks[task].sequential_io = seq;
        self.rehash(k, hash_64(self.io[k as usize].last));
        self.lru_move_tail(k);
        let t = self.tasks[task];
        t.sequential_io.max(t.sequential_io_avg)
    }

    fn rehash(&mut self, k: u8, h: usize) {
        // hlist_del: unlink from its chain.
        let old = self.io[k as usize].hash as usize;
        if self.heads[old] == k {
            self.heads[old] = self.io[k as usize].next_hash;
        } else {
            let mut p = self.heads[old];
            while self.io[p as usize].next_hash != k {
                p = self.io[p as usize].next_hash;
            }
            self.io[p as usize].next_hash = self.io[k as usize].next_hash;
        }
        // hlist_add_head.
        self.io[k as usize].hash = h as u8;
        self.io[k as usize].next_hash = self.heads[h];
        self.heads[h] = k;
    }

    fn lru_move_tail(&mut self, k: u8) {
        if self.lru_tail == k {
            return;
        }
        let RecentIo { lru_prev: p, lru_next: n, .. } = self.io[k as usize];
        if p == NIL {
            self.lru_head = n;
        } else {
            self.io[p as usize].lru_next = n;
        }
        self.io[n as usize].lru_prev = p;
        self.io[k as usize].lru_prev = self.lru_tail;
        self.io[k as usize].lru_next = NIL;
        self.io[self.lru_tail as usize].lru_next = k;
        self.lru_tail = k;
    }
}

/// The cache set's congestion state.
#[derive(Debug, Clone)]
pub struct Congestion {
    read_threshold_us: u64,
    write_threshold_us: u64,
    /// `c->congested`: <= 0.
    congested: i64,
    /// `c->congested_last_us`.
    last_us: u64,
    rng: Pcg64Mcg,
}

impl Congestion {
    /// Thresholds in microseconds (0 = off); `seed` drives `get_random_u32()`.
    pub fn new(read_threshold_us: u64, write_threshold_us: u64, seed: u64) -> Self {
        Congestion {
            read_threshold_us,
            write_threshold_us,
            congested: 0,
            last_us: 0,
            rng: rand::SeedableRng::seed_from_u64(seed),
        }
    }

    /// After boot.
    pub fn reset(&mut self) {
        self.congested = 0;
        self.last_us = 0;
    }

    /// `bch_get_congested()`: 0 when not congested, else the stream size in sectors from
    /// which requests bypass.
    pub fn get(&mut self, now: Nanos) -> u32 {
        if self.read_threshold_us == 0 && self.write_threshold_us == 0 {
            return 0;
        }
        let now_us = now / 1000;
        // The stamp can lie ahead of `now` (see `account`): nothing is known yet then.
        if now_us < self.last_us {
            return 0;
        }
        let mut i = ((now_us - self.last_us) / 1024) as i64 + self.congested;
        if i >= 0 {
            return 0;
        }
        i += CONGESTED_MAX;
        if i > 0 {
            i = fract_exp_two(i as u32, 6) as i64;
        }
        i -= i64::from(self.rng.random::<u32>().count_ones());
        i.max(1) as u32
    }

    /// A cache-device I/O submitted at `submit` completes at `done`. Applied at
    /// submission: the completion time is known then, and `get` ignores the stamp until
    /// `done` has passed.
    pub fn account(&mut self, write: bool, submit: Nanos, done: Nanos) {
        let threshold = if write { self.write_threshold_us } else { self.read_threshold_us };
        if threshold == 0 {
            return;
        }
        let us = (done - submit) / 1000;
        if us > threshold {
            let ms = (us / 1024) as i64;
            self.last_us = done / 1000;
            self.congested -= ms.min(CONGESTED_MAX + self.congested);
        } else if self.congested < 0 {
            self.congested += 1;
        }
    }
}

/// fract_exp_two() (util.h): about 2^(x / 2^fract_bits).
fn fract_exp_two(x: u32, fract_bits: u32) -> u32 {
    let fract = x & !(!0u32 << fract_bits);
    let x = 1u32 << (x >> fract_bits);
    x + ((x * fract) >> fract_bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 4 MiB cutoff is crossed by the 33rd 128 KiB read of one stream, and a task whose
    /// average stream is long keeps bypassing when it seeks (the task average).
    #[test]
    fn a_stream_grows_until_it_crosses_the_cutoff() {
        let mut s = SeqDetector::new(2);
        let mut sector = 1000;
        let mut seen = Vec::new();
        for k in 0..40 {
            seen.push(s.track(0, sector, 128 << 10, k * 1_000_000));
            sector += 256;
        }
        assert_eq!(seen[0], 128 << 10);
        assert_eq!(seen[31], 4 << 20);
        assert!(seen.iter().zip(seen.iter().skip(1)).all(|(a, b)| b >= a));
        // A seek starts a new stream; the finished 5 MiB one is folded into the average.
        let after_seek = s.track(0, 10_000_000, 16 << 10, 50_000_000);
        assert_eq!(after_seek, (5 << 20) / 8);
        // Another task is unaffected.
        assert_eq!(s.track(1, 20_000_000, 16 << 10, 50_000_000), 16 << 10);
    }

    /// An entry older than 5 s no longer continues its stream.
    #[test]
    fn streams_expire_after_five_seconds() {
        let mut s = SeqDetector::new(1);
        s.track(0, 0, 4096, 0);
        assert_eq!(s.track(0, 8, 4096, 4_999_999_999), 8192);
        assert_eq!(s.track(0, 16, 4096, 10_000_000_000), 4096);
    }

    /// Random 16 KiB reads of 8 tasks never look sequential.
    #[test]
    fn random_small_reads_stay_small() {
        let mut s = SeqDetector::new(8);
        let mut x: u64 = 12345;
        for k in 0..100_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let sector = (x >> 20) % (1 << 30) * 32;
            let v = s.track((k % 8) as usize, sector, 16 << 10, k * 100_000);
            assert!(v <= 32 << 10, "{v}");
        }
    }

    /// A cache device slower than the threshold makes `get` nonzero until it recovers.
    #[test]
    fn slow_cache_io_congests_then_recovers() {
        let mut c = Congestion::new(2000, 20000, 1);
        assert_eq!(c.get(0), 0);
        for k in 0..100u64 {
            let t = k * 10_000_000;
            c.account(false, t, t + 5_000_000); // 5 ms reads
        }
        let t = 1_000_000_000;
        assert!(c.get(t) > 0);
        for k in 0..2000u64 {
            c.account(false, t + k * 1000, t + k * 1000 + 100_000); // 100 us reads
        }
        assert_eq!(c.get(t + 3_000_000), 0);
        assert_eq!(fract_exp_two(64 * 3, 6), 8);
        assert_eq!(fract_exp_two(64 * 3 + 32, 6), 12);
    }
}
