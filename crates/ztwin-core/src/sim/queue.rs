//! The event queue: events ordered by (time, insertion sequence).
//!
//! Equal-time events come out first-in first-out, so a run depends only on its inputs and
//! seed, never on heap internals (the same rule as NeXosim's priority queue). The queue
//! knows nothing of the models: an event is a time and an opaque `u32` target (a client
//! index for the driver).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::time::Nanos;

/// A min-queue of `(time, target)` events with FIFO order among equal times.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<(Nanos, u64, u32)>>,
    seq: u64,
}

impl EventQueue {
    /// An empty queue with room for `capacity` pending events (no reallocation below it).
    pub fn with_capacity(capacity: usize) -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(capacity), seq: 0 }
    }

    /// Schedules `target` at `time`.
    pub fn push(&mut self, time: Nanos, target: u32) {
        self.heap.push(Reverse((time, self.seq, target)));
        self.seq += 1;
    }

    /// Removes and returns the earliest event.
    pub fn pop(&mut self) -> Option<(Nanos, u32)> {
        self.heap.pop().map(|Reverse((t, _, target))| (t, target))
    }

    /// Time of the earliest event.
    pub fn peek_time(&self) -> Option<Nanos> {
        self.heap.peek().map(|Reverse((t, _, _))| *t)
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when no event is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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

    proptest! {
        /// Pushes and pops interleaved answer as an ordered map of (time, insertion) does.
        #[test]
        fn interleaved_pushes_and_pops_match_an_ordered_map(ops in proptest::collection::vec((0u64..40, any::<bool>()), 0..400)) {
            let mut q = EventQueue::default();
            let mut m = std::collections::BTreeMap::new();
            for (i, (t, pop)) in ops.into_iter().enumerate() {
                if pop {
                    let want = m.pop_first().map(|((t, _), target)| (t, target));
                    prop_assert_eq!(q.peek_time(), want.map(|w: (u64, u32)| w.0));
                    prop_assert_eq!(q.pop(), want);
                } else {
                    q.push(t, i as u32);
                    m.insert((t, i), i as u32);
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
