//! InnoDB: B+tree geometry of sysbench's and sysbench-tpcc's tables and the buffer pool.
pub mod btree;
pub mod buffer_pool;
pub mod doublewrite;
pub mod flush_list;
pub mod ibd_records;
pub mod mariadb_flush;
pub mod mariadb_redo;
pub mod page_cleaner;
pub mod page_image;
mod page_table;
pub mod percona_flush;
pub mod purge;
pub mod redo;
pub mod redo_records;
pub mod row_locks;
pub mod tpcc_schema;
pub mod writes;
