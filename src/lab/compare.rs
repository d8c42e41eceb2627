//! `fiox compare A B [...]`: results side by side, per job and direction (and per point for
//! sweeps): IOPS, bandwidth, latency percentiles and CPU, each later side as a ratio to the
//! first. A side is a JSON report, a folder of reports (repeated runs of the same jobs) or a
//! sweep's results folder. With two or more runs on both sides, Welch's t-test says whether a
//! difference is significant at 95%. `--fail-if-slower PCT` exits with status 2 when a later
//! side's IOPS fell, or its mean completion latency rose, by more than PCT percent (and, with
//! repeated runs, significantly): a regression gate for CI.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use serde_json::Value;

use crate::cli::{self, Arg, Syntax};
use crate::lab::cli::{COMPARE, COMPARE_COLUMN};
use crate::lab::outputs::{fmt_bw, fmt_count, fmt_ns};
use crate::lab::results::{self, Dir, Figures, Run};
use fiox_stats::runs as stats;

/// `--help` before the flags.
const HEAD: &str = "\
usage: fiox compare A B [C ...] [--names a,b,...] [--fail-if-slower PCT] [--out DIR]

Compares results per job and direction (per point for sweeps): IOPS, bandwidth, completion
latency mean/p50/p99/p99.9 and CPU, with each side's ratio to A.
  A, B, ...           a JSON report, a folder of reports (repeated runs), or a sweep's folder
";

/// What a row of the comparison is about.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key {
    /// The sweep point (`bs=4k iodepth=8`), empty for plain reports.
    pub point: String,
    pub job: String,
    pub dir: Dir,
}

impl Key {
    fn label(&self) -> String {
        let jd = format!("{} {}", self.job, self.dir.name());
        if self.point.is_empty() {
            jd
        } else {
            format!("{} · {jd}", self.point)
        }
    }
}

/// One side: every key with its runs' figures.
pub struct Side {
    pub name: String,
    pub runs: usize,
    pub keys: Vec<Key>,
    pub samples: BTreeMap<Key, Vec<Figures>>,
}

impl Side {
    fn add(&mut self, point: &str, run: &Run) {
        for j in &run.jobs {
            let k = Key { point: point.to_string(), job: j.job.clone(), dir: j.dir };
            if !self.keys.contains(&k) {
                self.keys.push(k.clone());
            }
            self.samples.entry(k).or_default().push(j.fig.clone());
        }
    }
}

/// One side of a comparison: a sweep's folder (its finished runs, keyed by point), or every
/// report under `path`.
pub fn load_side(path: &Path, name: String) -> Result<Side> {
    let mut side = Side { name, runs: 0, keys: Vec::new(), samples: BTreeMap::new() };
    let state = path.join("sweep.json");
    if state.is_file() {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&state)?)
            .with_context(|| format!("'{}' is damaged", state.display()))?;
        let repeat = v.get("repeat").and_then(Value::as_u64).unwrap_or(1);
        for p in v.get("points").and_then(Value::as_array).into_iter().flatten() {
            let id = p["id"].as_str().unwrap_or_default();
            let label: Vec<String> = p["values"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                .collect();
            for r in 1..=repeat {
                let f = if r == 1 {
                    path.join("points").join(format!("{id}.json"))
                } else {
                    path.join("points").join(format!("{id}.run{r}.json"))
                };
                if let Ok(run) = results::load(&f) {
                    side.add(&label.join(" "), &run);
                    side.runs += 1;
                }
            }
        }
        if side.runs == 0 {
            bail!("compare: the sweep in '{}' has no finished runs", path.display());
        }
        return Ok(side);
    }
    for f in results::files_under(path)? {
        let run = results::load(&f)?;
        side.add("", &run);
        side.runs += 1;
    }
    Ok(side)
}

/// A figure compared: how to get it and which way is better.
struct Measure {
    title: &'static str,
    get: fn(&Figures) -> Option<f64>,
    fmt: fn(f64) -> String,
    higher_is_better: bool,
}

