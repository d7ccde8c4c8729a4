//! [`ArcAdaptation::MetaBalance`](crate::config::ArcAdaptation::MetaBalance) (2.2): no
//! `arc_p`; the metadata, MRU-data and MRU-metadata shares of the ARC adapt to ghost hits
//! at every `arc_evict()` pass, and eviction takes each list down to its share.
//!
//! # Mechanism (`module/zfs/arc.c` at zfs-2.2.0, PR #14359, a8d83e2a24)
//!
//! `arc_meta`, `arc_pd`, `arc_pm` are fixed-point fractions (2^32 = 1) adjusted at every
//! `arc_evict()` pass by `arc_evict_adj()` from the ghost-hit bytes since the previous
//! pass, against the ghost caps computed at the end of the previous pass; eviction order
//! MRU metadata, MFU metadata, MRU data, MFU data; each ghost list capped at half of the
//! other three live lists; `arc_adapt()` only grows `c` by `max(bytes, 128 KiB)`.
//! (`arc_access()` of 2.2 and its uncached state are in `access.rs`.)
//!
//! # Simplifications (numbered across the ARC's modules)
//!
//! 9. The 2.2 `arc_evict_adj()` result is clamped to [0, 2^32]; C would wrap.

use super::limits::TWO_MAXBLOCKS;
use super::slab::State;
use super::{Arc, T_DATA, T_META};
use crate::sim::time::Nanos;

/// SPA_OLD_MAXBLOCKSIZE: 2.2 arc_adapt grows c by at least this.
const OLD_MAXBLOCKSIZE: u64 = 128 << 10;
/// Fixed-point one for arc_meta / arc_pd / arc_pm.
pub(super) const FRAC_ONE: u64 = 1 << 32;

impl Arc {
    /// 2.2 arc_access of a ghost header: its bytes count as a ghost hit of its list for
    /// the next arc_evict pass (`from`: where the header comes from; None: a new block).
    pub(super) fn note_ghost_hit(&mut self, from: Option<State>, meta: bool, bytes: u64) {
        match from {
            Some(State::MruGhost) => self.ghost_hit_bytes[meta as usize] += bytes,
            Some(State::MfuGhost) => self.ghost_hit_bytes[2 + meta as usize] += bytes,
            _ => {}
        }
    }

    /// 2.2 arc_adapt: grow c only.
    pub(super) fn adapt_22(&mut self, bytes: u64) {
        if self.c >= self.c_max {
            return;
        }
        if self.size() + TWO_MAXBLOCKS >= self.c {
            self.c = (self.c + bytes.max(OLD_MAXBLOCKSIZE)).min(self.c_max);
        }
    }

    /// 2.2 arc_evict.
    pub(super) fn evict_22(&mut self, now: Nanos) {
        let mut mrud = self.state_size(State::Mru, T_DATA) as i64;
        let mut mrum = self.state_size(State::Mru, T_META) as i64;
        let mut mfud = self.state_size(State::Mfu, T_DATA) as i64;
        let mut mfum = self.state_size(State::Mfu, T_META) as i64;
        let m = mrum + mfum;
        let t = mrud + mfud + m;
        let [grd, grm, gfd, gfm] = self.ghost_hit_bytes;
        self.ghost_hit_bytes = [0; 4];
        let [gsrd, gsrm, gsfd, gsfm] = self.ghost_caps;
        self.meta = evict_adj(self.meta, gsrd + gsrm + gsfd + gsfm, grm + gfm, grd + gfd, self.meta_balance);
        self.pd = evict_adj(self.pd, gsrd + gsfd, grd, gfd, 100);
        self.pm = evict_adj(self.pm, gsrm + gsfm, grm, gfm, 100);

        let c = self.c as i64;
        let mut asize = self.size() as i64;
        let mut wt = t - (asize - c);
        let mut total = 0i64;
        // MRU metadata down to wt * meta * pm.
        let w = (wt * ((self.meta as u128 * self.pm as u128) >> 48) as i64) >> 16;
        let b = self.evict_impl(State::Mru, T_META, (asize - c).min(mrum - w), now) as i64;
        total += b;
        mrum -= b;
        asize -= b;
        // All metadata down to wt * meta (from MFU).
        let w = (wt * (self.meta >> 16) as i64) >> 16;
        let b = self.evict_impl(State::Mfu, T_META, (asize - c).min(m - w), now) as i64;
        total += b;
        mfum -= b;
        asize -= b;
        // MRU data down to the remainder * pd.
        wt -= m - total;
        let w = (wt * (self.pd >> 16) as i64) >> 16;
        let b = self.evict_impl(State::Mru, T_DATA, (asize - c).min(mrud - w), now) as i64;
        mrud -= b;
        asize -= b;
        // MFU data takes the rest.
        let b = self.evict_impl(State::Mfu, T_DATA, asize - c, now) as i64;
        mfud -= b;
        // Ghost caps: half of the other three live lists each.
        let caps = [
            (mrum + mfud + mfum) / 2,
            (mrud + mfud + mfum) / 2,
            (mrud + mrum + mfum) / 2,
            (mrud + mrum + mfud) / 2,
        ];
        for (k, (s, meta)) in [
            (State::MruGhost, T_DATA),
            (State::MruGhost, T_META),
            (State::MfuGhost, T_DATA),
            (State::MfuGhost, T_META),
        ]
        .into_iter()
        .enumerate()
        {
            let cap = caps[k].max(0);
            self.ghost_caps[k] = cap as u64;
            let e = self.lbytes(s, meta) as i64 - cap;
            self.evict_impl(s, meta, e, now);
        }
    }
}

/// 2.2 arc_evict_adj: moves a 2^32 fixed-point fraction up by `up` and down by
/// `down * 100 / balance` ghost-hit bytes relative to the ghost total, damped near the
/// extremes.
pub fn evict_adj(frac: u64, total: u64, up: u64, down: u64, balance: u64) -> u64 {
    if total < 8 || up + down == 0 {
        return frac;
    }
    let (mut up, mut down) = (up, down);
    if up + down >= total / 4 {
        let scale = (up + down) / (total / 8);
        up /= scale;
        down /= scale;
    }
    let hb = 64 - total.leading_zeros(); // highbit64
    let s = (64 - hb).min(32);
    let ofrac = FRAC_ONE - frac.min(FRAC_ONE);
    if frac >= 4 * ofrac {
        up /= frac / (2 * ofrac + 1);
    }
    let up = ((up as u128) << s) as u64 / (total >> (32 - s));
    if ofrac >= 4 * frac {
        down /= ofrac / (2 * frac + 1);
    }
    let down = ((down as u128) << s) as u64 / (total >> (32 - s));
    let down = down * 100 / balance;
    (frac + up).saturating_sub(down).min(FRAC_ONE)
}
