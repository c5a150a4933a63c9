//! Recency order over a fixed set of slots: an intrusive doubly linked list in two index
//! arrays (O(1) touch, victim and release, no allocation after construction). Users keep
//! their entries' data in their own arrays indexed by slot and their own key → slot lookup;
//! this holds only which slots are in use and in what order they were last used.
//!
//! Free slots are handed out lowest index first, so a buffer that fills from empty uses
//! slots 0, 1, 2, … in order.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

const NONE: u32 = u32::MAX;

#[derive(Clone)]
pub struct LruOrder {
    prev: Vec<u32>,
    next: Vec<u32>,
    /// Most and least recently used slot in use.
    head: u32,
    tail: u32,
    /// Slots never used yet: `fresh..capacity`.
    fresh: u32,
    /// Slots released after use (always below `fresh`).
    released: BinaryHeap<Reverse<u32>>,
}

impl LruOrder {
    pub fn new(capacity: u32) -> LruOrder {
        assert!(capacity < NONE, "slot indices are u32 below u32::MAX");
        LruOrder {
            prev: vec![NONE; capacity as usize],
            next: vec![NONE; capacity as usize],
            head: NONE,
            tail: NONE,
            fresh: 0,
            released: BinaryHeap::new(),
        }
    }

    pub fn capacity(&self) -> u32 {
        self.prev.len() as u32
    }

    /// Slots in use.
    pub fn used(&self) -> u32 {
        self.fresh - self.released.len() as u32
    }

    /// The lowest free slot, now in use as the most recently used one; `None` when full.
    #[inline]
    pub fn take_free(&mut self) -> Option<u32> {
        let s = match self.released.pop() {
            Some(Reverse(s)) => s,
            None if self.fresh < self.capacity() => {
                self.fresh += 1;
                self.fresh - 1
            }
            None => return None,
        };
        self.push_front(s);
        Some(s)
    }

    /// The least recently used slot in use (the victim), or `None` when none is.
    #[inline]
    pub fn lru(&self) -> Option<u32> {
        (self.tail != NONE).then_some(self.tail)
    }

    /// The most recently used slot in use.
    pub fn mru(&self) -> Option<u32> {
        (self.head != NONE).then_some(self.head)
    }

    /// Marks slot `s` (in use) the most recently used.
    #[inline(always)]
    pub fn touch(&mut self, s: u32) {
        if self.head != s {
            self.unlink(s);
            self.push_front(s);
        }
    }

    /// Frees slot `s` (in use): it leaves the order and is handed out again before any
    /// slot never used.
    pub fn release(&mut self, s: u32) {
        self.unlink(s);
        self.released.push(Reverse(s));
    }

    /// Frees every slot.
    pub fn clear(&mut self) {
        self.prev.fill(NONE);
        self.next.fill(NONE);
        (self.head, self.tail, self.fresh) = (NONE, NONE, 0);
        self.released.clear();
    }

    /// Slots in use from least to most recently used.
    pub fn iter_from_lru(&self) -> impl Iterator<Item = u32> + '_ {
        std::iter::successors(self.lru(), |&s| {
            let p = self.prev[s as usize];
            (p != NONE).then_some(p)
        })
    }

    /// Slots in use from most to least recently used.
    pub fn iter_from_mru(&self) -> impl Iterator<Item = u32> + '_ {
        std::iter::successors(self.mru(), |&s| {
            let n = self.next[s as usize];
            (n != NONE).then_some(n)
        })
    }

    fn unlink(&mut self, s: u32) {
        let (p, n) = (self.prev[s as usize], self.next[s as usize]);
        if p != NONE {
            self.next[p as usize] = n
        } else {
            self.head = n
        }
        if n != NONE {
            self.prev[n as usize] = p
        } else {
            self.tail = p
        }
    }

    fn push_front(&mut self, s: u32) {
        self.prev[s as usize] = NONE;
        self.next[s as usize] = self.head;
        if self.head != NONE {
            self.prev[self.head as usize] = s;
        } else {
            self.tail = s;
        }
        self.head = s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn fills_lowest_first_and_evicts_least_recent() {
        let mut l = LruOrder::new(3);
        assert_eq!(
            (l.take_free(), l.take_free(), l.take_free()),
            (Some(0), Some(1), Some(2))
        );
        assert_eq!(l.take_free(), None);
        l.touch(0);
        assert_eq!(l.iter_from_mru().collect::<Vec<_>>(), vec![0, 2, 1]);
        assert_eq!(l.iter_from_lru().collect::<Vec<_>>(), vec![1, 2, 0]);
        assert_eq!(l.lru(), Some(1));
        l.release(2);
        l.release(0);
        assert_eq!(l.used(), 1);
        assert_eq!(
            l.take_free(),
            Some(0),
            "released slots come back lowest first"
        );
        assert_eq!(l.take_free(), Some(2));
        l.clear();
        assert_eq!((l.used(), l.lru(), l.take_free()), (0, None, Some(0)));
    }

    /// Operations on a model: touch (or take) slot `k % used`, release, or take a free one.
    #[derive(Debug, Clone)]
    enum Op {
        Take,
        Touch(usize),
        Release(usize),
    }

    proptest! {
        #[test]
        fn order_matches_a_vector_model(ops in prop::collection::vec(prop_oneof![
            Just(Op::Take),
            (0usize..64).prop_map(Op::Touch),
            (0usize..64).prop_map(Op::Release),
        ], 0..200)) {
            let cap = 8u32;
            let mut l = LruOrder::new(cap);
            // Model: slots in use, most recent first.
            let mut model: Vec<u32> = Vec::new();
            for op in ops {
                match op {
                    Op::Take => {
                        let want = (0..cap).find(|s| !model.contains(s));
                        prop_assert_eq!(l.take_free(), want);
                        if let Some(s) = want {
                            model.insert(0, s);
                        }
                    }
                    Op::Touch(k) if !model.is_empty() => {
                        let s = model.remove(k % model.len());
                        l.touch(s);
                        model.insert(0, s);
                    }
                    Op::Release(k) if !model.is_empty() => {
                        let s = model.remove(k % model.len());
                        l.release(s);
                    }
                    _ => {}
                }
                prop_assert_eq!(l.iter_from_mru().collect::<Vec<_>>(), model.clone());
                let mut rev = model.clone();
                rev.reverse();
                prop_assert_eq!(l.iter_from_lru().collect::<Vec<_>>(), rev);
                prop_assert_eq!(l.used() as usize, model.len());
                prop_assert_eq!(l.lru(), model.last().copied());
            }
        }
    }
}
