//! OpenZFS: block-pointer tree geometry, compression, record contents, the read path
//! (`layer`: the filesystem the driver calls; `prefetch`: dbuf_prefetch_impl), the write
//! path's txgs and throttle, the intent log (`zil`), Direct I/O (`direct`, 2.3).
pub mod compression;
pub mod compressors;
pub mod content;
pub mod dbuf;
pub mod direct;
pub mod geometry;
pub mod layer;
pub mod objset;
pub mod pool;
pub mod prefetch;
pub mod read_path;
pub mod txg;
pub mod vdev_queue;
pub mod wr_iss;
pub mod write_path;
pub mod zfetch;
pub mod zil;
