//! The binary buddy allocator (Linux-style): free lists per order 0..=10, split on
//! allocate, coalesce with the buddy (`pfn ^ (1 << order)`) on free, one zone lock.
//!
//! Design choices: a frame array whose size is not a multiple of 2^10 is carved greedily
//! into the largest aligned blocks that fit, so the top of the array holds smaller blocks
//! (as Linux does for a zone end). Each free block is recorded at its first frame
//! (`head_order`), which is how the buddy check finds a free buddy of the same order in
//! O(1) (Linux: `PageBuddy` + `page_order`). Searching for the lowest non-empty order costs
//! one list op per order looked at.
//!
//! Migratetypes (optional, Linux's anti-fragmentation grouping): free lists per
//! (type, order) for unmovable (0), movable (1) and reclaimable (2); every 2^10-frame
//! pageblock has a type, all movable at start (as Linux boots). A request is served from
//! its own type's lists first; if they are empty it steals the largest free block of a
//! fallback type (Linux's order: unmovable → reclaimable, movable; reclaimable →
//! unmovable, movable; movable → reclaimable, unmovable) and, when that block is at least
//! half a pageblock, claims the pageblock for its type. Split remainders go to the
//! requester's type; a freed block goes to its pageblock's type. Simplifications: no
//! highatomic/CMA/isolate types; the lazy layer's per-CPU lists are not split by type.

use super::cost::{NoCost, Op, Recorder};
use super::layout;
use super::lists::{FrameLists, FreeListPolicy};
use super::{PageAllocator, MAX_ORDER};

const NOT_FREE: u8 = 0;

pub struct Buddy {
    frames: u64,
    lists: FrameLists,
    /// `order + 1` at the first frame of a free block, 0 elsewhere.
    head_order: Vec<u8>,
    free: u64,
    lock: usize,
    /// 1 without migratetypes, 3 with.
    types: usize,
    /// Type of each 2^MAX_ORDER pageblock.
    block_type: Vec<u8>,
}

/// Linux's `MIGRATE_MOVABLE`.
pub(crate) const MOVABLE: u8 = 1;
const FALLBACKS: [[u8; 2]; 3] = [[2, 1], [2, 0], [0, 1]];
const ORDERS: usize = MAX_ORDER as usize + 1;

impl Buddy {
    /// A buddy over `frames` frames, all free, using lock `lock` of the context.
    pub fn new(frames: u64, policy: FreeListPolicy, lock: usize) -> Buddy {
        Self::build(frames, policy, lock, 1)
    }

    /// A buddy with Linux's three main migratetypes.
    pub fn with_migratetypes(frames: u64, policy: FreeListPolicy, lock: usize) -> Buddy {
        Self::build(frames, policy, lock, 3)
    }

    fn build(frames: u64, policy: FreeListPolicy, lock: usize, types: usize) -> Buddy {
        let mut ctx = NoCost;
        let blocks = (frames >> MAX_ORDER) as usize + 1;
        let mut b = Buddy {
            frames,
            lists: FrameLists::new(frames as usize, ORDERS * types, policy),
            head_order: vec![NOT_FREE; frames as usize],
            free: 0,
            lock,
            types,
            block_type: vec![if types > 1 { MOVABLE } else { 0 }; blocks],
        };
        for t in 0..types {
            for o in 0..=MAX_ORDER {
                b.lists
                    .set_head(t * ORDERS + o as usize, layout::free_list(o, t));
            }
        }
        let mut pfn = 0u64;
        while pfn < frames {
            let mut o = MAX_ORDER;
            while !pfn.is_multiple_of(1 << o) || pfn + (1 << o) > frames {
                o -= 1;
            }
            b.insert(pfn, o, &mut ctx);
            pfn += 1 << o;
        }
        b.free = frames;
        b
    }

