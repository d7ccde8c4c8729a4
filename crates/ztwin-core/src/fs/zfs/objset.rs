//! What the pool's open objsets hold in the ARC beside the files' own block trees: the
//! meta-dnode's indirect chain of the mounted dataset and the special dnodes of it and of
//! the MOS (research: `docs/research/pool-metadata-arc.md`).
//!
//! # Mechanism (read at zfs-2.2.11; the same rules at zfs-0.8.6 and zfs-0.6.5.11 except
//! where [`ObjsetFeatures`] says)
//!
//! - `dmu_objset_create_impl_dnstats` (`module/zfs/dmu_objset.c`): a dataset's
//!   meta-dnode (object 0, the array of 512-byte dnodes in 16K blocks) has
//!   `dn_indblkshift = DN_MAX_INDBLKSHIFT` and, for every dataset (not the MOS), its
//!   `dn_nlevels` is fixed at creation to the smallest count that addresses
//!   `DN_MAX_OBJECT` = 2^48 dnodes: `dn_nblkptr << (DNODE_BLOCK_SHIFT - DNODE_SHIFT +
//!   (levels - 1) * (indblkshift - SPA_BLKPTRSHIFT)) >= 2^48`, with `dn_nblkptr` = 3 (no
//!   bonus: `dnode_allocate`, `1 + DN_OLD_MAX_BONUSLEN >> SPA_BLKPTRSHIFT`). So 6 levels
//!   at 128K indirect blocks (0.7+), 7 at 16K (0.6), however few objects there are.
//! - A held dnode holds its dnode block's dbuf (`dnode_hold_impl`: `dbuf_add_ref(db,
//!   dnh)` on the first hold), whose creation held its parent through `dbuf_findbp` and
//!   keeps that hold (`dbuf_create`: `dbuf_add_ref(parent, db)`), up to the top level
//!   (pointed to from `os_phys`). Every dnode the files and the root directory hold lies
//!   under the first L1 (32768 objects), so one chain of `nlevels - 1` indirect blocks,
//!   block id 0 at each level, is held while the dataset is mounted: each a dbuf with an
//!   uncompressed buffer of the indirect block size, its header referenced (not
//!   evictable), counted as `bufs.rs` counts any held dbuf.
//! - Each chain block has one block pointer in use: lz4 (`dmu_write_policy`: every level
//!   > 0 is metadata, compressed whatever the dataset's property) stores it in one sector
//!   ([`CompressionModel::indirect_psize`] with one pointer).
//! - `dmu_objset_open_impl` opens `dnode_t`s for the meta-dnode, userused, groupused and
//!   projectused objects of every open objset ([`ObjsetFeatures::special_dnodes`]): the
//!   mounted dataset's and the MOS's (`dnode_size`).
//! - The root directory: Linux `zfs_domount` holds the root inode for the mount's life,
//!   so its znode's dnode, bonus buffer and bonus dbuf, as an open file's
//!   ([`ObjsetFeatures::root_dir_held`]).
//!
//! # Simplifications
//!
//! 1. One mounted dataset, the files'. A pool's root dataset is mounted too by default;
//!    when the files live in a child dataset it holds a chain of its own (675,840 B at
//!    2.2, ashift 12). The scenarios do not say where their files live.
//! 2. The MOS's held blocks are not counted: its dnode blocks held by the DSL's and the
//!    space maps' bonus holds (`dsl_pool_open`, `space_map_open_impl`), its meta-dnode L1,
//!    the objset blocks (`os_phys_buf`, 4K each). Their count depends on the MOS's object
//!    numbers and on the metaslab count (the vdev's size), which the scenarios do not give.
//! 3. The root directory's dnode is taken to share the files' dnode blocks (its object
//!    number depends on the per-CPU allocation chunks of `dmu_object_alloc_impl`).
//! 4. Metadata read at import and mount and then released (evictable, and kept by 2.2's
//!    `arc_meta` balance) is not read: each boot starts with an empty ARC.

use crate::cache::arc::{dbuf_copy_bytes, ObjsetPins};
use crate::config::ObjsetFeatures;
use crate::fs::zfs::compression::CompressionModel;
use crate::fs::zfs::geometry::SPA_BLKPTRSHIFT;

/// `DNODE_SHIFT`: log2 of the 512-byte dnode.
pub const DNODE_SHIFT: u32 = 9;
/// `DNODE_BLOCK_SHIFT`: log2 of the meta-dnode's 16K data block.
pub const DNODE_BLOCK_SHIFT: u32 = 14;
/// `DN_MAX_OBJECT_SHIFT`: a dataset addresses 2^48 objects.
pub const DN_MAX_OBJECT_SHIFT: u32 = 48;
/// The meta-dnode's `dn_nblkptr` (no bonus buffer).
pub const META_DNODE_NBLKPTR: u64 = 3;

