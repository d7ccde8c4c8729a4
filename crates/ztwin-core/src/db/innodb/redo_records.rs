//! The redo log records sysbench's writes produce in MySQL 5.7 InnoDB: for each write
//! (a [`Lookup`](crate::workload::statement::Lookup)'s [`Op`]) the mini-transactions it
//! commits, the bytes each hands to the log (`RedoLog::append`) and the pages each
//! dirties, derived from the record formats of the source for the sbtest table (id INT
//! primary key, k INT with index k_1, c CHAR(120), pad CHAR(60), all NOT NULL, latin1,
//! COMPACT or DYNAMIC).
//!
//! Mechanism.
//! - Framing (`mtr_t::Command::prepare_write`). An mtr's records reach the log buffer as
//!   one run. A lone record is marked by setting MLOG_SINGLE_REC_FLAG (0x80) in its type
//!   byte, which costs nothing; two or more are followed by one MLOG_MULTI_REC_END byte.
//!   An mtr with no record writes nothing. The first mtr that modifies a file-per-table
//!   tablespace after a checkpoint also appends an MLOG_FILE_NAME record for it
//!   (`fil_names_write_if_was_clean`), and then always the end byte; the system
//!   tablespace (undo logs, rollback segments, TRX_SYS, the change buffer) never needs it.
//! - Every record starts with its type byte, the space id and the page number, the last
//!   two in `mach_write_compressed` form: 1 byte below 2^7, 2 below 2^14, 3 below 2^21,
//!   4 below 2^28, else 5 (`mlog_write_initial_log_record_fast`). Writes of 1, 2 or 4
//!   bytes (`mlog_write_ulint`) add the 2-byte page offset and the value compressed; an
//!   8-byte write (`mlog_write_ull`) the offset and the value as its high half compressed
//!   plus 4 bytes (`mach_u64_write_compressed`); a string (`mlog_log_string`) the offset,
//!   a 2-byte length and the bytes. A record about an index record of a COMPACT table
//!   describes the index after the header (`mlog_open_and_write_index`): the field count
//!   and the unique field count (2 bytes each), then 2 bytes per field: 16 bytes for the
//!   clustered index (id, DB_TRX_ID, DB_ROLL_PTR, k, c, pad), 8 for k_1 (k, id).
//! - A modification of a clustered record first writes its undo record in an mtr of its
//!   own (`trx_undo_report_row_operation`), committed before the clustered page is
//!   changed. The first undo record of each kind (insert, or update for updates and
//!   delete-marks) of a transaction is preceded by the assignment of an undo log
//!   (`trx_undo_assign_undo`) in another mtr: from the rollback segment's cache
//!   (`trx_undo_reuse_cached`), an update undo log gets a new log header appended on its
//!   header page (MLOG_UNDO_HDR_CREATE, `trx_undo_header_create`), an insert undo log
//!   has its header rewritten at the first free offset (MLOG_UNDO_HDR_REUSE,
//!   `trx_undo_insert_header_reuse`); both then reserve room for the XA identifier with
//!   three MLOG_2BYTES writes (`trx_undo_header_add_space_for_xid`). The undo record goes
//!   to the page as MLOG_UNDO_INSERT: 2-byte length and the record less its two 2-byte
//!   links (`trx_undof_page_add_undo_rec_log`). Its body (`trx_undo_page_report_modify`,
//!   `trx_undo_page_report_insert`): type byte, undo number and table id
//!   (`mach_u64_write_much_compressed`), and for a modification the info bits, the old
//!   DB_TRX_ID and DB_ROLL_PTR (`mach_u64_write_compressed`), the primary key (length
//!   compressed + bytes), the old values of the updated fields (count, then field number,
//!   length and bytes each) and, for a delete-mark or an update that changes an indexed
//!   column, a 2-byte length and every column of any index (id and k).
//! - `UPDATE SET c` (`row_upd_clust_rec` → `btr_cur_optimistic_update` →
//!   `btr_cur_update_in_place`): MLOG_COMP_REC_UPDATE_IN_PLACE
//!   (`btr_cur_update_in_place_log`): index description, flags byte, the position of
//!   DB_TRX_ID (compressed), the new DB_ROLL_PTR (7 bytes), the transaction id (u64
//!   compressed), the record's offset (2), then the update vector (`row_upd_index_write_log`):
//!   info bits, field count, and per field its number, length and new bytes.
//! - `UPDATE SET k = k + 1`: the same in place on the clustered record (k is in no
//!   clustered key), then for k_1 (`row_upd_sec_index_entry`) one mtr delete-marks
//!   (k, id) and a second inserts (k + 1, id) (`row_ins_sec_index_entry`). Both first
//!   raise the leaf's PAGE_MAX_TRX_ID when the transaction's id exceeds it
//!   (`lock_sec_rec_modify_check_and_lock`, `lock_rec_insert_check_and_lock` →
//!   `page_update_max_trx_id`: MLOG_8BYTES), so the insert, on the same leaf, finds it
//!   done. The delete-mark is MLOG_REC_SEC_DELETE_MARK, value byte and offset
//!   (`btr_cur_del_mark_set_sec_rec_log` uses that type for both formats:
//!   MLOG_COMP_REC_SEC_DELETE_MARK is only parsed by recovery, never written).
//!   The insert is MLOG_COMP_REC_INSERT (`page_cur_insert_rec_write_log`): index
//!   description, the offset of the record it follows, then only the end of the new
//!   record that differs from that predecessor: comparing from the start of the record
//!   headers, any difference within the header skips to the data, and the common prefix
//!   of the data is not logged; the length `2 * (size - prefix)` is compressed, plus 1
//!   with the info bits, the header size and the prefix length (compressed) when the
//!   predecessor's info bits or sizes differ (a delete-marked or infimum predecessor).
//! - `DELETE`: undo record TRX_UNDO_DEL_MARK_REC (no update vector), then
//!   MLOG_COMP_REC_CLUST_DELETE_MARK (`btr_cur_del_mark_set_clust_rec_log`: index
//!   description, flags, value, DB_TRX_ID position, roll pointer, transaction id, offset),
//!   then k_1's delete-mark as above.
//! - `INSERT`: undo record TRX_UNDO_INSERT_REC, then MLOG_COMP_REC_INSERT of the 206-byte
//!   clustered record, then k_1's insert. When a delete-marked record with the same id is
//!   in the page (oltp_read_write's DELETE then INSERT of the same id, in one transaction,
//!   before purge can remove it), the insert becomes an update of that record
//!   (`row_ins_must_modify_rec` → `row_ins_clust_index_entry_by_modify`): undo record
//!   TRX_UNDO_UPD_DEL_REC with the old k, c and pad, and an update in place of the three.
//! - Change buffering (`btr_cur_search_to_nth_level` → `ibuf_insert` → `ibuf_insert_low`)
//!   when k_1's leaf is not in the buffer pool: a first mtr sets the leaf's BUFFERED bit in
//!   the table's IBUF_BITMAP page (MLOG_1BYTE) unless set; the main mtr inserts a record
//!   into the change buffer tree in the system tablespace, whose index is REDUNDANT
//!   (MLOG_REC_INSERT, no index description): space id 4, marker 1, page number 4, the
//!   metadata (counter 2, operation 1, flags 1, 6 bytes of type per field: 16) and k, id:
//!   33 bytes of data and 12 of header (6 + a 1-byte end offset per field), and raises the
//!   change buffer leaf's PAGE_MAX_TRX_ID for an insert or delete-mark. An insert is only
//!   buffered if the leaf's free bits promise room (`ibuf_index_page_calc_free_from_bits`);
//!   `CREATE INDEX` with innodb_fill_factor = 100 leaves every k_1 leaf's bits at 0
//!   (`ibuf_set_bitmap_for_bulk_load`), so after sysbench's prepare only delete-marks are
//!   buffered until the leaf has been split.
//! - `COMMIT` (`trx_commit` → `trx_write_serialisation_history`), one mtr, only if the
//!   transaction wrote undo (a read-only transaction writes nothing): each undo log's
//!   segment state (`trx_undo_set_state_at_finish`: MLOG_2BYTES, CACHED when the log
//!   fits one page below 3/4 full); for the update undo log
//!   (`trx_purge_add_update_undo_to_history`) the log is put first in the rollback
//!   segment's history list (`flst_add_first` → `flst_insert_before`: eight 4- and 2-byte
//!   writes of page numbers and offsets on the log's page, the segment header and the
//!   previous first log's page, and the list length), the transaction number (MLOG_8BYTES),
//!   and TRX_UNDO_DEL_MARKS cleared when no undo record needed purge to visit indexes;
//!   a segment not cached also frees its slot and grows the history size. With the binary
//!   log, the commit also records the binary log offset in the TRX_SYS page
//!   (`trx_sys_update_mysql_binlog_offset`: MLOG_4BYTES), and XA's prepare comes first
//!   in its own mtr (`trx_prepare_low` → `trx_undo_set_state_at_prepare`): per undo log
//!   the PREPARED state, the XID flag, format, gtrid and bqual lengths and the 128-byte
//!   XID (MLOG_WRITE_STRING).
//!
//! Sources: mysql-server 5.7.29 `storage/innobase/`: `include/mtr0types.h` (record
//! types), `mtr/mtr0mtr.cc` (`mtr_t::Command::prepare_write`), `include/mtr0log.ic`
//! (`mlog_write_initial_log_record_fast`, `mlog_catenate_ull_compressed`),
//! `mtr/mtr0log.cc` (`mlog_write_ulint`, `mlog_write_ull`, `mlog_log_string`,
//! `mlog_open_and_write_index`), `include/mach0data.ic` (`mach_write_compressed`,
//! `mach_u64_write_compressed`, `mach_u64_write_much_compressed`), `btr/btr0cur.cc`
//! (`btr_cur_update_in_place(_log)`, `btr_cur_optimistic_update`,
//! `btr_cur_optimistic_insert`, `btr_cur_del_mark_set_clust_rec(_log)`,
//! `btr_cur_del_mark_set_sec_rec(_log)`), `row/row0upd.cc` (`row_upd_index_write_log`,
//! `row_upd_write_sys_vals_to_log`, `row_upd_clust_step`, `row_upd_clust_rec`,
//! `row_upd_sec_index_entry`, `row_upd_build_difference_binary`, `row_upd_step`'s
//! cmpl_info), `row/row0ins.cc` (`row_ins_clust_index_entry_low`,
//! `row_ins_must_modify_rec`, `row_ins_clust_index_entry_by_modify`),
//! `page/page0cur.cc` (`page_cur_insert_rec_write_log`), `include/page0page.ic` and
//! `page/page0page.cc` (`page_update_max_trx_id`, `page_set_max_trx_id`),
//! `lock/lock0lock.cc` (`lock_sec_rec_modify_check_and_lock`,
//! `lock_rec_insert_check_and_lock`), `trx/trx0rec.cc` (`trx_undo_report_row_operation`,
//! `trx_undo_page_report_modify`, `trx_undo_page_report_insert`,
//! `trx_undof_page_add_undo_rec_log`), `trx/trx0undo.cc` (`trx_undo_assign_undo`,
//! `trx_undo_reuse_cached`, `trx_undo_header_create(_log)`,
//! `trx_undo_insert_header_reuse(_log)`, `trx_undo_header_add_space_for_xid`,
//! `trx_undo_set_state_at_finish`, `trx_undo_set_state_at_prepare`, `trx_undo_write_xid`),
//! `include/trx0undo.h` (header offsets and sizes, TRX_UNDO_PAGE_REUSE_LIMIT, states),
//! `include/trx0undo.ic` (`trx_undo_build_roll_ptr`), `trx/trx0purge.cc`
//! (`trx_purge_add_update_undo_to_history`), `fut/fut0lst.cc` (`flst_add_first`,
//! `flst_insert_before`, `flst_add_to_empty`), `include/fut0lst.ic` (`flst_write_addr`),
//! `trx/trx0trx.cc` (`trx_commit`, `trx_commit_low`, `trx_write_serialisation_history`,
//! `trx_prepare_low`), `trx/trx0sys.cc` (`trx_sys_update_mysql_binlog_offset`),
//! `ibuf/ibuf0ibuf.cc` (`ibuf_insert_low`, `ibuf_entry_build`, `ibuf_bitmap_page_set_bits`,
//! `ibuf_bitmap_page_no_calc`, `ibuf_set_bitmap_for_bulk_load`, the change buffer index
//! created REDUNDANT), `fil/fil0fil.cc` (`fil_op_write_log`, `fil_names_dirty_and_write`),
//! `handler/ha_innodb.cc` (the binary log position handed to the commit); `sql/xa.h`
//! (MySQL's XID: format 1, gtrid length 8 + sizeof(server_id) + 8, bqual 0).
//! sysbench 1.0.20 `src/lua/oltp_common.lua` (schema, statements, the delete/insert pair
//! on one id) and `oltp_insert.lua`.
//!
//! No published Innodb_os_log_written per sysbench transaction was found (not in the
//! brief's experiments nor the repository's docs), so nothing here is compared with a
//! measurement.
//!
//! Simplifications:
//! 1. Only the optimistic paths: no page split, merge or reorganize, no undo page added
//!    (`trx_undo_add_page`): every record fits where it goes. A clustered AUTO_INCREMENT
//!    append splits the last leaf every 73rd insert with 16 KiB pages; k_1's leaves are
//!    full after the bulk index build (innodb_fill_factor = 100), so the first insert
//!    into each usually splits it. Those pessimistic mtrs are not counted.
//! 2. Undo logs come from the rollback segment's cache (`trx_undo_reuse_cached`): a new
//!    segment (`trx_undo_create` → `fseg_create`), needed when an update undo page has
//!    passed 3/4 full and left the cache, is not counted, nor is its freeing by purge.
//!    The insert undo log of a one-row transaction is always cached at commit.
//! 3. Background redo is not the statement's and is not counted: purge (removing
//!    delete-marked records, truncating the history), change-buffer merges, page
//!    flushing, checkpoints (`fil_names_clear`), free-bit changes of a k_1 leaf
//!    (`ibuf_update_free_bits_if_full`: a separate MLOG_1BYTE mtr when an insert crosses
//!    a 1/32-page step of free space).
//! 4. Update vectors hold the columns whose value changes: c for the non-index update,
//!    k for the index update, k, c and pad for an insert over a delete-marked row (a new
//!    k equal to the old one, chance 1 in table_size, is not distinguished).
//! 5. PAGE_MAX_TRX_ID of a k_1 or change-buffer leaf is below the transaction's id on
//!    the op's first change to it (no newer transaction touched it in between) and
//!    equal for the op's later changes to the same leaf.
//! 6. An inserted record's common prefix with its predecessor ends within the key (keys
//!    are unique); a change-buffer predecessor has the same shape (6 fields, 1-byte
//!    offsets). The predecessors are inputs ([`Prev`], [`IbufPrev`]).
//! 7. With the binary log, its file name and magic number are written once per binary
//!    log file, not per commit; only the low 32 bits of the offset are written below
//!    4 GiB.
//! 8. The page numbers and offsets of undo pages, the rollback segment header and the
//!    history list are inputs ([`UndoPlace`]); [`Env::default`] places them where their
//!    compressed sizes are those of a small system tablespace (2-byte page numbers).
//! 9. MySQL 5.7 only. MariaDB changed these records (10.3 purge resets DB_TRX_ID and the
//!    roll pointer, 10.5 and 10.8 changed the log format); multi-byte character sets
//!    (variable-length CHAR) are not modelled.

