//! A fixed-capacity LRU cache of unit-size entries, for trace replay.
//!
//! What: `access(id)` answers hit or miss and keeps the `capacity` most recently used ids;
//! a miss with the cache full evicts the least recently used id. Exactly libCacheSim's
//! `LRU` (`libCacheSim/cache/eviction/LRU.c`) with `ignore_obj_size` (every object of
//! size 1, cache size counted in objects): a hit moves the id to the head, a miss evicts
//! the tail while full, then inserts at the head.
//!
//! How: one slab of 24-byte nodes (`u64` id, `u32` prev/next links of the LRU list and
//! the next node of the id's hash chain) allocated once at `capacity`, and a table of
//! `u32` chain heads, a power of two at least twice the capacity (Fibonacci hashing of
//! the id: one multiply), made once: about 32 bytes per entry, no allocation per request
//! (an eviction reuses the victim's slot). A lookup reads its chain's head and, on
//! average, under one node. This chained table beat hashbrown's (whose probes also read
//! a control group and then the node) by 1.7x on the ARC paper's P6 at 32768 entries,
//! where most requests are misses (a miss looks up, unchains the victim and chains the
//! new id); a caller that knows the coming ids can [`Lru::prefetch`] their chain heads,
//! as replay does, which pays at large sizes (2^18 entries: 0.13 s to 0.09 s).
//!
//! Simplifications: none for unit-size entries; object sizes are not modelled.

use crate::support::mem_hint::prefetch;

pub(crate) const NIL: u32 = u32::MAX;

/// splitmix64 finalizer: a fast, well-mixed hash of the id.
pub(crate) use crate::support::key_table::hash_key as hash_id;

#[derive(Clone, Copy)]
struct Node {
    id: u64,
    prev: u32,
    next: u32,
    /// The next node of this id's hash chain (NIL at its end).
    chain: u32,
}

/// The LRU cache.
pub struct Lru {
    cap: u32,
    nodes: Vec<Node>,
    /// Hash chain heads (NIL: empty); `heads.len()` is 2^(64 - shift).
    heads: Vec<u32>,
    shift: u32,
    head: u32,
    tail: u32,
    /// Hits so far.
    pub hits: u64,
    /// Misses so far.
    pub misses: u64,
}

impl Lru {
    /// An empty cache of `capacity` entries (at least 1, below 2^32 - 1).
    pub fn new(capacity: u64) -> Lru {
        // Guaranteed by the caller: replay refuses sizes of 0 or 2^32 - 1 and more for lru (`Sim::new`).
        assert!(capacity >= 1 && capacity < NIL as u64, "LRU capacity out of range");
        let cap = capacity as u32;
        let nheads = (u64::from(cap) * 2).next_power_of_two().max(16);
        Lru {
            cap,
            nodes: Vec::with_capacity(cap as usize),
            heads: vec![NIL; nheads as usize],
            shift: 64 - nheads.trailing_zeros(),
            head: NIL,
            tail: NIL,
            hits: 0,
            misses: 0,
        }
    }

    /// Entries the cache holds at most.
    pub fn capacity(&self) -> u64 {
        u64::from(self.cap)
    }

    /// Entries cached.
    pub fn len(&self) -> usize {
        // Slots are taken once and then reused: one per cached entry.
        self.nodes.len()
    }

