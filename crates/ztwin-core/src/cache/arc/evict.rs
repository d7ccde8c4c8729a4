//! Eviction: when it runs, and `arc_evict_state()`, the scan of one list from its cold
//! end that turns live headers into ghosts and deletes ghosts. Which lists are scanned,
//! and how far, is the release's adaptation's (`arc_p.rs`: `arc_adjust()`;
//! `meta_balance.rs`: 2.2's `arc_evict()`).
//!
//! # Mechanism (`module/zfs/arc.c` `arc_evict_state()`, `arc_evict_hdr()` at zfs-0.8.6,
//! zfs-2.1.16, zfs-2.2.0)
//!
//! A scan takes headers from the list's tail until it has evicted the bytes asked for.
//! A live header goes to its ghost list (an UNCACHED one is destroyed), keeping its
//! header bytes; a ghost header is deleted (with an L2 copy it becomes an L2-only header:
//! [`crate::cache::l2arc`]). Prefetched and indirect buffers younger than
//! `zfs_arc_min_prefetch_ms` (1 s) are passed over (`evict_skip`). The simulator
//! remembers the run of protected headers a scan passed at a list's tail (its window,
//! `slab.rs`), so that the next scan, which would pass the same headers, can be answered
//! without walking them (same outcome, same counters).
//!
//! # Simplifications (numbered across the ARC's modules)
//!
//! 1. Lists are exact LRU; OpenZFS uses multilists with max(ncpu, 4) sublists and evicts
//!    from a randomly chosen sublist, so its order is only approximately LRU.
//! 2. Eviction runs synchronously inside [`Arc::read`] when an insertion leaves the ARC
//!    overflowing (an allocation in `arc_get_data_impl()` is what wakes the eviction
//!    thread; a hit allocates nothing and evicts nothing): `size >= c + max(16 MiB, c >>
//!    8)` in 0.8, half that margin in 2.1 and 2.2.0-2.2.8, `c + zfs_max_recordsize` from
//!    2.2.9, any `size > c` in 0.6 ([`crate::config::ArcOverflow`], `arc_is_overflowing`); each pass
//!    evicts down to `c`, and the next allocation runs another while the last one evicted
//!    something and left `size > c` (`arc_evict_needed`). So the ARC floats up to that
//!    margin above `c`, as the real one does. The real thread runs asynchronously (and an
//!    allocation at the severe level waits for it): here it is done before the
//!    allocating read goes on.
//! 7. Prescient prefetch and encryption are not modelled (the L2ARC and `l2c_only` are:
//!    [`crate::cache::l2arc`]). The minimum
//!    life of prefetched and indirect buffers (`zfs_arc_min_prefetch_ms`, 1 s) is
//!    honoured, but an eviction scan passes at most [`MAX_SKIP_SCAN`] protected headers
//!    before giving up on that list (OpenZFS scans whole sublists).

use super::slab::{self, list_index, Header, State, F_INDIRECT, F_PREFETCH, F_SKIPWIN, NIL};
use super::{Arc, ARC_MIN_PREFETCH};
use crate::config::ArcAdaptation;
use crate::sim::time::Nanos;

/// At most this many protected (prefetch/indirect, younger than 1 s) headers are passed
/// over per list scan (simplification 7).
pub const MAX_SKIP_SCAN: u32 = 64;

impl Arc {
    /// arc_get_data_impl's wake-up of arc_adjust / arc_evict: eviction runs (at once, see
    /// simplification 2) when the allocation leaves the ARC overflowing
    /// (`arc_is_overflowing`: `size >= c +` the release's margin, [`crate::config::ArcOverflow`]), or
    /// while the thread woken before is still at work (`arc_evict_needed`: its last pass
    /// evicted something and left `size > c`); each pass evicts down to `c`.
    pub(super) fn evict_if_over(&mut self, now: Nanos) {
        if let Some((to, meta, bytes)) = self.allocated.take() {
            self.evict_on_allocation(to, meta, bytes, now);
        }
        let size = self.size();
        if size > self.c && (self.evict_needed || size >= self.c.saturating_add(self.overflow_margin())) {
            match self.f.adaptation {
                ArcAdaptation::MetaBalance => self.evict_22(now),
                ArcAdaptation::ArcP => self.adjust_08(now),
            }
            let after = self.size();
            self.evict_needed = after < size && after > self.c;
        }
    }

