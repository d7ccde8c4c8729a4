//! Geometry of one table in its InnoDB file-per-table tablespace (`sbtestN.ibd`, or a
//! TPC-C table's, `tpcc_schema`): how many records fit a page, how deep each B+tree is,
//! which page number of the file holds each row, and how large the file is. A table is
//! its clustered index and its secondary indexes, each with its record sizes, entries and
//! how the load filled its leaves ([`IndexSpec`], [`LeafFill`]); sysbench's is below.
//!
//! The table (sysbench 1.0 `oltp_common.lua`, `create_table`):
//! `id INTEGER NOT NULL AUTO_INCREMENT PRIMARY KEY, k INTEGER NOT NULL, c CHAR(120),
//! pad CHAR(60)`, `table_size` rows inserted in id order with `k = sb_rand(1,
//! table_size)`, then `CREATE INDEX k_N ON sbtestN(k)` after the inserts.
//!
//! Sources (facts, not code): MySQL 5.7 / MariaDB 10.x InnoDB.
//! - Record format COMPACT/DYNAMIC (`rem0rec`): 5-byte record header, no null bitmap
//!   (all columns NOT NULL), no variable-length bytes for latin1 CHAR; clustered leaf
//!   record = id 4 + DB_TRX_ID 6 + DB_ROLL_PTR 7 + k 4 + c 120 + pad 60 = 201 bytes of
//!   data, 206 with the header. Node pointer = key fields + 4-byte child page number.
//!   Secondary leaf record = (k, id), 8 bytes + 5 header; its node pointer (k, id, child).
//! - Page (`page0page`): an empty COMPACT page offers
//!   `page_get_free_space_of_empty` = page_size - 120 (FIL header 38 + page header 56 +
//!   infimum/supremum 26) - 8 (FIL trailer) - 4 (two directory slots) bytes; the
//!   directory costs `page_dir_calc_reserved_space(n) = (2n + 3) / 4` bytes for n records.
//! - Sequential inserts into the clustered index (`btr_cur_optimistic_insert`): a leaf
//!   page that has at least 2 records splits, to the right, when after the insert less than
//!   `dict_index_get_space_reserve()` = page_size / 16 would stay free (the "15/16 full"
//!   of the manual). With 16 KiB pages that is 73 rows per leaf. Non-leaf pages have no
//!   reserve and fill up.
//! - `CREATE INDEX` is a sorted bulk build (`btr0bulk.cc`, `PageBulk::init`): with
//!   `innodb_fill_factor` = 100 (default) only the clustered index keeps page_size/16
//!   free; secondary index pages are filled completely.
//! - Space management (`fsp0fsp.cc`): page 0 FSP_HDR, 1 IBUF_BITMAP, 2 INODE; every
//!   `page_size` pages an XDES + IBUF_BITMAP pair. An extent is 1 MiB (64 pages of 16 KiB;
//!   64 pages also for 32 and 64 KiB). Each index has two segments, leaf and non-leaf
//!   ("top"); a segment takes its first 32 pages one by one from fragment extents, then
//!   whole extents. The clustered root is page 3 (created with the table).
//! - File growth (`fsp_reserve_free_extents`, `fsp_try_extend_data_file`): before a page
//!   split InnoDB reserves `n_ext = tree_height / 16 + 3` extents and wants
//!   `2 + 1% of the size in extents` more free; if fewer are free the file is extended,
//!   by one extent while it is under 32 extents, by `FSP_FREE_ADD` = 4 extents after.
//!
//! Sanity (tests below and `tests/innodb_layout.rs`): a 10M-row table has 145 428 pages
//! with data against the 145 447 L0 blocks published for the ZFS file (never-written
//! pages of the extended file are zeros, which a compressing ZFS stores as holes).
//!
//! Simplifications:
//! 1. latin1 (one byte per CHAR character). A multi-byte default charset (utf8mb4) adds a
//!    length byte per CHAR column: 208-byte records, still 73 per 16 KiB page.
//! 2. Rows per page are the same on every page; the last page of each level is partial.
//!    The tree is the one a sequential load leaves: no later splits, purge or updates.
//! 3. Allocation order: a non-leaf page is allocated right after the first leaf below it
//!    (InnoDB allocates it while attaching the node pointer of a split; a root raise
//!    allocates two pages at once, which we don't distinguish). Segment free lists
//!    (`fseg_fill_free_list` reserving 4 extents for large segments) are ignored, so the
//!    leaf extents of an index are contiguous apart from the non-leaf extents between them.
//!    Several secondary indexes (TPC-C's history has two) are laid out one after the
//!    other, in creation order (a row-by-row load interleaves their pages; not modelled).
//! 4. The bulk build's temporary top page (freed after being copied into the root) is not
//!    counted.
//! 5. Secondary lookups: the entries of key k start at sorted position k - 1 (the expected
//!    number of smaller keys: k was drawn uniformly from 1..=rows per row at prepare, which
//!    assumes the table was prepared with `--rand-type=uniform`, as `[dataset]
//!    prepare_rand_type = "uniform"` says; sysbench 1.0's default, special, puts 3/4 of the
//!    rows' k in a band 0.75% wide, which the page contents follow (`page_image`) but these
//!    lookups do not yet); duplicates of one k that straddle two leaves are read from the
//!    first leaf only.
//! 6. The number of rows with a given k and their ids are drawn from a hash of
//!    (seed, k): Poisson(1) counts (the limit of Binomial(rows, 1/rows)) and uniform ids,
//!    independent of the real table; the total over all k is `rows` only on average.

