//! The ARC's limits: `arc_c_min`, `arc_c_max`, the initial `arc_c` and `arc_p`,
//! `arc_meta_limit` and `arc_meta_min`, as the release's `arc_init()` and
//! `arc_tuning_update()` derive them from RAM and the tunables.
//!
//! # Sources
//!
//! `module/zfs/arc.c` `arc_init()`, `arc_tuning_update()` (and `arc_default_max()`,
//! `module/os/linux/zfs/arc_os.c` from 2.0) at zfs-0.6.1, zfs-0.8.6, zfs-2.1.16,
//! zfs-2.2.0, zfs-2.3.2. What differs between releases is a feature each
//! ([`crate::config::ArcFeatures`]): `c_max_floor_c_min`, `c_max_five_eighths`,
//! `c_starts_at_min`, `arc_max_lowers_c_min`, `meta_limit_pct`.
//!
//! # Tunables (zfs(4) names; value 0 in [`ArcTunables`](crate::config::ArcTunables) = release default)
//!
//! - `zfs_arc_max`: 0 = RAM/2 (`arc_default_max`, 2.0 .. 2.2: max(RAM/2, c_min); 2.3:
//!   max(RAM * 5/8, RAM - 1 GiB), with c_min for RAM - 1 GiB below 1 GiB); applied only if
//!   at least 64 MiB and below RAM; 0.8 also ignores it unless above c_min
//!   (`arc_tuning_update`); 2.1+ lowers c_min to max(zfs_arc_max/2, 32 MiB) when c_min is
//!   not below it (`arc_init`).
//! - `zfs_arc_min`: 0 = max(RAM/32, 32 MiB); applied if >= 32 MiB and <= c_max.
//! - `zfs_arc_meta_limit` (0.8/2.1): 0 = `zfs_arc_meta_limit_percent` (75) % of c_max.
//! - `zfs_arc_meta_min` (0.8/2.1): 0 = 16 MiB (1 << SPA_MAXBLOCKSHIFT).
//! - `zfs_arc_meta_balance` (2.2): 0 = 500.
//! - `zfs_compressed_arc_enabled`: taken as given (OpenZFS default 1 since 0.7.0).
//! - Fixed at their defaults: `zfs_arc_p_min_shift` 4, `zfs_arc_p_dampener_disable` 1
//!   (multiplier uncapped), `zfs_arc_meta_adjust_restarts` 4096, `zfs_arc_meta_strategy`
//!   balanced, `zfs_arc_min_prefetch_ms` 1000, ARC_MINTIME 62 ms (hz >> 4 at HZ=1000).
//!
//! # Simplifications (numbered across the ARC's modules)
//!
//! 3. No memory pressure: `arc_no_grow` is always false, `arc_reclaim_needed()` false,
//!    `c` never shrinks (no `arc_shrink`, no `arc_reap`).

use super::ArcParams;
use crate::error::{Error, Result};

/// 32 MiB: 2 << SPA_MAXBLOCKSHIFT, the floor of c_min and the growth window of arc_adapt.
pub(super) const TWO_MAXBLOCKS: u64 = 2 << 24;
/// 16 MiB: 1 << SPA_MAXBLOCKSHIFT, default arc_meta_min.
const META_MIN_DEFAULT: u64 = 1 << 24;
/// 64 MiB: MIN_ARC_MAX, the smallest zfs_arc_max accepted.
const MIN_ARC_MAX: u64 = 64 << 20;

/// The limits arc_init()/arc_tuning_update() derive from RAM and the tunables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArcLimits {
    /// arc_c_min
    pub c_min: u64,
    /// arc_c_max
    pub c_max: u64,
    /// initial arc_c
    pub c: u64,
    /// initial arc_p (0.8/2.1)
    pub p: u64,
    /// arc_meta_limit (0.8/2.1)
    pub meta_limit: u64,
    /// arc_meta_min (0.8/2.1)
    pub meta_min: u64,
}

