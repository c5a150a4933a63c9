//! Application analogs (the Colloid study's applications; docs/tiering.md, fig. 6) as generated
//! access streams: a CacheLib-like key-value cache, a Silo/YCSB-C-like store and a PageRank-like
//! graph kernel. Each is a statistical model of where the application's memory accesses go (sizes
//! and skews from the Colloid paper's setup), not the application: no index structures, no
//! allocator, no real graph.

use rand::Rng;

use crate::error::ConfigError;
use crate::rng::SimRng;

use super::stream::{Access, AccessStream};

pub const APPS: &[&str] = &["cachelib", "silo", "pagerank"];

/// What the scenario needs from an analog besides its stream.
#[derive(Debug, Clone, PartialEq)]
pub struct AppShape {
    pub working_set_bytes: u64,
    pub default_tier_bytes: u64,
    pub object_size_bytes: u64,
    /// Share of line traffic that is reads.
    pub read_fraction: f64,
}

/// The analog's sizes at `scale` (1 = the Colloid paper's sizes).
pub fn shape(app: &str, scale: f64) -> Option<AppShape> {
    let s = |b: f64| (b * scale) as u64;
    Some(match app {
        // 15 M keys × (64 B key + 4 KB value) plus item/slab overhead ≈ 75 GB; 25 GB default.
        // get:update 9:1; an update reads and writes its 4 KB: reads 1.0 / (1.0 + 0.1).
        "cachelib" => AppShape {
            working_set_bytes: s(75e9),
            default_tier_bytes: s(25e9),
            object_size_bytes: 4096,
            read_fraction: 1.0 / 1.1,
        },
        // YCSB-C: read-only, 1 KB records, Zipf(0.99); ~60 GB, 20 GB default tier.
        "silo" => AppShape {
            working_set_bytes: s(60e9),
            default_tier_bytes: s(20e9),
            object_size_bytes: 1024,
            read_fraction: 1.0,
        },
        // 12.6 GB: a third vertex data (ranks, offsets), the rest the edge array; 4.4 GB
        // default. Per edge a random vertex read; new ranks are written once per vertex.
        "pagerank" => AppShape {
            working_set_bytes: s(12.6e9),
            default_tier_bytes: s(4.4e9),
            object_size_bytes: 64,
            read_fraction: 0.9,
        },
        _ => return None,
    })
}

/// Zipf exponents (YCSB's default constant; a power-law in-degree for the graph).
const SILO_ZIPF: f64 = 0.99;
const PAGERANK_ZIPF: f64 = 0.8;
/// Share of accesses that defines a Zipf analog's reference hot set.
const ZIPF_HOT_SHARE: f64 = 0.8;
/// Vertex random reads per sequential edge-array line (16 × 4 B edge ids per line).
const EDGES_PER_LINE: u64 = 16;

/// Continuous inverse-CDF Zipf draw over ranks 1..=n, returned 0-based.
fn zipf(u: f64, n: f64, s: f64) -> f64 {
    let a = 1.0 - s;
    (((n.powf(a) - 1.0) * u + 1.0).powf(1.0 / a) - 1.0).min(n - 1.0)
}

/// Smallest rank (0-based, exclusive) whose head carries `share` of a Zipf's mass.
fn zipf_head(share: f64, n: f64, s: f64) -> f64 {
    zipf(share, n, s) + 1.0
}

pub struct AppStream {
    kind: Kind,
    pages: u64,
    page_bytes: u64,
    hot_pages: u64,
    rng: SimRng,
}

enum Kind {
    /// Keys `0..keys`, slot bytes each; keys below `hot_keys` get 90 % of operations.
    Cache {
        keys: u64,
        hot_keys: u64,
        slot_bytes: f64,
    },
    /// Records ordered by popularity (YCSB's unscrambled Zipf: the friendliest layout).
    Store { records: f64, record_bytes: f64 },
    /// Vertex region then edge region; a scan pointer walks the edge lines.
    Graph {
        vertices: f64,
        vertex_bytes: f64,
        edge_start: u64,
        edge_lines: u64,
        scan: u64,
        since_line: u64,
    },
}

