//! fio's random map: which blocks of a file a random job has done in this pass.
//!
//! Source: axboe/fio `lib/axmap.c` (`axmap_isset`, `axmap_set`, `axmap_next_free`) and
//! `io_u.c` `__get_next_rand_offset`: a random job draws a block; if the map says it was
//! done already it takes the next free block after it, wrapping to the start of the file;
//! when none is left the file is done for this pass. So one pass reads every block exactly
//! once. `norandommap` skips the map (blocks repeat, some are never read).
//!
//! A two-level bitmap (one bit per block, one bit per full 64-block word) instead of fio's
//! multi-level axmap: the same answers; a search skips full words 64 at a time.

/// Done blocks of one file in the current pass.
#[derive(Debug, Clone)]
pub struct RandMap {
    nbits: u64,
    done: u64,
    words: Vec<u64>,
    /// Bit w set: word w is full.
    full: Vec<u64>,
}

impl RandMap {
    /// A map of `nbits` blocks, all free.
    pub fn new(nbits: u64) -> RandMap {
        let nwords = nbits.div_ceil(64) as usize;
        RandMap { nbits, done: 0, words: vec![0; nwords], full: vec![0; nwords.div_ceil(64)] }
    }

    /// Number of blocks.
    pub fn len(&self) -> u64 {
        self.nbits
    }

    /// True when the map has no block.
    pub fn is_empty(&self) -> bool {
        self.nbits == 0
    }

    /// True when every block is done.
    pub fn is_full(&self) -> bool {
        self.done == self.nbits
    }

    /// Forgets every block (fio_file_reset -> axmap_reset).
    pub fn reset(&mut self) {
        self.words.iter_mut().for_each(|w| *w = 0);
        self.full.iter_mut().for_each(|w| *w = 0);
        self.done = 0;
    }

    /// True if block `b` is done.
    pub fn is_set(&self, b: u64) -> bool {
        self.words[(b >> 6) as usize] & (1 << (b & 63)) != 0
    }

    /// Marks block `b` done.
    pub fn set(&mut self, b: u64) {
        let w = (b >> 6) as usize;
        let bit = 1u64 << (b & 63);
        if self.words[w] & bit != 0 {
            return;
        }
        self.words[w] |= bit;
        self.done += 1;
        if self.words[w] == self.word_mask(w) {
            self.full[w >> 6] |= 1 << (w & 63);
        }
    }

    /// Bits of word `w` that are blocks (the last word may be partial).
    fn word_mask(&self, w: usize) -> u64 {
        let end = self.nbits - ((w as u64) << 6);
        if end >= 64 {
            u64::MAX
        } else {
            (1u64 << end) - 1
        }
    }

    /// `b` if free, else the next free block after it, wrapping to block 0
    /// (axmap_next_free); None when the map is full.
    pub fn free_at_or_after(&self, b: u64) -> Option<u64> {
        if self.is_full() {
            return None;
        }
        if !self.is_set(b) {
            return Some(b);
        }
        self.first_free_from(b + 1).or_else(|| self.first_free_from(0))
    }

    fn first_free_from(&self, from: u64) -> Option<u64> {
        if from >= self.nbits {
            return None;
        }
        let mut w = (from >> 6) as usize;
        // The first word from bit `from` on.
        let free = !self.words[w] & self.word_mask(w) & (u64::MAX << (from & 63));
        if free != 0 {
            return Some(((w as u64) << 6) + u64::from(free.trailing_zeros()));
        }
        w += 1;
        while w < self.words.len() {
            // Skip full words 64 at a time.
            let fw = w >> 6;
            let not_full = !self.full[fw] & (u64::MAX << (w & 63));
            if not_full == 0 {
                w = (fw + 1) << 6;
                continue;
            }
            w = (fw << 6) + not_full.trailing_zeros() as usize;
            if w >= self.words.len() {
                break;
            }
            let free = !self.words[w] & self.word_mask(w);
            debug_assert!(free != 0);
            return Some(((w as u64) << 6) + u64::from(free.trailing_zeros()));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn next_free_wraps_and_ends_full() {
        let mut m = RandMap::new(130);
        for b in 0..130 {
            if b != 3 && b != 129 {
                m.set(b);
            }
        }
        assert_eq!(m.free_at_or_after(3), Some(3));
        assert_eq!(m.free_at_or_after(4), Some(129));
        assert_eq!(m.free_at_or_after(129), Some(129));
        m.set(129);
        assert_eq!(m.free_at_or_after(100), Some(3), "wraps to the start");
        m.set(3);
        assert!(m.is_full());
        assert_eq!(m.free_at_or_after(0), None);
        m.reset();
        assert_eq!(m.free_at_or_after(77), Some(77));
    }

    proptest! {
        /// Drawing blocks and taking the next free one covers every block exactly once.
        #[test]
        fn a_pass_covers_every_block_once(n in 1u64..5000, picks in prop::collection::vec(any::<u64>(), 1..200)) {
            let mut m = RandMap::new(n);
            let mut seen = vec![false; n as usize];
            let mut k = 0;
            while let Some(b) = m.free_at_or_after(picks[k % picks.len()] % n) {
                prop_assert!(!seen[b as usize]);
                seen[b as usize] = true;
                m.set(b);
                k += 1;
            }
            prop_assert_eq!(k as u64, n);
            prop_assert!(seen.iter().all(|&s| s));
        }
    }
}