use crate::db::innodb::btree::{TableLayout, MAX_DEPTH};
use crate::workload::statement::{Index, Op};

/// FIL_NULL (`fil0fil.h`): a null page number; 5 bytes compressed.
const FIL_NULL: u32 = 0xFFFF_FFFF;
/// DATA_ROLL_PTR_LEN (`data0type.h`).
const ROLL_PTR_LEN: u64 = 7;
/// REC_N_NEW_EXTRA_BYTES (`rem0rec.h`): a COMPACT record's header (no null bitmap, no
/// variable lengths: every sbtest column is NOT NULL and fixed-length in latin1).
const COMPACT_EXTRA: u64 = 5;
/// Data bytes of the clustered leaf record: id 4, DB_TRX_ID 6, DB_ROLL_PTR 7, k 4,
/// c 120, pad 60 (the 201 of `btree::CLUSTERED_REC`).
const CLUST_DATA: u64 = 4 + 6 + 7 + 4 + 120 + 60;
/// Data bytes of a k_1 leaf record: k 4, id 4.
const SEC_DATA: u64 = 4 + 4;
/// Fields of the clustered index (id, DB_TRX_ID, DB_ROLL_PTR, k, c, pad) and of k_1.
const CLUST_FIELDS: u64 = 6;
const SEC_FIELDS: u64 = 2;
/// Field positions in the clustered index (`dict_col_get_clust_pos`).
const POS_ID: u32 = 0;
const POS_TRX_ID: u32 = 1;
const POS_K: u32 = 3;
const POS_C: u32 = 4;
const POS_PAD: u32 = 5;
/// Column lengths: INT 4, CHAR(120) and CHAR(60) latin1.
const INT_LEN: u32 = 4;
const C_LEN: u32 = 120;
const PAD_LEN: u32 = 60;
/// The old values of id and k, which an undo record of a delete-mark or index update
/// stores as the columns of some index (`dict_col_t::ord_part`).
const ORD_COLS: [(u32, u32); 2] = [(POS_ID, INT_LEN), (POS_K, INT_LEN)];
/// TRX_UNDO_SEG_HDR (38 + 18) + TRX_UNDO_SEG_HDR_SIZE (4 + 10 + 16): where a reused
/// insert undo log's header goes.
const UNDO_FIRST_LOG: u32 = 56 + 30;
/// TRX_UNDO_LOG_XA_HDR_SIZE: TRX_UNDO_LOG_OLD_HDR_SIZE (34 + 12) + 4 + 4 + 4 +
/// XIDDATASIZE (128).
const UNDO_XA_HDR: u32 = 46 + 12 + 128;
/// TRX_UNDO_HISTORY_NODE: the history list node's offset in a log header.
const UNDO_HISTORY_NODE: u32 = 34;
/// Undo segment states (`trx0undo.h`).
const TRX_UNDO_CACHED: u32 = 2;
const TRX_UNDO_TO_PURGE: u32 = 4;
const TRX_UNDO_PREPARED: u32 = 5;
/// XIDDATASIZE (`include/mysql/plugin.h`).
const XID_DATA: u64 = 128;
/// MySQL's XID (`sql/xa.h`, `XID::set(my_xid)`): format 1, gtrid "MySQLXid" 8 +
/// server_id (ulong, 8 on LP64) + query id 8, no bqual.
const XID_FORMAT: u32 = 1;
const XID_GTRID_LEN: u32 = 8 + 8 + 8;
/// FSP_TRX_SYS_PAGE_NO: the TRX_SYS page of the system tablespace.
const TRX_SYS_PAGE: u32 = 5;
/// FSP_IBUF_BITMAP_OFFSET.
const IBUF_BITMAP_OFFSET: u32 = 1;
/// The change buffer's record for a k_1 entry: space 4, marker 1, page 4, metadata
/// (IBUF_REC_INFO_SIZE 4 + DATA_NEW_ORDER_NULL_TYPE_BUF_SIZE 6 per field), k 4, id 4;
/// REDUNDANT header REC_N_OLD_EXTRA_BYTES 6 + one end-offset byte per field (the data is
/// under REC_1BYTE_OFFS_LIMIT = 127 bytes).
const IBUF_FIELDS: u64 = 4 + SEC_FIELDS;
const IBUF_DATA: u64 = 4 + 1 + 4 + (4 + 6 * SEC_FIELDS) + SEC_DATA;
const IBUF_EXTRA: u64 = 6 + IBUF_FIELDS;
/// A REDUNDANT page's infimum: header 6 + 1 offset byte, data "infimum\0".
const REDUNDANT_INFIMUM_EXTRA: u64 = 6 + 1;
/// The data of a COMPACT infimum record.
const INFIMUM: &[u8; 8] = b"infimum\0";

/// Bytes of `n` in `mach_write_compressed` form (`mach_get_compressed_size`).
pub fn compressed_size(n: u32) -> u64 {
    match n {
        0..=0x7F => 1,
        0x80..=0x3FFF => 2,
        0x4000..=0x1F_FFFF => 3,
        0x20_0000..=0x0FFF_FFFF => 4,
        _ => 5,
    }
}

/// Bytes of `mach_u64_write_compressed`: the high half compressed, the low half 4 bytes.
pub fn u64_compressed_size(n: u64) -> u64 {
    compressed_size((n >> 32) as u32) + 4
}

/// Bytes of `mach_u64_write_much_compressed`: compressed below 2^32, else a 0xFF marker
/// and both halves compressed.
pub fn u64_much_compressed_size(n: u64) -> u64 {
    if n >> 32 == 0 {
        compressed_size(n as u32)
    } else {
        1 + compressed_size((n >> 32) as u32) + compressed_size(n as u32)
    }
}

/// A record's type byte, space id and page number (`mlog_write_initial_log_record_fast`).
pub fn record_header(space: u32, page: u32) -> u64 {
    1 + compressed_size(space) + compressed_size(page)
}

/// After the header, `mlog_write_ulint`: page offset and the value compressed.
fn ulint_body(val: u32) -> u64 {
    2 + compressed_size(val)
}

/// After the header, `mlog_write_ull`: page offset and the value u64-compressed.
fn ull_body(val: u64) -> u64 {
    2 + u64_compressed_size(val)
}

/// After the header, `mlog_log_string`: page offset, length, bytes.
fn string_body(len: u64) -> u64 {
    2 + 2 + len
}

/// After the header, `mlog_open_and_write_index` on a COMPACT page: field count, unique
/// field count, 2 bytes per field.
fn index_description(fields: u64) -> u64 {
    2 + 2 + 2 * fields
}

/// A signed INT as InnoDB stores it: big-endian with the sign bit flipped
/// (`row_mysql_store_col_in_innobase_format`), so keys compare as bytes.
fn int_bytes(v: i64) -> [u8; 4] {
    ((v as i32 as u32) ^ 0x8000_0000).to_be_bytes()
}

/// Length of the common prefix of two byte strings.
fn common_prefix(a: &[u8], b: &[u8]) -> u64 {
    a.iter().zip(b).take_while(|(x, y)| x == y).count() as u64
}

/// What a modified page is, for the caller's flush list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PageKind {
    /// A leaf of the table's clustered index.
    #[default]
    ClusteredLeaf,
    /// A leaf of k_1.
    SecondaryLeaf,
    /// An undo log page (its header page: the logs here fit one page).
    Undo,
    /// The rollback segment's header page.
    RsegHeader,
    /// The page of the log that was first in the rollback segment's history list.
    HistoryPrev,
    /// The TRX_SYS page (page 5 of the system tablespace).
    TrxSys,
    /// A leaf of the change buffer tree (system tablespace).
    IbufLeaf,
    /// The table's IBUF_BITMAP page covering a k_1 leaf.
    IbufBitmap,
}