// `u64::is_multiple_of` needs Rust 1.87; the workspace declares 1.80.
#![allow(clippy::manual_is_multiple_of)]

/// Maximum depth of a B+tree path (root..leaf) returned by the path methods.
pub const MAX_DEPTH: usize = 8;

use super::page_image;

// The page format's constants, as `page_image` writes them.
const PAGE_NEW_SUPREMUM_END: u64 = page_image::PAGE_NEW_SUPREMUM_END as u64;
const FIL_PAGE_DATA_END: u64 = page_image::FIL_PAGE_DATA_END as u64;
const PAGE_DIR_SLOT_SIZE: u64 = page_image::PAGE_DIR_SLOT_SIZE as u64;
const REC_N_NEW_EXTRA_BYTES: u64 = page_image::REC_N_NEW_EXTRA_BYTES as u64;
const FSEG_FRAG_LIMIT: u64 = 32;
const FSP_FREE_ADD: u64 = 4;
/// Pages 0, 1, 2: FSP_HDR, IBUF_BITMAP, INODE.
const HEADER_PAGES: u64 = 3;

/// `page_get_free_space_of_empty` for a COMPACT page.
pub(crate) fn free_space_of_empty(page_size: u64) -> u64 {
    page_size - PAGE_NEW_SUPREMUM_END - FIL_PAGE_DATA_END - 2 * PAGE_DIR_SLOT_SIZE
}

/// `page_dir_calc_reserved_space`: directory bytes for `n` records.
pub(crate) fn dir_reserved(n: u64) -> u64 {
    (PAGE_DIR_SLOT_SIZE * n).div_ceil(4)
}

/// Records of `rec_size` bytes that fit one page when every insert must leave
/// `reserve` bytes free once the page holds at least 2 records.
pub(crate) fn records_per_page(page_size: u64, rec_size: u64, reserve: u64) -> u64 {
    let empty = free_space_of_empty(page_size);
    let mut n = 0u64;
    loop {
        // Space left for the (n+1)-th record after it and its directory share.
        let occupied = n * rec_size + dir_reserved(n + 1);
        if occupied + rec_size > empty {
            break;
        }
        let free_after = empty - occupied - rec_size;
        if n >= 2 && free_after < reserve {
            break;
        }
        n += 1;
    }
    n.max(2)
}

/// One B+tree index: records per page, pages per level and where each page sits.
#[derive(Debug, Clone)]
pub struct IndexGeometry {
    /// Records per leaf page.
    pub recs_per_leaf: u64,
    /// Node pointers per non-leaf page.
    pub recs_per_node: u64,
    /// Levels including the leaf level (1 = the root is the only page).
    pub depth: usize,
    /// Pages per level, `level_pages[0]` = leaves, `level_pages[depth - 1]` = 1 (root).
    pub level_pages: [u64; MAX_DEPTH],
    /// Leaves (or records) covered by one page of each level: 1 at level 0 in leaves.
    span: [u64; MAX_DEPTH],
    /// Leaf segment: its first (fragment) pages.
    leaf_frag: Vec<u64>,
    /// Leaf segment: first page of each extent it owns, in allocation order.
    leaf_extents: Vec<u64>,
    /// Page numbers of non-leaf levels: `nonleaf[l - 1][j]` is page j of level l.
    nonleaf: Vec<Vec<u64>>,
    extent_pages: u64,
}

impl IndexGeometry {
    fn shape(n_recs: u64, recs_per_leaf: u64, recs_per_node: u64) -> IndexGeometry {
        let mut level_pages = [0u64; MAX_DEPTH];
        let mut span = [0u64; MAX_DEPTH];
        level_pages[0] = n_recs.div_ceil(recs_per_leaf).max(1);
        span[0] = 1;
        let mut depth = 1;
        while level_pages[depth - 1] > 1 {
            // Invariant: at most 2^31 - 1 rows (validate: table_size) fit MAX_DEPTH at every page
            // size (the_largest_and_smallest_tables_fit_max_depth).
            assert!(depth < MAX_DEPTH, "B+tree deeper than MAX_DEPTH");
            level_pages[depth] = level_pages[depth - 1].div_ceil(recs_per_node);
            span[depth] = span[depth - 1] * recs_per_node;
            depth += 1;
        }
        IndexGeometry {
            recs_per_leaf,
            recs_per_node,
            depth,
            level_pages,
            span,
            leaf_frag: Vec::new(),
            leaf_extents: Vec::new(),
            nonleaf: vec![Vec::new(); depth - 1],
            extent_pages: 0,
        }
    }

    /// Pages of the index, all levels.
    pub fn pages(&self) -> u64 {
        self.level_pages[..self.depth].iter().sum()
    }

    /// Leaf pages.
    pub fn leaf_pages(&self) -> u64 {
        self.level_pages[0]
    }

    /// Non-leaf pages (including the root when the tree has more than one level).
    pub fn nonleaf_pages(&self) -> u64 {
        self.pages() - self.level_pages[0]
    }

