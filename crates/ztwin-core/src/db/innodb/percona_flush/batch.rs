//! What a batch writes around each page it picks (`buf_flush_try_neighbors`,
//! `buf_flush_check_neighbor`) and the flush-list batch (`buf_do_flush_list_batch`), as
//! MySQL 5.7 / Percona Server 5.7 have them. See the parent module's doc.

use super::{BUF_READ_AHEAD_PAGES, BUF_READ_AHEAD_PORTION};
use crate::db::innodb::buffer_pool::{PageKey, BUF_LRU_OLD_MIN_LEN};
use crate::db::innodb::mariadb_flush::{PageState, PoolView};

/// The kind of batch a write belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlushKind {
    /// `BUF_FLUSH_LRU`: neighbours only from the old sublist; written pages are freed when
    /// their writes complete.
    Lru,
    /// `BUF_FLUSH_LIST`: written pages stay cached, clean.
    List,
}

/// Neighbour flushing of an instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Neighbours {
    /// `innodb_flush_neighbors`: 0 off, 1 the contiguous dirty run, 2 the whole area.
    pub mode: u64,
    /// `buf_flush_area`: `min(read_ahead_area, curr_size / 16)` pages.
    pub area: u64,
}

/// `buf_flush_area` of an instance of `instance_frames` frames (`curr_size`):
/// `min(read_ahead_area, curr_size / 16)` with `read_ahead_area = min(BUF_READ_AHEAD_PAGES,
/// ut_2_power_up(curr_size / BUF_READ_AHEAD_PORTION))` (`buf_pool_init_instance`); at least 1.
pub fn flush_area(instance_frames: u64) -> u64 {
    let read_ahead = BUF_READ_AHEAD_PAGES.min((instance_frames / BUF_READ_AHEAD_PORTION).next_power_of_two());
    read_ahead.min(instance_frames / 16).max(1)
}

/// `buf_flush_check_neighbor`: cached, dirty and idle, and for an LRU batch in the old
/// sublist.
fn flushable<V: PoolView>(view: &V, key: PageKey, kind: FlushKind) -> bool {
    view.page_state(key) == PageState::Dirty && (kind == FlushKind::List || view.is_old(key) == Some(true))
}

/// `buf_flush_try_neighbors`: write `page` (dirty, chosen by the batch) and the flushable
/// pages of its aligned area of `nb.area` pages (with mode 1 only the unbroken run around
/// it), lowest first, while `n_flushed` + the pages written here stay under `n_to_flush`;
/// the page itself is always written. No neighbours when the instance's LRU list is shorter
/// than `BUF_LRU_OLD_MIN_LEN` (the view's LRU length divided by `fold`) or mode is 0. The area
/// stops at the tablespace's end. Every page of an area of at most 64 pages belongs to the
/// same instance (`buf_pool_get` ignores the low 6 bits of the page number). Returns the
/// pages written.
pub fn try_neighbors<V: PoolView>(
    view: &mut V,
    page: PageKey,
    kind: FlushKind,
    n_flushed: u64,
    n_to_flush: u64,
    nb: &Neighbours,
    fold: u64,
) -> u64 {
    let (space, no) = (page.space_id(), page.page_no());
    let key = |n: u64| PageKey::new(space, n);
    let (mut low, mut high) = (no, no + 1);
    if view.lru_len() / fold.max(1) >= BUF_LRU_OLD_MIN_LEN as u64 && nb.mode != 0 {
        let area = nb.area.max(1);
        low = no / area * area;
        high = low + area;
        if nb.mode == 1 {
            if no > low {
                let mut i = no - 1;
                loop {
                    if !flushable(view, key(i), kind) {
                        low = i + 1;
                        break;
                    }
                    if i == low {
                        break;
                    }
                    i -= 1;
                }
            }
            let mut i = no + 1;
            while i < high && flushable(view, key(i), kind) {
                i += 1;
            }
            high = i;
        }
    }
    // fil_space_get_size: the area ends at the tablespace's size.
    high = high.min(view.last_page_no(space).saturating_add(1)).min(u64::from(u32::MAX) + 1);
    let mut count = 0;
    let mut i = low;
    while i < high {
        if count + n_flushed >= n_to_flush {
            if i > no {
                break;
            }
            // The page the batch chose is written whatever the quota.
            i = no;
        }
        let k = key(i);
        let state = if i == no { PageState::Dirty } else { view.page_state(k) };
        if state == PageState::Dirty && (kind == FlushKind::List || i == no || view.is_old(k) == Some(true)) {
            view.write(k);
            count += 1;
        }
        i += 1;
    }
    count
}

/// `buf_do_flush_list_batch(min_n, lsn_limit)`: from the flush list's tail (`oldest_first`:
/// (page, oldest_modification), oldest first), until `min_n` pages are written or a page's
/// oldest modification reaches `lsn_limit`: each dirty idle page is written with its
/// neighbours (counted against `min_n`); pages in flight are passed over. Returns the pages
/// written.
pub fn flush_list_batch<V: PoolView, I: IntoIterator<Item = (PageKey, u64)>>(
    view: &mut V,
    oldest_first: I,
    min_n: u64,
    lsn_limit: u64,
    nb: &Neighbours,
    fold: u64,
) -> u64 {
    let mut count = 0;
    for (key, oldest) in oldest_first {
        if count >= min_n || oldest >= lsn_limit {
            break;
        }
        if view.page_state(key) == PageState::Dirty {
            count += try_neighbors(view, key, FlushKind::List, count, min_n, nb, fold);
        }
    }
    count
}