/// A page a record modifies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PageRef {
    /// What it is.
    pub kind: PageKind,
    /// Tablespace id (0: the system tablespace).
    pub space: u32,
    /// Page number.
    pub page: u32,
}

/// Pages one mtr can dirty here (a commit: two undo pages, the rollback segment header,
/// the previous history page, TRX_SYS).
pub const MAX_MTR_PAGES: usize = 6;

/// One mini-transaction's contribution to the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mtr {
    /// Bytes appended to the log buffer: records and framing (`RedoLog::append`'s
    /// argument; block headers and trailers are the log's).
    pub bytes: u64,
    /// Log records, the file name record included.
    pub records: u32,
    pages: [PageRef; MAX_MTR_PAGES],
    n_pages: usize,
}

impl Mtr {
    /// The distinct pages the mtr modified (each becomes dirty at its commit).
    pub fn pages(&self) -> &[PageRef] {
        &self.pages[..self.n_pages]
    }

    /// Adds a record of `body` bytes after its header on `page`.
    fn rec(&mut self, page: PageRef, body: u64) {
        self.bytes += record_header(page.space, page.page) + body;
        self.records += 1;
        let seen = self.pages().iter().any(|p| p.space == page.space && p.page == page.page);
        if !seen {
            assert!(self.n_pages < MAX_MTR_PAGES, "an mtr here touches at most {MAX_MTR_PAGES} pages");
            self.pages[self.n_pages] = page;
            self.n_pages += 1;
        }
    }

    /// A record of `bytes` (its header included) on `page`, or on no page (a file-level
    /// record), for another server's encoder (MariaDB's: `mariadb_redo::records`). Pages
    /// past [`MAX_MTR_PAGES`] are not kept (no caller here reaches it).
    pub(crate) fn add_record(&mut self, page: Option<PageRef>, bytes: u64) {
        self.bytes += bytes;
        self.records += 1;
        if let Some(page) = page {
            let seen = self.pages().iter().any(|p| p.space == page.space && p.page == page.page);
            if !seen && self.n_pages < MAX_MTR_PAGES {
                self.pages[self.n_pages] = page;
                self.n_pages += 1;
            }
        }
    }

    /// Framing bytes that are no record (MariaDB's end marker and checksum).
    pub(crate) fn add_bytes(&mut self, bytes: u64) {
        self.bytes += bytes;
    }

    /// MLOG_FILE_NAME of `space` (`fil_op_write_log`): header with page 0, 2-byte length,
    /// the path and its NUL. No page is dirtied.
    fn file_name(&mut self, space: u32, path_len: u32) {
        self.bytes += record_header(space, 0) + 2 + u64::from(path_len) + 1;
        self.records += 1;
    }

    /// Framing at commit: one MLOG_MULTI_REC_END byte after two or more records.
    fn finish(mut self) -> Mtr {
        if self.records > 1 {
            self.bytes += 1;
        }
        self
    }
}

/// Mtrs one op commits here, at most (a change-buffered index update: undo assignment,
/// undo record, clustered update, bitmap, two change-buffer inserts).
pub const MAX_MTRS: usize = 8;

/// The mtrs of one op, in commit order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MtrLog {
    mtrs: [Mtr; MAX_MTRS],
    n: usize,
}

impl MtrLog {
    /// The mtrs, in the order they commit.
    pub fn mtrs(&self) -> &[Mtr] {
        &self.mtrs[..self.n]
    }

    /// Bytes of all the mtrs.
    pub fn bytes(&self) -> u64 {
        self.mtrs().iter().map(|m| m.bytes).sum()
    }

    /// Records of all the mtrs.
    pub fn records(&self) -> u32 {
        self.mtrs().iter().map(|m| m.records).sum()
    }

    /// Distinct pages dirtied by the op (a page modified by two of its mtrs counts once).
    pub fn pages_dirtied(&self) -> usize {
        let mut seen = [(0u32, 0u32); MAX_MTRS * MAX_MTR_PAGES];
        let mut n = 0;
        for p in self.mtrs().iter().flat_map(|m| m.pages()) {
            if !seen[..n].contains(&(p.space, p.page)) {
                seen[n] = (p.space, p.page);
                n += 1;
            }
        }
        n
    }

    /// With `row.first_since_checkpoint`, MLOG_FILE_NAME of the table's tablespace in the
    /// op's first mtr that modifies one of its pages (`fil_names_write_if_was_clean`);
    /// that mtr then has two records or more, so its end byte follows.
    fn named(mut self, env: &Env, row: &RowCtx) -> MtrLog {
        if !row.first_since_checkpoint {
            return self;
        }
        let space = env.space_id;
        let n = self.n;
        if let Some(m) = self.mtrs[..n].iter_mut().find(|m| m.pages().iter().any(|p| p.space == space)) {
            if m.records == 1 {
                m.bytes += 1;
            }
            m.file_name(space, env.file_name_len);
        }
        self
    }

    /// Appends an mtr framed by its caller (MariaDB's: no MLOG_MULTI_REC_END); one
    /// without records writes nothing and is dropped, as is one past [`MAX_MTRS`] (no
    /// caller here reaches it).
    pub(crate) fn push_framed(&mut self, m: Mtr) {
        if m.records > 0 && self.n < MAX_MTRS {
            self.mtrs[self.n] = m;
            self.n += 1;
        }
    }

    /// Appends a finished mtr (one without records writes nothing and is dropped).
    fn push(&mut self, m: Mtr) {
        let m = m.finish();
        if m.records > 0 {
            assert!(self.n < MAX_MTRS, "an op here commits at most {MAX_MTRS} mtrs");
            self.mtrs[self.n] = m;
            self.n += 1;
        }
    }
}

/// A DB_ROLL_PTR (`trx_undo_build_roll_ptr`): insert flag at bit 55, rollback segment
/// id at 48, undo page number at 16, offset in the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RollPtr {
    /// Points to an insert undo record.
    pub insert: bool,
    /// Rollback segment id (5.7 with the undo logs in ibdata1: 0 and 33..=127 are
    /// redo-logged, 1..=32 are the temporary tables').
    pub rseg: u8,
    /// Undo page number.
    pub page: u32,
    /// Offset of the undo record in the page.
    pub offset: u16,
}

impl RollPtr {
    /// The 56-bit value.
    pub fn value(&self) -> u64 {
        u64::from(self.insert) << 55
            | u64::from(self.rseg) << 48
            | u64::from(self.page) << 16
            | u64::from(self.offset)
    }
}

/// Where the undo logs and the rollback segment of the transactions sit, in the system
/// tablespace (innodb_undo_tablespaces = 0, 5.7's default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UndoPlace {
    /// The transaction's rollback segment id.
    pub rseg_id: u8,
    /// Its header page.
    pub rseg_page: u32,
    /// The update undo log's header page (records go there too: one page).
    pub update_page: u32,
    /// The offset of this transaction's log header on it: the page's free offset when
    /// the log was created (TRX_UNDO_PAGE_FREE), 86 on a fresh page.
    pub update_hdr_offset: u32,
    /// The insert undo log's header page.
    pub insert_page: u32,
    /// The rollback segment's history length (TRX_RSEG_HISTORY's FLST_LEN) before the
    /// commit.
    pub history_len: u32,
    /// TRX_RSEG_HISTORY_SIZE before the commit (pages in the history).
    pub history_size: u32,
    /// The log first in the history list, (header page, log header offset); `None` when
    /// the list is empty.
    pub history_first: Option<(u32, u32)>,
    /// The update undo log stays cached at commit (one page, less than 3/4 full:
    /// TRX_UNDO_PAGE_REUSE_LIMIT); otherwise it goes TO_PURGE.
    pub update_cached: bool,
}

/// The server and the table: settings and identifiers the record sizes depend on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Env {
    /// innodb_page_size (16 KiB by default): an IBUF_BITMAP page covers this many pages.
    pub page_size: u32,
    /// The table's tablespace id (file-per-table).
    pub space_id: u32,
    /// The table's id in the data dictionary (written in each undo record).
    pub table_id: u64,
    /// Length of the table's file name as MLOG_FILE_NAME writes it
    /// ("./sbtest/sbtest1.ibd": 20).
    pub file_name_len: u32,
    /// log_bin: commits are XA (prepare, then commit with the binary log position).
    pub binlog: bool,
    /// The binary log position recorded at commit.
    pub binlog_pos: u64,
    /// Undo and rollback segment placement.
    pub undo: UndoPlace,
    /// The change buffer tree leaf a buffered change goes to.
    pub ibuf_leaf: u32,
}

impl Default for Env {
    /// 16 KiB pages, no binary log (5.7's default). The ids and page numbers are
    /// illustrative of their magnitude, which is all the sizes depend on: a fresh 5.7
    /// instance gives its first user tables space and table ids in the tens (one byte
    /// compressed); the undo logs, rollback segment headers and change buffer leaves of
    /// a small ibdata1 have page numbers from 128 to 16383 (two bytes); history list
    /// lengths per rollback segment under 127 (one byte); log header offsets from 128
    /// up (two bytes).
    fn default() -> Env {
        Env {
            page_size: 16384,
            space_id: 25,
            table_id: 40,
            file_name_len: 20,
            binlog: false,
            binlog_pos: 0,
            undo: UndoPlace {
                rseg_id: 33,
                rseg_page: 300,
                update_page: 1000,
                update_hdr_offset: 2000,
                insert_page: 1001,
                history_len: 50,
                history_size: 50,
                history_first: Some((1002, 3000)),
                update_cached: true,
            },
            ibuf_leaf: 400,
        }
    }
}

/// The record an inserted record follows in its page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prev {
    /// The page's infimum (the insert goes first on the page).
    Infimum,
    /// A user record: its key (id for the clustered index, (k, id) for k_1) and whether
    /// it is delete-marked (its info bits then differ from the new record's).
    Rec {
        /// Its k (k_1 only).
        k: i64,
        /// Its id.
        id: i64,
        /// Delete-marked.
        delete_marked: bool,
    },
}

/// The change buffer record a buffered change follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IbufPrev {
    /// The change buffer leaf's infimum.
    Infimum,
    /// A record buffered for page `page` of tablespace `space`, with its counter.
    Rec {
        /// Its tablespace.
        space: u32,
        /// Its page.
        page: u32,
        /// Its counter (IBUF_REC_OFFSET_COUNTER).
        counter: u16,
    },
}

/// Change buffering of a k_1 change whose leaf is not in the buffer pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IbufCtx {
    /// The change buffer record the first buffered change follows.
    pub prev: IbufPrev,
    /// The leaf's BUFFERED bit is already set (some change for it is buffered).
    pub bitmap_buffered: bool,
    /// The leaf's free bits promise room for an insert; when not (0 after the bulk
    /// index build), the insert is not buffered: the leaf is read (its merge is not
    /// counted: simplification 3) and the insert done in it.
    pub insert_fits: bool,
}

/// How a clustered insert meets the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InsertKind {
    /// A new record after its predecessor (AUTO_INCREMENT's append, or a fresh id).
    #[default]
    Fresh,
    /// The id is delete-marked in the page by this transaction (oltp_read_write's DELETE
    /// then INSERT): the insert updates that record.
    OverDeleteMarked,
}

