//! The XPBuffer of one DIMM: an LRU buffer of 256 B XPLines in the PMem controller. A 64 B
//! write to a resident XPLine merges into it; a fully written XPLine goes to media as one
//! 256 B write (eagerly, if configured); evicting a partly written XPLine costs a media read
//! (read-modify-write) and a media write. Reads are served from resident XPLines.
//!
//! The number of XPLines holding unwritten data can be capped per write (`dirty_limit`): when
//! the DIMM's media write queue is backed up, most entries hold lines waiting for the media
//! and only a few are free to assemble incoming writes, so with many interleaved write
//! streams partly assembled XPLines are written back early (read-modify-write).

use rand::Rng;

use crate::cache::LruOrder;
use crate::hash::FastMap;
use crate::rng::SimRng;

pub(crate) const FULL: u8 = 0b1111;

/// A 256 B media write the buffer issues: which XPLine, and whether it needed a fill read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MediaWrite {
    pub xpline: u64,
    pub rmw_read: bool,
    /// The 64 B sub-lines it carries new data for (bit per sub-line).
    pub mask: u8,
}

#[derive(Clone)]
pub struct XpBuffer {
    eager: bool,
    /// Victim choice when full: None = least recently used; Some = uniformly random entry.
    random_victim: Option<SimRng>,
    map: FastMap<u64, u32>,
    order: LruOrder,
    xpline: Vec<u64>,
    mask: Vec<u8>,
    /// 64 B writes merged into an XPLine already resident.
    pub merged_writes: u64,
    /// Entries holding data not yet on media.
    dirty: usize,
    /// Partly written XPLines written back early because the dirty limit was reached.
    pub early_writebacks: u64,
    pub read_hits: u64,
    pub read_misses: u64,
}

impl XpBuffer {
    pub fn new(entries: usize, eager_full_writeback: bool) -> XpBuffer {
        XpBuffer {
            eager: eager_full_writeback,
            random_victim: None,
            map: FastMap::default(),
            order: LruOrder::new(entries as u32),
            xpline: vec![0; entries],
            mask: vec![0; entries],
            merged_writes: 0,
            dirty: 0,
            early_writebacks: 0,
            read_hits: 0,
            read_misses: 0,
        }
    }

    /// Evict a uniformly random entry instead of the least recently used one when full.
    pub fn with_random_replacement(mut self, rng: SimRng) -> XpBuffer {
        self.random_victim = Some(rng);
        self
    }

    /// Take a slot for `xpline` (evicting the LRU entry if full); returns (slot, write-back).
    fn allocate(&mut self, xpline: u64, mask: u8) -> (u32, Option<MediaWrite>) {
        let mut out = None;
        let slot = match self.order.take_free() {
            Some(s) => s,
            None => {
                let v = match &mut self.random_victim {
                    Some(r) => r.random_range(0..self.order.capacity()),
                    None => self.order.lru().expect("a full buffer has entries"),
                };
                self.order.touch(v);
                let old = self.xpline[v as usize];
                self.map.remove(&old);
                let m = self.mask[v as usize];
                if m != 0 {
                    self.dirty -= 1;
                    out = Some(MediaWrite {
                        xpline: old,
                        rmw_read: m != FULL,
                        mask: m,
                    });
                }
                v
            }
        };
        self.xpline[slot as usize] = xpline;
        self.mask[slot as usize] = mask;
        self.map.insert(xpline, slot);
        self.dirty += (mask != 0) as usize;
        (slot, out)
    }

    /// Write back the least recently used entry holding unwritten data (it stays resident,
    /// clean, for reads).
    fn write_back_oldest_dirty(&mut self) -> Option<MediaWrite> {
        let i = self
            .order
            .iter_from_lru()
            .find(|&i| self.mask[i as usize] != 0)? as usize;
        let m = std::mem::take(&mut self.mask[i]);
        self.dirty -= 1;
        self.early_writebacks += (m != FULL) as u64;
        Some(MediaWrite {
            xpline: self.xpline[i],
            rmw_read: m != FULL,
            mask: m,
        })
    }

    /// A 64 B write request to sub-line `sub` (0..4) of `xpline`; returns the media write
    /// it causes, if any.
    #[inline]
    pub fn write(&mut self, xpline: u64, sub: u8) -> Option<MediaWrite> {
        self.write_limited(xpline, sub, usize::MAX)[0]
    }

