//! The bytes of the InnoDB index pages of a sysbench table as `sysbench prepare` leaves
//! them: clustered-index leaves, clustered-index node-pointer (level 1) pages, and leaves
//! of the secondary index `k_N`. They exist so that ZFS's real compressor
//! (`crate::fs::zfs::compressors::lz4_compressed_len`) and write rule
//! (`crate::fs::zfs::compression::zio_stored_block`) can say how each record of such a
//! table is stored, by mechanism rather than by an assumed ratio.
//!
//! # What prepare does (sysbench 1.0.20)
//! - `src/lua/oltp_common.lua` `create_table`: `CREATE TABLE sbtestN(id INTEGER NOT NULL
//!   AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL,
//!   pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id))` (`auto_inc` defaults to true, so
//!   the server assigns ids 1..=table_size in insert order). Rows are sent as multi-row
//!   `INSERT INTO sbtestN(k, c, pad) VALUES (k, 'c', 'pad'),...` through
//!   `con:bulk_insert_next`, one row per `i = 1..table_size`, with
//!   `c = sysbench.rand.string(c_value_template)` (10 groups of 11 `#` joined by `-`,
//!   119 characters), `pad = sysbench.rand.string(pad_value_template)` (5 groups, 59
//!   characters) and `k = sb_rand(1, table_size)`. Only after all rows are loaded,
//!   `create_secondary` (default true) runs `CREATE INDEX k_N ON sbtestN(k)`.
//! - `src/sb_rand.c` `sb_rand_str`: each `#` becomes `sb_rand_uniform('0', '9')` (a
//!   uniform decimal digit), `@` a letter, anything else is copied (so the dashes stay).
//! - `src/lua/internal/sysbench.compat.lua`: `sb_rand = sysbench.rand.default`, i.e.
//!   `sb_rand_default`, the `--rand-type` distribution: `special` by default in 1.0.x
//!   (`rand_args` in `sb_rand.c`, with `--rand-spec-iter=12`, `--rand-spec-pct=1`,
//!   `--rand-spec-res=75`); sysbench 1.1 switched the default to `uniform`.
//!   `sb_rand_special(a, b)`: with t = b - a and `rnd` uniform in [0, 1), if
//!   `rnd * t * 100 / (100 - res) < t` (probability 1/4) it returns
//!   `a + t * mean(iter uniforms)` (a bell over the whole range); otherwise
//!   `a + rnd * (t * pct/100 + 1) + t/2 - t * pct/200` (a uniform band 0.75% of the range
//!   wide, from 0.4975 to 0.505 of the range). So 3/4 of all rows have k in that band:
//!   about 100 rows share each such k.
//! - `src/db_driver.c` `db_bulk_insert_next`: rows are appended to one statement until it
//!   would exceed `BULK_PACKET_SIZE` (512 KiB), then `db_bulk_do_insert` sends it; the
//!   MySQL driver has `needs_commit` = 0 (`mysql_drv_caps` in `drivers/mysql/drv_mysql.c`),
//!   so each statement is its own autocommit transaction (about 2 700 rows).
//!
//! # What InnoDB writes (MySQL 5.7, MariaDB 10.11; ROW_FORMAT DYNAMIC or COMPACT, which
//! store these short columns alike)
//! - Page frame (`fil0fil.h`): FIL header of 38 bytes (checksum or key version 0..4, page
//!   number 4..8, prev 8..12, next 12..16, LSN 16..24, type 24..26 = `FIL_PAGE_INDEX`
//!   17855, flush LSN 26..34 = 0, space id 34..38); an 8-byte trailer. Index page header
//!   (`page0page.h`) at 38: `PAGE_N_DIR_SLOTS`, `PAGE_HEAP_TOP`, `PAGE_N_HEAP` (bit 15 =
//!   compact), `PAGE_FREE`, `PAGE_GARBAGE`, `PAGE_LAST_INSERT`, `PAGE_DIRECTION`,
//!   `PAGE_N_DIRECTION`, `PAGE_N_RECS`, `PAGE_MAX_TRX_ID` (8), `PAGE_LEVEL`,
//!   `PAGE_INDEX_ID` (8), then two 10-byte FSEG headers used only on the root.
//! - `page0page.cc` `page_create_low`: infimum and supremum from
//!   `infimum_supremum_compact` at 94..120 (5-byte header + `"infimum\0"` /
//!   `"supremum"`), two directory slots, and everything from `PAGE_NEW_SUPREMUM_END` (120)
//!   to the directory zeroed; `fsp0fsp.cc` `fsp_init_file_page_low` zeroes a newly
//!   allocated page first. Unused space is therefore zeros (prepare only appends: no
//!   garbage on the pages modelled here).
//! - Compact record (`rem0rec.cc` `rec_convert_dtuple_to_rec_comp`): 5 header bytes before
//!   the origin (info bits | n_owned; heap_no << 3 | status; next record as a 16-bit offset
//!   relative to the origin), preceded by the null bitmap (none: all columns NOT NULL) and
//!   one length byte per variable-length column in reverse column order (a length < 128
//!   takes one byte). Clustered leaf fields: id, DB_TRX_ID (6), DB_ROLL_PTR (7), k, c, pad;
//!   INT is stored big-endian with the sign bit flipped
//!   (`row0mysql.cc` `row_mysql_store_col_in_innobase_format`). In latin1 (the server
//!   default of MySQL 5.7 and of MariaDB before 11.6; Debian's MariaDB packages configure
//!   utf8mb4) `CHAR(n)` is fixed-length, space padded: 5 + 201 = 206-byte records. In a
//!   multi-byte charset `CHAR(n)` is variable length (`dict_col_get_fixed_size`) and the
//!   trailing spaces are stripped down to n bytes (same function above): c = 120 bytes,
//!   pad = 60, plus two length bytes: 208-byte records. Node pointers: the key (id) and
//!   the child page number, status `REC_STATUS_NODE_PTR`; the first record of the leftmost
//!   page of a non-leaf level carries `REC_INFO_MIN_REC_FLAG`. Secondary leaf record: k,
//!   id (13 bytes).
//! - Directory (`page0cur.cc` `page_cur_insert_rec_low`, `page_dir_split_slot`): each
//!   insert increments the n_owned of the owner record; when it reaches 9
//!   (`PAGE_DIR_SLOT_MAX_N_OWNED` + 1) the slot splits 4 + 5. For appends this puts a slot
//!   on every 4th record and leaves 5..8 with the supremum; `btr0bulk.cc`
//!   `PageBulk::finish` (groups of `(PAGE_DIR_SLOT_MAX_N_OWNED + 1) / 2`, merging the last
//!   two) gives the same directory, as its comment says it must.
//! - Fill (`btr0cur.cc` `btr_cur_optimistic_insert`, `page0page.ic`
//!   `page_get_max_insert_size_after_reorganize`, `page_dir_calc_reserved_space`,
//!   `page_get_free_space_of_empty`; `dict0dict.ic` `dict_index_get_space_reserve`): a
//!   clustered leaf with >= 2 records refuses an insert that would leave less than
//!   page_size / 16 free when inserts are sequential (`btr_page_get_split_rec_to_right`:
//!   `PAGE_LAST_INSERT` is the insert point); `btr0btr.cc` `btr_page_split_and_insert` then
//!   moves nothing (split record NULL) and the new page takes the new row. So every
//!   clustered leaf holds 73 rows at 16 KiB; node-pointer pages have no reserve (1203 at
//!   16 KiB). The root raise (`btr_root_raise_and_insert`) copies the root to a new page
//!   without `PAGE_LAST_INSERT`, so that first split of each level is in the middle
//!   (`page_get_middle_rec`): the leftmost page of each level keeps about half.
//! - `CREATE INDEX` is a sorted bulk load (`btr0bulk.cc` `PageBulk::init`,
//!   `PageBulk::isSpaceAvailable`): the reserve is page_size / 16 only for a clustered
//!   index at `innodb_fill_factor` = 100, else page_size * (100 - fill_factor) / 100 = 0,
//!   so the k index leaves are full (1203 records at 16 KiB). MySQL 5.7's
//!   `PageBulk::finish` sets `PAGE_LAST_INSERT` to the last record and `PAGE_DIRECTION` to
//!   `PAGE_RIGHT`; MariaDB 10.5+ leaves them 0 / `PAGE_NO_DIRECTION`. `PAGE_MAX_TRX_ID` of
//!   secondary leaves is the index build's transaction id.
//! - System columns: `trx0rec.cc` `trx_undo_report_row_operation` /
//!   `trx_undo_page_report_insert` write one insert undo record per row (2-byte next
//!   pointer, type, `undo_no` and table id `mach_u64_write_much_compressed`, the
//!   length-prefixed primary key, 2-byte end pointer) and return its page offset;
//!   `trx_undo_build_roll_ptr` packs the insert flag (bit 55), the rollback segment, the
//!   undo page and that offset into DB_ROLL_PTR; DB_TRX_ID is the statement's transaction.
//!   MySQL 5.7 keeps those bytes. MariaDB 10.3 to 10.11.1x purged insert undo too and
//!   `row0purge.cc` `row_purge_reset_trx_id` (from `row_purge_record_func`,
//!   `TRX_UNDO_INSERT_REC`) overwrote them with DB_TRX_ID = 0 and DB_ROLL_PTR = 1 << 55
//!   once the history was purged; MDEV-16168 (MariaDB/server PR #4247, August 2025)
//!   removed the reset, and 10.11.18 has none: its rows keep the bytes as inserted (a
//!   table prepared on 10.11.19 had no DB_TRX_ID at 0, after fast and slow shutdown
//!   alike). The modelled MariaDB is 10.11.18. (MariaDB 10.6+'s table-level bulk insert into an empty
//!   table, `row_ins_clust_index_entry_low`, needs `unique_checks=0` and
//!   `foreign_key_checks=0`, which sysbench does not set.)
//! - Checksums: MySQL 5.7 `innodb_checksum_algorithm=crc32` (`buf0checksum.cc`
//!   `buf_calc_page_crc32`: CRC-32C of bytes 4..26 xor CRC-32C of 38..page_size-8, stored
//!   at 0 and at page_size-8; the last 4 bytes are the low half of the LSN). MariaDB 10.5+
//!   `full_crc32` (`buf0flu.cc` `buf_flush_init_for_writing`,
//!   `buf_flush_assign_full_crc32_checksum`): the low half of the LSN at page_size-8 and
//!   CRC-32C of everything before it in the last 4 bytes; bytes 0..4 are the key version,
//!   0 unencrypted (`FIL_PAGE_FCRC32_KEY_VERSION`).
//!
//! All facts are read from the sources named (sysbench 1.0.20 tag; MariaDB 10.6-11.x and
//! MySQL 5.7/8.0 InnoDB files); no code is copied.
//!
//! # API
//! [`SysbenchTable`] holds the facts that differ between servers as public fields with
//! per-server defaults ([`SysbenchTable::new`] with a [`Flavor`]). Its `fill_*` methods
//! write one page into a caller's buffer of `page_size` bytes (4 KiB to 64 KiB) and
//! allocate nothing; the same (table, seed, page) always gives the same bytes.
//!
//! # Simplifications
//! 1. Row content is drawn from our PRNG (`Pcg64Mcg`, per row from (seed, id)), not
//!    sysbench's xoroshiro128+ stream: the same distributions (uniform digits, k from
//!    `sb_rand_special` / `sb_rand_uniform` ported as formulas), not the same values.
//! 2. The k index is generated from the k distribution, not from the rows of the
//!    clustered pages: a secondary leaf is the sorted run of positions
//!    `[i * R, i * R + R)` of `rows` draws, built from uniform order statistics
//!    (exponential spacings from the expected quantile of its first position) mapped
//!    through the inverse CDF of k; the ids sharing a k are a sorted uniform sample of
//!    1..=rows whose size includes the run's part on neighbouring pages. A page is a
//!    faithful sample of the index, but adjacent pages are drawn independently and their
//!    (k, id) pairs do not match the clustered pages' rows.
//! 3. Page numbers: page 3 is the clustered root, leaf i is page 4 + i, the level-1 pages
//!    follow the leaves and the k index leaves follow those. InnoDB interleaves segments
//!    (32 fragment pages, then 64-page extents per segment) and skips XDES/IBUF pages;
//!    only the page-number fields (prev, next, own number, child pointers) are affected.
//! 4. The leftmost leaf (and leftmost level-1 page) also holds, as garbage, the upper half
//!    moved away by the first split; it is written here without that garbage. Root pages
//!    (FSEG headers, `PAGE_ROOT_AUTO_INC` in MariaDB) are written like other pages.
//! 5. Batches: every INSERT statement is taken to carry the same number of rows, computed
//!    from the 512 KiB packet with k printed with the digits of table_size / 2; real
//!    statements vary by a few rows with the digit count of each k.
//! 6. Undo placement (`SysColumns::AsInserted` only): each statement's undo log starts on a
//!    fresh page at offset 272 (page header 56 + segment header 30 + undo log header with
//!    XID space 186, trx0undo.h as recalled, not re-read), continues on the next page
//!    number once fewer than 43 bytes remain (`trx_undo_left` < 25 plus its 18-byte
//!    margin), and its first page number is drawn per statement; rollback segments are
//!    assigned round robin (MySQL 5.7 skips the temporary ones, 1..=32). Cached undo
//!    segments, which would start mid-page, are ignored.
//! 7. Transaction ids advance by `trx_id_step` per statement (one id at start, one at
//!    commit); background transactions (statistics) are ignored. LSNs are a monotone
//!    function of the last row on the page; they and the checksum are 12-16 bytes of a
//!    page and carry no structure either way.
//! 8. Only the state after prepare: no updates, page reorganizations or later splits;
//!    with `SysColumns::PurgeReset` purge has finished.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