/// The row an op writes and where its records are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowCtx {
    /// Its id.
    pub id: i64,
    /// Its k (an index update writes k + 1).
    pub k: i64,
    /// The clustered leaf holding it.
    pub clust_leaf: u32,
    /// The k_1 leaf holding (k, id): where its delete-mark or insert goes.
    pub sec_leaf: u32,
    /// The k_1 leaf where (k + 1, id) goes (an index update); usually `sec_leaf`.
    pub sec_leaf_new: u32,
    /// The row's DB_TRX_ID before the change.
    pub old_trx_id: u64,
    /// The row's DB_ROLL_PTR before the change.
    pub old_roll_ptr: RollPtr,
    /// The clustered record an insert follows; `None`: the record of id - 1, live.
    pub clust_prev: Option<Prev>,
    /// The k_1 record an insert follows; `None`: for an index update the row's own old
    /// entry (k, id), just delete-marked (no (k + 1, id') with id' < id); for an insert
    /// a live entry of k - 1.
    pub sec_prev: Option<Prev>,
    /// How a clustered insert meets the page.
    pub insert: InsertKind,
    /// The k_1 leaves are in the buffer pool; otherwise their changes are buffered.
    pub sec_in_pool: bool,
    /// Change buffering, when `sec_in_pool` is false.
    pub ibuf: IbufCtx,
    /// This op is the first to modify the table's tablespace since the last checkpoint
    /// (its first mtr on the table writes MLOG_FILE_NAME).
    pub first_since_checkpoint: bool,
}

impl RowCtx {
    /// Row `id` with `k` in leaves `clust_leaf` and `sec_leaf`, as the prepare left it:
    /// last written by an insert (insert roll pointer), its k_1 leaf in the buffer pool,
    /// neighbours live.
    pub fn new(id: i64, k: i64, clust_leaf: u32, sec_leaf: u32) -> RowCtx {
        RowCtx {
            id,
            k,
            clust_leaf,
            sec_leaf,
            sec_leaf_new: sec_leaf,
            old_trx_id: 1000,
            old_roll_ptr: RollPtr { insert: true, rseg: 33, page: 1000, offset: 272 },
            clust_prev: None,
            sec_prev: None,
            insert: InsertKind::Fresh,
            sec_in_pool: true,
            ibuf: IbufCtx { prev: IbufPrev::Infimum, bitmap_buffered: false, insert_fits: false },
            first_since_checkpoint: false,
        }
    }

    /// Row `id` with `k` of a sysbench table laid out as `layout`: its leaves are the
    /// ones the bulk load put them in (`TableLayout::clustered_path`, `secondary_path`).
    pub fn sysbench(layout: &TableLayout, id: u64, k: u64) -> RowCtx {
        let mut path = [0u64; MAX_DEPTH];
        let d = layout.clustered_path(id, &mut path);
        let clust_leaf = path[d - 1] as u32;
        if layout.secondaries.is_empty() {
            // A table without a secondary index (TPC-C's warehouse, district, new_orders,
            // item): no secondary leaf is touched.
            return RowCtx::new(id as i64, k as i64, clust_leaf, clust_leaf);
        }
        let d = layout.secondary_path(k, &mut path);
        let sec_leaf = path[d - 1] as u32;
        let d = layout.secondary_path(k + 1, &mut path);
        let mut row = RowCtx::new(id as i64, k as i64, clust_leaf, sec_leaf);
        row.sec_leaf_new = path[d - 1] as u32;
        row
    }
}

/// The transaction writing an undo record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrxCtx {
    /// Its id (DB_TRX_ID of what it writes).
    pub id: u64,
    /// The undo number of this record (trx->undo_no: undo records written before).
    pub undo_no: u64,
    /// This is its first undo record of this kind (insert, or update for updates and
    /// delete-marks): an undo log is assigned first.
    pub first_undo: bool,
}

/// What a committing transaction wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CommitCtx {
    /// Its serialisation number (trx->no).
    pub no: u64,
    /// It has an insert undo log.
    pub insert_undo: bool,
    /// It has an update undo log.
    pub update_undo: bool,
    /// One of its update undo records needs purge to visit the indexes (a delete-mark
    /// or an indexed column changed: `trx_undo_t::del_marks`).
    pub del_marks: bool,
}

fn undo_page(page: u32) -> PageRef {
    PageRef { kind: PageKind::Undo, space: 0, page }
}

fn clust_page(env: &Env, row: &RowCtx) -> PageRef {
    PageRef { kind: PageKind::ClusteredLeaf, space: env.space_id, page: row.clust_leaf }
}

fn sec_page(env: &Env, page: u32) -> PageRef {
    PageRef { kind: PageKind::SecondaryLeaf, space: env.space_id, page }
}

fn ibuf_page(env: &Env) -> PageRef {
    PageRef { kind: PageKind::IbufLeaf, space: 0, page: env.ibuf_leaf }
}

/// The mtr of `trx_undo_assign_undo` reusing a cached log: MLOG_UNDO_HDR_CREATE (an
/// update log: a new header at `update_hdr_offset`) or MLOG_UNDO_HDR_REUSE (an insert
/// log: header at offset 86), each the transaction id u64-compressed, then
/// `trx_undo_header_add_space_for_xid`'s three MLOG_2BYTES of the new free offset
/// (header offset + TRX_UNDO_LOG_XA_HDR_SIZE) into TRX_UNDO_PAGE_START,
/// TRX_UNDO_PAGE_FREE and TRX_UNDO_LOG_START.
fn assign_undo(env: &Env, trx: &TrxCtx, update: bool) -> Mtr {
    let (page, hdr) = if update {
        (env.undo.update_page, env.undo.update_hdr_offset)
    } else {
        (env.undo.insert_page, UNDO_FIRST_LOG)
    };
    let page = undo_page(page);
    let mut m = Mtr::default();
    m.rec(page, u64_compressed_size(trx.id));
    for _ in 0..3 {
        m.rec(page, ulint_body(hdr + UNDO_XA_HDR));
    }
    m
}

/// The body of an update undo record (`trx_undo_page_report_modify`) of a row whose
/// DB_TRX_ID and DB_ROLL_PTR were `old_trx_id` and `old_roll_ptr`: `update` lists the
/// updated fields (position, old length; `None` for a delete-mark), `ord` adds the
/// columns of every index.
fn undo_modify_body(
    env: &Env,
    trx: &TrxCtx,
    old_trx_id: u64,
    old_roll_ptr: u64,
    update: Option<&[(u32, u32)]>,
    ord: bool,
) -> u64 {
    // Type and compilation info, undo number, table id, info bits, DB_TRX_ID,
    // DB_ROLL_PTR, then the primary key (length, bytes).
    let mut n = 1
        + u64_much_compressed_size(trx.undo_no)
        + u64_much_compressed_size(env.table_id)
        + 1
        + u64_compressed_size(old_trx_id)
        + u64_compressed_size(old_roll_ptr)
        + compressed_size(INT_LEN)
        + u64::from(INT_LEN);
    if let Some(fields) = update {
        n += compressed_size(fields.len() as u32);
        for &(pos, len) in fields {
            n += compressed_size(pos) + compressed_size(len) + u64::from(len);
        }
    }
    if ord {
        n += 2;
        for (pos, len) in ORD_COLS {
            n += compressed_size(pos) + compressed_size(len) + u64::from(len);
        }
    }
    n
}

/// The body of an insert undo record (`trx_undo_page_report_insert`): type, undo
/// number, table id, the primary key.
fn undo_insert_body(env: &Env, trx: &TrxCtx) -> u64 {
    1 + u64_much_compressed_size(trx.undo_no)
        + u64_much_compressed_size(env.table_id)
        + compressed_size(INT_LEN)
        + u64::from(INT_LEN)
}

/// MLOG_UNDO_INSERT of a record of `body` bytes: 2-byte length and the body.
fn undo_record_mtr(page: u32, body: u64) -> Mtr {
    let mut m = Mtr::default();
    m.rec(undo_page(page), 2 + body);
    m
}

/// After the header, MLOG_COMP_REC_UPDATE_IN_PLACE of the clustered record
/// (`btr_cur_update_in_place_log`, `row_upd_index_write_log`) setting `fields`.
fn update_in_place_body(trx: &TrxCtx, fields: &[(u32, u32)]) -> u64 {
    let mut n = index_description(CLUST_FIELDS)
        + 1 // flags
        + compressed_size(POS_TRX_ID)
        + ROLL_PTR_LEN
        + u64_compressed_size(trx.id)
        + 2 // record offset
        + 1 // info bits
        + compressed_size(fields.len() as u32);
    for &(pos, len) in fields {
        n += compressed_size(pos) + compressed_size(len) + u64::from(len);
    }
    n
}

/// After the header, MLOG_COMP_REC_CLUST_DELETE_MARK (`btr_cur_del_mark_set_clust_rec_log`).
fn clust_delete_mark_body(trx: &TrxCtx) -> u64 {
    index_description(CLUST_FIELDS)
        + 1 // flags
        + 1 // value
        + compressed_size(POS_TRX_ID)
        + ROLL_PTR_LEN
        + u64_compressed_size(trx.id)
        + 2
}

/// After the header, MLOG_REC_SEC_DELETE_MARK (`btr_cur_del_mark_set_sec_rec_log`):
/// value byte and record offset.
const SEC_DELETE_MARK_BODY: u64 = 1 + 2;

/// After the header, MLOG_COMP_REC_INSERT (`page_cur_insert_rec_write_log`) of a
/// COMPACT record of `fields` fields and `rec_size` bytes whose data starts with `key`,
/// after `prev` (its data starting with `prev_key`, same shape).
fn compact_insert_body(fields: u64, rec_size: u64, key: &[u8], prev: Prev, prev_key: &[u8]) -> u64 {
    // The predecessor's size and whether its info/status bits differ.
    let (prev_size, prev_data, bits_differ): (u64, &[u8], bool) = match prev {
        Prev::Infimum => (COMPACT_EXTRA + INFIMUM.len() as u64, &INFIMUM[..], true),
        Prev::Rec { delete_marked, .. } => (rec_size, prev_key, delete_marked),
    };
    // Both headers are COMPACT_EXTRA bytes: a difference there (heap numbers always
    // differ) moves the comparison to the data, whose common prefix is not logged.
    let min_size = rec_size.min(prev_size);
    let i = (COMPACT_EXTRA + common_prefix(key, prev_data)).min(min_size);
    let tail = rec_size - i;
    let need_extra = bits_differ || prev_size != rec_size;
    index_description(fields) + 2 + insert_tail(tail, need_extra, COMPACT_EXTRA, i)
}

/// The end of `page_cur_insert_rec_write_log`: the compressed length word (with the
/// extra-info flag), the extra info when needed, the differing tail.
fn insert_tail(tail: u64, need_extra: bool, extra: u64, i: u64) -> u64 {
    if need_extra {
        compressed_size((2 * tail + 1) as u32)
            + 1
            + compressed_size(extra as u32)
            + compressed_size(i as u32)
            + tail
    } else {
        compressed_size((2 * tail) as u32) + tail
    }
}

/// The key bytes of a clustered record (id) and of a k_1 record (k, id).
fn clust_key(id: i64) -> [u8; 4] {
    int_bytes(id)
}

fn sec_key(k: i64, id: i64) -> [u8; 8] {
    let mut b = [0u8; 8];
    b[..4].copy_from_slice(&int_bytes(k));
    b[4..].copy_from_slice(&int_bytes(id));
    b
}

/// After the header, MLOG_COMP_REC_INSERT of the clustered record of `id` after `prev`.
fn clust_insert_body(id: i64, prev: Prev) -> u64 {
    let pk = match prev {
        Prev::Rec { id, .. } => clust_key(id),
        Prev::Infimum => [0; 4],
    };
    compact_insert_body(CLUST_FIELDS, COMPACT_EXTRA + CLUST_DATA, &clust_key(id), prev, &pk)
}

/// After the header, MLOG_COMP_REC_INSERT of the k_1 record (k, id) after `prev`.
fn sec_insert_body(k: i64, id: i64, prev: Prev) -> u64 {
    let pk = match prev {
        Prev::Rec { k, id, .. } => sec_key(k, id),
        Prev::Infimum => [0; 8],
    };
    compact_insert_body(SEC_FIELDS, COMPACT_EXTRA + SEC_DATA, &sec_key(k, id), prev, &pk)
}

