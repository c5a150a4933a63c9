//! Reference parameters and where each comes from (re-exported by [`super::params`], which
//! builds the study's tiers from them). Only the contention measurements of
//! Vuppalapati & Agarwal, ACM SOSP 2024 (docs/tiering.md, *Calibration*) were used to fit the
//! three fitted values below; no policy result was.

/// Colloid setup: default tier = local socket, 32 GB, 70 ns unloaded.
pub const DEFAULT_CAPACITY_BYTES: u64 = 32_000_000_000;
pub const DEFAULT_UNLOADED_NS: f64 = 70.0;
/// Fitted: read saturation bandwidth of the default tier (8×DDR4-3200, 204.8 GB/s theoretical).
/// Fitted jointly with `ANTAGONIST_READS_PER_CORE`, `GUPS_MLP` and `QUEUE_COEFF` (least squares of
/// relative errors over a grid) to the Colloid paper's contention measurements only: antagonists
/// alone at 51/61/70 % of this bandwidth at 5/10/15 cores, GUPS with its hot set in the default
/// tier plus antagonists at 2.5×/3.8×/5× unloaded latency, and GUPS alone moving 78–80 GB/s (fitted
/// to 79).
pub const DEFAULT_READ_BANDWIDTH_GB_S: f64 = 160.0;
/// Fitted (see above): reads kept in flight per streaming antagonist core (mempath/cores.rs).
pub use crate::mempath::ANTAGONIST_READS_PER_CORE;
/// Fitted (see above): effective reads in flight per GUPS core (mempath/cores.rs).
pub use crate::mempath::GUPS_MLP;
/// Fitted (see above): queueing coefficient of mixed read/write traffic, the memory-path
/// engine's default (mempath/engine.rs).
pub use crate::mempath::QUEUE_COEFF;
/// Colloid setup: alternate tier = remote socket, 96 GB, 135 ns unloaded.
pub const ALTERNATE_CAPACITY_BYTES: u64 = 96_000_000_000;
pub const ALTERNATE_UNLOADED_NS: f64 = 135.0;
/// The remote socket's DRAM: the same 8 × DDR4-3200 as the local socket (Colloid setup: "DDR4-3200,
/// 8 channels per socket"), so the same fitted read saturation, mix penalty and queueing.
pub const ALTERNATE_READ_BANDWIDTH_GB_S: f64 = DEFAULT_READ_BANDWIDTH_GB_S;
/// Colloid setup: UPI ≈ 75 GB/s per direction. The links are full duplex: a remote access's read
/// data flows remote → local, its write-back local → remote, each direction with its own
/// bandwidth (docs/tiering.md, *Tiers as paths*).
pub const UPI_GB_S_PER_DIRECTION: f64 = 75.0;
/// Colloid setup: antagonists stream 50 % reads / 50 % writes.
pub const ANTAGONIST_READ_FRACTION: f64 = 0.5;
/// Colloid setup: intensity 0×/1×/2×/3× = 0/5/10/15 antagonist cores.
pub const CORES_PER_INTENSITY: u32 = 5;

/// A 50/50 read/write mix lowers the saturation bandwidth ~28 % (the memory-path engine's
/// default, mempath/engine.rs).
pub use crate::mempath::MIX_PENALTY;

/// HeMem's evaluated build copies with I/OAT DMA over 2 channels (`NUM_CHANNS` 2 in the HeMem
/// artifact, Raybuck et al., ACM SOSP 2021).
pub const HEMEM_DMA_CHANNELS: u32 = 2;
/// Derived from a published measurement: the kernel's software cost of migrating one 4 KiB
/// folio besides its copy (isolate from the LRU, allocate, unmap into migration entries, the
/// batched TLB flush, remap). Garg, "Accelerate page migration with batch copying and hardware
/// offload" (linux-mm RFC v4 cover letter, March 2026, table a; re-measured in the v5
/// thread, May 2026): one thread's `move_pages()` of 1 GB between the two sockets of an AMD
/// EPYC (Zen 3) server on vanilla Linux 7.0/7.1 moves 4 KiB folios at 3.55 / 3.31 GB/s
/// (1154 / 1237 ns a folio) and 256 KiB–1 MiB folios at 7.03 / 7.07 GB/s, where the per-folio
/// work is under 2 % and the rate is the thread's copy rate. Folio time less its copy at that
/// rate: 1154 − 583 = 571 ns and 1237 − 579 = 658 ns; the mean, rounded. The model charges
/// the copy itself at the tiers' loaded latencies (copy.rs). docs/tiering.md, *Migration
/// copies*.
pub const KERNEL_PAGE_COST_4K_NS: f64 = 610.0;
/// Estimate (no published figure separates it from the copy): the same per 2 MiB folio. The
/// same source's 2 MiB folios move at 10.88 / 11.02 GB/s (≈ 191 µs a folio) with one thread,
/// and with the copy offloaded to 16 DMA channels about 6× faster (≈ 32 µs a folio), which
/// bounds the non-copy work to ≲ 32 µs; a fit of t = c + copy / channels through the 4- and
/// 16-channel points gives c ≈ 17 µs. The unmap, flush and remap are done once per folio (a
/// PMD entry; Linux's batched-flush change notes a THP's TLB flush costs about 1/512 of its
/// base pages'), plus per-subpage metadata. docs/tiering.md, *Migration copies*.
pub const KERNEL_PAGE_COST_2M_NS: f64 = 15_000.0;
/// Estimate (no published per-page figure): CPU per page HeMem's policy thread spends on a DMA
/// migration besides the copy. In the HeMem artifact (Raybuck et al., ACM SOSP 2021; `hemem.c`,
/// `hemem_migrate_up`/`_down`, `USE_DMA`) each page is write-protected (a userfaultfd
/// `UFFDIO_WRITEPROTECT` ioctl), its copy submitted to the I/OAT channels (`UFFDIO_DMA_COPY`),
/// then remapped onto the new frame (`mmap` with `MAP_FIXED | MAP_POPULATE`, which unmaps the
/// old frame with its TLB flush) and re-registered with userfaultfd (`UFFDIO_REGISTER`): the
/// same unmap, flush and remap the kernel's `migrate_pages` does per folio, so the kernel's
/// per-page software cost is taken for it.
pub const HEMEM_HOST_PAGE_COST_4K_NS: f64 = KERNEL_PAGE_COST_4K_NS;
/// The same for a 2 MiB page (HeMem migrates only 2 MiB pages).
pub const HEMEM_HOST_PAGE_COST_2M_NS: f64 = KERNEL_PAGE_COST_2M_NS;
