//! Tiering policies by name (`policy.names`), each built from every policy's parameters.

use super::colloid::{ColloidHeMem, ColloidParams};
use super::hemem::{HeMem, HeMemParams};
use super::memtis::{Memtis, MemtisParams};
use super::policy::{StaticAlternate, StaticDefault, TieringPolicy};
use super::tpp::{Tpp, TppParams};
use crate::error::RunError;
use crate::named::{Entry, Registry};

/// Every policy's parameters (each policy reads its own, Colloid's policies also `colloid`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PolicyParams {
    pub hemem: HeMemParams,
    pub colloid: ColloidParams,
    pub tpp: TppParams,
    pub memtis: MemtisParams,
}

/// Builds one policy from the scenario's policy parameters.
pub(super) type MakePolicy = fn(&PolicyParams) -> Result<Box<dyn TieringPolicy>, RunError>;

/// The registered tiering policies.
pub static POLICIES: Registry<MakePolicy> = Registry::new(
    "tiering policy",
    &[
        Entry {
            name: "static-default",
            about: "first-touch placement (default tier first); never migrates",
            make: |_| Ok(Box::new(StaticDefault)),
        },
        Entry {
            name: "static-alternate",
            about: "everything in the alternate tier while it has room; never migrates",
            make: |_| Ok(Box::new(StaticAlternate)),
        },
        Entry {
            name: "hemem",
            about: "HeMem: PEBS sample counts, hot pages promoted, cooling",
            make: |p| Ok(Box::new(HeMem::new(p.hemem.clone()))),
        },
        Entry {
            name: "colloid-hemem",
            about: "HeMem with Colloid: balances the tiers' loaded latencies",
            make: |p| {
                Ok(Box::new(ColloidHeMem::new(
                    p.hemem.clone(),
                    p.colloid.clone(),
                )))
            },
        },
        Entry {
            name: "tpp",
            about: "TPP: NUMA hint-fault scanning, promotion on recent faults, LRU demotion",
            make: |p| Ok(Box::new(Tpp::new(p.tpp.clone(), None))),
        },
        Entry {
            name: "colloid-tpp",
            about: "TPP with Colloid",
            make: |p| Ok(Box::new(Tpp::new(p.tpp.clone(), Some(p.colloid.clone())))),
        },
        Entry {
            name: "memtis",
            about:
                "MEMTIS: sampled access histogram, hot threshold from capacity, huge-page splits",
            make: |p| Ok(Box::new(Memtis::new(p.memtis.clone(), None))),
        },
        Entry {
            name: "colloid-memtis",
            about: "MEMTIS with Colloid",
            make: |p| {
                Ok(Box::new(Memtis::new(
                    p.memtis.clone(),
                    Some(p.colloid.clone()),
                )))
            },
        },
    ],
);

/// A policy by name, with HeMem's and Colloid's parameters for the policies that use them.
pub fn make_policy(
    name: &str,
    hemem: &HeMemParams,
    colloid: &ColloidParams,
) -> Option<Box<dyn TieringPolicy>> {
    make_policy_with(
        name,
        &PolicyParams {
            hemem: hemem.clone(),
            colloid: colloid.clone(),
            ..Default::default()
        },
    )
}

/// A policy by name with all policies' parameters (`None`: no such policy).
pub fn make_policy_with(name: &str, p: &PolicyParams) -> Option<Box<dyn TieringPolicy>> {
    POLICIES.get(name).and_then(|make| make(p).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_policy_is_listed_once_and_builds_under_its_name() {
        assert!(POLICIES.duplicates().is_empty());
        for e in POLICIES.iter() {
            let p = (e.make)(&PolicyParams::default()).unwrap();
            assert_eq!(p.name(), e.name);
        }
    }
}