/// The mtr that changes the clustered leaf with one record of `body` bytes.
fn clust_mtr(env: &Env, row: &RowCtx, body: u64) -> Mtr {
    let mut m = Mtr::default();
    m.rec(clust_page(env, row), body);
    m
}

/// The mtr that delete-marks (k, id) in its k_1 leaf: PAGE_MAX_TRX_ID, then the mark.
fn sec_delete_mark_mtr(env: &Env, trx: &TrxCtx, row: &RowCtx) -> Mtr {
    let page = sec_page(env, row.sec_leaf);
    let mut m = Mtr::default();
    m.rec(page, ull_body(trx.id));
    m.rec(page, SEC_DELETE_MARK_BODY);
    m
}

/// The mtr that inserts (k, id) into leaf `leaf` after `prev`, raising PAGE_MAX_TRX_ID
/// unless `max_trx_id_set` (the op already raised it on that leaf).
fn sec_insert_mtr(
    env: &Env,
    trx: &TrxCtx,
    leaf: u32,
    k: i64,
    id: i64,
    prev: Prev,
    max_trx_id_set: bool,
) -> Mtr {
    let page = sec_page(env, leaf);
    let mut m = Mtr::default();
    if !max_trx_id_set {
        m.rec(page, ull_body(trx.id));
    }
    m.rec(page, sec_insert_body(k, id, prev));
    m
}

/// The IBUF_BITMAP page covering `leaf` (`ibuf_bitmap_page_no_calc`).
fn ibuf_bitmap_page(env: &Env, leaf: u32) -> PageRef {
    let page = IBUF_BITMAP_OFFSET + (leaf & !(env.page_size - 1));
    PageRef { kind: PageKind::IbufBitmap, space: env.space_id, page }
}

/// The mtr setting `leaf`'s BUFFERED bit: MLOG_1BYTE of the bitmap byte. The byte holds
/// two pages' 4 bits; its top bit is the IBUF bit of a change buffer page, never set in
/// a user tablespace, so the byte is below 128: one byte compressed.
fn ibuf_bitmap_mtr(env: &Env, leaf: u32) -> Mtr {
    let mut m = Mtr::default();
    m.rec(ibuf_bitmap_page(env, leaf), 2 + 1);
    m
}

/// The byte string a change buffer record starts with: space, marker, page, counter.
fn ibuf_key(space: u32, page: u32, counter: u16) -> [u8; 11] {
    let mut b = [0u8; 11];
    b[..4].copy_from_slice(&space.to_be_bytes());
    b[5..9].copy_from_slice(&page.to_be_bytes());
    b[9..].copy_from_slice(&counter.to_be_bytes());
    b
}

/// After the header, MLOG_REC_INSERT of a change buffer record for `leaf` after `prev`
/// (REDUNDANT: no index description), and the counter the record gets
/// (`ibuf_get_entry_counter`: the predecessor's + 1 when it is for the same page, else
/// 0).
fn ibuf_insert_body(env: &Env, leaf: u32, prev: IbufPrev) -> (u64, u16) {
    let rec_size = IBUF_EXTRA + IBUF_DATA;
    match prev {
        IbufPrev::Infimum => {
            // Header sizes differ (7 against 12): nothing is compared, all is logged.
            let need_extra = REDUNDANT_INFIMUM_EXTRA != IBUF_EXTRA;
            (2 + insert_tail(rec_size, need_extra, IBUF_EXTRA, 0), 0)
        }
        IbufPrev::Rec { space, page, counter } => {
            let c = if space == env.space_id && page == leaf { counter + 1 } else { 0 };
            // Equal end offsets (same field sizes) match the first 6 header bytes; the
            // rest of the header differs: compare the data.
            let cp = common_prefix(&ibuf_key(env.space_id, leaf, c), &ibuf_key(space, page, counter));
            let i = IBUF_EXTRA + cp;
            (2 + insert_tail(rec_size - i, false, IBUF_EXTRA, i), c)
        }
    }
}

/// The main mtr of a buffered change: the record into the change buffer leaf, and its
/// PAGE_MAX_TRX_ID unless the op already raised it. Returns the mtr and the counter.
fn ibuf_insert_mtr(env: &Env, trx: &TrxCtx, leaf: u32, prev: IbufPrev, max_trx_id_set: bool) -> (Mtr, u16) {
    let (body, counter) = ibuf_insert_body(env, leaf, prev);
    let mut m = Mtr::default();
    m.rec(ibuf_page(env), body);
    if !max_trx_id_set {
        m.rec(ibuf_page(env), ull_body(trx.id));
    }
    (m, counter)
}

/// `UPDATE sbtest SET c = ? WHERE id = ?` (oltp_update_non_index, oltp_read_write's
/// non-index updates): [undo assignment], the undo record (TRX_UNDO_UPD_EXIST_REC with
/// the old c), the update in place of c.
pub fn update_non_index(env: &Env, trx: &TrxCtx, row: &RowCtx) -> MtrLog {
    let mut log = MtrLog::default();
    if trx.first_undo {
        log.push(assign_undo(env, trx, true));
    }
    let fields = [(POS_C, C_LEN)];
    let body = undo_modify_body(env, trx, row.old_trx_id, row.old_roll_ptr.value(), Some(&fields), false);
    log.push(undo_record_mtr(env.undo.update_page, body));
    log.push(clust_mtr(env, row, update_in_place_body(trx, &fields)));
    log.named(env, row)
}

/// The undo record and the clustered in-place update of `UPDATE SET k = k + 1`.
fn update_index_clustered(env: &Env, trx: &TrxCtx, row: &RowCtx, log: &mut MtrLog) {
    if trx.first_undo {
        log.push(assign_undo(env, trx, true));
    }
    let fields = [(POS_K, INT_LEN)];
    let body = undo_modify_body(env, trx, row.old_trx_id, row.old_roll_ptr.value(), Some(&fields), true);
    log.push(undo_record_mtr(env.undo.update_page, body));
    log.push(clust_mtr(env, row, update_in_place_body(trx, &fields)));
}

/// The k_1 record (k + 1, id) follows, by default, the row's own old entry (k, id), now
/// delete-marked.
fn update_index_sec_prev(row: &RowCtx) -> Prev {
    row.sec_prev.unwrap_or(Prev::Rec { k: row.k, id: row.id, delete_marked: true })
}

/// `UPDATE sbtest SET k = k + 1 WHERE id = ?` with k_1's leaves in the buffer pool:
/// [undo assignment], the undo record (TRX_UNDO_UPD_EXIST_REC with the old k, and id and
/// k as indexed columns), the update in place of k, the delete-mark of (k, id), the
/// insert of (k + 1, id).
pub fn update_index(env: &Env, trx: &TrxCtx, row: &RowCtx) -> MtrLog {
    let mut log = MtrLog::default();
    update_index_clustered(env, trx, row, &mut log);
    log.push(sec_delete_mark_mtr(env, trx, row));
    let same_leaf = row.sec_leaf_new == row.sec_leaf;
    let prev = update_index_sec_prev(row);
    log.push(sec_insert_mtr(env, trx, row.sec_leaf_new, row.k + 1, row.id, prev, same_leaf));
    log.named(env, row)
}

/// `UPDATE sbtest SET k = k + 1 WHERE id = ?` with k_1's leaf not in the buffer pool:
/// the clustered part as [`update_index`], then the delete-mark buffered (bitmap bit,
/// change buffer record) and the insert buffered after it when the leaf's free bits
/// allow (`row.ibuf.insert_fits`), else done in the leaf once read.
pub fn update_index_buffered(env: &Env, trx: &TrxCtx, row: &RowCtx) -> MtrLog {
    let mut log = MtrLog::default();
    update_index_clustered(env, trx, row, &mut log);
    if !row.ibuf.bitmap_buffered {
        log.push(ibuf_bitmap_mtr(env, row.sec_leaf));
    }
    let (m, counter) = ibuf_insert_mtr(env, trx, row.sec_leaf, row.ibuf.prev, false);
    log.push(m);
    if row.ibuf.insert_fits {
        let same_leaf = row.sec_leaf_new == row.sec_leaf;
        if !same_leaf && !row.ibuf.bitmap_buffered {
            log.push(ibuf_bitmap_mtr(env, row.sec_leaf_new));
        }
        let prev = if same_leaf {
            IbufPrev::Rec { space: env.space_id, page: row.sec_leaf, counter }
        } else {
            row.ibuf.prev
        };
        // The change buffer leaf's PAGE_MAX_TRX_ID was raised by the delete-mark.
        log.push(ibuf_insert_mtr(env, trx, row.sec_leaf_new, prev, true).0);
    } else {
        let prev = update_index_sec_prev(row);
        log.push(sec_insert_mtr(env, trx, row.sec_leaf_new, row.k + 1, row.id, prev, false));
    }
    log.named(env, row)
}

/// The undo record and clustered delete-mark of `DELETE`.
fn delete_clustered(env: &Env, trx: &TrxCtx, row: &RowCtx, log: &mut MtrLog) {
    if trx.first_undo {
        log.push(assign_undo(env, trx, true));
    }
    let body = undo_modify_body(env, trx, row.old_trx_id, row.old_roll_ptr.value(), None, true);
    log.push(undo_record_mtr(env.undo.update_page, body));
    log.push(clust_mtr(env, row, clust_delete_mark_body(trx)));
}

/// `DELETE FROM sbtest WHERE id = ?` with k_1's leaf in the buffer pool: [undo
/// assignment], the undo record (TRX_UNDO_DEL_MARK_REC: id and k), the clustered
/// delete-mark, the delete-mark of (k, id).
pub fn delete(env: &Env, trx: &TrxCtx, row: &RowCtx) -> MtrLog {
    let mut log = MtrLog::default();
    delete_clustered(env, trx, row, &mut log);
    log.push(sec_delete_mark_mtr(env, trx, row));
    log.named(env, row)
}

/// `DELETE` with k_1's leaf not in the buffer pool: the delete-mark of (k, id) buffered.
pub fn delete_buffered(env: &Env, trx: &TrxCtx, row: &RowCtx) -> MtrLog {
    let mut log = MtrLog::default();
    delete_clustered(env, trx, row, &mut log);
    if !row.ibuf.bitmap_buffered {
        log.push(ibuf_bitmap_mtr(env, row.sec_leaf));
    }
    log.push(ibuf_insert_mtr(env, trx, row.sec_leaf, row.ibuf.prev, false).0);
    log.named(env, row)
}

/// The clustered part of `INSERT INTO sbtest (id, k, c, pad)`. A fresh id: [insert undo
/// assignment], the undo record (TRX_UNDO_INSERT_REC), the record inserted after
/// `row.clust_prev` (default: id - 1, the append of AUTO_INCREMENT). An id this
/// transaction delete-marked: [update undo assignment], the undo record
/// (TRX_UNDO_UPD_DEL_REC with the old k, c, pad, and id and k as indexed columns, the
/// old roll pointer being the transaction's own), the update in place of k, c, pad
/// (which also clears the delete mark).
pub fn insert_clustered(env: &Env, trx: &TrxCtx, row: &RowCtx) -> MtrLog {
    let mut log = MtrLog::default();
    match row.insert {
        InsertKind::Fresh => {
            if trx.first_undo {
                log.push(assign_undo(env, trx, false));
            }
            log.push(undo_record_mtr(env.undo.insert_page, undo_insert_body(env, trx)));
            let prev = row.clust_prev.unwrap_or(Prev::Rec { k: 0, id: row.id - 1, delete_marked: false });
            log.push(clust_mtr(env, row, clust_insert_body(row.id, prev)));
        }
        InsertKind::OverDeleteMarked => {
            if trx.first_undo {
                log.push(assign_undo(env, trx, true));
            }
            // The delete-mark's undo record is in this transaction's update undo log.
            let own =
                RollPtr { insert: false, rseg: env.undo.rseg_id, page: env.undo.update_page, offset: 0 };
            let fields = [(POS_K, INT_LEN), (POS_C, C_LEN), (POS_PAD, PAD_LEN)];
            let body = undo_modify_body(env, trx, trx.id, own.value(), Some(&fields), true);
            log.push(undo_record_mtr(env.undo.update_page, body));
            log.push(clust_mtr(env, row, update_in_place_body(trx, &fields)));
        }
    }
    log.named(env, row)
}

