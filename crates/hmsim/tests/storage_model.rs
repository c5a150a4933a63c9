//! Closed-form and invariant checks of the block-device model and the storage job.

use hmsim::device::{BlockDevice, Catalog, DeviceSpec};
use hmsim::rng;
use hmsim::storage::{run_job, JobResult, JobSpec, OpMix, Pattern};
use proptest::prelude::*;

fn device(name: &str) -> DeviceSpec {
    Catalog::builtin().get(name).unwrap().clone()
}

fn job(pattern: Pattern, op: OpMix, qd: u32, bs: u64, total_bytes: Option<u64>) -> JobSpec {
    JobSpec {
        pattern,
        op,
        read_fraction: 0.5,
        queue_depth: qd,
        block_size_bytes: bs,
        duration_s: 0.05,
        total_bytes,
        region_bytes: None,
    }
}

fn run(spec: &DeviceSpec, j: &JobSpec, seed: u64) -> JobResult {
    let mut r = rng::stream(seed, "test");
    run_job(
        BlockDevice::new(spec),
        spec.power.as_ref().unwrap(),
        j,
        spec.capacity_bytes,
        &mut r,
    )
}

#[test]
fn saturation_bandwidth_is_min_of_media_and_link() {
    for name in [
        "stt-mram-ssd",
        "intel-optane-900p",
        "intel-ssd-750",
        "samsung-970-evo",
    ] {
        let spec = device(name);
        for (op, d) in [(OpMix::Read, &spec.read), (OpMix::Write, &spec.write)] {
            let res = run(&spec, &job(Pattern::Sequential, op, 64, 4 << 20, None), 1);
            let link = spec.interface.as_ref().unwrap().link_gb_s;
            let expect = d.bandwidth_gb_s.min(link);
            let err = (res.bandwidth_gb_s - expect).abs() / expect;
            assert!(
                err < 0.02,
                "{name} {op:?}: {} GB/s vs {expect}",
                res.bandwidth_gb_s
            );
        }
    }
}

#[test]
fn littles_law_holds_in_the_closed_loop() {
    let spec = device("samsung-970-evo");
    for qd in [1, 4, 16, 64] {
        let res = run(&spec, &job(Pattern::Random, OpMix::Read, qd, 4096, None), 3);
        let in_flight = res.iops * res.latency.mean * 1e-6;
        assert!(
            (in_flight - qd as f64).abs() / (qd as f64) < 0.01,
            "QD {qd}: L = {in_flight}"
        );
    }
}

#[test]
fn unloaded_latency_matches_the_formula() {
    let spec = device("stt-mram-ssd");
    let res = run(
        &spec,
        &job(Pattern::Random, OpMix::Read, 1, 4096, Some(4096 * 1000)),
        1,
    );
    let units = spec.parallelism.as_ref().unwrap().units as f64;
    let expect_us = (1e9 / spec.read.max_iops.unwrap()
        + units * 4096.0 / spec.read.bandwidth_gb_s
        + 4096.0 / spec.interface.as_ref().unwrap().link_gb_s)
        / 1e3;
    assert!(
        (res.latency.mean - expect_us).abs() < 1e-6,
        "{} vs {expect_us}",
        res.latency.mean
    );
    assert!(res.latency.mean < 6.0, "nvNITRO sheet: < 6 us");
}

#[test]
fn bandwidth_grows_with_queue_depth_and_size_then_saturates() {
    let spec = device("intel-ssd-750");
    let bw = |qd, bs| {
        run(
            &spec,
            &job(Pattern::Sequential, OpMix::Write, qd, bs, None),
            1,
        )
        .bandwidth_gb_s
    };
    let mut last = 0.0;
    for qd in [1, 2, 4, 8, 16, 32, 64] {
        let b = bw(qd, 262144);
        // 1 %: the run ends by draining the queue, which costs a deeper queue a little.
        assert!(b >= last * 0.99, "QD {qd}: {b} < {last}");
        last = b;
    }
    assert!(
        bw(16, 262144) > 0.95 * bw(64, 262144),
        "saturated by QD 16 at 256 KiB"
    );
    assert!(bw(16, 4096) < bw(16, 262144));
}

#[test]
fn slc_cache_exhaustion_drops_write_bandwidth() {
    let mut spec = device("samsung-970-evo");
    spec.write_cache.as_mut().unwrap().capacity_bytes = 64 << 20;
    let res = run(
        &spec,
        &job(Pattern::Sequential, OpMix::Write, 16, 262144, Some(1 << 30)),
        1,
    );
    let after = spec.write_cache.as_ref().unwrap().after_bandwidth_gb_s;
    assert!(
        res.bandwidth_gb_s < 1.2 * after,
        "mostly after-cache: {}",
        res.bandwidth_gb_s
    );
    // The cache filled once its 64 MiB were submitted, near the cache's write speed; the job
    // wrote all its bytes.
    assert_eq!(res.written_bytes, 1 << 30);
    let full = res.write_cache_full_s.expect("the cache filled");
    let cache_s = (64 << 20) as f64 / (spec.write.bandwidth_gb_s * 1e9);
    assert!(
        (full / cache_s - 1.0).abs() < 0.2,
        "{full} s, cache {cache_s} s"
    );
    // A job inside the cache never fills it, nor does a device without one.
    let res = run(
        &spec,
        &job(
            Pattern::Sequential,
            OpMix::Write,
            16,
            262144,
            Some(32 << 20),
        ),
        1,
    );
    assert_eq!(res.write_cache_full_s, None);
    let res = run(
        &device("intel-optane-900p"),
        &job(Pattern::Sequential, OpMix::Write, 16, 262144, Some(1 << 30)),
        1,
    );
    assert_eq!((res.written_bytes, res.write_cache_full_s), (1 << 30, None));
}

