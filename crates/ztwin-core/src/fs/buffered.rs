//! XFS and ext4's buffered files: the Linux page cache (`fs::page_cache`) under the extent
//! layer, driven as its module doc says ("Driving it").
//!
//! A file opened without O_DIRECT (fio's direct=0; InnoDB's data files with
//! innodb_flush_method = fsync or O_DSYNC; MySQL 5.7's redo log whatever the method,
//! MariaDB's when it chose buffered writes; the binary log) is read and written through the
//! one page cache of the machine; what it sends to the device takes the layer's device
//! path (the extent mapping, the md array or a controller through [`BlockTarget`], bcache
//! when present), and counts in iostat like any other I/O:
//!
//! - A read asks the cache (`PageCache::read`) through its open file's readahead state,
//!   issues the plan's device reads at once and waits for those that cover the bytes it
//!   asked for (a readahead window's async part is not waited for: the kernel waits for the
//!   folios it copies), and for pages another read has in flight. Then it copies the bytes
//!   out (the machine's `memcpy_bytes_per_sec`, as ZFS's copy from the ARC). A plan that is
//!   full or found nothing to reclaim is asked again for the rest.
//! - A write (`PageCache::write`, the writing thread's dirty-throttle state) reads the pages
//!   it covers in part that are not cached, copies the bytes in, and returns after the
//!   dirty throttle's pause (`balance_dirty_pages`): a timer, as every wait here.
//! - fsync, fdatasync and the end of an O_SYNC/O_DSYNC write write the file's (or the
//!   range's) dirty pages and wait for them (`PageCache::fsync`, `sync_range`,
//!   `sync_next`); the journal's part follows (`fs::journal`, the driver's JournalSync).
//! - The flusher (`PageCache::writeback_next`) is a background thread of the run, woken at
//!   `writeback_due`; its writes go to the device like the others.
//!
//! The CPU of each device request (`device_io`) is the caller's, as for O_DIRECT I/O; the
//! flusher's is not counted (a kernel thread's, as the journal's).
//!
//! Simplifications: 1. a read's copy is counted whole when its data is there (not page by
//! page as `filemap_read` copies); 2. bcache's insert of a missed read's data is issued
//! when the reader's data is there (for every device read of its plan, readahead
//! included); 3. a new file in an existing file's place ([`ExtentLayer::new_file`]: a
//! binary log file after a rotation, in the slot of the one four files before it) starts
//! empty, i_size 0 and no page cached (`PageCache::truncate`), on the same device blocks
//! (ext4 and XFS would allocate new ones) and without the creation's own journal
//! entries (its inode and directory changes: the first write's extension logs the
//! inode); 4. ext4's delayed allocation and data=ordered writeback
//! of newly allocated blocks at a journal commit are not modelled: the journal notes a
//! write's metadata when the write is made, and its commit does not wait for data the
//! flusher has not written.

use crate::cache::bcache::Bcache;
use crate::dev::device::{Device, Op};
use crate::dev::target::BlockTarget;
use crate::error::Result;
use crate::fs::extent::{backing, route, ExtentFs, ExtentLayer, ExtentRead};
use crate::fs::page_cache::{
    DevIo, Dirtier, FileId, FileRa, PageCache, PageCacheParams, PageCacheStats, SyncStep, SyncWalk, READ_IOS,
};
use crate::fs::ReadStep;
use crate::sim::time::Nanos;

/// A buffered write in progress: bytes [offset, offset + len) of `file`, `done` of them
/// copied, the thread waiting until `until`.
#[derive(Debug, Clone, Copy)]
struct BufWrite {
    file: u32,
    offset: u64,
    len: u64,
    done: u64,
    until: Nanos,
}

impl BufWrite {
    const IDLE: BufWrite = BufWrite { file: 0, offset: 0, len: 0, done: 0, until: 0 };
}