// ---- FIL page frame (fil0fil.h) ----
const FIL_PAGE_SPACE_OR_CHKSUM: usize = 0;
const FIL_PAGE_OFFSET: usize = 4;
const FIL_PAGE_PREV: usize = 8;
const FIL_PAGE_NEXT: usize = 12;
const FIL_PAGE_LSN: usize = 16;
const FIL_PAGE_TYPE: usize = 24;
const FIL_PAGE_FILE_FLUSH_LSN: usize = 26;
const FIL_PAGE_SPACE_ID: usize = 34;
/// `FIL_PAGE_DATA`: end of the FIL header, start of the index page header.
pub const FIL_PAGE_DATA: usize = 38;
/// `FIL_PAGE_DATA_END`: size of the FIL trailer.
pub const FIL_PAGE_DATA_END: usize = 8;
/// `FIL_PAGE_INDEX`: page type of a B-tree page.
pub const FIL_PAGE_INDEX: u16 = 17855;
/// `FIL_NULL`: no page.
pub const FIL_NULL: u32 = 0xFFFF_FFFF;

// ---- index page header (page0page.h), offsets from PAGE_HEADER ----
const PAGE_HEADER: usize = FIL_PAGE_DATA;
const PAGE_N_DIR_SLOTS: usize = 0;
const PAGE_HEAP_TOP: usize = 2;
const PAGE_N_HEAP: usize = 4;
const PAGE_LAST_INSERT: usize = 10;
const PAGE_DIRECTION: usize = 12;
const PAGE_N_DIRECTION: usize = 14;
const PAGE_N_RECS: usize = 16;
const PAGE_MAX_TRX_ID: usize = 18;
const PAGE_LEVEL: usize = 26;
const PAGE_INDEX_ID: usize = 28;
const FSEG_HEADER_SIZE: usize = 10;
const PAGE_DATA: usize = PAGE_HEADER + 36 + 2 * FSEG_HEADER_SIZE;
/// `REC_N_NEW_EXTRA_BYTES`: a COMPACT record's header.
pub const REC_N_NEW_EXTRA_BYTES: usize = 5;
/// `PAGE_NEW_INFIMUM`: origin of the infimum record (99).
pub const PAGE_NEW_INFIMUM: usize = PAGE_DATA + REC_N_NEW_EXTRA_BYTES;
/// `PAGE_NEW_SUPREMUM`: origin of the supremum record (112).
pub const PAGE_NEW_SUPREMUM: usize = PAGE_DATA + 2 * REC_N_NEW_EXTRA_BYTES + 8;
/// `PAGE_NEW_SUPREMUM_END`: start of the record heap (120).
pub const PAGE_NEW_SUPREMUM_END: usize = PAGE_NEW_SUPREMUM + 8;
const PAGE_DIR: usize = FIL_PAGE_DATA_END;
/// `PAGE_DIR_SLOT_SIZE`.
pub const PAGE_DIR_SLOT_SIZE: usize = 2;
const PAGE_DIR_SLOT_MIN_N_OWNED: usize = 4;
/// `PAGE_DIR_SLOT_MAX_N_OWNED`.
pub const PAGE_DIR_SLOT_MAX_N_OWNED: usize = 8;
const PAGE_HEAP_NO_USER_LOW: usize = 2;
const PAGE_RIGHT: u16 = 2;
const PAGE_NO_DIRECTION: u16 = 5;
const REC_STATUS_ORDINARY: u16 = 0;
const REC_STATUS_NODE_PTR: u16 = 1;
const REC_INFO_MIN_REC_FLAG: u8 = 0x10;
/// `infimum_supremum_compact` (page0page.cc), with the infimum's next pointer (bytes 3..5)
/// and the supremum's n_owned (byte 13) set per page.
const INFIMUM_SUPREMUM_COMPACT: [u8; 26] = [
    0x01, 0x00, 0x02, 0x00, 0x0d, b'i', b'n', b'f', b'i', b'm', b'u', b'm', 0, //
    0x01, 0x00, 0x0b, 0x00, 0x00, b's', b'u', b'p', b'r', b'e', b'm', b'u', b'm',
];

// ---- undo log (trx0undo.h, trx0rec.cc; simplification 6) ----
const TRX_UNDO_PAGE_FIRST_REC: usize = 56;
const TRX_UNDO_LOG_FIRST_REC: usize = 272;
const TRX_UNDO_PAGE_TAIL: usize = 43;

// ---- sysbench (oltp_common.lua, db_driver.c) ----
const C_LEN: usize = 120;
const PAD_LEN: usize = 60;
const C_TEXT: usize = 119;
const PAD_TEXT: usize = 59;
const BULK_PACKET_SIZE: usize = 512 * 1024;

/// Server defaults that decide bytes on the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// MySQL 5.7: latin1, DB_TRX_ID/DB_ROLL_PTR kept as inserted, `crc32` checksums, bulk
    /// pages with `PAGE_LAST_INSERT`/`PAGE_RIGHT`.
    MySql57,
    /// MariaDB 10.11 (10.11.18): latin1 (compiled default before 11.6), system columns as
    /// inserted (no purge reset since MDEV-16168), `full_crc32`, bulk pages without insert
    /// hints.
    MariaDb1011,
}

/// Character set of `c` and `pad`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Charset {
    /// One byte per character: `CHAR(n)` fixed-length, space padded.
    Latin1,
    /// Multi-byte (utf8mb3, utf8mb4): `CHAR(n)` variable length with a length byte, padding
    /// stripped down to n bytes.
    MultiByte,
}

/// What DB_TRX_ID and DB_ROLL_PTR hold after prepare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SysColumns {
    /// The inserting statement's transaction id and the row's insert undo record pointer.
    AsInserted,
    /// Reset by purge: DB_TRX_ID = 0, DB_ROLL_PTR = 1 << 55 (MariaDB 10.3 until
    /// MDEV-16168, 2025).
    PurgeReset,
}

/// Page checksum format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checksum {
    /// `innodb_checksum_algorithm=crc32` (MySQL 5.7 default).
    Crc32,
    /// `full_crc32` (MariaDB 10.5+ default for new tablespaces).
    FullCrc32,
}

/// `--rand-type` used for k at prepare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KDistribution {
    /// `sb_rand_special` with `--rand-spec-iter`, `--rand-spec-pct`, `--rand-spec-res`
    /// (sysbench 1.0.x default: 12, 1, 75).
    Special {
        /// Uniforms averaged for the bell part.
        iter: u32,
        /// Width of the band, percent of the range.
        pct: u32,
        /// Percent of values in the band.
        res: u32,
    },
    /// `sb_rand_uniform` (sysbench 1.1 default).
    Uniform,
}