    /// 0.6 `arc_get_data_buf` for a buffer of `bytes` (metadata if `meta`) that went to
    /// `to`: when the ARC is full (`arc_evict_needed`: over `arc_c`, or metadata at its
    /// limit), evict as much of that type from the list the arc_p rule picks (see
    /// [`ArcFeatures::evicts_on_allocation`]), judged on the sizes before the buffer was
    /// added; then the ghost lists are trimmed as `arc_adjust` does each second. If that
    /// list could not give enough, the ARC stays over `arc_c` and the caller's
    /// `arc_adjust` (run at once here, once a second in 0.6) evicts the rest.
    fn evict_on_allocation(&mut self, to: State, meta: bool, bytes: u64, now: Nanos) {
        if self.size() <= self.c && !(meta && self.meta_used() >= self.meta_limit) {
            return;
        }
        let before = |a: &Arc, s: State| a.ssize(s).saturating_sub(if s == to { bytes } else { 0 });
        let victim = match to {
            State::Mfu => {
                let mfu_space = self.c.saturating_sub(self.p);
                if self.lbytes(State::Mru, meta) >= bytes && mfu_space > before(self, State::Mfu) {
                    State::Mru
                } else {
                    State::Mfu
                }
            }
            State::Mru
            | State::Uncached
            | State::MruGhost
            | State::MfuGhost
            | State::L2cOnly
            | State::Free => {
                if self.lbytes(State::Mfu, meta) >= bytes && self.p > before(self, State::Mru) {
                    State::Mfu
                } else {
                    State::Mru
                }
            }
        };
        self.evict_impl(victim, meta, bytes as i64, now);
        self.adjust_ghosts_08(now);
    }

    /// arc_evict_state for one list: evicts from the tail until `bytes` (state bytes) are
    /// gone. Live headers become ghosts (UNCACHED ones are destroyed); ghost headers are
    /// deleted. Prefetched and indirect buffers younger than 1 s are skipped. (A remembered
    /// window that answers the whole scan is taken by [`Arc::window_answers`] first.)
    #[inline(never)]
    fn evict_list(&mut self, state: State, meta: bool, bytes: u64, now: Nanos) -> u64 {
        let li = list_index(state, meta);
        if state.is_ghost() {
            return self.evict_ghosts(li, bytes);
        }
        let mut scan = Scan { evicted: 0, skips: 0, until: Nanos::MAX, mono: true, last_exp: 0, last: NIL };
        let mut cur = self.slab.lists[li].tail;
        let w = self.slab.skip[li];
        if w.skips > 0 {
            if self.skip_memo && (now < w.until || w.mono) {
                // Protection ends in window order (or not yet at all), so what expired is
                // a tail prefix: the scan evicts it, passes the rest of the window and goes
                // on beyond it.
                let mut left = w.skips;
                if now >= w.until {
                    while left > 0 && scan.evicted < bytes {
                        let h = self.slab.hdrs[cur as usize];
                        if protected(&h, now) {
                            break;
                        }
                        self.evict_live(cur, state, &mut scan);
                        left -= 1;
                        cur = h.prev;
                    }
                    if scan.evicted >= bytes {
                        return scan.evicted;
                    }
                }
                if left > 0 {
                    #[cfg(test)]
                    {
                        self.skip_memo_slid += 1;
                    }
                    let w = self.slab.skip[li];
                    self.st.evict_skip += left as u64;
                    // The window's remaining members are its first `left` recorded (the
                    // evicted ones left it through `unlink`); the scan records after them.
                    scan.skips = left;
                    scan.until = if now < w.until {
                        w.until
                    } else {
                        self.slab.hdrs[cur as usize].access + ARC_MIN_PREFETCH
                    };
                    scan.mono = w.mono;
                    scan.last_exp = w.last_exp;
                    scan.last = w.last;
                    cur = self.slab.hdrs[w.last as usize].prev;
                    if cur == NIL || left >= MAX_SKIP_SCAN {
                        // The scan gives up here: it passed the whole list, or as many
                        // protected headers as it may (`until` may have been a lower bound,
                        // its earliest member having left).
                        self.remember_window(li, &scan);
                        return scan.evicted;
                    }
                }
            } else if self.skip_memo {
                // Its protection no longer ends in order: the scan starts over from the
                // tail, where the window's members are, deciding each from its recorded
                // end of protection; then it goes on beyond them.
                match self.rescan_window(li, state, bytes, now, &mut scan) {
                    Some(beyond) => cur = beyond,
                    None => {
                        self.remember_window(li, &scan);
                        return scan.evicted;
                    }
                }
            } else {
                // Shortcuts off: the scan starts over from the tail.
                self.slab.forget_window(li);
            }
        }
        while scan.evicted < bytes && cur != NIL {
            let h = self.slab.hdrs[cur as usize];
            let prev = h.prev;
            if protected(&h, now) {
                self.st.evict_skip += 1;
                scan.pass(&mut self.slab.win[li], cur, h.access + ARC_MIN_PREFETCH);
                self.slab.hdrs[cur as usize].flags |= F_SKIPWIN;
                if scan.skips >= MAX_SKIP_SCAN || prev == NIL {
                    // Gave up, or passed the whole list.
                    break;
                }
            } else {
                self.evict_live(cur, state, &mut scan);
            }
            cur = prev;
        }
        // What the scan passed is the list's tail-most run, all protected: the headers
        // between them were evicted.
        self.remember_window(li, &scan);
        scan.evicted
    }

