//! Compact header storage: a slab of fixed-size headers, intrusive doubly linked lists
//! (one per state x buffer type) threaded through u32 indices, and a [`KeyTable`] of slot
//! indices keyed by block (prefetchable: the driver knows a read's blocks before its
//! CPU time has run, see `run`). Nothing here allocates once the slab and table have reached the
//! largest header count of the run (slots are recycled through a free list).

use crate::support::key_table::KeyTable;
use crate::support::mem_hint::prefetch;

/// End of list / no slot.
pub(crate) const NIL: u32 = u32::MAX;

/// ARC states that own a list. `Free` marks a recycled slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum State {
    Mru = 0,
    Mfu = 1,
    MruGhost = 2,
    MfuGhost = 3,
    /// arc_uncached (2.2 only).
    Uncached = 4,
    /// arc_l2c_only: never in the slab (L2-only headers live in the L2ARC index); used
    /// only to tell arc_adapt where a header came from.
    L2cOnly = 5,
    Free = 6,
}

/// Number of states that own lists.
pub(crate) const NSTATES: usize = 5;

impl State {
    pub(crate) fn is_ghost(self) -> bool {
        matches!(self, State::MruGhost | State::MfuGhost)
    }
    pub(crate) fn is_live(self) -> bool {
        matches!(self, State::Mru | State::Mfu | State::Uncached)
    }
}

/// Header flag: ARC_FLAG_PREFETCH.
pub(crate) const F_PREFETCH: u8 = 1;
/// Header flag: ARC_FLAG_INDIRECT (level > 0 block).
pub(crate) const F_INDIRECT: u8 = 2;
/// Header flag: ARC_BUFC_METADATA.
pub(crate) const F_META: u8 = 4;
/// Header flag: ARC_FLAG_L2CACHE (secondarycache covers it and it is not only prefetched).
pub(crate) const F_L2CACHE: u8 = 8;
/// Header flag: ARC_FLAG_HAS_L2HDR (a copy is on the cache device; `l2seq` locates it).
pub(crate) const F_L2: u8 = 16;
/// Header flag: the cached copy is the logical (uncompressed) block, so it occupies lsize,
/// not psize (compressed ARC off: `arc_hdr_size()` is then HDR_GET_LSIZE).
pub(crate) const F_LCOPY: u8 = 32;
/// Header flag (simulator only): with F_L2, the copy's entry on the device carries
/// E_PREFETCH, so clearing or setting it again needs no visit to the entry.
pub(crate) const F_L2PF: u8 = 128;
/// Header flag (simulator only): the header lies in its list's remembered tail window of
/// protected headers ([`SkipWindow`]); unlinking it forgets that window.
pub(crate) const F_SKIPWIN: u8 = 64;
/// Second flag byte: ARC_FLAG_PREDICTIVE_PREFETCH (0.8/2.1): set when a prefetch read
/// brings the block in, cleared by the first read that finds it (counting
/// demand_hit_predictive_prefetch if the read found it in memory and did not wait).
pub(crate) const F2_PREDICTIVE: u8 = 1;
/// Second flag byte (simulator only): the header lies in its list's [`L2Run`].
pub(crate) const F2_L2RUN: u8 = 2;
/// Second flag byte (simulator only): the header lies in its list's [`L2HeadRun`].
pub(crate) const F2_L2HRUN: u8 = 32;
/// Second flag byte: a dbuf holds a buffer of this block (b_refcnt > 0, `add_reference`):
/// the header is off its state's evictable list and counted in the state's held "list"
/// ([`HELD_LISTS`]: bytes and count only, no links, since nothing walks held headers),
/// still part of the state's size (see `bufs.rs`).
pub(crate) const F2_HELD: u8 = 4;
/// Second flag byte: with F2_HELD, the dbuf's buffer is a separate lsize copy (not shared
/// with the header's `b_pabd`).
pub(crate) const F2_COPY: u8 = 8;
/// Second flag byte (0.6): an unheld dbuf still has this header's buffer (no dbuf cache:
/// `arc_buf_remove_ref` left the `arc_buf` with its eviction callback); evicting or
/// destroying the header destroys the dbuf ([`crate::cache::arc::Arc::take_user_evicts`]).
pub(crate) const F2_USER: u8 = 16;

