//! `arc_access()`: where a read moves a header (MRU, MFU, their ghosts, UNCACHED), per
//! the release's [`ArcAccessRules`](crate::config::ArcAccessRules).
//!
//! # Mechanism
//!
//! A demand hit on an MRU header older than ARC_MINTIME (62 ms) promotes it to MFU; a hit
//! on MFU refreshes it; a ghost hit brings the block back (MRU-ghost to MFU, or to MRU if
//! the header was a prefetch; MFU-ghost to MFU), after the release's target adaptation
//! (`arc_p.rs`, `meta_balance.rs`, called through [`Arc::adapt`]); a prefetch that finds
//! the block cached takes no reference and leaves it in place.
//!
//! - **`AddReferenceFirst`** (0.6, 0.8, 2.1; `module/zfs/arc.c` `arc_read()` and
//!   `arc_access()` at zfs-0.6.1, zfs-0.8.6, zfs-2.1.16): where the source disagrees with
//!   OPENZFS-FACTS.md we follow the source: a demand hit on a prefetched MRU block clears
//!   ARC_FLAG_PREFETCH in `add_reference()` *before* `arc_access()`, so it is promoted to
//!   MFU if more than 62 ms passed since the prefetch (2.2 fixed this with
//!   `was_prefetch`). A ghost hit sees the flag left from the header's previous life
//!   (refcount 0). ARC_FLAG_PREDICTIVE_PREFETCH marks a block a prefetch brought in until
//!   its first read (`demand_hit_predictive_prefetch`).
//! - **`WasPrefetch`** (2.2; arc.c at zfs-2.2.0, c935fe2e92): `arc_access()` clears the
//!   prefetch flag itself and does not promote on that hit; a read finding the block's
//!   I/O in progress (an iohit) calls `arc_access()` without promotion. With the uncached
//!   state (ed2f7ba08d), a block flagged uncacheable enters `arc_uncached`: a demand read
//!   is destroyed at once (`remove_reference`), a prefetch stays until
//!   `arc_min_prefetch_ms` after its last access and is then flushed.
//!
//! # Simplifications (numbered across the ARC's modules)
//!
//! 6. `uncacheable` reads (primarycache excludes the block): 0.8/2.1 apply the normal
//!    transitions and counters and then destroy the header outright (the dbuf release calls
//!    `arc_freed()`), so no ghost is left; 2.2 puts a new block in UNCACHED: a demand read
//!    is destroyed at once (`remove_reference`), a prefetch stays until
//!    `arc_min_prefetch_ms` (1 s) after its last access and is then flushed (the real flush
//!    runs every 500 ms, so it lives 1 to 1.5 s). A hit or ghost hit on a block already
//!    known to the ARC follows the normal rules in 2.2 (as the source does).

use super::slab::{list_index, State, F2_PREDICTIVE, F_PREFETCH, NIL};
use super::{Arc, BlockInfo, ReadFlags, ARC_MINTIME, ARC_MIN_PREFETCH, T_DATA, T_META};
use crate::sim::time::Nanos;

impl Arc {
    // ---- AddReferenceFirst (0.6 .. 2.1) -------------------------------------------------

    /// 0.6 .. 2.1 hit on MRU or MFU.
    pub(super) fn hit_08(&mut self, i: u32, flags: ReadFlags, now: Nanos) {
        let h = &mut self.slab.hdrs[i as usize];
        if !flags.prefetch && h.flags2 & F2_PREDICTIVE != 0 {
            // A read with a done callback finding the completed predictive prefetch.
            h.flags2 &= !F2_PREDICTIVE;
            self.st.demand_hit_predictive_prefetch += 1;
        }
        let h = &mut self.slab.hdrs[i as usize];
        // add_reference() on a demand read clears the prefetch flag; a prefetch read with
        // no reference held sets it (arc_read hit path).
        if flags.prefetch {
            h.flags |= F_PREFETCH;
        } else {
            h.flags &= !F_PREFETCH;
        }
        let meta = h.is_meta();
        let state = h.state;
        let mut to = state;
        match state {
            State::Mru => {
                if h.flags & F_PREFETCH != 0 {
                    // Another prefetch, refcount 0: only the access time moves.
                    h.access = now;
                } else {
                    if now > h.access + ARC_MINTIME {
                        h.access = now;
                        to = State::Mfu;
                    }
                    self.st.mru_hits += 1;
                }
            }
            State::Mfu => {
                h.access = now;
                self.st.mfu_hits += 1;
            }
            // Invariant: `Arc::access` calls hit_08 only for a live header (MRU, MFU; 0.6 .. 2.1 have no UNCACHED).
            _ => unreachable!("hit on a non-cached state"),
        }
        self.count(true, flags.prefetch, meta);
        if flags.uncacheable {
            // dbuf release of an uncacheable dbuf: arc_freed() destroys the header.
            self.slab.unlink(i);
            self.destroy(i);
        } else if !flags.prefetch || to != state {
            self.slab.unlink(i);
            self.enter(i, to);
        } else {
            self.touched_in_place(i);
        }
    }

