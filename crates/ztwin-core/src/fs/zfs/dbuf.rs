//! The DMU buffer layer (dbufs) in front of the ARC: which blocks a read touches.
//!
//! Source: module/zfs/dbuf.c (dbuf_hold_impl, dbuf_findbp, dbuf_read, dbuf_rele_and_unlock,
//! dbuf_evict_one, dbuf_cache_target_bytes) at zfs-0.8.6 and zfs-2.2.0; the rules below
//! are the same in both. Release 0.6 (illumos 2012, zfs-0.6.1) differs where the
//! release's features say (`ZfsFeatures::dbuf_cache`, `hold_accesses_arc`): see "Before
//! the dbuf cache" below.
//!
//! To read record `b` the DMU holds its L0 dbuf. If the dbuf exists (another reader holds
//! it, or it sits in the dbuf cache), holding it is one `arc_buf_access()`: an ARC hit,
//! and nothing above it is touched. If it does not exist, `dbuf_findbp()` holds the parent
//! indirect dbuf the same way (recursively, up to the dnode's block pointer), reads it,
//! and the new dbuf is read through `arc_read()`. So a read costs one ARC access at the
//! lowest level whose dbuf exists, then one `arc_read()` per level below it: with the L1
//! dbuf present, a page read touches exactly the L1 and the L0 in arcstats.
//!
//! A dbuf lives while it is held: by a reader, or by each of its child dbufs (a child
//! holds its parent). When the last hold goes, a cacheable dbuf enters the dbuf cache, an
//! LRU of decompressed buffers of at most `arc_c >> dbuf_cache_shift` (5) bytes
//! (`dbuf_cache_target_bytes`); evicting it there destroys it and releases its parent,
//! which may in turn enter the cache. Indirect blocks of plain files are not of an object
//! type kept in the separate metadata dbuf cache (`dbuf_include_in_metadata_cache`), so
//! they share this one. An uncacheable dbuf (primarycache) is destroyed on release.
//!
//! # Before the dbuf cache (0.6)
//!
//! zfs-0.6.1 `dbuf_rele_and_unlock`: at zero holds a cacheable dbuf stays alive with its
//! `arc_buf`, but drops the buffer's reference (`arc_buf_remove_ref`), so its header goes
//! back to the head of its evictable list. Nothing bounds these dbufs but the ARC: when it
//! evicts the header, the eviction callback (`arc_do_user_evicts` → `dbuf_do_evict`)
//! destroys the dbuf, which releases its parent ([`DbufLayer::evict`]). Holding an
//! existing dbuf reaches the ARC only from zero holds (`dbuf_hold_impl`:
//! `arc_buf_add_ref`, an ARC hit with `arc_access`, and the reference again); a hold of a
//! held dbuf, such as an indirect block whose children have dbufs, touches nothing.
//!
//! Each dbuf holds its block's buffer in the ARC: a separate lsize copy unless it shares
//! the header's linear uncompressed buffer (`cache::arc::dbuf_copy_bytes`). The layer
//! records each dbuf's copy; the driver tells the ARC of every creation
//! (`Arc::dbuf_created`) and, through [`DbufLayer::take_destroyed`], of every destruction
//! (`Arc::dbuf_destroyed`), which is where the ARC counts the copies (`overhead_size`) and
//! keeps the held headers off its evictable lists.
//!
//! Simplifications: 1. (0.7+) the cache is trimmed to its target at once (the real eviction
//! thread works between a 10% low and high water mark around it); 2. one exact LRU, not a
//! multilist with random sublists; 3. (none: the copies are charged to the ARC); 4. a
//! header the model destroyed or evicted before the dbuf took it (the real ARC holds it
//! from the read) leaves the dbuf serving its data, and the driver then skips the ARC
//! access; 5. (0.6) the eviction callback runs when the driver next settles the dbufs
//! (before any lookup), not from the reclaim thread about once a second.

use crate::cache::arc::BlockKey;
use crate::config::ZfsFeatures;
use crate::support::small_map::SmallMap;

const NIL: u32 = u32::MAX;

/// dbuf_cache_shift: the dbuf cache's target is arc_c >> 5 (dbuf.c, 0.8 to 2.2).
pub const DBUF_CACHE_SHIFT: u32 = 5;

