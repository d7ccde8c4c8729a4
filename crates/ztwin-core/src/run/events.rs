//! What the simulated clock wakes: typed events on the one queue.
//!
//! Every actor of the run is an event target, as every actor of the real system is a
//! thread: a client (a sysbench thread, one in-flight slot of a fio job, the `cat`
//! process), a prefetch read in flight (`dbuf_prefetch_impl`'s chain, see `prefetch`),
//! and the background threads: the `l2arc_feed_thread`, the txg sync with its vdev
//! queues (`txg_sync_thread` → `spa_sync`, see `zfs_write`) and the intent log's zio
//! completions (a log block's write done, its flushes done, a commit waiter's timeout;
//! see `fs::zfs::zil`), XFS/ext4's journal thread, the page cache's flusher and bcache's
//! writeback thread, and the database's page cleaner, master thread, LRU manager and purge
//! threads (timers; a commit wakes the purge coordinator, the coordinator its workers).
//!
//! At one instant the background threads act before the requests of that instant, the
//! feed before the sync (the queue's rank; the order the driver has always used), and
//! requests keep their first-in first-out order. A run lasts while requests are pending:
//! the background threads' own wake-ups do not keep it going (their threads sleep forever
//! in the real system too), except that writers throttled on dirty data wait for the sync
//! and committers for the intent log.
//!
//! A background thread's wake-up is a hint: the model that owns the thread says when it
//! is next due (`Sim::next_feed`, `WritePath::next_at`), and a wake-up that no longer
//! matches (a restart rescheduled the feed; a flush ran the sync early) does nothing.

use crate::sim::queue::EventQueue;
use crate::sim::time::Nanos;

/// What an event wakes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Event {
    /// Client `i` resumes its request.
    Client(usize),
    /// Prefetch read `k` (a slot of `Sim::prefetches`) resumes its chain.
    Prefetch(u32),
    /// L2ARC feed thread `k` wakes (the releases' one thread is 0; with master's
    /// per-device threads, `k` is the cache device's number).
    L2arcFeed(u8),
    /// The txg sync (and the vdev queues' write completions) has something due.
    TxgSync,
    /// The intent log has something due.
    Zil,
    /// XFS/ext4: the journal's thread (kjournald2, the log worker) has something due.
    Journal,
    /// XFS/ext4: the page cache's flusher (`wb_workfn`) has something due.
    Flusher,
    /// bcache's writeback thread (`bch_writeback_thread`) has something due.
    Writeback,
    /// Database thread `i` (a client slot: the page cleaner, the master thread, a purge
    /// thread) wakes from its timed sleep, or is woken.
    Timer(usize),
}

/// Targets below this are clients; prefetches are tagged above it.
const PREFETCH_TAG: u32 = 1 << 30;
const SYNC: u32 = 1 << 31;
const ZIL: u32 = SYNC + 1;
const JOURNAL: u32 = SYNC + 2;
const FLUSHER: u32 = SYNC + 3;
const WRITEBACK: u32 = SYNC + 4;
/// Feed thread `k` is FEED + k (k < 256).
const FEED: u32 = SYNC + 8;
const TIMER: u32 = FEED + 256;

/// The most clients a run may have (their events carry their index below the tags).
pub(super) const MAX_CLIENTS: usize = PREFETCH_TAG as usize;

impl Event {
    fn encode(self) -> u32 {
        match self {
            Event::Client(i) => {
                debug_assert!(i < MAX_CLIENTS);
                i as u32
            }
            Event::Prefetch(k) => {
                debug_assert!(k < PREFETCH_TAG);
                PREFETCH_TAG | k
            }
            Event::L2arcFeed(k) => FEED + u32::from(k),
            Event::TxgSync => SYNC,
            Event::Zil => ZIL,
            Event::Journal => JOURNAL,
            Event::Flusher => FLUSHER,
            Event::Writeback => WRITEBACK,
            Event::Timer(i) => {
                debug_assert!(i < MAX_CLIENTS);
                TIMER + i as u32
            }
        }
    }

    fn decode(target: u32) -> Event {
        match target {
            SYNC => Event::TxgSync,
            ZIL => Event::Zil,
            JOURNAL => Event::Journal,
            FLUSHER => Event::Flusher,
            WRITEBACK => Event::Writeback,
            t if t >= TIMER => Event::Timer((t - TIMER) as usize),
            t if t >= FEED => Event::L2arcFeed((t - FEED) as u8),
            t if t >= PREFETCH_TAG => Event::Prefetch(t & (PREFETCH_TAG - 1)),
            t => Event::Client(t as usize),
        }
    }

    /// Order among events of one instant (lower first).
    fn rank(self) -> u8 {
        match self {
            Event::L2arcFeed(_) => 0,
            Event::TxgSync => 1,
            Event::Zil => 2,
            Event::Journal => 3,
            Event::Flusher => 4,
            Event::Writeback => 5,
            Event::Timer(_) => 6,
            Event::Client(_) | Event::Prefetch(_) => u8::MAX,
        }
    }

    /// A request's event (a client or a prefetch), which keeps the run going.
    fn is_request(self) -> bool {
        matches!(self, Event::Client(_) | Event::Prefetch(_))
    }
}

/// The queue of typed events, with the count of requests pending.
#[derive(Debug, Default)]
pub(super) struct Schedule {
    queue: EventQueue,
    requests: usize,
}

impl Schedule {
    pub(super) fn with_capacity(capacity: usize) -> Schedule {
        Schedule { queue: EventQueue::with_capacity(capacity), requests: 0 }
    }

    /// Wakes `event` at `time`.
    #[inline]
    pub(super) fn at(&mut self, time: Nanos, event: Event) {
        self.requests += event.is_request() as usize;
        self.queue.push_ranked(time, event.rank(), event.encode());
    }

    /// The next event.
    #[inline]
    pub(super) fn pop(&mut self) -> Option<(Nanos, Event)> {
        let (t, target) = self.queue.pop()?;
        let event = Event::decode(target);
        self.requests -= event.is_request() as usize;
        Some((t, event))
    }

    /// Requests' events pending (background wake-ups not counted).
    pub(super) fn requests(&self) -> usize {
        self.requests
    }

    /// Drops every pending event.
    pub(super) fn clear(&mut self) {
        while self.queue.pop().is_some() {}
        self.requests = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_round_trip_through_their_encoding() {
        for e in [
            Event::Client(0),
            Event::Client(MAX_CLIENTS - 1),
            Event::Prefetch(0),
            Event::Prefetch(7),
            Event::L2arcFeed(0),
            Event::L2arcFeed(255),
            Event::TxgSync,
            Event::Zil,
            Event::Journal,
            Event::Flusher,
            Event::Writeback,
            Event::Timer(0),
            Event::Timer(17),
        ] {
            assert_eq!(Event::decode(e.encode()), e);
        }
    }

    #[test]
    fn background_threads_act_first_at_an_instant_and_do_not_count_as_requests() {
        let mut s = Schedule::default();
        s.at(5, Event::Client(1));
        s.at(5, Event::Zil);
        s.at(5, Event::TxgSync);
        s.at(5, Event::Prefetch(2));
        s.at(5, Event::L2arcFeed(0));
        assert_eq!(s.requests(), 2);
        let order: Vec<_> = std::iter::from_fn(|| s.pop()).map(|e| e.1).collect();
        assert_eq!(
            order,
            [Event::L2arcFeed(0), Event::TxgSync, Event::Zil, Event::Client(1), Event::Prefetch(2)]
        );
        assert_eq!(s.requests(), 0);
    }
}
