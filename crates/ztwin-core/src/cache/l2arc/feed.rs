//! The feed: one pass of `l2arc_feed_thread()`: `l2arc_hdr_limit_reached()`,
//! `l2arc_write_size()`, `l2arc_evict()` of the region ahead of the write hand, then
//! `l2arc_write_buffers()`, which walks the ARC's lists from their cold ends (hot ends
//! while the ARC is not warm) and writes eligible buffers to the device, and
//! `l2arc_write_interval()`. Theory (the feed, `l2arc_write_eligible()`, `l2arc_evict()`,
//! header limit, `l2arc_mfuonly`, persistent L2ARC, the 2.2.3 and 2.2.7 changes),
//! sources and simplifications: [`crate::cache::l2arc`]; what changed when: the release's
//! [`crate::config::L2arcFeatures`].
//!
//! These methods are the ARC's ([`Arc`]): the feed walks its lists and marks its headers.
//!
//! Every `expect` of the cache device here holds by construction: these methods run only
//! while a device is attached (the driver feeds, restarts and rebuilds only a pool whose
//! `cache_devices` is not empty, and `new_arc` attached those devices, `attach_l2arc` having
//! succeeded; a header has `F_L2` or is L2-only only while its device is attached; a packed location
//! names a device the ARC has, `attach_l2arc` having sized the packing for them).

use super::device::L2Ent;
use super::{L2Feed, BURST_SIZE_MAX, LOG_BLK_SIZE};
use crate::cache::arc::slab::{
    list_index, L2HeadRun, State, F_L2, F_L2CACHE, F_L2PF, F_LCOPY, F_PREFETCH, NIL,
};
use crate::cache::arc::{Arc, T_DATA, T_META};
use crate::sim::time::{Nanos, MS, SEC};

/// Headers a scan walks in a run of `count` ineligible headers (`bytes` of lsize) when it
/// stops inside it, `room` bytes of headroom being left at its start: those within the
/// headroom and the one that passed it, as many as the run's bytes say (exact when its
/// blocks have one size; `cache::l2arc` simplification 9).
fn headers_passed_in_run(room: u64, count: u32, bytes: u64) -> u64 {
    let within = (u128::from(room) * u128::from(count) / u128::from(bytes.max(1))) as u64;
    (within + 1).min(u64::from(count))
}

/// Ring entries ahead of the one being evicted whose lookups are prefetched.
const EVICT_LOOKAHEAD: u64 = 16;

impl Arc {
    /// l2arc_hdr_limit_reached (2.1+; memory pressure is not modelled).
    pub(super) fn l2_hdr_limit_reached(&self) -> bool {
        let l2 = self.l2.as_ref().expect("a cache device is attached (module note)");
        let s = self.l2_hdr_size();
        let Some(pct) = l2.s.meta_percent else { return false };
        let base = if self.arc_warm { self.c } else { self.c_max };
        (l2.s.features.hdr_limit_meta_limit && s > self.meta_limit * 3 / 4) || s > base * pct / 100
    }

    /// l2arc_get_write_rate (master's DWPD feed, d1f290f1ea) of device `d`:
    /// `l2arc_write_max`, or, once the device has wrapped, with `l2arc_dwpd_limit` > 0
    /// and the pool's cache devices' capacity at least twice `arc_c_max`
    /// (L2ARC_PERSIST_THRESHOLD), the smaller of it and the device's DWPD rate
    /// (`l2arc_dwpd_rate_limit`).
    fn l2_write_rate(&mut self, d: usize, now: Nanos) -> u64 {
        let c_max = self.c_max;
        let l2 = self.l2.as_mut().expect("a cache device is attached (module note)");
        let limit = l2.s.dwpd_limit.unwrap_or(0);
        // spa_l2arc_info.l2arc_total_capacity: the pool's devices.
        let total_capacity = l2.total_capacity();
        if !l2.devs[d].dev.first && limit > 0 && total_capacity >= c_max.saturating_mul(2) {
            let capacity = l2.devs[d].dev.capacity;
            l2.devs[d].dwpd.rate_limit(capacity, limit, now / SEC).min(l2.s.write_max)
        } else {
            l2.s.write_max
        }
    }

