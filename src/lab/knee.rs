//! `fiox sweep --find-knee --target p99<=2ms`: the highest throughput that meets a latency
//! target, searched over iodepth (for each numjobs value given with `--vary numjobs=...`).
//!
//! For each numjobs value, [`crate::runner::depth_search`] picks the depths to run: it doubles the queue
//! depth from 1 (or walks the `--vary iodepth` list) until the target is missed, then bisects
//! between the last depth that met it and the first that did not (a listed walk is not
//! bisected). The walk also stops once throughput has stopped growing (two steps in a row under
//! 3% more), since a deeper queue then only adds latency. Throughput is IOPS summed over
//! the point's jobs and directions; latency is the worst of them. The knee is the point with
//! the most throughput among those meeting the target; the throughput–latency curve is charted
//! with the target line and the knee marked.

use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use fiox_charts::{Axis as ChartAxis, Chart, HLine, LineChart, Mark, Point, Scale, Series, Unit};
use serde_json::json;

use crate::lab::axis::Axis;
use crate::lab::base::Base;
use crate::lab::charts::Figure;
use crate::lab::outputs::{fmt_bw, fmt_count, fmt_ns, Outputs};
use crate::lab::points;
use crate::lab::results::Run;
use crate::lab::runner::{Outcome, Runner, Settings};
use crate::runner::depth_search::{DepthSearch, End, Probe};
use crate::serve::figure::{y_axis, Kind};

/// A latency limit on one completion-latency figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// `None` for the mean, else the percentile.
    pub percentile: Option<f64>,
    pub limit_ns: f64,
    pub text: String,
}

impl Target {
    /// `p99<=2ms`, `p99.9<=10ms`, `mean<=500us`.
    pub fn parse(s: &str) -> Result<Target> {
        let bad = |why: &str| anyhow::anyhow!("--target '{s}': {why}; write e.g. p99<=2ms, p99.9<=10ms or mean<=500us");
        let (metric, limit) = s.split_once("<=").or_else(|| s.split_once('<')).ok_or_else(|| bad("no '<='"))?;
        let metric = metric.trim().to_ascii_lowercase();
        let percentile = match metric.as_str() {
            "mean" | "avg" => None,
            m => {
                let p: f64 =
                    m.strip_prefix('p').and_then(|p| p.parse().ok()).ok_or_else(|| bad("unknown latency figure"))?;
                if !(p > 0.0 && p < 100.0) {
                    return Err(bad("a percentile lies between 0 and 100"));
                }
                Some(p)
            }
        };
        let limit = limit.trim();
        let split =
            limit.find(|c: char| !(c.is_ascii_digit() || c == '.')).ok_or_else(|| bad("the limit needs a unit"))?;
        let (num, unit) = limit.split_at(split);
        let num: f64 = num.parse().map_err(|_| bad("the limit is not a number"))?;
        let mult = match unit.trim() {
            "ns" => 1.0,
            "us" | "µs" | "usec" => 1e3,
            "ms" | "msec" => 1e6,
            "s" | "sec" => 1e9,
            _ => return Err(bad("unknown unit (ns, us, ms, s)")),
        };
        if num <= 0.0 {
            return Err(bad("the limit must be above 0"));
        }
        Ok(Target { percentile, limit_ns: num * mult, text: s.trim().to_string() })
    }

    pub fn name(&self) -> String {
        match self.percentile {
            None => "clat mean".into(),
            Some(p) => format!("clat p{}", fiox_charts::scale::sig3(p)),
        }
    }

    /// The worst of the run's series for this figure, averaged over runs; `None` without data.
    fn latency(&self, runs: &[Run]) -> Option<f64> {
        let per_run: Vec<f64> = runs
            .iter()
            .filter_map(|r| {
                r.jobs
                    .iter()
                    .filter_map(|j| match self.percentile {
                        None => Some(j.fig.clat_mean),
                        Some(p) => j.fig.percentile(p),
                    })
                    .reduce(f64::max)
            })
            .collect();
        (!per_run.is_empty()).then(|| fiox_stats::runs::mean(&per_run))
    }
}

