//! Direct I/O (OpenZFS 2.3): O_DIRECT reads and writes that bypass the ARC, as the
//! dataset property `direct` allows.
//!
//! Sources, read at zfs-2.3.2: module/zfs/zfs_vnops.c (`zfs_setup_direct`, `zfs_read`,
//! `zfs_write`, `zfs_get_data`), module/zfs/dmu.c (`dmu_read_uio_dnode`,
//! `dmu_write_uio_dnode`, `dmu_buf_hold_array_by_dnode`), module/zfs/dmu_direct.c
//! (`dmu_read_abd`, `dmu_write_abd`, `dmu_write_direct`), module/zfs/dbuf.c
//! (`dmu_buf_will_clone_or_dio`, `dmu_buf_get_bp_from_dbuf`), module/zfs/zfs_log.c
//! (`zfs_log_write`), module/zfs/zio.c (`zio_dio_checksum_verify`), module/zfs/vdev.c
//! (`zfs_vdev_direct_write_verify`), module/zcommon/zfs_prop.c (`ZFS_PROP_DIRECT`).
//! Commits: a10e552b99 ("Adding Direct IO Support"), 26ecd8b993 ("Always validate
//! checksums for Direct I/O reads"), bc06d8164b ("Linux: Enable Direct IO by default").
//!
//! The mechanism:
//! - Whether a request is direct (`zfs_setup_direct`, [`setup_direct`]): never with
//!   `direct=disabled` (or `zfs_dio_enabled` 0; 1 on Linux). With `direct=standard` an
//!   O_DIRECT request is direct, and one whose offset or length is not a multiple of
//!   PAGE_SIZE (or whose buffer is not page aligned) fails with EINVAL: there is no
//!   buffered fallback. With `direct=always` every page-aligned read is direct, and every
//!   page-aligned write of at least the file's block size (or an O_DIRECT one); a
//!   misaligned request goes through the ARC, O_DIRECT or not. (A region of the file that
//!   is mmap'ed goes through the ARC: not modelled, nothing maps files.)
//! - A direct read (`zfs_read` with one chunk of up to DMU_MAX_ACCESS, 64 MiB, instead of
//!   `zfs_vnops_read_chunk_size`; `dmu_read_uio_direct` → `dmu_read_abd`): the dbufs of
//!   the range are held without reading them (`dmu_buf_hold_array_by_dnode` with
//!   `read` = false, so the parents' indirect blocks come through the ARC as for any hold,
//!   and zfetch is told of an access that prefetches no data); for each record: one whose
//!   dbuf is being read is waited for; one whose dbuf holds its data (cached, or dirty in
//!   memory) is copied from it; a hole is zero-filled; any other is read from its block
//!   pointer (the dirty record's, after a Direct I/O write) straight into the caller's
//!   pages at sync-read priority, checksummed (always, since 26ecd8b993) and
//!   decompressed, and nothing is cached: no ARC header, no arcstats.
//! - A direct write (`zfs_write` → `dmu_write_uio_dnode`): the whole records of an
//!   aligned range go direct (`dmu_write_uio_direct` → `dmu_write_abd` →
//!   `dmu_write_direct` per record); a misaligned head or tail goes through the ARC (a
//!   partial record, read first if not in memory). A direct record:
//!   `dmu_buf_will_clone_or_dio` undirties what the open txg had of the block, destroys
//!   the dbuf's ARC buffer and leaves the dbuf with no data (`DB_NOFILL`), dirties it
//!   (charged `db_size`, `dmu_objset_willuse_space`), and the block is written at once to
//!   a new place at sync-write priority (`ZIO_PRIORITY_SYNC_WRITE`, `WP_DMU_SYNC |
//!   WP_DIRECT_WR`, compressed as usual); its block pointer overrides the dirty record
//!   (`dmu_sync_ready` / `dmu_sync_done`: `DR_OVERRIDDEN`, `dr_diowrite`), so the txg's
//!   sync writes no data for it. `zfs_write` waits for the write (`zio_wait`): the data is
//!   on disk when the call returns. On Linux each leaf write's checksum is verified after
//!   the write (`zfs_vdev_direct_write_verify` = 1): anonymous pages can change under it.
//! - The intent log: every chunk of a Direct I/O write is logged WR_INDIRECT
//!   (`zfs_log_write`'s `o_direct`), the buffered pieces too; a commit stores a direct
//!   record's block pointer (`zfs_get_data` finds `dr_diowrite`) with no write, and
//!   dmu_syncs a buffered piece's record as for any WR_INDIRECT record.
//!
//! Simplifications: 1. the dbuf a buffered write leaves in the dbuf cache is not modelled
//! (writes create no dbufs: `write_path`), so a direct read of a block written through
//! the ARC and synced goes to disk where the real one may copy it from that dbuf; blocks
//! dirty in the open txg are served from memory; 2. the old block's ARC header goes at the
//! direct write (the real one stays, keyed by the old block pointer, until `arc_freed` at
//! the sync frees the old block: no reader can find it either way), and a dbuf of the
//! block in the dbuf cache is destroyed (the real one stays with no data); a dbuf held by
//! a reader at that moment keeps its data; 3. a write takes one tx per record, as the
//! write path does (`zfs_write` takes one per 32 MiB: its direct records go out together
//! either way, and the writer waits for the last); 4. the CPU of a direct write's
//! compression runs in the zio taskqs and is not charged, as for the txg sync's
//! (`write_path` simplification 5); its checksums (the write's and the verify's) are
//! charged to the writer.

