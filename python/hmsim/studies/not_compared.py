"""What each study's sources publish that its comparison table does not compare.

A study compares the published numbers it reproduces (`Published` rows); the rest of what the
reproduction targets list for it (figures drawn without published values, numbers used as
inputs, numbers not yet compared) is listed here with the reason, and the report prints it
under the study's tables, so a reader sees what is missing as well as what agrees. Keep in
step with each study's `compare` and its docs page."""

from __future__ import annotations

# study -> [(published figure or number, why it is not in the comparison table)]
NOT_COMPARED: dict[str, list[tuple[str, str]]] = {
    "storage": [
        (
            "Fig. 1: bandwidth vs queue depth (1-64) and vs request size (4 KiB-4 MiB)",
            "drawn only: no published values at hand for the curves",
        ),
        (
            "Fig. 3: temperature over time without a fan",
            "only its end points are compared (fan-on temperature, stop times); the curves have no published values",
        ),
        (
            "stop temperature 65.6-65.8 °C",
            "the device preset's shutdown threshold: an input of the thermal model, not a result",
        ),
    ],
    "pmem-wa": [
        (
            "Table 2: WPQ inserts, write requests and media writes per footprint (64 B-1 MB, clflush)",
            "drawn only: the experiment is reproduced, its published counts are not at hand",
        ),
        (
            "Table 3: write amplification and bandwidth, 28 threads, 256 B / 1 KB regions, each flush",
            "drawn only: the experiment is reproduced, its published values are not at hand",
        ),
        ("DRAM idle latencies 81 / 101 / 87 / 57 ns", "only the Optane side of the pairs is compared"),
        ("1 DIMM clwb write bandwidth 1.4-1.8 GB/s", "simulated (write_clwb) but not in the comparison table"),
        ("plain stores evicted without a flush: WA 2-4x", "not in the comparison table"),
        ("256 B region: 50-68 µs per stall", "only the number of overwrites between stalls is compared"),
        (
            "VANS parameters (WPQ 4, XPBuffer 64 x 256 B, AIT 4096 x 4 KB, media 100/300 cycles)",
            "inputs of the device model, not results",
        ),
        ("endurance 360 PBW per 256 GB module", "an input of the lifetime model, not a result"),
    ],
    "pm-index": [
        (
            "flushes per insert normalized to P-CLHT, Load A, every index",
            "drawn only (fig_flushes_per_insert); RECIPE's code is cross-checked, no published values compared",
        ),
        (
            "LLC misses, WPQ inserts, media writes and WA per insert",
            "results only: no published values at hand",
        ),
        ("lifetime cost per index", "drawn only (fig_lifetime_per_insert): no published values"),
        ("the same for YCSB A/B/C/E", "drawn only (fig_ycsb_media_writes): no published values"),
    ],
    "numa-pmem": [
        (
            "Fig. 1: large allocation 100-3,000 GB per policy: success or out of memory, allocation time",
            "drawn only (fig_allocation): no published times at hand",
        ),
        (
            "Fig. 2: SuperPi-like runtime per policy (footprint in DRAM)",
            "drawn only (fig_superpi): no published runtimes at hand",
        ),
        (
            "Fig. 3: PMem as one module, interleaved, remote vs DRAM",
            "only the six-DIMM read bandwidth is a result; the other values are the presets' inputs",
        ),
    ],
    "tiering": [
        (
            "antagonists alone use ~0 / 51 / 61 / 70 % of default-tier bandwidth at 0-3x",
            "calibration target of the contention model, not compared as a number",
        ),
        (
            "Figs. 2-6: latency and hot share, Colloid gain heatmaps, convergence, overhead, application analogs",
            "drawn only: no published values at hand",
        ),
    ],
    "allocators": [
        (
            "response time (cycles) per allocator x six workloads x 1-32 threads, and its standard deviation",
            "drawn only: the study's table values are not at hand",
        ),
        ("lazy iBuddy (batch 1) over lazy buddy (batch 31), (c - e) / c", "computed, no published values"),
        (
            "response-time distributions, wear fairness, implied lifetime, fragmentation",
            "drawn only: no published values",
        ),
    ],
    "hybrid": [
        (
            "runtime per policy (no_EPF, all_EPF, smart_EPF) at 100 MB and 150 MB UMD DRAM",
            "drawn only (fig_runtime_by_policy): no published runtimes at hand",
        ),
        ("internal-fault and EPF counts and shares", "results only: no published values"),
        ("DRAM-size and smart-threshold sweeps", "drawn only: no published values"),
        ("service-time distribution of internal faults", "drawn only (fig_service_time): no published values"),
    ],
}
