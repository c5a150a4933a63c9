//! The hash indexes: P-CLHT, CCEH, Level hashing.

pub mod cceh;
pub mod clht;
pub mod level;

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::testing::model_check;
    use super::super::{Key, KeyType, Op, TonicOpts};

    fn op(string: bool) -> impl Strategy<Value = Op> {
        let key = (1u64..48).prop_map(move |k| {
            if string {
                Key::string_of(k)
            } else {
                Key::Int(k)
            }
        });
        prop_oneof![
            4 => (key.clone(), any::<u64>()).prop_map(|(k, v)| Op::Insert(k, v)),
            1 => key.clone().prop_map(Op::Lookup),
            1 => (key.clone(), any::<u64>()).prop_map(|(k, v)| Op::Update(k, v)),
            2 => key.prop_map(Op::Delete),
        ]
    }

    fn case() -> impl Strategy<Value = (bool, bool, Vec<Op>)> {
        (any::<bool>(), any::<bool>()).prop_flat_map(|(string, switches)| {
            (
                Just(string),
                Just(switches),
                prop::collection::vec(op(string), 0..250),
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Random op sequences (small key space, so resizes, splits and movements happen)
        /// against a BTreeMap, for every hash index, then a reopen through `recover`.
        #[test]
        fn hash_indexes_behave_like_a_map((string, switches, ops) in case()) {
            let kt = if string { KeyType::Str } else { KeyType::Int };
            let opts = TonicOpts { no_bloat: switches, evict_volatile: switches, xpline_nodes: switches };
            for spec in crate::pmindex::registry::family("hash") {
                model_check(spec, kt, opts, &ops).map_err(TestCaseError::fail)?;
            }
        }
    }
}
