//! The ordered indexes (FAST&FAIR, P-ART, P-Masstree, P-BwTree, P-HOT). Each implements
//! `PmIndex` and is registered in `pmindex::registry::INDEXES`.

pub(crate) mod art;
pub(crate) mod bwtree;
pub(crate) mod fastfair;
pub(crate) mod hot;
pub(crate) mod masstree;
pub(crate) mod ordered;

#[cfg(test)]
mod tests {
    use super::super::crash::crash_test;
    use super::super::testing::{random_ops, standard_checks};
    use super::super::{CrashCapture, KeyType, RegionConfig, TonicOpts};

    /// The framework's model-based checks on every ordered index's registry entry.
    #[test]
    fn ordered_indexes_pass_the_standard_checks() {
        for spec in crate::pmindex::registry::family("ordered") {
            if let Err(e) = standard_checks(spec) {
                panic!("{}: {e}", spec.name);
            }
        }
    }

    /// The framework's harness on every ordered index: both key types, strict and adversarial
    /// images, a crash at every persist point.
    #[test]
    fn ordered_indexes_recover_at_every_persist_point() {
        let rcfg = RegionConfig {
            initial_bytes: 64 << 10,
            ..RegionConfig::default()
        };
        for spec in crate::pmindex::registry::family("ordered") {
            for kt in [KeyType::Int, KeyType::Str] {
                for adversarial in [false, true] {
                    let ops = random_ops(kt, 200, 100, 17);
                    let cap = CrashCapture {
                        probability: 1.0,
                        adversarial,
                    };
                    let r = crash_test(spec, kt, TonicOpts::default(), &rcfg, &ops, cap, 5);
                    assert_eq!(r.failures, 0, "{r:#?}");
                    assert!(r.persist_points > 100, "{r:#?}");
                }
            }
        }
    }
}