    /// A 64 B write with at most `dirty_limit` entries holding unwritten data afterwards;
    /// returns up to two media writes (an evicted or completed XPLine, and one written back
    /// early to respect the limit).
    #[inline]
    pub fn write_limited(
        &mut self,
        xpline: u64,
        sub: u8,
        dirty_limit: usize,
    ) -> [Option<MediaWrite>; 2] {
        let bit = 1u8 << sub;
        if let Some(&i) = self.map.get(&xpline) {
            self.order.touch(i);
            let m = &mut self.mask[i as usize];
            if *m != 0 {
                self.merged_writes += 1;
            } else {
                self.dirty += 1;
            }
            *m |= bit;
            if self.eager && *m == FULL {
                *m = 0;
                self.dirty -= 1;
                return [
                    Some(MediaWrite {
                        xpline,
                        rmw_read: false,
                        mask: FULL,
                    }),
                    None,
                ];
            }
            return [None, self.enforce(dirty_limit)];
        }
        let evicted = self.allocate(xpline, bit).1;
        [evicted, self.enforce(dirty_limit)]
    }

    #[inline]
    fn enforce(&mut self, dirty_limit: usize) -> Option<MediaWrite> {
        if self.dirty > dirty_limit.max(1) {
            self.write_back_oldest_dirty()
        } else {
            None
        }
    }

    /// A 64 B read request; `(hit, write-back caused by allocating the line)`.
    #[inline]
    pub fn read(&mut self, xpline: u64) -> (bool, Option<MediaWrite>) {
        if let Some(&i) = self.map.get(&xpline) {
            self.order.touch(i);
            self.read_hits += 1;
            return (true, None);
        }
        self.read_misses += 1;
        let (_, evicted) = self.allocate(xpline, 0);
        (false, evicted)
    }

    /// XPLines holding data not yet on media.
    pub fn dirty_lines(&self) -> usize {
        self.dirty
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_xpline_costs_exactly_one_media_write() {
        let mut b = XpBuffer::new(64, true);
        let w: Vec<_> = (0..4).filter_map(|s| b.write(7, s)).collect();
        assert_eq!(
            w,
            vec![MediaWrite {
                xpline: 7,
                rmw_read: false,
                mask: FULL
            }]
        );
        assert_eq!(b.dirty_lines(), 0);
    }

    #[test]
    fn overwrites_of_a_resident_partial_xpline_are_absorbed() {
        let mut b = XpBuffer::new(64, true);
        for _ in 0..1000 {
            assert!(b.write(3, 0).is_none());
        }
        assert_eq!(b.merged_writes, 999);
        assert_eq!(b.dirty_lines(), 1);
    }

    #[test]
    fn evicting_a_partial_xpline_is_a_read_modify_write() {
        let mut b = XpBuffer::new(2, true);
        b.write(1, 0);
        b.write(2, 0);
        assert_eq!(
            b.write(3, 0),
            Some(MediaWrite {
                xpline: 1,
                rmw_read: true,
                mask: 1
            })
        );
    }

    #[test]
    fn a_dirty_limit_writes_the_oldest_partial_line_back_early() {
        let mut b = XpBuffer::new(64, true);
        for x in 0..3 {
            assert_eq!(b.write_limited(x, 0, 3), [None, None]);
        }
        // A fourth partly written line over a limit of three: line 0 goes to media (RMW)
        // and stays resident, clean.
        assert_eq!(
            b.write_limited(3, 0, 3),
            [
                None,
                Some(MediaWrite {
                    xpline: 0,
                    rmw_read: true,
                    mask: 1
                })
            ]
        );
        assert_eq!((b.dirty_lines(), b.early_writebacks), (3, 1));
        assert!(b.read(0).0, "written back, still resident");
        // Completing a line frees its slot without an early write-back.
        for s in 1..4 {
            let w = b.write_limited(1, s, 3);
            assert_eq!(w[1], None);
        }
        assert_eq!(b.dirty_lines(), 2);
    }

    #[test]
    fn n_streams_over_more_xplines_than_entries_cost_one_rmw_per_write() {
        // 8 streams, each writing one 64 B line per XPLine in turn over its own 40 XPLines:
        // 320 XPLines cycled through a 64-entry LRU buffer, so every line is evicted before
        // its stream returns to it. The first 64 writes fill the buffer; every later write
        // evicts one partly written XPLine: a read-modify-write each.
        let mut b = XpBuffer::new(64, true);
        let (streams, per_stream, rounds) = (8u64, 40u64, 5u64);
        let mut media = Vec::new();
        for r in 0..rounds * per_stream {
            for s in 0..streams {
                let x = s * 1000 + r % per_stream;
                media.extend(b.write(x, (r / per_stream) as u8 % 4));
            }
        }
        let writes = streams * per_stream * rounds;
        assert_eq!(media.len() as u64, writes - 64);
        assert!(media.iter().all(|w| w.rmw_read && w.mask.count_ones() == 1));
        assert_eq!(b.merged_writes, 0);
    }

    #[test]
    fn lru_order_follows_use() {
        let mut b = XpBuffer::new(2, false);
        b.write(1, 0);
        b.write(2, 0);
        b.read(1);
        assert_eq!(b.write(3, 0).map(|w| w.xpline), Some(2));
    }
}
