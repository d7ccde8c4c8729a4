//! What each modelled ZFS release does, as named features: models read a feature, never
//! compare releases.
//!
//! One row per release (`ZfsRelease::features`), each feature citing the commit that
//! introduced it (openzfs/zfs history; the illumos-era code is read at zfs-0.6.1, whose
//! ARC and dbuf code is line for line the illumos 2012 code FreeBSD 8.3 to 9.x shipped).
//! The table is being grown feature by feature; release comparisons that remain elsewhere
//! are listed in the layers issue.

use super::ZfsRelease;

/// Release behaviour the models read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZfsFeatures {
    /// The dbuf cache: an unheld dbuf stays, with its buffer and its header referenced
    /// (not evictable), in an LRU of `arc_c >> dbuf_cache_shift` bytes, and is destroyed
    /// when it ages out. Without it (illumos / ZoL 0.6), an unheld dbuf keeps its
    /// `arc_buf` but drops its reference (`arc_buf_remove_ref`), so the ARC may evict the
    /// header, and the eviction callback (`dbuf_do_evict`) destroys the dbuf.
    /// From 0.7.0: d3c2ae1c08 (OpenZFS 6950, "ARC should cache compressed data").
    pub dbuf_cache: bool,
    /// Holding an existing dbuf is an ARC access (`arc_buf_access`: a hit, `arc_access`)
    /// whatever its hold count. Before: only a hold of a dbuf at zero holds reached the
    /// ARC (`arc_buf_add_ref` in `dbuf_hold_impl`, 2006 Sun code), so an indirect block
    /// held by live children was never counted again; 0.7.0 to 0.7.5 counted nothing.
    /// From 0.7.6: 0873bb6337 ("Fix ARC hit rate").
    pub hold_accesses_arc: bool,
    /// Compressed ARC (`zfs_compressed_arc_enabled` exists): from 0.7.0, d3c2ae1c08.
    pub compressed_arc: bool,
    /// ARC buffer data (ABD; `zfs_abd_scatter_enabled` exists on Linux): from 0.7.0,
    /// 7657defc48 ("Introduce ARC Buffer Data (ABD)").
    pub abd: bool,
    /// `arc_meta_limit` default as a percentage of `arc_c_max`: 25 in illumos and ZoL
    /// 0.6.1 (`arc_init`: `arc_c_max / 4`), 75 from ZoL 0.6.3 (2b13331d62, "Set
    /// arc_meta_limit to 3/4 arc_c_max by default"; illumos kept 1/4).
    pub meta_limit_pct: u64,
    /// `arc_adapt` and `arc_get_data_impl` grow `arc_p` only while `arc_p < arc_c / 2`:
    /// from 2.1.7, d9de079a4b ("Fix arc_p aggressive increase"; the model's 2.1 is 2.1.16).
    /// 2.2 has no arc_p.
    pub arc_p_growth_guard: bool,
    /// The twin models this release's L2ARC (the feed, header sizes, persistence): not
    /// 0.6's (no compressed L2, an older feed), which is refused.
    pub l2arc_modelled: bool,
}

impl ZfsRelease {
    /// The release's row of the feature table.
    pub fn features(self) -> ZfsFeatures {
        match self {
            ZfsRelease::V0_6 => ZfsFeatures {
                dbuf_cache: false,
                hold_accesses_arc: false,
                compressed_arc: false,
                abd: false,
                meta_limit_pct: 25,
                arc_p_growth_guard: false,
                l2arc_modelled: false,
            },
            ZfsRelease::V0_8 | ZfsRelease::V2_1 | ZfsRelease::V2_2 => ZfsFeatures {
                dbuf_cache: true,
                hold_accesses_arc: true,
                compressed_arc: true,
                abd: true,
                meta_limit_pct: 75,
                arc_p_growth_guard: self != ZfsRelease::V0_8,
                l2arc_modelled: true,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_illumos_era_has_none_of_the_2016_arc_rewrite() {
        let f = ZfsRelease::V0_6.features();
        assert!(!f.dbuf_cache && !f.hold_accesses_arc && !f.compressed_arc && !f.abd);
        for r in [ZfsRelease::V0_8, ZfsRelease::V2_1, ZfsRelease::V2_2] {
            let f = r.features();
            assert!(f.dbuf_cache && f.hold_accesses_arc && f.compressed_arc && f.abd);
        }
    }
}
