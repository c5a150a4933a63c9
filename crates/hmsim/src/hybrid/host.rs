//! The host: one in-order core, threads under a round-robin scheduler (time slice, context
//! switch cost), I-/D-TLBs over UMD DRAM frames, the page walk that queries the UMD, OS
//! page faults for first use, and internal faults handled by the EPF policy.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use rand::Rng;

use super::policy::{EpfPolicy, FaultView};
use super::tlb::Tlb;
use super::umd::{Fault, Umd, Walk};
use super::workload::{HybridWorkload, Touch};
use crate::flash::NONE;

crate::params! {
    /// The host: an in-order core per thread, its TLBs, and the OS costs of faults, exceptions
    /// and scheduling (docs/hybrid.md).
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct HostConfig {
        pub core_ghz: f64 = 2.0 => range(0.01, 100.0), "", "Core clock.";
        pub cpi: f64 = 1.0 => range(0.01, 1000.0), "",
            "Cycles per instruction of the in-order core, memory stalls on cached data included.";
        pub tlb_entries: u32 = 32 => range(1, 256), "", "Entries of each of the I- and D-TLB.";
        pub page_walk_ns: u64 = 200 => range(0, 1_000_000), "",
            "A page-table walk plus the UMD query of the modified walk.";
        pub dram_access_ns: u64 = 50 => range(0, 1_000_000), "",
            "One page-level access reaching UMD DRAM over DDR.";
        pub exception_ns: u64 = 1_344 => range(0, 1_000_000_000), "",
            "Raising an exception or interrupt and entering/leaving its handler (EPFs, page faults, the timer interrupt that ends an EPF's block): Linux's page-fault trap, 2,687 cycles (Belay et al., Dune, OSDI'12, Table 2), at 2 GHz.";
        pub os_fault_ns: u64 = 2_000 => range(0, 1_000_000_000), "",
            "The OS page-fault handler's work for a first use (allocation, zero-fill or file read).";
        pub context_switch_ns: u64 = 3_800 => range(0, 1_000_000_000), "",
            "A switch between threads: 3.8 µs direct cost (Li, Ding & Shen, ExpCS'07).";
        pub idle_switch_ns: u64 = 3_800 => range(0, 1_000_000_000), "",
            "A switch to or from the idle task when no thread is ready (a context switch without an address-space change; same measurement).";
        pub wakeup_ns: u64 = 3_000 => range(0, 1_000_000_000), "",
            "Leaving the idle state when the timer fires on an idle core: C1's exit latency as Intel declares it for Nehalem-class cores to Linux's `intel_idle` (3 µs).";
        pub timer_slack_ns: u64 = 50_000 => range(0, 1_000_000_000), "",
            "Slack of the timer an EPF-blocked thread sleeps on: the timer may fire up to this long after the estimate and, unless another timer fires in that window, fires at its end (Linux's default for normal tasks, `init_task.timer_slack_ns` = 50 µs; 0 as for real-time tasks).";
        pub time_slice_us: f64 = 4_000.0 => range(1.0, 1e9), "", "Scheduler time slice.";
        pub nonpreemptible_fraction: f64 = 0.0 => fraction, "",
            "Share of accesses inside atomic/non-preemptible sections (an EPF cannot block there).";
        pub atomic_kernel_copies: bool = true => any, "",
            "The kernel's copies between user buffers and page-cache pages inside `read()`/`write()` run with page faults disabled (Linux 2.6.38's `file_read_actor` under `kmap_atomic`, `generic_perform_write` under `pagefault_disable`, both raising the preempt count), so an internal fault there cannot block: the core waits whatever the policy. false: such faults may block like the thread's own accesses.";
        pub wakeup_preemption: bool = false => any, "",
            "Schedule as Linux 2.6.38's CFS on one CPU instead of round-robin: the next thread is the ready one that has run least (vruntime), a woken thread is placed at most 3 ms (half of `sched_latency`) behind the least vruntime, and it preempts the running thread when it lags it by more than the 1 ms wake-up granularity; timers fire while another thread runs.";
        pub code_pages: u32 = 8 => range(1, 1 << 20), "pages",
            "Code pages per process (I-TLB footprint); fetches walk them in phases.";
    }
}