#[derive(Debug, Clone, Copy)]
struct Dbuf {
    key: BlockKey,
    /// Holds by readers and child dbufs.
    holds: u32,
    /// Logical size (db.db_size), bytes.
    size: u32,
    cacheable: bool,
    /// Bytes of the separate buffer the dbuf holds in the ARC (0: shared).
    copy: u32,
    /// The ARC header it holds (its slab slot, from `Arc::dbuf_created`), or NIL.
    hdr: u32,
    /// LRU links while in the dbuf cache (holds == 0).
    prev: u32,
    next: u32,
    in_cache: bool,
}

/// What holding an existing dbuf did ([`DbufLayer::hold_existing`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hold {
    /// The dbuf's slot (for [`DbufLayer::set_hdr`]).
    pub slot: u32,
    /// The hold is an ARC access of the block (`arc_buf_access`, or 0.6's
    /// `arc_buf_add_ref` from zero holds).
    pub accesses_arc: bool,
    /// The hold takes the header's reference again (0.6, from zero holds): the driver
    /// re-pins the header (`Arc::dbuf_rehold`).
    pub references: bool,
}

/// The dbufs of a pool, with the dbuf cache.
#[derive(Debug, Default)]
pub struct DbufLayer {
    /// `dbuf_cache_shift` (None: no dbuf cache, release 0.6).
    cache_shift: Option<u32>,
    /// `ZfsFeatures::hold_accesses_arc`.
    hold_accesses_arc: bool,
    /// 0.6: dbufs that reached zero holds since the driver last took them (slot, key).
    unheld: Vec<(u32, BlockKey)>,
    index: SmallMap,
    slab: Vec<Dbuf>,
    free: Vec<u32>,
    /// Most recently released first.
    head: u32,
    tail: u32,
    cache_bytes: u64,
    /// Dbufs destroyed since the driver last took them: (key, copy bytes, header slot).
    destroyed: Vec<(BlockKey, u32, u32)>,
    /// Holds of existing dbufs (each an arc_buf_access, or a wait on a read in flight).
    pub hits: u64,
    /// dbufs created (each followed by an arc_read).
    pub created: u64,
}

impl DbufLayer {
    /// Bytes of simulator memory `dbufs` dbufs alive at once take at most: the slab
    /// (grown by doubling) with its free list, and the index (at most half full).
    pub fn memory_bytes(dbufs: u64) -> u64 {
        let pow2 = |n: u64| n.max(16).checked_next_power_of_two().unwrap_or(u64::MAX);
        let slab = pow2(dbufs).saturating_mul((std::mem::size_of::<Dbuf>() + 4) as u64);
        slab.saturating_add(pow2(dbufs.saturating_mul(2)).saturating_mul(12))
    }

    /// An empty layer for a release with these features.
    pub fn new(features: &ZfsFeatures) -> Self {
        Self::empty(features.dbuf_cache.then_some(DBUF_CACHE_SHIFT), features.hold_accesses_arc)
    }

    /// An empty layer of the same release.
    pub fn emptied(&self) -> Self {
        Self::empty(self.cache_shift, self.hold_accesses_arc)
    }

    fn empty(cache_shift: Option<u32>, hold_accesses_arc: bool) -> Self {
        DbufLayer { cache_shift, hold_accesses_arc, head: NIL, tail: NIL, ..Default::default() }
    }

    /// True when unheld dbufs leave by the ARC's eviction (0.6: no dbuf cache).
    pub fn evicted_by_arc(&self) -> bool {
        self.cache_shift.is_none()
    }

    /// True when a dbuf for `key` exists.
    pub fn exists(&self, key: BlockKey) -> bool {
        self.index.get(key.0).is_some()
    }

    /// Bytes in the dbuf cache.
    pub fn cache_bytes(&self) -> u64 {
        self.cache_bytes
    }

