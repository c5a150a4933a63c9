//! The experiment loop every module's run goes through. A module builds its [`Experiment`]
//! from the configuration (reading files, resolving devices, checking what can only be
//! checked then) and lists its points: policies × intensities, policies, crash modes, a
//! measurement and its timed repeats. The skeleton runs the points in order, reports them as
//! progress, runs a point again when the module asks for a longer run of it, and hands the
//! gathered output back to the module, which adds what is drawn from all points (headline
//! metrics, tables across points).

use crate::error::RunError;

use super::ctx::Ctx;
use super::output::Output;
use crate::columns::ResultRow;

/// What became of one run of a point.
pub enum Step<P> {
    /// The point is done: its rows, tables and warnings are in the output.
    Done,
    /// Run the point again as `P` instead (a longer run of a point that has not settled);
    /// nothing of this run was kept.
    Again(P),
}

/// A module's experiment: its grid of points, run one by one by [`run`].
pub trait Experiment {
    /// One point of the grid.
    type Point;
    /// One row of `results.csv`.
    type Row: ResultRow;

    /// What progress calls the points (`"runs"`, `"policies"`, `"crash modes"`).
    fn unit(&self) -> &'static str;

    /// The points, in the order their rows appear.
    fn points(&self) -> Vec<Self::Point>;

    /// Run `point`, adding its rows, tables and warnings to `out`.
    fn run_point(
        &mut self,
        point: Self::Point,
        ctx: &Ctx,
        out: &mut Output<Self::Row>,
    ) -> Result<Step<Self::Point>, RunError>;

    /// The output of every point, completed with what is drawn from all of them.
    fn finish(self, out: Output<Self::Row>) -> Result<Output<Self::Row>, RunError>
    where
        Self: Sized,
    {
        Ok(out)
    }
}

/// Run every point of `experiment`, reporting each one done to the run's progress.
pub(super) fn run<E: Experiment>(mut experiment: E, ctx: &Ctx) -> Result<Output<E::Row>, RunError> {
    let points = experiment.points();
    ctx.progress().start(points.len() as u64, experiment.unit());
    let mut out = Output::new(Vec::new());
    for point in points {
        let mut point = point;
        while let Step::Again(longer) = experiment.run_point(point, ctx, &mut out)? {
            point = longer;
        }
        ctx.progress().advance(1);
    }
    experiment.finish(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Catalog;
    use crate::progress::Log;
    use crate::scenario::Header;

    crate::result_row! {
        /// One point's row.
        pub(super) struct R {
            point: u64 ["", "the point"],
            length: u64 ["", "how long it ran"],
        }
    }

    /// Points 1, 2, 3; a point runs at length 1, 2, 4, … until the length reaches it.
    struct Doubling {
        runs: Vec<(u64, u64)>,
    }

    impl Experiment for Doubling {
        type Point = (u64, u64);
        type Row = R;
        fn unit(&self) -> &'static str {
            "points"
        }
        fn points(&self) -> Vec<(u64, u64)> {
            vec![(1, 1), (2, 1), (3, 1)]
        }
        fn run_point(
            &mut self,
            (point, length): (u64, u64),
            _ctx: &Ctx,
            out: &mut Output<R>,
        ) -> Result<Step<(u64, u64)>, RunError> {
            self.runs.push((point, length));
            if length < point {
                return Ok(Step::Again((point, 2 * length)));
            }
            out.rows.push(R { point, length });
            Ok(Step::Done)
        }
        fn finish(self, mut out: Output<R>) -> Result<Output<R>, RunError> {
            out.headline.insert("runs".into(), self.runs.len().into());
            Ok(out)
        }
    }

    /// A point asked to run again runs longer in its place: one row and one progress step
    /// per point, every run seen by the experiment.
    #[test]
    fn a_point_run_again_counts_once_and_keeps_only_its_last_run() {
        let header = Header {
            module: "t".into(),
            seed: 0,
            name: None,
            description: None,
        };
        let catalog = Catalog::builtin();
        let log = Log::default();
        let source = crate::config::Source::parse("", "t.toml").unwrap();
        let ctx = Ctx::new(&source, &header, &catalog).with_progress(&log);
        let out = run(Doubling { runs: Vec::new() }, &ctx).unwrap();
        let rows: Vec<(u64, u64)> = out.rows.iter().map(|r| (r.point, r.length)).collect();
        assert_eq!(rows, vec![(1, 1), (2, 2), (3, 4)]);
        assert_eq!(out.headline["runs"], 6);
        let (starts, done) = log.0.into_inner().unwrap();
        assert_eq!(starts, vec![(3, "points".to_string())]);
        assert_eq!(done, 3);
    }
}