/// Offset of the held lists in [`Slab::lists`]: list `l` of a held header is
/// `HELD_LISTS + l`. Eviction and the L2 feed walk only the first `HELD_LISTS` (the
/// evictable `arcs_list` of each state and type).
pub(crate) const HELD_LISTS: usize = NSTATES * 2;

const _: () = assert!(std::mem::size_of::<Header>() == 40);

/// One ARC header as the simulator keeps it (40 bytes).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Header {
    /// BlockKey.0
    pub key: u64,
    /// b_arc_access, ns.
    pub access: u64,
    pub prev: u32,
    pub next: u32,
    /// Logical size (ghost lists count this).
    pub lsize: u32,
    /// Physical size on the pool (HDR_GET_PSIZE): what an L2ARC write stores.
    pub psize: u32,
    /// With F_L2: low 32 bits of the ring sequence number of the block's L2 copy (b_l2hdr),
    /// so eviction and destruction reach it without an index lookup.
    pub l2seq: u32,
    pub state: State,
    pub flags: u8,
    /// F2_* flags.
    pub flags2: u8,
}

impl Header {
    /// Bytes the cached copy occupies (arc_hdr_size): psize with compressed ARC, else lsize.
    #[inline]
    pub(crate) fn asize(&self) -> u32 {
        if self.flags & F_LCOPY != 0 {
            self.lsize
        } else {
            self.psize
        }
    }
    pub(crate) fn is_meta(&self) -> bool {
        self.flags & F_META != 0
    }
    /// List index: state * 2 + type, past [`HELD_LISTS`] while a dbuf holds the block.
    pub(crate) fn list(&self) -> usize {
        let held = if self.flags2 & F2_HELD != 0 { HELD_LISTS } else { 0 };
        list_index(self.state, self.is_meta()) + held
    }
    /// Bytes this header contributes to its state's size.
    pub(crate) fn state_bytes(&self) -> u64 {
        if self.state.is_ghost() {
            self.lsize as u64
        } else {
            self.asize() as u64
        }
    }
}

pub(crate) fn list_index(state: State, meta: bool) -> usize {
    state as usize * 2 + meta as usize
}

/// Head (most recent), tail (least recent) and byte count of one list.
#[derive(Debug, Clone, Copy)]
pub(crate) struct List {
    pub head: u32,
    pub tail: u32,
    pub bytes: u64,
    pub count: u64,
}

impl Default for List {
    fn default() -> Self {
        List { head: NIL, tail: NIL, bytes: 0, count: 0 }
    }
}

/// The protected headers (prefetched or indirect, younger than `zfs_arc_min_prefetch_ms`)
/// an eviction scan of a live list passed: the list's `skips` tail-most headers (the ones
/// between them were evicted), exactly the headers flagged F_SKIPWIN, all protected before
/// `until` (none: `skips` 0); `whole` if they are the whole list. Headers join a list only
/// at its head and members only gain protection in place, so the window stays true as
/// members leave it ([`Slab::unlink`]) and headers are pushed: until `until` a scan would
/// pass the same headers again, and give up if they are `MAX_SKIP_SCAN` or the whole
/// list. The simulator answers that from here (`Arc::evict_list`; a shortcut, not a
/// mechanism).
///
/// `mono`: the members' protection ends in list order (tail first), so once `until` passes
/// what expired is a tail prefix and the rest of the window is still protected; `last` is
/// the head-most member and `last_exp` the end of its protection.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SkipWindow {
    // (members: see [`WindowMembers`])
    pub until: u64,
    pub skips: u32,
    pub whole: bool,
    pub mono: bool,
    pub last: u32,
    pub last_exp: u64,
}

