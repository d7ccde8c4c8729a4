//! How much memory the page cache of a machine may hold: the budget [`super::PageCache`]
//! is built with, derived from the machine's RAM and what its processes hold, as Linux 6.1
//! on x86-64 leaves it.
//!
//! # Derivation
//!
//! The page cache grows into free memory until the free pages of a zone reach its low
//! watermark; kswapd then reclaims it back to the high watermark, and an allocation may not
//! take a lower zone's `lowmem_reserve`. What it can hold is therefore what `MemAvailable`
//! (`si_mem_available`) reports on the running machine with the cache empty: free pages
//! less `totalreserve_pages` (the high watermarks and the largest lowmem reserve of every
//! zone). So:
//!
//! ```text
//! budget = MemTotal - processes - totalreserve_pages
//! MemTotal          = RAM - memmap                      (totalram_pages)
//! memmap            = RAM / 64                          (a 64-byte struct page per 4 KiB page)
//! min_free_kbytes   = max(clamp(4 x sqrt(lowmem KiB), 128, 262144),            (calculate_min_free_kbytes)
//!                         min(pageblock x zones x (2 + 3 x 3), lowmem / 20))    (set_recommended_min_free_kbytes)
//! per zone z:  min_z  = min_free pages x managed_z / lowmem
//!              step_z = max(min_z / 4, managed_z x watermark_scale_factor / 10000)
//!              high_z = min_z + 2 x step_z                                       (__setup_per_zone_wmarks)
//!              reserve_z = managed pages of the zones above z / lowmem_reserve_ratio_z
//! totalreserve_pages = sum over z of min(managed_z, reserve_z + high_z)        (calculate_totalreserve_pages)
//! ```
//!
//! A user who measured the machine states the figure instead (`[machine] mem_available`:
//! `MemAvailable` of /proc/meminfo, the "available" column of `free`, with the database
//! running and its buffer pool filled, after `sync; echo 1 > /proc/sys/vm/drop_caches`).
//! For a 4 GiB guest with a 128 MiB buffer pool: MemTotal 4032 MiB, min_free_kbytes 67584
//! (the transparent-hugepage figure: three zones of 2 MiB pageblocks), totalreserve 118 MiB
//! (high watermarks 99 MiB, DMA's reserve the whole 16 MiB zone, DMA32's 3.75 MiB), budget
//! 3769 MiB.
//!
//! # Sources
//!
//! Linux 6.1: mm/page_alloc.c `si_mem_available` (MemFree less `totalreserve_pages`, plus
//! reclaimable file pages), `calculate_min_free_kbytes` (int_sqrt(lowmem_kbytes x 16),
//! clamped to 128 .. 262144), `__setup_per_zone_wmarks` (`watermark_scale_factor` 10, the
//! low and high watermarks each `max(min / 4, managed x factor / 10000)` above the one
//! below), `setup_per_zone_lowmem_reserve` (`sysctl_lowmem_reserve_ratio` = 256 for DMA and
//! DMA32, 32 for Normal), `calculate_totalreserve_pages`, `nr_free_buffer_pages`;
//! mm/khugepaged.c `set_recommended_min_free_kbytes` (with transparent hugepages enabled,
//! `always` or `madvise`, as Debian's kernel builds them: two pageblocks per zone plus
//! MIGRATE_PCPTYPES² more, at most 5% of lowmem; `pageblock_order` 9 on x86-64, 2 MiB);
//! include/linux/mm_types.h (`struct page`, 64 bytes on x86-64), mm/sparse.c (the memmap
//! is allocated from memblock and never reaches the buddy allocator, so it is not in
//! MemTotal); arch/x86/mm/init.c `zone_sizes_init` (ZONE_DMA below 16 MiB, ZONE_DMA32
//! below 4 GiB, ZONE_NORMAL above). InnoDB: `innodb_log_buffer_size` 16 MiB (MySQL 5.7
//! `srv0srv.cc` / `sys_vars`, MariaDB 10.11 `ha_innodb.cc`).
//!
//! # Simplifications
//!
//! 1. The kernel image, firmware-reserved ranges, the swiotlb bounce buffer and a crash
//!    kernel are not subtracted from MemTotal (tens of MiB); neither is the kernel's own
//!    dynamic memory (slab, page tables, kernel stacks) nor the processes the twin does not
//!    run (systemd, sshd, the benchmark client). State `mem_available` for a measured figure.
//! 2. What the database holds is its buffer pool (`innodb_buffer_pool_size`) and its log
//!    buffer (`innodb_log_buffer_size`, the 16 MiB default): not the pool's block
//!    descriptors, the adaptive hash index, the dictionary cache or per-connection buffers
//!    (a few percent of the pool). fio's buffers are not counted.
//! 3. RAM below 4 GiB of physical addresses is taken as min(RAM, 3 GiB) (ASSUMED: the PCI
//!    hole from 3 GiB that PC firmware and QEMU's i440fx machine leave), the rest above
//!    4 GiB; each zone's managed pages are its span (the first MiB's reservations are not
//!    subtracted), and the memmap is taken from the highest zone (memblock allocates top
//!    down).
//! 4. One NUMA node. A `vm.min_free_kbytes` set by the user replaces the kernel's value
//!    (written after boot, as a sysctl is, it also replaces khugepaged's raise).
//! 5. The budget is also the dirtyable memory of the dirty limits (see the module doc of
//!    [`super`], simplification 5).

