//! RC thermal model: `C dT/dt = P - (T - T_ambient) / R`, one node (exact exponential steps)
//! or two nodes (die and heatsink, RK4). Throttle levels cap bandwidth (and so dynamic
//! power) above NVMe TMT-style thresholds, with hysteresis; the device stops at `stop_c`.

use serde::Serialize;

use super::spec::ThermalSpec;

/// Conditions of one thermal run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ThermalRun {
    pub ambient_c: f64,
    /// Device temperature at t = 0 (not necessarily ambient: see docs/devices.md, thermal
    /// calibration).
    pub initial_c: f64,
    pub fan: bool,
    pub duration_s: f64,
    pub step_s: f64,
    /// Device power when idle and when running the workload unthrottled, W.
    pub idle_w: f64,
    pub active_w: f64,
}

/// One sample of the timeline.
#[derive(Debug, Clone, Copy, Serialize)]
pub(crate) struct ThermalSample {
    pub time_s: f64,
    pub temperature_c: f64,
    /// Fraction of the workload's bandwidth allowed (1 unthrottled, 0 stopped).
    pub bandwidth_fraction: f64,
    pub power_w: f64,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct ThermalResult {
    pub samples: Vec<ThermalSample>,
    /// When the device reached `stop_c`, s; `None` if it never did.
    pub stop_time_s: Option<f64>,
    /// Steady-state temperature unthrottled (T_a + P R), °C.
    pub steady_state_c: f64,
    pub max_temperature_c: f64,
}

/// Bandwidth fraction at throttle level `level` (0 = none).
fn fraction(spec: &ThermalSpec, level: usize) -> f64 {
    if level == 0 {
        1.0
    } else {
        spec.throttle_bandwidth_fraction[level - 1]
    }
}

/// Next throttle level from the current one and the temperature (with hysteresis).
fn next_level(spec: &ThermalSpec, level: usize, t_c: f64) -> usize {
    let mut l = level;
    while l < spec.throttle_c.len() && t_c >= spec.throttle_c[l] {
        l += 1;
    }
    while l > 0 && t_c < spec.throttle_c[l - 1] - spec.hysteresis_k {
        l -= 1;
    }
    l
}

pub(crate) fn simulate(spec: &ThermalSpec, run: &ThermalRun) -> ThermalResult {
    let r = if run.fan {
        spec.r_fan_k_per_w
    } else {
        spec.r_passive_k_per_w
    };
    let two_node = spec.r_die_k_per_w.zip(spec.c_die_j_per_k);
    let mut t_sink = run.initial_c;
    let mut t_die = run.initial_c;
    let mut level = 0usize;
    let mut stopped_at: Option<f64> = None;
    let steps = (run.duration_s / run.step_s).ceil() as usize;
    let mut samples = Vec::with_capacity(steps + 1);
    let mut max_t = run.initial_c;
    let power = |level: usize, stopped: bool| {
        if stopped {
            run.idle_w
        } else {
            run.idle_w + (run.active_w - run.idle_w) * fraction(spec, level)
        }
    };
    let mut time = 0.0;
    samples.push(ThermalSample {
        time_s: 0.0,
        temperature_c: run.initial_c,
        bandwidth_fraction: 1.0,
        power_w: power(0, false),
    });
    for _ in 0..steps {
        let dt = run.step_s.min(run.duration_s - time);
        let p = power(level, stopped_at.is_some());
        match two_node {
            None => {
                let tau = r * spec.c_j_per_k;
                let t_inf = run.ambient_c + p * r;
                if let (None, Some(stop)) = (stopped_at, spec.stop_c) {
                    // Exact crossing time inside this step.
                    if t_sink < stop && t_inf > stop {
                        let to_stop = tau * ((t_inf - t_sink) / (t_inf - stop)).ln();
                        if to_stop <= dt {
                            stopped_at = Some(time + to_stop);
                        }
                    }
                }
                t_sink = t_inf + (t_sink - t_inf) * (-dt / tau).exp();
                t_die = t_sink;
            }
            Some((r_die, c_die)) => {
                let deriv = |td: f64, ts: f64| {
                    let q_ds = (td - ts) / r_die;
                    (
                        (p - q_ds) / c_die,
                        (q_ds - (ts - run.ambient_c) / r) / spec.c_j_per_k,
                    )
                };
                let h_max = 0.1 * (r_die * c_die).min(r * spec.c_j_per_k);
                let n = (dt / h_max).ceil().max(1.0) as usize;
                let h = dt / n as f64;
                for _ in 0..n {
                    let (a1, b1) = deriv(t_die, t_sink);
                    let (a2, b2) = deriv(t_die + 0.5 * h * a1, t_sink + 0.5 * h * b1);
                    let (a3, b3) = deriv(t_die + 0.5 * h * a2, t_sink + 0.5 * h * b2);
                    let (a4, b4) = deriv(t_die + h * a3, t_sink + h * b3);
                    t_die += h / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4);
                    t_sink += h / 6.0 * (b1 + 2.0 * b2 + 2.0 * b3 + b4);
                }
                if let (None, Some(stop)) = (stopped_at, spec.stop_c) {
                    if t_die >= stop {
                        stopped_at = Some(time + dt);
                    }
                }
            }
        }
        time += dt;
        max_t = max_t.max(t_die);
        level = next_level(spec, level, t_die);
        let frac = if stopped_at.is_some() {
            0.0
        } else {
            fraction(spec, level)
        };
        samples.push(ThermalSample {
            time_s: time,
            temperature_c: t_die,
            bandwidth_fraction: frac,
            power_w: power(level, stopped_at.is_some()),
        });
    }
    ThermalResult {
        samples,
        stop_time_s: stopped_at,
        steady_state_c: run.ambient_c + run.active_w * (r + spec.r_die_k_per_w.unwrap_or(0.0)),
        max_temperature_c: max_t,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> ThermalSpec {
        ThermalSpec {
            r_passive_k_per_w: 8.0,
            r_fan_k_per_w: 0.5,
            c_j_per_k: 180.0,
            r_die_k_per_w: None,
            c_die_j_per_k: None,
            throttle_c: vec![],
            throttle_bandwidth_fraction: vec![],
            hysteresis_k: 2.0,
            stop_c: Some(65.0),
        }
    }

    fn run(fan: bool, ambient: f64, initial: f64, duration: f64) -> ThermalRun {
        ThermalRun {
            ambient_c: ambient,
            initial_c: initial,
            fan,
            duration_s: duration,
            step_s: 1.0,
            idle_w: 5.0,
            active_w: 15.0,
        }
    }

    #[test]
    fn fan_steady_state_is_ambient_plus_power_times_resistance() {
        let res = simulate(&spec(), &run(true, 25.0, 25.0, 2000.0));
        let last = res.samples.last().unwrap().temperature_c;
        assert!((last - (25.0 + 15.0 * 0.5)).abs() < 1e-6, "{last}");
        assert!(res.stop_time_s.is_none());
    }

    #[test]
    fn stop_time_matches_the_closed_form() {
        let s = spec();
        let res = simulate(&s, &run(false, 30.0, 32.0, 2000.0));
        let (tau, t_inf): (f64, f64) = (8.0 * 180.0, 30.0 + 15.0 * 8.0);
        let expect = tau * ((t_inf - 32.0) / (t_inf - 65.0)).ln();
        assert!((res.stop_time_s.unwrap() - expect).abs() < 1e-6);
    }

    #[test]
    fn throttling_caps_temperature_with_hysteresis() {
        let mut s = spec();
        s.stop_c = None;
        s.throttle_c = vec![60.0];
        s.throttle_bandwidth_fraction = vec![0.1];
        let mut r = run(false, 30.0, 30.0, 20000.0);
        r.idle_w = 1.0;
        let res = simulate(&s, &r);
        // Unthrottled it would reach 150 C; throttled (2.4 W, 49 C) it cycles just below 60 C.
        assert!(res.max_temperature_c < 61.0, "{}", res.max_temperature_c);
        let late: Vec<f64> = res.samples[res.samples.len() / 2..]
            .iter()
            .map(|x| x.temperature_c)
            .collect();
        let lo = late.iter().cloned().fold(f64::MAX, f64::min);
        assert!(
            lo > 60.0 - s.hysteresis_k - 0.5,
            "hysteresis band left: {lo}"
        );
        assert!(res.samples.iter().any(|x| x.bandwidth_fraction < 1.0));
    }

    #[test]
    fn two_node_settles_at_the_same_steady_state_plus_die_rise() {
        let mut s = spec();
        s.r_die_k_per_w = Some(0.5);
        s.c_die_j_per_k = Some(5.0);
        s.stop_c = None;
        let res = simulate(&s, &run(true, 25.0, 25.0, 3000.0));
        let last = res.samples.last().unwrap().temperature_c;
        assert!((last - (25.0 + 15.0 * 1.0)).abs() < 1e-3, "{last}");
    }
}
