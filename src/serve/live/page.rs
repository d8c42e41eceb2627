//! The live page as pure functions of a [`Snapshot`]: the whole page, its changing part (what
//! the page's script fetches each second and puts in place), and the charts, drawn by
//! `fiox-charts` with the sweep page's axes and style. Every table cell carries its exact
//! value in `data-v`, so scripts (and the tests) read figures without parsing units.

use std::fmt::Write as _;

use fiox_charts::{Axis, Chart, LineChart, Point, Scale, Series, Unit};

use crate::serve::figure::{y_axis, Kind};
use crate::serve::html::{escape, strip_prolog, STYLE};
use crate::serve::live::{coarsen, Figures, Interval, Run, Snapshot, State};

/// A chart of the page: the name it is served under (`/live/NAME.svg`), its title and SVG.
#[derive(Clone)]
pub struct Shown {
    pub file: String,
    pub title: String,
    pub svg: String,
}

/// Everything the server sends, made from one generation of the feed.
#[derive(Clone)]
pub struct Rendered {
    pub generation: u64,
    pub page: String,
    pub part: String,
    pub charts: Vec<Shown>,
}

/// Job latency charts drawn at most (the table still lists every job).
const MAX_JOB_CHARTS: usize = 8;
/// Points drawn per line at most; longer runs are drawn from coarser intervals.
const MAX_DRAWN: usize = 480;

/// The page's own additions to the sweep page's style.
const LIVE_STYLE: &str = ".status{color:#555}.status b{color:#222}.conn{color:#b00020;font-weight:bold}";

/// The script: every second, fetch the changing part unless nothing changed, and say so when
/// fiox stops answering (the run ended); `data-poll` on the part's holder tells how the last
/// poll went. Relative URLs, so the page also works behind a proxy
/// that serves it under a path of its own.
const SCRIPT: &str = r#"(function () {
  var live = document.getElementById('live'), conn = document.getElementById('conn');
  function generation() {
    var p = document.getElementById('part');
    return p ? p.getAttribute('data-generation') : '';
  }
  function poll() {
    fetch('live/part?after=' + generation(), {cache: 'no-store'}).then(function (r) {
      if (r.status === 204) return null;
      if (!r.ok) throw new Error('HTTP ' + r.status);
      return r.text();
    }).then(function (t) {
      conn.textContent = '';
      live.setAttribute('data-poll', 'ok');
      if (t) live.innerHTML = t;
      setTimeout(poll, 1000);
    }).catch(function () {
      conn.textContent = 'fiox is not answering (the run has ended or was stopped): these are the last figures it sent.';
      live.setAttribute('data-poll', 'lost');
      setTimeout(poll, 3000);
    });
  }
  setTimeout(poll, 1000);
})();"#;

pub fn render(s: &Snapshot) -> Rendered {
    let charts = charts(s);
    let part = part(s, &charts);
    let page = page(&s.title, &part);
    Rendered { generation: s.generation, page, part, charts }
}

fn page(title: &str, part: &str) -> String {
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = write!(h, "<title>{} (live)</title>\n<style>{STYLE}{LIVE_STYLE}</style>\n</head>\n<body>\n", escape(title));
    let _ = writeln!(h, "<h1>{}</h1>", escape(title));
    h.push_str("<p id=\"conn\" class=\"conn\"></p>\n<div id=\"live\">");
    h.push_str(part);
    h.push_str("</div>\n");
    let _ = writeln!(
        h,
        "<p style=\"color:#888;font-size:.8em\">Served by {} while it runs; the figures renew each second.</p>",
        escape(crate::VERSION_STRING)
    );
    let _ = write!(h, "<script>\n{SCRIPT}\n</script>\n</body>\n</html>\n");
    h
}

/// The run the charts and the first table show: the newest.
fn current(s: &Snapshot) -> Option<&Run> {
    s.runs.last()
}

/// The figures a run shows now: its end's once it ended, else its newest interval's.
fn latest(r: &Run) -> Option<&Interval> {
    r.end.as_ref().or(r.intervals.last())
}