/// The page cache of the machine and what its callers keep (see the module doc).
pub struct BufferedIo {
    /// The cache.
    pub pc: PageCache,
    /// The files' sizes (i_size) when the cache was made: a restart makes it again.
    sizes: Vec<u64>,
    /// Open files' readahead states: the database's (one descriptor per file: InnoDB opens
    /// each file once), then `cat`'s, then the fio clones' files of the phase running.
    ras: Vec<FileRa>,
    /// Per task (the clients, the `cat` process, then the flusher): the thread's dirty
    /// throttle, its sync walk, its write, and bcache's inserts of its read's misses.
    dirtiers: Vec<Dirtier>,
    walks: Vec<Option<SyncWalk>>,
    writes: Vec<BufWrite>,
    inserts: Vec<Vec<(u64, u32)>>,
    /// CPU of copying a byte between the cache and the caller's buffer, simulated ns.
    memcpy_ns_per_byte: f64,
}

impl BufferedIo {
    /// A cache of `params` over files of `sizes` (i_size each), for `tasks` tasks (clients
    /// and the `cat` process; the flusher is one more).
    pub fn new(
        params: PageCacheParams,
        sizes: &[u64],
        tasks: usize,
        memcpy_ns_per_byte: f64,
    ) -> Result<BufferedIo> {
        let pc = new_cache(params, sizes)?;
        let ra = pc.file_ra();
        let n = tasks + 1;
        Ok(BufferedIo {
            pc,
            sizes: sizes.to_vec(),
            ras: vec![ra; 2 * sizes.len()],
            dirtiers: vec![Dirtier::default(); n],
            walks: vec![None; n],
            writes: vec![BufWrite::IDLE; n],
            inserts: (0..n).map(|_| Vec::with_capacity(2 * READ_IOS)).collect(),
            memcpy_ns_per_byte,
        })
    }

    /// The flusher's task (bcache's `current` for its writes).
    pub fn flusher_task(&self) -> usize {
        self.dirtiers.len() - 1
    }

    /// The readahead state of the database's descriptor of driver file `file`.
    pub fn db_ra(&self, file: u32) -> u32 {
        file
    }

    /// The readahead state of `cat`'s descriptor of driver file `file` (`fresh`: cat opens
    /// the file now).
    pub fn cat_ra(&mut self, file: u32, fresh: bool) -> u32 {
        let k = self.sizes.len() as u32 + file;
        if fresh {
            self.ras[k as usize] = self.pc.file_ra();
        }
        k
    }

    /// `n` new open files (a fio phase's clones' files, in order): the index of the first.
    /// The previous phase's are closed. Call at a phase's start.
    pub fn open_files(&mut self, n: usize) -> u32 {
        let base = 2 * self.sizes.len();
        self.ras.truncate(base);
        let ra = self.pc.file_ra();
        self.ras.extend(std::iter::repeat_n(ra, n));
        base as u32
    }

    /// Open file `k`'s readahead state (for its `posix_fadvise`).
    pub fn ra_mut(&mut self, k: u32) -> &mut FileRa {
        &mut self.ras[k as usize]
    }

    /// The bdi's `ra_pages`.
    pub fn ra_pages(&self) -> u64 {
        self.pc.ra_pages()
    }

    /// The cache's counters.
    pub fn stats(&self) -> PageCacheStats {
        self.pc.stats()
    }

    /// Drops every thread's write, sync and pending insert (the run abandons them).
    pub fn abandon(&mut self) {
        self.walks.fill(None);
        self.writes.fill(BufWrite::IDLE);
        for v in &mut self.inserts {
            v.clear();
        }
    }
}

/// A fresh cache of `params` with files of `sizes`, file ids in order.
fn new_cache(params: PageCacheParams, sizes: &[u64]) -> Result<PageCache> {
    let mut pc = PageCache::new(params)?;
    for &s in sizes {
        pc.add_file(s)?;
    }
    Ok(pc)
}

