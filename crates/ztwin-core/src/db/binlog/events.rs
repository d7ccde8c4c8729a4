//! The bytes a transaction writes to MySQL 5.7's binary log, event by event, for
//! sysbench's writes to its sbtest tables in 5.7's default format (binlog_format=ROW,
//! binlog_row_image=FULL, binlog_checksum=CRC32, version 2 row events).
//!
//! Mechanism.
//! - Every event starts with the 19-byte common header (LOG_EVENT_HEADER_LEN: timestamp,
//!   type, server id, event size, end position, flags) and, with binlog_checksum=CRC32,
//!   ends with a 4-byte CRC32 (BINLOG_CHECKSUM_LEN) counted in the event's size
//!   (`Log_event::write_header`).
//! - A transaction's events, in the order the binary log receives them:
//!   1. the GTID event, written by the flush stage before the transaction's cache
//!      (`MYSQL_BIN_LOG::write_gtid`): with gtid_mode=OFF (5.7's default) an
//!      Anonymous_Gtid_log_event, of the same layout as a Gtid_log_event: flags 1, SID
//!      16, GNO 8, the logical-timestamp type code 1 and last_committed and
//!      sequence_number 8 each (`Gtid_log_event::write_data_header_to_memory`): 42 bytes
//!      after the header;
//!   2. Query_log_event "BEGIN", put in the transaction cache before its first row event
//!      (`binlog_start_trans_and_stmt`): the 13-byte post-header (thread id, execution
//!      time, database length, error code, status length: QUERY_HEADER_LEN), the status
//!      variables always present (`Query_log_event::write`): Q_FLAGS2_CODE 1 + 4,
//!      Q_SQL_MODE_CODE 1 + 8, Q_CATALOG_NZ_CODE 1 + 1 + "std", Q_CHARSET_CODE 1 + 6:
//!      26 bytes; auto_increment_increment/offset, the time zone, lc_time_names, the
//!      database collation and the multi-table update map only when they differ from their
//!      defaults or are used, none of which sysbench does; no Q_UPDATED_DB_NAMES, since in
//!      row format the accessed databases are not collected
//!      (`THD::decide_logging_format`); then the session's current database and a NUL,
//!      and the query text without a NUL;
//!   3. per statement that changed rows, a Table_map_log_event for its table
//!      (`write_locked_table_maps`, once per statement: `binlog_table_maps` is reset at
//!      the statement's end, `THD::binlog_flush_pending_rows_event`): the 6-byte table id
//!      and 2 bytes of flags (TABLE_MAP_HEADER_LEN), then the database name (length byte,
//!      name, NUL), the table name (likewise), the column count (packed length, 1 byte
//!      below 251), one type byte per column, the metadata length (packed) and the
//!      metadata (`Field::save_field_metadata`: nothing for an INT, 2 bytes for a CHAR:
//!      real type and length, `Field_string::do_save_field_metadata`), and the bitmap
//!      of nullable columns ((columns + 7) / 8 bytes) (`Table_map_log_event` constructor,
//!      `write_data_body`);
//!   4. the statement's rows event (one event holds a statement's rows up to
//!      binlog_row_event_max_size; sysbench's statements change one row): the 6-byte table
//!      id, 2 bytes of flags and, in version 2 events (log_bin_use_v1_row_events=OFF),
//!      the 2-byte length of the extra-data header with no extra data (ROWS_HEADER_LEN_V2
//!      = 10; version 1: 8), then the column count (packed), the bitmap of the columns in
//!      the image, for Update_rows a second bitmap for the after image, then the row
//!      images (`Rows_log_event::write_data_header`, `write_data_body`). An image
//!      (`pack_row`) is a NULL bitmap of one bit per column in the image, then each
//!      non-NULL column packed (`Field::pack`: an INT its 4 bytes; `Field_string::pack`:
//!      a CHAR of at most 255 bytes as a length byte and the value without its trailing
//!      spaces). Write_rows holds the after image, Delete_rows the before image,
//!      Update_rows both. With binlog_row_image=FULL an image has every column; MINIMAL
//!      keeps the primary key in the before image and the columns the statement set in
//!      the after image (`THD::binlog_prepare_row_images`,
//!      `TABLE::mark_columns_per_binlog_row_image`); NOBLOB drops BLOBs, which sbtest has
//!      none of, so it is FULL here;
//!   5. the Xid_log_event that ends the transaction (`MYSQL_BIN_LOG::commit`: a real
//!      commit with an XID and more than one read-write handlerton, the binary log and
//!      InnoDB), 8 bytes of XID after the header.
//! - sbtest (sysbench 1.0 `oltp_common.lua`): id INT, k INT, c CHAR(120), pad CHAR(60),
//!   all NOT NULL, latin1 (5.7's default character set). c holds 10 groups of 11 digits
//!   joined by '-' (119 characters), pad 5 groups (59): a full image is 1 (NULL bitmap) +
//!   4 + 4 + (1 + 119) + (1 + 59) = 189 bytes.
//!
//! Sources: mysql-server 5.7.32 (a snapshot of the 5.7.32 release; the stored index
//! holds no 5.7.29): `libbinlogevents/include/binlog_event.h` (LOG_EVENT_HEADER_LEN,
//! FLAGS_OFFSET, QUERY_HEADER_LEN, TABLE_MAP_HEADER_LEN, ROWS_HEADER_LEN_V1/V2,
//! XID_HEADER_LEN, LOG_EVENT_TYPES, BIN_LOG_HEADER_SIZE), `include/control_events.h`
//! (`Gtid_event::POST_HEADER_LENGTH`), `include/statement_events.h` (status variable
//! codes), `src/statement_events.cpp` (the `Query_event` constructor's inited flags);
//! `sql/log_event.cc` (`Query_log_event::write`, its constructor,
//! `Table_map_log_event::Table_map_log_event`, `write_data_header`, `write_data_body`,
//! `Rows_log_event::write_data_header`, `write_data_body`,
//! `Gtid_log_event::write_data_header_to_memory`, `Format_description_log_event::write`,
//! `Previous_gtids_log_event`), `sql/binlog.cc` (`binlog_start_trans_and_stmt`,
//! `THD::binlog_write_table_map`, `THD::binlog_write_row`, `binlog_update_row`,
//! `binlog_delete_row`, `binlog_prepare_row_images`, `binlog_flush_pending_rows_event`,
//! `MYSQL_BIN_LOG::commit`, `write_gtid`, `open_binlog`), `sql/handler.cc`
//! (`write_locked_table_maps`), `sql/rpl_record.cc` (`pack_row`), `sql/field.cc`
//! (`Field::pack`, `Field_string::pack`, `Field_string::do_save_field_metadata`),
//! `sql/rpl_gtid_set.cc` (`Gtid_set::get_encoded_length`), `sql/sys_vars.cc` (the
//! defaults). sysbench 1.0.20 `src/lua/oltp_common.lua` (schema, values, database).
//!
//! Simplifications:
//! 1. One row per statement (sysbench's writes); a statement that changes no row (an
//!    UPDATE whose row is missing or unchanged) would log nothing, and is not told apart.
//! 2. binlog_rows_query_log_events=OFF (the default): no Rows_query event.
//! 3. c and pad hold sysbench's values (no trailing spaces); a multi-byte character set
//!    would not change these lengths (values are ASCII) but is not modelled.
//! 4. The GTID event's size is the same with gtid_mode=ON (a Gtid_log_event); MariaDB's
//!    events are not these (see the report of `super`).

