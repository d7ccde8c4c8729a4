//! What the ARC's consumers hold: the buffers of live dbufs, the dbufs themselves, dnodes
//! and bonus buffers, as arcstats counts them (`overhead_size`, `dbuf_size`, `dnode_size`,
//! `bonus_size`, and their share of `size`, `data_size`, `metadata_size`, `hdr_size`).
//!
//! # Mechanism (arc.c, dbuf.c, abd.c at zfs-0.7.5, zfs-0.8.6, zfs-2.2.11)
//!
//! - A dbuf reads its block through `arc_read(..., dbuf_read_done, ...)` without a raw
//!   flag, so it always gets an uncompressed (lsize) `arc_buf_t` (`arc_buf_alloc_impl`,
//!   on the miss in `arc_read_done`, on a hit in `arc_read`). The buffer shares the
//!   header's `b_pabd` only when `arc_can_share` holds: the header is uncompressed (the
//!   block was stored without compression, or `zfs_compressed_arc_enabled` = 0) *and*
//!   `b_pabd` is one linear buffer. On Linux `b_pabd` is a scatter ABD from
//!   `zfs_abd_scatter_min_size` (1536 bytes, abd.c@0.8.6 `abd_alloc`, abd_os.c@2.2.11
//!   `abd_size_alloc_linear`; 0.7.5: above a page) unless `zfs_abd_scatter_enabled` = 0. So
//!   every 16K or 128K block a dbuf holds is in memory twice: the header's copy (psize
//!   compressed, or lsize) and the dbuf's lsize copy.
//! - The separate copy is allocated by `arc_get_data_buf` (`arc_get_data_impl`: an
//!   allocation, which may wake eviction) and counted in `size`, in `data_size` or
//!   `metadata_size` by the header's type, in `overhead_size`, in the state's size (not
//!   its evictable size), and in `arc_meta_used` when metadata (0.7/0.8); not in
//!   `compressed_size` or `uncompressed_size`. The `arc_buf_t` itself is counted in
//!   `hdr_size` (`buf_cons`; estimated 80 bytes in 0.7/0.8, 32 in 2.2, from the struct).
//! - The buffer takes a reference on the header (`add_reference`), which takes the header
//!   off its state's evictable list: a header a dbuf holds is not evictable. A dbuf in the
//!   dbuf cache keeps its buffer ("not eligible for arc eviction until they are aged out of
//!   the cache", dbuf.c), and every dbuf holds its parent, so an indirect block stays
//!   pinned, with its decompressed copy, while any of its children has a dbuf.
//!   `dbuf_destroy` → `arc_buf_destroy` frees the copy and drops the reference; the header
//!   goes back to the head of its list (`remove_reference`).
//! - Holes and embedded blocks are filled in memory into an anonymous buffer
//!   (`dbuf_read_hole`, `arc_alloc_buf`): lsize counted in `size` and `data_size` /
//!   `metadata_size` with no header in a state.
//! - Each dbuf costs `sizeof (dmu_buf_impl_t)` of `dbuf_size` (`dbuf_create`,
//!   `ARC_SPACE_DBUF`); each dnode_t alive `sizeof (dnode_t)` of `dnode_size`
//!   (`ARC_SPACE_DNODE`); each dnode's bonus buffer `DN_MAX_BONUSLEN` (320 bytes with
//!   512-byte dnodes) of `bonus_size` plus a dbuf. An open file holds its dnode, which
//!   holds its 16K dnode block's dbuf (a metadata buffer, with its copy).
//! - A held dnode block holds its parents in the objset's meta-dnode: a dataset's
//!   meta-dnode has a fixed number of levels (`dmu_objset_create_impl`), so a mounted
//!   dataset pins a chain of indirect blocks above its dnodes, each a held dbuf on a
//!   referenced MRU metadata header; every open objset has `dnode_t`s for its special
//!   objects. The zfs layer computes them (`fs::zfs::objset`) as [`ObjsetPins`].
//! - All of these count in `size` (so in the ARC's target), in `arc_meta_used` (0.8) and
//!   none can be evicted by the ARC: they go when their holders do.
//!
//! Struct sizes on 64-bit Linux, non-debug, estimated from each tag's struct layout (kernel
//! `struct mutex` 32 B, SPL kmutex 48 B, kcondvar 72 B): `dmu_buf_impl_t` 312 B (0.8.6),
//! 376 B (2.2.11); `dnode_t` 912 B (0.8.6), 984 B (2.2.11); `arc_buf_t` 80 B (0.8.6),
//! 32 B (2.2). 2.1 is taken as 0.8 (not computed). They are the release's
//! [`ArcStructSizes`] (with the commits that changed them).
//!
//! # Simplifications
//!
//! 1. One buffer per dbuf, one dbuf per block: transient extra consumers (send, scrub,
//!    indirect prefetch callbacks) are not modelled.
//! 2. A hole's or embedded block's anonymous buffer is counted once (0.8's `arc_hdr_alloc`
//!    may also give such a header a `b_pabd`; not traced).
//! 3. The dnode blocks of open files are counted by their decompressed 16K copies only
//!    (their compressed `b_pabd` and headers are not modelled), one per 32 open files
//!    (512-byte dnodes).
//! 4. 2.2's `abd_chunk_waste_size` (page round-up of scatter buffers, part of `size`) is 0:
//!    the modelled blocks are multiples of the page size.
//! 5. If the model evicted a header before a dbuf took its buffer (the real ARC holds it
//!    referenced from the read), the copy is counted with the anonymous buffers.
//! 6. The pinned objset blocks ([`ObjsetPins`]) have no header in the slab: they are
//!    counted in the MRU metadata state's size and in the arcstats they belong to, but
//!    are never read, hit or evicted (held, they could not be), nor written to an L2ARC
//!    (the real feed may write their headers: a few blocks).

