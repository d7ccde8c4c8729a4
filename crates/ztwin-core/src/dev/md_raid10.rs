//! Linux md RAID10 (`mdadm --create --level=10`): where each copy of an array sector lies
//! on the members, which copy a read goes to, and how requests split.
//!
//! Mechanism (drivers/md/raid10.c). The array is cut into chunks of `chunk` bytes. With
//! the near layout ("n2", mdadm's default), chunk `c` is stored `near_copies` times on
//! consecutive raid disks: copy `k` on disk `(c * near + k) mod raid_disks`, at chunk row
//! `(c * near + k) div raid_disks` of that disk; with six disks and n2, chunk 0 is on disks
//! 0 and 1 at row 0, chunk 1 on 2 and 3, chunk 2 on 4 and 5, chunk 3 on 0 and 1 at row 1
//! (`__raid10_find_phys`; the inverse is `raid10_find_virt`). The far layout ("f2")
//! stores a second copy of the whole array `stride` sectors further down every disk,
//! shifted by `near_copies` disks; the offset layout ("o2") puts that copy one chunk
//! further down instead (`far_offset`). The array's size is the members' size in whole
//! chunks, divided by `far_copies`, times `raid_disks / near_copies` (`raid10_size`).
//! - A request that crosses a chunk boundary is split there (`raid10_make_request`:
//!   sectors up to the next chunk boundary, then the rest as a request of its own), unless
//!   every disk holds every chunk (near_copies = raid_disks).
//! - A write goes to every copy; it completes when the last copy does
//!   (`raid10_write_request`, `raid10_write_one_disk`, `one_write_done`). REQ_FUA is passed
//!   to each member write (`do_fua`).
//! - A read goes to one copy, chosen by `read_balance`: walking the copies in slot order,
//!   with near copies a disk with no request pending (`nr_pending` 0) is taken at once
//!   (distance 0); otherwise, far layouts take the lowest address and near layouts the
//!   copy whose disk's head position (the end of the last request that completed there,
//!   `update_head_pos`, set at every read and write completion) is nearest; the first of
//!   equals wins.
//! - A flush (REQ_PREFLUSH) goes to every member as an empty flush, and the request's
//!   data, if any, follows when all have completed (md.c `md_flush_request`,
//!   `submit_flushes`, `md_submit_flush_data`). The array declares a write cache and FUA
//!   whatever its members (`blk_queue_write_cache(queue, true, true)`), so flushes always
//!   reach md; each member's queue then applies its own flush policy.
//! - The array reports itself rotational unless every member is non-rotational (md.c
//!   `md_run`: QUEUE_FLAG_NONROT only if no in-array member is rotational and the array is
//!   not degraded); `run::build` gives that to the database (MariaDB's neighbour flushing).
//!
//! Defaults (mdadm(8)): `--layout` for RAID10 is "n2"; `--chunk` is 512 KiB when creating
//! an array (64 KiB before mdadm 3.1, and for arrays without metadata); RAID10's chunk
//! must be a power of two of at least 4 KiB (`setup_conf`: at least PAGE_SIZE); copies
//! (near times far) at least 2 and at most the number of disks (`setup_conf`).
//!
//! Sources: drivers/md/raid10.c of Linux 4.15 (read in the stored index: `__raid10_find_phys`,
//! `raid10_find_virt`, `read_balance`, `raid10_read_request`, `raid10_write_request`,
//! `raid10_write_one_disk`, `raid10_make_request`) and of 3.x/4.x for `raid10_size`,
//! `calc_sectors` and `setup_conf`; drivers/md/md.c (4.x) `submit_flushes`, `md_run`, and
//! the array's `blk_queue_write_cache` (as later patches show it); mdadm(8)
//! (`--chunk`, `--layout`, `--bitmap`).
//!
//! Simplifications: 1. every member is in sync and healthy (no resync window, degraded
//! array, bad blocks or replacement); 2. far sets (`use_far_sets`, a layout bit mdadm does
//! not set by default) are not modelled: a far copy moves `near_copies` disks over the
//! whole array; 3. data starts at byte 0 of each member (mdadm's 1.2 superblock puts a
//! data offset before it; its length shifts every address alike); 4. the write-intent
//! bitmap mdadm adds to arrays of members of 100G or more (`--bitmap`, 64 MiB bitmap
//! chunks) is not written: a bitmap update costs a write to every member only when a
//! bitmap chunk is first dirtied; 5. requests are issued to the members when the array
//! receives them (md's plug and the raid10d thread's pending list add no delay); 6. a
//! FUA member write costs what a plain write costs (as in `fs::journal`: the model has no
//! separate FUA service time).

