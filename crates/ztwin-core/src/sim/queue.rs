//! The event queue: events ordered by (time, rank, insertion sequence).
//!
//! Equal-time events of one rank come out first-in first-out, so a run depends only on
//! its inputs and seed, never on heap internals (the same rule as NeXosim's priority
//! queue). The rank orders equal-time events of different kinds: the driver gives the
//! background threads (the L2ARC feed, the txg sync) lower ranks than requests, so at one
//! instant a background thread acts before the requests of that instant see its state.
//! The queue knows nothing of the models: an event is a time, a rank and an opaque `u32`
//! target (the driver's encoded `Event`).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::time::Nanos;

/// A min-queue of `(time, target)` events ordered by time, then rank, then insertion.
///
/// Most events arrive in order of time (device completions behind a throttle: a `cat`
/// keeps hundreds of prefetch reads in flight): those are appended to a sorted run and
/// leave it from the front in constant time. The others (CPU work ending before the run's
/// last event) go to a binary heap, and a pop takes the earlier of the two fronts. The
/// order is exactly (time, insertion) either way.
#[derive(Debug, Default)]
pub struct EventQueue {
    /// Sorted by (time, order): an event is appended only after the last one. `order` is
    /// the rank in the top byte and the insertion sequence below it.
    run: VecDeque<(Nanos, u64, u32)>,
    heap: BinaryHeap<Reverse<(Nanos, u64, u32)>>,
    seq: u64,
}

impl EventQueue {
    /// An empty queue with room for `capacity` pending events (no reallocation below it).
    pub fn with_capacity(capacity: usize) -> Self {
        EventQueue {
            run: VecDeque::with_capacity(capacity),
            heap: BinaryHeap::with_capacity(capacity),
            seq: 0,
        }
    }

    /// Schedules `target` at `time` with the default rank (the highest: after any other
    /// rank's events of the same time).
    #[inline]
    pub fn push(&mut self, time: Nanos, target: u32) {
        self.push_ranked(time, u8::MAX, target);
    }

    /// Schedules `target` at `time`; among events of equal time, lower ranks come out first.
    #[inline]
    pub fn push_ranked(&mut self, time: Nanos, rank: u8, target: u32) {
        let e = (time, u64::from(rank) << 56 | self.seq, target);
        self.seq += 1;
        if self.run.back().is_none_or(|b| (time, e.1) > (b.0, b.1)) {
            self.run.push_back(e);
        } else {
            self.heap.push(Reverse(e));
        }
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, u32)> {
        let from_run = match (self.run.front(), self.heap.peek()) {
            (Some(r), Some(Reverse(h))) => (r.0, r.1) < (h.0, h.1),
            (Some(_), None) => true,
            (None, _) => false,
        };
        let e = if from_run { self.run.pop_front() } else { self.heap.pop().map(|Reverse(e)| e) };
        e.map(|(t, _, target)| (t, target))
    }

    /// Time of the earliest event.
    pub fn peek_time(&self) -> Option<Nanos> {
        let r = self.run.front().map(|e| e.0);
        let h = self.heap.peek().map(|Reverse(e)| e.0);
        match (r, h) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.run.len() + self.heap.len()
    }

    /// True when no event is pending.
    pub fn is_empty(&self) -> bool {
        self.run.is_empty() && self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut q = EventQueue::with_capacity(4);
        q.push(5, 1);
        q.push(5, 2);
        q.push(3, 9);
        q.push(5, 0);
        assert_eq!(q.pop(), Some((3, 9)));
        assert_eq!(q.pop(), Some((5, 1)));
        assert_eq!(q.pop(), Some((5, 2)));
        assert_eq!(q.pop(), Some((5, 0)));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn lower_ranks_come_first_at_equal_times() {
        let mut q = EventQueue::default();
        q.push(5, 1);
        q.push_ranked(5, 1, 2);
        q.push_ranked(5, 0, 3);
        q.push_ranked(4, 9, 4);
        q.push_ranked(5, 0, 5);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, [(4, 4), (5, 3), (5, 5), (5, 2), (5, 1)]);
    }

    #[test]
    fn events_in_time_order_bypass_the_heap() {
        let mut q = EventQueue::default();
        for t in [1, 5, 5, 9] {
            q.push(t, t as u32);
        }
        q.push(3, 30);
        assert_eq!((q.run.len(), q.heap.len()), (4, 1));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, [(1, 1), (3, 30), (5, 5), (5, 5), (9, 9)]);
        assert!(q.is_empty());
    }

    proptest! {
        /// Pushes and pops interleaved answer as an ordered map of (time, insertion) does.
        #[test]
        fn interleaved_pushes_and_pops_match_an_ordered_map(ops in proptest::collection::vec((0u64..40, any::<bool>()), 0..400)) {
            let mut q = EventQueue::default();
            let mut m = std::collections::BTreeMap::new();
            for (i, (t, pop)) in ops.into_iter().enumerate() {
                if pop {
                    let want = m.pop_first().map(|((t, _, _), target)| (t, target));
                    prop_assert_eq!(q.peek_time(), want.map(|w: (u64, u32)| w.0));
                    prop_assert_eq!(q.pop(), want);
                } else {
                    // Ranks 0-2 from the time's low bits, so equal times mix ranks.
                    let rank = (t % 3) as u8 * (i % 2) as u8;
                    q.push_ranked(t / 3, rank, i as u32);
                    m.insert((t / 3, rank, i), i as u32);
                }
                prop_assert_eq!(q.len(), m.len());
            }
        }

        #[test]
        fn pops_are_sorted_by_time_then_insertion(times in proptest::collection::vec(0u64..50, 0..200)) {
            let mut q = EventQueue::default();
            for (i, t) in times.iter().enumerate() {
                q.push(*t, i as u32);
            }
            let mut last: Option<(Nanos, u32)> = None;
            while let Some(ev) = q.pop() {
                if let Some(prev) = last {
                    prop_assert!(prev.0 < ev.0 || (prev.0 == ev.0 && prev.1 < ev.1));
                }
                last = Some(ev);
            }
        }
    }
}