/// One device I/O of the page cache on the filesystem's target at `now` (through bcache
/// if present; `sync`: REQ_SYNC, a WB_SYNC_ALL write): its completion, the device requests
/// it took, and (a bcache read miss) the device range to insert once it completed.
#[allow(clippy::too_many_arguments)]
fn page_io(
    fs: &ExtentFs,
    target: &mut BlockTarget,
    bcache: &mut Option<(Box<Bcache>, usize)>,
    task: usize,
    io: &DevIo,
    sync: bool,
    now: Nanos,
    devices: &mut [Device],
) -> (Nanos, u32, Option<(u64, u32)>) {
    let offset = fs.device_offset(io.file, io.offset);
    match bcache {
        None => {
            let (done, n) = target.submit(devices, now, io.op, offset, io.bytes);
            (done, n, None)
        }
        Some((b, cache)) => {
            let (backing, cache) = (backing(target), *cache);
            let submit = |t, op, n| devices[route(t, backing, cache)].submit(now, op, n);
            match io.op {
                Op::Read => {
                    let r = b.read(task, offset, io.bytes, now, submit);
                    (r.done, r.ios, r.insert)
                }
                Op::Write => {
                    let r = b.write(task, offset, io.bytes, sync, now, submit);
                    (r.done, r.ios, None)
                }
            }
        }
    }
}

/// Whether device I/O `io` covers a byte of [first, end) of its file.
fn covers(io: &DevIo, first: u64, end: u64) -> bool {
    io.offset < end && io.offset + u64::from(io.bytes) > first
}

/// Steps a plan may be asked again at the same instant before the caller yields (a guard:
/// each full plan covers at least one page).
const SAME_INSTANT_PLANS: u32 = 64;

impl ExtentLayer {
    /// Steps buffered read `r` of task `task` at `now` (see the module doc).
    pub(crate) fn buffered_read(
        &mut self,
        task: usize,
        r: &mut ExtentRead,
        now: Nanos,
        cpu: &mut Nanos,
        devices: &mut [Device],
    ) -> ReadStep {
        let ExtentLayer { fs, target, bcache, device_io, page_cache, .. } = self;
        // Invariant: the driver starts buffered reads only when the layer has a page cache.
        let b = page_cache.as_deref_mut().expect("a buffered read needs the page cache");
        if !r.issued {
            r.until = r.until.max(now);
            for _ in 0..SAME_INSTANT_PLANS {
                let pos = r.offset + u64::from(r.pos);
                let plan = b.pc.read(
                    &mut b.ras[r.ra as usize],
                    r.file as FileId,
                    pos,
                    u64::from(r.len - r.pos),
                    now,
                );
                r.until = r.until.max(plan.wait_until);
                let end = pos + plan.done_bytes;
                for io in plan.ios() {
                    let (done, n, insert) = page_io(fs, target, bcache, task, io, false, now, devices);
                    *cpu += *device_io * u64::from(n);
                    b.pc.io_done_at(io, done);
                    if covers(io, pos, end) {
                        r.until = r.until.max(done);
                    }
                    if let Some(ins) = insert {
                        b.inserts[task].push(ins);
                    }
                }
                r.pos += plan.done_bytes as u32;
                match plan.resume_at {
                    Some(t) if r.pos < r.len => {
                        if t > now {
                            // Nothing could be reclaimed: ask again at the next completion.
                            return ReadStep::WaitUntil(t);
                        }
                    }
                    // Done, or the end of file.
                    _ => {
                        r.issued = true;
                        break;
                    }
                }
            }
            if !r.issued {
                return ReadStep::WaitUntil(now);
            }
            if r.until > now {
                return ReadStep::WaitUntil(r.until);
            }
        }
        // The data is there: the copy to the caller, and bcache's inserts of the misses.
        *cpu += (f64::from(r.pos) * b.memcpy_ns_per_byte) as Nanos;
        if let Some((bc, cache)) = bcache {
            let (backing, cache) = (backing(target), *cache);
            for k in 0..b.inserts[task].len() {
                let (off, len) = b.inserts[task][k];
                let res = bc.insert(task, off, len, now, |t, op, n| {
                    devices[route(t, backing, cache)].submit(now, op, n)
                });
                *cpu += *device_io * u64::from(res.ios);
            }
        }
        b.inserts[task].clear();
        ReadStep::Done
    }

