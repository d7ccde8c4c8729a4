//! The redo log that sysbench's writes produce in MariaDB 10.11: for each write (a
//! [`Lookup`](crate::workload::statement::Lookup)'s [`Op`]) the mini-transactions it
//! commits, the bytes each appends (`MariaRedoLog::append`) and the pages each dirties,
//! from 10.11's physical record format, for the sbtest table (id INT primary key, k INT
//! with index k_1, c CHAR(120), pad CHAR(60), all NOT NULL, DYNAMIC). The functions take
//! the types of [`redo_records`](super::super::redo_records) (MySQL 5.7's) so a driver
//! can call either server's behind a `match`, plus a [`MariaCtx`] of what 10.11's sizes
//! depend on that 5.7's do not.
//!
//! Mechanism.
//! - Record encoding (`mtr_t::log_write`, `mlog_encode_varint`; the format comment of
//!   `mtr0types.h`, MDEV-12353 in 10.5). A record starts with a byte of type (WRITE,
//!   MEMSET, MEMMOVE, EXTENDED, ...), a same-page flag and a 4-bit length of what
//!   follows; when that is over 15 bytes, 1 to 3 length bytes follow. Then, unless the
//!   record is on the page of the mtr's previous record, the space id and page number as
//!   varints (1 byte below 128, 2 below 16,512, 3 below 2,113,664, 4 below 270,549,120,
//!   else 5); a WRITE, MEMSET or MEMMOVE then has its page offset (varint), relative to
//!   where the previous record on the same page ended when it is on that page at or
//!   after it, else absolute with the page id. A WRITE carries the bytes; `mtr_t::write`
//!   and `mtr_t::memcpy` (but FORCED) log only from the first byte that differs from
//!   the page's old content to the end, and nothing when nothing differs. An mtr ends
//!   with the end byte and a CRC-32C (5 bytes). There is no index description, no
//!   compressed 64-bit values, no MLOG_MULTI_REC_END.
//! - Undo (`trx_undo_report_row_operation`): one mtr per undo record, on the undo page:
//!   the assignment of the transaction's undo log, when it is its first undo record,
//!   goes in the same mtr (`trx_undo_assign_low` → `trx_undo_reuse_cached` →
//!   `trx_undo_header_create`: a new log header at the page's free offset, logged as a
//!   MEMSET of TRX_UNDO_PAGE_START/FREE, the segment's state and last log (3 changed
//!   bytes), the previous header's TRX_UNDO_NEXT_LOG, TRX_UNDO_TRX_ID, NEEDS_PURGE and
//!   LOG_START, and zeroing MEMSETs of the rest of the header). Since 10.3 (MDEV-12288)
//!   a transaction has one undo log for inserts and updates. The record is an EXTENDED
//!   UNDO_APPEND (subtype byte, then the record less its two 2-byte links:
//!   `trx_undo_page_set_next_prev_and_add`, `mtr_t::undo_append`); its body
//!   (`trx_undo_page_report_modify`, `trx_undo_page_report_insert`) is 5.7's, but the
//!   columns of some index that a delete-mark or an indexed update stores after the
//!   update vector skip those the vector already holds.
//! - A clustered update in place (`btr_cur_update_in_place` → `btr_cur_upd_rec_sys`,
//!   `btr_cur_upd_rec_in_place`): a WRITE of DB_TRX_ID,DB_ROLL_PTR from their first
//!   changed byte (a row whose history purge has processed has them reset to 0 and
//!   1 << 55 since 10.3: `row_purge_reset_trx_id`), the info bits when they change, and
//!   a WRITE of each updated field from its first changed byte (k + 1: 1 byte).
//! - A delete-mark: clustered (`btr_cur_del_mark_set_clust_rec`): the info bits (1
//!   byte), then DB_TRX_ID,DB_ROLL_PTR; secondary (`btr_cur_del_mark_set_sec_rec` after
//!   `lock_sec_rec_modify_check_and_lock` → `page_update_max_trx_id`): PAGE_MAX_TRX_ID
//!   from its first changed byte when the transaction's id is above it, then the info
//!   bits.
//! - An insert (`page_cur_insert_rec_low` → `mtr_t::page_insert`): an EXTENDED
//!   INSERT_HEAP_DYNAMIC, or INSERT_REUSE_DYNAMIC when the page's PAGE_FREE record is
//!   reused (then a shift varint): the predecessor's offset from PAGE_NEW_INFIMUM, the
//!   header length and info bits, the header bytes shared with the predecessor, the
//!   data bytes shared with it (varints), then only the header and data bytes that
//!   differ. A k_1 insert then raises PAGE_MAX_TRX_ID (`row_ins_sec_index_entry_low`).
//!   With utf8mb4 (Debian's `character-set-server`), CHAR(120) and CHAR(60) are
//!   variable-length in DYNAMIC records: the clustered record has 2 length bytes more
//!   (208 bytes, not 206), shared with a user-record predecessor, not with the infimum.
//! - The statements: `UPDATE SET c` = undo (TRX_UNDO_UPD_EXIST_REC) + clustered update;
//!   `UPDATE SET k = k + 1` = undo (with id as index column) + clustered update + k_1
//!   delete-mark of (k, id) + k_1 insert of (k + 1, id); `DELETE` = undo
//!   (TRX_UNDO_DEL_MARK_REC with id and k) + clustered delete-mark + k_1 delete-mark;
//!   `INSERT` = undo (TRX_UNDO_INSERT_REC) + clustered insert, or, over the
//!   transaction's own delete-marked row (oltp_read_write's DELETE then INSERT of one
//!   id), undo TRX_UNDO_UPD_DEL_REC + update in place of k, c, pad and the delete mark
//!   (`row_ins_clust_index_entry_by_modify`; same sizes, so in place with either
//!   charset); then the k_1 insert. Change buffering is off (innodb_change_buffering
//!   defaults to none from 10.5.15/10.6.7, MDEV-27734; deprecated), so k_1 leaves are
//!   read and changed in place.
//! - The first change to a tablespace after a checkpoint (`mtr_t::do_write` →
//!   `mtr_t::name_write`, `mtr_t::log_file_op`) appends a separate mtr first: FILE_MODIFY
//!   with the space id, page 0 and the path without NUL ("./sbtest/sbtest1.ibd": 29
//!   bytes with its trailer). The undo mtrs (system tablespace) never need one.
//! - `COMMIT` (`trx_t::write_serialisation_history` → `trx_purge_add_undo_to_history`),
//!   one mtr, only with undo (binary log off: no binlog offset in the rollback segment
//!   header, no XA prepare): `flst_add_first` of the log's history node into the
//!   rollback segment's TRX_RSEG_HISTORY (`flst_insert_before`, or `flst_add_to_empty`
//!   on an empty history: each `flst_write_addr` logs 2, 4 or 6 bytes of a page/offset
//!   address, only from its first changed byte), the segment's state (CACHED when the
//!   log fits one page below 3/4 full; else TO_PURGE, freeing its slot, growing
//!   TRX_RSEG_HISTORY_SIZE and writing TRX_RSEG_MAX_TRX_ID), TRX_UNDO_TRX_NO. Undo logs
//!   are in the system tablespace: innodb_undo_tablespaces is 0 in 10.11 (3 from 11.0).
//!
//! Against `redo_records.rs` (MySQL 5.7.29) and the brief: the undo assignment is in
//! the undo record's mtr, not its own; an undo record of an indexed update stores id
//! only after the update vector (k is in it), where 5.7's module stores id and k (that
//! 5.7.29 does not skip them was not checked here); a transaction has one undo log, so
//! an oltp_read_write commit handles one log, not an insert and an update log; purge has
//! reset the untouched rows' DB_TRX_ID to 0 (5.7's module takes an old id); with
//! utf8mb4 (Debian's default) the clustered record is 208 bytes, not the 206 of 5.7's
//! modules and `btree::CLUSTERED_REC`, which changes the rows per leaf; change buffering is off by default, so the change-buffered paths of 5.7's
//! module have no counterpart here.
//!
//! Sources: MariaDB Server 10.11.18 (Debian's `mariadb_10.11.18.orig.tar.gz`),
//! `storage/innobase/`: `include/mtr0types.h` (record types, format), `include/mtr0log.h`
//! (`mlog_encode_varint`, `mtr_t::write`, `memset`, `memcpy`, `memmove`, `log_write`,
//! `undo_append`), `mtr/mtr0mtr.cc` (`mtr_t::crc32c`, `do_write`, `finish_writer`),
//! `fil/fil0fil.cc` (`mtr_t::log_file_op`, `mtr_t::name_write`), `page/page0cur.cc`
//! (`mtr_t::page_insert`, `page_cur_insert_rec_low`), `include/page0page.inl` and
//! `page/page0page.cc` (`page_update_max_trx_id`, `page_set_max_trx_id`),
//! `btr/btr0cur.cc` (`btr_cur_upd_rec_sys`, `btr_cur_upd_rec_in_place`,
//! `btr_cur_update_in_place`, `btr_rec_set_deleted`, `btr_cur_del_mark_set_clust_rec`,
//! `btr_cur_optimistic_insert`), `lock/lock0lock.cc` (`lock_rec_insert_check_and_lock`,
//! `lock_sec_rec_modify_check_and_lock`), `row/row0ins.cc`
//! (`row_ins_sec_index_entry_low`), `trx/trx0rec.cc` (`trx_undo_page_report_insert`,
//! `trx_undo_page_report_modify`, `trx_undo_page_set_next_prev_and_add`,
//! `trx_undo_report_row_operation`), `trx/trx0undo.cc` (`trx_undo_assign_low`,
//! `trx_undo_reuse_cached`, `trx_undo_header_create`), `include/trx0undo.h` and
//! `include/trx0rseg.h` (offsets), `trx/trx0purge.cc` (`trx_purge_add_undo_to_history`),
//! `trx/trx0trx.cc` (`trx_t::write_serialisation_history`), `fut/fut0lst.cc`
//! (`flst_write_addr`, `flst_zero_both`, `flst_add_to_empty`, `flst_insert_before`,
//! `flst_add_first`), `include/mach0data.inl` (`mach_write_compressed` and the u64
//! forms, unchanged from 5.7), `handler/ha_innodb.cc` (innodb_change_buffering none,
//! innodb_undo_tablespaces 0); Debian's `debian/additions/mariadb.conf.d/50-server.cnf`
//! (character-set-server = utf8mb4).
//!
//! Simplifications:
//! 1. Only the optimistic paths, as in 5.7's module: no page split or reorganize, no
//!    undo page added, no page directory slot split (`page_dir_split_slot`, every 8th
//!    insert into a slot).
//! 2. Undo logs come from the rollback segment's cache (`trx_undo_reuse_cached`) with a
//!    previous log on the page (`prev_log`): no `trx_undo_create`.
//! 3. The bytes of the page a WRITE compares with are inputs or fixed: a fresh undo log
//!    header's area is zero; a k_1 leaf's PAGE_MAX_TRX_ID was set
//!    [`MariaCtx::sec_max_trx_id_age`] transactions ago; a new c or pad differs from the
//!    old from its first byte (random digits); DB_ROLL_PTR of the transaction's own two
//!    undo records differs in its 2 offset bytes.
//! 4. `btr_cur_upd_rec_sys`'s MEMMOVE from the predecessor's DB_TRX_ID,DB_ROLL_PTR (when
//!    more than 6 bytes equal: the same transaction changed the previous record too) is
//!    not modelled.
//! 5. Background redo (purge, page flushing's checkpoints) is not the statement's.
//! 6. The binary log (XA prepare, TRX_RSEG_BINLOG_OFFSET/NAME) is not modelled: the
//!    experiment runs without it; `Env::binlog` is ignored.
//! 7. Page numbers, record offsets and undo header offsets are inputs ([`Env`],
//!    [`MariaCtx`]); only their varint sizes matter.