/// The k_1 part of an INSERT with its leaf in the buffer pool: (k, id) inserted after
/// `row.sec_prev` (default: a live entry of k - 1), raising PAGE_MAX_TRX_ID.
pub fn insert_secondary(env: &Env, trx: &TrxCtx, row: &RowCtx) -> MtrLog {
    let prev = row.sec_prev.unwrap_or(Prev::Rec { k: row.k - 1, id: row.id, delete_marked: false });
    let mut log = MtrLog::default();
    log.push(sec_insert_mtr(env, trx, row.sec_leaf, row.k, row.id, prev, false));
    log.named(env, row)
}

/// The k_1 part of an INSERT with its leaf not in the buffer pool: buffered when the
/// free bits allow (`row.ibuf.insert_fits`), else as [`insert_secondary`] once the leaf
/// is read.
pub fn insert_secondary_buffered(env: &Env, trx: &TrxCtx, row: &RowCtx) -> MtrLog {
    if !row.ibuf.insert_fits {
        return insert_secondary(env, trx, row);
    }
    let mut log = MtrLog::default();
    if !row.ibuf.bitmap_buffered {
        log.push(ibuf_bitmap_mtr(env, row.sec_leaf));
    }
    log.push(ibuf_insert_mtr(env, trx, row.sec_leaf, row.ibuf.prev, false).0);
    log.named(env, row)
}

/// XA PREPARE's mtr with the binary log (`trx_prepare_low`): per undo log, the PREPARED
/// state (MLOG_2BYTES), TRX_UNDO_XID_EXISTS (MLOG_1BYTE), format, gtrid and bqual lengths
/// (MLOG_4BYTES each) and the XID's 128 bytes (MLOG_WRITE_STRING).
fn prepare_mtr(env: &Env, c: &CommitCtx) -> Mtr {
    let mut m = Mtr::default();
    let logs = [(c.insert_undo, env.undo.insert_page), (c.update_undo, env.undo.update_page)];
    for (_, page) in logs.into_iter().filter(|l| l.0) {
        let p = undo_page(page);
        m.rec(p, ulint_body(TRX_UNDO_PREPARED));
        m.rec(p, ulint_body(1));
        m.rec(p, ulint_body(XID_FORMAT));
        m.rec(p, ulint_body(XID_GTRID_LEN));
        m.rec(p, ulint_body(0));
        m.rec(p, string_body(XID_DATA));
    }
    m
}

/// `flst_add_first` of the update undo log into the rollback segment's history list.
fn history_add_first(env: &Env, m: &mut Mtr) {
    let u = &env.undo;
    let log = undo_page(u.update_page);
    let rseg = PageRef { kind: PageKind::RsegHeader, space: 0, page: u.rseg_page };
    let node = u.update_hdr_offset + UNDO_HISTORY_NODE;
    match u.history_first {
        Some((first_page, first_hdr)) => {
            // flst_insert_before: the new node's PREV (null) and NEXT (the old first),
            // the base's FIRST, the old first's PREV, the length.
            let first = PageRef { kind: PageKind::HistoryPrev, space: 0, page: first_page };
            m.rec(log, ulint_body(FIL_NULL));
            m.rec(log, ulint_body(0));
            m.rec(log, ulint_body(first_page));
            m.rec(log, ulint_body(first_hdr + UNDO_HISTORY_NODE));
            m.rec(rseg, ulint_body(u.update_page));
            m.rec(rseg, ulint_body(node));
            m.rec(first, ulint_body(u.update_page));
            m.rec(first, ulint_body(node));
        }
        None => {
            // flst_add_to_empty: the base's FIRST and LAST, the node's PREV and NEXT
            // (null), the length.
            for _ in 0..2 {
                m.rec(rseg, ulint_body(u.update_page));
                m.rec(rseg, ulint_body(node));
            }
            for _ in 0..2 {
                m.rec(log, ulint_body(FIL_NULL));
                m.rec(log, ulint_body(0));
            }
        }
    }
    m.rec(rseg, ulint_body(u.history_len + 1));
}

/// `COMMIT` (or an autocommit statement's end): nothing without undo (a read-only
/// transaction); with the binary log, XA PREPARE's mtr first; then the commit's mtr
/// (`trx_write_serialisation_history`): each undo log's state, the update undo log into
/// the history with the transaction number and DEL_MARKS, the binary log position.
pub fn commit(env: &Env, c: &CommitCtx) -> MtrLog {
    let mut log = MtrLog::default();
    if !c.insert_undo && !c.update_undo {
        return log;
    }
    if env.binlog {
        log.push(prepare_mtr(env, c));
    }
    let mut m = Mtr::default();
    if c.insert_undo {
        m.rec(undo_page(env.undo.insert_page), ulint_body(TRX_UNDO_CACHED));
    }
    if c.update_undo {
        let u = &env.undo;
        let page = undo_page(u.update_page);
        let state = if u.update_cached { TRX_UNDO_CACHED } else { TRX_UNDO_TO_PURGE };
        m.rec(page, ulint_body(state));
        if !u.update_cached {
            // The segment leaves its slot; the history grows by its one page.
            let rseg = PageRef { kind: PageKind::RsegHeader, space: 0, page: u.rseg_page };
            m.rec(rseg, ulint_body(FIL_NULL));
            m.rec(rseg, ulint_body(u.history_size + 1));
        }
        history_add_first(env, &mut m);
        m.rec(page, ull_body(c.no));
        if !c.del_marks {
            m.rec(page, ulint_body(0));
        }
    }
    if env.binlog {
        let trx_sys = PageRef { kind: PageKind::TrxSys, space: 0, page: TRX_SYS_PAGE };
        if env.binlog_pos >> 32 > 0 {
            m.rec(trx_sys, ulint_body((env.binlog_pos >> 32) as u32));
        }
        m.rec(trx_sys, ulint_body(env.binlog_pos as u32));
    }
    log.push(m);
    log
}

/// Purge's removal of a delete-marked k_1 entry from its leaf (`row_purge_remove_sec_if_poss_leaf`
/// → `btr_cur_optimistic_delete` → `page_cur_delete_rec_write_log`): MLOG_COMP_REC_DELETE
/// with the index description and the record's 2-byte offset; a lone record (no end byte).
pub fn purge_sec_delete(env: &Env, leaf: u32) -> Mtr {
    let mut m = Mtr::default();
    m.rec(sec_page(env, leaf), index_description(SEC_FIELDS) + 2);
    m.finish()
}

/// Purge's removal of a delete-marked clustered record (`row_purge_remove_clust_if_poss_low`
/// → `btr_cur_optimistic_delete`): MLOG_COMP_REC_DELETE with the clustered index's
/// description.
pub fn purge_clust_delete(env: &Env, row: &RowCtx) -> Mtr {
    let mut m = Mtr::default();
    m.rec(clust_page(env, row), index_description(CLUST_FIELDS) + 2);
    m.finish()
}

/// A purge's IBUF_OP_DELETE buffered for `leaf` (`ibuf_insert_low`): the change buffer
/// record (the leaf's BUFFERED bit is set: changes for it are buffered already); a purge
/// has no transaction, so the change buffer leaf's PAGE_MAX_TRX_ID is not raised.
pub fn purge_ibuf_delete(env: &Env, leaf: u32) -> Mtr {
    let t = TrxCtx { id: 0, undo_no: 0, first_undo: false };
    ibuf_insert_mtr(env, &t, leaf, IbufPrev::Infimum, true).0.finish()
}

/// Truncation's removal of the oldest log of a rollback segment's history list
/// (`trx_purge_remove_log_hdr` → `flst_remove` of the list's last node): the next
/// younger log's FLST_NEXT becomes FIL_NULL on `younger`'s page (page MLOG_4BYTES, offset
/// MLOG_2BYTES), the base node's FLST_LAST points to it (4 and 2 bytes) and FLST_LEN
/// drops (4 bytes) on the rollback segment header; with no younger log, FLST_FIRST and
/// FLST_LAST both become FIL_NULL. A segment that was not cached is freed
/// (`trx_purge_free_segment`): TRX_UNDO_DEL_MARKS cleared on the log's page,
/// TRX_RSEG_HISTORY_SIZE lowered, and its page freed (`fseg_free_step`: ASSUMED eight
/// 4-byte writes on the space header, page 0, and the segment's inode page, 2).
pub fn purge_history_remove(
    env: &Env,
    log_page: u32,
    younger: Option<(u32, u32)>,
    free_segment: bool,
) -> Mtr {
    let rseg = PageRef { kind: PageKind::RsegHeader, space: 0, page: env.undo.rseg_page };
    let mut m = Mtr::default();
    match younger {
        Some((page, offset)) => {
            let p = PageRef { kind: PageKind::HistoryPrev, space: 0, page };
            m.rec(p, ulint_body(FIL_NULL));
            m.rec(p, ulint_body(0));
            m.rec(rseg, ulint_body(page));
            m.rec(rseg, ulint_body(offset));
        }
        None => {
            for _ in 0..2 {
                m.rec(rseg, ulint_body(FIL_NULL));
                m.rec(rseg, ulint_body(0));
            }
        }
    }
    m.rec(rseg, ulint_body(u32::try_from(env.undo.history_len).unwrap_or(u32::MAX)));
    if free_segment {
        m.rec(undo_page(log_page), ulint_body(0));
        m.rec(rseg, ulint_body(u32::try_from(env.undo.history_size).unwrap_or(u32::MAX)));
        for i in 0..8u32 {
            let page = if i < 4 { 0 } else { 2 };
            m.rec(PageRef { kind: PageKind::Undo, space: 0, page }, ulint_body(log_page));
        }
    }
    m.finish()
}

/// One transaction's undo state between its ops, which decides when an undo log is
/// assigned, each record's undo number and what the commit writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TrxRedo {
    id: u64,
    undo_no: u64,
    insert_undo: bool,
    update_undo: bool,
    del_marks: bool,
}

impl TrxRedo {
    /// Transaction `id` starting.
    pub fn begin(id: u64) -> TrxRedo {
        TrxRedo { id, ..TrxRedo::default() }
    }