/// What a run measured.
#[derive(Debug, Clone, Default)]
pub struct HostStats {
    pub runtime_ns: u64,
    /// Page-level data accesses (each reaches UMD DRAM or faults).
    pub umd_accesses: u64,
    pub itlb_misses: u64,
    pub dtlb_misses: u64,
    pub os_faults: u64,
    /// First uses allocated by the kernel inside a system call (page-cache pages of
    /// `read()` readahead and `write()`): the allocation's cost, no exception.
    pub kernel_allocs: u64,
    pub internal_faults: u64,
    pub epf_raised: u64,
    /// EPFs raised again by a thread woken before its fault was done (estimate too short).
    pub epf_reraised: u64,
    /// Re-walks that found their page still being filled (after an early wake-up).
    pub fault_waits: u64,
    pub stall_ns: u64,
    pub idle_ns: u64,
    pub context_switches: u64,
    /// Switches to and from the idle task.
    pub idle_switches: u64,
    /// Timers that fired on an idle core (each pays `wakeup_ns`).
    pub wakeups: u64,
    /// Timer interrupts ending EPF blocks (each pays `exception_ns`).
    pub timer_interrupts: u64,
    /// Times a thread waited for another's hand-off (a futex wait).
    pub handoff_waits: u64,
    pub gc_runs_in_faults: u64,
    /// Service time of the internal faults that ran GC, summed (ns).
    pub gc_fault_ns: u64,
    /// Internal faults inside a kernel copy with page faults disabled (they cannot block).
    pub atomic_faults: u64,
    /// EPFs raised while another thread was ready to run (the only ones whose wait the
    /// core can use at once).
    pub epf_with_ready: u64,
    /// Per internal fault: (estimated, actual) service time in ns.
    pub service: Vec<(u64, u64)>,
}

#[derive(Clone, Copy)]
struct Thread {
    process: u16,
    cursor: usize,
    gap_paid: bool,
    /// Next entry of the thread's hand-off list.
    next_dep: usize,
    /// CPU time the thread has had (CFS's vruntime; all threads weigh the same).
    vruntime: u64,
}

/// Half of CFS's `sysctl_sched_latency` (6 ms on one CPU in Linux 2.6.38): how far behind
/// `min_vruntime` `place_entity` puts a waking sleeper (GENTLE_FAIR_SLEEPERS).
const CFS_SLEEPER_CREDIT_NS: u64 = 3_000_000;
/// `sysctl_sched_wakeup_granularity` (1 ms on one CPU): a woken thread preempts the running
/// one when it lags it by more (`wakeup_preempt_entity`).
const CFS_WAKEUP_GRANULARITY_NS: u64 = 1_000_000;

/// A fault's (or the rest of one's) estimate and completion time; `first` unless the
/// thread is re-walking after an EPF woke it before the fault was done; `atomic` when the
/// access runs with page faults disabled, so the thread cannot block.
struct Decision {
    estimate: u64,
    done: u64,
    first: bool,
    atomic: bool,
}

enum Step {
    Done,
    Blocked(u64),
}

/// Runs every thread of `w` to completion on one core over `umd`.
pub struct Host<'a> {
    cfg: HostConfig,
    umd: &'a mut Umd,
    policy: &'a dyn EpfPolicy,
    itlb: Tlb,
    dtlb: Tlb,
    /// Global virtual page → logical page; processes' data pages then code pages.
    page_table: Vec<u32>,
    data_base: Vec<u64>,
    code_base: Vec<u64>,
    /// The OS hands out logical pages k = 0, 1, ... as `(k·lpn_mul + lpn_add) mod N`: a
    /// seeded permutation, because a long-running OS's free list is scattered over memory.
    next_lpn: u64,
    lpn_mul: u64,
    lpn_add: u64,
    np_key: u64,
    np_cut: u64,
    now: u64,
    threads: Vec<Thread>,
    ready: VecDeque<usize>,
    /// EPF-blocked threads by wake-up time.
    blocked: BinaryHeap<Reverse<(u64, usize)>>,
    /// Per thread: threads waiting until it has done a number of events.
    waiters: Vec<Vec<(u32, usize)>>,
    /// With `wakeup_preemption`: the running thread, since when, CFS's `min_vruntime`, and
    /// whether a woken thread is to preempt it.
    running: Option<usize>,
    run_start: u64,
    min_vruntime: u64,
    preempt: bool,
    pub stats: HostStats,
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Logical pages the OS hands out for `w`: every process's data and code pages.
pub(super) fn pages_needed(w: &HybridWorkload, cfg: &HostConfig) -> u64 {
    w.footprint_pages() + w.process_pages.len() as u64 * cfg.code_pages as u64
}