/// A window's members, tail first (`SkipWindow::skips` of them): their slots and the ends
/// of their protection (`access + zfs_arc_min_prefetch_ms`), so that a scan that must pass
/// the window again decides each member without reading its header (a shortcut of the
/// simulator: the same decisions).
#[derive(Debug, Clone, Copy)]
pub(crate) struct WindowMembers {
    pub slot: [u32; super::MAX_SKIP_SCAN as usize],
    pub exp: [u64; super::MAX_SKIP_SCAN as usize],
}

impl Default for WindowMembers {
    fn default() -> Self {
        WindowMembers { slot: [NIL; super::MAX_SKIP_SCAN as usize], exp: [0; super::MAX_SKIP_SCAN as usize] }
    }
}

impl WindowMembers {
    /// The position of slot `i` among the first `n` members.
    #[inline]
    pub(crate) fn position(&self, i: u32, n: usize) -> usize {
        // Invariant: F_SKIPWIN is set exactly on the window's members (`SkipWindow`).
        self.slot[..n].iter().position(|&s| s == i).expect("flagged header is a window member")
    }
}

/// The tail-most `count` headers of a list (`bytes` of lsize, `last` the head-most of
/// them), flagged F2_L2RUN, that l2arc_write_buffers scans from the tail passed and left
/// ineligible (on the device, or not L2-cacheable): each feed would pass them again, so it
/// starts after them with their bytes counted against its headroom (a shortcut of the
/// simulator, same outcome). Headers join a list only at its head, so the run stays the
/// list's tail as members leave it (`Slab::unlink`); a member that becomes eligible (its
/// L2 copy overwritten while L2-cacheable, or L2-cacheable while not on the device)
/// leaves it with the members on its head side ([`Slab::l2_eligibility_changed`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct L2Run {
    pub count: u32,
    pub bytes: u64,
    pub last: u32,
}

impl Default for L2Run {
    fn default() -> Self {
        L2Run { count: 0, bytes: 0, last: NIL }
    }
}

/// The `count` headers from `first` to `last` (toward the tail, `bytes` of lsize),
/// flagged F2_L2HRUN, that l2arc_write_buffers scanning from the head (while the ARC is
/// not warm) last passed and left ineligible (written by it, or not L2-cacheable): the
/// next scan walks the headers that joined the list at its head since, then passes the
/// run at once with its bytes counted against its headroom (a shortcut of the simulator,
/// same outcome), and the visited headers join it. Headers join a list only at its head,
/// so the run stays contiguous as members leave it (`Slab::unlink`); a member that becomes
/// eligible leaves it with the shorter of its sides ([`Slab::l2_eligibility_changed`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct L2HeadRun {
    pub count: u32,
    pub bytes: u64,
    pub first: u32,
    pub last: u32,
}

impl Default for L2HeadRun {
    fn default() -> Self {
        L2HeadRun { count: 0, bytes: 0, first: NIL, last: NIL }
    }
}

impl L2HeadRun {
    /// Header `i` of `lsize` bytes, next toward the tail, joins the run.
    #[inline]
    pub(crate) fn push_back(&mut self, i: u32, lsize: u32) {
        if self.count == 0 {
            self.first = i;
        }
        self.count += 1;
        self.bytes += lsize as u64;
        self.last = i;
    }
}

/// The slab, lists and index.
pub(crate) struct Slab {
    pub hdrs: Vec<Header>,
    /// Recycled slots, last freed first (through `next`): that slot is still in the cache.
    free: u32,
    /// Block key -> slot.
    table: KeyTable,
    /// The evictable lists, then the held lists ([`HELD_LISTS`]).
    pub lists: [List; HELD_LISTS * 2],
    /// Per evictable list: the protected tail window the last eviction scan passed (see
    /// [`SkipWindow`]).
    pub skip: [SkipWindow; HELD_LISTS],
    /// Per evictable list: the window's members ([`WindowMembers`]).
    pub win: [WindowMembers; HELD_LISTS],
    /// Per evictable list: the tail run the L2 feed passes without writing (see [`L2Run`]).
    pub l2run: [L2Run; HELD_LISTS],
    /// Per evictable list: the run a feed scanning from the head passes (see [`L2HeadRun`]).
    pub l2hrun: [L2HeadRun; HELD_LISTS],
}

