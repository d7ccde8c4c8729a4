//! OpenZFS: block-pointer tree geometry, compression, record contents, the read path, the
//! write path's txgs and throttle.
pub mod compression;
pub mod compressors;
pub mod content;
pub mod dbuf;
pub mod geometry;
pub mod pool;
pub mod read_path;
pub mod txg;
pub mod zfetch;
