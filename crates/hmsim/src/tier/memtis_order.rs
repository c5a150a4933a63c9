//! MEMTIS's candidate lists in order, sorted as they are read. An interval reads the coldest
//! default-tier pages only until the promotions have room, and the hottest alternate-tier
//! pages only until the copy budget is spent: at 2 MiB pages about a hundred entries of lists
//! of a few thousand. So a list of up to `LAZY_MAX` entries is ordered in batches: the next
//! batch's members are selected from the rest in linear time and only they are sorted, each
//! batch four times the one before (a reader of the whole list pays about a full sort's
//! cost). A longer list is sorted whole: at 4 KiB pages (7 M entries, 0.3–3 % of them read)
//! most pages have no samples, so a list is nearly in id order already, which the sort
//! finds in about linear time and repeated selections do not (batches for every list took
//! 11 % more host instructions over such a run).

/// Longest list ordered in batches.
const LAZY_MAX: usize = 1 << 16;
/// Entries sorted in the first batch.
const FIRST_BATCH: usize = 1024;
/// Each batch is this many times the one before.
const GROWTH: usize = 4;

/// The ids of `(level, id)` pairs ordered by level (descending when `hottest_first`), then
/// by id (ids are distinct, so the order is total and the same however it is made).
pub(super) fn by_level(v: Vec<(u64, u64)>, hottest_first: bool) -> ByLevel {
    const LOW: u64 = u32::MAX as u64;
    if v.iter().any(|&(l, p)| l > LOW || p > LOW) {
        // Too wide to pack: sorted whole, the ids themselves as keys.
        let mut v = v;
        if hottest_first {
            v.sort_unstable_by_key(|&(l, p)| (std::cmp::Reverse(l), p));
        } else {
            v.sort_unstable();
        }
        let keys: Vec<u64> = v.into_iter().map(|(_, p)| p).collect();
        return ByLevel {
            sorted_to: keys.len(),
            keys,
            id_mask: u64::MAX,
            next: 0,
            batch: 0,
        };
    }
    // Level above id in one integer: its plain order is the pairs' order.
    let flip = if hottest_first { LOW } else { 0 };
    ByLevel {
        batch: if v.len() <= LAZY_MAX {
            FIRST_BATCH
        } else {
            usize::MAX
        },
        keys: v.iter().map(|&(l, p)| ((l ^ flip) << 32) | p).collect(),
        id_mask: LOW,
        next: 0,
        sorted_to: 0,
    }
}

/// [`by_level`]'s ids, in order.
pub(super) struct ByLevel {
    keys: Vec<u64>,
    /// The id bits of a key.
    id_mask: u64,
    /// The next key to hand out; `keys[..sorted_to]` is in order and below every key after.
    next: usize,
    sorted_to: usize,
    /// Size of the next batch.
    batch: usize,
}

impl Iterator for ByLevel {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        if self.next == self.sorted_to {
            self.sort_next_batch();
        }
        let k = *self.keys.get(self.next)?;
        self.next += 1;
        Some(k & self.id_mask)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.keys.len() - self.next;
        (n, Some(n))
    }
}

impl ByLevel {
    /// Put the next batch's keys, the smallest of the rest, in place and in order.
    #[inline(never)]
    fn sort_next_batch(&mut self) {
        let rest = &mut self.keys[self.sorted_to..];
        if rest.is_empty() {
            return;
        }
        let k = self.batch.min(rest.len());
        if k < rest.len() {
            rest.select_nth_unstable(k - 1);
        }
        rest[..k].sort_unstable();
        self.sorted_to += k;
        self.batch = self.batch.saturating_mul(GROWTH);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use proptest::prelude::Just;

    proptest::proptest! {
        /// Read to any point, the order is the tuple sorts' order: (level descending, id)
        /// for the hottest first, (level, id) for the coldest, with levels or ids past 32
        /// bits too, and across several batches.
        #[test]
        fn orders_as_the_tuple_sorts(
            levels in proptest::collection::vec(
                proptest::prop_oneof![0u64..40, 0u64..=u32::MAX as u64, Just(1u64 << 40)], 0..300),
            many in proptest::bool::weighted(0.2),
            wide_id in proptest::bool::weighted(0.1),
            stop in 0usize..6000,
        ) {
            let base = if wide_id { 1u64 << 33 } else { 0 };
            // Distinct ids, in no order; repeated past the first batches when `many`.
            let copies = if many { 20 } else { 1 };
            let v: Vec<(u64, u64)> = (0..copies)
                .flat_map(|c| levels.iter().enumerate().map(move |(i, &l)| (l, c, i)))
                .map(|(l, c, i)| (l, base + ((c * 300 + i) as u64 * 7919) % 100_003))
                .collect();
            let mut hot = v.clone();
            hot.sort_by_key(|&(l, p)| (std::cmp::Reverse(l), p));
            let mut cold = v.clone();
            cold.sort_by_key(|&(l, p)| (l, p));
            let ids = |w: Vec<(u64, u64)>| w.into_iter().map(|(_, p)| p).collect::<Vec<_>>();
            let (hot, cold) = (ids(hot), ids(cold));
            let first: Vec<u64> = by_level(v.clone(), true).take(stop).collect();
            proptest::prop_assert_eq!(&first[..], &hot[..stop.min(hot.len())]);
            proptest::prop_assert_eq!(by_level(v.clone(), true).collect::<Vec<_>>(), hot);
            proptest::prop_assert_eq!(by_level(v, false).collect::<Vec<_>>(), cold);
        }
    }

    #[test]
    fn a_list_too_long_for_batches_is_sorted_whole_in_the_same_order() {
        let n = LAZY_MAX as u64 + 1000;
        // Levels 0..7 scattered over ids given in descending order.
        let v: Vec<(u64, u64)> = (0..n).rev().map(|p| (p * 2_654_435_761 % 7, p)).collect();
        let mut want = v.clone();
        want.sort_by_key(|&(l, p)| (std::cmp::Reverse(l), p));
        let got: Vec<u64> = by_level(v, true).collect();
        assert_eq!(got, want.into_iter().map(|(_, p)| p).collect::<Vec<_>>());
    }
}
