use super::*;
use crate::config::{test_variant, ZfsRelease, ZilTunables};

fn zfs(release: ZfsRelease, patch: u16) -> ZfsConfig {
    let FsConfig::Zfs(mut z) = test_variant().filesystem else { unreachable!() };
    z.release = release;
    z.release_patch = patch;
    z
}

fn params(release: ZfsRelease, patch: u16) -> ZilParams {
    ZilParams::resolve(&zfs(release, patch)).expect("valid")
}

/// zfs_log_write's choice: logbias=throughput is always indirect; without a SLOG a chunk
/// of at least zfs_immediate_write_sz is indirect; an O_SYNC chunk is copied up to
/// zil_max_copied_data (about 64K before 2.2, 7680 bytes from 2.2.0); the rest need-copy.
#[test]
fn write_state_follows_zfs_log_write() {
    let p08 = params(ZfsRelease::V0_8, 0);
    assert_eq!(p08.max_copied, (131072 - 184) / 2 - 192);
    assert_eq!(p08.write_state(16384, true, false), WrState::Copied);
    assert_eq!(p08.write_state(16384, false, false), WrState::NeedCopy);
    assert_eq!(p08.write_state(32768, true, false), WrState::Indirect, "no SLOG, >= 32K");
    assert_eq!(p08.write_state(32768, true, true), WrState::Copied, "a SLOG takes it");
    assert_eq!(p08.write_state(131072, true, true), WrState::NeedCopy, "over max copied");
    let p22 = params(ZfsRelease::V2_2, 11);
    assert_eq!(p22.max_copied, 7680);
    assert_eq!(p22.write_state(4096, true, false), WrState::Copied);
    assert_eq!(p22.write_state(8192, true, false), WrState::NeedCopy);
    let mut z = zfs(ZfsRelease::V2_2, 11);
    z.logbias = Logbias::Throughput;
    let thr = ZilParams::resolve(&z).unwrap();
    for (len, slog) in [(512, false), (4096, true), (131072, true)] {
        assert_eq!(thr.write_state(len, true, slog), WrState::Indirect);
    }
    z.zil.zfs_immediate_write_sz = Some(65536);
    z.logbias = Logbias::Latency;
    assert_eq!(ZilParams::resolve(&z).unwrap().write_state(32768, false, false), WrState::NeedCopy);
}

/// The release's defaults, and the tunables it lacks refused by name.
#[test]
fn params_take_the_release_defaults_and_refuse_what_it_lacks() {
    let p = params(ZfsRelease::V2_2, 0);
    assert_eq!((p.slog_bulk, p.commit_timeout_pct, p.min_commit_timeout), (768 << 10, 5, 5000));
    let p = params(ZfsRelease::V2_2, 11);
    assert_eq!((p.slog_bulk, p.commit_timeout_pct, p.min_commit_timeout), (64 << 20, 10, 0));
    assert_eq!(params(ZfsRelease::V2_1, 9).min_commit_timeout, 0);
    assert_eq!(params(ZfsRelease::V2_1, 10).min_commit_timeout, 5000);
    assert_eq!(params(ZfsRelease::V0_8, 0).max_waste, (131072 - 184 - 192) / 8);
    assert_eq!(params(ZfsRelease::V2_2, 0).max_waste, (131072 - 184 - 192) / 16);
    let refuse = |release, patch, t: ZilTunables, field: &str| {
        let mut z = zfs(release, patch);
        z.zil = t;
        match ZilParams::resolve(&z) {
            Err(Error::Config { field: f, .. }) => assert_eq!(f, field),
            other => panic!("{other:?}"),
        }
    };
    let t = |f: fn(&mut ZilTunables)| {
        let mut t = ZilTunables::default();
        f(&mut t);
        t
    };
    refuse(
        ZfsRelease::V2_2,
        11,
        t(|t| t.zil_min_commit_timeout = Some(1)),
        "filesystem.zil.zil_min_commit_timeout",
    );
    refuse(
        ZfsRelease::V2_1,
        9,
        t(|t| t.zil_min_commit_timeout = Some(1)),
        "filesystem.zil.zil_min_commit_timeout",
    );
    refuse(ZfsRelease::V2_1, 11, t(|t| t.zil_maxcopied = Some(4096)), "filesystem.zil.zil_maxcopied");
    refuse(ZfsRelease::V0_8, 0, t(|t| t.zil_maxblocksize = Some(6144)), "filesystem.zil.zil_maxblocksize");
    refuse(
        ZfsRelease::V0_8,
        0,
        t(|t| t.zfs_commit_timeout_pct = Some(5000)),
        "filesystem.zil.zfs_commit_timeout_pct",
    );
    let mut z = zfs(ZfsRelease::V0_6, 0);
    assert!(ZilParams::resolve(&z).is_ok(), "defaults on 0.6: nothing to refuse");
    z.sync = SyncProperty::Always;
    assert!(
        matches!(ZilParams::resolve(&z), Err(Error::Config { field, .. }) if field == "filesystem.release")
    );
}

