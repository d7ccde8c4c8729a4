//! Device loss, export and the persistent-L2ARC rebuild (`l2arc_evict(dev, 0, B_TRUE)`,
//! `l2arc_rebuild()`, `l2arc_log_blk_restore()`, `l2arc_hdr_restore()`; 2.0+,
//! 77f6826b83). Theory (the persistent-L2ARC paragraph), sources and simplifications:
//! [`crate::cache::l2arc`].
//!
//! These methods are the ARC's ([`Arc`]): they drop or restore its headers' L2 copies.
//!
//! Every `expect` of the cache device here holds by construction: these methods run only
//! while a device is attached (the driver feeds, restarts and rebuilds only a pool whose
//! `cache_devices` is not empty, and `new_arc` attached those devices, `attach_l2arc` having
//! succeeded; a header has `F_L2` or is L2-only only while its device is attached; a packed location
//! names a device the ARC has, `attach_l2arc` having sized the packing for them).

use super::device::L2arcDeviceState;
use super::{L2Rebuild, L2arcDeviceConfig, HDR_L2ONLY_SIZE};
use crate::cache::arc::slab::{State, F_L2, F_L2PF};
use crate::cache::arc::Arc;

/// sizeof (l2arc_dev_hdr_phys_t): the device header read at the start of a rebuild.
const DEV_HDR_SIZE: u64 = 512;

impl Arc {
    /// Drops every header's L2 part on every device (l2arc_evict(dev, 0, B_TRUE) of each):
    /// L2-only headers are destroyed, headers in the ARC keep their L1 part. The devices
    /// are not touched.
    fn l2_forget_all(&mut self) {
        let Some(l2) = self.l2.as_mut() else { return };
        for d in 0..l2.devs.len() {
            let l2 = self.l2.as_mut().expect("a cache device is attached (module note)");
            let (head, tail) = (l2.devs[d].dev.ring.head, l2.devs[d].dev.ring.tail);
            for seq in head..tail {
                let l2 = self.l2.as_mut().expect("a cache device is attached (module note)");
                let e = *l2.devs[d].dev.ring.get(seq);
                if e.is_dead() || e.is_log() {
                    continue;
                }
                if let Some(i) = self.slab.find(e.key) {
                    self.slab.hdrs[i as usize].flags &= !(F_L2 | F_L2PF);
                    self.slab.l2_eligibility_changed(i);
                    self.st.l2_evict_l1cached += 1;
                }
            }
        }
        let l2 = self.l2.as_mut().expect("a cache device is attached (module note)");
        l2.index.clear();
        l2.l2only = 0;
        l2.lsize_sum = 0;
        l2.psize_sum = 0;
        l2.lb_count = 0;
        l2.lb_asize = 0;
    }

    /// The cache devices' content is lost (ephemeral devices after a VM move, or failed
    /// devices replaced by empty ones): every L2 header goes and the devices start
    /// empty, still attached.
    pub fn l2arc_drop_all(&mut self) {
        self.l2_forget_all();
        if let Some(l2) = self.l2.as_mut() {
            let persistent = l2.s.features.persistent;
            for d in &mut l2.devs {
                let cfg = L2arcDeviceConfig { capacity: d.dev.capacity, ashift: d.dev.ashift };
                *d.dev = L2arcDeviceState::new(&cfg, persistent);
            }
        }
    }

    /// Pool export or shutdown: the ARC forgets the devices (their L2 headers go) and
    /// hands back each device with its content, in the pool's order, to be given to
    /// [`Arc::l2arc_rebuild`] of the ARC built after the import/boot.
    pub fn l2arc_detach(&mut self) -> Vec<Box<L2arcDeviceState>> {
        self.l2_forget_all();
        let Some(l2) = self.l2.take() else { return Vec::new() };
        self.warm_on_evict = false;
        l2.devs
            .into_iter()
            .map(|d| {
                let mut dev = d.dev;
                // Unreachable entries were still written and logged: a rebuild may restore them.
                let (head, tail) = (dev.ring.head, dev.ring.tail);
                for seq in head..tail {
                    dev.ring.get_mut(seq).set_dead(false);
                }
                dev
            })
            .collect()
    }