use super::device::{Device, Op};
use crate::config::ArrayConfig;
use crate::error::{Error, Result};
use crate::sim::time::Nanos;

/// The most copies of a chunk the model keeps per request (mdadm allows up to the
/// number of disks; `n2` and `f2` have 2).
pub const MAX_COPIES: usize = 8;

/// The layout and sizes of an array (`struct geom` and `calc_sectors`), in 512-byte sectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    /// Members (`raid_disks`).
    pub raid_disks: u32,
    /// `near_copies`.
    pub near: u32,
    /// `far_copies`.
    pub far: u32,
    /// `far_offset`: the "o" layouts.
    pub far_offset: bool,
    /// log2 of the chunk in sectors.
    pub chunk_shift: u32,
    /// Sectors between a chunk and its far copy on a disk.
    pub stride: u64,
    /// Sectors of each member the array uses (`dev_sectors`).
    pub dev_sectors: u64,
    /// Sectors of the array (`raid10_size`).
    pub array_sectors: u64,
}

/// mdadm's RAID10 `--layout`: "nK", "fK" or "oK" with K copies; returns (near, far,
/// far_offset).
pub fn parse_layout(layout: &str) -> Option<(u32, u32, bool)> {
    let (kind, n) = layout.split_at_checked(1)?;
    let n: u32 = n.parse().ok()?;
    match kind {
        "n" => Some((n, 1, false)),
        "f" => Some((1, n, false)),
        "o" => Some((1, n, true)),
        _ => None,
    }
}

impl Geometry {
    /// The geometry of `raid_disks` members of `member_bytes` each, with `layout` and
    /// `chunk_bytes`; errors name the `ArrayConfig` field at fault.
    pub fn new(layout: &str, chunk_bytes: u64, raid_disks: u32, member_bytes: u64) -> Result<Geometry> {
        let (near, far, far_offset) = parse_layout(layout).ok_or_else(|| {
            Error::config(
                "layout",
                format!("'{layout}' is not a RAID10 layout: n, f or o and a copy count, e.g. \"n2\""),
            )
        })?;
        let copies = near.saturating_mul(far);
        if copies < 2 || copies > raid_disks || copies as usize > MAX_COPIES {
            return Err(Error::config(
                "layout",
                format!(
                    "'{layout}' keeps {copies} copies: RAID10 needs at least 2 and at most the number of members \
                     ({raid_disks}), and the model at most {MAX_COPIES}"
                ),
            ));
        }
        if !chunk_bytes.is_power_of_two() || !(4096..=1 << 30).contains(&chunk_bytes) {
            return Err(Error::config(
                "chunk_bytes",
                format!("{chunk_bytes} is not allowed: a power of two from 4 KiB (PAGE_SIZE) to 1 GiB"),
            ));
        }
        let chunk_shift = (chunk_bytes >> 9).trailing_zeros();
        // raid10_size and calc_sectors.
        let chunks =
            (member_bytes >> 9 >> chunk_shift) / u64::from(far) * u64::from(raid_disks) / u64::from(near);
        if chunks == 0 {
            return Err(Error::config(
                "members",
                format!(
                    "the members are smaller than a chunk times the far copies ({chunk_bytes} x {far} bytes)"
                ),
            ));
        }
        if chunks > (1u64 << 54) >> chunk_shift {
            return Err(Error::config(
                "members",
                "the array would be larger than 8 EiB: members this large are not modelled",
            ));
        }
        let used = (chunks * u64::from(copies)).div_ceil(u64::from(raid_disks));
        let stride = if far_offset { 1u64 << chunk_shift } else { (used / u64::from(far)) << chunk_shift };
        Ok(Geometry {
            raid_disks,
            near,
            far,
            far_offset,
            chunk_shift,
            stride,
            dev_sectors: used << chunk_shift,
            array_sectors: chunks << chunk_shift,
        })
    }

    /// Copies of each chunk.
    pub fn copies(&self) -> usize {
        (self.near * self.far) as usize
    }

    /// Sectors per chunk.
    pub fn chunk_sectors(&self) -> u64 {
        1 << self.chunk_shift
    }

    /// The array's size, bytes.
    pub fn array_bytes(&self) -> u64 {
        self.array_sectors << 9
    }

