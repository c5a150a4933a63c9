//! MEMTIS's per-4-KiB sub-page counts of huge pages and its split decision (artifact
//! `mm/htmm_core.c`): skewness bins, the estimated base-page histogram, eHR against rHR, the
//! split target and threshold. `memtis.rs` drives it from its samples and cooling.

use super::memtis_bins::{bin_of, move_weight, BINS};
use super::memtis_cool::BinSteps;
use super::pages::PageTable;

/// Skew bins of the split decision (artifact `access_map`, 0 … 20).
pub(super) const SKEW_BINS: usize = 21;
/// Huge pages at or above this bin are too hot to split (artifact: `idx >= 13`).
pub(super) const VERY_HOT_BIN: usize = 13;
/// eHR is discounted to 95 % before it is set against rHR (artifact).
const EHR_FACTOR: f64 = 0.95;
/// After a split, a decision that finds rHR improved by less than 3 % stops splitting.
pub(super) const MIN_RHR_GAIN: f64 = 1.03;
pub(super) const NO_SLOT: u32 = u32::MAX;

/// The artifact's skew bins (`get_skew_idx`): below 1024 the bit length (0 → 0, 1 → 1,
/// 2–3 → 2, …, 512–1023 → 10), then 1024-wide steps (1024–2048 → 11, …) up to 20.
pub(super) fn skew_bin(skew: u64) -> usize {
    if skew >= 1024 {
        11 + ((skew - 1) / 1024).min(9) as usize
    } else {
        (64 - skew.leading_zeros()) as usize
    }
}

/// Skew bin of a huge page (artifact `check_transhuge_cooling`): Σ (c_i·w)² / 11 / u²
/// from its sub-pages' sample counts c_i (`sum_sq` = Σ c_i², each sample weighing `w`) and
/// the number `u` of sub-pages hot by the base-page estimate; 0 when none is hot or the
/// page itself is very hot (bin ≥ 13).
pub(super) fn skew_of(sum_sq: u64, hot: u64, weight: u64, page_bin: usize) -> usize {
    if hot == 0 || page_bin >= VERY_HOT_BIN {
        return 0;
    }
    skew_bin(sum_sq.saturating_mul(weight * weight) / 11 / hot / hot)
}

/// Per-4-KiB counts of sampled huge pages and MEMTIS's split decision state.
pub(super) struct Skew {
    /// Base pages per huge page.
    pub(super) upp: u64,
    /// Per huge page: its slot in `sub`, or `NO_SLOT` until sampled.
    pub(super) slot: Vec<u32>,
    /// Sub-page sample counts (unweighted, saturating at 255: a count of 64 already reaches
    /// the top bin), `upp` per slot; one byte each keeps the array cache-friendlier.
    pub(super) sub: Vec<u8>,
    /// Weighted bin of each count.
    pub(super) bin_tab: [u8; 256],
    /// Where a halved count's bin changes (cooling counts the halved counts per bin).
    pub(super) bin_steps: BinSteps,
    /// Per slot: skew bin at the last cooling, and 0 normal / 1 queued / 2 split.
    pub(super) skew: Vec<u8>,
    pub(super) state: Vec<u8>,
    pub(super) queue: std::collections::VecDeque<u64>,
    /// Huge pages split (in the order asked).
    pub(super) split_pages: Vec<u64>,
    /// Estimated base-page histogram (4 KiB units by weighted count) and its hot bin.
    pub(super) ebp: [u64; BINS],
    pub(super) bp_hot: usize,
    pub(super) access_map: [u64; SKEW_BINS],
    pub(super) sum_util: u64,
    pub(super) num_util: u64,
    pub(super) nr_split: u64,
    pub(super) nr_split_tail: u64,
    pub(super) split_thres: usize,
    pub(super) dram_sampled: u64,
    pub(super) max_dram_sampled: u64,
    pub(super) prev_dram: u64,
    pub(super) prev_max: u64,
    pub(super) sampled_for_split: u64,
    pub(super) need_split: bool,
    pub(super) cooled: bool,
    pub(super) split_happened: bool,
    pub(super) disabled: bool,
    pub(super) cooling_clock: u32,
    /// Lowest smoothed latency seen per tier, ns (the artifact uses nominal latencies).
    pub(super) nominal_ns: [f64; 2],
}