/// A sysbench table as prepare leaves it, and the facts its page bytes depend on.
#[derive(Debug, Clone)]
pub struct SysbenchTable {
    /// `--table-size`: rows, ids 1..=rows.
    pub rows: u64,
    /// The N of `sbtestN` (its digits are part of the INSERT statement's length).
    pub table_num: u32,
    /// `innodb_page_size`: 4096, 8192, 16384, 32768 or 65536.
    pub page_size: usize,
    /// Character set of `c` and `pad`.
    pub charset: Charset,
    /// Distribution of k.
    pub k_dist: KDistribution,
    /// DB_TRX_ID / DB_ROLL_PTR contents.
    pub sys_columns: SysColumns,
    /// Checksum format.
    pub checksum: Checksum,
    /// Bulk-built pages keep `PAGE_LAST_INSERT` and `PAGE_RIGHT` (MySQL 5.7) or not
    /// (MariaDB 10.5+).
    pub bulk_insert_hints: bool,
    /// `innodb_fill_factor` (bulk index builds).
    pub fill_factor: u32,
    /// Rollback segments 1..=32 are reserved for temporary tables and skipped by the
    /// round robin (MySQL 5.7), or all 128 take turns (MariaDB).
    pub rseg_skip_temporary: bool,
    /// Tablespace id.
    pub space_id: u32,
    /// Table id (size of its compressed form in each undo record).
    pub table_id: u64,
    /// Index id of PRIMARY.
    pub primary_index_id: u64,
    /// Index id of `k_N`.
    pub k_index_id: u64,
    /// DB_TRX_ID of the first INSERT statement.
    pub first_trx_id: u64,
    /// Transaction ids consumed per statement.
    pub trx_id_step: u64,
    /// LSN before the load.
    pub lsn_base: u64,
    /// Redo bytes per inserted row (LSN model, simplification 7).
    pub redo_bytes_per_row: u64,
    /// Seed of all drawn content.
    pub seed: u64,
}

/// Rows and position of one page in its level: `first` is the first row id (leaves) or
/// the first child leaf (level 1); `appended` counts the records added one by one after
/// the page was created or filled by a copy (they set the insert-direction fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageSpan {
    /// First row id (leaf) or first child leaf index (level 1).
    pub first: u64,
    /// Records on the page.
    pub n: usize,
    /// Records appended after creation or copy.
    pub appended: usize,
}

/// One row's user columns as sysbench generated them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// k.
    pub k: u32,
    /// c before padding: 10 groups of 11 digits joined by '-'.
    pub c: [u8; C_TEXT],
    /// pad before padding: 5 groups of 11 digits joined by '-'.
    pub pad: [u8; PAD_TEXT],
}

impl SysbenchTable {
    /// A table of `rows` rows with the defaults of `flavor`, 16 KiB pages, sysbench 1.0.x's
    /// `special` k.
    pub fn new(flavor: Flavor, rows: u64, seed: u64) -> SysbenchTable {
        // Guaranteed by the callers: validate bounds table_size to 1 .. 2^31 - 1 and
        // `ibd_records::generator` takes at least 2 rows.
        assert!((2..=i32::MAX as u64).contains(&rows), "sysbench ids are INTEGER");
        let mysql = flavor == Flavor::MySql57;
        SysbenchTable {
            rows,
            table_num: 1,
            page_size: 16384,
            charset: Charset::Latin1,
            k_dist: KDistribution::Special { iter: 12, pct: 1, res: 75 },
            sys_columns: SysColumns::AsInserted,
            checksum: if mysql { Checksum::Crc32 } else { Checksum::FullCrc32 },
            bulk_insert_hints: mysql,
            fill_factor: 100,
            rseg_skip_temporary: mysql,
            space_id: 5,
            table_id: 40,
            primary_index_id: 41,
            k_index_id: 42,
            first_trx_id: 5000,
            trx_id_step: 2,
            lsn_base: 16 << 20,
            redo_bytes_per_row: 260,
            seed,
        }
    }

    fn check(&self, page: &[u8]) {
        assert!(
            // Guaranteed by validate (innodb_page_size one of 4K .. 64K); the buffer is made of that size.
            self.page_size.is_power_of_two() && (4096..=65536).contains(&self.page_size),
            "innodb_page_size {}",
            self.page_size
        );
        assert_eq!(page.len(), self.page_size, "page buffer");
    }

    // ---------------------------------------------------------------- geometry

    /// Bytes of a clustered leaf record (header and length bytes included).
    pub fn clustered_rec_size(&self) -> usize {
        self.clustered_extra() + CLUSTERED_DATA
    }

    fn clustered_extra(&self) -> usize {
        match self.charset {
            Charset::Latin1 => REC_N_NEW_EXTRA_BYTES,
            Charset::MultiByte => REC_N_NEW_EXTRA_BYTES + 2,
        }
    }

    /// Rows a full clustered leaf holds (sequential inserts, page_size / 16 reserve).
    pub fn clustered_leaf_capacity(&self) -> usize {
        fill_capacity(self.page_size, self.clustered_rec_size(), self.page_size / 16)
    }

    /// Node pointers a full clustered level-1 page holds (no reserve).
    pub fn clustered_node_capacity(&self) -> usize {
        fill_capacity(self.page_size, CLUSTERED_NODE_PTR, 0)
    }

    /// Records a k index leaf holds (bulk load, `innodb_fill_factor` reserve).
    pub fn secondary_leaf_capacity(&self) -> usize {
        let reserve = self.page_size * (100 - self.fill_factor.min(100) as usize) / 100;
        fill_capacity(self.page_size, SECONDARY_REC, reserve)
    }

    /// Clustered leaf pages.
    pub fn clustered_leaves(&self) -> u64 {
        level_pages(self.rows, self.clustered_leaf_capacity())
    }

    /// Clustered level-1 pages (1 when level 1 is the root; 0 when the root is a leaf).
    pub fn clustered_level1_pages(&self) -> u64 {
        let leaves = self.clustered_leaves();
        if leaves == 1 {
            0
        } else {
            level_pages(leaves, self.clustered_node_capacity())
        }
    }

    /// k index leaf pages.
    pub fn secondary_leaves(&self) -> u64 {
        self.rows.div_ceil(self.secondary_leaf_capacity() as u64)
    }

    /// Rows of clustered leaf `i`.
    pub fn clustered_leaf_span(&self, i: u64) -> PageSpan {
        let s = level_span(self.rows, self.clustered_leaf_capacity(), i);
        PageSpan { first: s.first + 1, ..s }
    }

    /// Child leaves of clustered level-1 page `j`.
    pub fn clustered_level1_span(&self, j: u64) -> PageSpan {
        level_span(self.clustered_leaves(), self.clustered_node_capacity(), j)
    }

    /// Page number of clustered leaf `i` (simplification 3).
    pub fn clustered_leaf_page_no(&self, i: u64) -> u32 {
        if self.clustered_leaves() == 1 {
            3
        } else {
            (4 + i) as u32
        }
    }

    /// Page number of clustered level-1 page `j` (simplification 3).
    pub fn clustered_level1_page_no(&self, j: u64) -> u32 {
        if self.clustered_level1_pages() == 1 {
            3
        } else {
            (4 + self.clustered_leaves() + j) as u32
        }
    }

    /// Page number of k index leaf `i` (simplification 3).
    pub fn secondary_leaf_page_no(&self, i: u64) -> u32 {
        (4 + self.clustered_leaves() + self.clustered_level1_pages() + 1 + i) as u32
    }

    // ---------------------------------------------------------------- rows

    /// The user columns of row `id` (1..=rows).
    pub fn row(&self, id: u64) -> Row {
        let mut rng = Pcg64Mcg::seed_from_u64(mix(self.seed ^ mix(id ^ 0x726f_7773)));
        let mut c = [0u8; C_TEXT];
        let mut pad = [0u8; PAD_TEXT];
        template_digits(&mut rng, &mut c);
        template_digits(&mut rng, &mut pad);
        let k = self.draw_k(&mut rng);
        Row { k, c, pad }
    }

    /// `sb_rand_special(1, rows)` or `sb_rand_uniform(1, rows)`.
    fn draw_k(&self, rng: &mut Pcg64Mcg) -> u32 {
        let a = 1u32;
        let b = self.rows as u32;
        match self.k_dist {
            KDistribution::Uniform => a + (rng.random::<f64>() * f64::from(b - a + 1)) as u32,
            KDistribution::Special { iter, pct, res } => {
                let t = f64::from(b - a);
                let range_size = t * (100.0 / (100.0 - f64::from(res)));
                let rnd = rng.random::<f64>();
                if rnd * range_size < t {
                    let sum: f64 = (0..iter).map(|_| rng.random::<f64>()).sum();
                    return (f64::from(a) + sum * t / f64::from(iter)) as u32;
                }
                let d = t * f64::from(pct) / 100.0;
                let r = rnd * (d + 1.0) + t / 2.0 - t * f64::from(pct) / 200.0;
                a + r as u32
            }
        }
    }

    /// P(k <= x) for the prepare-time distribution of k.
    pub fn k_cdf(&self, x: u64) -> f64 {
        if x == 0 {
            return 0.0;
        }
        if x >= self.rows {
            return 1.0;
        }
        let xf = x as f64;
        match self.k_dist {
            KDistribution::Uniform => xf / self.rows as f64,
            KDistribution::Special { iter, pct, res } => {
                let t = (self.rows - 1) as f64;
                // Branch probabilities: rnd < (100 - res) / 100 takes the bell.
                let pg = (100.0 - f64::from(res)) / 100.0;
                let bell = irwin_hall_cdf(iter, f64::from(iter) * xf / t);
                let d = t * f64::from(pct) / 100.0;
                let base = t / 2.0 - t * f64::from(pct) / 200.0;
                let lo = pg * (d + 1.0) + base;
                let hi = (d + 1.0) + base;
                let band = ((xf - lo) / (hi - lo)).clamp(0.0, 1.0);
                pg * bell + (1.0 - pg) * band
            }
        }
    }

