//! Host CPU time of one run: the calling thread's, plus that of the helper threads the run
//! starts (a timing thread, real-thread measurements), which report it here.
//!
//! A run's wall time is a poor measure of its cost when runs share the cores (a sweep's
//! workers, figure drawing beside them): it grows with whatever else runs. Its CPU time
//! does not, so a study sums CPU times to say what its points cost.

use std::cell::Cell;

/// CPU seconds the calling thread has used (`CLOCK_THREAD_CPUTIME_ID`; 0 where the host has
/// no such clock).
pub fn thread_cpu_s() -> f64 {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid out-pointer; CLOCK_THREAD_CPUTIME_ID exists on Linux and macOS.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0 {
            return ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9;
        }
    }
    0.0
}

thread_local! {
    /// CPU seconds helper threads reported to this thread so far.
    static HELPERS_S: Cell<f64> = const { Cell::new(0.0) };
}

/// Count `seconds` of CPU used by helper threads this thread started for its run (call it on
/// the starting thread, after joining them).
pub fn add_helper_cpu_s(seconds: f64) {
    HELPERS_S.with(|h| h.set(h.get() + seconds));
}

/// `f()` in a helper thread, and the CPU seconds that thread spent on it (to hand to
/// [`add_helper_cpu_s`] on the thread that joins it).
pub fn in_helper<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let start = thread_cpu_s();
    let out = f();
    (out, thread_cpu_s() - start)
}

/// `f()` and the host CPU seconds it took: this thread's, plus its helper threads'.
pub fn measured<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let (own, helpers) = (thread_cpu_s(), HELPERS_S.with(Cell::get));
    let out = f();
    let cpu = thread_cpu_s() - own + HELPERS_S.with(Cell::get) - helpers;
    (out, cpu)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spin(iterations: u64) -> u64 {
        (0..iterations).fold(0u64, |a, i| std::hint::black_box(a.wrapping_mul(31) ^ i))
    }

    #[test]
    fn a_busy_loop_uses_cpu_and_sleeping_does_not() {
        let ((), busy) = measured(|| {
            std::hint::black_box(spin(20_000_000));
        });
        let ((), idle) = measured(|| std::thread::sleep(std::time::Duration::from_millis(50)));
        assert!(busy > 0.0, "busy {busy}");
        // Sleeping 50 ms costs (nearly) no CPU: a wall clock would read ≥ 0.05 s.
        assert!(idle < 0.02, "idle {idle}");
    }

    #[test]
    fn helper_threads_count_towards_the_run_that_started_them() {
        let ((), alone) = measured(|| {
            std::thread::scope(|s| {
                s.spawn(|| spin(20_000_000)).join().unwrap();
            });
        });
        let ((), counted) = measured(|| {
            let (_, cpu) =
                std::thread::scope(|s| s.spawn(|| in_helper(|| spin(20_000_000))).join().unwrap());
            add_helper_cpu_s(cpu);
        });
        // The waiting thread itself uses next to nothing; the helper's loop is what counts.
        assert!(alone < counted, "alone {alone}, counted {counted}");
        assert!(counted > 0.0);
    }
}
