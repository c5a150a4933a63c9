//! Where a rising function crosses a value, to the float: the neighbouring floats `lo < hi`
//! with `f(lo) < target ≤ f(hi)`. A bisection of `[0, xmax]` down to neighbours ends on that
//! pair, and for an `f` that never decreases the pair is unique, so any search that finds
//! it gives the bisection's bits. This one needs a few evaluations near a good guess where
//! the bisection needs about fifty-five (docs/tiering.md, *What is modelled*).

/// A secant step shorter than this, relative, has converged.
const CONVERGED: f64 = 1.0 / (1u64 << 30) as f64;
/// How far past a converged secant the probe goes, relative (2⁻⁵⁰: 4 to 8 units in the last place).
const NUDGE: f64 = 1.0 / (1u64 << 50) as f64;

/// Ends `a < b` with `f(a) < target ≤ f(b)`, and `f − target` at each.
struct Bracket {
    a: (f64, f64),
    b: (f64, f64),
}

impl Bracket {
    /// Narrow the bracket to `x` (inside it) where `f − target` is `d`; true if `a` moved.
    #[inline]
    fn take(&mut self, x: f64, d: f64) -> bool {
        if d < 0.0 {
            self.a = (x, d);
            true
        } else {
            self.b = (x, d);
            false
        }
    }

    fn mid(&self) -> f64 {
        0.5 * (self.a.0 + self.b.0)
    }

    /// The neighbours, once no float lies between the ends.
    fn closed(&self) -> Option<(f64, f64)> {
        let mid = self.mid();
        (mid == self.a.0 || mid == self.b.0).then_some((self.a.0, self.b.0))
    }

    fn inside(&self, x: f64) -> bool {
        x > self.a.0 && x < self.b.0
    }

    fn width(&self) -> f64 {
        self.b.0 - self.a.0
    }
}

/// The neighbouring floats `lo < hi` in `[0, xmax]` with `f(lo) < target ≤ f(hi)` (`f(0)` is
/// 0, `f(xmax)` = `at_xmax` > `target`), for an `f(x) = x · L(x)` that never decreases.
///
/// From `guess`, one step of `x ← target / L(x)` (for a rising L, the other side of the
/// answer); then secant steps through the last two points, inside the bracket, with a
/// probe a few units in the last place past a secant step that has converged, and a
/// bisection step after two steps in a row that did not halve the bracket. `None` if it
/// has not closed in 300 steps (a non-finite value, say).
pub(super) fn neighbours_below(
    f: &mut impl FnMut(f64) -> f64,
    target: f64,
    xmax: f64,
    at_xmax: f64,
    guess: f64,
) -> Option<(f64, f64)> {
    let mut k = Bracket {
        a: (0.0, -target),
        b: (xmax, at_xmax - target),
    };
    // The last two points evaluated, (x, f(x) − target), for the secant: at first the ends.
    let mut last = [k.a, k.b];
    if k.inside(guess) {
        let d = f(guess) - target;
        let guess_is_a = k.take(guess, d);
        last = [if guess_is_a { k.b } else { k.a }, (guess, d)];
        // x ← target / L(x): for a rising L, the other side of the answer.
        let x = target / ((d + target) / guess);
        if k.inside(x) {
            let dx = f(x) - target;
            k.take(x, dx);
            last = [(guess, d), (x, dx)];
        }
    }
    let mut width = k.width();
    // Steps in a row that did not halve the bracket: after two, a bisection step.
    let mut slow = 0;
    for _ in 0..300 {
        if let Some(pair) = k.closed() {
            return Some(pair);
        }
        let [(x0, d0), (x1, d1)] = last;
        let secant = x1 - d1 * (x1 - x0) / (d1 - d0);
        let use_secant = slow < 2 && k.inside(secant);
        let c = if use_secant { secant } else { k.mid() };
        let dc = f(c) - target;
        let moved_a = k.take(c, dc);
        last = [(x1, d1), (c, dc)];
        // A secant step this short lands within a few units in the last place of the
        // answer: a probe that far past it, toward the other end, closes the bracket.
        if use_secant && (c - x1).abs() < c * CONVERGED {
            let p = if moved_a {
                c + c * NUDGE
            } else {
                c - c * NUDGE
            };
            if k.inside(p) {
                k.take(p, f(p) - target);
            }
        }
        if k.width() > 0.5 * width && slow < 2 {
            slow += 1;
        } else {
            slow = 0;
            width = k.width();
        }
    }
    None
}

/// The bisection [`neighbours_below`] stands in for: 64 halvings of `[0, xmax]`, keeping
/// `f(lo) < target ≤ f(hi)`; the bracket it ends on.
#[cfg(test)]
pub(super) fn bisect(f: &mut impl FnMut(f64) -> f64, target: f64, xmax: f64) -> (f64, f64) {
    let (mut lo, mut hi) = (0.0, xmax);
    for _ in 0..64 {
        let mid = 0.5 * (lo + hi);
        if f(mid) < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Latency rising from flat to steep (a queue): the pair of the bisection, from any
        /// guess, in far fewer evaluations.
        #[test]
        fn finds_the_bisections_pair(
            target_share in 0.001f64..0.999,
            steep in 0.0f64..50.0,
            guess_share in 0.0f64..3.0,
        ) {
            let xmax = 100.0;
            let lat = |x: f64| 80.0 * (1.0 + steep * (x / 101.0).powi(2) / (1.0 - x / 101.0));
            let top = xmax * lat(xmax);
            let target = target_share * top;
            let want = bisect(&mut |x| x * lat(x), target, xmax);
            let mut evals = 0;
            let mut f = |x: f64| {
                evals += 1;
                x * lat(x)
            };
            let got = neighbours_below(&mut f, target, xmax, top, target_share * xmax * guess_share);
            proptest::prop_assert_eq!(got, Some(want));
            // Never much past the bisection's 64, from any guess.
            proptest::prop_assert!(evals <= 48, "{} evaluations", evals);
        }
    }

    /// From a guess of the answer's latency (a fixed point's iterate near its end), a few
    /// evaluations on average over loads from light to near saturation.
    #[test]
    fn a_good_guess_closes_in_a_few_evaluations() {
        let (mut total, mut cases) = (0, 0);
        for steep in [0.0, 0.5, 5.0, 40.0] {
            let lat = |x: f64| 80.0 * (1.0 + steep * (x / 101.0).powi(2) / (1.0 - x / 101.0));
            let xmax = 100.0;
            let top = xmax * lat(xmax);
            for i in 1..100 {
                let target = top * i as f64 / 100.0;
                let (lo, hi) = bisect(&mut |x| x * lat(x), target, xmax);
                let near = lat(0.5 * (lo + hi)) * (1.0 + 1e-9);
                let mut evals = 0;
                let mut f = |x: f64| {
                    evals += 1;
                    x * lat(x)
                };
                let got = neighbours_below(&mut f, target, xmax, top, target / near);
                assert_eq!(got, Some((lo, hi)));
                total += evals;
                cases += 1;
            }
        }
        let mean = total as f64 / cases as f64;
        assert!(mean < 8.0, "{mean} evaluations on average");
    }
}