    /// Smallest k >= `from` with `k_cdf(k) >= u` (galloping, then bisection).
    fn k_quantile(&self, u: f64, from: u64) -> u64 {
        let n = self.rows;
        let mut lo = from.max(1);
        if self.k_cdf(lo) >= u {
            return lo;
        }
        let mut step = 1u64;
        let mut hi;
        loop {
            hi = lo.saturating_add(step).min(n);
            if hi == n || self.k_cdf(hi) >= u {
                break;
            }
            lo = hi;
            step *= 2;
        }
        // k_cdf(lo) < u <= k_cdf(hi)
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.k_cdf(mid) >= u {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        hi
    }

    // ---------------------------------------------------------------- transactions

    /// Rows per INSERT statement (simplification 5).
    pub fn rows_per_statement(&self) -> u64 {
        let prefix =
            "INSERT INTO sbtest".len() + digits(u64::from(self.table_num)) + "(k, c, pad) VALUES".len();
        // "(k, 'c', 'pad')": parentheses, two quoted strings, two ", " separators.
        let row = 1 + digits(self.rows / 2) + 3 + C_TEXT + 4 + PAD_TEXT + 2;
        // db_bulk_insert_next: a row is added while prefix + rows + commas + NUL fit.
        (((BULK_PACKET_SIZE - 1 - prefix) / (row + 1)) as u64).max(1)
    }

    /// DB_TRX_ID and DB_ROLL_PTR of row `id`, with `undo` the undo position of the row
    /// (kept by the caller while walking a page's consecutive rows).
    fn sys_columns_of(&self, id: u64, undo: &mut UndoCursor) -> (u64, u64) {
        if self.sys_columns == SysColumns::PurgeReset {
            return (0, 1 << 55);
        }
        let per = self.rows_per_statement();
        let stmt = (id - 1) / per;
        let q = (id - 1) % per;
        if undo.stmt != stmt || undo.undo_no > q {
            *undo = UndoCursor::start(stmt);
        }
        while undo.undo_no < q {
            undo.advance(self);
        }
        undo.fit(self);
        let rseg = if self.rseg_skip_temporary {
            // MySQL 5.7: rseg 0 and 33..=127 hold redo undo, 1..=32 are temporary.
            let r = stmt % 96;
            if r == 0 {
                0
            } else {
                32 + r
            }
        } else {
            stmt % 128
        };
        let first_page = 300 + mix(self.seed ^ mix(stmt ^ 0x756e_646f)) % 60_000;
        let page_no = first_page + undo.page;
        let roll = 1u64 << 55 | rseg << 48 | (page_no & 0xFFFF_FFFF) << 16 | undo.offset as u64;
        (self.first_trx_id + stmt * self.trx_id_step, roll)
    }

    fn undo_rec_size(&self, undo_no: u64) -> usize {
        // 2 next + type + undo_no + table id + key length (1) + key (4) + 2 end.
        2 + 1 + much_compressed_size(undo_no) + much_compressed_size(self.table_id) + 1 + 4 + 2
    }

    fn lsn_after_row(&self, id: u64) -> u64 {
        let loaded = match self.sys_columns {
            SysColumns::AsInserted => 0,
            // Purge rewrites each page after the load.
            SysColumns::PurgeReset => self.rows * self.redo_bytes_per_row,
        };
        self.lsn_base + loaded + id * self.redo_bytes_per_row
    }

    fn index_build_trx_id(&self) -> u64 {
        self.first_trx_id + self.rows.div_ceil(self.rows_per_statement()) * self.trx_id_step
    }

    // ---------------------------------------------------------------- pages

    /// Writes clustered leaf `i` (0-based in id order) into `page`.
    pub fn fill_clustered_leaf(&self, i: u64, page: &mut [u8]) {
        self.check(page);
        let leaves = self.clustered_leaves();
        // Invariant: the callers walk leaves 0 .. clustered_leaves().
        assert!(i < leaves, "leaf {i} of {leaves}");
        let span = self.clustered_leaf_span(i);
        let extra = self.clustered_extra();
        let rec = extra + CLUSTERED_DATA;
        let page_no = self.clustered_leaf_page_no(i);
        let prev = if i == 0 { FIL_NULL } else { self.clustered_leaf_page_no(i - 1) };
        let next = if i + 1 == leaves { FIL_NULL } else { self.clustered_leaf_page_no(i + 1) };
        let last_id = span.first + span.n as u64 - 1;
        begin_page(page, page_no, prev, next, self.lsn_after_row(last_id), self.space_id);
        let mut undo = UndoCursor::start(u64::MAX);
        for r in 0..span.n {
            let id = span.first + r as u64;
            let o = PAGE_NEW_SUPREMUM_END + r * rec + extra;
            let row = self.row(id);
            let (trx_id, roll_ptr) = self.sys_columns_of(id, &mut undo);
            if self.charset == Charset::MultiByte {
                page[o - REC_N_NEW_EXTRA_BYTES - 1] = C_LEN as u8;
                page[o - REC_N_NEW_EXTRA_BYTES - 2] = PAD_LEN as u8;
            }
            let d = &mut page[o..o + CLUSTERED_DATA];
            put_int(&mut d[0..4], id as u32);
            d[4..10].copy_from_slice(&trx_id.to_be_bytes()[2..]);
            d[10..17].copy_from_slice(&roll_ptr.to_be_bytes()[1..]);
            put_int(&mut d[17..21], row.k);
            d[21..21 + C_TEXT].copy_from_slice(&row.c);
            d[21 + C_TEXT] = b' ';
            d[21 + C_LEN..21 + C_LEN + PAD_TEXT].copy_from_slice(&row.pad);
            d[21 + C_LEN + PAD_TEXT] = b' ';
        }
        let hdr = Header {
            n: span.n,
            extra,
            rec,
            status: REC_STATUS_ORDINARY,
            min_rec_first: false,
            appended: span.appended,
            level: 0,
            max_trx_id: 0,
            index_id: self.primary_index_id,
            bulk: false,
        };
        self.finish_page(page, &hdr);
    }

    /// Writes clustered level-1 (node pointer) page `j` into `page`.
    pub fn fill_clustered_nonleaf(&self, j: u64, page: &mut [u8]) {
        self.check(page);
        let pages = self.clustered_level1_pages();
        // Invariant: the callers walk pages 0 .. clustered_level1_pages().
        assert!(j < pages, "level-1 page {j} of {pages}");
        let span = self.clustered_level1_span(j);
        let rec = CLUSTERED_NODE_PTR;
        let extra = REC_N_NEW_EXTRA_BYTES;
        let page_no = self.clustered_level1_page_no(j);
        let prev = if j == 0 { FIL_NULL } else { self.clustered_level1_page_no(j - 1) };
        let next = if j + 1 == pages { FIL_NULL } else { self.clustered_level1_page_no(j + 1) };
        let last_leaf = self.clustered_leaf_span(span.first + span.n as u64 - 1);
        begin_page(page, page_no, prev, next, self.lsn_after_row(last_leaf.first), self.space_id);
        for r in 0..span.n {
            let leaf = span.first + r as u64;
            let o = PAGE_NEW_SUPREMUM_END + r * rec + extra;
            put_int(&mut page[o..o + 4], self.clustered_leaf_span(leaf).first as u32);
            page[o + 4..o + 8].copy_from_slice(&self.clustered_leaf_page_no(leaf).to_be_bytes());
        }
        let hdr = Header {
            n: span.n,
            extra,
            rec,
            status: REC_STATUS_NODE_PTR,
            min_rec_first: j == 0,
            appended: span.appended,
            level: 1,
            max_trx_id: 0,
            index_id: self.primary_index_id,
            bulk: false,
        };
        self.finish_page(page, &hdr);
    }

    /// Writes leaf `i` of the k index into `page` (simplification 2).
    pub fn fill_secondary_leaf(&self, i: u64, page: &mut [u8]) {
        self.check(page);
        let leaves = self.secondary_leaves();
        // Invariant: the callers walk leaves 0 .. secondary_leaves().
        assert!(i < leaves, "k leaf {i} of {leaves}");
        let cap = self.secondary_leaf_capacity();
        let p = i * cap as u64;
        let n = (self.rows - p).min(cap as u64) as usize;
        let rec = SECONDARY_REC;
        let extra = REC_N_NEW_EXTRA_BYTES;
        let page_no = self.secondary_leaf_page_no(i);
        let prev = if i == 0 { FIL_NULL } else { self.secondary_leaf_page_no(i - 1) };
        let next = if i + 1 == leaves { FIL_NULL } else { self.secondary_leaf_page_no(i + 1) };
        let lsn = self.lsn_after_row(self.rows) + (i + 1) * self.page_size as u64;
        begin_page(page, page_no, prev, next, lsn, self.space_id);
        let origin = |r: usize| PAGE_NEW_SUPREMUM_END + r * rec + extra;
        let mut rng = Pcg64Mcg::seed_from_u64(mix(self.seed ^ mix(i ^ 0x6b5f_6964_7878)));
        let nf = self.rows as f64;
        // Sorted k: quantiles of uniform order statistics with exponential spacings.
        let u_first = (p as f64 + 0.5) / nf;
        let mut u = u_first;
        let mut k = self.k_quantile(u, 1);
        for r in 0..n {
            if r > 0 {
                u += exp1(&mut rng) / nf;
                k = self.k_quantile(u.min(1.0), k);
            }
            put_int(&mut page[origin(r)..origin(r) + 4], k as u32);
        }
        let u_last = u;
        let k_at =
            // Infallible: the slice is exactly 4 bytes.
            |page: &[u8], r: usize| u32::from_be_bytes(page[origin(r)..origin(r) + 4].try_into().unwrap());
        // Ids: each run of one k is a sorted uniform sample of 1..=rows.
        let mut a = 0usize;
        while a < n {
            let ka = k_at(page, a);
            let mut b = a + 1;
            while b < n && k_at(page, b) == ka {
                b += 1;
            }
            let kk = u64::from(ka ^ 0x8000_0000);
            let mut before = 0u64;
            if a == 0 {
                let lo = self.k_cdf(kk - 1);
                let mut v = u_first;
                loop {
                    v -= exp1(&mut rng) / nf;
                    if v <= lo || before >= RUN_WALK_CAP {
                        break;
                    }
                    before += 1;
                }
            }
            let mut after = 0u64;
            if b == n {
                let hi = self.k_cdf(kk);
                let mut v = u_last;
                loop {
                    v += exp1(&mut rng) / nf;
                    if v > hi || after >= RUN_WALK_CAP {
                        break;
                    }
                    after += 1;
                }
            }
            let total = before + (b - a) as u64 + after;
            let mut uprev = 0.0f64;
            let mut prev_id = 0u64;
            for jj in 0..before + (b - a) as u64 {
                let v = 1.0 - rng.random::<f64>();
                let left = (total - jj) as f64;
                uprev += (1.0 - uprev) * (1.0 - v.powf(1.0 / left));
                let mut id = (1 + (uprev * nf) as u64).min(self.rows);
                if id <= prev_id {
                    id = prev_id + 1;
                }
                prev_id = id;
                if jj >= before {
                    let o = origin(a + (jj - before) as usize);
                    put_int(&mut page[o + 4..o + 8], id as u32);
                }
            }
            a = b;
        }
        let hdr = Header {
            n,
            extra,
            rec,
            status: REC_STATUS_ORDINARY,
            min_rec_first: false,
            appended: n,
            level: 0,
            max_trx_id: self.index_build_trx_id(),
            index_id: self.k_index_id,
            bulk: true,
        };
        self.finish_page(page, &hdr);
    }

    /// Record headers, record list, directory, page header, trailer and checksum of a page
    /// whose record data is in place.
    fn finish_page(&self, page: &mut [u8], h: &Header) {
        let ps = self.page_size;
        let origin = |r: usize| PAGE_NEW_SUPREMUM_END + r * h.rec + h.extra;
        // Infimum -> first record -> ... -> supremum.
        let first = if h.n > 0 { origin(0) } else { PAGE_NEW_SUPREMUM };
        put16(page, PAGE_NEW_INFIMUM - 2, (first - PAGE_NEW_INFIMUM) as u16);
        for r in 0..h.n {
            let o = origin(r);
            let heap_no = (PAGE_HEAP_NO_USER_LOW + r) as u16;
            page[o - 5] = if r == 0 && h.min_rec_first { REC_INFO_MIN_REC_FLAG } else { 0 };
            put16(page, o - 4, heap_no << 3 | h.status);
            let next = if r + 1 < h.n { origin(r + 1) } else { PAGE_NEW_SUPREMUM };
            put16(page, o - 2, (next as u16).wrapping_sub(o as u16));
        }
        // Directory: infimum, every 4th record, supremum.
        let middle = middle_slots(h.n);
        let slot = |s: usize| ps - PAGE_DIR - PAGE_DIR_SLOT_SIZE * (s + 1);
        put16(page, slot(0), PAGE_NEW_INFIMUM as u16);
        for s in 1..=middle {
            let o = origin(PAGE_DIR_SLOT_MIN_N_OWNED * s - 1);
            put16(page, slot(s), o as u16);
            page[o - 5] |= PAGE_DIR_SLOT_MIN_N_OWNED as u8;
        }
        put16(page, slot(middle + 1), PAGE_NEW_SUPREMUM as u16);
        page[PAGE_NEW_SUPREMUM - 5] = (h.n + 1 - PAGE_DIR_SLOT_MIN_N_OWNED * middle) as u8;
        // Page header.
        let heap_top = PAGE_NEW_SUPREMUM_END + h.n * h.rec;
        put16(page, PAGE_HEADER + PAGE_N_DIR_SLOTS, (middle + 2) as u16);
        put16(page, PAGE_HEADER + PAGE_HEAP_TOP, heap_top as u16);
        put16(page, PAGE_HEADER + PAGE_N_HEAP, 0x8000 | (PAGE_HEAP_NO_USER_LOW + h.n) as u16);
        let (last, dir, n_dir) = if h.bulk {
            if self.bulk_insert_hints {
                (origin(h.n - 1) as u16, PAGE_RIGHT, 0)
            } else {
                (0, PAGE_NO_DIRECTION, 0)
            }
        } else if h.appended == 0 {
            (0, PAGE_NO_DIRECTION, 0)
        } else {
            let dir = if h.appended >= 2 { PAGE_RIGHT } else { PAGE_NO_DIRECTION };
            (origin(h.n - 1) as u16, dir, (h.appended - 1) as u16)
        };
        put16(page, PAGE_HEADER + PAGE_LAST_INSERT, last);
        put16(page, PAGE_HEADER + PAGE_DIRECTION, dir);
        put16(page, PAGE_HEADER + PAGE_N_DIRECTION, n_dir);
        put16(page, PAGE_HEADER + PAGE_N_RECS, h.n as u16);
        page[PAGE_HEADER + PAGE_MAX_TRX_ID..PAGE_HEADER + PAGE_MAX_TRX_ID + 8]
            .copy_from_slice(&h.max_trx_id.to_be_bytes());
        put16(page, PAGE_HEADER + PAGE_LEVEL, h.level);
        page[PAGE_HEADER + PAGE_INDEX_ID..PAGE_HEADER + PAGE_INDEX_ID + 8]
            .copy_from_slice(&h.index_id.to_be_bytes());
        // Trailer and checksum.
        let lsn_low =
            [page[FIL_PAGE_LSN + 4], page[FIL_PAGE_LSN + 5], page[FIL_PAGE_LSN + 6], page[FIL_PAGE_LSN + 7]];
        match self.checksum {
            Checksum::Crc32 => {
                page[ps - 4..].copy_from_slice(&lsn_low);
                let c = crc32c(&page[FIL_PAGE_OFFSET..FIL_PAGE_FILE_FLUSH_LSN])
                    ^ crc32c(&page[FIL_PAGE_DATA..ps - FIL_PAGE_DATA_END]);
                page[FIL_PAGE_SPACE_OR_CHKSUM..4].copy_from_slice(&c.to_be_bytes());
                page[ps - 8..ps - 4].copy_from_slice(&c.to_be_bytes());
            }
            Checksum::FullCrc32 => {
                page[ps - 8..ps - 4].copy_from_slice(&lsn_low);
                let c = crc32c(&page[..ps - 4]);
                page[ps - 4..].copy_from_slice(&c.to_be_bytes());
            }
        }
    }
}

/// Data bytes of a clustered leaf record: id 4, DB_TRX_ID 6, DB_ROLL_PTR 7, k 4, c, pad.
const CLUSTERED_DATA: usize = 4 + 6 + 7 + 4 + C_LEN + PAD_LEN;
/// Clustered node pointer: header, id, child page number.
const CLUSTERED_NODE_PTR: usize = REC_N_NEW_EXTRA_BYTES + 4 + 4;
/// k index leaf record: header, k, id.
const SECONDARY_REC: usize = REC_N_NEW_EXTRA_BYTES + 4 + 4;
/// Bound on the walk over a run's part on neighbouring pages.
const RUN_WALK_CAP: u64 = 1 << 20;

struct Header {
    n: usize,
    extra: usize,
    rec: usize,
    status: u16,
    min_rec_first: bool,
    appended: usize,
    level: u16,
    max_trx_id: u64,
    index_id: u64,
    bulk: bool,
}

/// Position of the next insert undo record of one statement.
struct UndoCursor {
    stmt: u64,
    undo_no: u64,
    page: u64,
    offset: usize,
}

impl UndoCursor {
    fn start(stmt: u64) -> UndoCursor {
        UndoCursor { stmt, undo_no: 0, page: 0, offset: TRX_UNDO_LOG_FIRST_REC }
    }