    /// The first part of a scan of live list `li` whose remembered window has expired out
    /// of order: passes or evicts each member, tail first, as a scan from the tail would
    /// (`scan` records what it passed). Returns the list's first header beyond the window,
    /// where the scan goes on, or None when it ends there (enough evicted, or
    /// `MAX_SKIP_SCAN` passed, or the window was the whole list).
    fn rescan_window(
        &mut self,
        li: usize,
        state: State,
        bytes: u64,
        now: Nanos,
        scan: &mut Scan,
    ) -> Option<u32> {
        let w = self.slab.skip[li];
        let n = w.skips as usize;
        // The list's first header beyond the window (evicting members leaves it in place).
        let beyond = self.slab.hdrs[w.last as usize].prev;
        self.slab.skip[li] = slab::SkipWindow::default();
        #[cfg(test)]
        {
            self.skip_memo_rescanned += 1;
        }
        // The members passed again are recorded in place (never after the one being read).
        for k in 0..n {
            let (i, exp) = (self.slab.win[li].slot[k], self.slab.win[li].exp[k]);
            if scan.evicted >= bytes {
                // Not reached: no longer a member.
                self.slab.hdrs[i as usize].flags &= !F_SKIPWIN;
                continue;
            }
            debug_assert_eq!(exp, self.slab.hdrs[i as usize].access + ARC_MIN_PREFETCH);
            if now < exp {
                self.st.evict_skip += 1;
                scan.pass(&mut self.slab.win[li], i, exp);
            } else {
                self.slab.hdrs[i as usize].flags &= !F_SKIPWIN;
                self.evict_live(i, state, scan);
            }
        }
        let ends = scan.evicted >= bytes || scan.skips >= MAX_SKIP_SCAN || beyond == NIL;
        (!ends).then_some(beyond)
    }

    /// Records the protected headers `scan` passed as list `li`'s window (none: no window).
    fn remember_window(&mut self, li: usize, scan: &Scan) {
        self.slab.skip[li] = if scan.skips == 0 {
            slab::SkipWindow::default()
        } else {
            slab::SkipWindow {
                until: scan.until,
                skips: scan.skips,
                whole: self.slab.hdrs[scan.last as usize].prev == NIL,
                mono: scan.mono,
                last: scan.last,
                last_exp: scan.last_exp,
            }
        };
    }

    /// Ghost lists: deletes headers from the tail until `bytes` (lsize) are gone.
    fn evict_ghosts(&mut self, li: usize, bytes: u64) -> u64 {
        let mut evicted = 0u64;
        let mut cur = self.slab.lists[li].tail;
        while evicted < bytes && cur != NIL {
            let h = self.slab.hdrs[cur as usize];
            self.slab.unlink(cur);
            self.delete_ghost(cur);
            self.st.deleted += 1;
            evicted += h.lsize as u64;
            cur = h.prev;
        }
        evicted
    }