use super::slab::{list_index, State, F2_COPY, F2_HELD, F2_USER, HELD_LISTS, NIL};
use super::Arc;
use crate::config::ArcStructSizes;
use crate::sim::time::Nanos;

/// `zfs_abd_scatter_min_size` (0.8+): ABDs smaller than this are linear, so an
/// uncompressed block smaller than this can share its buffer with a dbuf.
pub const ABD_SCATTER_MIN_SIZE: u32 = 1536;
/// `DN_MAX_BONUSLEN` with 512-byte dnodes: the bonus buffer of a dnode.
pub const BONUS_SIZE: u64 = 320;
/// Dnodes per 16K dnode block (512-byte dnodes, `dnodesize=legacy`).
pub const DNODES_PER_BLOCK: u64 = 32;
/// A dnode block's logical size (DNODE_BLOCK_SIZE, 16K).
pub const DNODE_BLOCK_SIZE: u64 = 16 << 10;

/// The bytes of the separate buffer a dbuf holds for a block of `lsize` stored as `psize`
/// (0: hole or embedded), per `arc_can_share`: 0 when it shares the header's linear
/// uncompressed `b_pabd`.
pub fn dbuf_copy_bytes(lsize: u32, psize: u32, compressed_arc: bool, scatter: bool) -> u32 {
    if psize == 0 {
        return lsize; // an anonymous buffer filled in memory
    }
    let header_uncompressed = psize >= lsize || !compressed_arc;
    let linear = !scatter || lsize < ABD_SCATTER_MIN_SIZE;
    if header_uncompressed && linear {
        0
    } else {
        lsize
    }
}

