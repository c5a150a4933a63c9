//! [`Adapted`]: an [`OrderedIndex`] (keys as byte strings, written against [`PmMem`](crate::pmindex::PmMem)) as
//! the framework's [`PmIndex`], on the region's instrumented view [`Instr`] and its
//! read-only view [`Peek`].

use super::ordered::OrderedIndex;
use crate::pmindex::mem::{Instr, Peek};
use crate::pmindex::{Key, KeyType, PmIndex, PmRegion, PmResult};

/// An [`OrderedIndex`] as the framework's [`PmIndex`].
pub struct Adapted<T> {
    pub inner: T,
    pub key_type: KeyType,
}

impl<T> PmIndex for Adapted<T>
where
    T: for<'a> OrderedIndex<Instr<&'a mut PmRegion>> + for<'a> OrderedIndex<Peek<'a>> + Send,
{
    fn insert(&mut self, pm: &mut PmRegion, key: Key, value: u64) -> PmResult<bool> {
        let (b, n) = key.bytes();
        Ok(self.inner.insert(&mut Instr::new(pm), &b[..n], value))
    }
    fn lookup(&mut self, pm: &mut PmRegion, key: Key) -> Option<u64> {
        let (b, n) = key.bytes();
        OrderedIndex::<Instr<_>>::lookup(&self.inner, &Instr::new(pm), &b[..n])
    }
    fn update(&mut self, pm: &mut PmRegion, key: Key, value: u64) -> PmResult<bool> {
        let (b, n) = key.bytes();
        Ok(self.inner.update(&mut Instr::new(pm), &b[..n], value))
    }
    fn delete(&mut self, pm: &mut PmRegion, key: Key) -> PmResult<bool> {
        let (b, n) = key.bytes();
        Ok(OrderedIndex::<Instr<_>>::remove(
            &mut self.inner,
            &mut Instr::new(pm),
            &b[..n],
        ))
    }
    fn scan(
        &mut self,
        pm: &mut PmRegion,
        start: Key,
        count: usize,
        out: &mut Vec<(Key, u64)>,
    ) -> PmResult<()> {
        let (b, n) = start.bytes();
        let kt = self.key_type;
        let got = OrderedIndex::<Instr<_>>::scan(&self.inner, &Instr::new(pm), &b[..n], count);
        out.extend(got.into_iter().map(|(k, v)| (Key::from_bytes(kt, &k), v)));
        Ok(())
    }
    fn check_invariants(&self, pm: &PmRegion) -> Result<(), String> {
        OrderedIndex::<Peek>::check(&self.inner, &Peek(pm))
    }
    fn entries(&self, pm: &PmRegion) -> Vec<(Key, u64)> {
        let zero = vec![0u8; self.key_type.bytes() as usize];
        OrderedIndex::<Peek>::scan(&self.inner, &Peek(pm), &zero, usize::MAX)
            .into_iter()
            .map(|(k, v)| (Key::from_bytes(self.key_type, &k), v))
            .collect()
    }
}