use crate::workload::statement::{Index, Op};

/// LOG_EVENT_HEADER_LEN (`binlog_event.h`): the common header of every event.
pub const HEADER: u64 = 19;
/// BINLOG_CHECKSUM_LEN (`binlog_event.h`): the CRC32 after each event with
/// binlog_checksum=CRC32.
pub const CHECKSUM: u64 = 4;
/// BIN_LOG_HEADER_SIZE (`binlog_event.h`): the magic number at the start of a file.
pub const MAGIC: u64 = 4;
/// FLAGS_OFFSET (`binlog_event.h`): where the flags sit in the common header; the
/// Format_description event's LOG_EVENT_BINLOG_IN_USE_F is cleared at this offset from
/// the event's start when the file is closed (`MYSQL_BIN_LOG::close`).
pub const FLAGS_OFFSET: u64 = 17;
/// `Gtid_event::POST_HEADER_LENGTH` (`control_events.h`): flags 1, SID 16, GNO 8,
/// timestamp type 1, last_committed and sequence_number 16.
const GTID_POST_HEADER: u64 = 1 + 16 + 8 + 1 + 16;
/// QUERY_HEADER_LEN (`binlog_event.h`): thread id 4, exec time 4, db length 1, error
/// code 2, status length 2.
const QUERY_HEADER: u64 = 4 + 4 + 1 + 2 + 2;
/// The status variables of a Query_log_event that sysbench's sessions always write
/// (`Query_log_event::write`): Q_FLAGS2_CODE (1 + 4), Q_SQL_MODE_CODE (1 + 8),
/// Q_CATALOG_NZ_CODE (1 + 1 + "std"), Q_CHARSET_CODE (1 + 6).
const QUERY_STATUS: u64 = 5 + 9 + (2 + 3) + 7;
/// TABLE_MAP_HEADER_LEN (`binlog_event.h`): table id 6, flags 2.
const TABLE_MAP_HEADER: u64 = 8;
/// ROWS_HEADER_LEN_V2 and ROWS_HEADER_LEN_V1 (`binlog_event.h`).
const ROWS_HEADER_V2: u64 = 10;
const ROWS_HEADER_V1: u64 = 8;
/// The Xid event's body: the 8-byte XID (XID_HEADER_LEN is 0).
const XID_BODY: u64 = 8;
/// `Binary_log_event::LOG_EVENT_TYPES` in 5.7 (ENUM_END_EVENT - 1, the last type being
/// XA_PREPARE_LOG_EVENT = 38): one post-header length per type in the
/// Format_description event.
const LOG_EVENT_TYPES: u64 = 38;
/// ST_SERVER_VER_LEN (`binlog_event.h`).
const SERVER_VER_LEN: u64 = 50;
/// Columns of sbtest (sysbench 1.0 `oltp_common.lua`): id, k, c, pad.
const SBTEST_COLUMNS: u64 = 4;
/// Metadata bytes of sbtest's columns in a Table_map: INT none, CHAR 2 each.
const SBTEST_METADATA: u64 = 2 + 2;