use crate::db::innodb::redo_records::{
    CommitCtx, Env, InsertKind, Mtr, MtrLog, PageKind, PageRef, Prev, RollPtr, RowCtx, TrxCtx,
};
use crate::workload::statement::{Index, Op};

use super::MTR_TRAILER;

/// FIL_PAGE_TYPE: where an EXTENDED record leaves the mtr's current offset.
const FIL_PAGE_TYPE: u32 = 24;
/// PAGE_HEADER + PAGE_MAX_TRX_ID.
const PAGE_MAX_TRX_ID: u32 = 38 + 18;
/// PAGE_NEW_INFIMUM: insert records give the predecessor's offset from it.
const PAGE_NEW_INFIMUM: u32 = 99;
/// REC_N_NEW_EXTRA_BYTES.
const REC_N_NEW_EXTRA_BYTES: u32 = 5;
/// REC_NEW_INFO_BITS: the info bits byte sits 5 bytes before the record's origin.
const REC_NEW_INFO_BITS: u32 = 5;
/// REC_INFO_DELETED_FLAG.
const REC_INFO_DELETED_FLAG: u8 = 0x20;
/// TRX_UNDO_PAGE_HDR (FSEG_PAGE_DATA) + TRX_UNDO_PAGE_START.
const UNDO_PAGE_START: u32 = 38 + 2;
/// TRX_UNDO_SEG_HDR (38 + TRX_UNDO_PAGE_HDR_SIZE 18) + TRX_UNDO_STATE.
const UNDO_STATE: u32 = 56;
/// Offsets in an undo log header (`trx0undo.h`).
const UNDO_TRX_ID: u32 = 0;
const UNDO_TRX_NO: u32 = 8;
const UNDO_NEEDS_PURGE: u32 = 16;
const UNDO_XID_EXISTS: u32 = 20;
const UNDO_NEXT_LOG: u32 = 30;
const UNDO_PREV_LOG: u32 = 32;
const UNDO_HISTORY_NODE: u32 = 34;
/// TRX_UNDO_LOG_XA_HDR_SIZE: TRX_UNDO_LOG_OLD_HDR_SIZE (34 + 12) + 12 + XIDDATASIZE 128.
const UNDO_LOG_XA_HDR_SIZE: u32 = 46 + 12 + 128;
/// FLST_NODE_SIZE, FIL_ADDR_SIZE.
const FLST_NODE_SIZE: u32 = 12;
const FIL_ADDR_SIZE: u32 = 6;
/// TRX_RSEG (FSEG_PAGE_DATA) + TRX_RSEG_HISTORY_SIZE, + TRX_RSEG_HISTORY (the base
/// node: FLST_LEN 4, FLST_FIRST 6, FLST_LAST 6), + TRX_RSEG_UNDO_SLOTS.
const RSEG_HISTORY_SIZE: u32 = 38 + 4;
const RSEG_HISTORY: u32 = 38 + 8;
const RSEG_UNDO_SLOTS: u32 = 38 + 8 + 16 + 10;
/// Undo segment states (`trx0undo.h`).
const TRX_UNDO_ACTIVE: u16 = 1;
const TRX_UNDO_CACHED: u16 = 2;
const TRX_UNDO_TO_PURGE: u16 = 4;
/// FIL_NULL.
const FIL_NULL: u32 = 0xFFFF_FFFF;
/// A purged row's DB_ROLL_PTR (`row_purge_reset_trx_id`: 1 << ROLL_PTR_INSERT_FLAG_POS).
pub const RESET_ROLL_PTR: RollPtr = RollPtr { insert: true, rseg: 0, page: 0, offset: 0 };
/// DB_TRX_ID 6, DB_ROLL_PTR 7 bytes.
const SYS_LEN: u32 = 13;
/// Field offsets in the clustered record: id 4, DB_TRX_ID, DB_ROLL_PTR, k, c, pad.
const OFS_TRX_ID: u32 = 4;
const OFS_K: u32 = 4 + SYS_LEN;
const OFS_C: u32 = OFS_K + 4;
const OFS_PAD: u32 = OFS_C + C_LEN;
/// Column lengths (c and pad as stored: 120 and 60 bytes in latin1 and, for sysbench's
/// ASCII values, in utf8mb4).
const INT_LEN: u32 = 4;
const C_LEN: u32 = 120;
const PAD_LEN: u32 = 60;
/// Field positions in the clustered index (`dict_col_get_clust_pos`).
const POS_ID: u32 = 0;
const POS_K: u32 = 3;
const POS_C: u32 = 4;
const POS_PAD: u32 = 5;
/// Clustered record data: id 4, DB_TRX_ID 6, DB_ROLL_PTR 7, k 4, c 120, pad 60.
const CLUST_DATA: u32 = 4 + SYS_LEN + 4 + C_LEN + PAD_LEN;
/// k_1 record data: k 4, id 4.
const SEC_DATA: u32 = 8;
/// The data of a COMPACT infimum record, which an insert compares at most 8 bytes of.
const INFIMUM: &[u8; 8] = b"infimum\0";
/// EXTENDED subtypes (`mrec_ext_t`) are one byte.
const SUBTYPE: u64 = 1;

/// The server's character set for the sbtest columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Charset {
    /// latin1: CHAR(n) fixed-length, a 5-byte record header.
    Latin1,
    /// utf8mb4 (Debian's default): CHAR(n) variable-length in DYNAMIC, a 1-byte length
    /// each for c and pad in the header (7 bytes).
    #[default]
    Utf8mb4,
}

impl Charset {
    /// Bytes of the clustered record's header (REC_N_NEW_EXTRA_BYTES plus lengths).
    pub fn clust_extra(self) -> u32 {
        match self {
            Charset::Latin1 => REC_N_NEW_EXTRA_BYTES,
            Charset::Utf8mb4 => REC_N_NEW_EXTRA_BYTES + 2,
        }
    }
}