/// IOPS summed over the run's series, averaged over runs.
fn throughput(runs: &[Run]) -> (f64, f64) {
    let iops: Vec<f64> = runs.iter().map(|r| r.jobs.iter().map(|j| j.fig.iops).sum()).collect();
    let bw: Vec<f64> = runs.iter().map(|r| r.jobs.iter().map(|j| j.fig.bw).sum()).collect();
    (fiox_stats::runs::mean(&iops), fiox_stats::runs::mean(&bw))
}

/// One measured point of the search.
struct Measured {
    numjobs: Option<u64>,
    iodepth: u32,
    iops: f64,
    bw: f64,
    latency: f64,
    met: bool,
}

/// Searches each numjobs value's iodepth for the most throughput within `target`, running
/// points through the runner as `sweep` does, and writes the results folder with the knee.
pub fn run(base: &Base, settings: &Settings, axes: Vec<Axis>, target: Target, max_iodepth: u32) -> Result<ExitCode> {
    let ctx = crate::plan::machine_ctx();
    let (numjobs, depths) = swept(&axes, &ctx)?;
    let doubling = depths.is_none();
    // A listed depth beyond u32 fails the planner's check below, so saturating it here never
    // reaches a run.
    let search = match &depths {
        Some(list) => DepthSearch::over(list.iter().map(|&d| u32::try_from(d).unwrap_or(u32::MAX)).collect()),
        None => DepthSearch::doubling(max_iodepth),
    };
    let depths: Vec<u64> = depths.unwrap_or_else(|| search.walk().iter().map(|&d| u64::from(d)).collect());
    let def = |n: &str| fiox_options::table::lookup(n).expect("iodepth and numjobs are in the table");
    let mut knee_axes = Vec::new();
    if let Some(nj) = &numjobs {
        knee_axes.push(Axis {
            def: def("numjobs"),
            typed: "numjobs".into(),
            values: nj.iter().map(u64::to_string).collect(),
        });
    }
    knee_axes.push(Axis { def: def("iodepth"), typed: "iodepth".into(), values: Vec::new() });
    let values_of = |nj: Option<u64>, d: u64| -> Vec<String> {
        nj.map(|n| n.to_string()).into_iter().chain([d.to_string()]).collect()
    };
    // Every point the walk may reach is checked before anything runs.
    for nj in numjobs.clone().map(|v| v.into_iter().map(Some).collect()).unwrap_or(vec![None]) {
        for &d in &depths {
            base.prepare(&knee_axes, &values_of(nj, d))?;
        }
    }
    let what = vec![
        ("knee", json!(target.text)),
        ("numjobs", json!(numjobs)),
        ("iodepth", if doubling { json!(format!("1..{max_iodepth}:x2")) } else { json!(depths) }),
    ];
    let mut runner = Runner::open(settings, base, what)?;
    let mut probes: Vec<Measured> = Vec::new();
    let mut points: Vec<Vec<String>> = Vec::new();
    let mut interrupted = false;
    let nj_list: Vec<Option<u64>> = numjobs.clone().map(|v| v.into_iter().map(Some).collect()).unwrap_or(vec![None]);
    // Runs a point (all its repeats) unless it was measured already; `None` when interrupted.
    let mut measure =
        |nj: Option<u64>, d: u32, runner: &mut Runner, probes: &mut Vec<Measured>| -> Result<Option<Probe>> {
            if let Some(p) = probes.iter().find(|p| p.numjobs == nj && p.iodepth == d) {
                return Ok(Some(Probe { depth: d, met: p.met, iops: p.iops }));
            }
            let values = values_of(nj, u64::from(d));
            let prepared = base.prepare(&knee_axes, &values)?;
            let id = points::ids(&knee_axes, std::slice::from_ref(&values)).remove(0);
            runner.add_point(&knee_axes, &values, &id)?;
            if let Outcome::Interrupted = runner.run_repeats(&id, &prepared, &points::describe(&knee_axes, &values))? {
                return Ok(None);
            }
            points.push(values);
            let runs = runner.load_runs(&id);
            let Some(latency) = target.latency(&runs) else {
                // The point failed: treat it as missing the target, so the search stays below it.
                return Ok(Some(Probe { depth: d, met: false, iops: 0.0 }));
            };
            let (iops, bw) = throughput(&runs);
            let met = latency <= target.limit_ns;
            println!(
                "    {}iodepth={d}: {} IOPS, {} = {} {} target {}",
                nj.map(|n| format!("numjobs={n} ")).unwrap_or_default(),
                fmt_count(iops),
                target.name(),
                fmt_ns(latency),
                if met { "meets" } else { "misses" },
                target.text
            );
            probes.push(Measured { numjobs: nj, iodepth: d, iops, bw, latency, met });
            Ok(Some(Probe { depth: d, met, iops }))
        };
    'search: for &nj in &nj_list {
        let mut search = search.clone();
        let mut last: Option<Probe> = None;
        while let Some(d) = search.next(last.as_ref()) {
            match measure(nj, d, &mut runner, &mut probes)? {
                Some(p) => last = Some(p),
                None => {
                    interrupted = true;
                    break 'search;
                }
            }
        }
        if search.end() == Some(End::Plateau) {
            println!("    throughput stopped growing; deeper queues only add latency");
        }
    }
    let best = probes.iter().filter(|p| p.met).max_by(|a, b| a.iops.total_cmp(&b.iops));
    let headline = headline(best, &probes, &target);
    println!("{headline}");

    // The results folder: the points actually run, ordered numerically on each axis.
    let final_axes = measured_axes(&probes, numjobs.is_some());
    points.sort_by_key(|p| p.iter().map(|v| v.parse::<u64>().unwrap_or(0)).collect::<Vec<_>>());
    points.dedup();
    let ids = points::ids(&final_axes, &points);
    let runs: Vec<Vec<Run>> = ids.iter().map(|id| runner.load_runs(id)).collect();
    let (views, coords) = points::cross_view(&final_axes, &points, &ctx);
    let mut shown = runner.settings(&[]);
    shown.insert(1, ("latency target".into(), target.text.clone()));
    shown.insert(
        2,
        (
            "iodepth search".into(),
            if doubling {
                format!("doubling from 1 up to {max_iodepth}, then bisecting")
            } else {
                format!("{depths:?}")
            },
        ),
    );
    let outputs = Outputs {
        title: format!("fiox sweep --find-knee: {}", target.text),
        columns: final_axes.iter().map(|a| a.typed.clone()).collect(),
        axes: views,
        coords,
        zipped: false,
        labels: points.clone(),
        runs,
        settings: shown,
        extra: vec![curve(&probes, &target, best)],
        headline: vec![headline],
        notes: runner.failures.clone(),
        with_ci: settings.repeat > 1,
    };
    if let Some(code) = runner.conclude(&outputs, interrupted)? {
        return Ok(code);
    }
    Ok(if best.is_some() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// The swept numjobs and iodepth values (depths sorted), the only axes `--find-knee` takes.
type Swept = (Option<Vec<u64>>, Option<Vec<u64>>);
fn swept(axes: &[Axis], ctx: &fiox_options::Ctx) -> Result<Swept> {
    let mut numjobs: Option<Vec<u64>> = None;
    let mut depths: Option<Vec<u64>> = None;
    for a in axes {
        let nums: Option<Vec<u64>> = a.values.iter().map(|v| a.numeric(v, ctx).map(|x| x as u64)).collect();
        match a.def.name {
            "numjobs" => numjobs = nums,
            "iodepth" => {
                let mut d = nums.context("iodepth values")?;
                d.sort_unstable();
                depths = Some(d);
            }
            other => bail!("sweep: with --find-knee, --vary takes iodepth and numjobs only (not {other})"),
        }
    }
    Ok((numjobs, depths))
}

/// The line that names the knee (or says why there is none).
fn headline(best: Option<&Measured>, probes: &[Measured], target: &Target) -> String {
    match best {
        Some(b) => format!(
            "knee: {}iodepth={}: {} IOPS, {}, {} {} (target {})",
            b.numjobs.map(|n| format!("numjobs={n} ")).unwrap_or_default(),
            b.iodepth,
            fmt_count(b.iops),
            fmt_bw(b.bw),
            target.name(),
            fmt_ns(b.latency),
            target.text
        ),
        None if probes.is_empty() => "knee: nothing was measured".to_string(),
        None => format!("knee: no point meets {} (even the shallowest queue misses it)", target.text),
    }
}

/// The axes of the points actually run, each ordered numerically.
fn measured_axes(probes: &[Measured], with_numjobs: bool) -> Vec<Axis> {
    let def = |n: &str| fiox_options::table::lookup(n).expect("iodepth and numjobs are in the table");
    let mut nj_vals: Vec<u64> = probes.iter().filter_map(|p| p.numjobs).collect();
    nj_vals.sort_unstable();
    nj_vals.dedup();
    let mut d_vals: Vec<u32> = probes.iter().map(|p| p.iodepth).collect();
    d_vals.sort_unstable();
    d_vals.dedup();
    let mut final_axes = Vec::new();
    if with_numjobs {
        final_axes.push(Axis {
            def: def("numjobs"),
            typed: "numjobs".into(),
            values: nj_vals.iter().map(u64::to_string).collect(),
        });
    }
    final_axes.push(Axis {
        def: def("iodepth"),
        typed: "iodepth".into(),
        values: d_vals.iter().map(u32::to_string).collect(),
    });
    final_axes
}

/// The throughput–latency curve: one line per numjobs value, points labelled with their queue
/// depth, the target as a line and the knee marked.
fn curve(probes: &[Measured], target: &Target, best: Option<&Measured>) -> Figure {
    let lat: Vec<f64> = probes.iter().map(|p| p.latency).chain([target.limit_ns]).collect();
    let (y, div) = y_axis(&target.name(), Kind::Nanos, &lat);
    let mut groups: Vec<Option<u64>> = probes.iter().map(|p| p.numjobs).collect();
    groups.sort_unstable();
    groups.dedup();
    let series = groups
        .iter()
        .map(|g| {
            let mut pts: Vec<&Measured> = probes.iter().filter(|p| p.numjobs == *g).collect();
            pts.sort_by_key(|p| p.iodepth);
            Series {
                name: g.map(|n| format!("numjobs={n}")).unwrap_or_else(|| "iodepth search".into()),
                points: pts
                    .iter()
                    .map(|p| Point {
                        x: p.iops,
                        y: p.latency / div,
                        err: None,
                        label: Some(format!("qd{}", p.iodepth)),
                    })
                    .collect(),
                dashed: false,
            }
        })
        .collect();
    let x = ChartAxis { from_zero: true, ..ChartAxis::new("throughput (IOPS)", Scale::Linear, Unit::Number) };
    let marks = best
        .map(|b| Mark {
            x: b.iops,
            y: b.latency / div,
            label: format!("knee: qd{} {} IOPS", b.iodepth, fmt_count(b.iops)),
        })
        .into_iter()
        .collect();
    Figure {
        name: "knee".into(),
        chart: Chart::Line(LineChart {
            title: format!("throughput vs {} (target {})", target.name(), target.text),
            x,
            y: ChartAxis { scale: y.scale, ..y },
            series,
            y2: None,
            hlines: vec![HLine { y: target.limit_ns / div, label: format!("target {}", target.text) }],
            marks,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets() {
        let t = Target::parse("p99<=2ms").unwrap();
        assert_eq!((t.percentile, t.limit_ns), (Some(99.0), 2e6));
        let t = Target::parse("mean<=500us").unwrap();
        assert_eq!((t.percentile, t.limit_ns), (None, 5e5));
        assert_eq!(Target::parse("p99.9<=1.5s").unwrap().limit_ns, 1.5e9);
        for bad in ["p99", "p99<=2", "p101<=1ms", "x<=1ms", "p99<=2parsecs", "p99<=0ms"] {
            let e = Target::parse(bad).unwrap_err().to_string();
            assert!(e.starts_with(&format!("--target '{bad}'")), "{e}");
        }
    }
}