/// What consumers hold: see the module doc.
#[derive(Debug, Clone, Default)]
pub(crate) struct Consumers {
    /// Separate buffer bytes of held headers, by list index of their state and type.
    pub held: [u64; HELD_LISTS],
    /// All separate buffer bytes: [data, metadata], kept as they change (the ARC's size is
    /// read often); those not in `held` have no live header (anonymous).
    pub copies: [u64; 2],
    /// Live dbufs (each with one arc_buf_t).
    pub dbufs: u64,
    /// Open files (dnode_t + bonus buffer + bonus dbuf each).
    pub files: u64,
    /// What the open objsets hold beside the files ([`ObjsetPins`]).
    pub pins: ObjsetPins,
    /// sizeof (dmu_buf_impl_t), sizeof (dnode_t), sizeof (arc_buf_t).
    pub sizes: (u64, u64, u64),
    /// HDR_FULL_SIZE: the pinned blocks' headers.
    pub hdr_full: u64,
}

/// What the pool's open objsets hold in the ARC beside the files' trees, from the zfs layer
/// (`fs::zfs::objset`): indirect blocks of a meta-dnode held by the dnodes under them
/// (each a dbuf with an `arc_buf_t` on a referenced MRU metadata header), and the objsets'
/// special `dnode_t`s.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ObjsetPins {
    /// Held indirect blocks.
    pub blocks: u64,
    /// Their headers' buffer bytes (`b_pabd`: psize under compressed ARC, else lsize).
    pub hdr_bytes: u64,
    /// Their dbufs' separate copies ([`dbuf_copy_bytes`]).
    pub copies: u64,
    /// Their logical bytes.
    pub lsize: u64,
    /// `dnode_t`s of the objsets' special objects.
    pub dnodes: u64,
}

impl Consumers {
    pub(crate) fn new(sizes: &ArcStructSizes) -> Self {
        Consumers {
            sizes: (sizes.dmu_buf_impl, sizes.dnode, sizes.arc_buf),
            hdr_full: sizes.hdr_full,
            ..Default::default()
        }
    }

    /// Dnode blocks held by the open files.
    fn dnode_blocks(&self) -> u64 {
        self.files.div_ceil(DNODES_PER_BLOCK)
    }

    /// overhead_size by type: [data, metadata].
    #[inline]
    pub(crate) fn overhead(&self) -> [u64; 2] {
        [self.copies[0], self.copies[1] + self.dnode_blocks() * DNODE_BLOCK_SIZE + self.pins.copies]
    }

    /// dbuf_size: the dbufs of blocks, of bonus buffers, of dnode blocks and of the pinned
    /// indirect blocks.
    pub(crate) fn dbuf_size(&self) -> u64 {
        (self.dbufs + self.files + self.dnode_blocks() + self.pins.blocks) * self.sizes.0
    }

    pub(crate) fn dnode_size(&self) -> u64 {
        (self.files + self.pins.dnodes) * self.sizes.1
    }

    pub(crate) fn bonus_size(&self) -> u64 {
        self.files * BONUS_SIZE
    }

    /// What consumers add to hdr_size: the arc_buf_t structs, and the pinned blocks'
    /// headers.
    pub(crate) fn buf_hdrs(&self) -> u64 {
        (self.dbufs + self.dnode_blocks() + self.pins.blocks) * self.sizes.2
            + self.pins.blocks * self.hdr_full
    }

    /// The pinned blocks' bytes in their (MRU metadata) state: headers' buffers and copies.
    #[inline]
    pub(crate) fn pinned_state_bytes(&self) -> u64 {
        self.pins.hdr_bytes + self.pins.copies
    }

    /// Everything consumers add to `size`.
    pub(crate) fn size(&self) -> u64 {
        let [d, m] = self.overhead();
        d + m
            + self.pins.hdr_bytes
            + self.dbuf_size()
            + self.dnode_size()
            + self.bonus_size()
            + self.buf_hdrs()
    }
}

impl Arc {
    /// The buffer of a dbuf about to be created for a block about to be read: its copy
    /// is allocated (counted, as anonymous) before the read's own allocation, so that the
    /// read's eviction pass makes room for both (the real eviction thread, woken by
    /// either allocation, evicts to `c` after both). [`Arc::dbuf_created`] with
    /// `reserved` then gives it to the header.
    pub fn dbuf_reserve(&mut self, meta: bool, copy: u32) {
        self.consumers.copies[usize::from(meta)] += u64::from(copy);
    }