use crate::config::DirectProperty;

/// PAGE_SIZE on x86-64 Linux: the alignment O_DIRECT needs (`zfs_uio_aligned`).
pub const PAGE_SIZE: u64 = 4096;

/// DMU_MAX_ACCESS (include/sys/dmu.h): a direct read is one DMU call of at most this.
pub const DMU_MAX_ACCESS: u64 = 64 << 20;

/// `zfs_vdev_direct_write_verify` (vdev.c, Linux default 1): a direct write's checksum is
/// verified after each leaf write.
pub const ZFS_VDEV_DIRECT_WRITE_VERIFY: bool = true;

/// `zfs_setup_direct`: whether a request of `len` bytes at `offset` (a write if `write`,
/// O_DIRECT if `o_direct`) on a file of block size `blksz` is Direct I/O under `prop`;
/// None: EINVAL (`direct=standard`, O_DIRECT, not page aligned). The caller's buffer is
/// taken as page aligned (fio allocates it so for direct=1).
pub fn setup_direct(
    prop: DirectProperty,
    o_direct: bool,
    write: bool,
    offset: u64,
    len: u64,
    blksz: u64,
) -> Option<bool> {
    let aligned = offset.is_multiple_of(PAGE_SIZE) && len.is_multiple_of(PAGE_SIZE);
    match prop {
        DirectProperty::Disabled => Some(false),
        // Aligned: O_DIRECT is added for a read or a write of at least a block, and an
        // O_DIRECT request keeps it.
        DirectProperty::Always if aligned => Some(o_direct || !write || len >= blksz),
        // Misaligned: O_DIRECT is cleared, the request goes through the ARC.
        DirectProperty::Always => Some(false),
        DirectProperty::Standard if !o_direct => Some(false),
        DirectProperty::Standard => aligned.then_some(true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// zfs_setup_direct's table: standard fails a misaligned O_DIRECT request, always
    /// sends it through the ARC; always makes aligned reads and whole-block writes direct.
    #[test]
    fn setup_direct_follows_zfs_setup_direct() {
        use DirectProperty::*;
        let bs = 16384;
        assert_eq!(setup_direct(Disabled, true, false, 0, 4096, bs), Some(false));
        assert_eq!(setup_direct(Standard, false, false, 0, 4096, bs), Some(false));
        assert_eq!(setup_direct(Standard, true, false, 0, 4096, bs), Some(true));
        assert_eq!(setup_direct(Standard, true, true, 512, 4096, bs), None, "EINVAL");
        assert_eq!(setup_direct(Standard, true, true, 0, 1000, bs), None, "EINVAL");
        assert_eq!(setup_direct(Always, false, false, 8192, 4096, bs), Some(true));
        assert_eq!(setup_direct(Always, false, true, 0, 4096, bs), Some(false), "a write under a block");
        assert_eq!(setup_direct(Always, true, true, 0, 4096, bs), Some(true), "O_DIRECT kept");
        assert_eq!(setup_direct(Always, false, true, 0, bs, bs), Some(true));
        assert_eq!(setup_direct(Always, true, true, 100, 4096, bs), Some(false), "misaligned: the ARC");
    }

    use crate::config::{
        test_fio_variant, FioJob, FioPhase, FsConfig, PhaseConfig, VariantConfig, WorkloadConfig, ZfsConfig,
        ZfsRelease,
    };
    use crate::run::{check_variant, run_variant};
    use serde_json::Value;

    const REC: u64 = 128 << 10;

    fn zfs(c: &mut VariantConfig) -> &mut ZfsConfig {
        let FsConfig::Zfs(z) = &mut c.filesystem else { unreachable!() };
        z
    }

    fn job(c: &mut VariantConfig, k: usize) -> &mut FioJob {
        let WorkloadConfig::Fio(w) = &mut c.workload else { unreachable!() };
        &mut w.jobs[k]
    }

    /// The test fio variant on 2.3 with `direct`; its "write" job (2) writes `records`
    /// records of 128K with O_DIRECT, then its "seqread" job (0) reads them with O_DIRECT
    /// when `read_after`, all within the first txg (zfs_txg_timeout 5 s).
    fn variant(direct: Option<DirectProperty>, records: u64, read_after: bool) -> VariantConfig {
        let mut c = test_fio_variant();
        zfs(&mut c).release = ZfsRelease::V2_3;
        zfs(&mut c).release_patch = 2;
        zfs(&mut c).direct = direct;
        for k in [0, 2] {
            let j = job(&mut c, k);
            j.direct = true;
            j.file_range = records * REC;
            j.io_size = records * REC;
        }
        c.phases = vec![PhaseConfig::Fio(FioPhase { name: "write".into(), jobs: vec![2] })];
        if read_after {
            c.phases.push(PhaseConfig::Fio(FioPhase { name: "read".into(), jobs: vec![0] }));
        }
        c
    }

    fn phases(c: &VariantConfig) -> Vec<Value> {
        run_variant(c).expect("runs").summary["phases"].as_array().unwrap().clone()
    }

    /// Bytes a phase moved on the disk (its devices window: MB/s times its length).
    fn disk_bytes(phase: &Value, dir: &str) -> f64 {
        phase["devices"]["disk"][format!("{dir}_mbps")].as_f64().unwrap()
            * 1e6
            * (phase["end_s"].as_f64().unwrap() - phase["start_s"].as_f64().unwrap())
    }

    /// An aligned O_DIRECT write (direct=standard, 2.3's default) is on the disk when the
    /// call returns (the device wrote every record during the phase, before any txg
    /// sync, and each write took at least the device's latency) and nothing of it is in
    /// the ARC; direct=disabled leaves it dirty in memory, written by the txg sync later.
    #[test]
    fn an_aligned_direct_write_is_on_disk_when_it_returns_and_not_in_the_arc() {
        let direct = phases(&variant(None, 8, false));
        let p = &direct[0];
        assert_eq!(p["zfs_write"]["txgs_synced"], 0);
        let written = disk_bytes(p, "write");
        assert!((written - 8.0 * REC as f64).abs() < REC as f64 / 2.0, "{written}");
        assert_eq!(p["arc"]["data_size"], 0, "no copy in the ARC");
        assert!(p["fio"]["write"]["clat_ms"]["p50"].as_f64().unwrap() >= 0.3, "waits for the device");
        assert_eq!(p["zfs_write"]["dirty_left_bytes"], 8 * REC, "dirty (overridden) until the txg syncs");
        let buffered = phases(&variant(Some(DirectProperty::Disabled), 8, false));
        let p = &buffered[0];
        assert_eq!(disk_bytes(p, "write"), 0.0, "buffered: nothing on disk before the sync");
        assert_eq!(p["arc"]["data_size"], 8 * REC, "buffered: the records are in the ARC");
    }

    /// The txg that syncs direct-written records writes no data for them (overridden).
    #[test]
    fn the_sync_writes_no_data_for_direct_records() {
        let mut c = variant(None, 8, false);
        c.phases.push(PhaseConfig::Restart(crate::config::RestartPhase {
            name: "r".into(),
            vm_moved: false,
            recreate_cache: false,
        }));
        let p = phases(&c);
        let t = &p[1]["zfs_write"]["txgs"][0];
        assert_eq!((t["records"].as_u64(), t["data_bytes"].as_u64()), (Some(8), Some(0)), "{t}");
    }

    /// An O_DIRECT read of records not in memory reads the disk and caches nothing (a
    /// second read reads the disk again); of records dirty in memory (written through the
    /// ARC in this txg), it copies them with no device read.
    #[test]
    fn direct_reads_bypass_the_arc_unless_the_block_is_dirty_in_memory() {
        // Direct write, then a direct read: the blocks are on disk only.
        let mut c = variant(None, 8, true);
        c.phases.push(PhaseConfig::Fio(FioPhase { name: "again".into(), jobs: vec![0] }));
        let p = phases(&c);
        for ph in &p[1..] {
            assert!((disk_bytes(ph, "read") - 8.0 * REC as f64).abs() < REC as f64 / 2.0, "{ph}");
            assert_eq!(ph["arc"]["demand_data_misses"], 0, "no ARC access for data");
            assert_eq!(ph["arc"]["demand_data_hits"], 0);
        }
        assert_eq!(p[2]["arc"]["data_size"], 0);
        // A buffered write (dirty in memory), then a direct read: no device read.
        let mut c = variant(None, 8, true);
        job(&mut c, 2).direct = false;
        let p = phases(&c);
        // Only the file's indirect blocks (full-record writes do not read them) come from
        // the disk: no record.
        assert!(disk_bytes(&p[1], "read") < REC as f64, "served from the dirty records");
        // direct=disabled: the read goes through the ARC, which holds the blocks.
        let p = phases(&variant(Some(DirectProperty::Disabled), 8, true));
        assert!(disk_bytes(&p[1], "read") < REC as f64);
        assert_eq!(p[1]["arc"]["demand_data_hits"], 8);
    }

    /// A misaligned O_DIRECT request: EINVAL with direct=standard (refused by the check,
    /// naming the job's bs), the ARC with direct=always. Before 2.3, `direct` other than
    /// disabled is refused naming `filesystem.direct`.
    #[test]
    fn misaligned_direct_io_is_einval_or_buffered_as_the_source_says() {
        let mut c = variant(None, 8, false);
        job(&mut c, 2).bs_write = 6000;
        job(&mut c, 2).bs_read = 6000;
        job(&mut c, 2).io_size = 6000 * 16;
        let e = check_variant(&c).unwrap_err().to_string();
        assert!(e.contains("workload.jobs[2] (write).bs") && e.contains("EINVAL"), "{e}");
        zfs(&mut c).direct = Some(DirectProperty::Always);
        let p = phases(&c);
        assert_eq!(disk_bytes(&p[0], "write"), 0.0, "through the ARC: nothing on disk yet");
        assert!(p[0]["arc"]["data_size"].as_u64().unwrap() > 0);
        let mut old = variant(Some(DirectProperty::Standard), 8, false);
        zfs(&mut old).release = ZfsRelease::V2_2;
        let e = check_variant(&old).unwrap_err().to_string();
        assert!(e.contains("filesystem.direct"), "{e}");
        zfs(&mut old).direct = Some(DirectProperty::Disabled);
        assert!(check_variant(&old).is_ok());
        // direct=always: an aligned write of less than a record without O_DIRECT goes
        // through the ARC; a whole record goes direct.
        let mut c = variant(Some(DirectProperty::Always), 8, false);
        job(&mut c, 2).direct = false;
        let p = phases(&c);
        assert!(disk_bytes(&p[0], "write") > 7.0 * REC as f64, "whole records: direct");
        job(&mut c, 2).bs_write = 4096;
        job(&mut c, 2).bs_read = 4096;
        job(&mut c, 2).io_size = 4096 * 16;
        let p = phases(&c);
        assert_eq!(disk_bytes(&p[0], "write"), 0.0, "under a record: through the ARC");
    }

    /// The intent log: a committed direct write is WR_INDIRECT and its commit writes no
    /// data (the block pointer is known); a sub-record O_DIRECT write goes through the ARC
    /// but is still logged WR_INDIRECT, and its commit dmu_syncs the record.
    #[test]
    fn committed_direct_writes_log_indirect_records_without_dmu_sync() {
        let mut c = variant(None, 8, false);
        job(&mut c, 2).fsync = 1;
        let p = phases(&c);
        let z = &p[0]["zil"];
        assert_eq!(z["zil_itx_indirect_count"], z["zil_commit_count"], "{z}");
        assert!(z["zil_itx_indirect_count"].as_u64().unwrap() >= 7, "{z}");
        assert_eq!(z["dmu_sync_writes"], 0, "{z}");
        let mut c = variant(None, 8, false);
        job(&mut c, 2).fsync = 1;
        job(&mut c, 2).bs_write = 4096;
        job(&mut c, 2).bs_read = 4096;
        job(&mut c, 2).io_size = 4096 * 8;
        let p = phases(&c);
        let z = &p[0]["zil"];
        assert_eq!(z["zil_itx_indirect_count"], z["zil_commit_count"], "{z}");
        assert!(z["dmu_sync_writes"].as_u64().unwrap() >= 1, "{z}");
    }
}