/// `binlog_row_image`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowImage {
    /// FULL (the default, `sys_vars.cc` Sys_binlog_row_image): every column in both images.
    Full,
    /// MINIMAL: the primary key in the before image, the columns set in the after image.
    Minimal,
    /// NOBLOB: FULL without BLOB columns not in the key (sbtest has none).
    Noblob,
}

/// What decides the size of the events: the server's options and the sysbench session's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BinlogFormat {
    /// binlog_checksum: CRC32 (`sys_vars.cc` Binlog_checksum_enum, default
    /// BINLOG_CHECKSUM_ALG_CRC32); false: NONE.
    pub checksum_crc32: bool,
    /// binlog_row_image: FULL (`sys_vars.cc` Sys_binlog_row_image).
    pub row_image: RowImage,
    /// log_bin_use_v1_row_events: OFF (`sys_vars.cc` Sys_use_v1_row_events).
    pub v1_row_events: bool,
    /// Length of the session's current database, written in every Query event and Table
    /// map: sysbench's --mysql-db, default "sbtest" (sysbench 1.0 `drivers/mysql`).
    pub db_len: u64,
    /// Length of the table name's prefix before its number: sysbench's "sbtest"
    /// (`oltp_common.lua`: tables sbtest1..sbtestN).
    pub table_prefix_len: u64,
    /// Characters of a c value: 119 (`oltp_common.lua` c_value_template).
    pub c_len: u64,
    /// Characters of a pad value: 59 (`oltp_common.lua` pad_value_template).
    pub pad_len: u64,
}

impl Default for BinlogFormat {
    fn default() -> Self {
        BinlogFormat {
            checksum_crc32: true,
            row_image: RowImage::Full,
            v1_row_events: false,
            db_len: 6,
            table_prefix_len: 6,
            c_len: 119,
            pad_len: 59,
        }
    }
}