/// Bytes of `struct page` per 4 KiB page on x86-64 (include/linux/mm_types.h).
pub const STRUCT_PAGE_BYTES: u64 = 64;
/// `innodb_log_buffer_size`'s default, bytes (MySQL 5.7, MariaDB 10.11).
pub const INNODB_LOG_BUFFER_SIZE: u64 = 16 << 20;
/// `watermark_scale_factor`'s default (mm/page_alloc.c): 10, i.e. 0.1% of a zone.
pub const WATERMARK_SCALE_FACTOR: u32 = 10;

const PAGE: u64 = super::PAGE_SIZE;
/// ZONE_DMA's end: 16 MiB (MAX_DMA_PFN).
const DMA_END: u64 = 16 << 20;
/// Where RAM stops below 4 GiB (simplification 3).
const LOW_RAM_END: u64 = 3 << 30;
/// `pageblock_nr_pages` on x86-64 (pageblock_order = HPAGE_PMD_ORDER = 9).
const PAGEBLOCK_PAGES: u64 = 512;
/// MIGRATE_PCPTYPES (unmovable, movable, reclaimable).
const MIGRATE_PCPTYPES: u64 = 3;
/// `sysctl_lowmem_reserve_ratio` of ZONE_DMA, ZONE_DMA32, ZONE_NORMAL.
const LOWMEM_RESERVE_RATIO: [u64; 3] = [256, 256, 32];

/// The kernel's memory figures of a machine, as the derivation gives them (bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelMemory {
    /// meminfo MemTotal.
    pub mem_total: u64,
    /// vm.min_free_kbytes, KiB.
    pub min_free_kbytes: u64,
    /// The high watermarks of all zones.
    pub high_watermarks: u64,
    /// `totalreserve_pages`, bytes.
    pub totalreserve: u64,
}

/// [`KernelMemory`] of a machine with `ram_bytes` of RAM; `min_free_kbytes` and
/// `watermark_scale_factor` as the user set them (None: the kernel's).
pub fn kernel_memory(
    ram_bytes: u64,
    min_free_kbytes: Option<u64>,
    watermark_scale_factor: Option<u32>,
) -> KernelMemory {
    let ram = ram_bytes / PAGE * PAGE;
    let memmap = ram / PAGE * STRUCT_PAGE_BYTES;
    let low = ram.min(LOW_RAM_END);
    // Spans (pages) of DMA, DMA32 and Normal; the memmap comes off the highest one.
    let mut zones = [ram.min(DMA_END) / PAGE, low.saturating_sub(DMA_END) / PAGE, (ram - low) / PAGE];
    let mut left = memmap.div_ceil(PAGE);
    for z in zones.iter_mut().rev() {
        let take = left.min(*z);
        *z -= take;
        left -= take;
    }
    let lowmem: u64 = zones.iter().sum();
    let populated = zones.iter().filter(|&&z| z > 0).count() as u64;
    let min_free_kbytes = min_free_kbytes.unwrap_or_else(|| {
        let lowmem_kb = lowmem * (PAGE / 1024);
        let computed = (lowmem_kb.saturating_mul(16)).isqrt().clamp(128, 262_144);
        let thp = (PAGEBLOCK_PAGES * populated * (2 + MIGRATE_PCPTYPES * MIGRATE_PCPTYPES)).min(lowmem / 20)
            * (PAGE / 1024);
        computed.max(thp)
    });
    let factor = u64::from(watermark_scale_factor.unwrap_or(WATERMARK_SCALE_FACTOR));
    let pages_min = min_free_kbytes / (PAGE / 1024);
    let (mut high_total, mut reserve_total) = (0u64, 0u64);
    for (i, &managed) in zones.iter().enumerate() {
        if managed == 0 {
            continue;
        }
        let min = (u128::from(pages_min) * u128::from(managed) / u128::from(lowmem.max(1))) as u64;
        let step = (min / 4).max(managed * factor / 10_000);
        let high = min + 2 * step;
        let above: u64 = zones[i + 1..].iter().sum();
        let reserve = above / LOWMEM_RESERVE_RATIO[i];
        high_total += high;
        reserve_total += (reserve + high).min(managed);
    }
    KernelMemory {
        mem_total: lowmem * PAGE,
        min_free_kbytes,
        high_watermarks: high_total * PAGE,
        totalreserve: reserve_total * PAGE,
    }
}

