//! PMem as the alternate tier (docs/tiering.md, *PMem as the alternate tier*): migrations and
//! application writes into the PMem tier go through the PMem write path; media writes, WA, lifetime
//! columns.

use hmsim::registry::run_scenario;
use serde_json::{Map, Value};

/// 4 GiB default + 16 GiB PMem tier, 8 GiB working set whose 2 GiB hot set starts in PMem,
/// so HeMem promotes hot pages and demotes cold ones into PMem.
fn scenario(policy: &str, read_fraction: f64, limit_gb_s: f64, pmem: bool) -> String {
    let mut s = format!(
        "module = \"tiering\"\nseed = 5\n\
         [[tiers]]\nname = \"default\"\ncapacity_bytes = 4294967296\nunloaded_latency_ns = 70.0\nread_bandwidth_gb_s = 140.0\n\
         [[tiers]]\nname = \"optane\"\ncapacity_bytes = 17179869184\nunloaded_latency_ns = 305.0\nread_bandwidth_gb_s = 39.0\nmix_penalty = 0.6\n\
         [workload]\nworking_set_bytes = 8589934592\nhot_set_bytes = 2147483648\ncores = 4\nread_fraction = {read_fraction}\n\
         [antagonist]\nintensities = [0]\n\
         [policy]\nnames = [\"{policy}\"]\n\
         [sim]\nduration_s = 1.0\nmeasure_last_s = 0.2\ntimeline = false\nmigrate_limit_gb_s = {limit_gb_s}\n"
    );
    if pmem {
        s += "[pmem_tier]\ntier = 1\n";
    }
    s
}

fn row(text: &str) -> Map<String, Value> {
    let out = run_scenario(text, "t.toml", &[], &[]).unwrap();
    assert_eq!(out.rows.len(), 1);
    out.rows[0].clone()
}

fn f(r: &Map<String, Value>, k: &str) -> f64 {
    r[k].as_f64()
        .unwrap_or_else(|| panic!("{k} = {:?}", r.get(k)))
}

#[test]
fn no_pmem_tier_no_pmem_columns() {
    let r = row(&scenario("hemem", 0.5, 10.0, false));
    assert!(r.keys().all(|k| !k.starts_with("pmem_")), "{:?}", r.keys());
}

#[test]
fn more_migration_more_media_writes_and_sequential_copies_have_wa_one() {
    // Reads only: every PMem write is a migration copy.
    let none = row(&scenario("static-default", 1.0, 10.0, true));
    assert_eq!(f(&none, "pmem_media_writes_64b"), 0.0);
    assert_eq!(f(&none, "pmem_migrated_bytes"), 0.0);
    let slow = row(&scenario("hemem", 1.0, 1.0, true));
    let fast = row(&scenario("hemem", 1.0, 10.0, true));
    assert!(f(&slow, "pmem_migrated_bytes") > 0.0);
    assert!(f(&fast, "pmem_migrated_bytes") > 2.0 * f(&slow, "pmem_migrated_bytes"));
    assert!(f(&fast, "pmem_media_writes_64b") > 2.0 * f(&slow, "pmem_media_writes_64b"));
    assert!(f(&fast, "pmem_lifetime_years") < f(&slow, "pmem_lifetime_years"));
    // A page copy fills whole XPLines: one 64 B media unit per request, plus AIT copies.
    let wa = f(&fast, "pmem_wa_migration");
    assert!((1.0..1.1).contains(&wa), "{wa}");
}

#[test]
fn write_requests_conserve_bytes_and_random_app_writes_amplify_4x() {
    let r = row(&scenario("hemem", 0.5, 10.0, true));
    let bytes = f(&r, "pmem_migrated_bytes") + f(&r, "pmem_app_write_bytes")
        - f(&r, "pmem_unsampled_write_bytes");
    let req = f(&r, "pmem_write_requests") * 64.0;
    assert!((req / bytes - 1.0).abs() < 1e-9, "{req} vs {bytes}");
    assert!(f(&r, "pmem_app_write_bytes") > 0.0);
    // A random 64 B write-back is a quarter of an XPLine: read-modify-write of 256 B.
    let wa = f(&r, "pmem_wa_app");
    assert!((3.5..=4.1).contains(&wa), "{wa}");
    let total = f(&r, "pmem_write_amplification");
    assert!((1.0..=4.1).contains(&total), "{total}");
    let (ideal, no_wl) = (
        f(&r, "pmem_lifetime_years"),
        f(&r, "pmem_lifetime_years_no_wl"),
    );
    assert!(
        ideal > 0.0 && no_wl > 0.0 && no_wl <= ideal,
        "{ideal} {no_wl}"
    );
    let again = row(&scenario("hemem", 0.5, 10.0, true));
    assert_eq!(r, again);
}

#[test]
fn pmem_tier_must_be_an_alternate_tier() {
    let text = scenario("hemem", 0.5, 10.0, true).replace("tier = 1\n", "tier = 0\n");
    let e = run_scenario(&text, "t.toml", &[], &[]).unwrap_err();
    assert_eq!(e.key, "pmem_tier.tier");
    let text = scenario("hemem", 0.5, 10.0, true) + "[pmem_tier.path]\ndevice = \"nope\"\n";
    let e = run_scenario(&text, "t.toml", &[], &[]).unwrap_err();
    assert_eq!(e.key, "pmem_tier.path.device");
}