/// What 10.11's record sizes depend on beyond [`Env`] and [`RowCtx`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MariaCtx {
    /// The columns' character set.
    pub charset: Charset,
    /// TRX_UNDO_LAST_LOG of the cached undo page before a reuse: the previous log
    /// header's offset (the new one goes at `Env::undo.update_hdr_offset`).
    pub undo_prev_log: u32,
    /// The row's record offset in its clustered leaf (the predecessor's, for a fresh
    /// insert).
    pub clust_rec_offset: u32,
    /// The k_1 record's offset in its leaf (an insert's predecessor's).
    pub sec_rec_offset: u32,
    /// How many transaction ids ago the k_1 leaf's PAGE_MAX_TRX_ID was set.
    pub sec_max_trx_id_age: u64,
    /// A k_1 insert reuses the leaf's PAGE_FREE record (purge freed one of equal size).
    pub sec_reuse_free: bool,
    /// A clustered insert reuses the leaf's PAGE_FREE record.
    pub clust_reuse_free: bool,
    /// For an insert over a delete-marked row: that row's k.
    pub deleted_k: i64,
}

impl Default for MariaCtx {
    /// utf8mb4; undo headers at 1800 then 2000 (`Env::default`); records mid-page
    /// (2-byte offsets); PAGE_MAX_TRX_ID 100 transactions old; k_1 inserts into freed
    /// space (purge removes the delete-marked entries the updates leave), clustered ones
    /// not; the deleted row's k 74,565.
    fn default() -> Self {
        MariaCtx {
            charset: Charset::Utf8mb4,
            undo_prev_log: 1800,
            clust_rec_offset: 8000,
            sec_rec_offset: 8000,
            sec_max_trx_id_age: 100,
            sec_reuse_free: true,
            clust_reuse_free: false,
            deleted_k: 74_565,
        }
    }
}

/// Row `id` with `k` in leaves `clust_leaf` and `sec_leaf` whose history purge has
/// processed: DB_TRX_ID 0 and DB_ROLL_PTR 1 << 55 (`row_purge_reset_trx_id`).
pub fn purged_row(id: i64, k: i64, clust_leaf: u32, sec_leaf: u32) -> RowCtx {
    let mut r = RowCtx::new(id, k, clust_leaf, sec_leaf);
    r.old_trx_id = 0;
    r.old_roll_ptr = RESET_ROLL_PTR;
    r
}

/// Bytes of `mlog_encode_varint(n)`.
pub fn varint_size(n: u64) -> u64 {
    match n {
        0..=0x7F => 1,
        0x80..=0x407F => 2,
        0x4080..=0x20_407F => 3,
        0x20_4080..=0x1020_407F => 4,
        _ => 5,
    }
}

/// Bytes of `mach_write_compressed(n)` (undo records; as 5.7).
fn compressed_size(n: u64) -> u64 {
    match n {
        0..=0x7F => 1,
        0x80..=0x3FFF => 2,
        0x4000..=0x1F_FFFF => 3,
        0x20_0000..=0x0FFF_FFFF => 4,
        _ => 5,
    }
}

/// `mach_u64_write_compressed`: the high half compressed, the low half 4 bytes.
fn u64_compressed_size(n: u64) -> u64 {
    compressed_size(n >> 32) + 4
}

/// `mach_u64_write_much_compressed`.
fn u64_much_compressed_size(n: u64) -> u64 {
    if n >> 32 == 0 {
        compressed_size(n)
    } else {
        1 + compressed_size(n >> 32) + compressed_size(n & 0xFFFF_FFFF)
    }
}

/// A record's total bytes when `rest` bytes follow its first byte, length bytes aside
/// (`mtr_t::log_write`: a 4-bit length up to 15, else 1 to 3 length bytes).
pub fn record_size(rest: u64) -> u64 {
    if rest <= 15 {
        1 + rest
    } else if rest - 14 < 0x80 {
        2 + rest
    } else if rest - 13 < 0x4080 {
        3 + rest
    } else {
        4 + rest
    }
}

/// A FILE_MODIFY record of `space` and a path of `path_len` bytes (`mtr_t::log_file_op`:
/// type and length, space id, page 0, the path without NUL).
pub fn file_modify_record(space: u32, path_len: u32) -> u64 {
    let rest = varint_size(u64::from(space)) + 1 + u64::from(path_len);
    if rest < 15 {
        1 + rest
    } else {
        let total = rest - 14;
        let total = if total >= 0x4080 {
            total + 2
        } else if total >= 0x80 {
            total + 1
        } else {
            total
        };
        1 + varint_size(total) + rest
    }
}

/// Bytes of `new` a WRITE logs over `old` (`mtr_t::write`, `mtr_t::memcpy`): from the
/// first that differs to the end; 0 when equal.
fn changed(old: &[u8], new: &[u8]) -> u32 {
    let common = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    (new.len() - common.min(new.len())) as u32
}

/// A signed INT as InnoDB stores it: big-endian, sign bit flipped.
fn int_bytes(v: i64) -> [u8; 4] {
    ((v as i32 as u32) ^ 0x8000_0000).to_be_bytes()
}

/// DB_TRX_ID (6 bytes) and DB_ROLL_PTR (7 bytes) as stored.
fn sys_bytes(trx_id: u64, roll_ptr: u64) -> [u8; 13] {
    let mut b = [0u8; 13];
    b[..6].copy_from_slice(&trx_id.to_be_bytes()[2..]);
    b[6..].copy_from_slice(&roll_ptr.to_be_bytes()[1..]);
    b
}

/// Purge's removal of a delete-marked k_1 entry (`row_purge_remove_sec_if_poss_leaf` →
/// `page_cur_delete_rec` → `mtr_t::page_delete`): an EXTENDED DELETE_ROW_FORMAT_DYNAMIC
/// with the predecessor's offset from PAGE_NEW_INFIMUM, the header size with extra bytes
/// and the data size (varints).
pub fn purge_sec_delete(env: &Env, leaf: u32) -> Mtr {
    let mut e = Enc::new();
    let prev = varint_size(u64::from(page_ofs(env.page_size / 2)));
    e.extended(sec_page(env, leaf), 1 + prev + varint_size(5) + varint_size(8));
    e.finish()
}

/// Purge's removal of a delete-marked clustered record: as [`purge_sec_delete`] on the
/// clustered leaf (201 bytes of data; utf8mb4's two length bytes in the header).
pub fn purge_clust_delete(env: &Env, m: &MariaCtx, row: &RowCtx) -> Mtr {
    let mut e = Enc::new();
    let prev = varint_size(u64::from(page_ofs(env.page_size / 2)));
    let extra = u64::from(m.charset.clust_extra());
    e.extended(clust_page(env, row), 1 + prev + varint_size(extra) + varint_size(201));
    e.finish()
}

/// `row_purge_reset_trx_id`: DB_TRX_ID and DB_ROLL_PTR of the row whose history purge
/// processed become 0 and 1 << 55 (`mtr_t::memcpy<MAYBE_NOP>`: a WRITE from the first
/// changed byte), the old ones being the transaction's id `trx_id` and an update roll
/// pointer.
pub fn purge_reset_trx_id(env: &Env, row: &RowCtx, trx_id: u64) -> Mtr {
    let mut e = Enc::new();
    let old = sys_bytes(trx_id, 1 << 47);
    let new = sys_bytes(0, 1 << 55);
    e.write_over(clust_page(env, row), page_ofs(env.page_size / 2), &old, &new);
    e.finish()
}

/// Truncation's removal of the oldest log from its history list (`trx_purge_remove_log_hdr`
/// → `flst_remove`): the younger log's FLST_NEXT (6 bytes: FIL_NULL and offset), the base
/// node's FLST_LAST (6) and FLST_LEN (its last byte) as WRITEs; a segment not cached also
/// frees its page (`trx_purge_free_segment`: ASSUMED eight 4-byte WRITEs on the space
/// header page 0 and the inode page 2) and lowers TRX_RSEG_HISTORY_SIZE.
pub fn purge_history_remove(
    env: &Env,
    log_page: u32,
    younger: Option<(u32, u32)>,
    free_segment: bool,
) -> Mtr {
    let mut e = Enc::new();
    let rseg = rseg_page(env);
    if let Some((page, offset)) = younger {
        let p = PageRef { kind: PageKind::HistoryPrev, space: 0, page };
        e.at(p, page_ofs(offset), 6, page_ofs(offset) + 6);
    } else {
        e.at(rseg, 128, 6, 134);
    }
    e.at(rseg, 134, 6, 140);
    e.at(rseg, 140, 1, 141);
    if free_segment {
        e.at(rseg, 144, 1, 145);
        let _ = log_page;
        for i in 0..8u32 {
            let page = if i < 4 { 0 } else { 2 };
            e.at(PageRef { kind: PageKind::Undo, space: 0, page }, 150 + 8 * i, 4, 154 + 8 * i);
        }
    }
    e.finish()
}

/// An mtr being encoded: the bytes of its records as `mtr_t::log_write` sizes them,
/// tracking the page and offset a same-page record is relative to (`m_last`,
/// `m_last_offset`).
struct Enc {
    m: Mtr,
    last: Option<(u32, u32)>,
    last_offset: u32,
}

impl Enc {
    fn new() -> Enc {
        Enc { m: Mtr::default(), last: None, last_offset: 0 }
    }