    /// Root page number.
    pub fn root(&self) -> u64 {
        if self.depth == 1 {
            self.leaf_frag[0]
        } else {
            self.nonleaf[self.depth - 2][0]
        }
    }

    /// Page number of leaf `i` (0-based in key order).
    #[inline]
    fn leaf_page(&self, i: u64) -> u64 {
        if self.depth == 1 {
            return self.leaf_frag[0];
        }
        if i < self.leaf_frag.len() as u64 {
            self.leaf_frag[i as usize]
        } else {
            let j = i - FSEG_FRAG_LIMIT;
            self.leaf_extents[(j / self.extent_pages) as usize] + j % self.extent_pages
        }
    }

    /// Path root..leaf to leaf `leaf` into `out`; returns the depth.
    #[inline]
    fn path(&self, leaf: u64, out: &mut [u64; MAX_DEPTH]) -> usize {
        let leaf = leaf.min(self.level_pages[0] - 1);
        let d = self.depth;
        for (l, slot) in (1..d).rev().zip(out.iter_mut()) {
            *slot = self.nonleaf[l - 1][(leaf / self.span[l]) as usize];
        }
        out[d - 1] = self.leaf_page(leaf);
        d
    }
}

/// Page and extent allocator of one tablespace during the load (`fsp0fsp.cc`, simplified).
struct SpaceAlloc {
    extent_pages: u64,
    xdes_period: u64,
    next_free_extent: u64,
    /// Fragment extents not yet exhausted, as (next page, end page).
    frag: Vec<(u64, u64)>,
    frag_pos: usize,
}

impl SpaceAlloc {
    fn new(page_size: u64) -> SpaceAlloc {
        let extent_pages = (1u64 << 20).div_ceil(page_size).max(64);
        SpaceAlloc {
            extent_pages,
            xdes_period: page_size,
            next_free_extent: 1,
            frag: vec![(HEADER_PAGES, extent_pages)],
            frag_pos: 0,
        }
    }

    fn alloc_frag_page(&mut self) -> u64 {
        loop {
            if let Some(f) = self.frag.get_mut(self.frag_pos) {
                if f.0 < f.1 {
                    f.0 += 1;
                    return f.0 - 1;
                }
                self.frag_pos += 1;
                continue;
            }
            let start = self.take_extent_raw();
            let start_free = if start % self.xdes_period == 0 { start + 2 } else { start };
            self.frag.push((start_free, start + self.extent_pages));
        }
    }

    fn take_extent_raw(&mut self) -> u64 {
        let start = self.next_free_extent * self.extent_pages;
        self.next_free_extent += 1;
        start
    }

    /// A whole free extent for a segment; extents holding XDES pages go to the fragment list.
    fn alloc_extent(&mut self) -> u64 {
        loop {
            let start = self.take_extent_raw();
            if start % self.xdes_period == 0 {
                self.frag.push((start + 2, start + self.extent_pages));
            } else {
                return start;
            }
        }
    }
}

/// A file segment: 32 fragment pages, then whole extents.
#[derive(Default)]
struct Segment {
    used: u64,
    frag: Vec<u64>,
    extents: Vec<u64>,
}

impl Segment {
    fn alloc(&mut self, sp: &mut SpaceAlloc) -> u64 {
        let page = if self.used < FSEG_FRAG_LIMIT {
            let p = sp.alloc_frag_page();
            self.frag.push(p);
            p
        } else {
            let j = self.used - FSEG_FRAG_LIMIT;
            if j % sp.extent_pages == 0 {
                self.extents.push(sp.alloc_extent());
            }
            self.extents[(j / sp.extent_pages) as usize] + j % sp.extent_pages
        };
        self.used += 1;
        page
    }
}

/// Lays out one index in allocation order: root first, then each leaf followed by the
/// non-leaf pages whose first descendant it is.
fn lay_out(ix: &mut IndexGeometry, sp: &mut SpaceAlloc) {
    ix.extent_pages = sp.extent_pages;
    let mut top = Segment::default();
    let mut leaf = Segment::default();
    let root = top.alloc(sp);
    let d = ix.depth;
    if d == 1 {
        ix.leaf_frag = vec![root];
        return;
    }
    ix.nonleaf[d - 2].push(root);
    for i in 0..ix.level_pages[0] {
        leaf.alloc(sp);
        for l in 1..d - 1 {
            if i % ix.span[l] != 0 {
                break;
            }
            let p = top.alloc(sp);
            ix.nonleaf[l - 1].push(p);
        }
    }
    ix.leaf_frag = leaf.frag;
    ix.leaf_extents = leaf.extents;
}

/// What a table's records take, which sets its B+trees' fan-out: the bytes of a
/// clustered leaf record and node pointer, and of its secondary index's (one per table;
/// sysbench's schema has exactly one). A dataset names its schema; the layout follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableSchema {
    /// A clustered leaf record (header, key, DB_TRX_ID, DB_ROLL_PTR, the other columns).
    pub clustered_rec: u64,
    /// A clustered node pointer (header, key, child page number).
    pub clustered_node_ptr: u64,
    /// A secondary leaf record (header, the indexed columns, the primary key).
    pub secondary_rec: u64,
    /// A secondary node pointer (header, the indexed columns, the primary key, child).
    pub secondary_node_ptr: u64,
}