    /// A dbuf of `key` was created and holds its buffer (`dbuf_create` + `arc_buf_alloc_impl`):
    /// a separate copy of `copy` bytes ([`dbuf_copy_bytes`]) and a reference that takes the
    /// header off its evictable list. An allocation: eviction may follow (unless the copy
    /// was `reserved` by [`Arc::dbuf_reserve`] before the read's own eviction). Returns
    /// the header's slab slot when the dbuf holds one (for [`Arc::dbuf_destroyed`]), else
    /// NIL.
    pub fn dbuf_created(
        &mut self,
        key: super::BlockKey,
        meta: bool,
        copy: u32,
        reserved: bool,
        now: Nanos,
    ) -> u32 {
        if !reserved {
            self.consumers.copies[usize::from(meta)] += u64::from(copy);
        }
        self.consumers.dbufs += 1;
        let held = self.reference(key, copy);
        if copy > 0 && !reserved {
            self.note_meta_max();
            self.evict_if_over(now);
        }
        held
    }

    /// `add_reference` for a dbuf's buffer of `copy` separate bytes: a live, unheld header
    /// leaves its evictable list for its state's held count. Returns its slot, or NIL when
    /// there is no live header (the copy is then anonymous).
    fn reference(&mut self, key: super::BlockKey, copy: u32) -> u32 {
        match self.slab.find(key.0) {
            Some(i)
                if self.slab.hdrs[i as usize].state.is_live()
                    && self.slab.hdrs[i as usize].flags2 & F2_HELD == 0 =>
            {
                self.slab.unlink(i);
                let h = &mut self.slab.hdrs[i as usize];
                h.flags2 = (h.flags2 | F2_HELD) & !F2_USER;
                if copy > 0 {
                    debug_assert_eq!(copy, h.lsize);
                    h.flags2 |= F2_COPY;
                }
                let li = list_index(h.state, h.is_meta());
                self.slab.push_head(i);
                self.consumers.held[li] += u64::from(copy);
                i
            }
            _ => NIL,
        }
    }

    /// 0.6: the dbuf of `key` reached zero holds and stays (no dbuf cache):
    /// `arc_buf_remove_ref` drops its reference, so the header (slot `hdr`, NIL: none) goes
    /// back to the head of its evictable list, marked as having a dbuf that its eviction
    /// destroys. The dbuf's buffer is the header's own (0.6 has no ABD and no compressed
    /// ARC), so no bytes move.
    pub fn dbuf_unheld(&mut self, key: super::BlockKey, hdr: u32) {
        if self.unreference(key, hdr) {
            self.slab.hdrs[hdr as usize].flags2 |= F2_USER;
        }
    }

    /// 0.6: a hold of `key`'s dbuf from zero holds (`arc_buf_add_ref`) references its
    /// header again (the caller counted the access). Returns the header's slot (NIL if
    /// the ARC no longer has it).
    pub fn dbuf_rehold(&mut self, key: super::BlockKey) -> u32 {
        self.reference(key, 0)
    }