/// Decimal digits of `n`.
pub(crate) fn digits(mut n: u64) -> u64 {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

/// Bytes of `net_store_length(n)` (`pack.c`): 1 below 251, 3 below 2^16, 4 below 2^24,
/// else 9.
fn packed_length(n: u64) -> u64 {
    match n {
        0..=250 => 1,
        251..=0xFFFF => 3,
        0x1_0000..=0xFF_FFFF => 4,
        _ => 9,
    }
}

impl BinlogFormat {
    /// The checksum after each event (0 with binlog_checksum=NONE).
    fn footer(&self) -> u64 {
        if self.checksum_crc32 {
            CHECKSUM
        } else {
            0
        }
    }

    /// An event of `body` bytes after the common header.
    fn event(&self, body: u64) -> u64 {
        HEADER + body + self.footer()
    }

    /// The Gtid_log_event or Anonymous_Gtid_log_event before each transaction: 65 bytes.
    pub fn gtid(&self) -> u64 {
        self.event(GTID_POST_HEADER)
    }

    /// A Query_log_event of `query_len` bytes of text (`Query_log_event::write`).
    pub fn query(&self, query_len: u64) -> u64 {
        self.event(QUERY_HEADER + QUERY_STATUS + self.db_len + 1 + query_len)
    }

    /// Query_log_event "BEGIN": 74 bytes with the database "sbtest".
    pub fn begin(&self) -> u64 {
        self.query("BEGIN".len() as u64)
    }

    /// Xid_log_event: 31 bytes.
    pub fn xid(&self) -> u64 {
        self.event(XID_BODY)
    }

    /// What every transaction that changed rows writes besides its statements: the GTID
    /// event, BEGIN and the Xid event.
    pub fn frame(&self) -> u64 {
        self.gtid() + self.begin() + self.xid()
    }

    /// Table_map_log_event of sysbench's table number `table` (0-based: sbtest1 is 0).
    pub fn table_map(&self, table: u32) -> u64 {
        let table_len = self.table_prefix_len + digits(u64::from(table) + 1);
        let body = TABLE_MAP_HEADER
            + (1 + self.db_len + 1)
            + (1 + table_len + 1)
            + packed_length(SBTEST_COLUMNS)
            + SBTEST_COLUMNS
            + packed_length(SBTEST_METADATA)
            + SBTEST_METADATA
            + SBTEST_COLUMNS.div_ceil(8);
        self.event(body)
    }

    /// The packed bytes of sbtest's columns: id, k, c, pad.
    fn column(&self, col: usize) -> u64 {
        match col {
            0 | 1 => 4,
            2 => 1 + self.c_len,
            _ => 1 + self.pad_len,
        }
    }

    /// A row image of the columns `cols` (indexes into id, k, c, pad): the NULL bitmap
    /// and the packed values (`pack_row`).
    fn image(&self, cols: &[usize]) -> u64 {
        (cols.len() as u64).div_ceil(8) + cols.iter().map(|&c| self.column(c)).sum::<u64>()
    }

    /// The columns of the before and after images of `op` (empty: no such image).
    fn images(&self, op: Op) -> (&'static [usize], &'static [usize]) {
        const ALL: &[usize] = &[0, 1, 2, 3];
        const PK: &[usize] = &[0];
        const NONE: &[usize] = &[];
        let minimal = self.row_image == RowImage::Minimal;
        match op {
            Op::UpdateIndex if minimal => (PK, &[1]),
            Op::UpdateNonIndex if minimal => (PK, &[2]),
            Op::UpdateIndex | Op::UpdateNonIndex => (ALL, ALL),
            Op::Delete if minimal => (PK, NONE),
            Op::Delete => (ALL, NONE),
            // sysbench's INSERT sets every column.
            Op::Insert => (NONE, ALL),
            // Purge is the server's, not logged.
            Op::Read | Op::Commit | Op::Purge | Op::PurgeReset => (NONE, NONE),
        }
    }

    /// The rows event of one row changed by `op` (Update_rows, Delete_rows or
    /// Write_rows): 414, 224 and 224 bytes with FULL images.
    pub fn rows(&self, op: Op) -> u64 {
        let (before, after) = self.images(op);
        if before.is_empty() && after.is_empty() {
            return 0;
        }
        let header = if self.v1_row_events { ROWS_HEADER_V1 } else { ROWS_HEADER_V2 };
        let bitmap = SBTEST_COLUMNS.div_ceil(8);
        let bitmaps = if matches!(op, Op::UpdateIndex | Op::UpdateNonIndex) { 2 } else { 1 };
        let mut body = header + packed_length(SBTEST_COLUMNS) + bitmaps * bitmap;
        if !before.is_empty() {
            body += self.image(before);
        }
        if !after.is_empty() {
            body += self.image(after);
        }
        self.event(body)
    }

    /// The events of write lookup `op` on `index` of table `table` (one SQL statement
    /// changing one row): its Table_map and rows event. An INSERT's lookup of the
    /// secondary index, a read and a commit log nothing.
    pub fn statement(&self, op: Op, index: Index, table: u32) -> u64 {
        if index != Index::Clustered || matches!(op, Op::Read | Op::Commit) {
            return 0;
        }
        self.table_map(table) + self.rows(op)
    }

    /// The Format_description_log_event at the start of each file: 119 bytes
    /// (`Format_description_log_event::write`: binlog version 2, server version 50,
    /// creation time 4, header length 1, a post-header length per event type, the
    /// checksum algorithm 1).
    pub fn format_description(&self) -> u64 {
        // The checksum algorithm byte and the checksum's room are written whatever
        // binlog_checksum is ("FD of checksum-aware server is always checksum-equipped").
        HEADER + 2 + SERVER_VER_LEN + 4 + 1 + LOG_EVENT_TYPES + 1 + CHECKSUM
    }

    /// Previous_gtids_log_event with no GTID executed (gtid_mode=OFF): the 8-byte count of
    /// SIDs (`Gtid_set::get_encoded_length`): 31 bytes.
    pub fn previous_gtids(&self) -> u64 {
        self.event(8)
    }

    /// A new file's first bytes (`MYSQL_BIN_LOG::open_binlog`): magic, Format_description,
    /// Previous_gtids: 154 bytes.
    pub fn file_header(&self) -> u64 {
        MAGIC + self.format_description() + self.previous_gtids()
    }

    /// Rotate_log_event naming the next file (`MYSQL_BIN_LOG::new_file_impl`): the 8-byte
    /// position (4) and the file name without its directory.
    pub fn rotate(&self, name_len: u64) -> u64 {
        self.event(8 + name_len)
    }
}

/// One transaction's binary log bytes, accumulated as its writes run (the transaction
/// cache): nothing until a statement changes a row; then the frame and each statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TrxBinlog {
    bytes: u64,
}