impl TableSchema {
    /// sysbench 1.0's `sbtest` table (oltp_common.lua `create_table`): id INTEGER
    /// primary key, k INTEGER (index k_1), c CHAR(120), pad CHAR(60).
    pub const SYSBENCH: TableSchema = TableSchema {
        clustered_rec: CLUSTERED_REC,
        clustered_node_ptr: CLUSTERED_NODE_PTR,
        secondary_rec: SECONDARY_REC,
        secondary_node_ptr: SECONDARY_NODE_PTR,
    };
}

/// How a load fills an index's leaves, which sets its records per leaf.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LeafFill {
    /// Inserts in key order: a leaf splits to the right when less than page_size/16 would
    /// stay free (`dict_index_get_space_reserve`, the manual's "15/16 full").
    Sequential,
    /// A sorted bulk build (`CREATE INDEX` on a filled table, `btr0bulk.cc` with
    /// `innodb_fill_factor` = 100): the leaves are filled completely.
    Bulk,
    /// Inserts in random key order: a split leaves two half-full pages, which fill again
    /// before splitting, so leaves end this fraction full on average (the manual's "1/2 to
    /// 15/16"; ln 2 = 0.69 is Yao's expected fill of a B-tree grown by random inserts).
    Random(f64),
}

/// One index of a table: its record sizes, how many entries it holds and how the load
/// filled it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IndexSpec {
    /// A leaf record (header, key, system columns for a clustered one, other columns).
    pub rec: u64,
    /// A node pointer (header, key, child page number).
    pub node_ptr: u64,
    /// Entries (leaf records).
    pub rows: u64,
    /// How the load filled the leaves.
    pub fill: LeafFill,
}

impl IndexSpec {
    /// Records per leaf page of `page_size` bytes.
    pub fn recs_per_leaf(&self, page_size: u64) -> u64 {
        match self.fill {
            LeafFill::Sequential => records_per_page(page_size, self.rec, page_size / 16),
            LeafFill::Bulk => records_per_page(page_size, self.rec, 0),
            LeafFill::Random(f) => {
                let full = records_per_page(page_size, self.rec, 0) as f64;
                ((full * f.clamp(0.0, 1.0)).floor() as u64).max(2)
            }
        }
    }

    /// Node pointers per non-leaf page (no reserve: they fill up).
    pub fn recs_per_node(&self, page_size: u64) -> u64 {
        records_per_page(page_size, self.node_ptr, 0)
    }
}

/// Geometry of one table's `.ibd` file (file-per-table), as a load leaves it: its
/// clustered index and its secondary indexes (sysbench's tables have one, k_N; TPC-C's
/// have none to two).
#[derive(Debug, Clone)]
pub struct TableLayout {
    /// Rows in the table (sysbench's `--table-size`): the clustered index's entries.
    pub rows: u64,
    /// innodb_page_size in bytes.
    pub page_size: u32,
    /// The clustered index (PRIMARY, on id).
    pub clustered: IndexGeometry,
    /// The secondary indexes in creation order (sysbench: k_N on (k), records (k, id)).
    pub secondaries: Vec<IndexGeometry>,
    /// Pages per extent.
    pub extent_pages: u64,
    data_pages: u64,
    file_pages: u64,
}

/// Bytes of a clustered leaf record: header + id + DB_TRX_ID + DB_ROLL_PTR + k + c + pad.
pub const CLUSTERED_REC: u64 = REC_N_NEW_EXTRA_BYTES + 4 + 6 + 7 + 4 + 120 + 60;
/// Bytes of a clustered node pointer: header + id + child page number.
pub const CLUSTERED_NODE_PTR: u64 = REC_N_NEW_EXTRA_BYTES + 4 + 4;
/// Bytes of a secondary leaf record: header + k + id.
pub const SECONDARY_REC: u64 = REC_N_NEW_EXTRA_BYTES + 4 + 4;
/// Bytes of a secondary node pointer: header + k + id + child page number.
pub const SECONDARY_NODE_PTR: u64 = REC_N_NEW_EXTRA_BYTES + 4 + 4 + 4;

impl TableLayout {
    /// The layout `sysbench prepare` leaves for a table of `rows` rows with
    /// `innodb_page_size` = `page_size`.
    pub fn sysbench(rows: u64, page_size: u32) -> TableLayout {
        TableLayout::new(&TableSchema::SYSBENCH, rows, page_size)
    }

    /// The layout of a table of `schema` with `rows` rows inserted in key order (as
    /// sysbench's prepare and a bulk load do) with `innodb_page_size` = `page_size`; the
    /// secondary index is built after the load (sorted, full leaves).
    pub fn new(schema: &TableSchema, rows: u64, page_size: u32) -> TableLayout {
        let clustered = IndexSpec {
            rec: schema.clustered_rec,
            node_ptr: schema.clustered_node_ptr,
            rows,
            fill: LeafFill::Sequential,
        };
        let secondary = IndexSpec {
            rec: schema.secondary_rec,
            node_ptr: schema.secondary_node_ptr,
            rows,
            fill: LeafFill::Bulk,
        };
        TableLayout::with_indexes(&clustered, &[secondary], page_size)
    }