    fn same(&self, p: &PageRef) -> bool {
        self.last == Some((p.space, p.page))
    }

    fn ids(p: &PageRef) -> u64 {
        varint_size(u64::from(p.space)) + varint_size(u64::from(p.page))
    }

    /// A record with an offset (WRITE, MEMSET, MEMMOVE) at `off` carrying `data` bytes
    /// after it; the current offset becomes `end`.
    fn at(&mut self, p: PageRef, off: u32, data: u64, end: u32) {
        let rest = if self.same(&p) && self.last_offset <= off {
            varint_size(u64::from(off - self.last_offset))
        } else {
            Enc::ids(&p) + varint_size(u64::from(off))
        } + data;
        self.m.add_record(Some(p), record_size(rest));
        self.last = Some((p.space, p.page));
        self.last_offset = end;
    }

    /// WRITE of the `n` last bytes of a field ending at `end` (`n` = [`changed`]).
    fn write(&mut self, p: PageRef, end: u32, n: u32) {
        if n > 0 {
            self.at(p, end - n, u64::from(n), end);
        }
    }

    /// A WRITE of `new` over `old` at `off`.
    fn write_over(&mut self, p: PageRef, off: u32, old: &[u8], new: &[u8]) {
        self.write(p, off + new.len() as u32, changed(old, new));
    }

    /// MEMSET of `len` bytes at `off` with a pattern of `size` bytes.
    fn memset(&mut self, p: PageRef, off: u32, len: u32, size: u64) {
        self.at(p, off, varint_size(u64::from(len)) + size, off + len);
    }

    /// MEMMOVE of `len` bytes from `src` to `dest`.
    fn memmove(&mut self, p: PageRef, dest: u32, src: u32, len: u32) {
        let s = if src > dest { (src - dest) << 1 } else { (dest - src) << 1 | 1 } - 2;
        let data = varint_size(u64::from(len)) + varint_size(u64::from(s));
        self.at(p, dest, data, dest + len);
    }

    /// An EXTENDED record of `payload` bytes (subtype included).
    fn extended(&mut self, p: PageRef, payload: u64) {
        let rest = if self.same(&p) { 0 } else { Enc::ids(&p) } + payload;
        self.m.add_record(Some(p), record_size(rest));
        self.last = Some((p.space, p.page));
        self.last_offset = FIL_PAGE_TYPE;
    }

    /// The mtr with its end byte and checksum (none without records).
    fn finish(mut self) -> Mtr {
        if self.m.records > 0 {
            self.m.add_bytes(MTR_TRAILER);
        }
        self.m
    }
}

/// An offset from the inputs kept within a page (at most 64 KiB, innodb_page_size's
/// largest) and past the page header, so that the encoder's arithmetic cannot overflow.
fn page_ofs(x: u32) -> u32 {
    x.clamp(128, (64 << 10) - 512)
}

fn undo_page(env: &Env) -> PageRef {
    PageRef { kind: PageKind::Undo, space: 0, page: env.undo.update_page }
}

fn rseg_page(env: &Env) -> PageRef {
    PageRef { kind: PageKind::RsegHeader, space: 0, page: env.undo.rseg_page }
}

fn clust_page(env: &Env, row: &RowCtx) -> PageRef {
    PageRef { kind: PageKind::ClusteredLeaf, space: env.space_id, page: row.clust_leaf }
}

fn sec_page(env: &Env, page: u32) -> PageRef {
    PageRef { kind: PageKind::SecondaryLeaf, space: env.space_id, page }
}

/// `trx_undo_header_create` on a cached undo page: see the module docs.
fn assign_undo(e: &mut Enc, env: &Env, m: &MariaCtx, trx: &TrxCtx) {
    let p = undo_page(env);
    let free = page_ofs(env.undo.update_hdr_offset);
    let prev = if m.undo_prev_log == 0 { 0 } else { page_ofs(m.undo_prev_log) };
    let start = free.saturating_add(UNDO_LOG_XA_HDR_SIZE);
    // TRX_UNDO_PAGE_START and FREE: MEMSET of 4 bytes with a 2-byte pattern.
    e.memset(p, UNDO_PAGE_START, 4, 2);
    // TRX_UNDO_STATE, TRX_UNDO_LAST_LOG: (CACHED, prev) -> (ACTIVE, free).
    let mut old = [0u8; 4];
    old[..2].copy_from_slice(&TRX_UNDO_CACHED.to_be_bytes());
    old[2..].copy_from_slice(&(prev as u16).to_be_bytes());
    let mut new = [0u8; 4];
    new[..2].copy_from_slice(&TRX_UNDO_ACTIVE.to_be_bytes());
    new[2..].copy_from_slice(&(free as u16).to_be_bytes());
    e.write_over(p, UNDO_STATE, &old, &new);
    // The previous header's TRX_UNDO_NEXT_LOG: 0 -> free.
    if prev != 0 {
        e.write_over(p, prev.saturating_add(UNDO_NEXT_LOG), &[0, 0], &(free as u16).to_be_bytes());
    }
    // TRX_UNDO_TRX_ID over the zeros of the page's free area.
    e.write_over(p, free + UNDO_TRX_ID, &[0; 8], &trx.id.to_be_bytes());
    // TRX_UNDO_NEEDS_PURGE = 1 and TRX_UNDO_LOG_START.
    let mut np = [0u8; 4];
    np[1] = 1;
    np[2..].copy_from_slice(&(start as u16).to_be_bytes());
    e.write_over(p, free + UNDO_NEEDS_PURGE, &[0; 4], &np);
    if prev != 0 {
        e.memset(p, free + UNDO_XID_EXISTS, UNDO_PREV_LOG - UNDO_XID_EXISTS, 1);
        e.write_over(p, free + UNDO_PREV_LOG, &[0, 0], &(prev as u16).to_be_bytes());
        e.memset(p, free + UNDO_HISTORY_NODE, FLST_NODE_SIZE, 1);
    } else {
        e.memset(p, free + UNDO_XID_EXISTS, UNDO_HISTORY_NODE + FLST_NODE_SIZE - UNDO_XID_EXISTS, 1);
    }
}

/// The undo mtr: [assignment], UNDO_APPEND of a record of `body` bytes.
fn undo_mtr(env: &Env, m: &MariaCtx, trx: &TrxCtx, body: u64) -> Mtr {
    let mut e = Enc::new();
    if trx.first_undo {
        assign_undo(&mut e, env, m, trx);
    }
    e.extended(undo_page(env), SUBTYPE + body);
    e.finish()
}

/// The body of an update undo record (`trx_undo_page_report_modify`) of a row whose
/// DB_TRX_ID, DB_ROLL_PTR were `old_trx_id`, `old_roll_ptr`: `update` lists the updated
/// fields (position, old length; `None` for a delete-mark); with `ord`, the columns of
/// some index (id, k) not in the update vector.
fn undo_modify_body(
    env: &Env,
    trx: &TrxCtx,
    old_trx_id: u64,
    old_roll_ptr: u64,
    update: Option<&[(u32, u32)]>,
    ord: bool,
) -> u64 {
    let mut n = 1
        + u64_much_compressed_size(trx.undo_no)
        + u64_much_compressed_size(env.table_id)
        + 1
        + u64_compressed_size(old_trx_id)
        + u64_compressed_size(old_roll_ptr)
        + compressed_size(u64::from(INT_LEN))
        + u64::from(INT_LEN);
    let fields = update.unwrap_or(&[]);
    if update.is_some() {
        n += compressed_size(fields.len() as u64);
        for &(pos, len) in fields {
            n += compressed_size(u64::from(pos)) + compressed_size(u64::from(len)) + u64::from(len);
        }
    }
    if ord {
        n += 2;
        for (pos, len) in [(POS_ID, INT_LEN), (POS_K, INT_LEN)] {
            if !fields.iter().any(|f| f.0 == pos) {
                n += compressed_size(u64::from(pos)) + compressed_size(u64::from(len)) + u64::from(len);
            }
        }
    }
    n
}

/// The new DB_ROLL_PTR of an update by `trx`: its undo record on the undo page (the
/// offset bytes differ from any old value: simplification 3).
fn new_roll_ptr(env: &Env) -> u64 {
    RollPtr { insert: false, rseg: env.undo.rseg_id, page: env.undo.update_page, offset: 0xFFFF }.value()
}

/// `btr_cur_upd_rec_sys`: the WRITE of DB_TRX_ID,DB_ROLL_PTR over the row's old ones.
fn write_sys(e: &mut Enc, p: PageRef, rec: u32, old: [u8; 13], new: [u8; 13]) {
    e.write_over(p, rec + OFS_TRX_ID, &old, &new);
}