const MEASURES: [Measure; 7] = [
    Measure { title: "IOPS", get: |f| Some(f.iops), fmt: fmt_count, higher_is_better: true },
    Measure { title: "bandwidth", get: |f| Some(f.bw), fmt: fmt_bw, higher_is_better: true },
    Measure { title: "clat mean", get: |f| Some(f.clat_mean), fmt: fmt_ns, higher_is_better: false },
    Measure { title: "clat p50", get: |f| f.percentile(50.0), fmt: fmt_ns, higher_is_better: false },
    Measure { title: "clat p99", get: |f| f.percentile(99.0), fmt: fmt_ns, higher_is_better: false },
    Measure { title: "clat p99.9", get: |f| f.percentile(99.9), fmt: fmt_ns, higher_is_better: false },
    Measure { title: "CPU", get: |f| Some(f.cpu), fmt: |v| format!("{v:.1}%"), higher_is_better: false },
];

/// One compared figure of one key: each side's values, and each later side against the first.
#[derive(Debug, Clone)]
pub struct Line {
    pub measure: &'static str,
    pub means: Vec<Option<f64>>,
    pub cis: Vec<Option<f64>>,
    /// Per later side: B/A, and Welch's verdict when both have repeated runs.
    pub ratios: Vec<Option<f64>>,
    pub significant: Vec<Option<bool>>,
}

/// Compares the sides key by key; keys are matched by name, or by position when no names
/// match at all but both sides have the same number of series.
/// The comparison of one key: how many runs each side has for it, and its lines.
pub struct Block {
    pub key: Key,
    pub runs: Vec<usize>,
    pub lines: Vec<Line>,
}

pub fn compare(sides: &[Side]) -> (Vec<Block>, Vec<String>) {
    let mut notes = Vec::new();
    let base = &sides[0];
    let mut out = Vec::new();
    let matched: Vec<Vec<Option<Key>>> = sides
        .iter()
        .map(|s| {
            let by_name: Vec<Option<Key>> =
                base.keys.iter().map(|k| s.samples.contains_key(k).then(|| k.clone())).collect();
            if by_name.iter().all(Option::is_none) && s.keys.len() == base.keys.len() {
                notes.push(format!("{}: job names differ from {}'s; jobs matched in order", s.name, base.name));
                s.keys.iter().cloned().map(Some).collect()
            } else {
                by_name
            }
        })
        .collect();
    for (ki, key) in base.keys.iter().enumerate() {
        let runs = sides
            .iter()
            .zip(&matched)
            .map(|(s, mk)| mk[ki].as_ref().and_then(|k| s.samples.get(k)).map_or(0, Vec::len))
            .collect();
        let mut lines = Vec::new();
        for m in &MEASURES {
            let values: Vec<Vec<f64>> = sides
                .iter()
                .zip(&matched)
                .map(|(s, mk)| {
                    mk[ki]
                        .as_ref()
                        .and_then(|k| s.samples.get(k))
                        .map(|f| f.iter().filter_map(m.get).collect())
                        .unwrap_or_default()
                })
                .collect();
            let means: Vec<Option<f64>> = values.iter().map(|v| (!v.is_empty()).then(|| stats::mean(v))).collect();
            if means[0].is_none() {
                continue;
            }
            let cis = values.iter().map(|v| stats::ci95(v)).collect();
            let ratios = means[1..]
                .iter()
                .map(|b| match (means[0], b) {
                    (Some(a), Some(b)) if a != 0.0 => Some(b / a),
                    _ => None,
                })
                .collect();
            let significant = values[1..].iter().map(|b| stats::welch(&values[0], b).map(|w| w.significant)).collect();
            lines.push(Line { measure: m.title, means, cis, ratios, significant });
        }
        out.push(Block { key: key.clone(), runs, lines });
    }
    for (si, s) in sides.iter().enumerate().skip(1) {
        let missing = base.keys.iter().enumerate().filter(|(ki, _)| matched[si][*ki].is_none()).count();
        if missing > 0 {
            notes.push(format!("{}: {missing} of {}'s jobs are missing", s.name, base.name));
        }
    }
    (out, notes)
}

/// The rows where a later side is slower than the first by more than `pct` percent.
pub fn regressions(table: &[Block], sides: &[Side], pct: f64) -> Vec<String> {
    let mut out = Vec::new();
    for Block { key, lines, .. } in table {
        for l in lines.iter().filter(|l| l.measure == "IOPS" || l.measure == "clat mean") {
            let higher_better = l.measure == "IOPS";
            for (i, r) in l.ratios.iter().enumerate() {
                let Some(r) = r else { continue };
                let worse = if higher_better { *r < 1.0 - pct / 100.0 } else { *r > 1.0 + pct / 100.0 };
                if worse && l.significant[i] != Some(false) {
                    out.push(format!(
                        "{}: {} {} on {} against {} on {} ({:+.1}%)",
                        key.label(),
                        l.measure,
                        fmt_for(l.measure, l.means[i + 1].unwrap_or(0.0)),
                        sides[i + 1].name,
                        fmt_for(l.measure, l.means[0].unwrap_or(0.0)),
                        sides[0].name,
                        (r - 1.0) * 100.0
                    ));
                }
            }
        }
    }
    out
}

