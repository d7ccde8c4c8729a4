//! XFS and ext4 under InnoDB with O_DIRECT: extent-mapped files.
//!
//! An InnoDB data file is allocated in large extents, so the file's block map fits in the
//! inode (or a few cached extent blocks): translating an offset costs no device read, and
//! a page read is exactly one device read of the page's size. With
//! innodb_flush_method=O_DIRECT the page cache is bypassed for data files, so nothing
//! between the buffer pool and the device caches data.
//!
//! Simplifications: 1. the extent map is always in memory (true for a handful of large,
//! preallocated .ibd files); 2. innodb_flush_method=fsync (buffered I/O through the page
//! cache) is not modelled yet and is rejected by the driver.

/// An extent-mapped filesystem on one device.
#[derive(Debug, Clone)]
pub struct ExtentFs {
    /// Index of the device in the run's device list.
    pub device: usize,
    /// Filesystem block size, bytes.
    pub block_size: u32,
}

impl ExtentFs {
    /// Bytes the device reads for a read of `len` bytes at `offset` with O_DIRECT: the
    /// range rounded out to filesystem blocks (a 16 KiB InnoDB page on 4 KiB blocks is
    /// one 16 KiB read).
    pub fn read_bytes(&self, offset: u64, len: u32) -> u32 {
        let bs = self.block_size as u64;
        let start = offset / bs * bs;
        let end = (offset + len as u64).div_ceil(bs) * bs;
        (end - start) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_pages_read_exactly_their_size() {
        let fs = ExtentFs { device: 0, block_size: 4096 };
        assert_eq!(fs.read_bytes(16384 * 7, 16384), 16384);
        assert_eq!(fs.read_bytes(100, 16384), 20480);
    }
}