    /// Whether the layer takes I/O to files opened without O_DIRECT through the page cache.
    pub fn buffered(&self) -> bool {
        self.page_cache.is_some()
    }

    /// Task `task` writes bytes [offset, offset + len) of file `file` through the page
    /// cache; step it with [`ExtentLayer::buffered_write`].
    pub fn start_buffered_write(&mut self, task: usize, file: u32, offset: u64, len: u32) {
        if let Some(b) = self.page_cache.as_deref_mut() {
            b.writes[task] = BufWrite { file, offset, len: u64::from(len), done: 0, until: 0 };
        }
    }

    /// Steps task `task`'s buffered write at `now`: the reads of partial pages, the copy,
    /// the dirty throttle's pause (see the module doc).
    pub fn buffered_write(
        &mut self,
        task: usize,
        now: Nanos,
        cpu: &mut Nanos,
        devices: &mut [Device],
    ) -> ReadStep {
        let ExtentLayer { fs, target, bcache, device_io, page_cache, .. } = self;
        let Some(b) = page_cache.as_deref_mut() else { return ReadStep::Done };
        let mut w = b.writes[task];
        if w.until > now {
            return ReadStep::WaitUntil(w.until);
        }
        for _ in 0..SAME_INSTANT_PLANS {
            if w.done >= w.len {
                b.writes[task] = BufWrite::IDLE;
                return ReadStep::Done;
            }
            let plan =
                b.pc.write(&mut b.dirtiers[task], w.file as FileId, w.offset + w.done, w.len - w.done, now);
            let mut t = plan.wait_until.max(now);
            for io in plan.reads() {
                let (done, n, _) = page_io(fs, target, bcache, task, io, false, now, devices);
                *cpu += *device_io * u64::from(n);
                b.pc.io_done_at(io, done);
                t = t.max(done);
            }
            *cpu += (plan.done_bytes as f64 * b.memcpy_ns_per_byte) as Nanos;
            w.done += plan.done_bytes;
            t = t.saturating_add(plan.pause_ns);
            if w.done < w.len {
                if let Some(r) = plan.retry_at {
                    t = t.max(r);
                }
            }
            if t > now {
                w.until = t;
                b.writes[task] = w;
                return ReadStep::WaitUntil(t);
            }
        }
        b.writes[task] = w;
        ReadStep::WaitUntil(now)
    }

    /// Task `task` syncs file `file`'s data through the page cache: the whole file
    /// (fsync, fdatasync) or the bytes `range` (an O_SYNC/O_DSYNC write); false (nothing to
    /// step) without a page cache. Step it with [`ExtentLayer::data_sync`].
    pub fn start_data_sync(&mut self, task: usize, file: u32, range: Option<(u64, u64)>) -> bool {
        let Some(b) = self.page_cache.as_deref_mut() else { return false };
        let walk = match range {
            None => b.pc.fsync(file as FileId),
            Some((offset, len)) => b.pc.sync_range(file as FileId, offset, len),
        };
        b.walks[task] = Some(walk);
        true
    }