impl AppStream {
    pub fn new(
        app: &str,
        scale: f64,
        page_bytes: u64,
        rng: SimRng,
        file: &str,
    ) -> Result<Self, ConfigError> {
        let sh = shape(app, scale).ok_or_else(|| {
            ConfigError::new(
                file,
                "workload.app",
                format!("unknown app '{app}'; allowed: {}", APPS.join(", ")),
            )
        })?;
        let ws = sh.working_set_bytes;
        let pages = ws.div_ceil(page_bytes).max(1);
        let (kind, hot_bytes) = match app {
            "cachelib" => {
                let keys = ((15e6 * scale) as u64).max(10);
                let hot_keys = keys / 5;
                let slot = ws as f64 / keys as f64;
                (
                    Kind::Cache {
                        keys,
                        hot_keys,
                        slot_bytes: slot,
                    },
                    hot_keys as f64 * slot,
                )
            }
            "silo" => {
                let records = (ws / 1024).max(2) as f64;
                let head = zipf_head(ZIPF_HOT_SHARE, records, SILO_ZIPF);
                (
                    Kind::Store {
                        records,
                        record_bytes: 1024.0,
                    },
                    head * 1024.0,
                )
            }
            _ => {
                let vbytes = ws / 3;
                // 24 B per vertex: old rank, new rank, CSR offset.
                let vertices = (vbytes / 24).max(2) as f64;
                let head = zipf_head(ZIPF_HOT_SHARE, vertices, PAGERANK_ZIPF);
                (
                    Kind::Graph {
                        vertices,
                        vertex_bytes: 24.0,
                        edge_start: vbytes,
                        edge_lines: ((ws - vbytes) / 64).max(1),
                        scan: 0,
                        since_line: 0,
                    },
                    head * 24.0,
                )
            }
        };
        Ok(AppStream {
            kind,
            pages,
            page_bytes,
            hot_pages: (hot_bytes as u64).div_ceil(page_bytes).min(pages),
            rng,
        })
    }

    fn next_byte(&mut self) -> (u64, bool) {
        let u: f64 = self.rng.random();
        match &mut self.kind {
            Kind::Cache {
                keys,
                hot_keys,
                slot_bytes,
            } => {
                let key = if u < 0.9 {
                    self.rng.random_range(0..*hot_keys)
                } else {
                    self.rng.random_range(*hot_keys..*keys)
                };
                // get:update 9:1; an update's first touch is a load of the item too.
                ((key as f64 * *slot_bytes) as u64, true)
            }
            Kind::Store {
                records,
                record_bytes,
            } => {
                let r = zipf(u, *records, SILO_ZIPF);
                ((r.floor() * *record_bytes) as u64, true)
            }
            Kind::Graph {
                vertices,
                vertex_bytes,
                edge_start,
                edge_lines,
                scan,
                since_line,
            } => {
                *since_line += 1;
                if *since_line > EDGES_PER_LINE {
                    *since_line = 0;
                    *scan = (*scan + 1) % *edge_lines;
                    (*edge_start + *scan * 64, true)
                } else {
                    let v = zipf(u, *vertices, PAGERANK_ZIPF);
                    ((v.floor() * *vertex_bytes) as u64, true)
                }
            }
        }
    }
}

impl AccessStream for AppStream {
    fn pages(&self) -> u64 {
        self.pages
    }

    fn fill(&mut self, n: usize, out: &mut Vec<Access>) -> Result<(), ConfigError> {
        for _ in 0..n {
            let (b, load) = self.next_byte();
            // Laid out back to front: the popular objects are touched last while loading
            // (as GUPS's hot set at the end of its buffer), so first-touch leaves them out
            // of the default tier and the policy must find them.
            let page = (b / self.page_bytes).min(self.pages - 1);
            out.push(Access {
                page: self.pages - 1 - page,
                sub: ((b % self.page_bytes) / 4096) as u16,
                load,
                store: !load,
                line: 0,
            });
        }
        Ok(())
    }

    fn is_hot(&self, page: u64) -> bool {
        page >= self.pages - self.hot_pages
    }

    fn hot_pages(&self) -> u64 {
        self.hot_pages
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipf_head_carries_its_share() {
        let (n, s) = (1e6, 0.99);
        let head = zipf_head(0.8, n, s);
        let mut rng = crate::rng::stream(1, "z");
        let k = 200_000;
        let hits = (0..k).filter(|_| zipf(rng.random(), n, s) < head).count() as f64;
        assert!((hits / k as f64 - 0.8).abs() < 0.01, "{}", hits / k as f64);
    }

    #[test]
    fn cachelib_hot_keys_get_ninety_percent() {
        let mut a = AppStream::new("cachelib", 0.01, 4096, crate::rng::stream(2, "a"), "t")
            .expect("known app");
        let mut v = Vec::new();
        a.fill(100_000, &mut v).unwrap();
        let hot = v.iter().filter(|x| a.is_hot(x.page)).count() as f64 / 1e5;
        assert!((hot - 0.9).abs() < 0.01, "{hot}");
        assert!(v.iter().all(|x| x.page < a.pages()));
    }
}