    /// The transaction's id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The records of `op` at `index` on `row` (a read writes none; a commit is
    /// [`commit`] with the transaction's undo, numbered `id + 1`: the serialisation
    /// number is drawn from the same counter after the id, and only its magnitude
    /// matters), then the transaction's state moves on (a commit starts it afresh with
    /// id + 2).
    pub fn op(&mut self, op: Op, index: Index, env: &Env, row: &RowCtx) -> MtrLog {
        match (op, index) {
            // Purge's records are its own (`purge_*`), not a transaction's.
            (Op::Read | Op::Purge | Op::PurgeReset, _) => MtrLog::default(),
            (Op::Commit, _) => {
                let c = CommitCtx {
                    no: self.id + 1,
                    insert_undo: self.insert_undo,
                    update_undo: self.update_undo,
                    del_marks: self.del_marks,
                };
                *self = TrxRedo::begin(self.id + 2);
                commit(env, &c)
            }
            (Op::Insert, Index::Secondary | Index::Secondary2) => {
                if row.sec_in_pool {
                    insert_secondary(env, &self.ctx(false), row)
                } else {
                    insert_secondary_buffered(env, &self.ctx(false), row)
                }
            }
            (Op::Insert, Index::Clustered) if row.insert == InsertKind::Fresh => {
                let log = insert_clustered(env, &self.ctx(false), row);
                self.wrote(false, false);
                log
            }
            (Op::Insert, Index::Clustered) => {
                let log = insert_clustered(env, &self.ctx(true), row);
                self.wrote(true, true);
                log
            }
            (Op::UpdateNonIndex, _) => {
                let log = update_non_index(env, &self.ctx(true), row);
                self.wrote(true, false);
                log
            }
            (Op::UpdateIndex, _) => {
                let t = self.ctx(true);
                let log = if row.sec_in_pool {
                    update_index(env, &t, row)
                } else {
                    update_index_buffered(env, &t, row)
                };
                self.wrote(true, true);
                log
            }
            (Op::Delete, _) => {
                let t = self.ctx(true);
                let log = if row.sec_in_pool { delete(env, &t, row) } else { delete_buffered(env, &t, row) };
                self.wrote(true, true);
                log
            }
        }
    }

    /// The context of the next undo record, of the update kind or not.
    fn ctx(&self, update: bool) -> TrxCtx {
        let assigned = if update { self.update_undo } else { self.insert_undo };
        TrxCtx { id: self.id, undo_no: self.undo_no, first_undo: !assigned }
    }

