//! The live page (`live_listen`, `fiox sweep --live`) loaded in headless Chromium while a run
//! goes: the figures change from one load to the next, agree with the final report, the
//! charts are there, and the page renders with every address but loopback unreachable.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::commands::{chromium, png_stats};
use super::metrics::get;
use crate::util::{fiox_bin, free_port, scratch};

/// A running fiox, killed when the test ends early (a failed assertion).
struct Child(Option<std::process::Child>);

impl Child {
    fn finish(mut self) -> std::process::Output {
        self.0.take().expect("running").wait_with_output().unwrap()
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if let Some(c) = &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Chromium's flags: headless, and no network but loopback (a proxy nobody listens on for
/// everything else, and no name resolution), so a page that needs a CDN fails to render.
const OFFLINE: [&str; 9] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--enable-logging=stderr",
    "--v=0",
    "--proxy-server=http://127.0.0.1:9",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    // Time for the page's script to poll once (virtual time waits for the fetch).
    "--virtual-time-budget=1500",
];

/// The page as Chromium made it: its DOM, or a screenshot when `shot` is given.
fn load(dir: &Path, url: &str, shot: Option<&Path>) -> String {
    let browser = chromium();
    let mut cmd = Command::new(browser);
    cmd.args(OFFLINE).env("HOME", dir).current_dir(dir);
    match shot {
        Some(p) => cmd.arg(format!("--screenshot={}", p.display())).arg("--window-size=1300,2400"),
        None => cmd.arg("--dump-dom"),
    };
    let o = cmd.arg(url).output().expect("cannot start chromium");
    let log = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "chromium failed: {log}");
    // The page's console messages and failed loads are logged; a working page logs none.
    let complaint = |l: &&str| l.contains("CONSOLE") || l.contains("Uncaught") || l.contains("Failed to load");
    if let Some(l) = log.lines().find(complaint) {
        panic!("browser said: {l}");
    }
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The exact value of a figure in the page's table: `data-v` of cell `k` in the row whose
/// attribute `row` (`data-series`, `data-run`) is `name`.
fn cell(dom: &str, row: &str, name: &str, k: &str) -> f64 {
    let start = dom.find(&format!("<tr {row}=\"{name}\"")).unwrap_or_else(|| panic!("no row {name}:\n{dom}"));
    let tr = &dom[start..start + dom[start..].find("</tr>").unwrap()];
    let needle = format!("data-k=\"{k}\" data-v=\"");
    let at = tr.find(&needle).unwrap_or_else(|| panic!("no {k} in {tr}")) + needle.len();
    tr[at..at + tr[at..].find('"').unwrap()].parse().unwrap()
}

/// The elapsed time the page shows.
fn shown_t(dom: &str) -> f64 {
    let at = dom.find("data-t=\"").expect("the status line gives the time") + 8;
    dom[at..at + dom[at..].find('"').unwrap()].parse().unwrap()
}

/// Nothing on the page comes from anywhere else: no URL but SVG's namespace, no imports.
fn self_contained(html: &str) {
    let stripped = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    for bad in ["http:", "https:", "src=", "href=", "@import", "url("] {
        assert!(!stripped.contains(bad), "the page holds '{bad}'");
    }
}

fn wait_for(port: u16, what: &str, within: Duration, ok: impl Fn(&str) -> bool) -> String {
    let t0 = Instant::now();
    loop {
        if let Some(b) = get(port, "/live/part").filter(|b| ok(b)) {
            return b;
        }
        assert!(t0.elapsed() < within, "the live page never showed {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Two rate-limited jobs; the page is loaded twice while they run and once more for a
/// screenshot, all with the network cut off but loopback.
#[test]
fn live_page_in_chromium_while_a_job_runs() {
    let dir = scratch();
    let d = dir.path();
    let port = free_port();
    let listen = format!("--live_listen={port}");
    // Prometheus' endpoint on the same address: one server answers for both.
    let metrics = format!("--metrics_listen=127.0.0.1:{port}");
    let run = Child(Some(
        Command::new(fiox_bin())
            .args(["--ioengine=null", "--size=1g", "--time_based", "--runtime=9", &listen, &metrics])
            .arg("--output-format=json")
            .args(["--name=a", "--rw=randread", "--rate_iops=1000", "--name=b", "--rw=write", "--rate_iops=500"])
            .current_dir(d)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    ));
    let started = Instant::now();
    wait_for(port, "a first interval", Duration::from_secs(5), |b| b.contains("data-series=\"all\""));
    let url = format!("http://127.0.0.1:{port}/");
    let first = load(d, &url, None);
    std::thread::sleep(Duration::from_millis(1500));
    let second = load(d, &url, None);
    let shot = d.join("live.png");
    load(d, &url, Some(&shot));
    assert!(started.elapsed() < Duration::from_secs(9), "the loads took the whole run; nothing was seen live");
    assert!(get(port, "/metrics").is_some_and(|m| m.contains("fiox_ios_total{jobname=\"b\"")));
    assert!(get(port, "/nothing").is_some_and(|m| m == "fiox serves /metrics and the live page at / only\n"));
    // The raw page and what the browser made of it fetch nothing from elsewhere.
    self_contained(&get(port, "/").expect("the page is served"));
    self_contained(&second);
    let o = run.finish();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!((o.status.code(), stderr.as_ref()), (Some(0), ""));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();

    // The page's script polled fiox from the browser, with the network cut off.
    assert!(first.contains("<div id=\"live\" data-poll=\"ok\">"), "the page's script did not poll:\n{first}");
    // The figures moved on between the loads.
    let (t1, t2) = (shown_t(&first), shown_t(&second));
    assert!(t2 >= t1 + 1.0, "the page's time went from {t1} to {t2}");
    for row in ["all", "job:a", "job:b"] {
        assert!(cell(&second, "data-series", row, "ios") > cell(&first, "data-series", row, "ios"), "{row}");
    }
    // The charts: IOPS, bandwidth, latency for all and per job; percentiles in the table.
    for title in ["IOPS", "bandwidth", "completion latency, all jobs", "completion latency, a", "completion latency, b"]
    {
        assert!(second.contains(&format!("<figcaption>{title}</figcaption>")), "{title} missing");
    }
    assert!(second.matches("<svg").count() >= 5 && second.contains("<polyline"));
    assert!(cell(&second, "data-series", "all", "p99") >= cell(&second, "data-series", "all", "p50"));
    // The last figures shown agree with the report within one interval: the jobs' mean IOPS,
    // and the I/Os done by the page's time at the report's rate.
    let mut total_iops = 0.0;
    for (i, (job, dir_name)) in [("a", "read"), ("b", "write")].into_iter().enumerate() {
        let entry = &report["jobs"][i];
        assert_eq!(entry["jobname"], job);
        let iops = entry[dir_name]["iops"].as_f64().unwrap();
        total_iops += iops;
        let shown = cell(&second, "data-series", &format!("job:{job}"), "mean_iops");
        assert!((shown - iops).abs() <= 0.03 * iops, "{job}: page {shown} IOPS, report {iops}");
        let ios = cell(&second, "data-series", &format!("job:{job}"), "ios");
        assert!(ios <= entry[dir_name]["total_ios"].as_f64().unwrap(), "{job}: more I/Os shown than done");
    }
    let ios = cell(&second, "data-series", "all", "ios");
    assert!((ios - total_iops * t2).abs() <= total_iops, "{ios} I/Os at {t2} s; the report's rate is {total_iops}/s");
    let (w, h, colours) = png_stats(&shot);
    assert_eq!((w, h), (1300, 2400));
    assert!(colours > 100, "the screenshot looks blank: {colours} colours");
}

/// A sweep's page: the running point live, and each finished point with its whole run's
/// figures, which are the point's report's.
#[test]
fn sweep_live_page_shows_points_as_they_finish() {
    let dir = scratch();
    let d = dir.path();
    let port = free_port();
    let live = port.to_string();
    let sweep = Child(Some(
        Command::new(fiox_bin())
            .args(["sweep", "--live", &live, "--vary", "rate_iops=500,1000", "--out", "res"])
            .args(["--name=s", "--ioengine=null", "--size=1g", "--rw=randread", "--time_based", "--runtime=3"])
            .current_dir(d)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    ));
    wait_for(port, "the second point running", Duration::from_secs(10), |b| {
        b.contains("<b>[2/2] rate_iops=1000</b>: running") && b.contains("data-series=\"all\"")
    });
    let dom = load(d, &format!("http://127.0.0.1:{port}/"), None);
    self_contained(&dom);
    assert!(dom.contains(&format!("<h1>fiox sweep --live {port} --vary rate_iops=500,1000 --out res --name=s")));
    assert!(dom.contains("<figcaption>finished runs: IOPS and p99 latency</figcaption>"));
    let row = "[1/2] rate_iops=500";
    assert!(dom.contains(&format!("<tr data-run=\"{row}\"><td class=\"t\">{row}</td><td class=\"t\">done</td>")));
    let (ios, iops) = (cell(&dom, "data-run", row, "ios"), cell(&dom, "data-run", row, "iops"));
    assert!(cell(&dom, "data-series", "all", "ios") > 0.0, "the running point's figures are shown");
    let o = sweep.finish();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("res/points/rate_iops=500.json")).unwrap()).unwrap();
    let read = &report["jobs"][0]["read"];
    assert_eq!(ios, read["total_ios"].as_f64().unwrap());
    assert!((iops - read["iops"].as_f64().unwrap()).abs() < 0.01, "page {iops}, report {}", read["iops"]);
}

/// A bad address, or a port already taken, stops the run before any I/O, naming the option.
#[test]
fn live_listen_mistakes_stop_before_io() {
    let dir = scratch();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let busy = format!("--live_listen={}", taken.local_addr().unwrap());
    for (arg, want) in
        [("--live_listen=example.org:80", "live_listen=example.org:80"), (busy.as_str(), "cannot listen")]
    {
        let out = crate::util::fiox(dir.path(), &["--name=m", "--size=64k", "--filename=m.dat", arg]);
        assert_eq!(out.code, 1, "{arg}");
        assert!(out.stderr.contains(want), "{arg}: {}", out.stderr);
        assert!(!dir.path().join("m.dat").exists(), "{arg}: no file laid out");
    }
    let out = crate::util::fiox(dir.path(), &["sweep", "--live", "x", "--vary", "bs=4k", "--name=m", "--size=64k"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("sweep: bad value 'x' for --live"), "{}", out.stderr);
    let busy = taken.local_addr().unwrap().to_string();
    let out = crate::util::fiox(dir.path(), &["sweep", "--live", &busy, "--vary", "bs=4k", "--name=m", "--size=64k"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("cannot listen"), "{}", out.stderr);
    assert!(!dir.path().join("fiox-sweep").exists(), "the results folder is not made");
}