/// The clustered mtr of an update in place setting `fields` (position in the record,
/// logged bytes), with the delete mark cleared when `undelete`.
fn clust_update_mtr(
    env: &Env,
    m: &MariaCtx,
    row: &RowCtx,
    sys_old: [u8; 13],
    sys_new: [u8; 13],
    undelete: bool,
    fields: &[(u32, u32)],
) -> Mtr {
    let p = clust_page(env, row);
    let rec = page_ofs(m.clust_rec_offset);
    let mut e = Enc::new();
    write_sys(&mut e, p, rec, sys_old, sys_new);
    if undelete {
        e.write(p, rec - REC_NEW_INFO_BITS + 1, 1);
    }
    for &(ofs, n) in fields {
        e.write(p, rec + ofs, n);
    }
    e.finish()
}

/// The k_1 delete-mark mtr: PAGE_MAX_TRX_ID raised, the info bits.
fn sec_delete_mark_mtr(env: &Env, m: &MariaCtx, trx: &TrxCtx, row: &RowCtx) -> Mtr {
    let p = sec_page(env, row.sec_leaf);
    let mut e = Enc::new();
    let old_max = trx.id.saturating_sub(m.sec_max_trx_id_age);
    e.write_over(p, PAGE_MAX_TRX_ID, &old_max.to_be_bytes(), &trx.id.to_be_bytes());
    let info = page_ofs(m.sec_rec_offset) - REC_NEW_INFO_BITS;
    e.write_over(p, info, &[0], &[REC_INFO_DELETED_FLAG]);
    e.finish()
}

/// The payload of INSERT_HEAP_DYNAMIC / INSERT_REUSE_DYNAMIC (`mtr_t::page_insert`) of
/// a record with `extra` header bytes and data starting `key`, of `data_size` bytes,
/// after a predecessor at `prev_offset` (`None`: the infimum) whose header shares
/// `hdr_common` bytes and whose data starts `prev_key`.
fn insert_payload(
    reuse: bool,
    prev_offset: Option<u32>,
    extra: u32,
    hdr_common: u32,
    data_size: u32,
    key: &[u8],
    prev_key: &[u8],
) -> u64 {
    let (prev_rec, data_common) = match prev_offset {
        Some(o) => (o.saturating_sub(PAGE_NEW_INFIMUM), changed_prefix(key, prev_key)),
        None => (0, changed_prefix(key, INFIMUM)),
    };
    let hdr_l = extra - hdr_common - REC_N_NEW_EXTRA_BYTES;
    let data_l = data_size - data_common;
    let enc_hdr_l = u64::from(hdr_l) << 3;
    SUBTYPE
        + varint_size(u64::from(prev_rec))
        + if reuse { 1 } else { 0 } // the shift of an equal-sized freed record: 0
        + varint_size(enc_hdr_l)
        + varint_size(u64::from(hdr_common))
        + varint_size(u64::from(data_common))
        + u64::from(hdr_l + data_l)
}

/// Bytes two keys share from their start.
fn changed_prefix(a: &[u8], b: &[u8]) -> u32 {
    a.iter().zip(b).take_while(|(x, y)| x == y).count() as u32
}

fn sec_key(k: i64, id: i64) -> [u8; 8] {
    let mut b = [0u8; 8];
    b[..4].copy_from_slice(&int_bytes(k));
    b[4..].copy_from_slice(&int_bytes(id));
    b
}

/// The k_1 insert mtr of the entry (k, id) into `leaf` after `prev`: the insert, then
/// PAGE_MAX_TRX_ID unless the op already raised it on this leaf.
fn sec_insert_mtr(
    env: &Env,
    m: &MariaCtx,
    trx: &TrxCtx,
    leaf: u32,
    (k, id): (i64, i64),
    prev: Prev,
    max_set: bool,
) -> Mtr {
    let p = sec_page(env, leaf);
    let mut e = Enc::new();
    let (prev_offset, prev_key) = match prev {
        Prev::Infimum => (None, [0u8; 8]),
        Prev::Rec { k, id, .. } => (Some(page_ofs(m.sec_rec_offset)), sec_key(k, id)),
    };
    let payload = insert_payload(
        m.sec_reuse_free,
        prev_offset,
        REC_N_NEW_EXTRA_BYTES,
        0,
        SEC_DATA,
        &sec_key(k, id),
        &prev_key,
    );
    e.extended(p, payload);
    if !max_set {
        let old_max = trx.id.saturating_sub(m.sec_max_trx_id_age);
        e.write_over(p, PAGE_MAX_TRX_ID, &old_max.to_be_bytes(), &trx.id.to_be_bytes());
    }
    e.finish()
}

/// A separate FILE_MODIFY mtr before the op's first mtr on the table, after a
/// checkpoint (`mtr_t::name_write`).
fn file_modify_mtr(env: &Env) -> Mtr {
    let mut m = Mtr::default();
    m.add_record(None, file_modify_record(env.space_id, env.file_name_len));
    m.add_bytes(MTR_TRAILER);
    m
}

fn log_of(env: &Env, row: &RowCtx, undo: Option<Mtr>, table: &[Mtr]) -> MtrLog {
    let mut log = MtrLog::default();
    if let Some(u) = undo {
        log.push_framed(u);
    }
    if row.first_since_checkpoint {
        log.push_framed(file_modify_mtr(env));
    }
    for &t in table {
        log.push_framed(t);
    }
    log
}

fn sys_new(env: &Env, trx: &TrxCtx) -> [u8; 13] {
    sys_bytes(trx.id, new_roll_ptr(env))
}

/// `UPDATE sbtest SET c = ? WHERE id = ?`: the undo mtr (TRX_UNDO_UPD_EXIST_REC with
/// the old c), the clustered update of DB_TRX_ID,DB_ROLL_PTR and c.
pub fn update_non_index(env: &Env, m: &MariaCtx, trx: &TrxCtx, row: &RowCtx) -> MtrLog {
    let body =
        undo_modify_body(env, trx, row.old_trx_id, row.old_roll_ptr.value(), Some(&[(POS_C, C_LEN)]), false);
    let undo = undo_mtr(env, m, trx, body);
    let old = sys_bytes(row.old_trx_id, row.old_roll_ptr.value());
    let clust = clust_update_mtr(env, m, row, old, sys_new(env, trx), false, &[(OFS_C + C_LEN, C_LEN)]);
    log_of(env, row, Some(undo), &[clust])
}

/// `UPDATE sbtest SET k = k + 1 WHERE id = ?`: the undo mtr (the old k; id as index
/// column), the clustered update (k's changed bytes), the k_1 delete-mark of (k, id),
/// the insert of (k + 1, id) after it.
pub fn update_index(env: &Env, m: &MariaCtx, trx: &TrxCtx, row: &RowCtx) -> MtrLog {
    let body =
        undo_modify_body(env, trx, row.old_trx_id, row.old_roll_ptr.value(), Some(&[(POS_K, INT_LEN)]), true);
    let undo = undo_mtr(env, m, trx, body);
    let old = sys_bytes(row.old_trx_id, row.old_roll_ptr.value());
    let k_bytes = changed(&int_bytes(row.k), &int_bytes(row.k.wrapping_add(1)));
    let clust = clust_update_mtr(env, m, row, old, sys_new(env, trx), false, &[(OFS_K + INT_LEN, k_bytes)]);
    let del = sec_delete_mark_mtr(env, m, trx, row);
    let prev = row.sec_prev.unwrap_or(Prev::Rec { k: row.k, id: row.id, delete_marked: true });
    let same_leaf = row.sec_leaf_new == row.sec_leaf;
    let ins = sec_insert_mtr(env, m, trx, row.sec_leaf_new, (row.k.wrapping_add(1), row.id), prev, same_leaf);
    log_of(env, row, Some(undo), &[clust, del, ins])
}

/// `DELETE FROM sbtest WHERE id = ?`: the undo mtr (TRX_UNDO_DEL_MARK_REC: id and k),
/// the clustered delete-mark (info bits, DB_TRX_ID,DB_ROLL_PTR), the k_1 delete-mark.
pub fn delete(env: &Env, m: &MariaCtx, trx: &TrxCtx, row: &RowCtx) -> MtrLog {
    let body = undo_modify_body(env, trx, row.old_trx_id, row.old_roll_ptr.value(), None, true);
    let undo = undo_mtr(env, m, trx, body);
    let p = clust_page(env, row);
    let rec = page_ofs(m.clust_rec_offset);
    let mut e = Enc::new();
    e.write(p, rec - REC_NEW_INFO_BITS + 1, 1);
    write_sys(&mut e, p, rec, sys_bytes(row.old_trx_id, row.old_roll_ptr.value()), sys_new(env, trx));
    let clust = e.finish();
    let del = sec_delete_mark_mtr(env, m, trx, row);
    log_of(env, row, Some(undo), &[clust, del])
}