impl TrxBinlog {
    /// A transaction begins: its cache is empty.
    pub fn begin() -> TrxBinlog {
        TrxBinlog::default()
    }

    /// Write lookup `op` on `index` of table `table` ran.
    pub fn op(&mut self, f: &BinlogFormat, op: Op, index: Index, table: u32) {
        let s = f.statement(op, index, table);
        if s > 0 && self.bytes == 0 {
            self.bytes = f.frame();
        }
        self.bytes += s;
    }

    /// The bytes the commit hands to the binary log (GTID event included): 0 for a
    /// transaction that changed nothing, which does not enter the binary log.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Index::{Clustered, Secondary};

    #[test]
    fn the_frame_of_every_transaction() {
        let f = BinlogFormat::default();
        // Gtid: 19 + 42 + 4.
        assert_eq!(f.gtid(), 65);
        // BEGIN: 19 + 13 + 26 status + "sbtest\0" 7 + "BEGIN" 5 + 4.
        assert_eq!(f.begin(), 74);
        // The database "test" gives the 72 bytes mysqlbinlog shows in 5.7's manuals.
        assert_eq!(BinlogFormat { db_len: 4, ..f }.begin(), 72);
        // Xid: 19 + 8 + 4.
        assert_eq!(f.xid(), 31);
        assert_eq!(f.frame(), 170);
    }

    #[test]
    fn a_new_file_starts_with_154_bytes() {
        let f = BinlogFormat::default();
        // 19 + (2 + 50 + 4 + 1 + 38 + 1) + 4.
        assert_eq!(f.format_description(), 119);
        assert_eq!(f.previous_gtids(), 31);
        assert_eq!(f.file_header(), 154);
        // "mysql-bin.000002": 19 + 8 + 16 + 4.
        assert_eq!(f.rotate(16), 47);
        // Without checksums the Format_description keeps its 5 bytes; the others lose 4.
        let none = BinlogFormat { checksum_crc32: false, ..f };
        assert_eq!(none.file_header(), 4 + 119 + 27);
    }

    #[test]
    fn table_maps_of_one_and_two_digit_tables() {
        let f = BinlogFormat::default();
        // 19 + 8 + (1 + 6 + 1) + (1 + 7 + 1) + 1 + 4 types + 1 + 4 metadata + 1 null
        // bitmap + 4.
        assert_eq!(f.table_map(0), 59);
        assert_eq!(f.table_map(8), 59); // sbtest9
        assert_eq!(f.table_map(9), 60); // sbtest10
        assert_eq!(f.table_map(31), 60); // sbtest32
    }

