//! [`ArcAdaptation::ArcP`](crate::config::ArcAdaptation::ArcP) (0.6, 0.8, 2.1): the MRU
//! target `arc_p`, how `arc_adapt()` and `arc_get_data_impl()` move it and `arc_c`, and
//! how `arc_adjust()` (renamed `arc_evict()` in 2.1) evicts towards them.
//!
//! # Mechanism (`module/zfs/arc.c` at zfs-0.8.6 / zfs-2.1.16; 0.6 at zfs-0.6.1)
//!
//! - **0.8 / 2.1**: `arc_adapt()` (byte-valued `arc_p`, grown on MRU-ghost hits and shrunk
//!   on MFU-ghost hits with the ghost-size ratio as multiplier; `arc_c` grows by the
//!   allocation while `size >= c - 32 MiB`), `arc_get_data_impl()` (arc_p growth on
//!   anonymous allocations), `arc_adjust()` (renamed `arc_evict()` in 2.1): first
//!   `arc_adjust_meta_balanced()` when `arc_meta_used > arc_meta_limit`, then MRU down
//!   towards `arc_p`, then MFU, choosing the type with the older tail
//!   (`arc_adjust_type()`) unless `arc_meta_used <= arc_meta_min`, then ghost trimming
//!   (`mru + mru_ghost <= c`, `mru_ghost + mfu_ghost <= c`). `arc_init()` /
//!   `arc_tuning_update()` for the limits (`limits.rs`). 2.1 differs only in the initial
//!   `arc_c` (c_min instead of c_max), the `p < c/2` condition on the two p growth rules
//!   (`ArcFeatures::p_growth_guard`), and how a small `zfs_arc_max` lowers `c_min` (2.1
//!   `arc_init`; 0.8 ignores such a `zfs_arc_max`).
//! - **0.6** (the illumos ARC of 2012 that FreeBSD 8.3-9.x shipped; arc.c at zfs-0.6.1,
//!   line for line the same): 0.8's `arc_access()`, `arc_adapt()` and arc_p growth on
//!   anonymous allocations (no 2.1.7 guard), `arc_c` starting at `c_max`,
//!   `arc_meta_limit` = `c_max / 4`, no compressed ARC (see simplification 10 for its
//!   eviction).
//!
//! # Simplifications (numbered across the ARC's modules)
//!
//! 8. `arc_adjust_meta_balanced()` restarts up to `zfs_arc_meta_adjust_restarts` (4096)
//!    times with the stale `meta_used` it was given, as in the source (so one pass can
//!    evict far more than the excess); the model stops restarting once a data pass and a
//!    metadata pass both evict nothing, which cannot change the outcome.
//! 10. 0.6 evicts on each allocation (`arc_get_data_buf`, see
//!     `ArcFeatures::evicts_on_allocation` and `Arc::evict_on_allocation`) and its
//!     `arc_adjust()` runs once a second; the model keeps the ARC at `arc_c` on each
//!     allocation (0.6 lets it pass by one buffer), trims the ghost lists after each, and
//!     runs 0.8's `arc_adjust()` at once when the chosen list could not give enough.

use super::limits::TWO_MAXBLOCKS;
use super::slab::{list_index, State, NIL};
use super::{Arc, T_DATA, T_META};
use crate::sim::time::Nanos;

/// zfs_arc_meta_adjust_restarts default (0.8/2.1).
const META_ADJUST_RESTARTS: u32 = 4096;
/// arc_p_min_shift default (0.8/2.1).
const P_MIN_SHIFT: u32 = 4;

impl Arc {
    /// arc_p may grow past arc_c / 2 (no 2.1.7 guard).
    fn p_grows_past_half(&self) -> bool {
        !self.f.p_growth_guard
    }

    /// 0.6 .. 2.1 arc_adapt: arc_p on ghost hits, arc_c (and arc_p for anon) growth.
    /// `ghost`: the state the header comes from (None: a new block).
    pub(super) fn adapt_08(&mut self, bytes: u64, ghost: Option<State>) {
        let p_min = self.c >> P_MIN_SHIFT;
        let mrug = self.sbytes(State::MruGhost);
        let mfug = self.sbytes(State::MfuGhost);
        match ghost {
            Some(State::MruGhost) => {
                // zfs_arc_p_dampener_disable = 1: the multiplier is not capped at 10.
                let mult = if mrug >= mfug { 1 } else { mfug / mrug };
                self.p = (self.c - p_min).min(self.p + bytes * mult);
            }
            Some(State::MfuGhost) => {
                let mult = if mfug >= mrug { 1 } else { mrug / mfug };
                let delta = (bytes * mult).min(self.p);
                self.p = p_min.max(self.p - delta);
            }
            _ => {}
        }
        if self.c >= self.c_max {
            return;
        }
        if self.size() >= self.c.saturating_sub(TWO_MAXBLOCKS) {
            self.c += bytes;
            if self.c > self.c_max {
                self.c = self.c_max;
            } else if ghost.is_none() && (self.p_grows_past_half() || self.p < self.c >> 1) {
                self.p += bytes;
            }
            if self.p > self.c {
                self.p = self.c;
            }
        }
    }

    /// arc_get_data_impl: anonymous data of `bytes` outgrowing arc_p while below c grows
    /// p (after [`Arc::adapt_08`] of the new block).
    pub(super) fn grow_p_on_alloc(&mut self, bytes: u64) {
        let size_after = self.size() + bytes;
        let mru_anon = self.ssize(State::Mru) + bytes;
        if size_after < self.c && mru_anon > self.p && (self.p_grows_past_half() || self.p < self.c >> 1) {
            self.p = self.c.min(self.p + bytes);
        }
    }

