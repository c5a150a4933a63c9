//! Device energy: static (idle) power over the whole time plus, per direction, the power above
//! idle scaled by media utilisation (busy unit-time over available unit-time).

use serde::Serialize;

use super::spec::PowerSpec;

#[derive(Debug, Clone, Copy, Serialize)]
pub struct EnergyReport {
    /// Device energy over the run, J.
    pub energy_j: f64,
    /// Energy above the idle device, J (how the storage study measured it, minus host CPU).
    pub energy_above_idle_j: f64,
    /// Mean device power, W.
    pub avg_power_w: f64,
    /// Media utilisation in [0, 1] (read + write).
    pub utilization: f64,
}

impl EnergyReport {
    /// Energy over `elapsed_ns` with the given busy unit-time per direction and unit count.
    pub fn compute(
        p: &PowerSpec,
        elapsed_ns: f64,
        read_busy_ns: f64,
        write_busy_ns: f64,
        units: usize,
    ) -> EnergyReport {
        let capacity_ns = elapsed_ns * units as f64;
        let (ur, uw) = if capacity_ns > 0.0 {
            (
                (read_busy_ns / capacity_ns).min(1.0),
                (write_busy_ns / capacity_ns).min(1.0),
            )
        } else {
            (0.0, 0.0)
        };
        let dynamic_w = ur * (p.read_active_w - p.idle_w) + uw * (p.write_active_w - p.idle_w);
        let seconds = elapsed_ns * 1e-9;
        EnergyReport {
            energy_j: (p.idle_w + dynamic_w) * seconds,
            energy_above_idle_j: dynamic_w * seconds,
            avg_power_w: p.idle_w + dynamic_w,
            utilization: (ur + uw).min(1.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_device_spends_idle_power_only() {
        let p = PowerSpec {
            idle_w: 5.0,
            read_active_w: 14.0,
            write_active_w: 14.0,
        };
        let e = EnergyReport::compute(&p, 2e9, 0.0, 0.0, 4);
        assert!((e.energy_j - 10.0).abs() < 1e-12);
        assert_eq!(e.energy_above_idle_j, 0.0);
    }

    #[test]
    fn saturated_device_spends_active_power() {
        let p = PowerSpec {
            idle_w: 5.0,
            read_active_w: 14.0,
            write_active_w: 12.0,
        };
        let e = EnergyReport::compute(&p, 1e9, 0.0, 4e9, 4);
        assert!((e.avg_power_w - 12.0).abs() < 1e-12);
        assert!((e.energy_above_idle_j - 7.0).abs() < 1e-12);
    }
}