    /// True if nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Heap bytes held by the cache's structures (slab + chain heads).
    pub fn heap_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>()
            + self.heads.capacity() * std::mem::size_of::<u32>()
    }

    /// The chain of `id`: Fibonacci hashing (the product's top bits depend on every bit).
    #[inline]
    fn chain_of(&self, id: u64) -> usize {
        (id.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize
    }

    /// Starts bringing the chain head of `id` into the CPU caches (a coming access reads
    /// it first); changes nothing.
    #[inline]
    pub fn prefetch(&self, id: u64) {
        prefetch(&self.heads[self.chain_of(id)]);
    }

    #[inline]
    fn unlink(&mut self, i: u32) {
        let n = self.nodes[i as usize];
        if n.prev != NIL {
            self.nodes[n.prev as usize].next = n.next;
        } else {
            self.head = n.next;
        }
        if n.next != NIL {
            self.nodes[n.next as usize].prev = n.prev;
        } else {
            self.tail = n.prev;
        }
    }

    #[inline]
    fn push_head(&mut self, i: u32) {
        let old = self.head;
        {
            let n = &mut self.nodes[i as usize];
            n.prev = NIL;
            n.next = old;
        }
        if old != NIL {
            self.nodes[old as usize].prev = i;
        } else {
            self.tail = i;
        }
        self.head = i;
    }

    /// Takes node `v` (cached) off its hash chain.
    #[inline]
    fn unchain(&mut self, v: u32) {
        let b = self.chain_of(self.nodes[v as usize].id);
        let after = self.nodes[v as usize].chain;
        let mut p = self.heads[b];
        if p == v {
            self.heads[b] = after;
            return;
        }
        // Invariant: a cached node is on its id's chain, so the walk meets it before NIL.
        while p != NIL {
            let next = self.nodes[p as usize].chain;
            if next == v {
                self.nodes[p as usize].chain = after;
                return;
            }
            p = next;
        }
        debug_assert!(false, "LRU node {v} not on its chain");
    }

    /// One request: true on a hit.
    #[inline]
    pub fn access(&mut self, id: u64) -> bool {
        let b = self.chain_of(id);
        let mut c = self.heads[b];
        while c != NIL {
            let n = &self.nodes[c as usize];
            if n.id == id {
                self.hits += 1;
                if self.head != c {
                    self.unlink(c);
                    self.push_head(c);
                }
                return true;
            }
            c = n.chain;
        }
        self.misses += 1;
        let i = if self.nodes.len() < self.cap as usize {
            self.nodes.push(Node { id, prev: NIL, next: NIL, chain: NIL });
            (self.nodes.len() - 1) as u32
        } else {
            // Full (cap >= 1 entries): the tail is a cached entry; its slot takes the id.
            let v = self.tail;
            self.unchain(v);
            self.unlink(v);
            self.nodes[v as usize].id = id;
            // The next miss unchains the new tail: start reading its chain head now.
            if self.tail != NIL {
                self.prefetch(self.nodes[self.tail as usize].id);
            }
            v
        };
        self.push_head(i);
        self.nodes[i as usize].chain = self.heads[b];
        self.heads[b] = i;
        false
    }

    /// The slot of `id` if it is cached, made the most recently used (no hit counted).
    pub fn touch(&mut self, id: u64) -> Option<u32> {
        let mut c = self.heads[self.chain_of(id)];
        while c != NIL {
            let n = &self.nodes[c as usize];
            if n.id == id {
                if self.head != c {
                    self.unlink(c);
                    self.push_head(c);
                }
                return Some(c);
            }
            c = n.chain;
        }
        None
    }

    /// Caches `id`, which must not be cached, as the most recently used, the least
    /// recently used id making room when full (no miss counted); returns its slot (a
    /// victim's slot is reused).
    pub fn insert(&mut self, id: u64) -> u32 {
        debug_assert!(self.touch_free(id), "insert of a cached id");
        let b = self.chain_of(id);
        let i = if self.nodes.len() < self.cap as usize {
            self.nodes.push(Node { id, prev: NIL, next: NIL, chain: NIL });
            (self.nodes.len() - 1) as u32
        } else {
            let v = self.tail;
            self.unchain(v);
            self.unlink(v);
            self.nodes[v as usize].id = id;
            v
        };
        self.push_head(i);
        self.nodes[i as usize].chain = self.heads[b];
        self.heads[b] = i;
        i
    }

    /// Whether `id` is not cached (for a debug check).
    fn touch_free(&self, id: u64) -> bool {
        let mut c = self.heads[self.chain_of(id)];
        while c != NIL {
            if self.nodes[c as usize].id == id {
                return false;
            }
            c = self.nodes[c as usize].chain;
        }
        true
    }

    /// Ids from most to least recently used (for tests).
    pub fn order(&self) -> Vec<u64> {
        let mut v = Vec::with_capacity(self.len());
        let mut c = self.head;
        while c != NIL {
            v.push(self.nodes[c as usize].id);
            c = self.nodes[c as usize].next;
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Hits and order are a plain list's (the most recent first, the last one out),
        /// for any ids: the largest, ones that differ only in high bits, ones that share
        /// chains in a small cache.
        #[test]
        fn behaves_as_a_list(
            pool in proptest::collection::vec(prop_oneof![any::<u64>(), Just(u64::MAX), Just(0u64), (0u64..8).prop_map(|k| k << 60)], 1..20),
            picks in proptest::collection::vec(any::<usize>(), 1..400),
            cap in 1u64..12,
        ) {
            let mut c = Lru::new(cap);
            let mut list: std::collections::VecDeque<u64> = Default::default();
            for p in picks {
                let id = pool[p % pool.len()];
                let hit = if let Some(at) = list.iter().position(|&x| x == id) {
                    list.remove(at);
                    true
                } else {
                    if list.len() as u64 == cap {
                        list.pop_back();
                    }
                    false
                };
                list.push_front(id);
                prop_assert_eq!(c.access(id), hit);
            }
            prop_assert_eq!(c.order(), list.iter().copied().collect::<Vec<_>>());
            prop_assert_eq!(c.len(), list.len());
        }
    }

    #[test]
    fn evicts_least_recent() {
        let mut c = Lru::new(2);
        assert!(!c.access(1));
        assert!(!c.access(2));
        assert!(c.access(1));
        assert!(!c.access(3)); // evicts 2
        assert!(!c.access(2));
        assert!(!c.access(1)); // 1 was evicted by 2
        assert_eq!(c.order(), vec![1, 2]);
        assert_eq!((c.hits, c.misses), (1, 5));
        assert!(c.heap_bytes() < 200);
    }
}