fn fmt_for(measure: &str, v: f64) -> String {
    MEASURES.iter().find(|m| m.title == measure).map(|m| (m.fmt)(v)).unwrap_or_else(|| v.to_string())
}

/// The comparison as a text table, one block per key.
pub fn render(table: &[Block], sides: &[Side]) -> String {
    let mut out = String::new();
    for Block { key, runs, lines } in table {
        let mut head = vec![key.label()];
        for (s, n) in sides.iter().zip(runs) {
            head.push(format!("{} ({n} run{})", s.name, if *n == 1 { "" } else { "s" }));
        }
        for s in &sides[1..] {
            head.push(format!("{}/{}", s.name, sides[0].name));
        }
        let mut rows: Vec<Vec<String>> = vec![head.clone()];
        for l in lines {
            let m = MEASURES.iter().find(|m| m.title == l.measure).expect("a known measure");
            let mut r = vec![format!("  {}", l.measure)];
            for (mean, ci) in l.means.iter().zip(&l.cis) {
                r.push(match (mean, ci) {
                    (Some(v), Some(c)) => format!("{} ± {}", (m.fmt)(*v), (m.fmt)(*c)),
                    (Some(v), None) => (m.fmt)(*v),
                    _ => "-".into(),
                });
            }
            for (ratio, sig) in l.ratios.iter().zip(&l.significant) {
                r.push(match ratio {
                    Some(x) => {
                        let better = if m.higher_is_better { *x > 1.0 } else { *x < 1.0 };
                        let verdict = match sig {
                            Some(true) if (*x - 1.0).abs() > 1e-12 => {
                                if better {
                                    " better (significant)"
                                } else {
                                    " worse (significant)"
                                }
                            }
                            Some(_) => " (not significant)",
                            None => "",
                        };
                        format!("{}x{verdict}", fiox_charts::scale::sig3(*x))
                    }
                    None => "-".into(),
                });
            }
            rows.push(r);
        }
        let widths: Vec<usize> = (0..head.len())
            .map(|c| rows.iter().map(|r| r.get(c).map_or(0, |x| x.chars().count())).max().unwrap_or(0))
            .collect();
        for r in &rows {
            let cells: Vec<String> = r
                .iter()
                .enumerate()
                .map(|(c, x)| {
                    let pad = widths[c].saturating_sub(x.chars().count());
                    if c == 0 {
                        format!("{x}{}", " ".repeat(pad))
                    } else {
                        format!("{}{x}", " ".repeat(pad))
                    }
                })
                .collect();
            out.push_str(cells.join("   ").trim_end());
            out.push('\n');
        }
        out.push('\n');
    }
    out
}

