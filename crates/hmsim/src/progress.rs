//! Progress of long work, reported to whoever started it (a terminal bar, or nothing).

/// Receives progress: `start` once per phase, then `advance` as work completes.
pub trait Progress: Sync {
    /// A phase of `total` units (`"records"`, `"simulated s"`, …) begins.
    fn start(&self, total: u64, unit: &str);
    /// `n` more units are done.
    fn advance(&self, n: u64);
}

/// Progress nobody watches.
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _total: u64, _unit: &str) {}
    fn advance(&self, _n: u64) {}
}

/// Records the phases started and the units advanced, for tests.
#[cfg(test)]
#[derive(Default)]
pub(crate) struct Log(pub(crate) std::sync::Mutex<(Vec<(u64, String)>, u64)>);

#[cfg(test)]
impl Progress for Log {
    fn start(&self, total: u64, unit: &str) {
        self.0.lock().unwrap().0.push((total, unit.to_string()));
    }
    fn advance(&self, n: u64) {
        self.0.lock().unwrap().1 += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each of the seven modules announces its points and reports every one of them done
    /// (the skeleton runs them).
    #[test]
    fn every_module_reports_its_runs_done() {
        let cases: &[(&str, u64, &str)] = &[
            (
                "module = \"numa\"\npolicies = [\"linux-default\", \"kmem-dax\"]\n\
                 [allocation]\nsize_bytes = 1073741824\n",
                2,
                "policies",
            ),
            (
                "module = \"hybrid\"\n[device]\ncapacity_mib = 16\ndram_mib = 0.5\n\
                 [workload]\nthreads = 2\n[workload.pigz]\ninput_mib = 0.2\nos_resident_mib = 0.5\n\
                 [[policies]]\nname = \"no_EPF\"\n[[policies]]\nname = \"all_EPF\"\n",
                2,
                "policies",
            ),
            (
                "module = \"storage\"\n[device]\nname = \"intel-optane-900p\"\n[job]\n\
                 op = \"read\"\nqueue_depth = 4\nblock_size_bytes = 4096\nduration_s = 0.001\n",
                1,
                "runs",
            ),
            (
                "module = \"pmem\"\n[workload]\npattern = \"seq-write\"\n\
                 footprint_bytes = 65536\noperations = 100\n",
                1,
                "runs",
            ),
            (
                "module = \"pm-index\"\n[index]\nname = \"p-clht\"\n[workload]\nrecords = 500\n\
                 [throughput]\nmeasure = true\nrepeats = 2\n",
                3,
                "steps",
            ),
            (
                "module = \"pm-index\"\n[index]\nname = \"p-clht\"\n[crash]\noperations = 20\n\
                 adversarial = true\n",
                2,
                "crash modes",
            ),
            (
                "module = \"tiering\"\nseed = 3\n[workload]\nworking_set_bytes = 8589934592\n\
                 hot_set_bytes = 2147483648\n[antagonist]\nintensities = [0, 3]\n[policy]\n\
                 names = [\"static-default\", \"colloid-hemem\"]\n[sim]\nduration_s = 0.5\n\
                 measure_last_s = 0.2\n",
                4,
                "runs",
            ),
            (
                "module = \"allocators\"\nframes = 8192\nprobe_orders = []\n\
                 [[allocators]]\nname = \"buddy\"\n[[allocators]]\nname = \"ibuddy\"\n\
                 [workload.synthetic]\nthreads = 2\nallocs_per_thread = 2000\ncohorts = false\n",
                2,
                "allocators",
            ),
        ];
        for (text, total, unit) in cases {
            let log = Log::default();
            crate::registry::run_scenario_with_progress(text, "p.toml", &[], &[], &log)
                .unwrap_or_else(|e| panic!("{e}"));
            let (starts, done) = log.0.into_inner().unwrap();
            assert_eq!(starts, vec![(*total, unit.to_string())], "{text}");
            assert_eq!(done, *total, "{text}");
        }
    }
}