    /// The layout of a table whose clustered index is `clustered` and whose secondary
    /// indexes are `secondaries` (in creation order: each index's segments are laid out
    /// after the previous one's, simplification 3).
    pub fn with_indexes(clustered: &IndexSpec, secondaries: &[IndexSpec], page_size: u32) -> TableLayout {
        let ps = page_size as u64;
        let geometry = |s: &IndexSpec| IndexGeometry::shape(s.rows, s.recs_per_leaf(ps), s.recs_per_node(ps));
        let mut clust = geometry(clustered);
        let mut secs: Vec<IndexGeometry> = secondaries.iter().map(geometry).collect();
        let mut sp = SpaceAlloc::new(ps);
        lay_out(&mut clust, &mut sp);
        for s in secs.iter_mut() {
            lay_out(s, &mut sp);
        }

        let e = sp.extent_pages;
        let used_extents = sp.next_free_extent;
        let height = secs.iter().fold(clust.depth, |h, s| h.max(s.depth)) as u64;
        let n_ext = height / 16 + 3;
        // Grow as fsp_try_extend_data_file does until enough extents are free.
        let mut size_ext = 1u64;
        loop {
            let reserve_ext = 2 + size_ext * 2 / 200;
            let n_free = size_ext.saturating_sub(used_extents + 1);
            if size_ext >= used_extents && n_free > reserve_ext + n_ext {
                break;
            }
            size_ext += if size_ext < 32 { 1 } else { FSP_FREE_ADD };
        }
        let file_pages = size_ext * e;
        let xdes_pairs = (file_pages - 1) / sp.xdes_period; // beyond the one in page 0..1
        let index_pages = secs.iter().fold(clust.pages(), |n, s| n + s.pages());
        let data_pages = HEADER_PAGES + 2 * xdes_pairs + index_pages;
        TableLayout {
            rows: clustered.rows,
            page_size,
            clustered: clust,
            secondaries: secs,
            extent_pages: e,
            data_pages,
            file_pages,
        }
    }

    /// The first secondary index (sysbench's k_N). Panics for a table without one.
    #[inline]
    pub fn secondary(&self) -> &IndexGeometry {
        &self.secondaries[0]
    }

    /// Size of the `.ibd` file in pages.
    #[inline]
    pub fn file_pages(&self) -> u64 {
        self.file_pages
    }

    /// Size of the `.ibd` file in bytes.
    #[inline]
    pub fn file_size(&self) -> u64 {
        self.file_pages * self.page_size as u64
    }

    /// Pages that hold data (header, XDES/bitmap and index pages); the rest of the file
    /// was extended but never written (zeros).
    #[inline]
    pub fn data_pages(&self) -> u64 {
        self.data_pages
    }

    /// Depth of the clustered index (levels, root..leaf).
    #[inline]
    pub fn clustered_depth(&self) -> usize {
        self.clustered.depth
    }

    /// Depth of the secondary index.
    #[inline]
    pub fn secondary_depth(&self) -> usize {
        self.secondary().depth
    }

    /// Page numbers root..leaf for the row with primary key `id` (1..=rows); returns the
    /// number written (the depth).
    #[inline]
    pub fn clustered_path(&self, id: u64, out: &mut [u64; MAX_DEPTH]) -> usize {
        let leaf = id.saturating_sub(1) / self.clustered.recs_per_leaf;
        self.clustered.path(leaf, out)
    }

    /// The clustered leaf `step` leaves after the one holding `id`, if it holds ids of
    /// `id..id + span` (the leaves chained in key order, as a bulk load leaves them).
    #[inline]
    pub fn clustered_next_leaf(&self, id: u64, span: u64, step: u64) -> Option<u64> {
        let per = self.clustered.recs_per_leaf;
        let first = id.saturating_sub(1) / per;
        let last_id = id.saturating_add(span.saturating_sub(1)).min(self.rows);
        let last = last_id.saturating_sub(1) / per;
        let leaf = first + step;
        (leaf <= last && leaf < self.clustered.leaf_pages()).then(|| self.clustered.leaf_page(leaf))
    }

    /// The leaf of secondary index `ix` `step` leaves after the one holding entry `pos`
    /// (1-based), if it holds entries of `pos..pos + span`.
    #[inline]
    pub fn secondary_next_leaf(&self, ix: usize, pos: u64, span: u64, step: u64) -> Option<u64> {
        let s = self.secondaries.get(ix)?;
        let per = s.recs_per_leaf;
        let first = pos.saturating_sub(1) / per;
        let last = pos.saturating_add(span.saturating_sub(1)).saturating_sub(1) / per;
        let leaf = first + step;
        (leaf <= last && leaf < s.leaf_pages()).then(|| s.leaf_page(leaf))
    }

    /// Page numbers root..leaf of the secondary index where key `k` sits.
    #[inline]
    pub fn secondary_path(&self, k: u64, out: &mut [u64; MAX_DEPTH]) -> usize {
        let pos = k.saturating_sub(1).min(self.rows.saturating_sub(1));
        self.secondary().path(pos / self.secondary().recs_per_leaf, out)
    }

