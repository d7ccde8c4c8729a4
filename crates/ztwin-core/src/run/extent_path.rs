//! The XFS/ext4 read path of one request: one device read of the page's blocks, or, with
//! bcache, the reads bcache splits it into (cache device for what it holds, backing device
//! for the rest) and, when the backing read completes, the write of the missed data to the
//! cache device (`cached_dev_read_done()` -> `bch_data_insert()`), which competes with
//! reads on the cache device's queue.

use super::*;

impl Sim<'_> {
    /// Issues the device reads of the client's file read; the client resumes at PageDone
    /// when all have completed.
    pub(super) fn extent_read_start(&mut self, i: usize, c: &mut Client, now: Nanos) {
        let task = self.bcache_task(i);
        let Sim { fs: Fs::Extent { fs, bcache }, devices, costs, queue, .. } = self else {
            unreachable!("the extent path only on XFS/ext4")
        };
        let (start, bytes) = fs.read_range(c.read_offset, c.read_len);
        let done = match bcache {
            None => {
                c.cpu_pending += costs.device_io;
                devices[fs.device].submit(now, Op::Read, bytes)
            }
            Some((b, cache)) => {
                let (backing, cache) = (fs.device, *cache);
                let r = b.read(task, fs.device_offset(c.space, start), bytes, now, |t, op, n| {
                    devices[if t == Target::Cache { cache } else { backing }].submit(now, op, n)
                });
                c.cpu_pending += costs.device_io * u64::from(r.ios);
                (c.insert_offset, c.insert_len) = r.insert.unwrap_or((0, 0));
                r.done
            }
        };
        c.state = State::PageDone;
        queue.at(done, Event::Client(i));
    }

    /// The read completed: bcache writes a miss's data to the cache device now.
    pub(super) fn extent_read_done(&mut self, i: usize, c: &mut Client, now: Nanos) {
        if c.insert_len == 0 {
            return;
        }
        let task = self.bcache_task(i);
        let Sim { fs: Fs::Extent { fs, bcache: Some((b, cache)) }, devices, costs, .. } = self else {
            unreachable!("an insert only with bcache")
        };
        let (backing, cache) = (fs.device, *cache);
        let r = b.insert(task, c.insert_offset, c.insert_len, now, |t, op, n| {
            devices[if t == Target::Cache { cache } else { backing }].submit(now, op, n)
        });
        c.cpu_pending += costs.device_io * u64::from(r.ios);
        c.insert_len = 0;
    }

    /// bcache's task (`current`) for client `i`'s request: its thread, or in a `cat` phase
    /// the cat process (the last task).
    fn bcache_task(&self, i: usize) -> usize {
        match self.mode {
            Mode::Cat { .. } => self.nclients,
            Mode::Workload { .. } | Mode::Fio => i,
        }
    }
}
