//! The size of the next log block, chosen when one is issued (`zil_lwb_write_issue` in
//! 0.8 and 2.1, `zil_lwb_write_close` from 2.2.0). Log blocks are allocated one ahead: the
//! block an lwb's chain header points to is allocated, at the size chosen here, when that
//! lwb is written; only the used part of a block is written (rounded up to 4 KiB), but
//! the whole block is allocated (on a SLOG, a ring of recent blocks).
//!
//! Two rules, by release ([`LwbSizing`]):
//! - Buckets (module/zfs/zil.c at zfs-0.8.6, 2.1.16, 2.2.0 .. 2.2.3, `zil_block_buckets`):
//!   the log bytes assigned since the last commit that found the log idle (`zl_cur_used`,
//!   reset when a waiter times out or, from 2.1.10, when a lone commit issues its block at
//!   once) plus the chain header pick the smallest bucket that holds them (4K, 12K, 36K,
//!   68K, 128K; 132K gives 68K, so a 128K record goes as two halves, until 2.2.3), capped
//!   by `zil_maxblocksize`; the block is the largest of that and the 15 choices before it
//!   (`ZIL_PREV_BLKS`, against a picket fence of alternating sizes).
//! - Bursts (zil.c at zfs-2.2.4 .. 2.2.11: `zil_lwb_plan`, `zil_lwb_predict`,
//!   `zil_burst_done`): a commit's itxs form a burst of known size (`zl_cur_size`, what is
//!   left: `zl_cur_left`, its largest record `zl_cur_max`); a block is planned to hold what
//!   is left of the burst (split evenly over several blocks when it is up to 8 blocks'
//!   worth), or, between bursts, what 7 of the last 8 bursts needed for their first block
//!   (a saving under half is not worth a smaller block). A multi-threaded workload
//!   (`zl_parallel`) plans for what is left plus one predicted burst more.

use crate::config::LwbSizing;

/// `sizeof (zil_chain_t)`: the chain header at the start of a slim (ZILOG2) log block
/// (pad, next block pointer, bytes used, the embedded checksum): 8 + 128 + 8 + 40.
pub const ZIL_CHAIN: u64 = 184;
/// `sizeof (lr_write_t)`: a TX_WRITE record's header (lr_t 32, object, offset, length,
/// block offset 32, a block pointer 128).
pub const LR_WRITE: u64 = 192;
/// `ZIL_MIN_BLKSZ`: log blocks are multiples of 4 KiB.
pub const ZIL_MIN_BLKSZ: u64 = 4096;
/// `ZIL_PREV_BLKS`.
const PREV_BLKS: usize = 16;
/// `ZIL_BURSTS`.
pub const ZIL_BURSTS: u32 = 8;

/// `zil_block_buckets` (limit, block size); the 132K bucket is the 128K-to-68K split.
const BUCKETS: [(u64, u64); 7] = [
    (4096, 4096),
    (8192 + 4096, 8192 + 4096),
    (32768 + 4096, 32768 + 4096),
    (65536 + 4096, 65536 + 4096),
    (131072, 131072),
    (131072 + 4096, 65536 + 4096),
    (u64::MAX, 131072),
];

/// The sizing state of one dataset's log.
#[derive(Debug, Clone)]
pub struct LwbSizer {
    rule: LwbSizing,
    /// `zl_max_block_size`.
    max_block: u64,
    /// `zil_max_waste_space`.
    max_waste: u64,
    /// Buckets: `zl_cur_used` and the last choices.
    pub cur_used: u64,
    prev_blks: [u64; PREV_BLKS],
    prev_rotor: usize,
    /// Bursts: the current burst, the parallelism countdown, the last bursts' plans.
    pub cur_size: u64,
    /// (see `cur_size`)
    pub cur_left: u64,
    /// (see `cur_size`)
    pub cur_max: u64,
    /// (see `cur_size`)
    pub parallel: u32,
    prev_opt: [u64; ZIL_BURSTS as usize],
    prev_min: [u64; ZIL_BURSTS as usize],
    burst_rotor: usize,
}

impl LwbSizer {
    /// A log with no history, blocks of at most `max_block` bytes, `max_waste` bytes a
    /// block may leave unused to keep a NEED_COPY record whole.
    pub fn new(rule: LwbSizing, max_block: u64, max_waste: u64) -> LwbSizer {
        LwbSizer {
            rule,
            max_block,
            max_waste,
            cur_used: 0,
            prev_blks: [0; PREV_BLKS],
            prev_rotor: 0,
            cur_size: 0,
            cur_left: 0,
            cur_max: 0,
            parallel: 0,
            prev_opt: [0; ZIL_BURSTS as usize],
            prev_min: [0; ZIL_BURSTS as usize],
            burst_rotor: 0,
        }
    }