impl Skew {
    pub(super) fn new(pt: &PageTable) -> Self {
        let upp = pt.units_per_page();
        let mut ebp = [0; BINS];
        ebp[0] = pt.pages() * upp;
        let mut bin_tab = [0u8; 256];
        for (c, b) in bin_tab.iter_mut().enumerate() {
            *b = bin_of((c as u64 * upp).min(u32::MAX as u64) as u32) as u8;
        }
        Skew {
            upp,
            bin_tab,
            bin_steps: BinSteps::new(&bin_tab),
            slot: vec![NO_SLOT; pt.pages() as usize],
            // Every huge page may get a slot: room for all, on huge pages (the counts are
            // read at random, one sample after another).
            sub: crate::hugevec::with_capacity((pt.pages() * upp) as usize),
            skew: Vec::new(),
            state: Vec::new(),
            queue: Default::default(),
            split_pages: Vec::new(),
            ebp,
            bp_hot: 1,
            access_map: [0; SKEW_BINS],
            sum_util: 0,
            num_util: 0,
            nr_split: 0,
            nr_split_tail: 0,
            split_thres: SKEW_BINS,
            dram_sampled: 0,
            max_dram_sampled: 0,
            prev_dram: 0,
            prev_max: 0,
            sampled_for_split: 0,
            need_split: false,
            cooled: false,
            split_happened: false,
            disabled: false,
            cooling_clock: 0,
            nominal_ns: [f64::INFINITY; 2],
        }
    }

    #[inline]
    pub(super) fn bin(&self, c: u8) -> usize {
        self.bin_tab[c as usize] as usize
    }

    #[inline]
    pub(super) fn slot_of(&mut self, h: u64) -> usize {
        let s = &mut self.slot[h as usize];
        if *s == NO_SLOT {
            *s = self.skew.len() as u32;
            self.sub.extend(std::iter::repeat_n(0, self.upp as usize));
            self.skew.push(0);
            self.state.push(0);
        }
        *s as usize
    }

    /// One sample on sub-page `i` of huge page `h`; returns (old, new) weighted bin.
    #[inline]
    pub(super) fn bump(&mut self, h: u64, i: u64) -> (usize, usize) {
        let s = self.slot_of(h);
        self.bump_slot(s, i)
    }

    /// [`bump`](Self::bump) of the huge page in slot `s`.
    #[inline]
    pub(super) fn bump_slot(&mut self, s: usize, i: u64) -> (usize, usize) {
        let k = s * self.upp as usize + i as usize;
        let c = self.sub[k];
        let old = self.bin(c);
        // eHR: the sample would hit the default tier if it held the base pages the
        // estimate counts hot.
        if old >= self.bp_hot {
            self.max_dram_sampled += 1;
        }
        let c = c.saturating_add(1);
        self.sub[k] = c;
        let new = self.bin(c);
        move_weight(&mut self.ebp, old, new, 1);
        (old, new)
    }

    /// Start loading the count a sample on `id` (sub-page `i`) will update.
    #[inline]
    pub(super) fn prefetch(&self, pt: &PageTable, id: u64, i: u16) {
        let (h, i) = if id < pt.pages() {
            (id, i as u64)
        } else {
            match pt.parent_of(id) {
                Some(x) => x,
                None => return,
            }
        };
        let s = self.slot[h as usize];
        if s == NO_SLOT {
            return;
        }
        let k = s as usize * self.upp as usize + i as usize;
        if let Some(x) = self.sub.get(k) {
            crate::hostmem::prefetch(x);
        }
    }

