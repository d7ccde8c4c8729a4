//! XFS and ext4 under InnoDB with O_DIRECT: extent-mapped files.
//!
//! An InnoDB data file is allocated in large extents, so the file's block map fits in the
//! inode (or a few cached extent blocks): translating an offset costs no device read, and
//! a page read is exactly one device read of the page's size. With
//! innodb_flush_method=O_DIRECT the page cache is bypassed for data files, so nothing
//! between the buffer pool and the device caches data (bcache, below the filesystem,
//! may: `cache::bcache`).
//!
//! Simplifications: 1. the extent map is always in memory (true for a handful of large,
//! preallocated .ibd files); 2. innodb_flush_method=fsync (buffered I/O through the page
//! cache) is not modelled yet and is rejected by the driver; 3. the table files lie one
//! after the other on the device, each contiguous (what a fresh filesystem gives files
//! written one at a time; only bcache's sequential detection sees device offsets).

/// An extent-mapped filesystem on one device.
#[derive(Debug, Clone)]
pub struct ExtentFs {
    /// Index of the device in the run's device list.
    pub device: usize,
    /// Filesystem block size, bytes.
    pub block_size: u32,
    /// Size of each table file, bytes.
    pub file_size: u64,
}

impl ExtentFs {
    /// The device range a read of `len` bytes at `offset` covers with O_DIRECT: the
    /// range rounded out to filesystem blocks (a 16 KiB InnoDB page on 4 KiB blocks is
    /// one 16 KiB read). Returns (start, bytes).
    pub fn read_range(&self, offset: u64, len: u32) -> (u64, u32) {
        let bs = self.block_size as u64;
        let start = offset / bs * bs;
        let end = (offset + len as u64).div_ceil(bs) * bs;
        (start, (end - start) as u32)
    }

    /// Bytes the device reads for a read of `len` bytes at `offset`.
    pub fn read_bytes(&self, offset: u64, len: u32) -> u32 {
        self.read_range(offset, len).1
    }

    /// Device offset of byte `offset` of table file `file` (simplification 3).
    pub fn device_offset(&self, file: u32, offset: u64) -> u64 {
        u64::from(file) * self.file_size + offset
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_pages_read_exactly_their_size() {
        let fs = ExtentFs { device: 0, block_size: 4096, file_size: 1 << 30 };
        assert_eq!(fs.read_bytes(16384 * 7, 16384), 16384);
        assert_eq!(fs.read_bytes(100, 16384), 20480);
        assert_eq!(fs.read_range(100, 16384), (0, 20480));
        assert_eq!(fs.device_offset(3, 4096), 3 * (1 << 30) + 4096);
    }
}
