//! The textbook ARC of N. Megiddo and D. S. Modha, "ARC: A Self-Tuning, Low Overhead
//! Replacement Cache", USENIX FAST 2003 (figure 4), for unit-size pages.
//!
//! # The algorithm
//!
//! A cache of `c` pages keeps four LRU lists: T1 (pages seen once recently), T2 (seen at
//! least twice), and their ghosts B1, B2 (ids only, of pages evicted from T1, T2), with
//! |T1| + |T2| <= c, |T1| + |B1| <= c, and |T1| + |T2| + |B1| + |B2| <= 2c. The target
//! size `p` of T1 adapts. For a request of page x:
//!
//! - I. x in T1 or T2 (hit): move x to the MRU end of T2.
//! - II. x in B1 (miss): p = min(p + d1, c), d1 = 1 if |B1| >= |B2| else |B2|/|B1|;
//!   REPLACE(x, p); move x to the MRU end of T2.
//! - III. x in B2 (miss): p = max(p - d2, 0), d2 = 1 if |B2| >= |B1| else |B1|/|B2|;
//!   REPLACE(x, p); move x to the MRU end of T2.
//! - IV. x in none (miss):
//!   - A. |T1| + |B1| = c: if |T1| < c, delete the LRU page of B1 and REPLACE(x, p);
//!     else delete the LRU page of T1 (it leaves the cache without a ghost).
//!   - B. |T1| + |B1| < c and |T1| + |T2| + |B1| + |B2| >= c: if that total is 2c,
//!     delete the LRU page of B2; REPLACE(x, p).
//!
//!   Then put x at the MRU end of T1.
//!
//! REPLACE(x, p): if |T1| >= 1 and (|T1| > p or (x in B2 and |T1| = p)), move the LRU
//! page of T1 to the MRU end of B1; else move the LRU page of T2 to the MRU end of B2.
//!
//! `p` is a real number and d1, d2 real quotients, as in libCacheSim's `ARC.c` (which
//! cross-checks against a reference Python ARC); with integer p the adaptation differs.
//!
//! # Simplifications and additions
//!
//! 1. REPLACE also takes from T1 when T2 is empty (libCacheSim's `cond4`): the paper's
//!    rule would otherwise pick the empty T2 when p = c = |T1|.
//! 2. Pages only: no sizes (libCacheSim with `ignore_obj_size`).
//!
//! Storage: one slab of 2c + 1 nodes (id, links, list tag), allocated once, and a
//! hashbrown table of slot indices; nothing is allocated per request.

use hashbrown::HashTable;

use super::lru::{hash_id, NIL};

const T1: u8 = 0;
const B1: u8 = 1;
const T2: u8 = 2;
const B2: u8 = 3;

#[derive(Clone, Copy)]
struct Node {
    id: u64,
    prev: u32,
    next: u32,
    tag: u8,
}

#[derive(Clone, Copy, Default)]
struct List {
    head: u32,
    tail: u32,
    len: u32,
}

/// The textbook ARC.
pub struct ArcPaper {
    c: u32,
    p: f64,
    nodes: Vec<Node>,
    free: u32,
    table: HashTable<u32>,
    lists: [List; 4],
    /// Hits so far.
    pub hits: u64,
    /// Misses so far.
    pub misses: u64,
}

impl ArcPaper {
    /// An empty ARC of `c` pages (at least 1, below 2^31).
    pub fn new(c: u64) -> ArcPaper {
        // Guaranteed by the caller: replay refuses sizes of 0 or 2^31 and more for arc (`Sim::new`).
        assert!((1..(1 << 31)).contains(&c), "ARC size out of range");
        let n = 2 * c as usize + 1;
        ArcPaper {
            c: c as u32,
            p: 0.0,
            nodes: Vec::with_capacity(n),
            free: NIL,
            table: HashTable::with_capacity(n),
            lists: [List { head: NIL, tail: NIL, len: 0 }; 4],
            hits: 0,
            misses: 0,
        }
    }

    /// The adaptive target p of T1, pages.
    pub fn p(&self) -> f64 {
        self.p
    }

    /// |T1|, |B1|, |T2|, |B2|.
    pub fn sizes(&self) -> [u32; 4] {
        [self.lists[0].len, self.lists[1].len, self.lists[2].len, self.lists[3].len]
    }

    /// Pages cached (|T1| + |T2|).
    pub fn len(&self) -> usize {
        (self.lists[T1 as usize].len + self.lists[T2 as usize].len) as usize
    }