    /// (disk, sector on the disk) of each copy of array sector `sector`, in slot order
    /// (`__raid10_find_phys`); the first `copies()` entries are set.
    pub fn find_phys(&self, sector: u64) -> [(u32, u64); MAX_COPIES] {
        let mut out = [(0u32, 0u64); MAX_COPIES];
        let mask = self.chunk_sectors() - 1;
        let chunk = (sector >> self.chunk_shift) * u64::from(self.near);
        let mut stripe = chunk / u64::from(self.raid_disks);
        let mut dev = (chunk % u64::from(self.raid_disks)) as u32;
        if self.far_offset {
            stripe *= u64::from(self.far);
        }
        let mut sec = (sector & mask) + (stripe << self.chunk_shift);
        let mut slot = 0;
        for _ in 0..self.near {
            let (mut d, mut s) = (dev, sec);
            out[slot] = (d, s);
            slot += 1;
            for _ in 1..self.far {
                d = (d + self.near) % self.raid_disks;
                s += self.stride;
                out[slot] = (d, s);
                slot += 1;
            }
            dev += 1;
            if dev >= self.raid_disks {
                dev = 0;
                sec += mask + 1;
            }
        }
        out
    }

    /// The array sector stored at `sector` of disk `dev` (`raid10_find_virt`).
    pub fn find_virt(&self, mut sector: u64, dev: u32) -> u64 {
        let (n, rd) = (i64::from(self.near), i64::from(self.raid_disks));
        let mut dev = i64::from(dev);
        let offset = sector & (self.chunk_sectors() - 1);
        let chunk = if self.far_offset {
            let c = sector >> self.chunk_shift;
            let fc = (c % u64::from(self.far)) as i64;
            dev -= fc * n;
            if dev < 0 {
                dev += rd;
            }
            c / u64::from(self.far)
        } else {
            while sector >= self.stride && self.far > 1 {
                sector -= self.stride;
                if dev < n {
                    dev += rd - n;
                } else {
                    dev -= n;
                }
            }
            sector >> self.chunk_shift
        };
        let vchunk = (chunk * self.raid_disks as u64 + dev as u64) / u64::from(self.near);
        (vchunk << self.chunk_shift) + offset
    }

    /// Where `raid10_make_request` splits a request of `sectors` at array sector `sector`:
    /// the length of its first part.
    pub fn first_part(&self, sector: u64, sectors: u64) -> u64 {
        let chunk = self.chunk_sectors();
        let inside = sector & (chunk - 1);
        if self.near < self.raid_disks && inside + sectors > chunk {
            chunk - inside
        } else {
            sectors
        }
    }
}

/// What the array did (its own requests and the member requests they became).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Raid10Counters {
    /// Reads submitted to the array.
    pub reads: u64,
    /// Writes submitted to the array.
    pub writes: u64,
    /// Flushes submitted to the array.
    pub flushes: u64,
    /// Extra requests from splitting at chunk boundaries.
    pub splits: u64,
    /// Reads sent to members.
    pub member_reads: u64,
    /// Writes sent to members.
    pub member_writes: u64,
    /// Member writes that carried FUA.
    pub fua_writes: u64,
}

/// md's view of one member: the head position it estimates and the requests it has
/// issued there and not seen complete.
#[derive(Debug, Clone, Default)]
struct Mirror {
    /// `head_position`, sectors: the end of the last request completed.
    head: u64,
    /// (completion, end sector) of the requests in flight; flushes have no end.
    pending: Vec<(Nanos, Option<u64>)>,
}

impl Mirror {
    /// Retires the requests completed by `now`, moving the head as each completion does.
    fn retire(&mut self, now: Nanos) {
        let mut last: Option<(Nanos, u64)> = None;
        self.pending.retain(|&(done, end)| {
            if done > now {
                return true;
            }
            if let Some(e) = end {
                if last.is_none_or(|(t, _)| done >= t) {
                    last = Some((done, e));
                }
            }
            false
        });
        if let Some((_, e)) = last {
            self.head = e;
        }
    }
}

/// A Linux md RAID10 array over devices of the run.
#[derive(Debug, Clone)]
pub struct Raid10 {
    name: String,
    geo: Geometry,
    /// The run's device index of each raid disk.
    members: Vec<usize>,
    mirrors: Vec<Mirror>,
    counters: Raid10Counters,
}