    /// An undo record was written (of the update kind or not; needing purge to visit
    /// the indexes or not).
    fn wrote(&mut self, update: bool, del_marks: bool) {
        self.undo_no += 1;
        if update {
            self.update_undo = true;
        } else {
            self.insert_undo = true;
        }
        self.del_marks |= del_marks;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Env::default(): space 25 and table id 40 (1 byte each compressed); undo pages
    // 1000/1001/1002, rseg header 300, change buffer leaf 400 (2 bytes each); the
    // system tablespace id 0 (1 byte). Record headers (type + space + page):
    //   on an undo, rseg or change buffer page: 1 + 1 + 2 = 4;
    //   on a table page numbered 16384..2097151 (3 bytes): 1 + 1 + 3 = 5.
    const CLUST_LEAF: u32 = 70_000;
    const SEC_LEAF: u32 = 140_000;
    const TRX: u64 = 1_000_000;

    fn row() -> RowCtx {
        RowCtx::new(5_000_000, 5_000_000, CLUST_LEAF, SEC_LEAF)
    }

    fn trx(undo_no: u64, first_undo: bool) -> TrxCtx {
        TrxCtx { id: TRX, undo_no, first_undo }
    }

    fn sizes(log: &MtrLog) -> Vec<u64> {
        log.mtrs().iter().map(|m| m.bytes).collect()
    }

    #[test]
    fn compressed_sizes_follow_mach_write_compressed() {
        assert_eq!(
            [0, 127, 128, 16383, 16384, 0x1F_FFFF, 0x20_0000, 0x0FFF_FFFF, 0x1000_0000, FIL_NULL]
                .map(compressed_size),
            [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
        );
        // u64: high half compressed + 4; much compressed: 0xFF + both halves.
        assert_eq!(u64_compressed_size(1_000_000), 5);
        assert_eq!(u64_compressed_size(1 << 40), 2 + 4);
        assert_eq!(u64_much_compressed_size(40), 1);
        assert_eq!(u64_much_compressed_size((1 << 32) + 5), 1 + 1 + 1);
        // A prepare's insert roll pointer: bit 55 set, so its high half is at least
        // 0x80_0000: 4 bytes compressed, 8 in all.
        let r = RollPtr { insert: true, rseg: 33, page: 1000, offset: 272 };
        assert_eq!(u64_compressed_size(r.value()), 8);
        // An update's roll pointer in rseg 0 has a high half of page >> 16 = 0: 5 bytes.
        let r0 = RollPtr { insert: false, rseg: 0, page: 1000, offset: 272 };
        assert_eq!(u64_compressed_size(r0.value()), 5);
    }

    #[test]
    fn a_non_index_update_first_in_its_transaction() {
        let env = Env::default();
        let log = update_non_index(&env, &trx(0, true), &row());
        // 1. Undo assignment (cached update log): MLOG_UNDO_HDR_CREATE 4 + trx id 5 = 9;
        //    three MLOG_2BYTES of 2000 + 186 = 2186: 4 + offset 2 + value 2 = 8 each;
        //    four records, so MLOG_MULTI_REC_END: 9 + 24 + 1 = 34.
        // 2. MLOG_UNDO_INSERT: 4 + length 2 + body. Body: type 1, undo_no 0 -> 1,
        //    table id 40 -> 1, info bits 1, old DB_TRX_ID 1000 -> 5, old roll pointer
        //    (insert) -> 8, id: length 1 + 4; one updated field: count 1, field 4 -> 1,
        //    length 120 -> 1, 120 bytes: 22 + 1 + 122 = 145. Record 151, alone: flag only.
        // 3. MLOG_COMP_REC_UPDATE_IN_PLACE: 5 + index (2 + 2 + 6 * 2 = 16) + flags 1 +
        //    DB_TRX_ID position 1 + roll pointer 7 + trx id 5 + offset 2 + info bits 1 +
        //    field count 1 + (1 + 1 + 120) = 161, alone.
        assert_eq!(sizes(&log), [34, 151, 161]);
        assert_eq!(log.bytes(), 346);
        assert_eq!(log.records(), 4 + 1 + 1);
        // The undo page (both undo mtrs) and the clustered leaf.
        assert_eq!(log.pages_dirtied(), 2);
        assert_eq!(
            log.mtrs()[2].pages(),
            [PageRef { kind: PageKind::ClusteredLeaf, space: 25, page: CLUST_LEAF }]
        );
    }

    #[test]
    fn a_second_non_index_update_needs_no_assignment() {
        let log = update_non_index(&Env::default(), &trx(1, false), &row());
        // Undo number 1 still compresses to one byte: 151 + 161.
        assert_eq!(sizes(&log), [151, 161]);
        assert_eq!(log.bytes(), 312);
    }

    #[test]
    fn the_commit_after_non_index_updates() {
        let env = Env::default();
        let c = CommitCtx { no: TRX + 1, insert_undo: false, update_undo: true, del_marks: false };
        let log = commit(&env, &c);
        // One mtr:
        //   state CACHED (MLOG_2BYTES on undo page 1000): 4 + 2 + 1 = 7;
        //   flst_insert_before into a non-empty history (first log at page 1002, header
        //   3000, its node at 3034; ours at 2000 + 34 = 2034):
        //     our PREV page FIL_NULL: 4 + 2 + 5 = 11; PREV offset 0: 4 + 2 + 1 = 7;
        //     our NEXT page 1002: 8; NEXT offset 3034: 8;
        //     base FIRST page 1000 (rseg header 300): 8; FIRST offset 2034: 8;
        //     old first's PREV page 1000: 8; PREV offset 2034: 8;
        //     length 51: 4 + 2 + 1 = 7.  Sum 73;
        //   TRX_NO (MLOG_8BYTES): 4 + 2 + 5 = 11;
        //   DEL_MARKS cleared (only non-index updates): 7;
        //   MLOG_MULTI_REC_END: 1.  7 + 73 + 11 + 7 + 1 = 99.
        assert_eq!(sizes(&log), [99]);
        assert_eq!(log.records(), 12);
        // The undo page, the rseg header, the previous first log's page.
        assert_eq!(log.pages_dirtied(), 3);
        // With a delete-mark or index update in the transaction DEL_MARKS stays: 92.
        assert_eq!(commit(&env, &CommitCtx { del_marks: true, ..c }).bytes(), 92);
        // An empty history (flst_add_to_empty): base FIRST and LAST (8 + 8 each), the
        // node's PREV and NEXT null (11 + 7 each), length 1 (7): 32 + 36 + 7 = 75,
        // so 7 + 75 + 11 + 7 + 1 = 101.
        let mut empty = env;
        empty.undo.history_first = None;
        assert_eq!(commit(&empty, &c).bytes(), 101);
        // A log not cached (TO_PURGE): its rseg slot set to FIL_NULL (4 + 2 + 5 = 11)
        // and the history size 51 (7): 99 + 18.
        let mut full = env;
        full.undo.update_cached = false;
        assert_eq!(commit(&full, &c).bytes(), 117);
    }

    #[test]
    fn a_read_only_commit_writes_nothing_and_an_insert_only_one_record() {
        let env = Env::default();
        assert_eq!(commit(&env, &CommitCtx::default()).mtrs().len(), 0);
        // Insert undo only: its state CACHED, alone: 4 + 2 + 1 = 7.
        let c = CommitCtx { no: TRX + 1, insert_undo: true, ..CommitCtx::default() };
        assert_eq!(sizes(&commit(&env, &c)), [7]);
    }

    #[test]
    fn an_auto_increment_insert() {
        let env = Env::default();
        // id 10_000_001 after 10_000_000: stored 0x80989681 and 0x80989680.
        let mut r = RowCtx::new(10_000_001, 5_000_000, CLUST_LEAF, SEC_LEAF);
        let log = insert_clustered(&env, &trx(0, true), &r);
        // 1. Insert undo assignment (cached): MLOG_UNDO_HDR_REUSE 4 + 5 = 9; three
        //    MLOG_2BYTES of 86 + 186 = 272 (2 bytes): 8 each; end byte: 34.
        // 2. MLOG_UNDO_INSERT: 4 + 2 + body (type 1, undo_no 1, table id 1, id 1 + 4 =
        //    8) = 14.
        // 3. MLOG_COMP_REC_INSERT: 5 + index 16 + predecessor offset 2; the headers
        //    differ, the data shares 3 bytes of id: prefix 5 + 3 = 8, tail 206 - 8 =
        //    198, length word 396 (2 bytes): 5 + 16 + 2 + 2 + 198 = 223.
        assert_eq!(sizes(&log), [34, 14, 223]);
        // k_1: PAGE_MAX_TRX_ID 5 + 2 + 5 = 12; MLOG_COMP_REC_INSERT of (5_000_000, id)
        // after (4_999_999, ..): 0x804C4B40 / 0x804C4B3F share 3 bytes, prefix 8, tail
        // 13 - 8 = 5, length word 10 (1 byte): 5 + index 8 + 2 + 1 + 5 = 21; end: 34.
        let sec = insert_secondary(&env, &trx(1, false), &r);
        assert_eq!(sizes(&sec), [34]);
        // Commit of an insert-only transaction: 7. oltp_insert's transaction: 312.
        let c = commit(&env, &CommitCtx { no: TRX + 1, insert_undo: true, ..CommitCtx::default() });
        assert_eq!(log.bytes() + sec.bytes() + c.bytes(), 271 + 34 + 7);
        // First on a fresh page (after the infimum): the data "infimum\0" shares no byte
        // with 0x80..., the sizes and status bits differ: prefix 5, tail 201, length
        // word 2 * 201 + 1 = 403 (2 bytes), info 1, header size 1, prefix 1:
        // 5 + 16 + 2 + 2 + 1 + 1 + 1 + 201 = 229.
        r.clust_prev = Some(Prev::Infimum);
        assert_eq!(insert_clustered(&env, &trx(0, false), &r).mtrs()[1].bytes, 229);
        // After 0x80989600 (id 9_999_872): the last byte differs, same 3-byte prefix.
        r.clust_prev = Some(Prev::Rec { k: 0, id: 9_999_872, delete_marked: false });
        assert_eq!(insert_clustered(&env, &trx(0, false), &r).mtrs()[1].bytes, 223);
        // After 0x809895FF (id 9_999_871): 2 bytes shared, tail 199:
        // 5 + 16 + 2 + 2 + 199 = 224.
        r.clust_prev = Some(Prev::Rec { k: 0, id: 9_999_871, delete_marked: false });
        assert_eq!(insert_clustered(&env, &trx(0, false), &r).mtrs()[1].bytes, 224);
    }

    #[test]
    fn an_index_update_in_the_buffer_pool() {
        let env = Env::default();
        let log = update_index(&env, &trx(0, false), &row());
        // Undo: type 1, undo_no 1, table id 1, info 1, DB_TRX_ID 5, roll pointer 8, id 5
        // = 22; one field k: count 1, field 3 -> 1, length 1, 4 bytes = 7; indexed
        // columns: length 2, id (1 + 1 + 4) and k (1 + 1 + 4) = 14. Body 43, record
        // 4 + 2 + 43 = 49.
        // Clustered: as the c update with a 4-byte field: 161 - 122 + 6 = 45.
        // Delete-mark: PAGE_MAX_TRX_ID 12 + MLOG_REC_SEC_DELETE_MARK 5 + 1 + 2 = 8, end:
        // 21.
        // Insert of (5_000_001, id) after its own old entry (5_000_000, id), now
        // delete-marked: prefix 5 + 3, tail 5; info bits differ, so the length word
        // 11 (1), info 1, header size 5 (1), prefix 8 (1): 5 + 8 + 2 + 1 + 1 + 1 + 1 + 5
        // = 24, alone (PAGE_MAX_TRX_ID already raised on this leaf).
        assert_eq!(sizes(&log), [49, 45, 21, 24]);
        assert_eq!(log.bytes(), 139);
        // The undo page, the clustered leaf, the k_1 leaf.
        assert_eq!(log.pages_dirtied(), 3);
        // First in its transaction: plus the 34-byte assignment.
        assert_eq!(update_index(&env, &trx(0, true), &row()).bytes(), 173);
        // (k + 1, id) on another leaf: its own PAGE_MAX_TRX_ID (12) and end byte.
        let mut r = row();
        r.sec_leaf_new = SEC_LEAF + 1;
        assert_eq!(sizes(&update_index(&env, &trx(0, false), &r))[3], 12 + 24 + 1);
        // After a live entry (5_000_000, id + 1): no extra info: 5 + 8 + 2 + 1 + 5 = 21.
        r = row();
        r.sec_prev = Some(Prev::Rec { k: 5_000_000, id: 5_000_001, delete_marked: false });
        assert_eq!(sizes(&update_index(&env, &trx(0, false), &r))[3], 21);
    }

    #[test]
    fn an_index_update_with_change_buffering() {
        let env = Env::default();
        let mut r = row();
        r.sec_in_pool = false;
        r.ibuf = IbufCtx {
            prev: IbufPrev::Rec { space: 25, page: 139_990, counter: 7 },
            bitmap_buffered: false,
            insert_fits: true,
        };
        let log = update_index_buffered(&env, &trx(0, false), &r);
        // Undo 49 and clustered 45 as in the buffer pool.
        // Bitmap: leaf 140_000's IBUF_BITMAP page is 1 + (140_000 & !16383) = 131_073
        // (3 bytes): MLOG_1BYTE 1 + 1 + 3 + 2 + 1 = 8, alone.
        // Delete-mark buffered: the change buffer record (45 bytes: 12 header, 33 data)
        // after page 139_990's record: equal end offsets, header differs, then space 4
        // + marker 1 + 3 bytes of page (0x000222E0 / 0x000222D6): prefix 12 + 8 = 20,
        // tail 25, length word 50 (1): 4 + 2 + 1 + 25 = 32; the change buffer leaf's
        // PAGE_MAX_TRX_ID 4 + 2 + 5 = 11; end: 44.
        // Insert buffered after it (same leaf, counter 0 -> 1): prefix 12 + 4 + 1 + 4
        // + 1 = 22, tail 23: 4 + 2 + 1 + 23 = 30, alone.
        assert_eq!(sizes(&log), [49, 45, 8, 44, 30]);
        assert_eq!(log.bytes(), 176);
        // Undo page, clustered leaf, bitmap page, change buffer leaf; not the k_1 leaf.
        assert_eq!(log.pages_dirtied(), 4);
        // A freshly prepared k_1 leaf has free bits 0: only the delete-mark is buffered,
        // the insert is done in the read leaf: PAGE_MAX_TRX_ID 12 + 24 + end 1 = 37.
        r.ibuf.insert_fits = false;
        assert_eq!(sizes(&update_index_buffered(&env, &trx(0, false), &r)), [49, 45, 8, 44, 37]);
        // Bit already set, change buffer leaf empty before it (infimum, all 45 bytes
        // logged: length word 91 (1), info 1, header size 12 (1), prefix 0 (1):
        // 4 + 2 + 1 + 1 + 1 + 1 + 45 = 55; with PAGE_MAX_TRX_ID 11 and end: 67.
        r.ibuf = IbufCtx { prev: IbufPrev::Infimum, bitmap_buffered: true, insert_fits: true };
        assert_eq!(sizes(&update_index_buffered(&env, &trx(0, false), &r)), [49, 45, 67, 30]);
    }

    #[test]
    fn a_delete() {
        let env = Env::default();
        let log = delete(&env, &trx(2, false), &row());
        // Undo TRX_UNDO_DEL_MARK_REC: 22 + indexed columns 14 = 36: 4 + 2 + 36 = 42.
        // MLOG_COMP_REC_CLUST_DELETE_MARK: 5 + 16 + flags 1 + value 1 + position 1 +
        // roll pointer 7 + trx id 5 + offset 2 = 38. k_1 delete-mark: 21.
        assert_eq!(sizes(&log), [42, 38, 21]);
        assert_eq!(log.bytes(), 101);
        let mut r = row();
        r.sec_in_pool = false;
        r.ibuf.prev = IbufPrev::Rec { space: 25, page: 139_990, counter: 0 };
        assert_eq!(sizes(&delete_buffered(&env, &trx(2, false), &r)), [42, 38, 8, 44]);
    }

    #[test]
    fn oltp_read_write_inserts_over_its_own_delete_mark() {
        let env = Env::default();
        let mut r = row();
        r.insert = InsertKind::OverDeleteMarked;
        let log = insert_clustered(&env, &trx(3, false), &r);
        // Undo TRX_UNDO_UPD_DEL_REC: 22 (the old roll pointer is this transaction's
        // update undo record in rseg 33: high half 33 << 16 = 0x210000, 4 bytes, 8 in
        // all); three fields: count 1, k (1 + 1 + 4), c (1 + 1 + 120), pad (1 + 1 + 60)
        // = 190; indexed columns 14: 22 + 1 + 190 + 14 = 227; record 233.
        // Update in place of k, c, pad: 39 + 6 + 122 + 62 = 229.
        assert_eq!(sizes(&log), [233, 229]);
        // k_1's new entry: 34, as an insert's.
        assert_eq!(insert_secondary(&env, &trx(4, false), &r).bytes(), 34);
    }

    #[test]
    fn an_oltp_read_write_transaction_through_the_tracker() {
        // One index update, one non-index update, a delete and an insert of the same id,
        // commit (sysbench's defaults: oltp_common.lua), each on a row of its own.
        let env = Env::default();
        let mut t = TrxRedo::begin(TRX);
        let ui = t.op(Op::UpdateIndex, Index::Clustered, &env, &row());
        let un = t.op(Op::UpdateNonIndex, Index::Clustered, &env, &row());
        let d = t.op(Op::Delete, Index::Clustered, &env, &row());
        let mut r = row();
        r.insert = InsertKind::OverDeleteMarked;
        let ic = t.op(Op::Insert, Index::Clustered, &env, &r);
        let is = t.op(Op::Insert, Index::Secondary, &env, &r);
        let c = t.op(Op::Commit, Index::Clustered, &env, &r);
        // 34 + 139; 312; 101; 462; 34; commit with DEL_MARKS kept 92.
        let parts = [ui.bytes(), un.bytes(), d.bytes(), ic.bytes(), is.bytes(), c.bytes()];
        assert_eq!(parts, [173, 312, 101, 462, 34, 92]);
        assert_eq!(parts.iter().sum::<u64>(), 1174);
        // The next transaction assigns its undo log again.
        assert_eq!(t.op(Op::UpdateNonIndex, Index::Clustered, &env, &row()).bytes(), 346);
        // Reads write nothing.
        assert_eq!(t.op(Op::Read, Index::Clustered, &env, &row()).mtrs().len(), 0);
    }

    #[test]
    fn with_the_binary_log_commits_are_prepared_first() {
        let env = Env { binlog: true, binlog_pos: 100_000_000, ..Env::default() };
        let c = CommitCtx { no: TRX + 1, insert_undo: false, update_undo: true, del_marks: true };
        let log = commit(&env, &c);
        // Prepare: PREPARED 7, XID_EXISTS 7, format 1, gtrid length 24, bqual 0: 7 each;
        // the XID: 4 + offset 2 + length 2 + 128 = 136; end: 7 * 5 + 136 + 1 = 172.
        // Commit: 92 less its end byte, plus the binary log offset on TRX_SYS (page 5:
        // header 1 + 1 + 1) 100_000_000 (4 bytes): 3 + 2 + 4 = 9, end: 92 + 9 = 101.
        assert_eq!(sizes(&log), [172, 101]);
        // Past 256 MiB the offset takes 5 bytes.
        let far = Env { binlog_pos: 300 << 20, ..env };
        assert_eq!(sizes(&commit(&far, &c)), [172, 102]);
    }

    #[test]
    fn the_first_change_after_a_checkpoint_names_the_file() {
        let mut r = row();
        r.first_since_checkpoint = true;
        let log = update_non_index(&Env::default(), &trx(1, false), &r);
        // MLOG_FILE_NAME: 1 + space 1 + page 0 (1) + length 2 + "./sbtest/sbtest1.ibd"
        // and its NUL (21) = 26; two records now: end byte. 161 + 26 + 1 = 188.
        assert_eq!(sizes(&log), [151, 188]);
        // Only the op's first mtr on the table names it: in a change-buffered delete the
        // clustered one (38 + 26 + 1), not the bitmap's (8).
        r.sec_in_pool = false;
        r.ibuf.prev = IbufPrev::Rec { space: 25, page: 139_990, counter: 0 };
        assert_eq!(sizes(&delete_buffered(&Env::default(), &trx(2, false), &r)), [42, 65, 8, 44]);
        // A k_1 insert (already two records): 34 + 26.
        r.sec_in_pool = true;
        assert_eq!(sizes(&insert_secondary(&Env::default(), &trx(1, false), &r)), [60]);
    }

    #[test]
    fn rows_of_a_ten_million_row_table_have_three_byte_page_numbers() {
        let layout = TableLayout::sysbench(10_000_000, 16384);
        let r = RowCtx::sysbench(&layout, 9_000_000, 9_000_000);
        assert!(r.clust_leaf >= 16384 && r.sec_leaf >= 16384, "{r:?}");
        // So the non-index update is the 312 bytes of the test above.
        assert_eq!(update_non_index(&Env::default(), &trx(1, false), &r).bytes(), 312);
        // A row in the first leaves has 1- or 2-byte page numbers: 2 or 1 bytes less.
        let r = RowCtx::sysbench(&layout, 1, 1);
        assert!(r.clust_leaf < 128);
        assert_eq!(update_non_index(&Env::default(), &trx(1, false), &r).bytes(), 312 - 2);
    }
}