impl Slab {
    pub(crate) fn new() -> Self {
        Slab {
            hdrs: Vec::new(),
            free: NIL,
            table: Default::default(),
            lists: [List::default(); HELD_LISTS * 2],
            skip: [SkipWindow::default(); HELD_LISTS],
            win: [WindowMembers::default(); HELD_LISTS],
            l2run: [L2Run::default(); HELD_LISTS],
            l2hrun: [L2HeadRun::default(); HELD_LISTS],
        }
    }

    /// Header `i` (in a list, just passed by an L2 feed scan from the tail that passed
    /// the rest of the run before it) is ineligible: it joins its list's run.
    #[inline]
    pub(crate) fn join_l2run(&mut self, i: u32) {
        let h = &mut self.hdrs[i as usize];
        debug_assert!(h.flags2 & F2_L2RUN == 0);
        h.flags2 |= F2_L2RUN;
        let r = &mut self.l2run[h.list()];
        r.count += 1;
        r.bytes += h.lsize as u64;
        r.last = i;
    }

    /// Forgets list `li`'s window of protected headers (their flags cleared).
    pub(crate) fn forget_window(&mut self, li: usize) {
        let mut cur = self.lists[li].tail;
        for _ in 0..self.skip[li].skips {
            let h = &mut self.hdrs[cur as usize];
            h.flags &= !F_SKIPWIN;
            cur = h.prev;
        }
        self.skip[li] = SkipWindow::default();
    }

    /// Forgets list `li`'s head run (a member became eligible, or a scan left it apart).
    pub(crate) fn reset_l2hrun(&mut self, li: usize) {
        let r = self.l2hrun[li];
        if r.count > 0 {
            self.unflag_walk(r.first, r.last, F2_L2HRUN, false);
        }
        self.l2hrun[li] = L2HeadRun::default();
    }

    /// Header `i` (just passed by an L2 feed scan from the head, left ineligible) is
    /// flagged as a member of the head run the scan is building.
    #[inline]
    pub(crate) fn flag_l2hrun(&mut self, i: u32) {
        let h = &mut self.hdrs[i as usize];
        debug_assert!(h.flags2 & F2_L2HRUN == 0);
        h.flags2 |= F2_L2HRUN;
    }

    /// Header `i` changed in a way that may make it eligible for an L2 write: it leaves
    /// the run it was in, and so does the part of the run a scan would reach only after
    /// it (the rest stays a run of ineligible headers a scan meets before `i`).
    #[inline]
    pub(crate) fn l2_eligibility_changed(&mut self, i: u32) {
        let h = &self.hdrs[i as usize];
        if h.flags2 & F2_L2RUN != 0 {
            let li = h.list();
            self.split_l2run(li, i);
        }
        let h = &self.hdrs[i as usize];
        if h.flags2 & F2_L2HRUN != 0 {
            let li = h.list();
            self.split_l2hrun(li, i);
        }
    }

    /// Clears `flag` on the headers from `from` to `to` (inclusive), walking toward the
    /// head (`prev`) or the tail (`next`); returns how many and their bytes.
    fn unflag_walk(&mut self, from: u32, to: u32, flag: u8, toward_head: bool) -> (u32, u64) {
        let (mut count, mut bytes) = (0u32, 0u64);
        let mut cur = from;
        loop {
            let h = &mut self.hdrs[cur as usize];
            debug_assert!(h.flags2 & flag != 0, "a run member");
            h.flags2 &= !flag;
            count += 1;
            bytes += h.lsize as u64;
            if cur == to {
                return (count, bytes);
            }
            cur = if toward_head { h.prev } else { h.next };
        }
    }