    /// Type of the pageblock holding `pfn` (0 without migratetypes).
    fn type_of(&self, pfn: u64) -> usize {
        self.block_type[(pfn >> MAX_ORDER) as usize] as usize
    }

    fn insert(&mut self, pfn: u64, order: u8, ctx: &mut impl Recorder) {
        let t = self.type_of(pfn);
        self.insert_typed(pfn, order, t, ctx);
    }

    fn insert_typed(&mut self, pfn: u64, order: u8, t: usize, ctx: &mut impl Recorder) {
        self.lists.push(t * ORDERS + order as usize, pfn, ctx);
        ctx.touch(layout::nr_free(order), true);
        self.head_order[pfn as usize] = order + 1;
    }

    /// Lowest order ≥ `order` with a free block of type `t`.
    fn find(&self, order: u8, t: usize, ctx: &mut impl Recorder) -> Option<u8> {
        // A plain loop: an inclusive range's iterator costs a tenth of a request's host
        // instructions here.
        let mut o = order;
        while o <= MAX_ORDER {
            ctx.list_ops(1);
            self.lists.peek(t * ORDERS + o as usize, ctx);
            if !self.lists.is_empty(t * ORDERS + o as usize) {
                return Some(o);
            }
            o += 1;
        }
        None
    }

    /// Steal the largest free block of a fallback type for type `t`: (list, order).
    fn steal(&mut self, order: u8, t: usize, ctx: &mut impl Recorder) -> Option<(usize, u8)> {
        for o in (order..=MAX_ORDER).rev() {
            for &f in &FALLBACKS[t] {
                ctx.list_ops(1);
                let list = f as usize * ORDERS + o as usize;
                self.lists.peek(list, ctx);
                if !self.lists.is_empty(list) {
                    ctx.count(Op::Steal);
                    return Some((list, o));
                }
            }
        }
        None
    }

    /// Allocate under an already held lock.
    fn alloc_locked(&mut self, order: u8, ctx: &mut impl Recorder) -> Option<u64> {
        let t = if self.types > 1 {
            (ctx.migratetype() as usize).min(2)
        } else {
            0
        };
        let (list, mut o) = match self.find(order, t, ctx) {
            Some(o) => (t * ORDERS + o as usize, o),
            None if self.types > 1 => self.steal(order, t, ctx)?,
            None => return None,
        };
        let pfn = self.lists.pop(list, ctx)?;
        ctx.touch(layout::nr_free(o), true);
        self.head_order[pfn as usize] = NOT_FREE;
        if self.types > 1 && o + 1 >= MAX_ORDER {
            // At least half a pageblock: the pageblock changes type.
            self.block_type[(pfn >> MAX_ORDER) as usize] = t as u8;
        }
        while o > order {
            o -= 1;
            self.insert_typed(pfn + (1 << o), o, t, ctx);
            ctx.count(Op::Split);
        }
        self.free -= 1 << order;
        Some(pfn)
    }

    /// Free under an already held lock, coalescing upwards.
    fn free_locked(&mut self, pfn: u64, order: u8, ctx: &mut impl Recorder) {
        debug_assert!(pfn + (1 << order) <= self.frames);
        self.free += 1 << order;
        let (mut b, mut o) = (pfn, order);
        while o < MAX_ORDER {
            let bud = b ^ (1 << o);
            if bud >= self.frames {
                break;
            }
            // `page_is_buddy` reads the buddy's struct page.
            ctx.touch_page(bud, false);
            if self.head_order[bud as usize] != o + 1 {
                break;
            }
            self.lists.remove(bud, ctx);
            ctx.touch(layout::nr_free(o), true);
            self.head_order[bud as usize] = NOT_FREE;
            b = b.min(bud);
            o += 1;
            ctx.count(Op::Merge);
        }
        self.insert(b, o, ctx);
    }
}