    /// Moves to the next page if the record at the cursor would not fit.
    fn fit(&mut self, t: &SysbenchTable) {
        if self.offset + TRX_UNDO_PAGE_TAIL > t.page_size {
            self.page += 1;
            self.offset = TRX_UNDO_PAGE_FIRST_REC;
        }
    }

    fn advance(&mut self, t: &SysbenchTable) {
        self.fit(t);
        self.offset += t.undo_rec_size(self.undo_no);
        self.undo_no += 1;
    }
}

/// Records of `rec` bytes one page takes by appends: an insert needs
/// `page_get_max_insert_size_after_reorganize(page, 1) >= rec`, and once the page has 2
/// records it must leave `reserve` free beyond the record (the clustered-leaf rule of
/// `btr_cur_optimistic_insert` and the fill-factor rule of `PageBulk::isSpaceAvailable`,
/// which reduce to the same inequality: [`super::btree`]'s `records_per_page`).
fn fill_capacity(page_size: usize, rec: usize, reserve: usize) -> usize {
    super::btree::records_per_page(page_size as u64, rec as u64, reserve as u64) as usize
}

/// Records a page keeps at a middle split of `n` records (`page_get_middle_rec`: the
/// record number (n + 2) / 2 and those after it move right).
fn middle_keep(n: usize) -> usize {
    (n + PAGE_HEAP_NO_USER_LOW) / 2 - 1
}

/// Pages of a level of `items` entries filled by appends, `cap` per page, the first page
/// left with `middle_keep(cap)` by the root raise.
fn level_pages(items: u64, cap: usize) -> u64 {
    let cap = cap as u64;
    if items <= cap {
        1
    } else {
        let keep = middle_keep(cap as usize) as u64;
        1 + (items - keep).div_ceil(cap)
    }
}

/// Entries of page `i` of such a level (0-based first entry).
fn level_span(items: u64, cap: usize, i: u64) -> PageSpan {
    let capu = cap as u64;
    if items <= capu {
        return PageSpan { first: 0, n: items as usize, appended: items as usize };
    }
    let keep = middle_keep(cap) as u64;
    if i == 0 {
        return PageSpan { first: 0, n: keep as usize, appended: 0 };
    }
    let first = keep + (i - 1) * capu;
    let n = (items - first).min(capu) as usize;
    // The second page received cap - keep records by the copy of the split.
    let appended = if i == 1 { n - (cap - keep as usize) } else { n };
    PageSpan { first, n, appended }
}

/// Directory slots between infimum and supremum for `n` records filled by appends or by a
/// bulk load: one per 4 records, the supremum owning 5 to 8.
fn middle_slots(n: usize) -> usize {
    if n >= PAGE_DIR_SLOT_MAX_N_OWNED {
        (n - PAGE_DIR_SLOT_MIN_N_OWNED) / PAGE_DIR_SLOT_MIN_N_OWNED
    } else {
        0
    }
}

/// Zeroes the page (`fsp_init_file_page_low`, `page_create_low`) and writes the FIL header
/// and the infimum/supremum records.
fn begin_page(page: &mut [u8], page_no: u32, prev: u32, next: u32, lsn: u64, space_id: u32) {
    page.fill(0);
    page[FIL_PAGE_OFFSET..FIL_PAGE_OFFSET + 4].copy_from_slice(&page_no.to_be_bytes());
    page[FIL_PAGE_PREV..FIL_PAGE_PREV + 4].copy_from_slice(&prev.to_be_bytes());
    page[FIL_PAGE_NEXT..FIL_PAGE_NEXT + 4].copy_from_slice(&next.to_be_bytes());
    page[FIL_PAGE_LSN..FIL_PAGE_LSN + 8].copy_from_slice(&lsn.to_be_bytes());
    page[FIL_PAGE_TYPE..FIL_PAGE_TYPE + 2].copy_from_slice(&FIL_PAGE_INDEX.to_be_bytes());
    page[FIL_PAGE_SPACE_ID..FIL_PAGE_SPACE_ID + 4].copy_from_slice(&space_id.to_be_bytes());
    page[PAGE_DATA..PAGE_NEW_SUPREMUM_END].copy_from_slice(&INFIMUM_SUPREMUM_COMPACT);
}

fn put16(page: &mut [u8], at: usize, v: u16) {
    page[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

/// A signed INTEGER as InnoDB stores it: big-endian, sign bit flipped.
fn put_int(dst: &mut [u8], v: u32) {
    dst.copy_from_slice(&(v ^ 0x8000_0000).to_be_bytes());
}

/// `sb_rand_str` on the template shape: digits in groups of 11, '-' between groups.
fn template_digits(rng: &mut Pcg64Mcg, out: &mut [u8]) {
    for (j, b) in out.iter_mut().enumerate() {
        *b = if j % 12 == 11 { b'-' } else { b'0' + (rng.random::<f64>() * 10.0) as u8 };
    }
}

fn digits(mut v: u64) -> usize {
    let mut d = 1;
    while v >= 10 {
        v /= 10;
        d += 1;
    }
    d
}

/// Bytes of `mach_u64_write_much_compressed(v)`.
fn much_compressed_size(v: u64) -> usize {
    let compressed = |x: u32| match x {
        0..=0x7F => 1,
        0x80..=0x3FFF => 2,
        0x4000..=0x1F_FFFF => 3,
        0x20_0000..=0x0FFF_FFFF => 4,
        _ => 5,
    };
    if v >> 32 == 0 {
        compressed(v as u32)
    } else {
        1 + 4 + compressed(v as u32)
    }
}

/// P(S <= y) for S the sum of `n` independent uniforms on [0, 1).
fn irwin_hall_cdf(n: u32, y: f64) -> f64 {
    let nf = f64::from(n);
    if y <= 0.0 {
        return 0.0;
    }
    if y >= nf {
        return 1.0;
    }
    if n > 20 {
        // Normal approximation where the alternating sum loses precision.
        let z = (y - nf / 2.0) / (nf / 12.0).sqrt();
        return 0.5 * (1.0 + erf(z / std::f64::consts::SQRT_2));
    }
    if y > nf / 2.0 {
        return 1.0 - irwin_hall_cdf(n, nf - y);
    }
    let mut sum = 0.0;
    let mut binom = 1.0;
    let mut sign = 1.0;
    let mut j = 0u32;
    while j <= n && f64::from(j) < y {
        sum += sign * binom * (y - f64::from(j)).powi(n as i32);
        binom = binom * f64::from(n - j) / f64::from(j + 1);
        sign = -sign;
        j += 1;
    }
    let fact: f64 = (1..=n).map(f64::from).product();
    (sum / fact).clamp(0.0, 1.0)
}

/// The error function by its Maclaurin series (|x| <= 4; beyond, erf = sign(x) to 2e-8).
fn erf(x: f64) -> f64 {
    if x.abs() > 4.0 {
        return x.signum();
    }
    let mut term = x;
    let mut sum = x;
    let mut n = 0.0;
    while term.abs() > 1e-17 * sum.abs().max(1e-300) {
        n += 1.0;
        term *= -x * x / n;
        sum += term / (2.0 * n + 1.0);
    }
    2.0 / std::f64::consts::PI.sqrt() * sum
}

fn exp1(rng: &mut Pcg64Mcg) -> f64 {
    -(1.0 - rng.random::<f64>()).ln()
}

/// splitmix64 finalizer.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

const CRC32C_TABLE: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut j = 0;
        while j < 8 {
            c = if c & 1 != 0 { (c >> 1) ^ 0x82F6_3B78 } else { c >> 1 };
            j += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
};

/// CRC-32C (Castagnoli), as `ut_crc32` (MySQL) and `my_crc32c(0, ..)` (MariaDB) compute it.
pub fn crc32c(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in data {
        c = CRC32C_TABLE[((c ^ u32::from(b)) & 0xFF) as usize] ^ (c >> 8);
    }
    !c
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `page_get_free_space_of_empty` ([`super::super::btree`]'s) in `usize`.
    fn free_space_of_empty(page_size: usize) -> usize {
        crate::db::innodb::btree::free_space_of_empty(page_size as u64) as usize
    }

    /// `page_dir_calc_reserved_space` ([`super::super::btree`]'s) in `usize`.
    fn dir_reserved(n: usize) -> usize {
        crate::db::innodb::btree::dir_reserved(n as u64) as usize
    }
    use crate::fs::zfs::compression::zio_stored_block;
    use crate::fs::zfs::compressors::lz4_compressed_len;

    fn get16(p: &[u8], at: usize) -> u16 {
        u16::from_be_bytes([p[at], p[at + 1]])
    }

    fn get32(p: &[u8], at: usize) -> u32 {
        u32::from_be_bytes(p[at..at + 4].try_into().unwrap())
    }

    /// Walks the record list and the directory of a page the way `page_validate` checks
    /// them; returns the record origins in list order.
    fn walk(p: &[u8], page_size: usize) -> Vec<usize> {
        assert_eq!(&p[PAGE_NEW_INFIMUM..PAGE_NEW_INFIMUM + 8], b"infimum\0");
        assert_eq!(&p[PAGE_NEW_SUPREMUM..PAGE_NEW_SUPREMUM + 8], b"supremum");
        assert_eq!(get16(p, PAGE_NEW_INFIMUM - 4), 0x0002, "infimum heap_no 0, status 2");
        assert_eq!(get16(p, PAGE_NEW_SUPREMUM - 4), 0x000b, "supremum heap_no 1, status 3");
        let mut recs = Vec::new();
        let mut o = PAGE_NEW_INFIMUM;
        loop {
            let next = (o as u16).wrapping_add(get16(p, o - 2)) as usize;
            assert!(next < page_size);
            if next == PAGE_NEW_SUPREMUM {
                break;
            }
            recs.push(next);
            o = next;
            assert!(recs.len() < page_size / 5, "loop in the record list");
        }
        assert_eq!(get16(p, PAGE_NEW_SUPREMUM - 2), 0, "end of list");
        let n = recs.len();
        assert_eq!(get16(p, PAGE_HEADER + PAGE_N_RECS) as usize, n);
        assert_eq!(get16(p, PAGE_HEADER + PAGE_N_HEAP), 0x8000 | (n as u16 + 2));
        // Directory: slots in ascending record order, n_owned between them.
        let n_slots = get16(p, PAGE_HEADER + PAGE_N_DIR_SLOTS) as usize;
        let slot = |s: usize| get16(p, page_size - PAGE_DIR - 2 * (s + 1)) as usize;
        assert_eq!(slot(0), PAGE_NEW_INFIMUM);
        assert_eq!(slot(n_slots - 1), PAGE_NEW_SUPREMUM);
        let mut owned_total = 0;
        let mut list = vec![PAGE_NEW_INFIMUM];
        list.extend(&recs);
        list.push(PAGE_NEW_SUPREMUM);
        let mut pos = 0;
        for s in 0..n_slots {
            let target = slot(s);
            let start = pos;
            while list[pos] != target {
                assert_eq!(p[list[pos] - 5] & 0x0f, 0, "n_owned only on slot owners");
                pos += 1;
            }
            let owned = pos - start + 1;
            assert_eq!((p[target - 5] & 0x0f) as usize, owned, "slot {s}");
            if s > 0 && s + 1 < n_slots {
                assert!((PAGE_DIR_SLOT_MIN_N_OWNED..=PAGE_DIR_SLOT_MAX_N_OWNED).contains(&owned));
            }
            owned_total += owned;
            pos += 1;
        }
        assert_eq!(owned_total, n + 2);
        // Heap numbers in insert order, heap top after the last record.
        for (r, &o) in recs.iter().enumerate() {
            assert_eq!(get16(p, o - 4) >> 3, r as u16 + 2);
        }
        recs
    }

    fn fil_ok(t: &SysbenchTable, p: &[u8], page_no: u32) {
        assert_eq!(get32(p, FIL_PAGE_OFFSET), page_no);
        assert_eq!(get16(p, FIL_PAGE_TYPE), FIL_PAGE_INDEX);
        assert_eq!(get32(p, FIL_PAGE_SPACE_ID), t.space_id);
        let ps = t.page_size;
        match t.checksum {
            Checksum::Crc32 => {
                let c = crc32c(&p[4..26]) ^ crc32c(&p[38..ps - 8]);
                assert_eq!(get32(p, 0), c);
                assert_eq!(get32(p, ps - 8), c);
                assert_eq!(&p[ps - 4..], &p[FIL_PAGE_LSN + 4..FIL_PAGE_LSN + 8]);
            }
            Checksum::FullCrc32 => {
                assert_eq!(get32(p, 0), 0);
                assert_eq!(get32(p, ps - 4), crc32c(&p[..ps - 4]));
                assert_eq!(&p[ps - 8..ps - 4], &p[FIL_PAGE_LSN + 4..FIL_PAGE_LSN + 8]);
            }
        }
    }

    #[test]
    fn crc32c_check_value() {
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
    }

    #[test]
    fn irwin_hall_and_erf() {
        // n = 1 is the uniform; n = 2 the triangle.
        assert!((irwin_hall_cdf(1, 0.3) - 0.3).abs() < 1e-12);
        assert!((irwin_hall_cdf(2, 0.5) - 0.125).abs() < 1e-12);
        assert!((irwin_hall_cdf(2, 1.5) - 0.875).abs() < 1e-12);
        assert!((irwin_hall_cdf(12, 6.0) - 0.5).abs() < 1e-12);
        // Mean 6, variance 1: one sigma below about 0.16, near the normal's 0.1587.
        assert!((irwin_hall_cdf(12, 5.0) - 0.1587).abs() < 0.003);
        assert!((erf(1.0) - 0.842_700_792_949_715).abs() < 1e-12);
        assert!((irwin_hall_cdf(48, 24.0) - 0.5).abs() < 1e-9);
    }

    /// Records per page from the insert rules, against the arithmetic done by hand:
    /// 16252 bytes free in an empty 16K page; a clustered leaf insert needs
    /// `max_size >= 1024 + 206`.
    #[test]
    fn records_per_page_follow_the_format() {
        let t = SysbenchTable::new(Flavor::MySql57, 1_000_000, 1);
        assert_eq!(free_space_of_empty(16384), 16252);
        assert_eq!(t.clustered_rec_size(), 206);
        assert_eq!(t.clustered_leaf_capacity(), 73);
        assert_eq!(t.clustered_node_capacity(), 1203);
        assert_eq!(t.secondary_leaf_capacity(), 1203);
        // Hand check of 73: the 73rd insert sees 72 records: max_size = 16252 - (72 * 206 +
        // ceil(2 * 73 / 4)) = 1383 >= 1230; the 74th sees 16252 - (15038 + 37) = 1177.
        assert_eq!(16252 - (72 * 206 + dir_reserved(73)), 1383);
        assert_eq!(16252 - (73 * 206 + dir_reserved(74)), 1177);
        // And of 1203 node pointers (13 bytes, no reserve): 1202 -> 16252 - 16228 = 24.
        assert_eq!(16252 - (1202 * 13 + dir_reserved(1203)), 24);
        assert_eq!(16252 - (1203 * 13 + dir_reserved(1204)), 11);
        let mut u = t.clone();
        u.charset = Charset::MultiByte;
        assert_eq!(u.clustered_rec_size(), 208);
        assert_eq!(u.clustered_leaf_capacity(), 73);
        let mut ff = t.clone();
        ff.fill_factor = 50;
        assert!(ff.secondary_leaf_capacity() < 1203 / 2 + 2);
        for ps in [4096, 8192, 32768, 65536] {
            let mut v = t.clone();
            v.page_size = ps;
            let c = v.clustered_leaf_capacity();
            // 15/16 of the free space, in records.
            let approx = (free_space_of_empty(ps) - ps / 16) as f64 / 206.5;
            assert!((c as f64 - approx).abs() < 2.0, "{ps}: {c} vs {approx}");
        }
        // Leaf count: 36 in the first leaf, 73 in the others.
        assert_eq!(t.clustered_leaf_span(0), PageSpan { first: 1, n: 36, appended: 0 });
        assert_eq!(t.clustered_leaf_span(1), PageSpan { first: 37, n: 73, appended: 36 });
        assert_eq!(t.clustered_leaf_span(2), PageSpan { first: 110, n: 73, appended: 73 });
        assert_eq!(t.clustered_leaves(), 1 + (1_000_000u64 - 36).div_ceil(73));
    }

    /// The closed-form directory equals slot splitting on appends
    /// (`page_cur_insert_rec_low` + `page_dir_split_slot`) and the bulk grouping
    /// (`PageBulk::finish`).
    #[test]
    fn directory_matches_insert_and_bulk_rules() {
        // PageBulk::finish groups (PAGE_DIR_SLOT_MAX_N_OWNED + 1) / 2 records per slot.
        const GROUP: usize = PAGE_DIR_SLOT_MAX_N_OWNED.div_ceil(2);
        for n in 0..400usize {
            // Appends: owners as record indices (0 = infimum, n + 1 = supremum).
            let mut owners = vec![0usize];
            let mut sup_owned = 1usize;
            for _ in 0..n {
                sup_owned += 1;
                if sup_owned == PAGE_DIR_SLOT_MAX_N_OWNED + 1 {
                    let prev = *owners.last().unwrap();
                    owners.push(prev + sup_owned / 2);
                    sup_owned -= sup_owned / 2;
                }
            }
            let middle_by_insert: Vec<usize> = owners[1..].to_vec();
            // Bulk.
            let mut slots = Vec::new();
            let mut count = 0usize;
            for r in 1..=n {
                count += 1;
                if count == GROUP {
                    slots.push(r);
                    count = 0;
                }
            }
            if !slots.is_empty() && count + 1 + GROUP <= PAGE_DIR_SLOT_MAX_N_OWNED {
                count += GROUP;
                slots.pop();
            }
            let expect: Vec<usize> = (1..=middle_slots(n)).map(|s| 4 * s).collect();
            assert_eq!(middle_by_insert, expect, "appends, n = {n}");
            assert_eq!(slots, expect, "bulk, n = {n}");
            assert_eq!(sup_owned, n + 1 - 4 * middle_slots(n));
            assert_eq!(count + 1, n + 1 - 4 * middle_slots(n));
        }
    }

    #[test]
    fn clustered_leaf_structure() {
        for flavor in [Flavor::MySql57, Flavor::MariaDb1011] {
            for charset in [Charset::Latin1, Charset::MultiByte] {
                let mut t = SysbenchTable::new(flavor, 1_000_000, 7);
                t.charset = charset;
                let mut p = vec![0u8; t.page_size];
                for i in [0u64, 1, 2, 5000, t.clustered_leaves() - 1] {
                    t.fill_clustered_leaf(i, &mut p);
                    fil_ok(&t, &p, t.clustered_leaf_page_no(i));
                    let span = t.clustered_leaf_span(i);
                    let recs = walk(&p, t.page_size);
                    assert_eq!(recs.len(), span.n);
                    assert_eq!(get16(&p, PAGE_HEADER + PAGE_LEVEL), 0);
                    assert_eq!(
                        get32(&p, FIL_PAGE_PREV),
                        if i == 0 { FIL_NULL } else { t.clustered_leaf_page_no(i - 1) }
                    );
                    let heap_top = get16(&p, PAGE_HEADER + PAGE_HEAP_TOP) as usize;
                    assert_eq!(heap_top, PAGE_NEW_SUPREMUM_END + span.n * t.clustered_rec_size());
                    // Unused space is zeros up to the directory.
                    let n_slots = get16(&p, PAGE_HEADER + PAGE_N_DIR_SLOTS) as usize;
                    let dir_start = t.page_size - PAGE_DIR - 2 * n_slots;
                    assert!(p[heap_top..dir_start].iter().all(|&b| b == 0));
                    if span.n == 73 {
                        assert_eq!(n_slots, 2 + 17);
                        // A full leaf keeps at least page_size / 16 free.
                        assert!(dir_start - heap_top >= t.page_size / 16 - 40);
                    }
                    for (r, &o) in recs.iter().enumerate() {
                        let id = span.first + r as u64;
                        assert_eq!(get32(&p, o), id as u32 ^ 0x8000_0000);
                        let row = t.row(id);
                        assert_eq!(get32(&p, o + 17), row.k ^ 0x8000_0000);
                        assert!((1..=t.rows as u32).contains(&row.k));
                        let c = &p[o + 21..o + 21 + 120];
                        let pad = &p[o + 141..o + 201];
                        for (field, text) in [(c, 119usize), (pad, 59)] {
                            for (j, &b) in field.iter().enumerate() {
                                if j == text {
                                    assert_eq!(b, b' ');
                                } else if j % 12 == 11 {
                                    assert_eq!(b, b'-');
                                } else {
                                    assert!(b.is_ascii_digit());
                                }
                            }
                        }
                        let trx = &p[o + 4..o + 10];
                        let roll = &p[o + 10..o + 17];
                        assert_eq!(roll[0] & 0x80, 0x80, "insert flag");
                        if t.sys_columns == SysColumns::PurgeReset {
                            assert_eq!(trx, &[0; 6]);
                            assert_eq!(roll, &[0x80, 0, 0, 0, 0, 0, 0]);
                        } else {
                            assert_ne!(trx, &[0; 6]);
                        }
                        if charset == Charset::MultiByte {
                            assert_eq!(p[o - 6], 120);
                            assert_eq!(p[o - 7], 60);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn roll_pointers_follow_the_undo_log() {
        let t = SysbenchTable::new(Flavor::MySql57, 1_000_000, 3);
        let per = t.rows_per_statement();
        // 512 KiB / (6-digit k row of 194 bytes + comma).
        assert_eq!(per, ((512 * 1024 - 1 - 37) / 195) as u64);
        let mut p = vec![0u8; t.page_size];
        t.fill_clustered_leaf(100, &mut p);
        let recs = walk(&p, t.page_size);
        let span = t.clustered_leaf_span(100);
        let mut last: Option<(u64, u64, u64)> = None;
        for (r, &o) in recs.iter().enumerate() {
            let id = span.first + r as u64;
            let trx = u64::from_be_bytes([0, 0, p[o + 4], p[o + 5], p[o + 6], p[o + 7], p[o + 8], p[o + 9]]);
            assert_eq!(trx, t.first_trx_id + (id - 1) / per * t.trx_id_step);
            let roll = u64::from_be_bytes([
                0,
                p[o + 10],
                p[o + 11],
                p[o + 12],
                p[o + 13],
                p[o + 14],
                p[o + 15],
                p[o + 16],
            ]);
            let page_no = (roll >> 16) & 0xFFFF_FFFF;
            let offset = roll & 0xFFFF;
            assert!(
                offset as usize >= TRX_UNDO_PAGE_FIRST_REC
                    && (offset as usize) < t.page_size - TRX_UNDO_PAGE_TAIL + 1
            );
            if let Some((ltrx, lpage, loff)) = last {
                if ltrx == trx {
                    // Same statement: the next record, on the same or the next undo page.
                    assert!(
                        (lpage == page_no && offset > loff)
                            || (page_no == lpage + 1 && offset as usize == TRX_UNDO_PAGE_FIRST_REC)
                    );
                }
            }
            last = Some((trx, page_no, offset));
        }
    }

    #[test]
    fn nonleaf_structure() {
        let t = SysbenchTable::new(Flavor::MariaDb1011, 10_000_000, 9);
        let mut p = vec![0u8; t.page_size];
        let pages = t.clustered_level1_pages();
        assert!(pages > 2);
        for j in [0, 1, pages - 1] {
            t.fill_clustered_nonleaf(j, &mut p);
            fil_ok(&t, &p, t.clustered_level1_page_no(j));
            let recs = walk(&p, t.page_size);
            let span = t.clustered_level1_span(j);
            assert_eq!(recs.len(), span.n);
            assert_eq!(get16(&p, PAGE_HEADER + PAGE_LEVEL), 1);
            for (r, &o) in recs.iter().enumerate() {
                assert_eq!(get16(&p, o - 4) & 7, REC_STATUS_NODE_PTR);
                let leaf = span.first + r as u64;
                assert_eq!(get32(&p, o) ^ 0x8000_0000, t.clustered_leaf_span(leaf).first as u32);
                assert_eq!(get32(&p, o + 4), t.clustered_leaf_page_no(leaf));
                let min_rec = p[o - 5] & REC_INFO_MIN_REC_FLAG != 0;
                assert_eq!(min_rec, j == 0 && r == 0);
            }
        }
        assert_eq!(t.clustered_level1_span(1).n, 1203);
    }

    #[test]
    fn secondary_leaf_structure() {
        for flavor in [Flavor::MySql57, Flavor::MariaDb1011] {
            for k_dist in [KDistribution::Special { iter: 12, pct: 1, res: 75 }, KDistribution::Uniform] {
                let mut t = SysbenchTable::new(flavor, 1_000_000, 11);
                t.k_dist = k_dist;
                let mut p = vec![0u8; t.page_size];
                let leaves = t.secondary_leaves();
                assert_eq!(leaves, 1_000_000u64.div_ceil(1203));
                for i in [0, 1, leaves / 4, leaves / 2, leaves - 1] {
                    t.fill_secondary_leaf(i, &mut p);
                    fil_ok(&t, &p, t.secondary_leaf_page_no(i));
                    let recs = walk(&p, t.page_size);
                    let expect_n = (t.rows - i * 1203).min(1203) as usize;
                    assert_eq!(recs.len(), expect_n);
                    assert_ne!(get32(&p, PAGE_HEADER + PAGE_MAX_TRX_ID + 4), 0);
                    // Sorted by (k, id), strictly.
                    let mut last = (0u32, 0u32);
                    for &o in &recs {
                        let key = (get32(&p, o) ^ 0x8000_0000, get32(&p, o + 4) ^ 0x8000_0000);
                        assert!(key > last, "{key:?} after {last:?}");
                        assert!((1..=t.rows as u32).contains(&key.0) && (1..=t.rows as u32).contains(&key.1));
                        last = key;
                    }
                    let hint = get16(&p, PAGE_HEADER + PAGE_LAST_INSERT);
                    assert_eq!(hint != 0, t.bulk_insert_hints);
                }
            }
        }
    }

    /// The k sequence of the secondary index follows the k distribution: the sorted keys at
    /// the middle position sit in sysbench's central band, and the k drawn for rows follow
    /// the CDF the secondary pages are built from.
    #[test]
    fn k_distribution_is_consistent() {
        let t = SysbenchTable::new(Flavor::MySql57, 1_000_000, 5);
        let n = 20_000u64;
        let mut below_mid = 0;
        let mut in_band = 0;
        for id in 1..=n {
            let k = u64::from(t.row(id).k);
            if k <= 500_000 {
                below_mid += 1;
            }
            if (497_500..=505_000).contains(&k) {
                in_band += 1;
            }
        }
        let f = below_mid as f64 / n as f64;
        assert!((f - t.k_cdf(500_000)).abs() < 0.015, "{f} vs {}", t.k_cdf(500_000));
        let band = in_band as f64 / n as f64;
        let band_cdf = t.k_cdf(505_000) - t.k_cdf(497_499);
        assert!((band - band_cdf).abs() < 0.015 && band > 0.74, "{band} vs {band_cdf}");
        // Middle leaf of the k index: one key repeated by runs of about 100.
        let mut p = vec![0u8; t.page_size];
        t.fill_secondary_leaf(t.secondary_leaves() / 2, &mut p);
        let recs = walk(&p, t.page_size);
        let distinct = recs.windows(2).filter(|w| get32(&p, w[0]) != get32(&p, w[1])).count() + 1;
        assert!((5..=25).contains(&distinct), "{distinct} distinct keys on a central page");
    }

    #[test]
    fn every_page_size() {
        for ps in [4096usize, 8192, 16384, 32768, 65536] {
            for flavor in [Flavor::MySql57, Flavor::MariaDb1011] {
                let mut t = SysbenchTable::new(flavor, 3_000_000, 13);
                t.page_size = ps;
                let mut p = vec![0u8; ps];
                for i in [0, 1, t.clustered_leaves() / 3, t.clustered_leaves() - 1] {
                    t.fill_clustered_leaf(i, &mut p);
                    fil_ok(&t, &p, t.clustered_leaf_page_no(i));
                    assert_eq!(walk(&p, ps).len(), t.clustered_leaf_span(i).n);
                }
                for j in [0, t.clustered_level1_pages() - 1] {
                    t.fill_clustered_nonleaf(j, &mut p);
                    fil_ok(&t, &p, t.clustered_level1_page_no(j));
                    assert_eq!(walk(&p, ps).len(), t.clustered_level1_span(j).n);
                }
                for i in [0, t.secondary_leaves() / 2, t.secondary_leaves() - 1] {
                    t.fill_secondary_leaf(i, &mut p);
                    fil_ok(&t, &p, t.secondary_leaf_page_no(i));
                    let n = walk(&p, ps).len() as u64;
                    let cap = t.secondary_leaf_capacity() as u64;
                    assert_eq!(n, (t.rows - i * cap).min(cap));
                }
                // Full pages leave less free space than one more record needs.
                let full = t.secondary_leaf_capacity();
                assert!(free_space_of_empty(ps) < (full + 1) * SECONDARY_REC + dir_reserved(full + 1));
            }
        }
    }

    #[test]
    fn pages_are_deterministic() {
        let t = SysbenchTable::new(Flavor::MySql57, 2_000_000, 42);
        let mut a = vec![0u8; t.page_size];
        let mut b = vec![1u8; t.page_size];
        t.fill_clustered_leaf(777, &mut a);
        t.fill_clustered_leaf(777, &mut b);
        assert_eq!(a, b);
        t.fill_secondary_leaf(333, &mut a);
        t.fill_secondary_leaf(333, &mut b);
        assert_eq!(a, b);
        let mut other = t.clone();
        other.seed = 43;
        other.fill_clustered_leaf(777, &mut b);
        t.fill_clustered_leaf(777, &mut a);
        assert_ne!(a, b);
    }

    struct Ratios {
        raw: f64,
        mean_raw: f64,
        stored9: f64,
        stored12: f64,
        min_c: u64,
        max_c: u64,
    }

    /// lz4 on records of `pages_per_record` consecutive pages: the raw ratio (lsize over
    /// the unconstrained compressed length) and the stored ratio (lsize over psize) as
    /// `zio_stored_block` decides at ashift 9 and 12.
    fn ratios(
        t: &SysbenchTable,
        records: u64,
        pages_per_record: u64,
        fill: &dyn Fn(u64, &mut [u8]),
        first: u64,
    ) -> Ratios {
        let ps = t.page_size;
        let lsize = ps * pages_per_record as usize;
        let mut buf = vec![0u8; lsize];
        let (mut l, mut c, mut s9, mut s12, mut mean) = (0u64, 0u64, 0u64, 0u64, 0.0);
        let (mut min_c, mut max_c) = (u64::MAX, 0u64);
        for r in 0..records {
            for q in 0..pages_per_record {
                let pg = first + r * pages_per_record + q;
                fill(pg, &mut buf[q as usize * ps..(q as usize + 1) * ps]);
            }
            let c_len = lz4_compressed_len(&buf, 2 * lsize) as u64;
            l += lsize as u64;
            c += c_len;
            min_c = min_c.min(c_len);
            max_c = max_c.max(c_len);
            mean += lsize as f64 / c_len as f64;
            s9 += u64::from(zio_stored_block(c_len, lsize as u32, 9, false).psize());
            s12 += u64::from(zio_stored_block(c_len, lsize as u32, 12, false).psize());
        }
        Ratios {
            raw: l as f64 / c as f64,
            mean_raw: mean / records as f64,
            stored9: l as f64 / s9 as f64,
            stored12: l as f64 / s12 as f64,
            min_c,
            max_c,
        }
    }

    /// Prints how lz4 and ZFS's write rule store a sysbench table's pages; asserts only
    /// physical invariants (nothing here is fitted to a measurement).
    #[test]
    fn lz4_on_sysbench_pages() {
        let rows = 10_000_000;
        println!("\nsysbench table of {rows} rows, 16K pages; lz4 raw = lsize sum / c_len sum (mean of per-record ratios), stored = lsize sum / psize sum");
        println!(
            "{:<42} {:<7} {:>5} {:>14} {:>13} {:>9} {:>9}",
            "table", "records", "count", "raw (mean)", "c_len min-max", "ashift 9", "ashift 12"
        );
        for (flavor, charset) in [
            (Flavor::MySql57, Charset::Latin1),
            (Flavor::MariaDb1011, Charset::Latin1),
            (Flavor::MariaDb1011, Charset::MultiByte),
        ] {
            let mut t = SysbenchTable::new(flavor, rows, 2026);
            t.charset = charset;
            let label = format!("{flavor:?} {charset:?} {:?}", t.sys_columns);
            let leaf = |i: u64, p: &mut [u8]| t.fill_clustered_leaf(i, p);
            let sec = |i: u64, p: &mut [u8]| t.fill_secondary_leaf(i, p);
            let mid_leaf = t.clustered_leaves() / 2;
            let mid_sec = t.secondary_leaves() / 2;
            for (index, fill, first, raw_range) in [
                ("clustered", &leaf as &dyn Fn(u64, &mut [u8]), mid_leaf, (1.0, 3.0)),
                ("k (mid)", &sec as &dyn Fn(u64, &mut [u8]), mid_sec, (1.0, 16.0)),
                ("k (tail)", &sec as &dyn Fn(u64, &mut [u8]), 64, (1.0, 16.0)),
            ] {
                for (name, per, count) in [("16K", 1u64, 64u64), ("32K", 2, 32), ("128K", 8, 16)] {
                    let r = ratios(&t, count, per, fill, first);
                    println!(
                        "{:<42} {:<7} {:>5} {:>6.3} ({:.3}) {:>6}-{:<6} {:>9.3} {:>9.3}",
                        format!("{label} {index}"),
                        name,
                        count,
                        r.raw,
                        r.mean_raw,
                        r.min_c,
                        r.max_c,
                        r.stored9,
                        r.stored12
                    );
                    assert!(r.raw > raw_range.0 && r.raw < raw_range.1, "{label} {index} {name}: {}", r.raw);
                    assert!(r.stored12 <= r.raw + 1e-9 && r.stored9 <= r.raw + 1e-9);
                    assert!(r.stored12 <= r.stored9 + 1e-9);
                    assert!(r.stored9 >= 1.0 && r.stored12 >= 1.0);
                }
            }
        }
    }
}