/// The clustered part of `INSERT INTO sbtest (id, k, c, pad)`. A fresh id: the undo
/// mtr (TRX_UNDO_INSERT_REC), the record inserted after `row.clust_prev` (default: id -
/// 1). An id this transaction delete-marked: the undo mtr (TRX_UNDO_UPD_DEL_REC with the
/// old k, c, pad and id; DB_TRX_ID and DB_ROLL_PTR its own), the update in place of
/// DB_TRX_ID,DB_ROLL_PTR (the roll pointer's offset bytes), the info bits, k
/// ([`MariaCtx::deleted_k`] to `row.k`), c and pad.
pub fn insert_clustered(env: &Env, m: &MariaCtx, trx: &TrxCtx, row: &RowCtx) -> MtrLog {
    match row.insert {
        InsertKind::Fresh => {
            let body = 1
                + u64_much_compressed_size(trx.undo_no)
                + u64_much_compressed_size(env.table_id)
                + compressed_size(u64::from(INT_LEN))
                + u64::from(INT_LEN);
            let undo = undo_mtr(env, m, trx, body);
            let prev = row.clust_prev.unwrap_or(Prev::Rec {
                k: 0,
                id: row.id.wrapping_sub(1),
                delete_marked: false,
            });
            let extra = m.charset.clust_extra();
            let (prev_offset, prev_key, hdr_common) = match prev {
                // A user-record predecessor has the same length bytes.
                Prev::Rec { id, .. } => {
                    (Some(page_ofs(m.clust_rec_offset)), int_bytes(id), extra - REC_N_NEW_EXTRA_BYTES)
                }
                Prev::Infimum => (None, [0u8; 4], 0),
            };
            let payload = insert_payload(
                m.clust_reuse_free,
                prev_offset,
                extra,
                hdr_common,
                CLUST_DATA,
                &int_bytes(row.id),
                &prev_key,
            );
            let mut e = Enc::new();
            e.extended(clust_page(env, row), payload);
            log_of(env, row, Some(undo), &[e.finish()])
        }
        InsertKind::OverDeleteMarked => {
            let own =
                RollPtr { insert: false, rseg: env.undo.rseg_id, page: env.undo.update_page, offset: 0 };
            let fields = [(POS_K, INT_LEN), (POS_C, C_LEN), (POS_PAD, PAD_LEN)];
            let body = undo_modify_body(env, trx, trx.id, own.value(), Some(&fields), true);
            let undo = undo_mtr(env, m, trx, body);
            // The roll pointer's 2 offset bytes change (simplification 3).
            let old = sys_bytes(trx.id, own.value());
            let mut new = old;
            new[11] = !old[11];
            let k_bytes = changed(&int_bytes(m.deleted_k), &int_bytes(row.k));
            let upd = [(OFS_K + INT_LEN, k_bytes), (OFS_C + C_LEN, C_LEN), (OFS_PAD + PAD_LEN, PAD_LEN)];
            let clust = clust_update_mtr(env, m, row, old, new, true, &upd);
            log_of(env, row, Some(undo), &[clust])
        }
    }
}

/// The k_1 part of an INSERT: (k, id) after `row.sec_prev` (default: a live entry of
/// k - 1), then PAGE_MAX_TRX_ID.
pub fn insert_secondary(env: &Env, m: &MariaCtx, trx: &TrxCtx, row: &RowCtx) -> MtrLog {
    let prev =
        row.sec_prev.unwrap_or(Prev::Rec { k: row.k.wrapping_sub(1), id: row.id, delete_marked: false });
    let ins = sec_insert_mtr(env, m, trx, row.sec_leaf, (row.k, row.id), prev, false);
    log_of(env, row, None, &[ins])
}

/// `COMMIT`: nothing without undo; else the mtr of `trx_purge_add_undo_to_history`
/// (module docs). `c.no` is the serialisation number; `insert_undo || update_undo`
/// means the transaction has its (one) undo log.
pub fn commit(env: &Env, c: &CommitCtx) -> MtrLog {
    let mut log = MtrLog::default();
    if !c.insert_undo && !c.update_undo {
        return log;
    }
    let u = &env.undo;
    let up = undo_page(env);
    let rp = rseg_page(env);
    let hdr = page_ofs(u.update_hdr_offset);
    let node = hdr + UNDO_HISTORY_NODE;
    let mut e = Enc::new();
    if !u.update_cached {
        // The segment leaves its slot (slot 0 here), the history grows by its page,
        // TRX_RSEG_MAX_TRX_ID.
        e.memset(rp, RSEG_UNDO_SLOTS, 4, 1);
        e.write_over(
            rp,
            RSEG_HISTORY_SIZE,
            &u.history_size.to_be_bytes(),
            &u.history_size.wrapping_add(1).to_be_bytes(),
        );
        let max_trx_id = RSEG_UNDO_SLOTS + (env.page_size / 16) * 4;
        e.write_over(rp, max_trx_id, &c.no.saturating_sub(100).to_be_bytes(), &c.no.to_be_bytes());
    }
    let addr = |page: u32, off: u32| {
        let mut b = [0u8; 6];
        b[..4].copy_from_slice(&page.to_be_bytes());
        b[4..].copy_from_slice(&(off as u16).to_be_bytes());
        b
    };
    match u.history_first {
        Some((first_page, first_hdr)) => {
            // flst_insert_before(base, cur = the first node, add = ours).
            let first_node = page_ofs(first_hdr) + UNDO_HISTORY_NODE;
            let zero = [0u8; 6];
            // Our PREV: (0, 0) -> (FIL_NULL, 0): the page only.
            e.write_over(up, node, &zero[..4], &FIL_NULL.to_be_bytes());
            // Our NEXT: (0, 0) -> the first node.
            e.write_over(up, node + FIL_ADDR_SIZE, &zero, &addr(first_page, first_node));
            // Base FIRST: the first node -> ours.
            let old = addr(first_page, first_node);
            let new = addr(u.update_page, node);
            if first_page == u.update_page {
                e.write_over(rp, RSEG_HISTORY + 4 + 4, &old[4..], &new[4..]);
            } else {
                e.write_over(rp, RSEG_HISTORY + 4, &old, &new);
            }
            // The old first's PREV: (FIL_NULL, 0) -> ours.
            let fp = PageRef { kind: PageKind::HistoryPrev, space: 0, page: first_page };
            e.write_over(fp, first_node, &addr(FIL_NULL, 0), &new);
            // FLST_LEN + 1.
            e.write_over(
                rp,
                RSEG_HISTORY,
                &u.history_len.to_be_bytes(),
                &u.history_len.wrapping_add(1).to_be_bytes(),
            );
        }
        None => {
            // flst_add_to_empty: FLST_LEN's low byte, FIRST (was FIL_NULL), LAST by
            // MEMMOVE, our PREV FIL_NULL by MEMSET and NEXT by MEMMOVE.
            e.write(rp, RSEG_HISTORY + 4, 1);
            e.write_over(rp, RSEG_HISTORY + 4, &addr(FIL_NULL, 0), &addr(u.update_page, node));
            e.memmove(rp, RSEG_HISTORY + 4 + FIL_ADDR_SIZE, RSEG_HISTORY + 4, FIL_ADDR_SIZE);
            e.memset(up, node, 4, 1);
            e.memmove(up, node + FIL_ADDR_SIZE, node, FIL_ADDR_SIZE);
        }
    }
    let state = if u.update_cached { TRX_UNDO_CACHED } else { TRX_UNDO_TO_PURGE };
    e.write_over(up, UNDO_STATE, &TRX_UNDO_ACTIVE.to_be_bytes(), &state.to_be_bytes());
    e.write_over(up, hdr + UNDO_TRX_NO, &[0; 8], &c.no.to_be_bytes());
    log.push_framed(e.finish());
    log
}

/// One transaction's undo state between its ops (MariaDB: one undo log for inserts and
/// updates), which decides when the undo log is assigned, each record's undo number and
/// what the commit writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MariaTrx {
    id: u64,
    undo_no: u64,
}

impl MariaTrx {
    /// Transaction `id` starting.
    pub fn begin(id: u64) -> MariaTrx {
        MariaTrx { id, undo_no: 0 }
    }

    /// The transaction's id.
    pub fn id(&self) -> u64 {
        self.id
    }

    fn ctx(&self) -> TrxCtx {
        TrxCtx { id: self.id, undo_no: self.undo_no, first_undo: self.undo_no == 0 }
    }