impl<'a> Host<'a> {
    pub fn new(
        cfg: HostConfig,
        umd: &'a mut Umd,
        policy: &'a dyn EpfPolicy,
        w: &HybridWorkload,
        seed: u64,
    ) -> Host<'a> {
        let mut data_base = Vec::new();
        let mut code_base = Vec::new();
        let mut next = 0u64;
        for &p in &w.process_pages {
            data_base.push(next);
            next += p as u64;
            code_base.push(next);
            next += cfg.code_pages as u64;
        }
        let np_cut = (cfg.nonpreemptible_fraction * u64::MAX as f64) as u64;
        let n = umd.logical_pages() as u64;
        let mut rng = crate::rng::stream(seed, "hybrid-os-pages");
        let mut lpn_mul = rng.random_range(0..n) | 1;
        while gcd(lpn_mul, n) != 1 {
            lpn_mul += 2;
        }
        let lpn_add = rng.random_range(0..n);
        let threads = w
            .threads
            .iter()
            .map(|t| Thread {
                process: t.process,
                cursor: 0,
                gap_paid: false,
                next_dep: 0,
                vruntime: 0,
            })
            .collect();
        let mut host = Host {
            itlb: Tlb::new(cfg.tlb_entries as usize),
            dtlb: Tlb::new(cfg.tlb_entries as usize),
            page_table: vec![NONE; next as usize],
            data_base,
            code_base,
            next_lpn: 0,
            lpn_mul,
            lpn_add,
            np_key: crate::rng::stream(seed, "hybrid-nonpreemptible").random(),
            np_cut,
            now: 0,
            threads,
            ready: (0..w.threads.len()).collect(),
            blocked: BinaryHeap::new(),
            waiters: vec![Vec::new(); w.threads.len()],
            running: None,
            run_start: 0,
            min_vruntime: 0,
            preempt: false,
            stats: HostStats::default(),
            cfg,
            umd,
            policy,
        };
        // The resident OS: mapped and written to the device before the run.
        if w.resident_pages > 0 {
            for vp in 0..w.resident_pages as u64 {
                let lpn = host.allocate();
                host.page_table[(host.data_base[0] + vp) as usize] = lpn;
                host.umd.preload(lpn);
            }
            host.umd.ftl.reset_stats();
        }
        host
    }

    /// The next logical page from the OS's free list.
    fn allocate(&mut self) -> u32 {
        let n = self.umd.logical_pages() as u64;
        let lpn = ((self.next_lpn as u128 * self.lpn_mul as u128 + self.lpn_add as u128)
            % n as u128) as u32;
        self.next_lpn += 1;
        lpn
    }

    /// Whether access `cursor` of thread `t` is in a non-preemptible section (a hash of
    /// the seed, thread and position, so it does not depend on the schedule).
    fn nonpreemptible(&self, t: usize, cursor: usize) -> bool {
        if self.np_cut == 0 {
            return false;
        }
        let mut z = self.np_key ^ ((t as u64) << 48) ^ cursor as u64;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) < self.np_cut
    }

    /// Moves EPF-blocked threads whose timer has fired to the ready queue. Blocked threads
    /// are keyed by their timer's hard expiry (estimate + slack); one timer interrupt (an
    /// exception entry) at the earliest hard expiry also expires every timer whose soft
    /// expiry (hard − slack) has passed by then, as Linux's hrtimer interrupt does.
    fn wake_due(&mut self) {
        while let Some(&Reverse((t, _))) = self.blocked.peek() {
            if t > self.now {
                break;
            }
            self.now += self.cfg.exception_ns;
            self.stats.timer_interrupts += 1;
            let soft_limit = t + self.cfg.timer_slack_ns;
            while let Some(&Reverse((h, i))) = self.blocked.peek() {
                if h > soft_limit {
                    break;
                }
                self.blocked.pop();
                self.make_ready(i);
            }
        }
    }

    /// Whether thread `i` may run its next event; if it must wait for another thread's
    /// hand-off it is parked on that thread (a futex wait) and `false` is returned.
    fn handoffs_done(&mut self, i: usize, w: &HybridWorkload) -> bool {
        let deps = &w.threads[i].deps;
        loop {
            let th = self.threads[i];
            let Some(d) = deps.get(th.next_dep) else {
                return true;
            };
            if d.at as usize != th.cursor {
                return true;
            }
            if self.threads[d.thread as usize].cursor as u32 >= d.reached {
                self.threads[i].next_dep += 1;
                continue;
            }
            self.waiters[d.thread as usize].push((d.reached, i));
            self.stats.handoff_waits += 1;
            return false;
        }
    }

    /// Makes the threads waiting for thread `i`'s progress ready once it has got there.
    fn release_waiters(&mut self, i: usize) {
        let done = self.threads[i].cursor as u32;
        let mut k = 0;
        while k < self.waiters[i].len() {
            if self.waiters[i][k].0 <= done {
                let (_, t) = self.waiters[i].remove(k);
                self.make_ready(t);
            } else {
                k += 1;
            }
        }
    }

    /// Thread `t`'s vruntime, with the running thread's time so far.
    fn live_vruntime(&self, t: usize) -> u64 {
        let run = if self.running == Some(t) {
            self.now - self.run_start
        } else {
            0
        };
        self.threads[t].vruntime + run
    }

    /// CFS's `min_vruntime`: the least vruntime of the running and ready threads, never
    /// moving back.
    fn update_min_vruntime(&mut self) -> u64 {
        let running = self.running.map(|c| self.live_vruntime(c));
        let ready = self.ready.iter().map(|&r| self.threads[r].vruntime).min();
        if let Some(m) = running.into_iter().chain(ready).min() {
            self.min_vruntime = self.min_vruntime.max(m);
        }
        self.min_vruntime
    }

    /// A blocked thread becomes ready (its timer fired, or the hand-off it waited for
    /// came). With `wakeup_preemption` it is placed as CFS places a waking sleeper and may
    /// preempt the running thread.
    fn make_ready(&mut self, t: usize) {
        if self.cfg.wakeup_preemption {
            let floor = self
                .update_min_vruntime()
                .saturating_sub(CFS_SLEEPER_CREDIT_NS);
            let v = self.threads[t].vruntime.max(floor);
            self.threads[t].vruntime = v;
            if let Some(c) = self.running {
                if v + CFS_WAKEUP_GRANULARITY_NS < self.live_vruntime(c) {
                    self.preempt = true;
                }
            }
        }
        self.ready.push_back(t);
    }

    /// The next thread to run: the first ready one, or with `wakeup_preemption` the one
    /// with the least vruntime (the first of equals).
    fn pick_next(&mut self) -> Option<usize> {
        if !self.cfg.wakeup_preemption {
            return self.ready.pop_front();
        }
        let k = (0..self.ready.len()).min_by_key(|&k| self.threads[self.ready[k]].vruntime)?;
        self.ready.remove(k)
    }

    pub fn run(mut self, w: &HybridWorkload) -> HostStats {
        let ns_per_instr = self.cfg.cpi / self.cfg.core_ghz;
        let slice_ns = (self.cfg.time_slice_us * 1e3) as u64;
        let mut last: Option<usize> = None;
        let mut idle = false;
        // Fractional instruction time carried so the clock stays integral.
        let mut frac = 0.0f64;
        loop {
            self.wake_due();
            let Some(i) = self.pick_next() else {
                let Some(&Reverse((t, _))) = self.blocked.peek() else {
                    debug_assert!(
                        self.waiters.iter().all(Vec::is_empty),
                        "threads wait for each other's hand-offs forever"
                    );
                    break;
                };
                // No thread ready: switch to the idle task and sleep until the timer.
                if !idle {
                    self.now += self.cfg.idle_switch_ns;
                    self.stats.idle_switches += 1;
                    idle = true;
                    last = None;
                }
                if t > self.now {
                    self.stats.idle_ns += t - self.now;
                    self.now = t;
                }
                self.now += self.cfg.wakeup_ns;
                self.stats.wakeups += 1;
                continue;
            };
            if idle {
                self.now += self.cfg.idle_switch_ns;
                self.stats.idle_switches += 1;
                idle = false;
            } else if let Some(l) = last {
                if l != i {
                    self.now += self.cfg.context_switch_ns;
                    self.stats.context_switches += 1;
                    if self.threads[l].process != self.threads[i].process {
                        self.itlb.flush();
                        self.dtlb.flush();
                    }
                }
            }
            last = Some(i);
            let slice_start = self.now;
            let cfs = self.cfg.wakeup_preemption;
            if cfs {
                self.running = Some(i);
                self.run_start = self.now;
            }
            let events = &w.threads[i].events;
            loop {
                if self.threads[i].cursor == events.len() || !self.handoffs_done(i, w) {
                    break;
                }
                if cfs {
                    // A timer fires while the thread runs; its sleeper may preempt it.
                    if self
                        .blocked
                        .peek()
                        .is_some_and(|&Reverse((t, _))| t <= self.now)
                    {
                        self.wake_due();
                    }
                    if self.preempt {
                        self.ready.push_back(i);
                        break;
                    }
                }
                if self.now - slice_start >= slice_ns {
                    self.wake_due();
                    if !self.ready.is_empty() {
                        self.ready.push_back(i);
                        break;
                    }
                }
                let th = &mut self.threads[i];
                let ev = events[th.cursor];
                if ev.touch == Touch::Dma {
                    // The disk's DMA, not the thread: no instructions, no TLB, no wait.
                    let process = th.process as usize;
                    th.cursor += 1;
                    self.dma_fill(process, ev.page);
                    if !self.waiters[i].is_empty() {
                        self.release_waiters(i);
                    }
                    continue;
                }
                if !th.gap_paid {
                    frac += ev.gap as f64 * ns_per_instr;
                    let whole = frac as u64;
                    frac -= whole as f64;
                    self.now += whole;
                    th.gap_paid = true;
                }
                let (process, cursor) = (th.process as usize, th.cursor);
                let code =
                    self.code_base[process] + ((cursor >> 6) as u64 % self.cfg.code_pages as u64);
                if let Step::Blocked(until) = self.translate(code, false, true, false, i, cursor) {
                    self.blocked.push(Reverse((until, i)));
                    break;
                }
                let vp = self.data_base[process] + ev.page as u64;
                let kernel_copy = ev.touch == Touch::Syscall;
                match self.translate(vp, ev.write, false, kernel_copy, i, cursor) {
                    Step::Done => {
                        self.stats.umd_accesses += 1;
                        let th = &mut self.threads[i];
                        th.cursor += 1;
                        th.gap_paid = false;
                        if !self.waiters[i].is_empty() {
                            self.release_waiters(i);
                        }
                    }
                    Step::Blocked(until) => {
                        self.blocked.push(Reverse((until, i)));
                        break;
                    }
                }
            }
            if cfs {
                self.threads[i].vruntime += self.now - self.run_start;
                self.running = None;
                self.preempt = false;
            }
        }
        self.stats.runtime_ns = self.now;
        self.stats.itlb_misses = self.itlb.misses;
        self.stats.dtlb_misses = self.dtlb.misses;
        self.stats
    }

    /// One access to virtual page `vp` through the I- or D-TLB: the hit path inline, the
    /// walk out of line.
    /// `kernel_copy`: the kernel's copy to or from a page-cache page inside a system call: a
    /// first use is a page the kernel allocates there (no page fault), and the copy runs
    /// with page faults disabled.
    #[inline(always)]
    fn translate(
        &mut self,
        vp: u64,
        write: bool,
        instr: bool,
        kernel_copy: bool,
        t: usize,
        cursor: usize,
    ) -> Step {
        let tlb = if instr {
            &mut self.itlb
        } else {
            &mut self.dtlb
        };
        if let Some(f) = tlb.lookup(vp) {
            self.umd.access(f, write);
            if !instr {
                self.now += self.cfg.dram_access_ns;
            }
            return Step::Done;
        }
        self.walk(vp, write, instr, kernel_copy, t, cursor)
    }

    #[inline(never)]
    fn walk(
        &mut self,
        vp: u64,
        write: bool,
        instr: bool,
        kernel_copy: bool,
        t: usize,
        cursor: usize,
    ) -> Step {
        self.now += self.cfg.page_walk_ns;
        let atomic = kernel_copy && self.cfg.atomic_kernel_copies;
        let mut lpn = self.page_table[vp as usize];
        let fault = if lpn == NONE {
            // First use: the OS takes the next logical page, in an ordinary page fault or,
            // for a page-cache page, inside the system call (no exception).
            if kernel_copy {
                self.stats.kernel_allocs += 1;
                self.now += self.cfg.os_fault_ns;
            } else {
                self.stats.os_faults += 1;
                self.now += self.cfg.exception_ns + self.cfg.os_fault_ns;
            }
            lpn = self.allocate();
            self.page_table[vp as usize] = lpn;
            let f = self.umd.fault(lpn, self.now, true);
            self.evict(&f);
            Some(f)
        } else {
            match self.umd.walk(lpn) {
                Walk::Dram { frame, ready_ns } if ready_ns <= self.now => {
                    return self.fill(vp, frame, write, instr);
                }
                Walk::Dram { frame, ready_ns } => {
                    // Filled by an earlier fault that is not done yet.
                    self.stats.fault_waits += 1;
                    let remaining = ready_ns - self.now;
                    let d = Decision {
                        estimate: remaining,
                        done: ready_ns,
                        first: false,
                        atomic,
                    };
                    return self.decide(d, t, cursor, vp, frame, write, instr);
                }
                Walk::Flash => {
                    let f = self.umd.fault(lpn, self.now, false);
                    self.evict(&f);
                    Some(f)
                }
                Walk::Unmapped => unreachable!("the OS maps a page before the device forgets it"),
            }
        };
        let f = fault.expect("set above");
        if !f.flash_work {
            return self.fill(vp, f.frame, write, instr);
        }
        self.stats.internal_faults += 1;
        self.stats.gc_runs_in_faults += f.gc_runs;
        if f.gc_runs > 0 {
            self.stats.gc_fault_ns += f.done_ns - self.now;
        }
        self.stats
            .service
            .push((f.estimate_ns, f.done_ns - self.now));
        let d = Decision {
            estimate: f.estimate_ns,
            done: f.done_ns,
            first: true,
            atomic,
        };
        self.decide(d, t, cursor, vp, f.frame, write, instr)
    }

    /// EPF (block for the estimate) or stall (until done), by the policy.
    #[allow(clippy::too_many_arguments)]
    fn decide(
        &mut self,
        d: Decision,
        t: usize,
        cursor: usize,
        vp: u64,
        frame: u32,
        write: bool,
        instr: bool,
    ) -> Step {
        if d.atomic && d.first {
            self.stats.atomic_faults += 1;
        }
        if !d.atomic && !self.nonpreemptible(t, cursor) && self.policy.raise(&self.view(d.estimate))
        {
            if d.first {
                self.stats.epf_raised += 1;
            } else {
                self.stats.epf_reraised += 1;
            }
            if !self.ready.is_empty() {
                self.stats.epf_with_ready += 1;
            }
            self.now += self.cfg.exception_ns;
            // The OS sleeps on a timer set to the estimate with the task's slack.
            return Step::Blocked(self.now + d.estimate + self.cfg.timer_slack_ns);
        }
        self.stats.stall_ns += d.done.saturating_sub(self.now);
        self.now = self.now.max(d.done);
        self.fill(vp, frame, write, instr)
    }

    /// The fault as the policy sees it: the estimate, what other threads gain and what
    /// signalling costs given who is ready now.
    fn view(&self, estimate_ns: u64) -> FaultView {
        let c = &self.cfg;
        let sleep_ns = estimate_ns + c.timer_slack_ns;
        let end = self.now + c.exception_ns + sleep_ns;
        let (gain_ns, switches) = if !self.ready.is_empty() {
            (sleep_ns, 2 * c.context_switch_ns)
        } else {
            let gain = match self.blocked.peek() {
                Some(&Reverse((t, _))) => end.saturating_sub(t.max(self.now)),
                None => 0,
            };
            (gain, 2 * c.idle_switch_ns + c.wakeup_ns)
        };
        FaultView {
            estimate_ns,
            gain_ns,
            cost_ns: 2 * c.exception_ns + switches + c.page_walk_ns,
        }
    }

    fn fill(&mut self, vp: u64, frame: u32, write: bool, instr: bool) -> Step {
        let tlb = if instr {
            &mut self.itlb
        } else {
            &mut self.dtlb
        };
        tlb.fill(vp, frame);
        self.umd.access(frame, write);
        if !instr {
            self.now += self.cfg.dram_access_ns;
        }
        Step::Done
    }

    /// A disk's DMA fills page `page` of `process` whole (readahead): readahead allocates
    /// it inside `read()` (the allocation's cost, no exception) and the device takes it
    /// into a frame without a flash read.
    fn dma_fill(&mut self, process: usize, page: u32) {
        let vp = self.data_base[process] + page as u64;
        let mut lpn = self.page_table[vp as usize];
        if lpn == NONE {
            self.stats.kernel_allocs += 1;
            self.now += self.cfg.os_fault_ns;
            lpn = self.allocate();
            self.page_table[vp as usize] = lpn;
        }
        let f = self.umd.fill_whole(lpn, self.now);
        self.evict(&f);
    }

    fn evict(&mut self, f: &Fault) {
        if f.evicted.is_some() {
            self.itlb.invalidate_frame(f.frame);
            self.dtlb.invalidate_frame(f.frame);
        }
    }
}