    /// arc_evict_hdr of a live header: to its ghost list (UNCACHED: destroyed).
    fn evict_live(&mut self, i: u32, state: State, scan: &mut Scan) {
        scan.evicted += self.slab.hdrs[i as usize].asize() as u64;
        self.user_evict(i);
        self.l2_count_evict(i, state);
        if self.warm_on_evict {
            self.arc_warm = true;
        }
        self.slab.unlink(i);
        match state {
            State::Mru => self.enter(i, State::MruGhost),
            State::Mfu => self.enter(i, State::MfuGhost),
            _ => self.destroy(i),
        }
    }

    /// A header's access time moved forward in place (it stays where it is in its list): a
    /// remembered window it belongs to may no longer expire in order.
    pub(super) fn touched_in_place(&mut self, i: u32) {
        let h = &self.slab.hdrs[i as usize];
        if h.flags & F_SKIPWIN != 0 {
            let (li, exp) = (h.list(), h.access + ARC_MIN_PREFETCH);
            let w = &mut self.slab.skip[li];
            w.mono = false;
            let m = &mut self.slab.win[li];
            let k = m.position(i, w.skips as usize);
            m.exp[k] = exp;
        }
    }

    /// arc_adjust_impl / arc_evict_impl: evict at most `bytes` (if positive) of the list.
    /// Inlined: most calls of an adjust find nothing to do.
    #[inline]
    pub(super) fn evict_impl(&mut self, state: State, meta: bool, bytes: i64, now: Nanos) -> u64 {
        let have = self.lbytes(state, meta);
        if bytes <= 0 || have == 0 || (!state.is_ghost() && self.window_answers(list_index(state, meta), now))
        {
            return 0;
        }
        self.evict_list(state, meta, (bytes as u64).min(have), now)
    }

    /// True when live list `li`'s remembered window answers a scan at `now`: the tail is
    /// the window of protected headers and the scan would pass exactly those and give up
    /// (a shortcut of the simulator, same outcome); counts the skips.
    #[inline]
    fn window_answers(&mut self, li: usize, now: Nanos) -> bool {
        let w = self.slab.skip[li];
        if !(self.skip_memo && w.skips > 0 && now < w.until && (w.whole || w.skips >= MAX_SKIP_SCAN)) {
            return false;
        }
        self.st.evict_skip += w.skips as u64;
        #[cfg(test)]
        {
            self.skip_memo_used += 1;
            // The scan it answers for: passes exactly the window and gives up.
            let (mut c, mut n) = (self.slab.lists[li].tail, 0u32);
            while c != NIL && n < MAX_SKIP_SCAN {
                let h = self.slab.hdrs[c as usize];
                assert!(protected(&h, now), "list {li}: window member {n} unprotected");
                n += 1;
                c = h.prev;
            }
            assert_eq!(n, w.skips, "list {li}: the scan would pass another number of headers");
        }
        true
    }
}

/// Running totals of one eviction scan of a live list.
/// (The protected headers passed are recorded, tail first, in the list's
/// [`slab::WindowMembers`] as they are passed.)
struct Scan {
    evicted: u64,
    /// Protected headers passed.
    skips: u32,
    /// Earliest end of protection among them.
    until: Nanos,
    /// Their protection ends in list order (tail first).
    mono: bool,
    /// End of protection of the last one passed.
    last_exp: Nanos,
    /// The last one passed (the head-most).
    last: u32,
}

impl Scan {
    /// Passes protected header `i` (protected until `exp`), recording it as the next member
    /// of the list's window `m`.
    #[inline]
    fn pass(&mut self, m: &mut slab::WindowMembers, i: u32, exp: Nanos) {
        m.slot[self.skips as usize] = i;
        m.exp[self.skips as usize] = exp;
        self.skips += 1;
        self.until = self.until.min(exp);
        self.mono &= exp >= self.last_exp;
        self.last_exp = exp;
        self.last = i;
    }
}

/// arc_evict_hdr's minimum lifespan: prefetched and indirect buffers younger than
/// zfs_arc_min_prefetch_ms are skipped.
#[inline]
pub(super) fn protected(h: &Header, now: Nanos) -> bool {
    h.flags & (F_PREFETCH | F_INDIRECT) != 0 && now.saturating_sub(h.access) < ARC_MIN_PREFETCH
}
