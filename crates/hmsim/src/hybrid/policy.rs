//! EPF policies: whether an internal page fault raises an EPF (the OS blocks the thread
//! for the estimated service time and runs another) or the core stalls until it is done.

use crate::config::Validator;
use crate::named::{Entry, Registry};

/// What the host knows when an internal fault could be signalled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaultView {
    /// The device's service-time estimate.
    pub estimate_ns: u64,
    /// Time other threads could run during the sleep (the estimate plus the timer's
    /// slack): all of it if one is ready, the part after the first blocked thread wakes if
    /// none is, else zero.
    pub gain_ns: u64,
    /// What signalling costs the core: exception entry, the switch away and back (to idle
    /// and out of it, plus the wake-up latency, when no thread is ready), the timer
    /// interrupt that ends the block and the re-walk.
    pub cost_ns: u64,
}

/// Decides per internal fault from the estimate and what signalling costs and gains.
pub trait EpfPolicy: Send {
    fn name(&self) -> &str;
    fn raise(&self, f: &FaultView) -> bool;
}

/// `no_EPF`: never raise; the core stalls through every internal fault.
pub(super) struct NoEpf;
impl EpfPolicy for NoEpf {
    fn name(&self) -> &str {
        "no_EPF"
    }
    fn raise(&self, _: &FaultView) -> bool {
        false
    }
}

/// `all_EPF`: raise on every internal fault.
pub(super) struct AllEpf;
impl EpfPolicy for AllEpf {
    fn name(&self) -> &str {
        "all_EPF"
    }
    fn raise(&self, _: &FaultView) -> bool {
        true
    }
}

/// `smart_EPF`: raise only when the estimate exceeds the threshold (the study's rule) and
/// the time other threads gain exceeds what signalling costs (so never when no other
/// thread could run: blocking would only add the idle switches and the wake-up).
pub(super) struct SmartEpf {
    pub threshold_ns: f64,
}
impl EpfPolicy for SmartEpf {
    fn name(&self) -> &str {
        "smart_EPF"
    }
    fn raise(&self, f: &FaultView) -> bool {
        f.estimate_ns as f64 > self.threshold_ns && f.gain_ns > f.cost_ns
    }
}

/// Makes an EPF policy from its scenario entry.
pub(super) type MakeEpf = fn(&EpfPolicySpec) -> Result<Box<dyn EpfPolicy>, String>;

/// Every EPF policy, by the name a scenario's `[[policies]]` take.
pub static EPF_POLICIES: Registry<MakeEpf> = Registry::new(
    "EPF policy",
    &[
        Entry {
            name: "no_EPF",
            about: "never raise: the core stalls through every internal fault",
            make: |_| Ok(Box::new(NoEpf)),
        },
        Entry {
            name: "all_EPF",
            about: "raise on every internal fault",
            make: |_| Ok(Box::new(AllEpf)),
        },
        Entry {
            name: "smart_EPF",
            about: "raise when the estimate exceeds threshold_us and the gain the cost",
            make: |p| {
                Ok(Box::new(SmartEpf {
                    threshold_ns: p.threshold_us() * 1e3,
                }))
            },
        },
    ],
);

crate::params! {
    #[params(required, check)]
    /// A policy as a scenario names it: `{ name = "smart_EPF", threshold_us = 50 }`.
    #[derive(Debug, Clone, PartialEq)]
    pub struct EpfPolicySpec {
        pub name: String => any, "", "EPF policy: `no_EPF`, `all_EPF` or `smart_EPF`.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub threshold_us: Option<f64> = None => any, "",
            "Only for `smart_EPF`: fault latency above which it raises an early page fault, zero or more (`inf`: never); default 50.";
    }
}

pub(super) const DEFAULT_THRESHOLD_US: f64 = 50.0;

impl EpfPolicySpec {
    pub fn named(name: &str) -> EpfPolicySpec {
        EpfPolicySpec {
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

    /// The policy this entry names.
    pub fn build(&self) -> Result<Box<dyn EpfPolicy>, String> {
        match EPF_POLICIES.get(&self.name) {
            Some(make) => make(self),
            None => Err(format!(
                "unknown EPF policy '{}'; allowed: {}",
                self.name,
                EPF_POLICIES.names().join(", ")
            )),
        }
    }
}

impl EpfPolicySpec {
    fn check(&self, v: &mut Validator) {
        v.one_of("name", &self.name, &EPF_POLICIES.names());
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