/// Bar charts of the main figures, one group per job (and point), one bar per side, and a
/// page with the table.
fn write_page(dir: &Path, table: &[Block], sides: &[Side], notes: &[String]) -> Result<()> {
    use crate::lab::charts::{bars, Figure};
    use crate::serve::figure::Kind;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create '{}'", dir.display()))?;
    let cats: Vec<String> = table.iter().map(|b| b.key.label()).collect();
    let figures: Vec<Figure> = [
        ("IOPS", Kind::Iops, "iops"),
        ("bandwidth", Kind::BytesPerSec, "bandwidth"),
        ("clat mean", Kind::Nanos, "clat-mean"),
        ("clat p99", Kind::Nanos, "clat-p99"),
    ]
    .into_iter()
    .map(|(measure, kind, file)| {
        let groups = sides
            .iter()
            .enumerate()
            .map(|(si, s)| {
                let v = table
                    .iter()
                    .map(|b| b.lines.iter().find(|l| l.measure == measure).and_then(|l| l.means[si]))
                    .collect();
                (s.name.clone(), v)
            })
            .collect();
        Figure {
            name: file.into(),
            chart: bars(
                format!("{measure}: {}", sides.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(" vs ")),
                &(measure, kind),
                cats.clone(),
                groups,
            ),
        }
    })
    .collect();
    let shown = crate::lab::outputs::write_charts(dir, &figures)?;
    let mut head = vec!["job".to_string(), "figure".to_string()];
    head.extend(sides.iter().map(|s| s.name.clone()));
    head.extend(sides[1..].iter().map(|s| format!("{}/{}", s.name, sides[0].name)));
    let mut rows = Vec::new();
    for b in table {
        for l in &b.lines {
            let m = MEASURES.iter().find(|m| m.title == l.measure).expect("a known measure");
            let mut r = vec![b.key.label(), l.measure.to_string()];
            for (mean, ci) in l.means.iter().zip(&l.cis) {
                r.push(match (mean, ci) {
                    (Some(v), Some(c)) => format!("{} ± {}", (m.fmt)(*v), (m.fmt)(*c)),
                    (Some(v), None) => (m.fmt)(*v),
                    _ => String::new(),
                });
            }
            for (ratio, sig) in l.ratios.iter().zip(&l.significant) {
                let verdict = match sig {
                    Some(true) => " (significant)",
                    Some(false) => " (not significant)",
                    None => "",
                };
                r.push(ratio.map(|x| format!("{}x{verdict}", fiox_charts::scale::sig3(x))).unwrap_or_default());
            }
            rows.push(r);
        }
    }
    let settings = sides.iter().map(|s| (s.name.clone(), format!("{} run(s)", s.runs))).collect();
    let page = crate::serve::html::Page {
        title: format!("fiox compare: {}", sides.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(" vs ")),
        headline: Vec::new(),
        settings,
        manifest: None,
        table: Some(crate::serve::html::Table { head, rows, text_cols: 2 }),
        charts: shown,
        notes: notes.to_vec(),
    };
    std::fs::write(dir.join("index.html"), crate::serve::html::render(&page))
        .with_context(|| format!("cannot write '{}'", dir.join("index.html").display()))
}

/// `fiox compare --help`, also the man page's text for the command.
pub fn help() -> String {
    cli::usage(COMPARE, Syntax::Gnu, COMPARE_COLUMN, HEAD, "")
}