    /// Page numbers root..leaf of secondary index `ix` (0-based, creation order) at entry
    /// `pos` (1-based position in key order; past the last entry: the last leaf).
    #[inline]
    pub fn secondary_path_at(&self, ix: usize, pos: u64, out: &mut [u64; MAX_DEPTH]) -> usize {
        let s = &self.secondaries[ix];
        s.path(pos.saturating_sub(1) / s.recs_per_leaf, out)
    }

    /// How many rows have `k` (0 outside 1..=rows): see [`k_matches`].
    #[inline]
    pub fn secondary_matches(&self, k: u64, seed: u64) -> u32 {
        k_matches(self.rows, k, seed)
    }

    /// Id of the `j`-th row with key `k`: see [`k_match_id`].
    #[inline]
    pub fn secondary_match_id(&self, k: u64, j: u32, seed: u64) -> u64 {
        k_match_id(self.rows, k, j, seed)
    }
}

/// What one page of a sysbench table's `.ibd` file holds, as the load leaves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PageRole {
    /// FSP_HDR, IBUF_BITMAP, INODE, or an XDES / IBUF_BITMAP pair.
    Space,
    /// Page `index` (0-based, key order) of `level` (0 = leaves) of the clustered index.
    Clustered {
        /// Level, 0 = leaf.
        level: u8,
        /// Position within the level, in key order.
        index: u64,
    },
    /// Page `index` of `level` of the secondary index k_N.
    Secondary {
        /// Level, 0 = leaf.
        level: u8,
        /// Position within the level, in key order.
        index: u64,
    },
    /// Extended but never written: zeros.
    Free,
}

impl IndexGeometry {
    /// Every page of the index with its role (`clustered`: which index).
    fn roles(&self, clustered: bool, out: &mut [PageRole]) {
        let role = |level: u8, index: u64| {
            if clustered {
                PageRole::Clustered { level, index }
            } else {
                PageRole::Secondary { level, index }
            }
        };
        for i in 0..self.level_pages[0] {
            out[self.leaf_page(i) as usize] = role(0, i);
        }
        for (l, pages) in self.nonleaf.iter().enumerate() {
            for (j, &p) in pages.iter().enumerate() {
                out[p as usize] = role(l as u8 + 1, j as u64);
            }
        }
    }
}

impl IndexGeometry {
    /// The leaf whose page is `page`, if any (leaf pages increase with the leaf index:
    /// fragment pages, then extents, in allocation order).
    fn leaf_of(&self, page: u64) -> Option<u64> {
        let n = self.level_pages[0];
        let i = partition_point_u64(n, |i| self.leaf_page(i) < page);
        (i < n && self.leaf_page(i) == page).then_some(i)
    }

    /// The non-leaf level (1..) and index of `page`, if any.
    fn nonleaf_of(&self, page: u64) -> Option<(u8, u64)> {
        self.nonleaf.iter().enumerate().find_map(|(l, pages)| {
            let j = pages.partition_point(|&p| p < page);
            (pages.get(j) == Some(&page)).then_some((l as u8 + 1, j as u64))
        })
    }
}