    /// The records of `op` at `index` on `row`; a commit is numbered `id + 1` and starts
    /// the next transaction at `id + 2` (as `TrxRedo::op`).
    pub fn op(&mut self, op: Op, index: Index, env: &Env, m: &MariaCtx, row: &RowCtx) -> MtrLog {
        let t = self.ctx();
        let (log, undo) = match (op, index) {
            // Purge's records are its own (`purge_*`), not a transaction's.
            (Op::Read | Op::Purge | Op::PurgeReset, _) => (MtrLog::default(), false),
            (Op::Commit, _) => {
                let has = self.undo_no > 0;
                let c = CommitCtx { no: self.id + 1, insert_undo: false, update_undo: has, del_marks: false };
                *self = MariaTrx::begin(self.id + 2);
                return commit(env, &c);
            }
            (Op::Insert, Index::Secondary | Index::Secondary2) => (insert_secondary(env, m, &t, row), false),
            (Op::Insert, Index::Clustered) => (insert_clustered(env, m, &t, row), true),
            (Op::UpdateNonIndex, _) => (update_non_index(env, m, &t, row), true),
            (Op::UpdateIndex, _) => (update_index(env, m, &t, row), true),
            (Op::Delete, _) => (delete(env, m, &t, row), true),
        };
        if undo {
            self.undo_no += 1;
        }
        log
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Env::default(): table space 25 (1-byte varint), undo page 1000, rseg header 300,
    // previous history log on page 1002 at 3000 (2-byte varints), system tablespace 0
    // (1 byte), table id 40, new undo log header at 2000; MariaCtx::default(): previous
    // header at 1800, records at offset 8000 (2-byte varint). Leaves of a 250k-row table
    // have 2-byte page numbers. Transaction id 1,000,000 = 0x0F4240 (3 significant
    // bytes of 8, 4 of DB_TRX_ID's 6).
    const CLUST_LEAF: u32 = 3000;
    const SEC_LEAF: u32 = 4000;
    const TRX: u64 = 1_000_000;

    fn row() -> RowCtx {
        purged_row(200_000, 125_000, CLUST_LEAF, SEC_LEAF)
    }

    fn trx(undo_no: u64, first_undo: bool) -> TrxCtx {
        TrxCtx { id: TRX, undo_no, first_undo }
    }

    fn sizes(log: &MtrLog) -> Vec<u64> {
        log.mtrs().iter().map(|m| m.bytes).collect()
    }

    fn m() -> MariaCtx {
        MariaCtx::default()
    }

    #[test]
    fn varints_and_record_lengths() {
        assert_eq!(
            [0, 127, 128, 16511, 16512, 2_113_663, 2_113_664, 270_549_119, 270_549_120].map(varint_size),
            [1, 1, 2, 2, 3, 3, 4, 4, 5]
        );
        // A 4-bit length up to 15 bytes after the first; then 1 length byte up to 141,
        // 2 from 142.
        assert_eq!([1, 15, 16, 141, 142].map(record_size), [2, 16, 18, 143, 145]);
        // FILE_MODIFY of space 25, "./sbtest/sbtest1.ibd" (20): 1 + 1 + 1 + 20 = 23, plus
        // a length byte: 24; its mtr 29.
        assert_eq!(file_modify_record(25, 20), 24);
    }

    #[test]
    fn a_non_index_update() {
        let log = update_non_index(&Env::default(), &m(), &trx(1, false), &row());
        // Undo body: type 1, undo_no 1, table id 1, info bits 1, DB_TRX_ID 0 (reset by
        // purge) 1 + 4 = 5, DB_ROLL_PTR 1 << 55 (high half 0x800000: 4) + 4 = 8, id 1 + 4,
        // one field: count 1, field 4 (1), length 120 (1), 120 bytes = 22 + 123 = 145.
        // UNDO_APPEND: space 0 (1) + page 1000 (2) + subtype 1 + 145 = 149 after the
        // first byte, 2 length bytes: 152; + end byte and CRC 5 = 157.
        // Clustered: DB_TRX_ID,DB_ROLL_PTR over (0, 0x80 00..): 3 zero bytes shared, 10
        // logged at 8007: space 1 + page 2 + offset 2 + 10 = 15, in the 4-bit length:
        // 16; c at 8021, 4 after 8017: 1 + 120 = 121, 1 length byte: 123; + 5 = 144.
        assert_eq!(sizes(&log), [157, 144]);
        assert_eq!(log.bytes(), 301);
        assert_eq!(log.records(), 3);
        assert_eq!(log.pages_dirtied(), 2);
    }

    #[test]
    fn the_first_undo_record_assigns_the_undo_log_in_the_same_mtr() {
        let log = update_non_index(&Env::default(), &m(), &trx(0, true), &row());
        // trx_undo_header_create on page 1000, header at 2000 after one at 1800:
        //   MEMSET PAGE_START/FREE at 40: 1 + 2 + 1 + (len 1 + pattern 2) = 7 -> 8;
        //   STATE/LAST_LOG (00 02 07 08 -> 00 01 07 D0) from 57: rel 13 (1) + 3 -> 5;
        //   NEXT_LOG at 1830: rel 1770 (2) + 2 -> 5;
        //   TRX_ID at 2000 over zeros: 3 bytes at 2005, rel 173 (2) + 3 -> 6;
        //   NEEDS_PURGE/LOG_START (00 01 08 8A) from 2017: rel 9 (1) + 3 -> 5;
        //   MEMSET 2020..2032 of 0: rel 0 (1) + len 1 + byte 1 -> 4;
        //   PREV_LOG 1800 at 2032: 1 + 2 -> 4;  MEMSET the history node: 4.  41 in all.
        // The UNDO_APPEND follows on the same page: no page id: 1 + 145 = 146 -> 149.
        // 41 + 149 + 5 = 195.
        assert_eq!(sizes(&log), [195, 144]);
        assert_eq!(log.records(), 8 + 1 + 2);
    }

    #[test]
    fn an_index_update() {
        let log = update_index(&Env::default(), &m(), &trx(1, false), &row());
        // Undo: 22 + update (1 + 1 + 1 + 4 = 7) + index columns: 2 + id (1 + 1 + 4); k is
        // in the update vector, not repeated = 37: 3 + 1 + 37 = 41 -> 43; + 5 = 48.
        // Clustered: system columns 16; k 125,000 -> 125,001 changes its last byte at
        // 8020, 3 after 8017: 1 + 1 -> 3; + 5 = 24.
        // k_1 delete-mark on page 4000: PAGE_MAX_TRX_ID 999,900 -> 1,000,000 (0F 41 DC ->
        // 0F 42 40), 2 bytes at 62: 1 + 2 + 1 + 2 -> 7; info bits at 7995, rel 7931 (2)
        // + 1 -> 4; + 5 = 16.
        // k_1 insert of (125,001, id) after (125,000, id): INSERT_REUSE_DYNAMIC: subtype
        // 1, predecessor 8000 - 99 (2), shift 1, header 0 (1), header shared 0 (1), data
        // shared 3 (1), 5 data bytes = 12; 1 + 2 + 12 = 15 -> 16; PAGE_MAX_TRX_ID already
        // raised; + 5 = 21.
        assert_eq!(sizes(&log), [48, 24, 16, 21]);
        assert_eq!(log.bytes(), 109);
        assert_eq!(log.pages_dirtied(), 3);
        // Heap instead of PAGE_FREE: no shift, 20.
        let heap = MariaCtx { sec_reuse_free: false, ..m() };
        assert_eq!(sizes(&update_index(&Env::default(), &heap, &trx(1, false), &row()))[3], 20);
        // (k + 1, id) on another leaf: its PAGE_MAX_TRX_ID after the insert: rel 62 - 24
        // = 38 (1) + 2 -> 4 more.
        let mut r = row();
        r.sec_leaf_new = SEC_LEAF + 1;
        assert_eq!(sizes(&update_index(&Env::default(), &m(), &trx(1, false), &r))[3], 25);
    }

    #[test]
    fn a_delete() {
        let log = delete(&Env::default(), &m(), &trx(2, false), &row());
        // Undo TRX_UNDO_DEL_MARK_REC: 22 + 2 + id 6 + k 6 = 36: 3 + 1 + 36 = 40 -> 42;
        // + 5 = 47.
        // Clustered: info bits at 7995: 1 + 2 + 2 + 1 -> 7; system columns from 8007,
        // rel 11: 1 + 10 -> 12; + 5 = 24. k_1 delete-mark 16.
        assert_eq!(sizes(&log), [47, 24, 16]);
        assert_eq!(log.bytes(), 87);
    }

    #[test]
    fn oltp_read_write_inserts_over_its_own_delete_mark() {
        let mut r = row();
        r.insert = InsertKind::OverDeleteMarked;
        let log = insert_clustered(&Env::default(), &m(), &trx(3, false), &r);
        // Undo TRX_UNDO_UPD_DEL_REC: type, undo_no, table id, info bits 4; its own
        // DB_TRX_ID 1,000,000: 5; its own roll pointer (rseg 33: high half 0x210000: 4)
        // 8; id 5 = 22; update: count 1, k 6, c 122, pad 62 = 191; index columns: id
        // only: 8. 221: 3 + 1 + 221 = 225, 2 length bytes: 228; + 5 = 233.
        // Clustered: DB_ROLL_PTR's offset bytes, 2 at 8015: 1 + 2 + 2 + 2 -> 8; info bits
        // at 7995 (before 8017: page id again): 7; k 74,565 -> 125,000 (0x80012345 ->
        // 0x8001E848): 2 bytes at 8019, rel 23: 1 + 2 -> 4; c rel 0: 123; pad rel 0: 1 +
        // 60 -> 63; + 5. 8 + 7 + 4 + 123 + 63 + 5 = 210.
        assert_eq!(sizes(&log), [233, 210]);
        // k_1's new entry (125,000, id) after (124,999, id): 16; PAGE_MAX_TRX_ID raised
        // after it (rel 38): 4; + 5 = 25.
        assert_eq!(insert_secondary(&Env::default(), &m(), &trx(4, false), &r).bytes(), 25);
    }

    #[test]
    fn a_fresh_insert_and_the_charset() {
        let env = Env::default();
        let mut r = row();
        let log = insert_clustered(&env, &m(), &trx(0, false), &r);
        // Undo TRX_UNDO_INSERT_REC: type, undo_no, table id, id 5 = 8: 3 + 1 + 8 -> 13;
        // + 5 = 18.
        // Clustered insert after id - 1: utf8mb4's 2 length bytes shared with it, 3 data
        // bytes shared (200,000 and 199,999 differ in the last byte): subtype 1 +
        // predecessor 2 + header 1 + shared header 1 + shared data 1 + 198 = 204; 1 + 2 +
        // 204 = 207, 2 length bytes: 210; + 5 = 215.
        assert_eq!(sizes(&log), [18, 215]);
        // latin1: no length bytes, same size.
        let latin1 = MariaCtx { charset: Charset::Latin1, ..m() };
        assert_eq!(sizes(&insert_clustered(&env, &latin1, &trx(0, false), &r)), [18, 215]);
        // First on a page: nothing shared with the infimum (predecessor offset 0: 1
        // byte); utf8mb4 logs its 2 length bytes (header 2 << 3 = 16: 1 byte): 1 + 1 + 1
        // + 1 + 1 + 2 + 201 = 208; 3 + 208 = 211 -> 214, + 5 = 219; latin1 217.
        r.clust_prev = Some(Prev::Infimum);
        assert_eq!(insert_clustered(&env, &m(), &trx(0, false), &r).mtrs()[1].bytes, 219);
        assert_eq!(insert_clustered(&env, &latin1, &trx(0, false), &r).mtrs()[1].bytes, 217);
    }

    #[test]
    fn the_commit() {
        let env = Env::default();
        let c = CommitCtx { no: TRX + 1, insert_undo: false, update_undo: true, del_marks: false };
        let log = commit(&env, &c);
        // flst_insert_before, our node at 2034 on page 1000, the first at 3034 on 1002:
        //   our PREV page 0 -> FIL_NULL: 1 + 2 + 2 + 4 -> 10;
        //   our NEXT (0, 0) -> (1002, 3034): 4 bytes from 2042, rel 4: 1 + 4 -> 6;
        //   base FIRST on page 300 (1002, 3034) -> (1000, 2034): 3 bytes from 53:
        //     1 + 2 + 1 + 3 -> 8;
        //   the old first's PREV (FIL_NULL, 0) -> (1000, 2034): 6 at 3034: 1 + 2 + 2 + 6 ->
        //     12;
        //   FLST_LEN 50 -> 51: 1 byte at 49: 1 + 2 + 1 + 1 -> 6;
        // state ACTIVE -> CACHED: 1 byte at 57 on page 1000: 6; TRX_NO 1,000,001 over
        // zeros: 3 bytes at 2013, rel 1955 (2): 1 + 2 + 3 -> 6; + 5.
        // 10 + 6 + 8 + 12 + 6 + 6 + 6 + 5 = 59.
        assert_eq!(sizes(&log), [59]);
        assert_eq!(log.records(), 7);
        assert_eq!(log.pages_dirtied(), 3);
        // An empty history: LEN 6; FIRST from FIL_NULL, all 6 bytes, rel 0: 8; LAST by
        // MEMMOVE: 4; our PREV by MEMSET 0xff: 1 + 2 + 2 + 2 -> 8; NEXT by MEMMOVE, rel 2:
        // 4; state (page id again: 57 < 2046) 6; TRX_NO 6; + 5 = 47.
        let mut empty = env;
        empty.undo.history_first = None;
        assert_eq!(sizes(&commit(&empty, &c)), [47]);
        // Not cached: slot MEMSET 7, HISTORY_SIZE 6, MAX_TRX_ID (2 bytes at 4174, rel
        // 4128: 2) 5 come first; our PREV then needs its page id as before: 59 + 18 =
        // 77, the state writes TO_PURGE (same size).
        let mut full = env;
        full.undo.update_cached = false;
        assert_eq!(sizes(&commit(&full, &c)), [77]);
        // A read-only transaction writes nothing.
        assert_eq!(commit(&env, &CommitCtx::default()).mtrs().len(), 0);
    }

    #[test]
    fn the_first_change_after_a_checkpoint_names_the_file_in_its_own_mtr() {
        let mut r = row();
        r.first_since_checkpoint = true;
        let log = update_non_index(&Env::default(), &m(), &trx(1, false), &r);
        // FILE_MODIFY 24 + 5 = 29, before the clustered mtr, after the undo one.
        assert_eq!(sizes(&log), [157, 29, 144]);
        assert_eq!(log.pages_dirtied(), 2);
    }

    proptest::proptest! {
        /// Any ids, offsets, keys and counts: every op encodes without a panic, each mtr
        /// at least a record and its 5-byte trailer.
        #[test]
        fn any_input_encodes(
            ids in proptest::array::uniform8(proptest::prelude::any::<u32>()),
            k in proptest::prelude::any::<i64>(),
            id in proptest::prelude::any::<i64>(),
            trx_id in proptest::prelude::any::<u64>(),
            undo_no in proptest::prelude::any::<u64>(),
            flags in proptest::prelude::any::<u8>(),
        ) {
            let mut env = Env { space_id: ids[0], ..Env::default() };
            env.undo.update_page = ids[1];
            env.undo.update_hdr_offset = ids[2];
            env.undo.rseg_page = ids[3];
            env.undo.history_len = ids[4];
            env.undo.history_first = (flags & 1 == 1).then_some((ids[5], ids[6]));
            env.undo.update_cached = flags & 2 == 2;
            let mc = MariaCtx {
                undo_prev_log: ids[7],
                clust_rec_offset: ids[6],
                sec_rec_offset: ids[5],
                sec_max_trx_id_age: u64::from(ids[4]),
                charset: if flags & 4 == 4 { Charset::Latin1 } else { Charset::Utf8mb4 },
                ..MariaCtx::default()
            };
            let mut r = purged_row(id, k, ids[1], ids[2]);
            r.first_since_checkpoint = flags & 8 == 8;
            r.clust_prev = (flags & 16 == 16).then_some(Prev::Infimum);
            let t = TrxCtx { id: trx_id, undo_no, first_undo: flags & 32 == 32 };
            let c = CommitCtx { no: trx_id, insert_undo: false, update_undo: true, del_marks: false };
            for log in [
                update_non_index(&env, &mc, &t, &r),
                update_index(&env, &mc, &t, &r),
                delete(&env, &mc, &t, &r),
                insert_clustered(&env, &mc, &t, &r),
                insert_secondary(&env, &mc, &t, &r),
                commit(&env, &c),
            ] {
                for mtr in log.mtrs() {
                    proptest::prop_assert!(mtr.records >= 1 && mtr.bytes >= 2 + MTR_TRAILER);
                }
            }
        }
    }

    #[test]
    fn sysbench_transactions_through_the_tracker() {
        let env = Env::default();
        let mc = m();
        // oltp_update_index: one autocommit UPDATE SET k = k + 1.
        let mut t = MariaTrx::begin(TRX);
        let u = t.op(Op::UpdateIndex, Index::Clustered, &env, &mc, &row());
        let c = t.op(Op::Commit, Index::Clustered, &env, &mc, &row());
        // 109 + the 38 of the assignment = 147; commit 59: 206 bytes in 5 mtrs.
        assert_eq!((u.bytes(), c.bytes()), (147, 59));
        assert_eq!(u.mtrs().len() + c.mtrs().len(), 5);
        // oltp_read_write's writes (oltp_common.lua defaults): index update, non-index
        // update, delete and insert of one id, commit.
        let mut t = MariaTrx::begin(TRX);
        let ui = t.op(Op::UpdateIndex, Index::Clustered, &env, &mc, &row());
        let un = t.op(Op::UpdateNonIndex, Index::Clustered, &env, &mc, &row());
        let d = t.op(Op::Delete, Index::Clustered, &env, &mc, &row());
        let mut r = row();
        r.insert = InsertKind::OverDeleteMarked;
        let ic = t.op(Op::Insert, Index::Clustered, &env, &mc, &r);
        let is = t.op(Op::Insert, Index::Secondary, &env, &mc, &r);
        let c = t.op(Op::Commit, Index::Clustered, &env, &mc, &r);
        let parts = [ui.bytes(), un.bytes(), d.bytes(), ic.bytes(), is.bytes(), c.bytes()];
        assert_eq!(parts, [147, 301, 87, 443, 25, 59]);
        assert_eq!(parts.iter().sum::<u64>(), 1062);
        let mtrs: usize = [ui, un, d, ic, is, c].iter().map(|l| l.mtrs().len()).sum();
        assert_eq!(mtrs, 4 + 2 + 3 + 2 + 1 + 1);
        // Reads write nothing; the next transaction assigns its undo log again.
        assert_eq!(t.op(Op::Read, Index::Clustered, &env, &mc, &row()).mtrs().len(), 0);
        assert_eq!(t.op(Op::UpdateNonIndex, Index::Clustered, &env, &mc, &row()).bytes(), 339);
    }
}