/// A run says what the write cache did to its write figures: nothing to say for reads or a
/// device without a cache; a job inside the cache measured the cache; a job past it, both.
#[test]
fn a_job_says_when_its_writes_ran_in_the_write_cache() {
    let scenario = |device: &str, op: &str, total_bytes: u64| {
        let text = format!(
            "module = \"storage\"\nseed = 1\n[device]\nname = \"{device}\"\n[job]\n\
             op = \"{op}\"\npattern = \"sequential\"\nqueue_depth = 32\n\
             block_size_bytes = 131072\ntotal_bytes = {total_bytes}\n"
        );
        hmsim::registry::run_scenario(&text, "/tmp/s.toml", &[], &[]).unwrap()
    };
    let cache = device("nand-ssd-tlc").write_cache.unwrap().capacity_bytes;
    let inside = scenario("nand-ssd-tlc", "write", cache / 4);
    assert!(inside.rows[0]["write_cache_full_s"].is_null());
    assert_eq!(inside.warnings.len(), 1, "{:?}", inside.warnings);
    assert!(
        inside.warnings[0].contains("fit in its"),
        "{:?}",
        inside.warnings
    );
    assert!(inside.warnings[0].contains(&format!("job.total_bytes > {cache}")));
    let past = scenario("nand-ssd-tlc", "write", cache * 2);
    let full = past.rows[0]["write_cache_full_s"].as_f64().unwrap();
    let elapsed = past.rows[0]["elapsed_s"].as_f64().unwrap();
    assert!(full > 0.0 && full < elapsed, "{full} of {elapsed} s");
    assert!(past.warnings[0].contains("filled"), "{:?}", past.warnings);
    for (device, op) in [("nand-ssd-tlc", "read"), ("intel-optane-900p", "write")] {
        let quiet = scenario(device, op, 1 << 30);
        assert!(
            quiet.warnings.is_empty(),
            "{device} {op}: {:?}",
            quiet.warnings
        );
    }
    let no_cache = scenario("intel-optane-900p", "write", 1 << 30);
    assert!(no_cache.rows[0].get("write_cache_full_s").is_none());
}

/// A job that ends soon after its queue first fills measures the fill: the first
/// `queue_depth` requests go into the empty device at once and wait 1, 2, … service times.
/// Its mean latency is then ≈ (queue_depth − 1) / (2 × requests) below the full queue's
/// (queue depth ÷ IOPS, Little's law), and the run says so; ten requests per slot do not.
#[test]
fn a_job_too_short_for_its_queue_says_its_mean_latency_is_the_fill() {
    let scenario = |qd: u32, requests: u64| {
        let bs = 4u64 << 20;
        let text = format!(
            "module = \"storage\"\nseed = 1\n[device]\nname = \"intel-ssd-750-fairlio\"\n\
             [job]\nop = \"write\"\npattern = \"sequential\"\nqueue_depth = {qd}\n\
             block_size_bytes = {bs}\ntotal_bytes = {}\n",
            requests * bs
        );
        hmsim::registry::run_scenario(&text, "/tmp/s.toml", &[], &[]).unwrap()
    };
    let num = |out: &hmsim::scenario::RunOutput, k: &str| out.rows[0][k].as_f64().unwrap();
    let below = |out: &hmsim::scenario::RunOutput| {
        let little_us = 16.0 / num(out, "iops") * 1e6;
        1.0 - num(out, "latency_mean_us") / little_us
    };
    let short = scenario(16, 22);
    let fill = 15.0 / (2.0 * 22.0);
    assert!(
        (below(&short) - fill).abs() < 0.03,
        "{} vs {fill}",
        below(&short)
    );
    assert_eq!(short.warnings.len(), 1, "{:?}", short.warnings);
    let w = &short.warnings[0];
    assert!(
        w.contains("intel-ssd-750-fairlio") && w.contains("≈ 34 % below"),
        "{w}"
    );
    assert!(w.contains("run at least 160 requests"), "{w}");
    let long = scenario(16, 160);
    assert!(below(&long) < 0.05, "{}", below(&long));
    assert!(long.warnings.is_empty(), "{:?}", long.warnings);
    // One slot has no fill: each request waits only for itself.
    assert!(scenario(1, 3).warnings.is_empty());
}

#[test]
fn same_seed_same_result_other_seed_other_result() {
    let spec = device("samsung-970-evo");
    let j = job(Pattern::Random, OpMix::Mix, 8, 4096, None);
    let (a, b, c) = (run(&spec, &j, 5), run(&spec, &j, 5), run(&spec, &j, 6));
    assert_eq!(format!("{:?}", a), format!("{:?}", b));
    assert_ne!(a.latency.mean, c.latency.mean);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Conservation: every request issued completes exactly once, for any job shape.
    #[test]
    fn requests_in_equal_requests_out(qd in 1u32..=64, bs_pow in 12u32..=20, n in 1u64..2000, random in any::<bool>(), mix in 0.0f64..=1.0) {
        let spec = device("intel-optane-900p");
        let bs = 1u64 << bs_pow;
        let mut j = job(if random { Pattern::Random } else { Pattern::Sequential }, OpMix::Mix, qd, bs, Some(n * bs));
        j.read_fraction = mix;
        let res = run(&spec, &j, 9);
        prop_assert_eq!(res.requests, n);
        prop_assert_eq!(res.bytes, n * bs);
        prop_assert_eq!(res.latency.count, n);
        prop_assert!(res.energy.utilization <= 1.0 + 1e-9);
    }
}