impl ArcLimits {
    /// Computes the limits as the release's arc_init() + arc_tuning_update() do.
    pub fn from_params(params: &ArcParams) -> ArcLimits {
        let f = params.features();
        let ram = params.ram_bytes;
        let t = &params.tunables;
        let mut c_min = (ram / 32).max(TWO_MAXBLOCKS);
        // 0.6 (zfs-0.6.1 arc_init; FreeBSD's takes c_max from vfs.zfs.arc_max the same
        // way) and 0.8: c_max = RAM / 2; 2.0 .. 2.2 Linux arc_default_max: max(RAM / 2,
        // c_min); 2.3: max(RAM * 5 / 8, RAM - 1 GiB, or c_min below 1 GiB).
        let mut c_max = if f.c_max_five_eighths {
            let size = if ram >= 1 << 30 { ram - (1 << 30) } else { c_min };
            // allmem * 5 / 8 without overflow (replay sizes RAM from its --size).
            (ram / 8 * 5 + ram % 8 * 5 / 8).max(size)
        } else if f.c_max_floor_c_min {
            (ram / 2).max(c_min)
        } else {
            ram / 2
        };
        if t.zfs_arc_max != 0
            && t.zfs_arc_max >= MIN_ARC_MAX
            && t.zfs_arc_max < ram
            && (f.arc_max_lowers_c_min || t.zfs_arc_max > c_min)
        {
            // 2.1+ arc_init takes it and lowers c_min under it; before, only
            // arc_tuning_update takes it, and only above c_min.
            c_max = t.zfs_arc_max;
            if f.arc_max_lowers_c_min && c_min >= c_max {
                c_min = (t.zfs_arc_max / 2).max(TWO_MAXBLOCKS);
            }
        }
        let mut c = if f.c_starts_at_min { c_min } else { c_max };
        let p = c >> 1;
        if t.zfs_arc_min != 0 && t.zfs_arc_min >= TWO_MAXBLOCKS && t.zfs_arc_min <= c_max {
            c_min = t.zfs_arc_min;
            c = c.max(c_min);
        }
        c = c.max(c_min);
        // arc_meta_min / arc_meta_limit (0.8/2.1; computed for 2.2 too but unused there).
        let mut meta_min = META_MIN_DEFAULT;
        let pct = f.meta_limit_pct;
        let mut meta_limit = meta_min.max(pct * c_max / 100);
        if t.zfs_arc_meta_min != 0 && t.zfs_arc_meta_min >= META_MIN_DEFAULT && t.zfs_arc_meta_min <= c_max {
            meta_min = t.zfs_arc_meta_min;
            meta_limit = meta_limit.max(meta_min);
        }
        let limit = if t.zfs_arc_meta_limit != 0 { t.zfs_arc_meta_limit } else { pct * c_max / 100 };
        if limit >= meta_min && limit <= c_max {
            meta_limit = limit;
        }
        ArcLimits { c_min, c_max, c, p, meta_limit, meta_min }
    }
}

impl ArcLimits {
    /// The tunables as the release applies them: OpenZFS ignores out-of-range ones without
    /// a word (`arc_tuning_update`); the model refuses them instead, saying what the
    /// release would have done. Errors name `filesystem.arc.NAME`.
    pub fn check_tunables(params: &ArcParams) -> Result<()> {
        let a = &params.tunables;
        let limits = ArcLimits::from_params(params);
        let release = params.release.name();
        if a.zfs_arc_max != 0 && limits.c_max != a.zfs_arc_max {
            return Err(Error::config(
                "filesystem.arc.zfs_arc_max",
                format!(
                    "release {release} ignores zfs_arc_max = {} bytes here (it must exceed arc_c_min = {} bytes, the default max(RAM/32, 32 MiB), in 0.8; be at least 64 MiB and below RAM in every release); arc_c_max would stay {} bytes",
                    a.zfs_arc_max, limits.c_min, limits.c_max
                ),
            ));
        }
        if a.zfs_arc_min != 0 && limits.c_min != a.zfs_arc_min {
            return Err(Error::config(
                "filesystem.arc.zfs_arc_min",
                format!(
                    "release {release} ignores zfs_arc_min = {} bytes here (it must be at least 32 MiB and at most arc_c_max = {} bytes)",
                    a.zfs_arc_min, limits.c_max
                ),
            ));
        }
        Ok(())
    }
}
