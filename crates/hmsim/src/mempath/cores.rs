//! What one core keeps in flight: the sizes of the engine's closed-loop sources. Fitted
//! jointly with the tiering study's reference parameters (docs/tiering.md, *Calibration*) and
//! used wherever a model runs cores of that machine class on the engine (tiering, NUMA PMem).

/// Reads kept in flight per streaming core (hardware prefetchers; the Colloid paper's "tens
/// per core" of lines: reads plus write-backs here = 31).
pub const ANTAGONIST_READS_PER_CORE: f64 = 15.5;
/// Effective reads in flight per core of a dependent random-access loop (GUPS), fitted to
/// GUPS alone moving 78–80 GB/s (below the 10–12 line-fill-buffer bound of Intel cores as a
/// ceiling).
pub const GUPS_MLP: f64 = 4.37;