/// `dmu_objset_create_impl_dnstats`: the levels of a dataset's meta-dnode whose indirect
/// blocks are `2^indblkshift` bytes (6 at 17, 7 at 14).
pub fn meta_dnode_nlevels(indblkshift: u32) -> u32 {
    let epbs = indblkshift - SPA_BLKPTRSHIFT;
    let mut levels = 1;
    while (u128::from(META_DNODE_NBLKPTR) << (DNODE_BLOCK_SHIFT - DNODE_SHIFT + (levels - 1) * epbs))
        < 1u128 << DN_MAX_OBJECT_SHIFT
    {
        levels += 1;
    }
    levels
}

/// What the mounted dataset and the MOS pin in the ARC (see the module doc): the
/// dataset's meta-dnode chain, stored by `compression`'s sector rule, held under this
/// pool's compressed ARC and ABD settings, and the special dnodes of both objsets.
pub fn open_objset_pins(
    f: &ObjsetFeatures,
    compression: &CompressionModel,
    compressed_arc: bool,
    abd_scatter: bool,
) -> ObjsetPins {
    let blocks = u64::from(meta_dnode_nlevels(f.meta_dnode_indblkshift) - 1);
    let lsize = 1u32 << f.meta_dnode_indblkshift;
    let psize = compression.indirect_psize(lsize, 1);
    let hdr = if compressed_arc { psize } else { lsize };
    let copy = dbuf_copy_bytes(lsize, psize, compressed_arc, abd_scatter);
    ObjsetPins {
        blocks,
        hdr_bytes: blocks * u64::from(hdr),
        copies: blocks * u64::from(copy),
        lsize: blocks * u64::from(lsize),
        dnodes: 2 * f.special_dnodes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Compression, ZfsRelease};

    fn lz4(ashift: u8) -> CompressionModel {
        CompressionModel::new(Compression::Lz4, 1.0, ashift, 1).unwrap()
    }

    /// 3 << (5 + 10 * 4) = 3 * 2^45 < 2^48 <= 3 * 2^55: six levels at 128K; at 16K,
    /// 3 << (5 + 7 * 5) = 3 * 2^40 < 2^48 <= 3 * 2^47: seven.
    #[test]
    fn a_datasets_meta_dnode_addresses_two_to_the_48_dnodes() {
        assert_eq!(meta_dnode_nlevels(17), 6);
        assert_eq!(meta_dnode_nlevels(14), 7);
        for ibs in 12..=17 {
            let n = meta_dnode_nlevels(ibs);
            let reach = |l: u32| 3u128 << (5 + (l - 1) * (ibs - 7));
            assert!(reach(n) >= 1 << 48 && reach(n - 1) < 1 << 48, "ibs {ibs}");
        }
    }

    /// 2.2 at ashift 12: five 128K blocks, each one 4K sector compressed plus a 128K
    /// decompressed copy; 4 + 4 special dnodes.
    #[test]
    fn the_2_2_chain_is_five_sectors_and_five_128k_copies() {
        let f = ZfsRelease::V2_2.features().objset;
        let p = open_objset_pins(&f, &lz4(12), true, true);
        assert_eq!(p.blocks, 5);
        assert_eq!(p.hdr_bytes, 5 * 4096);
        assert_eq!(p.copies, 5 * 131072);
        assert_eq!(p.lsize, 5 * 131072);
        assert_eq!(p.hdr_bytes + p.copies, 675_840);
        assert_eq!(p.dnodes, 8);
        // ashift 9: one 512-byte sector each.
        assert_eq!(open_objset_pins(&f, &lz4(9), true, true).hdr_bytes, 5 * 512);
        // zfs_compressed_arc_enabled = 0: the header holds 128K, the dbuf its own copy
        // (scatter), or shares it (linear ABDs).
        let p = open_objset_pins(&f, &lz4(12), false, true);
        assert_eq!((p.hdr_bytes, p.copies), (5 * 131072, 5 * 131072));
        let p = open_objset_pins(&f, &lz4(12), false, false);
        assert_eq!((p.hdr_bytes, p.copies), (5 * 131072, 0));
    }

    /// 0.6: six 16K blocks in the header's own buffer (no compressed ARC, no ABD), three
    /// special dnodes per objset.
    #[test]
    fn the_0_6_chain_is_six_uncompressed_16k_blocks() {
        let f = ZfsRelease::V0_6.features();
        let p = open_objset_pins(&f.objset, &lz4(9), f.compressed_arc, f.abd);
        assert_eq!((p.blocks, p.hdr_bytes, p.copies, p.dnodes), (6, 6 * 16384, 0, 6));
    }
}