/// `fiox compare ARGS`: prints the comparison table (and writes a page with `--out`); exits 2
/// when `--fail-if-slower` finds a regression.
pub fn run(args: &[String]) -> Result<ExitCode> {
    let mut paths: Vec<PathBuf> = Vec::new();
    let mut names: Option<Vec<String>> = None;
    let mut fail_pct: Option<f64> = None;
    let mut out: Option<PathBuf> = None;
    for arg in cli::args(COMPARE, Syntax::Gnu, args) {
        match arg.map_err(|e| anyhow::anyhow!(e.message("compare")))? {
            Arg::Flag(f, v) => match f.name {
                "--help" => {
                    print!("{}", help());
                    return Ok(ExitCode::SUCCESS);
                }
                "--fail-if-slower" => {
                    fail_pct = Some(match v.trim_end_matches('%').parse::<f64>() {
                        Ok(p) if (0.0..100.0).contains(&p) => p,
                        _ => bail!("compare: bad value '{v}' for {}: a percentage from 0 to 100 (10 or 10%)", f.name),
                    });
                }
                "--out" => out = Some(PathBuf::from(v)),
                "--names" => names = Some(v.split(',').map(|s| s.trim().to_string()).collect()),
                _ => unreachable!("{} is not a compare flag", f.name),
            },
            Arg::Other(a) if a.starts_with('-') && a.len() > 1 => {
                bail!("compare: unknown option '{a}' (see fiox compare --help)");
            }
            Arg::Other(a) => paths.push(PathBuf::from(a)),
        }
    }
    if paths.len() < 2 {
        bail!("compare: give at least two results to compare (JSON reports, folders of them, or sweep folders)");
    }
    if let Some(n) = &names {
        if n.len() != paths.len() || n.iter().any(String::is_empty) {
            bail!("compare: --names has {} name(s) for {} results", n.len(), paths.len());
        }
    }
    let mut sides = Vec::new();
    for (i, p) in paths.iter().enumerate() {
        if !p.exists() {
            bail!("compare: '{}' does not exist", p.display());
        }
        let name = match &names {
            Some(n) => n[i].clone(),
            None => {
                let stem = if p.is_dir() { p.file_name() } else { p.file_stem() };
                stem.map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| p.display().to_string())
            }
        };
        sides.push(load_side(p, name)?);
    }
    // Two sides with the same name would make the ratios unreadable.
    for i in 0..sides.len() {
        if sides[..i].iter().any(|s| s.name == sides[i].name) {
            sides[i].name = format!("{}#{}", sides[i].name, i + 1);
        }
    }
    let (table, notes) = compare(&sides);
    print!("{}", render(&table, &sides));
    for n in &notes {
        println!("note: {n}");
    }
    if let Some(dir) = &out {
        write_page(dir, &table, &sides, &notes)?;
        println!("compare: {}", dir.join("index.html").display());
    }
    if let Some(pct) = fail_pct {
        let slow = regressions(&table, &sides, pct);
        if !slow.is_empty() {
            for s in &slow {
                eprintln!("fiox: slower by more than {pct}%: {s}");
            }
            return Ok(ExitCode::from(2));
        }
        println!("no job is slower by more than {pct}%");
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::results::JobResult;

    fn side(name: &str, iops: &[f64], clat: f64) -> Side {
        let mut s = Side { name: name.into(), runs: 0, keys: Vec::new(), samples: BTreeMap::new() };
        for &x in iops {
            let fig = Figures { iops: x, bw: x * 4096.0, clat_mean: clat, ios: 10, ..Default::default() };
            let run = Run {
                version: String::new(),
                jobs: vec![JobResult { job: "j".into(), group: 0, dir: Dir::Read, fig }],
                util: None,
                fiox: None,
            };
            s.add("", &run);
            s.runs += 1;
        }
        s
    }

    #[test]
    fn ratios_significance_and_gate() {
        let sides = [side("hdd", &[100.0, 102.0, 98.0], 1000.0), side("ssd", &[400.0, 404.0, 396.0], 250.0)];
        let (t, notes) = compare(&sides);
        assert!(notes.is_empty());
        let iops = &t[0].lines[0];
        assert_eq!(iops.measure, "IOPS");
        assert_eq!(iops.ratios, [Some(4.0)]);
        assert_eq!(iops.significant, [Some(true)]);
        let text = render(&t, &sides);
        assert!(text.contains("4x better (significant)"), "{text}");
        assert!(text.contains("0.25x better (significant)"), "{text}");
        assert!(regressions(&t, &sides, 10.0).is_empty());
        // The other way round it is a regression: IOPS fell 75%, latency rose 300%.
        let back = [side("ssd", &[400.0, 404.0, 396.0], 250.0), side("hdd", &[100.0, 102.0, 98.0], 1000.0)];
        let (t, _) = compare(&back);
        let r = regressions(&t, &back, 10.0);
        assert_eq!(r.len(), 2, "{r:?}");
        assert!(r[0].contains("-75.0%"), "{r:?}");
        // Noise is not a regression, however large the gap in the means.
        let noisy = [side("a", &[100.0, 150.0, 50.0], 1.0), side("b", &[80.0, 20.0, 140.0], 1.0)];
        let (t, _) = compare(&noisy);
        assert!(regressions(&t, &noisy, 5.0).is_empty());
    }

    #[test]
    fn single_runs_and_names_matched_by_order() {
        let mut a = side("a", &[100.0], 10.0);
        let b = side("b", &[90.0], 10.0);
        a.keys[0].job = "other".into();
        let k = a.keys[0].clone();
        let v = a.samples.remove(&Key { point: String::new(), job: "j".into(), dir: Dir::Read }).unwrap();
        a.samples.insert(k, v);
        let sides = [a, b];
        let (t, notes) = compare(&sides);
        assert_eq!(t[0].lines[0].ratios, [Some(0.9)]);
        assert_eq!(t[0].lines[0].significant, [None]);
        assert!(notes[0].contains("matched in order"), "{notes:?}");
        // Without repeats a 10% drop beyond a 5% gate fails; within a 20% gate it passes.
        assert_eq!(regressions(&t, &sides, 5.0).len(), 1);
        assert!(regressions(&t, &sides, 20.0).is_empty());
    }

    #[test]
    fn every_compare_flag_is_handled() {
        // Each flag with a value, alone: refused for want of results, before any I/O.
        for f in COMPARE.iter().filter(|f| f.name != "--help") {
            assert!(run(&[f.name.to_string(), "x".into()]).is_err(), "{}", f.name);
        }
    }
}