    /// l2arc_write_size for device `d`: the bytes to write, and with master's DWPD feed
    /// the interval before the next pass (`l2arc_write_size(dev, &interval)`: a rate above
    /// L2ARC_BURST_SIZE_MAX is fed in `ceil(rate / 64 MiB)` passes a second).
    fn l2_write_size(&mut self, d: usize, now: Nanos) -> (u64, Option<Nanos>) {
        let (base, interval) =
            match self.l2.as_ref().expect("a cache device is attached (module note)").s.dwpd_limit {
                Some(_) => {
                    let rate = self.l2_write_rate(d, now);
                    if rate > BURST_SIZE_MAX {
                        let per_sec = rate.div_ceil(BURST_SIZE_MAX).max(1);
                        (rate / per_sec, Some(SEC / per_sec))
                    } else {
                        (rate, Some(SEC))
                    }
                }
                None => {
                    let s = &self.l2.as_ref().expect("a cache device is attached (module note)").s;
                    (s.write_max + if self.arc_warm { 0 } else { s.write_boost }, None)
                }
            };
        (self.l2_write_size_capped(d, base), interval)
    }

    /// The release's caps on the write size `size` (l2arc_write_max + l2arc_write_boost,
    /// or the DWPD feed's burst) for device `d`.
    fn l2_write_size_capped(&self, d: usize, mut size: u64) -> u64 {
        let l2 = self.l2.as_ref().expect("a cache device is attached (module note)");
        let (s, dev) = (&l2.s, &l2.devs[d].dev);
        if !s.features.evict_rerun {
            // 0.8 has no check; keep the ring sane on tiny devices (see l2arc_evict 0.8).
            return size.min(dev.capacity / 2);
        }
        size += dev.log_blk_overhead(size);
        let len = dev.capacity;
        if s.features.quarter_cap {
            size = dev.asize(size.min(len / 4));
        } else if size > len {
            // 2.1 .. 2.2.2: both tunables reset to the default (the model does not persist
            // the reset across feeds).
            let dw = s.features.write_default;
            size = dw + if self.arc_warm || s.dwpd_limit.is_some() { 0 } else { dw };
            size += dev.log_blk_overhead(size);
            size = size.min(len);
        }
        size
    }

    /// One pass of the releases' one L2ARC feed thread at `now`: `l2arc_dev_get_next()`
    /// picks the device (round-robin, see [`super::attached`]), then l2arc_write_size,
    /// l2arc_evict and l2arc_write_buffers on that device, and l2arc_write_interval. The
    /// driver charges `asize_written` bytes of writes to cache device `feed.dev` and calls
    /// again at `next_feed_at`.
    pub fn l2arc_feed(&mut self, now: Nanos) -> L2Feed {
        let Some(l2) = self.l2.as_mut() else {
            return L2Feed { next_feed_at: now + SEC, ..Default::default() };
        };
        // The device is picked before the header limit is checked: an aborted pass moves
        // the rotation on too.
        let d = l2.dev_get_next();
        self.l2arc_feed_dev(d, now)
    }

    /// One pass of a feed thread at `now` on cache device `d`: l2arc_hdr_limit_reached,
    /// l2arc_write_size, l2arc_evict, l2arc_write_buffers and the interval. The pass of
    /// [`Arc::l2arc_feed`] once it has picked `d`, and master's per-device thread's pass
    /// (b525525b44, `l2arc_feed_thread(dev)`).
    pub fn l2arc_feed_dev(&mut self, d: usize, now: Nanos) -> L2Feed {
        if self.l2.as_ref().is_none_or(|l| d >= l.devs.len()) {
            return L2Feed { next_feed_at: now + SEC, dev: d, ..Default::default() };
        }
        if self.l2_hdr_limit_reached() {
            self.st.l2_abort_lowmem += 1;
            return L2Feed { next_feed_at: now + SEC, dev: d, ..Default::default() };
        }
        self.st.l2_feeds += 1;
        let (size, dwpd_interval) = self.l2_write_size(d, now);
        let evicted = self.l2_evict(d, size, now);
        let mut feed = self.l2_write_buffers(d, size, now);
        feed.headers_evicted = evicted;
        feed.target = size;
        feed.fed = true;
        feed.dev = d;
        let l2 = self.l2.as_mut().expect("a cache device is attached (module note)");
        let s = &l2.s;
        let wrote = feed.asize_written;
        let interval = match dwpd_interval {
            // l2arc_write_interval.
            None if s.feed_again && wrote > size / 2 => s.feed_min_ms * MS,
            None => s.feed_secs * SEC,
            // The DWPD feed's interval, adjusted by what the pass wrote.
            Some(_) if wrote == 0 => s.feed_secs * SEC,
            Some(iv) if wrote < size => (u128::from(iv) * u128::from(wrote) / u128::from(size)) as Nanos,
            Some(iv) => iv,
        };
        // Writes for DWPD rate limiting (l2ad_dwpd_writes += write_asize).
        l2.devs[d].dwpd.writes = l2.devs[d].dwpd.writes.saturating_add(wrote);
        feed.next_feed_at = now + interval;
        feed
    }

