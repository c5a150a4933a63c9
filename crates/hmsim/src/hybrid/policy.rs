//! EPF policies: whether an internal page fault raises an EPF (the OS blocks the thread
//! for the estimated service time and runs another) or the core stalls until it is done.

use serde::{Deserialize, Serialize};

use crate::config::{Validate, Validator};

/// Decides per internal fault, from the device's service-time estimate.
pub trait EpfPolicy: Send {
    fn name(&self) -> &str;
    fn raise(&self, estimate_ns: u64) -> bool;
}

/// `no_EPF`: never raise; the core stalls through every internal fault.
pub struct NoEpf;
impl EpfPolicy for NoEpf {
    fn name(&self) -> &str {
        "no_EPF"
    }
    fn raise(&self, _: u64) -> bool {
        false
    }
}

/// `all_EPF`: raise on every internal fault.
pub struct AllEpf;
impl EpfPolicy for AllEpf {
    fn name(&self) -> &str {
        "all_EPF"
    }
    fn raise(&self, _: u64) -> bool {
        true
    }
}

/// `smart_EPF`: raise only when the estimate exceeds the threshold.
pub struct SmartEpf {
    pub threshold_ns: f64,
}
impl EpfPolicy for SmartEpf {
    fn name(&self) -> &str {
        "smart_EPF"
    }
    fn raise(&self, estimate_ns: u64) -> bool {
        estimate_ns as f64 > self.threshold_ns
    }
}

/// Registered policy names.
pub const EPF_POLICIES: &[&str] = &["no_EPF", "all_EPF", "smart_EPF"];

/// A policy as a scenario names it: `{ name = "smart_EPF", threshold_us = 50 }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicySpec {
    pub name: String,
    /// Only for `smart_EPF`; `inf` never raises.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold_us: Option<f64>,
}

pub const DEFAULT_THRESHOLD_US: f64 = 50.0;

impl PolicySpec {
    pub fn named(name: &str) -> PolicySpec {
        PolicySpec {
            name: name.into(),
            threshold_us: None,
        }
    }

    pub fn threshold_us(&self) -> f64 {
        self.threshold_us.unwrap_or(DEFAULT_THRESHOLD_US)
    }

    /// Row label: the name, with the threshold for `smart_EPF`.
    pub fn label(&self) -> String {
        if self.name == "smart_EPF" && self.threshold_us().is_infinite() {
            "smart_EPF(inf)".into()
        } else if self.name == "smart_EPF" {
            format!("smart_EPF({}us)", self.threshold_us())
        } else {
            self.name.clone()
        }
    }

    pub fn build(&self) -> Box<dyn EpfPolicy> {
        match self.name.as_str() {
            "no_EPF" => Box::new(NoEpf),
            "all_EPF" => Box::new(AllEpf),
            "smart_EPF" => Box::new(SmartEpf {
                threshold_ns: self.threshold_us() * 1e3,
            }),
            other => panic!("unvalidated EPF policy {other}"),
        }
    }
}

impl Validate for PolicySpec {
    fn validate(&self, v: &mut Validator) {
        v.one_of("name", &self.name, EPF_POLICIES);
        if let Some(t) = self.threshold_us {
            if self.name != "smart_EPF" {
                v.fail("threshold_us", "only smart_EPF takes a threshold");
            } else if t.is_nan() || t < 0.0 {
                v.fail(
                    "threshold_us",
                    format!("{t} is not allowed; expected zero or more µs (inf: never raise)"),
                );
            }
        }
    }
}