    /// Member `m` of list `li`'s tail run leaves it with the members on its head side
    /// (a scan from the tail passes the members after `m` toward the tail, then meets it).
    fn split_l2run(&mut self, li: usize, m: u32) {
        let (count, bytes) = self.unflag_walk(m, self.l2run[li].last, F2_L2RUN, true);
        let r = &mut self.l2run[li];
        r.count -= count;
        r.bytes -= bytes;
        if r.count == 0 {
            *r = L2Run::default();
        } else {
            r.last = self.hdrs[m as usize].next;
        }
    }

    /// Member `m` of list `li`'s head run leaves it, and so do the members on its shorter
    /// side (found by walking from `m` both ways at once): a scan from the head meets the
    /// head-side part, then `m`, then the tail-side part, so the longer part alone is still
    /// a run it passes.
    fn split_l2hrun(&mut self, li: usize, m: u32) {
        let r = self.l2hrun[li];
        // Which end is nearer: step toward both until one is reached.
        let (mut up, mut down) = (m, m);
        let head_side = loop {
            if up == r.first {
                break true;
            }
            if down == r.last {
                break false;
            }
            up = self.hdrs[up as usize].prev;
            down = self.hdrs[down as usize].next;
        };
        let end = if head_side { r.first } else { r.last };
        let (count, bytes) = self.unflag_walk(m, end, F2_L2HRUN, head_side);
        let h = self.hdrs[m as usize];
        let r = &mut self.l2hrun[li];
        r.count -= count;
        r.bytes -= bytes;
        if r.count == 0 {
            *r = L2HeadRun::default();
        } else if head_side {
            r.first = h.next;
        } else {
            r.last = h.prev;
        }
    }

    #[inline]
    pub(crate) fn find(&self, key: u64) -> Option<u32> {
        self.table.get(key)
    }

    /// Allocates a slot for `h` (not linked in any list yet) and indexes it.
    pub(crate) fn alloc(&mut self, h: Header) -> u32 {
        let idx = if self.free != NIL {
            let i = self.free;
            self.free = self.hdrs[i as usize].next;
            self.hdrs[i as usize] = h;
            i
        } else {
            // Guaranteed by `Sim::new`, which refuses an ARC that could hold 2^32 - 1 headers.
            assert!(self.hdrs.len() < NIL as usize, "ARC header slab full");
            self.hdrs.push(h);
            (self.hdrs.len() - 1) as u32
        };
        self.table.insert(h.key, idx);
        idx
    }

    /// Starts bringing the table slot of `key` into the CPU caches.
    #[inline]
    pub(crate) fn prefetch(&self, key: u64) {
        self.table.prefetch(key);
    }

    /// Unlinks (must already be off its list), unindexes and recycles slot `i`.
    pub(crate) fn free(&mut self, i: u32) {
        let key = self.hdrs[i as usize].key;
        // Invariant: `alloc` indexed every slot in use; only `free` unindexes it.
        let j = self.table.remove(key).expect("indexed header");
        debug_assert_eq!(i, j);
        let h = &mut self.hdrs[i as usize];
        h.state = State::Free;
        h.prev = NIL;
        h.next = self.free;
        self.free = i;
    }

    /// Links `i` at the head (most recently used end) of its state's list.
    pub(crate) fn push_head(&mut self, i: u32) {
        let h = self.hdrs[i as usize];
        debug_assert!(h.flags & F_SKIPWIN == 0);
        if h.flags2 & F2_HELD != 0 {
            // Held headers are counted, not linked: nothing walks them.
            let l = &mut self.lists[h.list()];
            l.bytes += h.state_bytes();
            l.count += 1;
            let h = &mut self.hdrs[i as usize];
            h.prev = NIL;
            h.next = NIL;
            return;
        }
        // The window, if the whole list, is now all but the new head.
        self.skip[h.list()].whole = false;
        let l = &mut self.lists[h.list()];
        let old = l.head;
        l.head = i;
        if old == NIL {
            l.tail = i;
        }
        l.bytes += h.state_bytes();
        l.count += 1;
        if old != NIL {
            self.hdrs[old as usize].prev = i;
        }
        let h = &mut self.hdrs[i as usize];
        h.prev = NIL;
        h.next = old;
    }