    /// Evicts the entry at the front of device `d`'s ring; true if it was live (on the
    /// device's list, so `l2arc_evict()` visits it).
    fn l2_evict_front(&mut self, d: usize) -> bool {
        let l2 = self.l2.as_mut().expect("a cache device is attached (module note)");
        let seq = l2.devs[d].dev.ring.head;
        let e = *l2.devs[d].dev.ring.get(seq);
        // The ring is evicted in order: the index and header-table slots of an entry a
        // little ahead start coming into the CPU caches (changes nothing).
        let ahead = seq + EVICT_LOOKAHEAD;
        if ahead < l2.devs[d].dev.ring.tail {
            let k = l2.devs[d].dev.ring.get(ahead).key;
            l2.prefetch(k);
            self.slab.prefetch(k);
        }
        if !e.is_dead() {
            if e.is_log() {
                l2.lb_count -= 1;
                l2.lb_asize -= e.psize() as u64;
                l2.devs[d].dev.alloc -= e.psize() as u64;
            } else {
                l2.kill(d, seq);
                match self.slab.find(e.key) {
                    Some(i) => {
                        self.st.l2_evict_l1cached += 1;
                        self.slab.hdrs[i as usize].flags &= !(F_L2 | F_L2PF);
                        self.slab.l2_eligibility_changed(i);
                    }
                    None => l2.l2only -= 1,
                }
            }
        }
        self.l2.as_mut().expect("a cache device is attached (module note)").devs[d].dev.ring.pop_front();
        !e.is_dead()
    }

    /// Evicts device `d`'s ring entries with addresses in [hand, taddr); returns the live
    /// ones visited.
    fn l2_evict_range(&mut self, d: usize, taddr: u64) -> u64 {
        let mut visited = 0;
        loop {
            let l2 = self.l2.as_ref().expect("a cache device is attached (module note)");
            let Some(e) = l2.devs[d].dev.ring.front() else { break };
            let a = (e.daddr() as u64) << l2.devs[d].dev.ashift;
            if a >= taddr || a < l2.devs[d].dev.hand {
                break;
            }
            visited += u64::from(self.l2_evict_front(d));
        }
        visited
    }

    /// l2arc_evict(dev, distance, B_FALSE) of device `d`, per release, at `now`; returns
    /// the live entries it visited.
    fn l2_evict(&mut self, d: usize, distance: u64, now: Nanos) -> u64 {
        let l2 = self.l2.as_mut().expect("a cache device is attached (module note)");
        let end = l2.devs[d].dev.capacity;
        if !l2.s.features.evict_rerun {
            if l2.devs[d].dev.first {
                return 0;
            }
            let taddr = if l2.devs[d].dev.hand >= end.saturating_sub(2 * distance) {
                end
            } else {
                l2.devs[d].dev.hand + distance
            };
            return self.l2_evict_range(d, taddr);
        }
        let mut visited = 0;
        loop {
            let l2 = self.l2.as_mut().expect("a cache device is attached (module note)");
            let rerun = l2.devs[d].dev.hand + distance > end;
            let taddr = if rerun { end } else { l2.devs[d].dev.hand + distance };
            if !l2.devs[d].dev.first {
                l2.devs[d].dev.evict = l2.devs[d].dev.evict.max(taddr);
                let ev = l2.devs[d].dev.evict;
                visited += self.l2_evict_range(d, ev);
            }
            if !rerun {
                break;
            }
            let l2 = self.l2.as_mut().expect("a cache device is attached (module note)");
            l2.devs[d].dev.hand = 0;
            l2.devs[d].dev.evict = 0;
            l2.devs[d].dev.first = false;
            // d1f290f1ea: a new DWPD period at every wrap.
            l2.devs[d].dwpd.wrapped(now / SEC);
        }
        visited
    }