    /// 0.6: the dbufs whose headers were evicted or destroyed since the last call
    /// (`arc_do_user_evicts`); the list is emptied, its memory kept.
    pub fn take_user_evicts(&mut self) -> std::vec::Drain<'_, super::BlockKey> {
        self.user_evicts.drain(..)
    }

    /// Header `i` leaves its live state: if an unheld dbuf had its buffer, the dbuf's
    /// eviction callback is queued.
    #[inline]
    pub(super) fn user_evict(&mut self, i: u32) {
        let h = &mut self.slab.hdrs[i as usize];
        if h.flags2 & F2_USER != 0 {
            h.flags2 &= !F2_USER;
            let key = super::BlockKey(h.key);
            self.user_evicts.push(key);
        }
    }

    /// `remove_reference` of a dbuf's buffer: if the dbuf holds header `hdr` of `key`, the
    /// header goes back to the head of its evictable list with its copy's bytes; true if so.
    fn unreference(&mut self, key: super::BlockKey, hdr: u32) -> bool {
        let held = hdr != NIL && {
            let h = &self.slab.hdrs[hdr as usize];
            h.key == key.0 && h.state != State::Free && h.flags2 & F2_HELD != 0
        };
        if held {
            let i = hdr;
            self.slab.unlink(i);
            let h = &mut self.slab.hdrs[i as usize];
            let bytes = if h.flags2 & F2_COPY != 0 { u64::from(h.lsize) } else { 0 };
            h.flags2 &= !(F2_HELD | F2_COPY);
            let li = list_index(h.state, h.is_meta());
            self.slab.push_head(i);
            self.consumers.held[li] -= bytes;
        }
        held
    }

    /// The dbuf of `key` was destroyed (`dbuf_destroy` → `arc_buf_destroy`): its copy is
    /// freed and the header, if the dbuf still holds it (`hdr`: the slot
    /// [`Arc::dbuf_created`] returned; a held header never moves), goes back to the head
    /// of its list.
    pub fn dbuf_destroyed(&mut self, key: super::BlockKey, meta: bool, copy: u32, hdr: u32) {
        self.consumers.dbufs -= 1;
        self.consumers.copies[usize::from(meta)] -= u64::from(copy);
        if !self.unreference(key, hdr) && hdr != NIL {
            // 0.6: an unheld dbuf destroyed otherwise than by its header's eviction.
            let h = &mut self.slab.hdrs[hdr as usize];
            if h.key == key.0 {
                h.flags2 &= !F2_USER;
            }
        }
    }

    /// Starts bringing header slot `hdr` (from [`Arc::dbuf_created`]; NIL: none) into the
    /// CPU caches: the dbuf cache's next victim's, which its destruction reads.
    #[inline]
    pub fn prefetch_hdr(&self, hdr: u32) {
        if let Some(h) = self.slab.hdrs.get(hdr as usize) {
            crate::support::mem_hint::prefetch(h);
        }
    }

    /// The number of open files (each holds its dnode_t, bonus buffer and dnode block).
    pub fn set_open_files(&mut self, files: u64, now: Nanos) {
        let grew = files > self.consumers.files;
        self.consumers.files = files;
        if grew {
            self.evict_if_over(now);
        }
    }

    /// What the pool's open objsets hold ([`ObjsetPins`]), set once when the pool is
    /// imported and the dataset mounted (the ARC is empty then: nothing to evict).
    pub fn set_objset_pins(&mut self, pins: ObjsetPins) {
        self.consumers.pins = pins;
    }

    /// Header `i` (held, already unlinked) goes from state `from` to `to`: its copy's bytes
    /// follow it; if `to` is not a live state (the model destroyed or evicted it), they
    /// become anonymous and the header is no longer held.
    pub(super) fn held_moves(&mut self, i: u32, from: State, to: State) {
        let h = &mut self.slab.hdrs[i as usize];
        let meta = h.is_meta();
        let bytes = if h.flags2 & F2_COPY != 0 { u64::from(h.lsize) } else { 0 };
        self.consumers.held[list_index(from, meta)] -= bytes;
        if to.is_live() {
            self.consumers.held[list_index(to, meta)] += bytes;
        } else {
            h.flags2 &= !(F2_HELD | F2_COPY);
        }
    }

    /// arcs_size of a live state by type: its evictable list, its held list and the held
    /// headers' separate copies.
    pub(super) fn state_size(&self, s: State, meta: bool) -> u64 {
        let li = list_index(s, meta);
        let pinned = if s == State::Mru && meta { self.consumers.pinned_state_bytes() } else { 0 };
        self.slab.lists[li].bytes + self.slab.lists[HELD_LISTS + li].bytes + self.consumers.held[li] + pinned
    }
}
