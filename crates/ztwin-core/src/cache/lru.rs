//! A fixed-capacity LRU cache of unit-size entries, for trace replay.
//!
//! What: `access(id)` answers hit or miss and keeps the `capacity` most recently used ids;
//! a miss with the cache full evicts the least recently used id. Exactly libCacheSim's
//! `LRU` (`libCacheSim/cache/eviction/LRU.c`) with `ignore_obj_size` (every object of
//! size 1, cache size counted in objects): a hit moves the id to the head, a miss evicts
//! the tail while full, then inserts at the head.
//!
//! How: one slab of 16-byte nodes (`u64` id, `u32` prev/next links) allocated once at
//! `capacity`, a hashbrown table of `u32` slot indices (about 5 bytes per slot), no
//! allocation per request: an eviction reuses the victim's slot.
//!
//! Simplifications: none for unit-size entries; object sizes are not modelled.

use hashbrown::HashTable;

pub(crate) const NIL: u32 = u32::MAX;

/// splitmix64 finalizer: a fast, well-mixed hash of the id.
pub(crate) use crate::support::key_table::hash_key as hash_id;

#[derive(Clone, Copy)]
struct Node {
    id: u64,
    prev: u32,
    next: u32,
}

/// The LRU cache.
pub struct Lru {
    cap: u32,
    nodes: Vec<Node>,
    table: HashTable<u32>,
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
        assert!(capacity >= 1 && capacity < NIL as u64, "LRU capacity out of range");
        let cap = capacity as u32;
        Lru {
            cap,
            nodes: Vec::with_capacity(cap as usize),
            table: HashTable::with_capacity(cap as usize),
            head: NIL,
            tail: NIL,
            hits: 0,
            misses: 0,
        }
    }

    /// Entries cached.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// True if nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Heap bytes held by the cache's structures (slab + table).
    pub fn heap_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>() + self.table.allocation_size()
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

    /// One request: true on a hit.
    #[inline]
    pub fn access(&mut self, id: u64) -> bool {
        let h = hash_id(id);
        let nodes = &self.nodes;
        if let Some(&i) = self.table.find(h, |&i| nodes[i as usize].id == id) {
            self.hits += 1;
            if self.head != i {
                self.unlink(i);
                self.push_head(i);
            }
            return true;
        }
        self.misses += 1;
        let i = if self.nodes.len() < self.cap as usize {
            self.nodes.push(Node { id, prev: NIL, next: NIL });
            (self.nodes.len() - 1) as u32
        } else {
            let v = self.tail;
            let old = self.nodes[v as usize].id;
            self.table.find_entry(hash_id(old), |&j| j == v).expect("indexed victim").remove();
            self.unlink(v);
            self.nodes[v as usize].id = id;
            v
        };
        self.push_head(i);
        let nodes = &self.nodes;
        self.table.insert_unique(h, i, |&j| hash_id(nodes[j as usize].id));
        false
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