    /// Removes `i` from its state's list.
    pub(crate) fn unlink(&mut self, i: u32) {
        let h = self.hdrs[i as usize];
        let li = h.list();
        if h.flags2 & F2_HELD != 0 {
            let l = &mut self.lists[li];
            l.bytes -= h.state_bytes();
            l.count -= 1;
            return;
        }
        if h.flags & F_SKIPWIN != 0 {
            // The window loses a member and stays the list's tail-most run; if it was the
            // head-most, its neighbour toward the tail is now.
            self.hdrs[i as usize].flags &= !F_SKIPWIN;
            let w = &mut self.skip[li];
            let m = &mut self.win[li];
            let n = w.skips as usize;
            let k = m.position(i, n);
            m.slot.copy_within(k + 1..n, k);
            m.exp.copy_within(k + 1..n, k);
            w.skips -= 1;
            if w.skips == 0 {
                *w = SkipWindow::default();
            } else if w.last == i {
                w.last = h.next;
                w.last_exp = self.hdrs[h.next as usize].access + super::ARC_MIN_PREFETCH;
            }
        }
        if h.flags2 & F2_L2RUN != 0 {
            // The run is the list's tail, `last` its head-most member: its successor
            // toward the tail (`next`) is the new head-most member.
            let r = &mut self.l2run[li];
            r.count -= 1;
            r.bytes -= h.lsize as u64;
            if r.last == i {
                r.last = if r.count == 0 { NIL } else { h.next };
            }
            self.hdrs[i as usize].flags2 &= !F2_L2RUN;
        }
        if h.flags2 & F2_L2HRUN != 0 {
            // The head run loses a member and stays contiguous.
            let r = &mut self.l2hrun[li];
            r.count -= 1;
            r.bytes -= h.lsize as u64;
            if r.count == 0 {
                *r = L2HeadRun::default();
            } else {
                if r.first == i {
                    r.first = h.next;
                }
                if r.last == i {
                    r.last = h.prev;
                }
            }
            self.hdrs[i as usize].flags2 &= !F2_L2HRUN;
        }
        if h.prev != NIL {
            self.hdrs[h.prev as usize].next = h.next;
        } else {
            self.lists[li].head = h.next;
        }
        if h.next != NIL {
            self.hdrs[h.next as usize].prev = h.prev;
        } else {
            self.lists[li].tail = h.prev;
            if h.prev != NIL {
                // Eviction takes tails: the next one will unlink the new tail and write
                // its predecessor, a header anywhere in the slab.
                // And free it: its key's table slot too.
                self.table.prefetch(self.hdrs[h.prev as usize].key);
                let p = self.hdrs[h.prev as usize].prev;
                if p != NIL {
                    prefetch(&self.hdrs[p as usize]);
                }
            }
        }
        let l = &mut self.lists[li];
        l.bytes -= h.state_bytes();
        l.count -= 1;
        // The list's head left and the window's head-most member is the head now: the
        // window is the whole list.
        let w = &mut self.skip[li];
        if h.prev == NIL && w.skips > 0 && self.hdrs[w.last as usize].prev == NIL {
            w.whole = true;
        }
    }

    /// Slab slots and table capacity: both stop growing once the header count peaks.
    #[cfg(test)]
    pub(crate) fn capacity(&self) -> (usize, usize) {
        (self.hdrs.capacity(), self.table.allocation_size())
    }

    /// Number of indexed headers.
    pub(crate) fn len(&self) -> usize {
        self.table.len()
    }
}