/// The page cache's budget, bytes: MemTotal less `processes_bytes` less
/// `totalreserve_pages` (0 when nothing is left).
pub fn budget_bytes(k: &KernelMemory, processes_bytes: u64) -> u64 {
    k.mem_total.saturating_sub(processes_bytes).saturating_sub(k.totalreserve) / PAGE * PAGE
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;
    const GIB: u64 = 1 << 30;

    /// The figures of the module doc's 4 GiB guest, worked by hand from the formulas.
    #[test]
    fn a_4_gib_guest() {
        let k = kernel_memory(4 * GIB, None, None);
        // 1 GiB of pages' struct page (64 MiB) comes off ZONE_NORMAL: 1032192 pages.
        assert_eq!(k.mem_total, 4 * GIB - 64 * MIB);
        // 4 x sqrt(4032 MiB in KiB) = 8127 KiB, below khugepaged's 3 x 11 x 2 MiB.
        assert_eq!(k.min_free_kbytes, 67_584);
        // min 16896 pages split 67 / 12806 / 4022 over DMA (4096 pages), DMA32 (782336),
        // Normal (245760); steps min/4 = 16 / 3201 / 1005 (above 0.1%): highs 99 / 19208 /
        // 6032. Reserves: DMA (DMA32 + Normal) / 256 = 4016, capped with its high at the
        // zone's 4096; DMA32 Normal / 256 = 960.
        assert_eq!(k.high_watermarks, (99 + 19_208 + 6_032) * 4096);
        assert_eq!(k.totalreserve, (4_096 + 960 + 19_208 + 6_032) * 4096);
        let b = budget_bytes(&k, 128 * MIB + INNODB_LOG_BUFFER_SIZE);
        assert_eq!(b, (1_032_192 - 36_864 - 30_296) * 4096);
        assert_eq!(b / MIB, 3769);
    }

    /// min_free_kbytes: the square root rule below the THP figure on small machines, the
    /// 256 MiB ceiling on very large ones; a user's value is taken as it is.
    #[test]
    fn min_free_kbytes_by_ram() {
        // 1 GiB: two zones (no Normal); 4 x sqrt(~1008 MiB) = 4063 KiB < 2 x 11 x 2 MiB.
        assert_eq!(kernel_memory(GIB, None, None).min_free_kbytes, 45_056);
        // 256 MiB: 5% of lowmem caps the THP figure (12.4 MiB), above the root's 4 MiB.
        let k = kernel_memory(256 * MIB, None, None);
        assert_eq!(k.min_free_kbytes, (256 * MIB - 4 * MIB) / 4096 / 20 * 4);
        // 64 TiB: the clamp.
        assert_eq!(kernel_memory(64 << 40, None, None).min_free_kbytes, 262_144);
        assert_eq!(kernel_memory(4 * GIB, Some(1000), None).min_free_kbytes, 1000);
    }

    /// The reserve grows with RAM (watermarks at 0.1% per step, DMA32's reserve at 1/256 of
    /// Normal) and a larger watermark_scale_factor raises it. Not quite in proportion: the
    /// min watermarks (min_free_kbytes, the THP figure of 66 MiB at both sizes) and DMA's
    /// reserve do not grow. By hand, 16 GiB: min 66 MiB + 2 x 0.1% of 13 GiB of Normal +
    /// DMA32's reserve 52 MiB + DMA's 16 MiB, about 166 MiB; 256 GiB: 66 + 2 x 253 MiB +
    /// 1012 MiB + 16 MiB, about 1.6 GiB: 9.6 times as much for 16 times the RAM.
    #[test]
    fn the_reserve_grows_with_ram_and_the_scale_factor() {
        let small = kernel_memory(16 * GIB, None, None).totalreserve;
        let large = kernel_memory(256 * GIB, None, None).totalreserve;
        assert!((150 * MIB..180 * MIB).contains(&small), "{}", small / MIB);
        assert!((1500 * MIB..1700 * MIB).contains(&large), "{}", large / MIB);
        assert!(kernel_memory(16 * GIB, None, Some(100)).totalreserve > small);
        // 256 GiB: high = min + 2 x 0.1% of each zone, DMA32 reserve 1020 MiB x ... all
        // under 2% of RAM.
        assert!(large < 256 * GIB / 50, "{}", large / MIB);
        assert_eq!(budget_bytes(&kernel_memory(GIB, None, None), 2 * GIB), 0);
    }
}