/// What every free into the buddy does first under the zone lock in 2.6.32
/// (`free_one_page`, `free_pcppages_bulk`): `zone_clear_flag(zone, ZONE_ALL_UNRECLAIMABLE)`
/// (a locked `clear_bit`) and `zone->pages_scanned = 0`, one line of the zone's reclaim
/// section written by every CPU that frees.
#[inline(always)]
fn zone_freed(ctx: &mut impl Recorder) {
    ctx.touch(layout::zone_reclaim(), true);
    ctx.atomic();
}

/// The counts of [`PageAllocator`] without naming a recorder.
impl Buddy {
    pub fn frames(&self) -> u64 {
        self.frames
    }

    pub fn free_frames(&self) -> u64 {
        self.free
    }

    pub fn free_blocks(&self, order: u8) -> u64 {
        (0..self.types)
            .flat_map(|t| (order..=MAX_ORDER).map(move |o| (t, o)))
            .map(|(t, o)| (self.lists.len(t * ORDERS + o as usize) as u64) << (o - order))
            .sum()
    }
}

impl<R: Recorder> PageAllocator<R> for Buddy {
    fn frames(&self) -> u64 {
        Buddy::frames(self)
    }

    fn alloc(&mut self, order: u8, cpu: u16, ctx: &mut R) -> Option<u64> {
        ctx.lock(self.lock, cpu, layout::zone_lock());
        let r = self.alloc_locked(order, ctx);
        ctx.unlock(self.lock);
        r
    }

    fn free(&mut self, pfn: u64, order: u8, cpu: u16, ctx: &mut R) {
        // `free_one_page`.
        ctx.lock(self.lock, cpu, layout::zone_lock());
        zone_freed(ctx);
        self.free_locked(pfn, order, ctx);
        ctx.unlock(self.lock);
    }

    fn refill(
        &mut self,
        n: usize,
        cpu: u16,
        ctx: &mut R,
        put: &mut dyn FnMut(u64, &mut R),
    ) -> usize {
        // `rmqueue_bulk`: `__rmqueue` and the link into the per-CPU list, page by page,
        // all under the zone lock.
        ctx.lock(self.lock, cpu, layout::zone_lock());
        let mut got = 0;
        while got < n {
            match self.alloc_locked(0, ctx) {
                Some(p) => put(p, ctx),
                None => break,
            }
            got += 1;
        }
        ctx.unlock(self.lock);
        got
    }

    fn drain(
        &mut self,
        n: usize,
        cpu: u16,
        ctx: &mut R,
        take: &mut dyn FnMut(&mut R) -> Option<u64>,
    ) -> usize {
        // `free_pcppages_bulk`: the zone's reclaim fields once, then per page the unlink
        // from the per-CPU list (`list_del`) and `__free_one_page`, all under the zone lock.
        ctx.lock(self.lock, cpu, layout::zone_lock());
        zone_freed(ctx);
        let mut freed = 0;
        while freed < n {
            match take(ctx) {
                Some(p) => self.free_locked(p, 0, ctx),
                None => break,
            }
            freed += 1;
        }
        ctx.unlock(self.lock);
        freed
    }

    fn alloc_bulk(&mut self, n: usize, cpu: u16, ctx: &mut R, out: &mut Vec<u64>) {
        ctx.lock(self.lock, cpu, layout::zone_lock());
        for _ in 0..n {
            match self.alloc_locked(0, ctx) {
                Some(p) => out.push(p),
                None => break,
            }
        }
        ctx.unlock(self.lock);
    }

    fn free_bulk(&mut self, pfns: &[u64], cpu: u16, ctx: &mut R) {
        ctx.lock(self.lock, cpu, layout::zone_lock());
        zone_freed(ctx);
        for &p in pfns {
            self.free_locked(p, 0, ctx);
        }
        ctx.unlock(self.lock);
    }

    fn free_frames(&self) -> u64 {
        Buddy::free_frames(self)
    }

    fn free_blocks(&self, order: u8) -> u64 {
        Buddy::free_blocks(self, order)
    }
}