    /// Number of dbufs alive.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// True when no dbuf exists.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The dbufs destroyed since the last call, with their copies' bytes, for the ARC
    /// (`Arc::dbuf_destroyed`); the list is emptied, its memory kept.
    pub fn take_destroyed(&mut self) -> std::vec::Drain<'_, (BlockKey, u32, u32)> {
        self.destroyed.drain(..)
    }

    /// Records the ARC header slot the dbuf in slot `dbuf` ([`DbufLayer::create`]'s) holds.
    pub fn set_hdr(&mut self, dbuf: u32, hdr: u32) {
        self.slab[dbuf as usize].hdr = hdr;
    }

    /// 0.6: the dbufs that reached zero holds since the last call and still have none,
    /// with their header slots, for `Arc::dbuf_unheld`; the list is emptied.
    pub fn take_unheld(&mut self) -> impl Iterator<Item = (BlockKey, u32)> + '_ {
        let (slab, index) = (&self.slab, &self.index);
        self.unheld.drain(..).filter_map(move |(i, key)| {
            let d = &slab[i as usize];
            (d.key == key && d.holds == 0 && index.get(key.0) == Some(i)).then_some((key, d.hdr))
        })
    }

    /// 0.6: the ARC evicted `key`'s header; its dbuf, if alive and unheld, is destroyed
    /// (`dbuf_do_evict`), releasing its parent.
    pub fn evict(&mut self, key: BlockKey, parent_of: impl Fn(BlockKey) -> Option<BlockKey>) {
        if let Some(i) = self.index.get(key.0) {
            if self.slab[i as usize].holds == 0 {
                self.unlink(i);
                self.destroy(i, &parent_of);
            }
        }
    }

    /// A Direct I/O write (2.3) took `key`'s data (`dmu_buf_will_clone_or_dio`): its dbuf,
    /// if alive and unheld, is destroyed, releasing its parent (the real one stays with no
    /// data: `fs::zfs::direct`, simplification 2). True if one was.
    pub fn discard(&mut self, key: BlockKey, parent_of: impl Fn(BlockKey) -> Option<BlockKey>) -> bool {
        let Some(i) = self.index.get(key.0) else { return false };
        if self.slab[i as usize].holds > 0 {
            return false;
        }
        if self.slab[i as usize].in_cache {
            self.unlink(i);
        }
        self.destroy(i, &parent_of);
        true
    }

    /// The dbuf the cache will destroy next (its least recently released), if any.
    pub fn next_victim(&self) -> Option<(BlockKey, u32)> {
        (self.tail != NIL && self.cache_shift.is_some()).then(|| {
            let d = &self.slab[self.tail as usize];
            (d.key, d.hdr)
        })
    }

    /// A reader holds the existing dbuf `key` (taking it out of the dbuf cache).
    pub fn hold_existing(&mut self, key: BlockKey) -> Hold {
        // Invariant: the caller asked `exists(key)` first (the layer holds an existing dbuf only).
        let i = self.index.get(key.0).expect("dbuf: held key exists");
        self.hits += 1;
        let from_zero = self.slab[i as usize].holds == 0;
        self.add_hold(i);
        let references = from_zero && self.cache_shift.is_none();
        Hold { slot: i, accesses_arc: self.hold_accesses_arc || from_zero, references }
    }

    /// Creates the dbuf `key` held by a reader, holding a separate buffer of `copy` bytes;
    /// its parent (if any, and it must exist) gains a hold from it. Returns its slot, which
    /// stays its own while it is held.
    pub fn create(
        &mut self,
        key: BlockKey,
        parent: Option<BlockKey>,
        size: u32,
        cacheable: bool,
        copy: u32,
    ) -> u32 {
        debug_assert!(!self.exists(key));
        if let Some(p) = parent {
            // Invariant: dbufs are created top-down: a child's parent dbuf exists (dbuf_findbp).
            let pi = self.index.get(p.0).expect("dbuf: parent exists");
            self.add_hold(pi);
        }
        let d =
            Dbuf { key, holds: 1, size, cacheable, copy, hdr: NIL, prev: NIL, next: NIL, in_cache: false };
        let i = match self.free.pop() {
            Some(i) => {
                self.slab[i as usize] = d;
                i
            }
            None => {
                self.slab.push(d);
                (self.slab.len() - 1) as u32
            }
        };
        self.index.insert(key.0, i);
        self.created += 1;
        i
    }

    /// A reader releases `key`; unheld dbufs enter the cache, which is then trimmed to
    /// its target (`arc_c >> dbuf_cache_shift`), destroying the least recently released
    /// dbufs and releasing their parents in turn (0.6: no trimming; they stay until the
    /// ARC evicts their headers). `parent_of` names a dbuf's parent (None at the top level).
    pub fn release(&mut self, key: BlockKey, arc_c: u64, parent_of: impl Fn(BlockKey) -> Option<BlockKey>) {
        // Invariant: a reader releases only a dbuf it holds.
        let i = self.index.get(key.0).expect("dbuf: held key exists");
        self.drop_hold(i, &parent_of);
        let Some(shift) = self.cache_shift else { return };
        let target_bytes = arc_c >> shift;
        while self.cache_bytes > target_bytes && self.tail != NIL {
            let t = self.tail;
            self.unlink(t);
            self.destroy(t, &parent_of);
        }
    }

    fn add_hold(&mut self, i: u32) {
        if self.slab[i as usize].in_cache {
            self.unlink(i);
        }
        self.slab[i as usize].holds += 1;
    }

    fn drop_hold(&mut self, i: u32, parent_of: &impl Fn(BlockKey) -> Option<BlockKey>) {
        let d = &mut self.slab[i as usize];
        debug_assert!(d.holds > 0);
        d.holds -= 1;
        if d.holds > 0 {
            return;
        }
        if d.cacheable {
            self.push_front(i);
            if self.cache_shift.is_none() {
                let key = self.slab[i as usize].key;
                self.unheld.push((i, key));
            }
        } else {
            self.destroy(i, parent_of);
        }
    }

    fn destroy(&mut self, i: u32, parent_of: &impl Fn(BlockKey) -> Option<BlockKey>) {
        let key = self.slab[i as usize].key;
        let d = &self.slab[i as usize];
        self.destroyed.push((key, d.copy, d.hdr));
        self.index.remove(key.0);
        self.free.push(i);
        if let Some(p) = parent_of(key) {
            if let Some(pi) = self.index.get(p.0) {
                self.drop_hold(pi, parent_of);
            }
        }
    }

    fn push_front(&mut self, i: u32) {
        let old = self.head;
        let d = &mut self.slab[i as usize];
        d.prev = NIL;
        d.next = old;
        d.in_cache = true;
        self.cache_bytes += d.size as u64;
        if old != NIL {
            self.slab[old as usize].prev = i;
        } else {
            self.tail = i;
        }
        self.head = i;
    }

    fn unlink(&mut self, i: u32) {
        let Dbuf { prev, next, size, .. } = self.slab[i as usize];
        if prev != NIL {
            self.slab[prev as usize].next = next;
        } else {
            self.head = next;
        }
        if next != NIL {
            self.slab[next as usize].prev = prev;
        } else {
            self.tail = prev;
        }
        let d = &mut self.slab[i as usize];
        d.in_cache = false;
        d.prev = NIL;
        d.next = NIL;
        self.cache_bytes -= size as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ZfsRelease;
    use proptest::prelude::*;

    fn layer() -> DbufLayer {
        DbufLayer::new(&ZfsRelease::V0_8.features())
    }

    fn parent(k: BlockKey) -> Option<BlockKey> {
        // A 3-level test tree with fanout 4: L2 is the top.
        (k.level() < 2).then(|| BlockKey::new(k.object(), k.level() + 1, k.blkid() >> 2))
    }

    fn read(d: &mut DbufLayer, blkid: u64, target: u64) {
        // As the driver walks: find the lowest existing level, create below it, release L0.
        let chain =
            [BlockKey::new(1, 0, blkid), BlockKey::new(1, 1, blkid >> 2), BlockKey::new(1, 2, blkid >> 4)];
        let j = (0..3).find(|&l| d.exists(chain[l])).unwrap_or(3);
        if j < 3 {
            d.hold_existing(chain[j]);
        }
        for l in (0..j).rev() {
            d.create(chain[l], parent(chain[l]), 100, true, 0);
        }
        // The reader's transient holds on the parents are dropped once the child holds them.
        if j < 3 && j > 0 {
            d.release(chain[j], target << DBUF_CACHE_SHIFT, parent);
        }
        for l in (1..j).rev() {
            d.release(chain[l], target << DBUF_CACHE_SHIFT, parent);
        }
        d.release(chain[0], target << DBUF_CACHE_SHIFT, parent);
    }

    #[test]
    fn a_cached_leaf_is_one_access_and_an_uncached_leaf_under_a_live_parent_creates_one() {
        let mut d = layer();
        read(&mut d, 0, 10_000);
        assert_eq!((d.hits, d.created), (0, 3));
        read(&mut d, 0, 10_000); // L0 in the dbuf cache
        assert_eq!((d.hits, d.created), (1, 3));
        read(&mut d, 1, 10_000); // sibling: the L1 is alive (held by L0 0)
        assert_eq!((d.hits, d.created), (2, 4));
        assert_eq!(d.cache_bytes(), 200); // two leaves; parents held by them
    }

    #[test]
    fn evicting_the_last_child_releases_the_parent_into_the_cache() {
        let mut d = layer();
        read(&mut d, 0, 1000);
        assert_eq!((d.len(), d.cache_bytes()), (3, 100)); // L0 cached, L1 and L2 held by it
                                                          // Room for one dbuf and a half: evicting leaf 0 puts its L1 at the head of the
                                                          // cache (multilist_insert), which pushes out leaf 16, whose L1 follows, and so on
                                                          // up the trees until only the last released parent remains.
        read(&mut d, 16, 150);
        assert_eq!((d.len(), d.cache_bytes()), (1, 100));
        assert!(d.exists(BlockKey::new(1, 2, 1)));
    }

    #[test]
    fn uncacheable_dbufs_are_destroyed_on_release() {
        let mut d = layer();
        d.create(BlockKey::new(1, 2, 0), None, 100, true, 0);
        d.create(BlockKey::new(1, 1, 0), parent(BlockKey::new(1, 1, 0)), 100, true, 0);
        d.create(BlockKey::new(1, 0, 0), parent(BlockKey::new(1, 0, 0)), 100, false, 0);
        d.release(BlockKey::new(1, 2, 0), 1000 << DBUF_CACHE_SHIFT, parent);
        d.release(BlockKey::new(1, 1, 0), 1000 << DBUF_CACHE_SHIFT, parent);
        d.release(BlockKey::new(1, 0, 0), 1000 << DBUF_CACHE_SHIFT, parent);
        assert!(!d.exists(BlockKey::new(1, 0, 0)));
        // Its parent lost its last hold and went to the cache, then the L2 with it.
        assert_eq!(d.cache_bytes(), 100);
        assert!(d.exists(BlockKey::new(1, 1, 0)));
    }

    #[test]
    fn before_the_dbuf_cache_an_unheld_dbuf_stays_until_the_arc_evicts_its_header() {
        let mut d = DbufLayer::new(&ZfsRelease::V0_6.features());
        read(&mut d, 0, 0); // no cache to trim: everything stays
        assert_eq!(d.len(), 3);
        let unheld: Vec<_> = d.take_unheld().map(|(k, _)| k).collect();
        assert_eq!(unheld, vec![BlockKey::new(1, 0, 0)]); // L1 and L2 are held by children
                                                          // A hold from zero holds is an ARC access that takes the reference again; a hold
                                                          // of a held dbuf (the L1, held by its child) touches nothing.
        let h = d.hold_existing(BlockKey::new(1, 0, 0));
        assert!(h.accesses_arc && h.references);
        let h = d.hold_existing(BlockKey::new(1, 1, 0));
        assert!(!h.accesses_arc && !h.references);
        d.release(BlockKey::new(1, 1, 0), 0, parent);
        d.release(BlockKey::new(1, 0, 0), 0, parent);
        assert_eq!(d.take_unheld().count(), 1);
        // The ARC evicts the leaf's header: the leaf goes, and its parents lose their
        // last holds and become unheld in turn (their headers now evictable).
        d.evict(BlockKey::new(1, 0, 0), parent);
        assert!(!d.exists(BlockKey::new(1, 0, 0)));
        assert_eq!(d.take_destroyed().count(), 1);
        let unheld: Vec<_> = d.take_unheld().map(|(k, _)| k).collect();
        assert_eq!(unheld, vec![BlockKey::new(1, 1, 0)]);
        assert!(d.next_victim().is_none());
        // Evicting a held dbuf's header does nothing (the real ARC cannot).
        d.hold_existing(BlockKey::new(1, 1, 0));
        d.evict(BlockKey::new(1, 1, 0), parent);
        assert!(d.exists(BlockKey::new(1, 1, 0)));
    }

    #[test]
    fn since_0_7_6_every_hold_is_an_arc_access_and_nothing_is_re_referenced() {
        let mut d = layer();
        read(&mut d, 0, 10_000);
        let h = d.hold_existing(BlockKey::new(1, 1, 0)); // held by its child
        assert!(h.accesses_arc && !h.references);
        assert_eq!(d.take_unheld().count(), 0);
    }

    proptest! {
        /// The cache never exceeds its target after a release, every cached dbuf is unheld,
        /// and every live dbuf's parent is live (a child holds its parent).
        #[test]
        fn invariants(reads in proptest::collection::vec(0u64..64, 1..300), target in 0u64..2000) {
            let mut d = layer();
            for b in reads {
                read(&mut d, b, target);
                prop_assert!(d.cache_bytes() <= target);
                let mut cached = 0u64;
                for (k, i) in d.index.iter() {
                    let x = d.slab[i as usize];
                    prop_assert_eq!(x.in_cache, x.holds == 0);
                    if x.in_cache { cached += x.size as u64; }
                    if let Some(p) = parent(BlockKey(k)) {
                        prop_assert!(d.exists(p));
                    }
                }
                prop_assert_eq!(cached, d.cache_bytes());
            }
        }
    }
}