    /// arc_adjust_type: the type whose tail header is older.
    fn older_type(&self, state: State) -> bool {
        let d = self.slab.lists[list_index(state, T_DATA)].tail;
        let m = self.slab.lists[list_index(state, T_META)].tail;
        match (d == NIL, m == NIL) {
            (true, true) => T_DATA,
            (true, false) => T_META,
            (false, true) => T_DATA,
            (false, false) => {
                if self.slab.hdrs[d as usize].access < self.slab.hdrs[m as usize].access {
                    T_DATA
                } else {
                    T_META
                }
            }
        }
    }

    /// 0.8 arc_adjust_meta_only (`zfs_arc_meta_strategy = 0`): the metadata excess (from
    /// the `meta_used` sampled before, for both lists) from MRU down to `arc_p` (the
    /// source adds the anonymous state's size, which reads leave empty), then from MFU
    /// down to `arc_c - arc_p`. No data is evicted and nothing restarts.
    fn adjust_meta_only(&mut self, meta_used: u64, now: Nanos) -> u64 {
        let excess = meta_used as i64 - self.meta_limit as i64;
        let target = excess.min(self.ssize(State::Mru) as i64 - self.p as i64);
        let mut total = self.evict_impl(State::Mru, T_META, target, now);
        let target = excess.min(self.ssize(State::Mfu) as i64 - (self.c as i64 - self.p as i64));
        total += self.evict_impl(State::Mfu, T_META, target, now);
        total
    }

    /// 0.8 arc_adjust_meta_balanced (strategy balanced).
    fn adjust_meta_balanced(&mut self, meta_used: u64, now: Nanos) -> u64 {
        // Every second restart asks the upper layers to prune (`arc_prune_async`,
        // zfs_arc_meta_prune 10000): META_ADJUST_RESTARTS / 2 calls, as the stale
        // meta_used keeps the loop going to its end.
        self.st.arc_prune += u64::from(META_ADJUST_RESTARTS / 2);
        let mut total = 0u64;
        let mut ty = T_DATA;
        let mut restarts = META_ADJUST_RESTARTS;
        let mut idle_passes = 0;
        let limit = self.meta_limit as i64;
        loop {
            let mut pass = 0u64;
            let mut adj = meta_used as i64 - limit;
            for s in [State::Mru, State::Mfu] {
                let have = self.lbytes(s, ty) as i64;
                if adj > 0 && have > 0 {
                    let delta = have.min(adj);
                    pass += self.evict_impl(s, ty, delta, now);
                    if s == State::Mru {
                        adj -= delta;
                    }
                }
            }
            adj = meta_used as i64 - limit;
            for s in [State::MruGhost, State::MfuGhost] {
                let have = self.lbytes(s, ty) as i64;
                if adj > 0 && have > 0 {
                    let delta = have.min(adj);
                    pass += self.evict_impl(s, ty, delta, now);
                    adj -= delta;
                }
            }
            total += pass;
            if meta_used as i64 <= limit {
                break;
            }
            // The source keeps restarting with the stale meta_used; once a data and a
            // metadata pass both evict nothing, further restarts cannot either.
            idle_passes = if pass == 0 { idle_passes + 1 } else { 0 };
            ty = !ty;
            if restarts == 0 || idle_passes >= 2 {
                break;
            }
            restarts -= 1;
        }
        total
    }

    /// Evicts `target` from `state`, older type first unless meta_used <= arc_meta_min,
    /// spilling into the other type.
    fn adjust_state_08(&mut self, state: State, target: i64, ameta: u64, now: Nanos) {
        let first = if self.older_type(state) == T_META && ameta > self.meta_min { T_META } else { T_DATA };
        let b = self.evict_impl(state, first, target, now);
        self.evict_impl(state, !first, target - b as i64, now);
    }

    /// 0.8 arc_adjust / 2.1 arc_evict.
    pub(super) fn adjust_08(&mut self, now: Nanos) {
        // Sampled once before the metadata pass; the MRU step uses these stale values.
        let asize = self.size() as i64;
        let ameta = self.meta_used();
        if ameta > self.meta_limit {
            if self.meta_only {
                self.adjust_meta_only(ameta, now);
            } else {
                self.adjust_meta_balanced(ameta, now);
            }
        }
        let c = self.c as i64;
        let target = (asize - c).min(self.ssize(State::Mru) as i64 + ameta as i64 - self.p as i64);
        self.adjust_state_08(State::Mru, target, ameta, now);
        let asize = self.size() as i64;
        let ameta = self.meta_used();
        self.adjust_state_08(State::Mfu, asize - c, ameta, now);
        self.adjust_ghosts_08(now);
    }

    /// arc_adjust's ghost lists: mru + mru_ghost <= c, mru_ghost + mfu_ghost <= c.
    pub(super) fn adjust_ghosts_08(&mut self, now: Nanos) {
        let c = self.c as i64;
        let target = self.ssize(State::Mru) as i64 + self.sbytes(State::MruGhost) as i64 - c;
        let b = self.evict_impl(State::MruGhost, T_DATA, target, now);
        self.evict_impl(State::MruGhost, T_META, target - b as i64, now);
        let target = self.sbytes(State::MruGhost) as i64 + self.sbytes(State::MfuGhost) as i64 - c;
        let b = self.evict_impl(State::MfuGhost, T_DATA, target, now);
        self.evict_impl(State::MfuGhost, T_META, target - b as i64, now);
    }
}