impl Raid10 {
    /// The array of `cfg` over the run's devices `members` (indices, in raid-disk order)
    /// of `member_bytes` each (the smallest member's size); errors name the field at
    /// fault as `at(FIELD)` gives it.
    pub fn new(
        cfg: &ArrayConfig,
        members: Vec<usize>,
        member_bytes: u64,
        at: impl Fn(&str) -> String,
    ) -> Result<Raid10> {
        if cfg.level != "raid10" {
            return Err(Error::config(at("level"), format!("'{}' is not modelled: only raid10", cfg.level)));
        }
        let geo =
            Geometry::new(&cfg.layout, cfg.chunk_bytes, members.len() as u32, member_bytes).map_err(|e| {
                match e {
                    Error::Config { field, message } => Error::config(at(&field), message),
                    other => other,
                }
            })?;
        let n = members.len();
        Ok(Raid10 {
            name: cfg.name.clone(),
            geo,
            members,
            mirrors: vec![Mirror::default(); n],
            counters: Default::default(),
        })
    }

    /// The array's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The geometry.
    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }

    /// The run's device index of each raid disk.
    pub fn members(&self) -> &[usize] {
        &self.members
    }

    /// What the array did so far.
    pub fn counters(&self) -> Raid10Counters {
        self.counters
    }

    /// The slot `read_balance` picks among `copies` (disk, sector) for a read at `now`.
    fn read_balance(&mut self, copies: &[(u32, u64)], now: Nanos) -> usize {
        let (mut best, mut best_dist) = (0, u64::MAX);
        for (slot, &(disk, addr)) in copies.iter().enumerate() {
            let m = &mut self.mirrors[disk as usize];
            m.retire(now);
            let dist = if self.geo.near > 1 && m.pending.is_empty() {
                0
            } else if self.geo.far > 1 {
                addr
            } else {
                addr.abs_diff(m.head)
            };
            if dist < best_dist {
                (best, best_dist) = (slot, dist);
            }
        }
        best
    }

    /// Sends `sectors` at sector `addr` of raid disk `disk` to its device at `now`.
    fn member_io(
        &mut self,
        devices: &mut [Device],
        now: Nanos,
        op: Op,
        disk: u32,
        addr: u64,
        sectors: u64,
    ) -> Nanos {
        let bytes = (sectors << 9).min(u64::from(u32::MAX)) as u32;
        let done = devices[self.members[disk as usize]].submit_at(now, op, addr << 9, bytes);
        let m = &mut self.mirrors[disk as usize];
        m.retire(now);
        m.pending.push((done, Some(addr + sectors)));
        done
    }

    /// A read or write of `bytes` at byte `offset` of the array at `now` (calls in
    /// nondecreasing `now`), `fua` for a write with REQ_FUA; returns its completion and the
    /// member requests it took.
    pub fn submit(
        &mut self,
        devices: &mut [Device],
        now: Nanos,
        op: Op,
        offset: u64,
        bytes: u32,
        fua: bool,
    ) -> (Nanos, u32) {
        let mut sector = offset >> 9;
        let end = offset.saturating_add(u64::from(bytes)).div_ceil(512).max(sector + 1);
        match op {
            Op::Read => self.counters.reads += 1,
            Op::Write => self.counters.writes += 1,
        }
        let (mut done, mut ios) = (now, 0u32);
        let mut first = true;
        while sector < end {
            let part = self.geo.first_part(sector, end - sector);
            if !first {
                self.counters.splits += 1;
            }
            first = false;
            let all = self.geo.find_phys(sector);
            let copies = &all[..self.geo.copies()];
            match op {
                Op::Read => {
                    let slot = self.read_balance(copies, now);
                    let (disk, addr) = copies[slot];
                    done = done.max(self.member_io(devices, now, Op::Read, disk, addr, part));
                    self.counters.member_reads += 1;
                    ios += 1;
                }
                Op::Write => {
                    for &(disk, addr) in copies {
                        done = done.max(self.member_io(devices, now, Op::Write, disk, addr, part));
                        self.counters.member_writes += 1;
                        self.counters.fua_writes += u64::from(fua);
                        ios += 1;
                    }
                }
            }
            sector += part;
        }
        (done, ios)
    }

    /// A flush (an empty REQ_PREFLUSH request) at `now`: one to every member; returns when
    /// the last completes, and the member requests it took.
    pub fn flush(&mut self, devices: &mut [Device], now: Nanos) -> (Nanos, u32) {
        self.counters.flushes += 1;
        let mut done = now;
        for (disk, &d) in self.members.iter().enumerate() {
            let t = devices[d].flush(now);
            let m = &mut self.mirrors[disk];
            m.retire(now);
            if t > now {
                m.pending.push((t, None));
            }
            done = done.max(t);
        }
        (done, self.members.len() as u32)
    }
}

#[cfg(test)]
mod tests;
