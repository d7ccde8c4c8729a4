//! OpenZFS: block-pointer tree geometry, compression, the read path.
pub mod compression;
pub mod dbuf;
pub mod geometry;
pub mod read_path;
pub mod zfetch;