/// The changing part of the page.
fn part(s: &Snapshot, charts: &[Shown]) -> String {
    let mut h = String::new();
    let _ = writeln!(h, "<div id=\"part\" data-generation=\"{}\">", s.generation);
    let Some(run) = current(s) else {
        h.push_str("<p class=\"status\" data-state=\"waiting\">Waiting for the first figures…</p>\n</div>\n");
        return h;
    };
    let last = latest(run);
    let t = last.map_or(0.0, |iv| iv.t);
    let (state, what) = match &run.state {
        State::Running => ("running", format!("running for {}", secs(t))),
        State::Done => ("done", format!("finished after {}; the figures are the whole run's", secs(t))),
        State::Failed(why) => ("failed", format!("failed: {why}")),
    };
    let label = if run.label.is_empty() { String::new() } else { format!("<b>{}</b>: ", escape(&run.label)) };
    let _ = writeln!(h, "<p class=\"status\" data-state=\"{state}\" data-t=\"{t:.3}\">{label}{}</p>", escape(&what));
    if let Some(iv) = last {
        let per = if run.end.is_some() { "run" } else { "last interval" };
        h.push_str("<div class=\"scroll\"><table id=\"now\">\n<tr><th class=\"t\">jobs</th><th>I/Os</th>");
        let _ = write!(h, "<th>IOPS ({per})</th><th>mean IOPS</th><th>bandwidth ({per})</th>");
        let _ = writeln!(h, "<th>p50 ({per})</th><th>p99 ({per})</th><th>p99.9 ({per})</th><th>errors</th></tr>");
        let rows = std::iter::once(&iv.all).chain(iv.jobs.iter().filter(|_| iv.jobs.len() > 1));
        for f in rows {
            let series = if std::ptr::eq(f, &iv.all) { "all".to_string() } else { format!("job:{}", f.name) };
            let mean = if iv.t > 0.0 { f.ios as f64 / iv.t } else { 0.0 };
            let mean = if run.end.is_some() { f.iops } else { mean };
            let name = if std::ptr::eq(f, &iv.all) && iv.jobs.len() > 1 {
                "all".to_string()
            } else if iv.jobs.len() == 1 {
                iv.jobs[0].name.clone()
            } else {
                f.name.clone()
            };
            let _ = write!(h, "<tr data-series=\"{}\"><td class=\"t\">{}</td>", escape(&series), escape(&name));
            cells(&mut h, f, Some(mean));
            let _ = writeln!(h, "<td data-k=\"errors\" data-v=\"{0}\">{0}</td></tr>", f.errors);
        }
        h.push_str("</table></div>\n");
    }
    if !charts.is_empty() {
        h.push_str("<div class=\"charts\">\n");
        for c in charts.iter().filter(|c| c.file != "runs") {
            figure(&mut h, c);
        }
        h.push_str("</div>\n");
    }
    if s.runs.len() > 1 {
        h.push_str("<h2>Runs</h2>\n<div class=\"scroll\"><table id=\"runs\">\n");
        h.push_str(
            "<tr><th class=\"t\">run</th><th class=\"t\">state</th><th>I/Os</th><th>IOPS</th><th>bandwidth</th>",
        );
        h.push_str("<th>p50</th><th>p99</th><th>p99.9</th></tr>\n");
        for r in &s.runs {
            let state = match &r.state {
                State::Running => "running".to_string(),
                State::Done => "done".to_string(),
                State::Failed(why) => format!("failed: {why}"),
            };
            let _ = write!(
                h,
                "<tr data-run=\"{0}\"><td class=\"t\">{0}</td><td class=\"t\">{1}</td>",
                escape(&r.label),
                escape(&state)
            );
            match latest(r) {
                Some(iv) => cells(&mut h, &iv.all, None),
                None => h.push_str("<td></td><td></td><td></td><td></td><td></td><td></td>"),
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</table></div>\n");
        if let Some(c) = charts.iter().find(|c| c.file == "runs") {
            h.push_str("<div class=\"charts\">\n");
            figure(&mut h, c);
            h.push_str("</div>\n");
        }
    }
    h.push_str("</div>\n");
    h
}

fn figure(h: &mut String, c: &Shown) {
    h.push_str("<figure>\n");
    h.push_str(strip_prolog(&c.svg));
    let _ = writeln!(h, "\n<figcaption>{}</figcaption>\n</figure>", escape(&c.title));
}

/// A row's figures: I/Os, IOPS, (mean IOPS), bandwidth, p50, p99, p99.9.
fn cells(h: &mut String, f: &Figures, mean: Option<f64>) {
    let _ = write!(h, "<td data-k=\"ios\" data-v=\"{0}\">{0}</td>", f.ios);
    let _ = write!(h, "<td data-k=\"iops\" data-v=\"{:.3}\">{}</td>", f.iops, number(f.iops));
    if let Some(m) = mean {
        let _ = write!(h, "<td data-k=\"mean_iops\" data-v=\"{m:.3}\">{}</td>", number(m));
    }
    let _ = write!(h, "<td data-k=\"bw\" data-v=\"{:.0}\">{}</td>", f.bw, rate(f.bw));
    for (k, v) in [("p50", f.p50_ns), ("p99", f.p99_ns), ("p999", f.p999_ns)] {
        match v {
            Some(ns) => {
                let _ = write!(h, "<td data-k=\"{k}\" data-v=\"{ns}\">{}</td>", nanos(ns as f64));
            }
            None => {
                let _ = write!(h, "<td data-k=\"{k}\"></td>");
            }
        }
    }
}

fn secs(t: f64) -> String {
    if t < 120.0 {
        format!("{t:.0} s")
    } else {
        format!("{}m{:02}s", (t / 60.0) as u64, (t % 60.0) as u64)
    }
}

/// IOPS as people read them: 950, 12.3k, 1.25M.
fn number(v: f64) -> String {
    fiox_charts::Axis::new("", Scale::Linear, Unit::Number).format(v)
}

fn rate(bytes_per_sec: f64) -> String {
    let units = [("GiB/s", 1024f64.powi(3)), ("MiB/s", 1024f64.powi(2)), ("KiB/s", 1024.0)];
    match units.iter().find(|(_, d)| bytes_per_sec >= *d) {
        Some((u, d)) => format!("{:.1} {u}", bytes_per_sec / d),
        None => format!("{bytes_per_sec:.0} B/s"),
    }
}

fn nanos(ns: f64) -> String {
    match [("s", 1e9), ("ms", 1e6), ("µs", 1e3)].iter().find(|(_, d)| ns >= *d) {
        Some((u, d)) => format!("{:.3} {u}", ns / d).replace(".000 ", " "),
        None => format!("{ns:.0} ns"),
    }
}

/// The charts: IOPS and bandwidth over time (all jobs, and each job when there are several),
/// completion-latency percentiles over time (all jobs, then each job), and, once several runs
/// are known, each run's IOPS with its p99.
fn charts(s: &Snapshot) -> Vec<Shown> {
    let mut out = Vec::new();
    let Some(run) = current(s) else { return out };
    // A chart is 960 pixels wide: more points than this only make the page heavier.
    let every = run.intervals.len().div_ceil(MAX_DRAWN);
    let coarse;
    let ivs = if every > 1 {
        coarse = coarsen(&run.intervals, every);
        &coarse
    } else {
        &run.intervals
    };
    let per = if every > 1 { format!(" (a point per {every} intervals; latency: the highest)") } else { String::new() };
    let jobs: Vec<String> = ivs.last().map(|iv| iv.jobs.iter().map(|f| f.name.clone()).collect()).unwrap_or_default();
    let time = || Axis::new("time (s)", Scale::Linear, Unit::Number);
    // One line per series: all jobs first (named after the job when there is one job).
    let lines = |get: &dyn Fn(&Figures) -> f64| -> Vec<(String, Vec<(f64, f64)>)> {
        let mut v = vec![(
            if jobs.len() == 1 { jobs[0].clone() } else { "all".to_string() },
            ivs.iter().map(|iv| (iv.t, get(&iv.all))).collect(),
        )];
        if jobs.len() > 1 {
            for (k, name) in jobs.iter().enumerate() {
                v.push((name.clone(), ivs.iter().filter_map(|iv| iv.jobs.get(k).map(|f| (iv.t, get(f)))).collect()));
            }
        }
        v
    };
    let mut line_chart =
        |file: &str, title: String, kind: Kind, label: &str, series: Vec<(String, Vec<(f64, f64)>)>| {
            let values: Vec<f64> = series.iter().flat_map(|(_, p)| p.iter().map(|x| x.1)).collect();
            if values.is_empty() {
                return;
            }
            let (mut y, div) = y_axis(label, kind, &values);
            // Over time, a line that drops to zero must stay visible: linear axes only.
            y.scale = Scale::Linear;
            let series = series
                .into_iter()
                .map(|(name, pts)| Series {
                    name,
                    points: pts.into_iter().map(|(x, v)| Point::new(x, v / div)).collect(),
                    dashed: false,
                })
                .collect();
            let chart = Chart::Line(LineChart {
                title: title.clone(),
                x: time(),
                y,
                series,
                y2: None,
                hlines: vec![],
                marks: vec![],
            });
            if let Ok(svg) = fiox_charts::svg(&chart) {
                out.push(Shown { file: file.to_string(), title: format!("{title}{per}"), svg });
            }
        };
    if !ivs.is_empty() {
        line_chart("iops", "IOPS".into(), Kind::Iops, "IOPS", lines(&|f| f.iops));
        line_chart("bw", "bandwidth".into(), Kind::BytesPerSec, "bandwidth", lines(&|f| f.bw));
        let pcts = |pick: &dyn Fn(&Interval) -> Option<&Figures>| -> Vec<(String, Vec<(f64, f64)>)> {
            let get = |f: &Figures, q: usize| [f.p50_ns, f.p99_ns, f.p999_ns][q];
            ["p50", "p99", "p99.9"]
                .iter()
                .enumerate()
                .map(|(q, name)| {
                    let pts = ivs.iter().filter_map(|iv| pick(iv).and_then(|f| get(f, q)).map(|ns| (iv.t, ns as f64)));
                    (name.to_string(), pts.collect())
                })
                .collect()
        };
        let whose = if jobs.len() == 1 { jobs[0].clone() } else { "all jobs".to_string() };
        line_chart(
            "lat",
            format!("completion latency, {whose}"),
            Kind::Nanos,
            "completion latency",
            pcts(&|iv| Some(&iv.all)),
        );
        if jobs.len() > 1 {
            for (k, name) in jobs.iter().enumerate().take(MAX_JOB_CHARTS) {
                line_chart(
                    &format!("lat-{}", k + 1),
                    format!("completion latency, {name}"),
                    Kind::Nanos,
                    "completion latency",
                    pcts(&|iv| iv.jobs.get(k)),
                );
            }
        }
    }
    // Finished runs side by side (a sweep's points): IOPS, with p99 on the right.
    let ended: Vec<(&str, &Interval)> =
        s.runs.iter().filter_map(|r| r.end.as_ref().map(|e| (r.label.as_str(), e))).collect();
    if s.runs.len() > 1 && !ended.is_empty() {
        let names: Vec<String> = ended.iter().map(|(l, _)| l.to_string()).collect();
        let iops: Vec<f64> = ended.iter().map(|(_, e)| e.all.iops).collect();
        let p99: Vec<f64> = ended.iter().map(|(_, e)| e.all.p99_ns.unwrap_or(0) as f64).collect();
        let (mut y, div) = y_axis("IOPS", Kind::Iops, &iops);
        y.scale = Scale::Linear;
        let (mut y2, div2) = y_axis("p99 completion latency", Kind::Nanos, &p99);
        y2.scale = Scale::Linear;
        let pts = |v: &[f64], d: f64| v.iter().enumerate().map(|(i, x)| Point::new(i as f64, x / d)).collect();
        let chart = Chart::Line(LineChart {
            title: "finished runs".into(),
            x: Axis::categories("run", &names),
            y,
            series: vec![Series { name: "IOPS".into(), points: pts(&iops, div), dashed: false }],
            y2: Some((y2, vec![Series { name: "p99".into(), points: pts(&p99, div2), dashed: true }])),
            hlines: vec![],
            marks: vec![],
        });
        if let Ok(svg) = fiox_charts::svg(&chart) {
            out.push(Shown { file: "runs".into(), title: "finished runs: IOPS and p99 latency".into(), svg });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::live::{LiveFeed, Record};

    fn fig(name: &str, ios: u64, iops: f64, p99: u64) -> Figures {
        Figures {
            name: name.into(),
            ios,
            bytes: ios * 4096,
            iops,
            bw: iops * 4096.0,
            p50_ns: Some(p99 / 2),
            p99_ns: Some(p99),
            p999_ns: Some(p99 * 2),
            errors: 0,
        }
    }

    fn iv(t: f64, k: u64) -> Interval {
        Interval {
            t,
            all: fig("all", 300 * k, 300.0, 2000),
            jobs: vec![fig("a <1>", 100 * k, 100.0, 1000), fig("b", 200 * k, 200.0, 3000)],
        }
    }

    #[test]
    fn page_shows_figures_and_charts_and_fetches_nothing_elsewhere() {
        let feed = LiveFeed::new("fiox: a, b");
        for k in 1..=5 {
            feed.push(Record::Interval(iv(k as f64, k)));
        }
        let r = render(&feed.snapshot());
        assert!(r.page.contains("<tr data-series=\"all\"><td class=\"t\">all</td><td data-k=\"ios\" data-v=\"1500\">"));
        assert!(r.page.contains("data-series=\"job:a &lt;1&gt;\""), "names are escaped");
        assert!(r.page.contains("<td data-k=\"mean_iops\" data-v=\"300.000\">300</td>"));
        assert!(r.page.contains("<td data-k=\"p99\" data-v=\"3000\">3 µs</td>"));
        let files: Vec<&str> = r.charts.iter().map(|c| c.file.as_str()).collect();
        assert_eq!(files, ["iops", "bw", "lat", "lat-1", "lat-2"]);
        assert_eq!(r.page.matches("<figure>").count(), 5);
        assert!(r.part.starts_with("<div id=\"part\" data-generation=\"5\">"));
        // Nothing is fetched from elsewhere: no absolute URLs but SVG's namespace, no imports.
        let stripped = r.page.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
        assert!(!stripped.contains("http:") && !stripped.contains("https:") && !stripped.contains("//cdn"));
        assert!(!stripped.contains("src=") && !stripped.contains("href=") && !stripped.contains("@import"));
        // A finished run shows the whole run's figures; a second run adds the runs table.
        let mut end = iv(5.5, 5);
        end.all.iops = 272.7;
        feed.push(Record::End(end));
        feed.begin("second");
        feed.push(Record::Interval(iv(1.0, 1)));
        let r = render(&feed.snapshot());
        assert!(r.part.contains("<tr data-run=\"\"><td class=\"t\"></td><td class=\"t\">done</td><td data-k=\"ios\" data-v=\"1500\">1500</td><td data-k=\"iops\" data-v=\"272.700\">"), "{}", r.part);
        assert!(r.part.contains("<tr data-run=\"second\">") && r.charts.iter().any(|c| c.file == "runs"));
    }

    #[test]
    fn an_hour_is_drawn_from_coarser_intervals() {
        let feed = LiveFeed::new("t");
        for k in 1..=3600 {
            feed.push(Record::Interval(iv(k as f64, k)));
        }
        let r = render(&feed.snapshot());
        assert!(r.part.contains("<figcaption>IOPS (a point per 8 intervals; latency: the highest)</figcaption>"));
        // Five charts of 450 points and the tables: the page stays light.
        assert!(r.part.len() < 160_000, "{} bytes", r.part.len());
        assert!(r.part.contains("<td data-k=\"ios\" data-v=\"1080000\">"), "the table shows the newest interval");
    }

    #[test]
    fn an_empty_feed_waits() {
        let r = render(&LiveFeed::new("t").snapshot());
        assert!(r.part.contains("data-state=\"waiting\"") && r.charts.is_empty());
    }

    #[test]
    fn units() {
        assert_eq!(
            (nanos(950.0), nanos(1500.0), nanos(2_000_000.0)),
            ("950 ns".into(), "1.500 µs".into(), "2 ms".into())
        );
        assert_eq!((rate(100.0), rate(4096.0 * 1000.0)), ("100 B/s".into(), "3.9 MiB/s".into()));
    }
}
