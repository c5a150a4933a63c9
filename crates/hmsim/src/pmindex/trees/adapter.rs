//! The ordered indexes on the framework: [`Instr`] (the region, instrumented) and [`Peek`]
//! (read-only, uninstrumented) as [`PmMem`], and [`Adapted`] turning an [`OrderedIndex`] into a
//! [`PmIndex`].

use super::ordered::{KeyKind, OrderedIndex, PmMem};
use crate::pmindex::{Key, KeyType, PmIndex, PmRegion, PmResult};

/// The framework's region as a [`PmMem`]: every access instrumented (loads too, so the
/// cache model sees them). Lookups take `&self`, the region's loads `&mut`: the region sits
/// in an `UnsafeCell` (a `RefCell`'s borrow flag cost a load, a compare and two stores on
/// every access of the hot path).
pub struct Instr<'a> {
    pm: std::cell::UnsafeCell<&'a mut PmRegion>,
}

impl<'a> Instr<'a> {
    pub fn new(pm: &'a mut PmRegion) -> Instr<'a> {
        Instr {
            pm: std::cell::UnsafeCell::new(pm),
        }
    }

    /// The region for one primitive.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    fn region(&self) -> &mut PmRegion {
        // SAFETY: `Instr` is `!Sync` (UnsafeCell) and never hands out the reference: each
        // primitive below takes it, makes one region call (which cannot reach this `Instr`:
        // the region and its observer know nothing of it) and drops it before returning, so
        // no two `&mut` to the region are ever live at once.
        unsafe { &mut **self.pm.get() }
    }
}

impl PmMem for Instr<'_> {
    #[inline(always)]
    fn load(&self, off: u64) -> u64 {
        self.region().read_u64(off)
    }
    #[inline(always)]
    fn store(&mut self, off: u64, v: u64) {
        self.pm.get_mut().write_u64(off, v)
    }
    fn ntstore(&mut self, off: u64, v: u64) {
        self.pm.get_mut().ntstore_u64(off, v)
    }
    fn flush(&mut self, off: u64) {
        self.pm.get_mut().flush(off)
    }
    fn fence(&mut self) {
        self.pm.get_mut().fence()
    }
    fn persist(&mut self, off: u64, len: u64) {
        self.pm.get_mut().persist(off, len)
    }
    /// Zeroed (the allocator may hand out a freed block; the index's constructors zero).
    fn alloc(&mut self, size: u64, align: u64) -> u64 {
        let pm = self.pm.get_mut();
        // Anonymous regions grow; only a full file-backed region fails here.
        let off = pm
            .alloc(size, align)
            .unwrap_or_else(|e| panic!("persistent region exhausted: {e}"));
        pm.zero(off, size);
        off
    }
    fn free(&mut self, off: u64, size: u64) {
        self.pm.get_mut().free(off, size)
    }
    #[inline(always)]
    fn prefetch(&self, off: u64, len: u64) {
        self.region().prefetch(off, len)
    }
    fn load_bytes(&self, off: u64, out: &mut [u8]) {
        self.region().read_bytes(off, out)
    }
    fn store_bytes(&mut self, off: u64, bytes: &[u8]) {
        self.pm.get_mut().write_bytes(off, bytes)
    }
}

/// A read-only, uninstrumented view (invariant checks and `entries`).
pub struct Peek<'a>(pub &'a PmRegion);

impl PmMem for Peek<'_> {
    fn load(&self, off: u64) -> u64 {
        self.0.peek_u64(off)
    }
    fn load_bytes(&self, off: u64, out: &mut [u8]) {
        self.0.peek_bytes(off, out)
    }
    fn store(&mut self, _: u64, _: u64) {
        unreachable!("read-only view")
    }
    fn ntstore(&mut self, _: u64, _: u64) {
        unreachable!("read-only view")
    }
    fn flush(&mut self, _: u64) {
        unreachable!("read-only view")
    }
    fn fence(&mut self) {
        unreachable!("read-only view")
    }
    fn alloc(&mut self, _: u64, _: u64) -> u64 {
        unreachable!("read-only view")
    }
    fn free(&mut self, _: u64, _: u64) {
        unreachable!("read-only view")
    }
}

impl From<KeyType> for KeyKind {
    fn from(t: KeyType) -> KeyKind {
        match t {
            KeyType::Int => KeyKind::Int,
            KeyType::Str => KeyKind::Str,
        }
    }
}

/// An [`OrderedIndex`] as the framework's [`PmIndex`].
pub struct Adapted<T> {
    pub inner: T,
    pub key_type: KeyType,
}

impl<T> PmIndex for Adapted<T>
where
    T: for<'a> OrderedIndex<Instr<'a>> + for<'a> OrderedIndex<Peek<'a>> + Send,
{
    fn insert(&mut self, pm: &mut PmRegion, key: Key, value: u64) -> PmResult<bool> {
        let (b, n) = key.bytes();
        Ok(self.inner.insert(&mut Instr::new(pm), &b[..n], value))
    }
    fn lookup(&mut self, pm: &mut PmRegion, key: Key) -> Option<u64> {
        let (b, n) = key.bytes();
        OrderedIndex::<Instr>::lookup(&self.inner, &Instr::new(pm), &b[..n])
    }
    fn update(&mut self, pm: &mut PmRegion, key: Key, value: u64) -> PmResult<bool> {
        let (b, n) = key.bytes();
        Ok(self.inner.update(&mut Instr::new(pm), &b[..n], value))
    }
    fn delete(&mut self, pm: &mut PmRegion, key: Key) -> PmResult<bool> {
        let (b, n) = key.bytes();
        Ok(OrderedIndex::<Instr>::remove(
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
        let got = OrderedIndex::<Instr>::scan(&self.inner, &Instr::new(pm), &b[..n], count);
        out.extend(got.into_iter().map(|(k, v)| (Key::from_bytes(kt, &k), v)));
        Ok(())
    }
    fn check_invariants(&self, pm: &PmRegion) -> Result<(), String> {
        OrderedIndex::<Peek>::check(&self.inner, &Peek(pm))
    }
    fn entries(&self, pm: &PmRegion) -> Vec<(Key, u64)> {
        let zero = vec![0u8; KeyKind::from(self.key_type).len()];
        OrderedIndex::<Peek>::scan(&self.inner, &Peek(pm), &zero, usize::MAX)
            .into_iter()
            .map(|(k, v)| (Key::from_bytes(self.key_type, &k), v))
            .collect()
    }
}