    /// l2arc_write_buffers to device `d` at `now`: four passes over the ARC lists. Which
    /// headers are eligible does not depend on the device (`l2arc_write_eligible()`: the
    /// pool, no L2 copy on any device, no I/O in progress, ARC_FLAG_L2CACHE), so the
    /// scan memos of the lists (`L2Run`, `L2HeadRun`) serve every device.
    fn l2_write_buffers(&mut self, d: usize, target: u64, now: Nanos) -> L2Feed {
        let mut feed = L2Feed::default();
        let (f, mfuonly, headroom_mult, hboost) = {
            let s = &self.l2.as_ref().expect("a cache device is attached (module note)").s;
            (s.features, s.mfuonly, s.headroom, s.headroom_boost)
        };
        // A headroom of 0 scans whole lists with the persistent L2ARC's feed (0.8 writes
        // nothing).
        let headroom_limits = !f.persistent || headroom_mult != 0;
        let from_head = !self.arc_warm;
        let mut headroom = target * headroom_mult;
        if self.compressed {
            headroom = headroom * hboost / 100;
        }
        // The persistent L2ARC reserves room for the pending log block in every fit check.
        let lb_reserve = if f.persistent { LOG_BLK_SIZE } else { 0 };
        let first_seq =
            self.l2.as_ref().expect("a cache device is attached (module note)").devs[d].dev.ring.tail;
        feed.start = self.l2.as_ref().expect("a cache device is attached (module note)").devs[d].dev.hand;
        let mut write_asize = 0u64;
        let mut write_psize = 0u64;
        let mut full = false;
        let passes = [(State::Mfu, T_META), (State::Mru, T_META), (State::Mfu, T_DATA), (State::Mru, T_DATA)];
        for (pass, &(state, meta)) in passes.iter().enumerate() {
            if (mfuonly == 1 && (pass == 1 || pass == 3)) || (mfuonly > 1 && pass == 3) {
                continue;
            }
            let li = list_index(state, meta);
            let mut passed = 0u64;
            let mut cur = if from_head { self.slab.lists[li].head } else { self.slab.lists[li].tail };
            // Scans from the tail resume after the run they left ineligible (see L2Run);
            // scans from the head pass the run the last one left (see L2HeadRun).
            let memo = self.l2run_memo && !from_head;
            let hmemo = self.l2run_memo && from_head;
            let old = self.slab.l2hrun[li];
            // The headers this scan leaves ineligible above the old run (`pre`) and below
            // it (`post`), and whether it reached the run.
            let (mut pre, mut post) = (L2HeadRun::default(), L2HeadRun::default());
            let mut reached = false;
            if memo && self.slab.l2run[li].count > 0 {
                let r = self.slab.l2run[li];
                passed = r.bytes;
                if headroom_limits && passed > headroom {
                    // The scan would stop inside the run, having written nothing.
                    feed.headers_scanned += headers_passed_in_run(headroom, r.count, r.bytes);
                    continue;
                }
                feed.headers_scanned += u64::from(r.count);
                cur = self.slab.hdrs[r.last as usize].prev;
                #[cfg(test)]
                {
                    self.l2run_resumed += 1;
                }
            }
            while cur != NIL {
                if hmemo && !reached && old.count > 0 && cur == old.first {
                    // Every member is ineligible: the walk through them writes nothing
                    // and only counts their bytes.
                    reached = true;
                    let before = passed;
                    passed += old.bytes;
                    #[cfg(test)]
                    {
                        self.l2hrun_passed += 1;
                    }
                    if headroom_limits && passed > headroom {
                        // The walk stops inside the run.
                        feed.headers_scanned +=
                            headers_passed_in_run(headroom.saturating_sub(before), old.count, old.bytes);
                        break;
                    }
                    feed.headers_scanned += u64::from(old.count);
                    cur = self.slab.hdrs[old.last as usize].next;
                    continue;
                }
                let h = self.slab.hdrs[cur as usize];
                let nxt = if from_head { h.next } else { h.prev };
                feed.headers_scanned += 1;
                passed += h.lsize as u64;
                if headroom_limits && passed > headroom {
                    break;
                }
                if h.flags & F_L2 != 0 || h.flags & F_L2CACHE == 0 {
                    if memo {
                        self.slab.join_l2run(cur);
                    }
                    if hmemo {
                        self.slab.flag_l2hrun(cur);
                        if reached { &mut post } else { &mut pre }.push_back(cur, h.lsize);
                    }
                    cur = nxt;
                    continue;
                }
                let l2 = self.l2.as_mut().expect("a cache device is attached (module note)");
                let dev = &mut *l2.devs[d].dev;
                let psize = h.psize as u64;
                let asize = dev.asize(psize);
                if write_asize + asize + lb_reserve > target {
                    full = true;
                    break;
                }
                let daddr = dev.hand;
                debug_assert!(daddr + asize <= dev.capacity, "L2 write past the end of the device");
                let prefetch = h.flags & F_PREFETCH != 0;
                let seq = dev.ring.push(L2Ent::block(
                    h.key,
                    (daddr >> dev.ashift) as u32,
                    h.lsize,
                    h.psize,
                    prefetch,
                ));
                dev.alloc += asize;
                dev.hand += asize;
                l2.lsize_sum += h.lsize as u64;
                l2.psize_sum += psize;
                write_asize += asize;
                write_psize += psize;
                feed.buffers += 1;
                // l2arc_write_buffers writes b_pabd as it is when the ARC holds the block
                // as stored (compressed ARC, or a block stored uncompressed) and psize
                // fills whole sectors of the cache device; otherwise
                // l2arc_apply_transforms copies it into an asize buffer, compressing it
                // again first when the ARC holds it uncompressed (F_LCOPY).
                if h.flags & F_LCOPY != 0 && h.psize < h.lsize {
                    feed.compress_bytes += h.lsize as u64;
                    feed.copy_bytes += asize;
                } else if asize != psize {
                    feed.copy_bytes += asize;
                }
                let hm = &mut self.slab.hdrs[cur as usize];
                hm.flags = (hm.flags & !F_L2PF) | F_L2 | if prefetch { F_L2PF } else { 0 };
                hm.l2seq = l2.loc(d, seq);
                if memo {
                    self.slab.join_l2run(cur);
                }
                if hmemo {
                    self.slab.flag_l2hrun(cur);
                    if reached { &mut post } else { &mut pre }.push_back(cur, h.lsize);
                }
                let l2 = self.l2.as_mut().expect("a cache device is attached (module note)");
                let dev = &mut *l2.devs[d].dev;
                if dev.log_entries > 0 {
                    dev.log_ent_idx += 1;
                    if dev.log_ent_idx == dev.log_entries {
                        // l2arc_log_blk_commit: the log block follows its payload.
                        let lb = dev.log_blk_asize();
                        let daddr = dev.hand;
                        dev.ring.push(L2Ent::log_block(
                            (daddr >> dev.ashift) as u32,
                            dev.log_entries as u32,
                            lb as u32,
                        ));
                        dev.hand += lb;
                        dev.alloc += lb;
                        dev.log_ent_idx = 0;
                        l2.lb_count += 1;
                        l2.lb_asize += lb;
                        write_asize += lb;
                        feed.log_blocks += 1;
                        feed.log_bytes += lb;
                        self.st.l2_log_blk_writes += 1;
                        self.st.l2_write_bytes += lb;
                    }
                }
                cur = nxt;
            }
            if hmemo {
                // The headers visited from the head, all ineligible now, are one run with
                // the old one when the scan reached it; else they are the run, and the old
                // one (further down, not adjacent) is forgotten.
                let run = if reached {
                    L2HeadRun {
                        count: pre.count + old.count + post.count,
                        bytes: pre.bytes + old.bytes + post.bytes,
                        first: if pre.count > 0 { pre.first } else { old.first },
                        last: if post.count > 0 { post.last } else { old.last },
                    }
                } else {
                    if old.count > 0 {
                        self.slab.reset_l2hrun(li);
                    }
                    pre
                };
                self.slab.l2hrun[li] = run;
            }
            if full {
                break;
            }
        }
        self.l2.as_mut().expect("a cache device is attached (module note)").index_feed(d, first_seq);
        if feed.buffers > 0 {
            self.st.l2_writes_sent += 1;
            self.st.l2_writes_done += 1;
            self.st.l2_write_bytes += write_psize;
        }
        let l2 = self.l2.as_mut().expect("a cache device is attached (module note)");
        if !f.evict_rerun && l2.devs[d].dev.hand >= l2.devs[d].dev.capacity.saturating_sub(target) {
            // 0.8: bump the hand to the start when approaching the end (the DWPD what-if's
            // new period starts at this wrap).
            l2.devs[d].dev.hand = 0;
            l2.devs[d].dev.first = false;
            l2.devs[d].dwpd.wrapped(now / SEC);
        }
        feed.bytes_written = write_psize;
        feed.asize_written = write_asize;
        feed
    }
}