    /// Steps task `task`'s data sync at `now` (`file_write_and_wait_range`): its writes go
    /// to the device now; it waits for earlier writeback and for its own.
    pub fn data_sync(
        &mut self,
        task: usize,
        now: Nanos,
        cpu: &mut Nanos,
        devices: &mut [Device],
    ) -> ReadStep {
        let ExtentLayer { fs, target, bcache, device_io, page_cache, .. } = self;
        let Some(b) = page_cache.as_deref_mut() else { return ReadStep::Done };
        loop {
            let Some(walk) = b.walks[task].as_mut() else { return ReadStep::Done };
            match b.pc.sync_next(walk, now) {
                SyncStep::Write(io) => {
                    let (done, n, _) = page_io(fs, target, bcache, task, &io, true, now, devices);
                    *cpu += *device_io * u64::from(n);
                    b.pc.io_done_at(&io, done);
                }
                SyncStep::Wait(t) => return ReadStep::WaitUntil(t.max(now)),
                SyncStep::Done(t) => {
                    b.walks[task] = None;
                    if t > now {
                        return ReadStep::WaitUntil(t);
                    }
                    return ReadStep::Done;
                }
            }
        }
    }

    /// A new, empty file takes driver file `file`'s place at `now` (`open(O_CREAT)` of a
    /// new name, the file before it gone: simplification 3): its size is 0 and none of its
    /// pages stays cached, so writes to it (appends past its end) read nothing. Returns
    /// the pages dropped (0 without a page cache).
    pub fn new_file(&mut self, file: u32, now: Nanos) -> u64 {
        match self.page_cache.as_deref_mut() {
            Some(b) => b.pc.truncate(file as FileId, now),
            None => 0,
        }
    }

    /// When the flusher next has something to do (None: nothing until a write).
    pub fn flusher_due(&self) -> Option<Nanos> {
        self.page_cache.as_ref().and_then(|b| b.pc.writeback_due())
    }

    /// The flusher at `now`: issues every write it has for now (`wb_workfn`); returns when
    /// it is next due.
    pub fn flusher(&mut self, now: Nanos, devices: &mut [Device]) -> Option<Nanos> {
        let ExtentLayer { fs, target, bcache, page_cache, .. } = self;
        let b = page_cache.as_deref_mut()?;
        let task = b.flusher_task();
        while let Some(io) = b.pc.writeback_next(now) {
            let (done, _, _) = page_io(fs, target, bcache, task, &io, false, now, devices);
            b.pc.io_done_at(&io, done);
        }
        b.pc.writeback_due()
    }

    /// posix_fadvise(POSIX_FADV_DONTNEED) of bytes [offset, offset + len) of `file` at
    /// `now` (fio's `invalidate`): the pages dropped.
    pub fn fadvise_dontneed(&mut self, file: u32, offset: u64, len: u64, now: Nanos) -> u64 {
        match self.page_cache.as_deref_mut() {
            Some(b) => b.pc.fadvise_dontneed(file as FileId, offset, len, now),
            None => 0,
        }
    }

    /// The machine reboots at `now`: the shutdown writes every dirty page (`sync`), then
    /// the cache starts empty. Returns when the writes are done.
    pub fn restart_page_cache(&mut self, now: Nanos, devices: &mut [Device]) -> Result<Nanos> {
        let ExtentLayer { fs, target, bcache, page_cache, .. } = self;
        let Some(b) = page_cache.as_deref_mut() else { return Ok(now) };
        let task = b.flusher_task();
        let (mut t, mut ready) = (now, now);
        for file in 0..b.sizes.len() as FileId {
            let mut walk = b.pc.fsync(file);
            loop {
                match b.pc.sync_next(&mut walk, t) {
                    SyncStep::Write(io) => {
                        let (done, _, _) = page_io(fs, target, bcache, task, &io, true, t, devices);
                        b.pc.io_done_at(&io, done);
                        ready = ready.max(done);
                    }
                    SyncStep::Wait(w) => t = t.max(w),
                    SyncStep::Done(d) => {
                        ready = ready.max(d);
                        break;
                    }
                }
            }
        }
        let params = *b.pc.params();
        b.pc = new_cache(params, &b.sizes)?;
        let ra = b.pc.file_ra();
        b.ras.fill(ra);
        b.dirtiers.fill(Dirtier::default());
        b.abandon();
        Ok(ready)
    }
}
