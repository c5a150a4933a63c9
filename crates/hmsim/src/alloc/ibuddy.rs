//! iBuddy, the inverse buddy (Park, Choi, Lee, Noh, IEEE TC 2015): every free frame is
//! managed individually and memory rests fully split; single-page allocate and free are
//! O(1); an aligned run of 2^k frames is gathered ("coalesced") only when a multi-page
//! request asks for it, and a freed multi-page block is split into its frames at once.
//! Memory is divided into buddy spaces, each with its own lock.
//!
//! Design choices where the public material (talk pseudocode + summary table) is silent:
//! - **Levels.** Each free frame sits on the free list of a *level*: a hint of the order of
//!   the largest aligned free block it belonged to when it was inserted. At start every
//!   frame is on the level of the greedy carve of its space (like the buddy's initial
//!   blocks); a freed 2^k block puts its frames on level k; a freed single frame goes to
//!   level 0. Levels are never raised afterwards (that would be coalescing on free).
//! - **`next_allocation_level`** (per space) is the lowest level whose list may be
//!   non-empty: single-page requests take the frame at the front of that list, so broken
//!   blocks are used up before intact ones. It drops on a free at a lower level and moves
//!   up (one list check per level) when its list empties.
//! - **Dual-meaning bitmap.** One bit per frame, 1 = free in its space (not handed out and
//!   not parked in a per-CPU list). Read bit by bit it is the order-0 free flag; read as
//!   2^k-bit aligned groups it is the run map that says whether an order-k block is free.
//! - **Multi-page allocation (order k).** First the lists of levels k..=10: the aligned
//!   2^k run around the front frame is checked in the bitmap; if free, its frames are
//!   unlinked from whatever lists they are on (O(2^k)) and their bits cleared; if not, the
//!   hint was stale and the frame is moved to level 0 (each stale frame is demoted once,
//!   so the work is amortised against its insertion). Then, if no hint helped, a scan of
//!   the space's bitmap words for an aligned all-ones group.
//! - **Spaces.** The array is split into `spaces` equal contiguous ranges (each a multiple
//!   of 64 frames, so bitmap words never straddle spaces). CPU c's home space is
//!   `c % spaces`; when it cannot serve (its free count, read without the lock, is too
//!   small, or the search fails) the next spaces are tried in order, each under its own
//!   lock. A free goes to the space that owns the frame. Spaces beyond the number of
//!   CPUs are only used when the home spaces run short.
//! - **Fair policies** (FIFO, least-allocated) also change where a freed single frame is
//!   queued: on the top level, behind every frame already waiting, instead of level 0
//!   where it would be reused first.

use super::cost::{NoCost, Op, Recorder};
use super::layout;
use super::lists::{FrameLists, FreeListPolicy};
use super::{PageAllocator, MAX_ORDER};

const LEVELS: usize = MAX_ORDER as usize + 1;

pub struct IBuddy {
    frames: u64,
    spaces: usize,
    space_frames: u64,
    /// 1 = free in its space.
    bits: Vec<u64>,
    lists: FrameLists,
    next_level: Vec<u8>,
    free: Vec<u64>,
    /// Fair policies queue freed single frames behind the waiting ones (see `free`).
    fair: bool,
}

impl IBuddy {
    /// `frames` must be a multiple of `64 * spaces` (checked by the scenario).
    pub fn new(frames: u64, spaces: usize, policy: FreeListPolicy) -> IBuddy {
        assert!(spaces >= 1 && frames.is_multiple_of(64 * spaces as u64));
        let space_frames = frames / spaces as u64;
        let mut ctx = NoCost;
        let mut ib = IBuddy {
            frames,
            spaces,
            space_frames,
            bits: vec![u64::MAX; (frames / 64) as usize],
            lists: FrameLists::new(frames as usize, spaces * LEVELS, policy),
            next_level: vec![0; spaces],
            free: vec![space_frames; spaces],
            fair: policy != FreeListPolicy::Lifo,
        };
        for s in 0..spaces {
            for level in 0..LEVELS {
                ib.lists
                    .set_head(Self::list(s, level), layout::space_level(s, level));
            }
        }
        for s in 0..spaces {
            let (base, end) = ib.bounds(s);
            let mut pfn = base;
            let mut lowest = MAX_ORDER;
            while pfn < end {
                let mut o = MAX_ORDER;
                while !pfn.is_multiple_of(1 << o) || pfn + (1 << o) > end {
                    o -= 1;
                }
                for f in pfn..pfn + (1 << o) {
                    ib.lists.push(s * LEVELS + o as usize, f, &mut ctx);
                }
                lowest = lowest.min(o);
                pfn += 1 << o;
            }
            ib.next_level[s] = lowest;
        }
        ib
    }