    /// 0.6 .. 2.1 hit on a ghost header: arc_adapt, arc_access, data allocation.
    pub(super) fn ghost_08(&mut self, i: u32, info: BlockInfo, flags: ReadFlags, now: Nanos) {
        let _ = info;
        let h = self.slab.hdrs[i as usize];
        let bytes = h.asize() as u64;
        self.adapt(bytes, Some(h.state), h.is_meta());
        // arc_access sees the flag left from the header's previous life, refcount 0.
        let stale_prefetch = h.flags & F_PREFETCH != 0;
        match h.state {
            State::MruGhost => self.st.mru_ghost_hits += 1,
            State::MfuGhost => self.st.mfu_ghost_hits += 1,
            // Invariant: `Arc::access` calls ghost_08 only for a header on a ghost list.
            _ => unreachable!(),
        }
        let to = if stale_prefetch { State::Mru } else { State::Mfu };
        let hm = &mut self.slab.hdrs[i as usize];
        hm.access = now;
        if flags.prefetch {
            // arc_read's miss path: the final prefetch of dbuf_prefetch is predictive (a
            // flag left from the header's previous life stays, as in the source).
            hm.flags |= F_PREFETCH;
            hm.flags2 |= F2_PREDICTIVE;
        }
        // Counted with the header's flag after arc_read set it (a stale prefetch flag makes
        // a demand ghost miss count as a prefetch miss, as in the source).
        let pf = hm.flags & F_PREFETCH != 0;
        let meta = hm.is_meta();
        self.slab.unlink(i);
        self.enter(i, to);
        if self.f.evicts_on_allocation {
            self.allocated = Some((to, meta, bytes));
        }
        self.count(false, pf, meta);
        if !flags.prefetch {
            // arc_read_done: the demand buffer's add_reference clears the flag.
            self.slab.hdrs[i as usize].flags &= !F_PREFETCH;
        }
        if flags.uncacheable {
            self.slab.unlink(i);
            self.destroy(i);
        }
    }

    // ---- WasPrefetch (2.2) --------------------------------------------------------------

    /// 2.2 arc_access of a cached header (MRU, MFU or UNCACHED): a hit, or (`io`) an
    /// iohit, a read finding the header's I/O in progress, which counts in iohits, neither
    /// promotes nor counts mru/mfu/uncached hits.
    pub(super) fn hit_22(&mut self, i: u32, flags: ReadFlags, now: Nanos, io: bool) {
        let h = &mut self.slab.hdrs[i as usize];
        let was_prefetch = h.flags & F_PREFETCH != 0;
        if was_prefetch && !flags.prefetch {
            // arc_access: the prefetch flag goes (ARC_FLAG_PRESCIENT_PREFETCH is never set:
            // the model's prefetches are zfetch's, predictive).
            if io {
                self.st.demand_iohit_predictive_prefetch += 1;
            } else {
                self.st.demand_hit_predictive_prefetch += 1;
            }
        }
        let h = &mut self.slab.hdrs[i as usize];
        if flags.prefetch {
            h.flags |= F_PREFETCH;
        } else {
            h.flags &= !F_PREFETCH;
        }
        let meta = h.is_meta();
        let state = h.state;
        let mut to = state;
        match state {
            State::Mru if io => h.access = now,
            State::Mru => {
                self.st.mru_hits += 1;
                if was_prefetch {
                    h.access = now;
                } else if now > h.access + ARC_MINTIME {
                    h.access = now;
                    to = State::Mfu;
                }
            }
            State::Mfu => {
                self.st.mfu_hits += u64::from(!io);
                h.access = now;
            }
            State::Uncached => {
                self.st.uncached_hits += u64::from(!io);
                h.access = now;
            }
            // Invariant: `Arc::access` calls hit_22 only for a live header (MRU, MFU, UNCACHED).
            _ => unreachable!("hit on a non-cached state"),
        }
        if io {
            self.count_iohit(flags.prefetch, meta);
        } else {
            self.count(true, flags.prefetch, meta);
        }
        if state == State::Uncached && !flags.prefetch {
            self.slab.unlink(i);
            self.destroy(i);
        } else if !flags.prefetch || to != state {
            self.slab.unlink(i);
            self.enter(i, to);
        } else {
            self.touched_in_place(i);
        }
    }

    /// 2.2 hit on a ghost header: the data allocation runs arc_adapt (which records the
    /// ghost-hit bytes), then arc_access.
    pub(super) fn ghost_22(&mut self, i: u32, info: BlockInfo, flags: ReadFlags, now: Nanos) {
        let _ = info;
        let g = self.slab.hdrs[i as usize];
        // arc_hdr_alloc_abd -> arc_get_data_impl -> arc_adapt sees size before the data.
        self.adapt(g.asize() as u64, Some(g.state), g.is_meta());
        let h = &mut self.slab.hdrs[i as usize];
        let was_prefetch = h.flags & F_PREFETCH != 0;
        if flags.prefetch {
            h.flags |= F_PREFETCH;
        } else {
            h.flags &= !F_PREFETCH;
        }
        h.access = now;
        let meta = h.is_meta();
        let to = match h.state {
            State::MruGhost => {
                self.st.mru_ghost_hits += 1;
                if was_prefetch {
                    State::Mru
                } else {
                    State::Mfu
                }
            }
            State::MfuGhost => {
                self.st.mfu_ghost_hits += 1;
                State::Mfu
            }
            // Invariant: `Arc::access` calls ghost_22 only for a header on a ghost list.
            _ => unreachable!(),
        };
        self.slab.unlink(i);
        self.enter(i, to);
        self.count(false, flags.prefetch, meta);
    }

    /// The uncached state: prefetched uncached buffers are flushed once past their
    /// minimum life.
    pub(super) fn flush_uncached(&mut self, now: Nanos) {
        for meta in [T_DATA, T_META] {
            loop {
                let t = self.slab.lists[list_index(State::Uncached, meta)].tail;
                if t == NIL || self.slab.hdrs[t as usize].access + ARC_MIN_PREFETCH > now {
                    break;
                }
                self.slab.unlink(t);
                self.destroy(t);
            }
        }
    }
}