    /// True if nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Heap bytes held by the structures (slab, tags, table).
    pub fn heap_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>() + self.table.allocation_size()
    }

    #[inline]
    fn unlink(&mut self, i: u32) {
        let n = self.nodes[i as usize];
        let l = &mut self.lists[n.tag as usize];
        l.len -= 1;
        if n.prev != NIL {
            self.nodes[n.prev as usize].next = n.next;
        } else {
            l.head = n.next;
        }
        if n.next != NIL {
            self.nodes[n.next as usize].prev = n.prev;
        } else {
            l.tail = n.prev;
        }
    }

    #[inline]
    fn push_head(&mut self, i: u32, tag: u8) {
        self.nodes[i as usize].tag = tag;
        let l = &mut self.lists[tag as usize];
        let old = l.head;
        l.head = i;
        l.len += 1;
        if old == NIL {
            l.tail = i;
        } else {
            self.nodes[old as usize].prev = i;
        }
        let n = &mut self.nodes[i as usize];
        n.prev = NIL;
        n.next = old;
    }

    /// Deletes the LRU page of list `tag` from the directory.
    #[inline]
    fn delete_lru(&mut self, tag: u8) {
        let v = self.lists[tag as usize].tail;
        debug_assert!(v != NIL);
        self.unlink(v);
        let id = self.nodes[v as usize].id;
        // Invariant: every node on a list is indexed (insert and delete_lru keep them together).
        self.table.find_entry(hash_id(id), |&j| j == v).expect("indexed").remove();
        self.nodes[v as usize].next = self.free;
        self.free = v;
    }

    /// Moves the LRU page of `from` to the MRU end of `to`.
    #[inline]
    fn demote(&mut self, from: u8, to: u8) {
        let v = self.lists[from as usize].tail;
        debug_assert!(v != NIL);
        self.unlink(v);
        self.push_head(v, to);
    }

    #[inline]
    fn replace(&mut self, in_b2: bool) {
        let t1 = self.lists[T1 as usize].len;
        let t1f = t1 as f64;
        if (t1 >= 1 && (t1f > self.p || (in_b2 && t1f == self.p))) || self.lists[T2 as usize].len == 0 {
            self.demote(T1, B1);
        } else {
            self.demote(T2, B2);
        }
    }

    /// One request of page `id`: true on a hit.
    #[inline]
    pub fn access(&mut self, id: u64) -> bool {
        let h = hash_id(id);
        let nodes = &self.nodes;
        if let Some(&i) = self.table.find(h, |&i| nodes[i as usize].id == id) {
            let tag = self.nodes[i as usize].tag;
            match tag {
                T1 | T2 => {
                    self.hits += 1;
                    if !(tag == T2 && self.lists[T2 as usize].head == i) {
                        self.unlink(i);
                        self.push_head(i, T2);
                    }
                    return true;
                }
                B1 => {
                    let (b1, b2) = (self.lists[B1 as usize].len, self.lists[B2 as usize].len);
                    let c = self.c as f64;
                    let d = if b1 >= b2 { 1.0 } else { b2 as f64 / b1 as f64 };
                    self.p = (self.p + d).min(c);
                    self.unlink(i);
                    self.replace(false);
                }
                _ => {
                    let (b1, b2) = (self.lists[B1 as usize].len, self.lists[B2 as usize].len);
                    let d = if b2 >= b1 { 1.0 } else { b1 as f64 / b2 as f64 };
                    self.p = (self.p - d).max(0.0);
                    self.unlink(i);
                    self.replace(true);
                }
            }
            self.misses += 1;
            self.push_head(i, T2);
            return false;
        }
        self.misses += 1;
        let [t1, b1, t2, b2] = self.sizes();
        let c = self.c;
        if t1 + b1 == c {
            if t1 < c {
                self.delete_lru(B1);
                self.replace(false);
            } else {
                self.delete_lru(T1);
            }
        } else {
            let total = t1 + b1 + t2 + b2;
            if total >= c {
                if total == 2 * c {
                    self.delete_lru(B2);
                }
                self.replace(false);
            }
        }
        let i = if self.free != NIL {
            let i = self.free;
            self.free = self.nodes[i as usize].next;
            self.nodes[i as usize].id = id;
            i
        } else {
            self.nodes.push(Node { id, prev: NIL, next: NIL, tag: T1 });
            (self.nodes.len() - 1) as u32
        };
        self.push_head(i, T1);
        let nodes = &self.nodes;
        self.table.insert_unique(h, i, |&j| hash_id(nodes[j as usize].id));
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_invariants(a: &ArcPaper) {
        let [t1, b1, t2, b2] = a.sizes();
        let c = a.c;
        assert!(t1 + t2 <= c);
        assert!(t1 + b1 <= c);
        assert!(t1 + t2 + b1 + b2 <= 2 * c);
        if t1 + b1 + t2 + b2 >= c {
            assert_eq!(t1 + t2, c);
        }
        assert_eq!(a.table.len() as u32, t1 + b1 + t2 + b2);
        assert!((0.0..=c as f64).contains(&a.p));
    }

    #[test]
    fn hand_worked_sequence() {
        // c = 2: 1, 2 fill T1; 1 hits (T2); 3 misses: |L1| = 1 < c, total 2 >= c,
        // REPLACE: |T1| = 1 > p = 0 -> 2 to B1.
        let mut a = ArcPaper::new(2);
        assert!(!a.access(1));
        assert!(!a.access(2));
        assert!(a.access(1));
        assert!(!a.access(3));
        assert_eq!(a.sizes(), [1, 1, 1, 0]);
        // 2 is in B1: p = 1, REPLACE: |T1| = 1 = p, x not in B2 -> T2's LRU (1) to B2.
        assert!(!a.access(2));
        assert_eq!(a.p(), 1.0);
        // T1 {3}, B1 {} (2 left it), T2 {2}, B2 {1}.
        assert_eq!(a.sizes(), [1, 0, 1, 1]);
        assert!(a.access(3));
        assert!(!a.access(1)); // B2 hit: p = max(1 - 1, 0) = 0
        assert_eq!(a.p(), 0.0);
        check_invariants(&a);
    }

    #[test]
    fn invariants_on_random_trace() {
        let mut a = ArcPaper::new(50);
        let mut x: u64 = 12345;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let id = if x & 3 == 0 { x % 40 } else { x % 400 };
            a.access(id);
            check_invariants(&a);
        }
        assert!(a.hits > 0 && a.p() > 0.0);
    }
}