    fn bounds(&self, s: usize) -> (u64, u64) {
        let base = s as u64 * self.space_frames;
        (base, base + self.space_frames)
    }

    #[inline]
    fn list(s: usize, level: usize) -> usize {
        s * LEVELS + level
    }

    #[inline]
    fn bit(&self, pfn: u64) -> bool {
        self.bits[(pfn / 64) as usize] >> (pfn % 64) & 1 == 1
    }

    /// Whether the aligned run `start..start+size` is wholly free (size a power of two).
    fn run_free(&self, start: u64, size: u64, ctx: &mut impl Recorder) -> bool {
        if size < 64 {
            ctx.bitmap_words(1);
            ctx.touch(layout::bitmap_word(start), false);
            let mask = ((1u64 << size) - 1) << (start % 64);
            return self.bits[(start / 64) as usize] & mask == mask;
        }
        let w0 = (start / 64) as usize;
        for w in w0..w0 + (size / 64) as usize {
            ctx.bitmap_words(1);
            ctx.touch(layout::bitmap_word(w as u64 * 64), false);
            if self.bits[w] != u64::MAX {
                return false;
            }
        }
        true
    }

    fn take_run(&mut self, s: usize, start: u64, size: u64, ctx: &mut impl Recorder) {
        for f in start..start + size {
            self.lists.remove(f, ctx);
            self.bits[(f / 64) as usize] &= !(1u64 << (f % 64));
            ctx.touch(layout::bitmap_word(f), true);
        }
        ctx.bitmap_words((size / 64).max(1));
        self.free[s] -= size;
        ctx.count(Op::Merge);
    }

    /// Single frame from space `s` (lock held).
    fn alloc_one(&mut self, s: usize, ctx: &mut impl Recorder) -> Option<u64> {
        let mut nl = self.next_level[s] as usize;
        self.lists.peek(Self::list(s, nl), ctx);
        while self.lists.is_empty(Self::list(s, nl)) {
            if nl == MAX_ORDER as usize {
                self.next_level[s] = nl as u8;
                return None;
            }
            nl += 1;
            ctx.list_ops(1);
            self.lists.peek(Self::list(s, nl), ctx);
        }
        let p = self.lists.pop(Self::list(s, nl), ctx)?;
        self.bits[(p / 64) as usize] &= !(1u64 << (p % 64));
        ctx.bitmap_words(1);
        ctx.touch(layout::bitmap_word(p), true);
        self.free[s] -= 1;
        // Adjust next_allocation_level if that level emptied.
        while nl < MAX_ORDER as usize && self.lists.is_empty(Self::list(s, nl)) {
            nl += 1;
            ctx.list_ops(1);
            self.lists.peek(Self::list(s, nl), ctx);
        }
        self.next_level[s] = nl as u8;
        Some(p)
    }

    /// Aligned 2^order block from space `s` (lock held).
    fn alloc_run(&mut self, s: usize, order: u8, ctx: &mut impl Recorder) -> Option<u64> {
        let size = 1u64 << order;
        let (base, end) = self.bounds(s);
        for level in order as usize..LEVELS {
            let l = Self::list(s, level);
            self.lists.peek(l, ctx);
            while let Some(p) = self.lists.front(l) {
                let start = p & !(size - 1);
                if start >= base && start + size <= end && self.run_free(start, size, ctx) {
                    self.take_run(s, start, size, ctx);
                    return Some(start);
                }
                // Stale hint: demote the frame to level 0.
                self.lists.remove(p, ctx);
                self.lists.push(Self::list(s, 0), p, ctx);
                self.next_level[s] = 0;
            }
        }
        let start = self.scan(s, size, ctx)?;
        self.take_run(s, start, size, ctx);
        Some(start)
    }

