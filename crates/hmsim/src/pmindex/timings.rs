//! Timed repeats shared by points that time the same native run. A point's host throughput
//! (`throughput_mops`) times the workload on one real thread without the model, so it does
//! not depend on what only the model sees: the simulated threads, the DIMMs, the caches. A
//! study's Load at 1, 2, 4, 8 and 16 simulated threads runs one native program five times
//! over, three repeats each. The first point to time a repeat keeps its timing here; a
//! later point asking for the same repeat of the same native run takes it (the same
//! measurement of the same program, as if the rows had been measured together).
//!
//! Process-wide, so every worker thread of a sweep shares it; bounded to the latest
//! [`KEPT`] runs. Two workers timing the same repeat at once each keep their own timing.

use std::sync::Mutex;

/// Native runs whose timings are kept.
const KEPT: usize = 64;

/// (what makes the native run, its repeats' wall-clock throughputs in order), newest last.
static TIMINGS: Mutex<Vec<(String, Vec<f64>)>> = Mutex::new(Vec::new());

#[cfg(test)]
thread_local! {
    static OFF: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Time every repeat on this thread, sharing none (tests that count what a repeat runs).
#[cfg(test)]
pub(crate) fn off_on_this_thread() {
    OFF.with(|o| o.set(true));
}

/// Throughput of repeat `repeat` (0-based) of the native run `key`: the kept timing if a
/// point timed it already, else `time()`'s, kept for the next point when it is the run's
/// next repeat.
pub(crate) fn repeat(
    key: &str,
    repeat: usize,
    time: impl FnOnce() -> Result<f64, String>,
) -> Result<f64, String> {
    #[cfg(test)]
    if OFF.with(|o| o.get()) {
        return time();
    }
    if let Some(t) = kept(key, repeat) {
        return Ok(t);
    }
    let t = time()?;
    let mut all = TIMINGS.lock().unwrap_or_else(|e| e.into_inner());
    match all.iter().position(|(k, _)| k == key) {
        Some(i) => {
            let (k, mut ts) = all.remove(i);
            if ts.len() == repeat {
                ts.push(t);
            }
            all.push((k, ts));
        }
        None if repeat == 0 => {
            if all.len() >= KEPT {
                all.remove(0);
            }
            all.push((key.to_string(), vec![t]));
        }
        None => {}
    }
    Ok(t)
}

fn kept(key: &str, repeat: usize) -> Option<f64> {
    let all = TIMINGS.lock().unwrap_or_else(|e| e.into_inner());
    all.iter()
        .find(|(k, _)| k == key)
        .and_then(|(_, ts)| ts.get(repeat).copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeat_is_timed_once_per_native_run_and_in_order() {
        let key = "timings-test|a";
        let mut timed = 0;
        let mut t = |v: f64| {
            timed += 1;
            Ok(v)
        };
        assert_eq!(repeat(key, 0, || t(1.0)), Ok(1.0));
        assert_eq!(repeat(key, 1, || t(2.0)), Ok(2.0));
        // Another point of the same native run takes both, and times its third.
        assert_eq!(repeat(key, 0, || t(9.0)), Ok(1.0));
        assert_eq!(repeat(key, 1, || t(9.0)), Ok(2.0));
        assert_eq!(repeat(key, 2, || t(3.0)), Ok(3.0));
        assert_eq!(timed, 3);
        // Another run times its own; a repeat out of order is not kept.
        assert_eq!(repeat("timings-test|b", 1, || Ok(5.0)), Ok(5.0));
        assert_eq!(repeat("timings-test|b", 0, || Ok(4.0)), Ok(4.0));
        assert_eq!(repeat("timings-test|b", 1, || Ok(6.0)), Ok(6.0));
        assert_eq!(repeat("timings-test|b", 1, || Ok(7.0)), Ok(6.0));
        // A failed timing keeps nothing.
        assert!(repeat("timings-test|c", 0, || Err("no".into())).is_err());
        assert_eq!(repeat("timings-test|c", 0, || Ok(8.0)), Ok(8.0));
    }

    #[test]
    fn the_oldest_run_goes_when_the_store_is_full() {
        for i in 0..=KEPT {
            repeat(&format!("timings-full|{i}"), 0, || Ok(i as f64)).unwrap();
        }
        // Other tests share the store: the newest KEPT survive whatever they add.
        assert_eq!(kept(&format!("timings-full|{KEPT}"), 0), Some(KEPT as f64));
        assert_eq!(kept("timings-full|0", 0), None);
    }
}