/// The first i in 0..n for which `before(i)` is false (`before` true then false).
fn partition_point_u64(n: u64, before: impl Fn(u64) -> bool) -> u64 {
    let (mut lo, mut hi) = (0u64, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if before(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

impl TableLayout {
    /// The role of page `page` of the file (a search in the indexes' page lists).
    pub fn page_role(&self, page: u64) -> PageRole {
        let period = u64::from(self.page_size);
        if page < HEADER_PAGES || (page >= period && page % period < 2) {
            return PageRole::Space;
        }
        for (clustered, ix) in
            std::iter::once((true, &self.clustered)).chain(self.secondaries.iter().map(|s| (false, s)))
        {
            let found = ix.leaf_of(page).map(|i| (0, i)).or_else(|| ix.nonleaf_of(page));
            if let Some((level, index)) = found {
                return if clustered {
                    PageRole::Clustered { level, index }
                } else {
                    PageRole::Secondary { level, index }
                };
            }
        }
        PageRole::Free
    }

    /// The role of every page of the file, by page number (pages 0..file_pages): 16 bytes
    /// a page, for tests and small tables; [`TableLayout::page_role`] answers one page.
    pub fn page_roles(&self) -> Vec<PageRole> {
        let mut out = vec![PageRole::Free; self.file_pages as usize];
        for r in out.iter_mut().take(HEADER_PAGES as usize) {
            *r = PageRole::Space;
        }
        let period = self.page_size as usize;
        for x in (period..out.len()).step_by(period) {
            out[x] = PageRole::Space;
            if x + 1 < out.len() {
                out[x + 1] = PageRole::Space;
            }
        }
        self.clustered.roles(true, &mut out);
        for s in &self.secondaries {
            s.roles(false, &mut out);
        }
        out
    }
}

/// How many of a `rows`-row sysbench table's rows have `k` (0 outside 1..=rows):
/// Poisson(1), deterministic in (seed, k). `seed` is the dataset's seed: every user of
/// one table must pass the same one.
#[inline]
pub fn k_matches(rows: u64, k: u64, seed: u64) -> u32 {
    if k == 0 || k > rows {
        return 0;
    }
    let u = unit(mix(seed ^ mix(k)));
    let mut p = (-1.0f64).exp();
    let mut cdf = p;
    let mut n = 0u32;
    while u >= cdf && n < 32 {
        n += 1;
        p /= n as f64;
        cdf += p;
    }
    n
}

/// Id of the `j`-th row (0-based, j < [`k_matches`]) with key `k`: uniform in
/// 1..=rows, deterministic in (seed, k, j), not sorted.
#[inline]
pub fn k_match_id(rows: u64, k: u64, j: u32, seed: u64) -> u64 {
    let h = mix(mix(seed ^ mix(k)) ^ (j as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    1 + ((h as u128 * rows as u128) >> 64) as u64
}

/// splitmix64 finaliser.
#[inline]
pub(crate) fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[inline]
fn unit(h: u64) -> f64 {
    (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

#[cfg(test)]
mod tests {
    /// A range scan reads the leaves its ids span, in key order, each once: 100 ids from
    /// a leaf's first id span two leaves at 73 per leaf, from 10 ids before a boundary
    /// three; at the table's end it stops at the last leaf.
    #[test]
    fn a_range_scan_reads_the_leaves_its_ids_span() {
        let t = TableLayout::sysbench(1_000_000, 16384);
        let per = t.clustered.recs_per_leaf;
        assert_eq!(per, 73);
        let leaves = |id: u64, span: u64| {
            let mut path = [0u64; MAX_DEPTH];
            let first = t.clustered_path(id, &mut path);
            let mut pages = vec![path[first - 1]];
            pages.extend((1..).map_while(|step| t.clustered_next_leaf(id, span, step)));
            pages
        };
        let at = |leaf: u64| t.clustered.leaf_page(leaf);
        assert_eq!(leaves(per * 5 + 1, 100), vec![at(5), at(6)]);
        assert_eq!(leaves(per * 5 - 9, 100), vec![at(4), at(5), at(6)]);
        assert_eq!(leaves(per * 5 - 9, 1), vec![at(4)]);
        let last = t.clustered.leaf_pages() - 1;
        assert_eq!(leaves(1_000_000 - 5, 100), vec![at(last)]);
    }

    /// The layout follows the schema's record sizes: sysbench's is the named one, and a
    /// wider clustered record (fewer per page) means more clustered pages for the same
    /// rows and the same secondary index.
    #[test]
    fn a_schema_sets_the_fan_out() {
        let rows = 1_000_000;
        let sb = TableLayout::new(&TableSchema::SYSBENCH, rows, 16384);
        assert_eq!(sb.file_pages(), TableLayout::sysbench(rows, 16384).file_pages());
        let wide = TableSchema { clustered_rec: 2 * CLUSTERED_REC, ..TableSchema::SYSBENCH };
        let w = TableLayout::new(&wide, rows, 16384);
        assert!(
            w.clustered.pages() > sb.clustered.pages() * 19 / 10,
            "{} vs {}",
            w.clustered.pages(),
            sb.clustered.pages()
        );
        assert_eq!(w.secondary().pages(), sb.secondary().pages());
        assert!(w.file_pages() > sb.file_pages());
    }

    use super::*;
    use proptest::prelude::*;

    /// The largest table validate accepts (2^31 - 1 rows) fits MAX_DEPTH at every page
    /// size, and so does the smallest (`IndexGeometry::shape`'s assert).
    #[test]
    fn the_largest_and_smallest_tables_fit_max_depth() {
        for ps in [4096u32, 8192, 16384, 32768, 65536] {
            for rows in [1, 2, i32::MAX as u64] {
                let t = TableLayout::sysbench(rows, ps);
                assert!(t.file_size() >= u64::from(ps), "{rows} rows at {ps}");
            }
        }
    }

    #[test]
    fn record_counts_16k() {
        assert_eq!(CLUSTERED_REC, 206);
        // 16252 free; split when < 1024 would stay free: 73 rows.
        assert_eq!(records_per_page(16384, CLUSTERED_REC, 1024), 73);
        // Bulk-built secondary, full pages: 13 bytes + ~0.5 directory byte each.
        assert_eq!(records_per_page(16384, SECONDARY_REC, 0), 1203);
        assert_eq!(records_per_page(16384, CLUSTERED_NODE_PTR, 0), 1203);
        assert_eq!(records_per_page(16384, SECONDARY_NODE_PTR, 0), 928);
    }

    #[test]
    fn page_role_of_one_page_is_the_roles_table() {
        for rows in [1u64, 500, 300_000] {
            let t = TableLayout::sysbench(rows, 16384);
            let roles = t.page_roles();
            for (p, r) in roles.iter().enumerate() {
                assert_eq!(t.page_role(p as u64), *r, "{rows} rows, page {p}");
            }
        }
    }

    #[test]
    fn page_roles_cover_every_index_page_once_and_count_data_pages() {
        for rows in [1u64, 500, 500_000, 2_650_000] {
            let t = TableLayout::sysbench(rows, 16384);
            let roles = t.page_roles();
            assert_eq!(roles.len() as u64, t.file_pages());
            let count = |f: &dyn Fn(&PageRole) -> bool| roles.iter().filter(|r| f(r)).count() as u64;
            assert_eq!(count(&|r| matches!(r, PageRole::Clustered { .. })), t.clustered.pages(), "{rows}");
            assert_eq!(count(&|r| matches!(r, PageRole::Secondary { .. })), t.secondary().pages(), "{rows}");
            assert_eq!(count(&|r| !matches!(r, PageRole::Free)), t.data_pages(), "{rows}");
            // Leaf i of the clustered index is where the path to its rows ends.
            let mut path = [0u64; MAX_DEPTH];
            let d = t.clustered_path(rows, &mut path);
            let last_leaf = t.clustered.leaf_pages() - 1;
            assert_eq!(roles[path[d - 1] as usize], PageRole::Clustered { level: 0, index: last_leaf });
        }
    }

    #[test]
    fn ten_million_rows() {
        let t = TableLayout::sysbench(10_000_000, 16384);
        assert_eq!(t.clustered.leaf_pages(), 136_987);
        assert_eq!(t.clustered_depth(), 3);
        assert_eq!(t.secondary_depth(), 3);
        // Published: 145447 L0 blocks of 16 KiB in the ZFS file (zero pages are holes).
        // The model counts every page InnoDB writes; 0.1% covers pages we don't model
        // (the bulk build's discarded top page, a later page split or two).
        let d = t.data_pages() as f64;
        assert!((d / 145_447.0 - 1.0).abs() < 0.001, "data pages {d}");
        assert!(t.file_pages() >= t.data_pages());
        // 1% + 5 extents of reserve, rounded to 4-extent steps.
        assert!(t.file_pages() as f64 / d < 1.02);
    }

    #[test]
    fn pages_are_distinct_and_inside_file() {
        let t = TableLayout::sysbench(300_000, 16384);
        let mut seen = std::collections::HashSet::new();
        let mut out = [0u64; MAX_DEPTH];
        for leaf in 0..t.clustered.leaf_pages() {
            let d = t.clustered.path(leaf, &mut out);
            assert_eq!(out[0], 3, "clustered root is page 3");
            assert!(seen.insert(out[d - 1]), "leaf page reused");
        }
        for leaf in 0..t.secondary().leaf_pages() {
            let d = t.secondary().path(leaf, &mut out);
            assert!(seen.insert(out[d - 1]), "secondary leaf page reused");
        }
        for lv in t.clustered.nonleaf.iter().chain(t.secondary().nonleaf.iter()) {
            for &p in lv {
                assert!(seen.insert(p), "non-leaf page reused");
            }
        }
        assert_eq!(seen.len() as u64, t.clustered.pages() + t.secondary().pages());
        assert!(seen.iter().all(|&p| p >= HEADER_PAGES && p < t.file_pages()));
        // No index page on an XDES/bitmap page.
        assert!(seen.iter().all(|&p| p % 16384 > 1));
    }

    #[test]
    fn tiny_table_is_root_only() {
        let t = TableLayout::sysbench(10, 16384);
        let mut out = [0u64; MAX_DEPTH];
        assert_eq!(t.clustered_path(5, &mut out), 1);
        assert_eq!(out[0], 3);
        assert_eq!(t.secondary_path(5, &mut out), 1);
        assert_eq!(out[0], 4);
    }

    #[test]
    fn matches_average_one() {
        let t = TableLayout::sysbench(1_000_000, 16384);
        let n = 200_000u64;
        let s: u64 = (1..=n).map(|k| t.secondary_matches(k, 9) as u64).sum();
        let mean = s as f64 / n as f64;
        assert!((mean - 1.0).abs() < 5.0 * (1.0 / n as f64).sqrt(), "{mean}");
        let zeros = (1..=n).filter(|&k| t.secondary_matches(k, 9) == 0).count() as f64 / n as f64;
        assert!((zeros - (-1.0f64).exp()).abs() < 0.005, "{zeros}");
        assert_eq!(t.secondary_matches(0, 9), 0);
        assert_eq!(t.secondary_matches(1_000_001, 9), 0);
    }

    proptest! {
        #[test]
        fn paths_monotone_in_key(rows in 1u64..3_000_000, a in 1u64..3_000_000, b in 1u64..3_000_000) {
            let t = TableLayout::sysbench(rows, 16384);
            let (a, b) = (a.min(rows), b.min(rows));
            let (lo, hi) = (a.min(b), a.max(b));
            let mut pa = [0u64; MAX_DEPTH];
            let mut pb = [0u64; MAX_DEPTH];
            let da = t.clustered_path(lo, &mut pa);
            let db = t.clustered_path(hi, &mut pb);
            prop_assert_eq!(da, db);
            prop_assert_eq!(pa[0], pb[0]);
            // Same leaf iff same leaf index.
            let same = (lo - 1) / t.clustered.recs_per_leaf == (hi - 1) / t.clustered.recs_per_leaf;
            prop_assert_eq!(same, pa[da - 1] == pb[db - 1]);
            prop_assert!(pa[da - 1] < t.file_pages());
            let ds = t.secondary_path(hi, &mut pb);
            prop_assert_eq!(ds, t.secondary_depth());
            prop_assert!(pb[ds - 1] < t.file_pages());
            for j in 0..t.secondary_matches(hi, 1) {
                let id = t.secondary_match_id(hi, j, 1);
                prop_assert!(id >= 1 && id <= rows);
            }
        }
    }
}