    /// First aligned all-free group of `size` frames in space `s`, by bitmap words.
    fn scan(&self, s: usize, size: u64, ctx: &mut impl Recorder) -> Option<u64> {
        let (base, end) = self.bounds(s);
        if size < 64 {
            let mask = (1u64 << size) - 1;
            for w in (base / 64) as usize..(end / 64) as usize {
                ctx.bitmap_words(1);
                ctx.touch(layout::bitmap_word(w as u64 * 64), false);
                let word = self.bits[w];
                if word == 0 {
                    continue;
                }
                let mut sh = 0;
                while sh < 64 {
                    if (word >> sh) & mask == mask {
                        return Some(w as u64 * 64 + sh);
                    }
                    sh += size;
                }
            }
            return None;
        }
        let mut start = base.next_multiple_of(size);
        while start + size <= end {
            if self.run_free(start, size, ctx) {
                return Some(start);
            }
            start += size;
        }
        None
    }

    fn space_of(&self, pfn: u64) -> usize {
        (pfn / self.space_frames) as usize
    }
}

/// The counts of [`PageAllocator`] without naming a recorder.
impl IBuddy {
    pub fn frames(&self) -> u64 {
        self.frames
    }

    pub fn free_frames(&self) -> u64 {
        self.free.iter().sum()
    }

    pub fn free_blocks(&self, order: u8) -> u64 {
        let size = 1u64 << order;
        let mut ctx = NoCost;
        let mut n = 0;
        for s in 0..self.spaces {
            let (base, end) = self.bounds(s);
            let mut start = base.next_multiple_of(size);
            while start + size <= end {
                n += self.run_free(start, size, &mut ctx) as u64;
                start += size;
            }
        }
        n
    }
}

impl<R: Recorder> PageAllocator<R> for IBuddy {
    fn frames(&self) -> u64 {
        IBuddy::frames(self)
    }

    fn alloc(&mut self, order: u8, cpu: u16, ctx: &mut R) -> Option<u64> {
        let home = cpu as usize % self.spaces;
        for i in 0..self.spaces {
            let s = (home + i) % self.spaces;
            // Read the space's free count, kept beside its lock (the same line the lock
            // acquisition then takes).
            ctx.touch(layout::space_lock(s), false);
            if self.free[s] < 1 << order {
                continue;
            }
            ctx.lock(s, cpu, layout::space_lock(s));
            let r = if order == 0 {
                self.alloc_one(s, ctx)
            } else {
                self.alloc_run(s, order, ctx)
            };
            ctx.unlock(s);
            if r.is_some() {
                return r;
            }
        }
        None
    }

    fn free(&mut self, pfn: u64, order: u8, cpu: u16, ctx: &mut R) {
        let s = self.space_of(pfn);
        let size = 1u64 << order;
        debug_assert!(pfn + size <= self.bounds(s).1);
        ctx.lock(s, cpu, layout::space_lock(s));
        // A freed block's frames go to the level of its order. Exception: under a fair
        // policy a single frame joins the top level (MAX_ORDER), so it queues behind
        // every frame already waiting instead of being reused first from level 0 (single
        // pages are served from the lowest non-empty level). Its hint then overstates its
        // run; multi-page requests check the bitmap and demote it if so.
        let level = if order == 0 && self.fair {
            MAX_ORDER
        } else {
            order
        };
        for f in pfn..pfn + size {
            debug_assert!(!self.bit(f), "double free of frame {f}");
            self.bits[(f / 64) as usize] |= 1u64 << (f % 64);
            ctx.touch(layout::bitmap_word(f), true);
            self.lists.push(Self::list(s, level as usize), f, ctx);
        }
        ctx.bitmap_words((size / 64).max(1));
        self.free[s] += size;
        if level < self.next_level[s] {
            self.next_level[s] = level;
        }
        ctx.unlock(s);
    }

    fn free_frames(&self) -> u64 {
        IBuddy::free_frames(self)
    }

    fn free_blocks(&self, order: u8) -> u64 {
        IBuddy::free_blocks(self, order)
    }
}