    #[test]
    fn rows_events_with_full_images() {
        let f = BinlogFormat::default();
        // A full image: NULL bitmap 1 + id 4 + k 4 + c (1 + 119) + pad (1 + 59) = 189.
        assert_eq!(f.image(&[0, 1, 2, 3]), 189);
        // Update_rows: 19 + 10 + width 1 + two bitmaps 2 + 189 + 189 + 4.
        assert_eq!(f.rows(Op::UpdateIndex), 414);
        assert_eq!(f.rows(Op::UpdateNonIndex), 414);
        // Delete_rows and Write_rows: 19 + 10 + 1 + 1 + 189 + 4.
        assert_eq!(f.rows(Op::Delete), 224);
        assert_eq!(f.rows(Op::Insert), 224);
        // Version 1 events have 2 bytes less of header; no checksum 4 less.
        assert_eq!(BinlogFormat { v1_row_events: true, ..f }.rows(Op::Insert), 222);
        assert_eq!(BinlogFormat { checksum_crc32: false, ..f }.rows(Op::Insert), 220);
    }

    #[test]
    fn rows_events_with_minimal_images() {
        let f = BinlogFormat { row_image: RowImage::Minimal, ..BinlogFormat::default() };
        // Before: bitmap 1 + id 4; after: bitmap 1 + k 4. 19 + 10 + 3 + 5 + 5 + 4.
        assert_eq!(f.rows(Op::UpdateIndex), 46);
        // After: 1 + c (1 + 119).
        assert_eq!(f.rows(Op::UpdateNonIndex), 19 + 10 + 3 + 5 + 121 + 4);
        assert_eq!(f.rows(Op::Delete), 19 + 10 + 2 + 5 + 4);
        assert_eq!(f.rows(Op::Insert), 224);
        let noblob = BinlogFormat { row_image: RowImage::Noblob, ..BinlogFormat::default() };
        assert_eq!(noblob.rows(Op::UpdateIndex), 414);
    }

    /// oltp_update_index: one autocommit UPDATE SET k = k + 1 per transaction.
    #[test]
    fn one_oltp_update_index_transaction() {
        let f = BinlogFormat::default();
        let mut t = TrxBinlog::begin();
        t.op(&f, Op::UpdateIndex, Clustered, 0);
        t.op(&f, Op::Commit, Clustered, 0);
        // 65 + 74 + 59 + 414 + 31.
        assert_eq!(t.bytes(), 643);
        let mut t = TrxBinlog::begin();
        t.op(&f, Op::UpdateIndex, Clustered, 20); // sbtest21
        assert_eq!(t.bytes(), 644);
    }

    /// oltp_read_write's writes: an index update, a non-index update, a DELETE and an
    /// INSERT of the same id, each on the table drawn for its kind; the reads log nothing.
    #[test]
    fn one_oltp_read_write_transaction() {
        let f = BinlogFormat::default();
        let mut t = TrxBinlog::begin();
        t.op(&f, Op::Read, Clustered, 3);
        t.op(&f, Op::UpdateIndex, Clustered, 3); // sbtest4
        t.op(&f, Op::UpdateNonIndex, Clustered, 11); // sbtest12
        t.op(&f, Op::Delete, Clustered, 0); // sbtest1
        t.op(&f, Op::Insert, Clustered, 0);
        t.op(&f, Op::Insert, Secondary, 0); // the same INSERT's k_1 entry
                                            // 170 + (59 + 414) + (60 + 414) + (59 + 224) + (59 + 224).
        assert_eq!(t.bytes(), 170 + 473 + 474 + 283 + 283);
        assert_eq!(t.bytes(), 1683);
    }

    #[test]
    fn a_read_only_transaction_writes_nothing() {
        let f = BinlogFormat::default();
        let mut t = TrxBinlog::begin();
        t.op(&f, Op::Read, Clustered, 0);
        t.op(&f, Op::Commit, Clustered, 0);
        assert_eq!(t.bytes(), 0);
    }

    #[test]
    fn packed_lengths_and_digits() {
        assert_eq!([250, 251, 65535, 65536, 1 << 24].map(packed_length), [1, 3, 3, 4, 9]);
        assert_eq!([0, 9, 10, 99, 100].map(digits), [1, 1, 2, 2, 3]);
    }
}