    /// The size of the block allocated next (as the lwb being issued closes).
    pub fn next_block(&mut self) -> u64 {
        match self.rule {
            LwbSizing::Buckets { split_128k } => {
                let want = self.cur_used + ZIL_CHAIN;
                let table = if split_128k { &BUCKETS[..] } else { &BUCKETS[..5] };
                // Without the split, 128K is "anything larger".
                let bucket = table.iter().find(|b| want <= b.0).map_or(131072, |b| b.1);
                let pick = bucket.min(self.max_block);
                self.prev_blks[self.prev_rotor] = pick;
                self.prev_rotor = (self.prev_rotor + 1) % PREV_BLKS;
                self.prev_blks.iter().copied().fold(pick, u64::max)
            }
            LwbSizing::Bursts => {
                let plan = if self.cur_left > 0 {
                    let mut plan = self.plan(self.cur_left).0;
                    if self.parallel > 0 {
                        let more = self.cur_left + self.predict();
                        plan = plan.max(self.plan(more).0);
                    }
                    plan
                } else {
                    self.predict()
                };
                (plan + ZIL_CHAIN).div_ceil(ZIL_MIN_BLKSZ) * ZIL_MIN_BLKSZ
            }
            .min(self.max_block),
        }
    }

    /// `zil_lwb_plan`: the block size for a burst of `size` bytes, and the least the first
    /// block must hold.
    pub fn plan(&self, size: u64) -> (u64, u64) {
        let md = self.max_block - ZIL_CHAIN;
        if size <= md {
            return (size, size);
        }
        if size > 8 * md {
            return (md, 0);
        }
        let n = size.div_ceil(md - LR_WRITE);
        let chunk = size.div_ceil(n);
        let waste = self.max_waste.max(self.cur_max);
        if chunk <= md - waste {
            (chunk, size.saturating_sub((md - waste) * (n - 1)).max(waste))
        } else {
            (md, 0)
        }
    }

    /// `zil_lwb_predict`: a size enough for 7 of the last 8 bursts' first blocks.
    pub fn predict(&self) -> u64 {
        let (mut o, m) = if self.cur_size > 0 { self.plan(self.cur_size) } else { (u64::MAX, 0) };
        o = self.prev_opt.iter().copied().fold(o, u64::min);
        let (mut m1, mut m2) = (m.max(o), o);
        for &m in &self.prev_min {
            if m >= m1 {
                m2 = m1;
                m1 = m;
            } else if m > m2 {
                m2 = m;
            }
        }
        if m1 < m2.saturating_mul(2) {
            m1
        } else {
            m2
        }
    }

    /// `zil_burst_done`, once a commit's list is processed and its block goes out.
    pub fn burst_done(&mut self) {
        if self.cur_size == 0 {
            return;
        }
        self.parallel = self.parallel.saturating_sub(1);
        self.burst_rotor = (self.burst_rotor + 1) % ZIL_BURSTS as usize;
        let (opt, min) = self.plan(self.cur_size);
        self.prev_opt[self.burst_rotor] = opt;
        self.prev_min[self.burst_rotor] = min;
        self.cur_size = 0;
        self.cur_max = 0;
        self.cur_left = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 0.8: a lone 4K record (192 + 4096 bytes with its header) picks the 12K bucket; the
    /// choice is then the largest of the last 16, so one burst of over 132K keeps blocks at
    /// 128K for 15 more blocks.
    #[test]
    fn buckets_pick_the_smallest_fit_and_remember_the_largest() {
        let mut s = LwbSizer::new(LwbSizing::Buckets { split_128k: true }, 131072, 0);
        s.cur_used = 192 + 4096;
        assert_eq!(s.next_block(), 12288);
        s.cur_used = 200_000;
        assert_eq!(s.next_block(), 131072);
        s.cur_used = 100;
        for _ in 0..15 {
            assert_eq!(s.next_block(), 131072);
        }
        assert_eq!(s.next_block(), 4096, "the 128K choice has left the last 16");
        // 128K of data plus a header: 132K bucket, 68K blocks (until 2.2.3).
        s.cur_used = 131072 + 192 - ZIL_CHAIN;
        assert_eq!(s.next_block(), 69632);
        let mut t = LwbSizer::new(LwbSizing::Buckets { split_128k: false }, 131072, 0);
        t.cur_used = 131072 + 192 - ZIL_CHAIN;
        assert_eq!(t.next_block(), 131072);
        // zil_maxblocksize caps the bucket.
        let mut u = LwbSizer::new(LwbSizing::Buckets { split_128k: true }, 32768, 0);
        u.cur_used = 100_000;
        assert_eq!(u.next_block(), 32768);
    }

    /// 2.2.4: no history plans a 4K block; a burst left is planned to fit; a medium burst is
    /// split evenly; after bursts, the prediction follows them.
    #[test]
    fn bursts_plan_what_is_left_and_predict_from_the_last_eight() {
        let mut s = LwbSizer::new(LwbSizing::Bursts, 131072, (131072 - 184 - 192) / 16);
        assert_eq!(s.next_block(), 4096);
        s.cur_left = 20_000;
        assert_eq!(s.next_block(), (20_000u64 + 184).div_ceil(4096) * 4096);
        // 300K left: three blocks of about 100K each.
        s.cur_left = 300_000;
        let (chunk, _) = s.plan(300_000);
        assert_eq!(chunk, 100_000);
        assert_eq!(s.next_block(), (100_000u64 + 184).div_ceil(4096) * 4096);
        // A huge burst: maximal blocks.
        assert_eq!(s.plan(5 << 20).0, 131072 - 184);
        // Eight bursts of 8K each: the prediction is 8K.
        s.cur_left = 0;
        for _ in 0..8 {
            s.cur_size = 8192;
            s.burst_done();
        }
        assert_eq!(s.predict(), 8192);
        assert_eq!(s.next_block(), 12288);
    }
}