/// vdev_metaslab_set_size (2.1): about 200 metaslabs from 100 GB up, 512 MiB ones below,
/// at least 16; the embedded log metaslab needs more than 64.
#[test]
fn metaslab_sizes_follow_vdev_metaslab_set_size() {
    const GIB: u64 = 1 << 30;
    // A 4 GiB disk less its labels: asize / 16 just under 256 MiB.
    let small = 4 * GIB - (VDEV_LABEL_START_SIZE + VDEV_LABEL_END_SIZE);
    assert_eq!(metaslab_shift(small), 28, "under 8 GB: about 16 metaslabs");
    assert_eq!(metaslab_shift(50 * GIB), 29, "8-100 GB: 512 MiB each");
    assert_eq!((50 * GIB) >> 29, 100);
    let tb = 1_000_000_000_000u64;
    assert_eq!(metaslab_shift(tb), 33);
    assert!(tb >> 33 > EMBEDDED_SLOG_MIN_MS);
    assert_eq!(metaslab_shift(64 * tb), 34, "3 TB up: 16 GiB each");
}

/// 2.3 (c3773de168): with sync=always a small write that is not O_SYNC is copied into its
/// record, where 2.2.11 leaves it need-copy; O_SYNC writes are copied in both.
#[test]
fn sync_always_copies_small_writes_from_23() {
    for (release, patch, want) in
        [(ZfsRelease::V2_2, 11, WrState::NeedCopy), (ZfsRelease::V2_3, 2, WrState::Copied)]
    {
        let mut z = zfs(release, patch);
        z.sync = SyncProperty::Always;
        let p = ZilParams::resolve(&z).unwrap();
        assert_eq!(p.log_state(4096, false, false), want, "{release:?}");
        assert_eq!(p.log_state(4096, true, false), WrState::Copied);
        z.sync = SyncProperty::Standard;
        assert_eq!(ZilParams::resolve(&z).unwrap().log_state(4096, false, false), WrState::NeedCopy);
    }
}

/// 2.3's kstat has the commit error, stall and suspend counts after the writer count.
#[test]
fn kstat_rows_of_23() {
    let s = ZilStats::default();
    let names = |r, p| -> Vec<&str> {
        s.rows(&s, &ZfsFeatures::resolve(r, p).zil).into_iter().map(|(n, _)| n).collect()
    };
    let n23 = names(ZfsRelease::V2_3, 2);
    assert_eq!(
        &n23[..5],
        &[
            "zil_commit_count",
            "zil_commit_writer_count",
            "zil_commit_error_count",
            "zil_commit_stall_count",
            "zil_commit_suspend_count"
        ]
    );
    let n22 = names(ZfsRelease::V2_2, 11);
    assert_eq!(n22.len() + 3, n23.len());
    assert!(!n22.contains(&"zil_commit_stall_count"));
}