    pub(super) fn split_state(&self, h: u64) -> u8 {
        match self.slot[h as usize] {
            NO_SLOT => 0,
            s => self.state[s as usize],
        }
    }

    /// Queue `h` (in slot `s`) if its skew is at or above the split threshold and the split
    /// budget allows (artifact `check_split_huge_page`).
    #[inline]
    pub(super) fn check_split(&mut self, h: u64, s: usize) {
        if self.disabled || self.split_thres >= SKEW_BINS {
            return;
        }
        let sk = self.skew[s] as usize;
        if self.state[s] != 0 || sk == 0 || sk + 1 < self.split_thres {
            return;
        }
        let tail = sk + 1 == self.split_thres || self.nr_split == 0;
        if tail && self.nr_split_tail == 0 {
            return;
        }
        let b = if tail {
            &mut self.nr_split_tail
        } else {
            &mut self.nr_split
        };
        *b = b.saturating_sub(self.upp);
        self.access_map[sk] = self.access_map[sk].saturating_sub(1);
        self.state[s] = 1;
        self.queue.push_back(h);
    }

    /// The skew threshold: the most skewed bins that cover `nr_split` base pages; the bin
    /// where it runs out gets the rest (artifact `set_memcg_split_thres`).
    pub(super) fn set_threshold(&mut self) {
        if self.nr_split == 0 {
            self.split_thres = SKEW_BINS;
            return;
        }
        let mut rest = self.nr_split;
        let mut i = SKEW_BINS - 1;
        while i > 0 {
            let pages = self.access_map[i] * self.upp;
            if rest < pages {
                self.nr_split_tail = rest;
                self.nr_split -= rest;
                break;
            }
            rest -= pages;
            i -= 1;
        }
        if i != SKEW_BINS - 1 {
            self.split_thres = i + 1;
        }
    }

    /// The split target in base pages (artifact `set_memcg_nr_split`).
    pub(super) fn set_nr_split(&mut self, cool_every: u64, gamma: f64) {
        self.nr_split = 0;
        self.nr_split_tail = 0;
        let ehr = self.prev_max as f64 * EHR_FACTOR;
        let rhr = self.prev_dram as f64;
        if ehr <= rhr || self.num_util == 0 {
            return;
        }
        let avg = self.sum_util / self.num_util;
        if avg == 0 {
            return;
        }
        // Samples in the decayed counts: cooling halves them, so n = 2c − c/2^(clock−1).
        let records = (2 * cool_every)
            .saturating_sub(cool_every >> (self.cooling_clock.saturating_sub(1)).min(63))
            .max(1);
        let [ld, la] = self.nominal_ns;
        let gap = if ld.is_finite() && la.is_finite() && ld > 0.0 {
            ((la - ld) / ld).max(0.0)
        } else {
            0.0
        };
        let n = (ehr - rhr) * self.sum_util as f64 / records as f64 / avg as f64
            * gap
            * self.upp as f64
            * gamma;
        self.nr_split = n as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-worked skew bins: one hot sub-page with 2 samples (weight 512): (2·512)²/11 =
    /// 95,325 → bin 20 (≥ 1024: 11 + min(9, ⌊95,324/1024⌋)); all 512 sub-pages hot with one
    /// sample each: 512·512²/11/512² = 46 → bin 6 (32…63); a very hot page never splits.
    #[test]
    fn skewness_follows_the_artifact() {
        assert_eq!(
            [0, 1, 3, 4, 15, 16, 1023].map(skew_bin),
            [0, 1, 2, 3, 4, 5, 10]
        );
        assert_eq!([1024, 2048, 2049, 1 << 30].map(skew_bin), [11, 12, 13, 20]);
        assert_eq!(skew_of(4, 1, 512, 2), 20);
        assert_eq!(skew_of(512, 512, 512, 10), 6);
        assert_eq!(skew_of(512, 512, 512, VERY_HOT_BIN), 0);
        assert_eq!(skew_of(99, 0, 512, 2), 0);
    }
}