    /// Persistent L2ARC (2.0+): puts `old` (from [`Arc::l2arc_detach`]) under attached
    /// device `d` and restores L2-only headers from its committed log blocks, newest
    /// first (l2arc_rebuild / l2arc_log_blk_restore / l2arc_hdr_restore), stopping when
    /// l2arc_hdr_limit_reached (l2_rebuild_lowmem). Blocks after the last committed log
    /// block are lost and the write hand resumes after that log block. In 0.8, or with
    /// l2arc_rebuild_enabled = 0, or on a device too small for log blocks, nothing is
    /// restored and the device starts empty. Must be called right after attach_l2arc,
    /// once per kept device (`l2arc_spa_rebuild_start()` starts one rebuild thread per
    /// device; the model runs them one after the other, in the pool's order, before the
    /// first feed: a block whose header another device's rebuild restored already is
    /// skipped, as `l2arc_hdr_restore()` skips a header already in the hash table).
    pub fn l2arc_rebuild(&mut self, d: usize, old: Box<L2arcDeviceState>) -> L2Rebuild {
        let mut r = L2Rebuild::default();
        let Some(l2) = self.l2.as_mut() else { return r };
        let Some(ld) = l2.devs.get_mut(d) else { return r };
        assert!(ld.dev.ring.len() == 0, "rebuild onto a used device");
        if !l2.s.features.persistent {
            return r;
        }
        r.reads = 1;
        r.read_bytes = ld.dev.asize(DEV_HDR_SIZE);
        if !l2.s.rebuild_enabled || old.log_entries == 0 || old.capacity != ld.dev.capacity {
            return r;
        }
        ld.dev = old;
        let ring = &ld.dev.ring;
        // Log blocks whose whole payload is still on the device, oldest first.
        let mut run = 0u64;
        let mut valid: Vec<u64> = Vec::new();
        for seq in ring.head..ring.tail {
            let e = ring.get(seq);
            if e.is_log() {
                if run >= e.lsize() as u64 || !valid.is_empty() {
                    valid.push(seq);
                }
                run = 0;
            } else {
                run += 1;
            }
        }
        // Everything is unreachable until restored.
        let (head, tail) = (ring.head, ring.tail);
        for seq in head..tail {
            ld.dev.ring.get_mut(seq).set_dead(true);
        }
        ld.dev.alloc = 0;
        let Some(&last) = valid.last() else {
            let cfg = L2arcDeviceConfig { capacity: ld.dev.capacity, ashift: ld.dev.ashift };
            *ld.dev = L2arcDeviceState::new(&cfg, true);
            return r;
        };
        // The open log block's payload is lost; the hand resumes after the newest log block.
        let dev = &mut ld.dev;
        let lb = *dev.ring.get(last);
        dev.ring.truncate(last + 1);
        dev.hand = ((lb.daddr() as u64) << dev.ashift) + lb.psize() as u64;
        dev.log_ent_idx = 0;
        dev.evict = dev.evict.max(dev.hand);
        for &lbseq in valid.iter().rev() {
            if self.l2_hdr_limit_reached() {
                self.st.l2_rebuild_lowmem += 1;
                break;
            }
            let l2 = self.l2.as_mut().expect("a cache device is attached (module note)");
            let lb = *l2.devs[d].dev.ring.get(lbseq);
            let n = lb.lsize() as u64;
            r.reads += 1;
            r.read_bytes += lb.psize() as u64;
            // arc_adapt(log_entries * HDR_L2ONLY_SIZE) lets arc_c grow for the headers.
            let grow = n * HDR_L2ONLY_SIZE;
            self.adapt(grow, Some(State::L2cOnly), false);
            let l2 = self.l2.as_mut().expect("a cache device is attached (module note)");
            let dev = &mut l2.devs[d].dev;
            dev.ring.get_mut(lbseq).set_dead(false);
            dev.alloc += lb.psize() as u64;
            l2.lb_count += 1;
            l2.lb_asize += lb.psize() as u64;
            for seq in (lbseq - n..lbseq).rev() {
                let l2 = self.l2.as_mut().expect("a cache device is attached (module note)");
                let e = *l2.devs[d].dev.ring.get(seq);
                if l2.find(e.key).is_some() {
                    continue; // a newer copy (or another device's) was restored already
                }
                let dev = &mut l2.devs[d].dev;
                let asize = dev.asize(e.psize() as u64);
                dev.ring.get_mut(seq).set_dead(false);
                dev.alloc += asize;
                l2.index_insert(d, seq);
                l2.lsize_sum += e.lsize() as u64;
                l2.psize_sum += e.psize() as u64;
                r.headers += 1;
                r.bytes += e.lsize() as u64;
                r.asize += asize;
                let loc = l2.loc(d, seq);
                match self.slab.find(e.key) {
                    Some(i) => {
                        let h = &mut self.slab.hdrs[i as usize];
                        h.flags = (h.flags & !F_L2PF) | F_L2 | if e.prefetch() { F_L2PF } else { 0 };
                        h.l2seq = loc;
                    }
                    None => self.l2.as_mut().expect("a cache device is attached (module note)").l2only += 1,
                }
            }
            r.log_blocks += 1;
        }
        self.st.l2_rebuild_bufs += r.headers;
        self.st.l2_rebuild_size += r.bytes;
        self.st.l2_rebuild_asize += r.asize;
        self.st.l2_rebuild_log_blks += r.log_blocks;
        if r.log_blocks > 0 {
            self.st.l2_rebuild_success += 1;
        }
        r
    }
}
