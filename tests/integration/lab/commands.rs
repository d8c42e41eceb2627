//! `fiox sweep`, `plot` and `compare` on small real jobs: every file a sweep promises, the CSV
//! against the JSON reports, PNGs that decode, the page in a real browser (headless Chromium),
//! plots of fio's own output, comparisons with known ratios, resume and knee finding.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::util::{fio, fiox, fiox_bin, listing, scratch};

/// A CSV as header → value maps (the tests' CSVs hold no quoted commas).
fn csv(path: &Path) -> Vec<std::collections::HashMap<String, String>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let head: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    lines.map(|l| head.iter().cloned().zip(l.split(',').map(String::from)).collect()).collect()
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn num(s: &str) -> f64 {
    s.parse().unwrap_or_else(|_| panic!("not a number: {s:?}"))
}

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0), "{what}: {a} != {b}");
}

/// The text elements of an SVG, trimmed.
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| Some(t.split_once('>')?.1.split_once("</text>")?.0.trim().to_string()))
        .collect()
}

/// Decodes a PNG and returns (width, height, distinct colours).
pub(crate) fn png_stats(path: &Path) -> (u32, u32, usize) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let dec = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut r = dec.read_info().unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut buf = vec![0; r.output_buffer_size().unwrap()];
    let info = r.next_frame(&mut buf).unwrap();
    let px = match info.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        other => panic!("{}: unexpected colour type {other:?}", path.display()),
    };
    let colours: HashSet<&[u8]> = buf[..info.buffer_size()].chunks(px).map(|c| &c[..3]).collect();
    (info.width, info.height, colours.len())
}

/// A 1-D sweep of block sizes on a small file: every promised file, and the CSV equals the
/// reports.
#[test]
fn sweep_writes_reports_csv_charts_and_page() {
    let dir = scratch();
    let d = dir.path();
    let o = fiox(
        d,
        &[
            "sweep",
            "--vary",
            "bs=4k,16k,64k",
            "--out",
            "res",
            "--name=j",
            "--ioengine=psync",
            "--filename=data",
            "--size=1m",
            "--rw=randread",
            "--runtime=0.2s",
            "--time_based",
        ],
    );
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("[3/3] bs=64k: j read"), "{}", o.stdout);
    let res = d.join("res");
    assert_eq!(listing(&res), ["charts", "index.html", "points", "summary.csv", "sweep.json"]);
    assert_eq!(
        listing(&res.join("points")),
        ["bs=16k.json", "bs=4k.json", "bs=64k.json"],
        "one report per point and nothing left over"
    );
    let rows = csv(&res.join("summary.csv"));
    assert_eq!(rows.len(), 3);
    for (row, bs) in rows.iter().zip(["4k", "16k", "64k"]) {
        assert_eq!((row["bs"].as_str(), row["job"].as_str(), row["dir"].as_str()), (bs, "j", "read"));
        let rep = json(&res.join(format!("points/bs={bs}.json")));
        let job = &rep["jobs"][0];
        let rd = &job["read"];
        close(num(&row["iops"]), rd["iops"].as_f64().unwrap(), "iops");
        close(num(&row["bw_bytes"]), rd["bw_bytes"].as_f64().unwrap(), "bw_bytes");
        close(num(&row["clat_mean_ns"]), rd["clat_ns"]["mean"].as_f64().unwrap(), "clat mean");
        close(num(&row["clat_p50_ns"]), rd["clat_ns"]["percentile"]["50.000000"].as_f64().unwrap(), "p50");
        close(num(&row["clat_p99_ns"]), rd["clat_ns"]["percentile"]["99.000000"].as_f64().unwrap(), "p99");
        close(num(&row["clat_p99.9_ns"]), rd["clat_ns"]["percentile"]["99.900000"].as_f64().unwrap(), "p99.9");
        close(num(&row["lat_mean_ns"]), rd["lat_ns"]["mean"].as_f64().unwrap(), "lat mean");
        let cpu = job["usr_cpu"].as_f64().unwrap() + job["sys_cpu"].as_f64().unwrap();
        close(num(&row["cpu_pct"]), cpu, "cpu");
        // The job really ran with that block size.
        assert_eq!(rd["io_bytes"].as_u64().unwrap() % (num(&bs.replace('k', "")) as u64 * 1024), 0);
        let util =
            rep["disk_util"].as_array().and_then(|d| d.iter().filter_map(|x| x["util"].as_f64()).reduce(f64::max));
        match util {
            Some(u) => close(num(&row["util_pct"]), u, "util"),
            None => assert_eq!(row["util_pct"], ""),
        }
        // A JSON+ report, with the manifest.
        assert!(rd["clat_ns"]["bins"].is_object() && rep["fiox"]["kernel"].is_string());
    }
    for chart in ["iops", "bandwidth", "clat"] {
        let svg = std::fs::read_to_string(res.join(format!("charts/{chart}.svg"))).unwrap();
        let texts = svg_texts(&svg);
        assert!(
            svg.starts_with("<svg") && texts.contains(&"bs (bytes)".to_string()) && texts.contains(&"16k".to_string()),
            "{chart}.svg: {texts:?}"
        );
        let (w, h, colours) = png_stats(&res.join(format!("charts/{chart}.png")));
        assert_eq!((w, h), (960, 600));
        assert!(colours > 30, "{chart}.png has {colours} colours");
    }
    let page = std::fs::read_to_string(res.join("index.html")).unwrap();
    for needle in ["<h2>Settings</h2>", "<h2>Machine</h2>", "<h2>Results</h2>", "IOPS by bs", "--vary bs=4k,16k,64k"] {
        assert!(page.contains(needle), "index.html lacks {needle}");
    }
    assert!(!page.contains("<script") && !page.contains("src=\"http"), "the page is self-contained");
}

/// numjobs × iodepth with repeats: heat maps, lines and the by-product chart; intervals in the
/// CSV; resume skips finished runs and refuses a different sweep in the same folder.
#[test]
fn sweep_two_axes_repeat_and_resume() {
    let dir = scratch();
    let d = dir.path();
    let args = [
        "sweep",
        "--vary",
        "numjobs=1..2",
        "--vary",
        "iodepth=1,4",
        "--repeat",
        "2",
        "--out",
        "res",
        "--name=j",
        "--ioengine=null",
        "--size=4m",
        "--rw=randread",
        "--runtime=0.1s",
        "--time_based",
    ];
    let o = fiox(d, &args);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let res = d.join("res");
    let points = listing(&res.join("points"));
    assert_eq!(points.len(), 8, "{points:?}");
    assert!(points.contains(&"numjobs=2_iodepth=4.run2.json".to_string()), "{points:?}");
    let rows = csv(&res.join("summary.csv"));
    assert_eq!(rows.len(), 4);
    assert_eq!((rows[1]["numjobs"].as_str(), rows[1]["iodepth"].as_str(), rows[1]["runs"].as_str()), ("1", "4", "2"));
    assert!(!rows[0]["iops_ci95"].is_empty(), "repeated points carry intervals");
    // The mean over the two runs, each a sum over the numjobs clones.
    let total = |p: &str| -> f64 {
        json(&res.join("points").join(p))["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["read"]["iops"].as_f64().unwrap())
            .sum()
    };
    let mean = (total("numjobs=2_iodepth=1.json") + total("numjobs=2_iodepth=1.run2.json")) / 2.0;
    close(num(&rows[2]["iops"]), mean, "mean IOPS over runs and clones");
    let charts = listing(&res.join("charts"));
    for c in [
        "heat-iops.png",
        "heat-clat-p99.svg",
        "iops-lines.png",
        "iops-by-numjobs.png",
        "by-product.png",
        "by-product.svg",
    ] {
        assert!(charts.contains(&c.to_string()), "{c} missing: {charts:?}");
    }
    let (_, _, colours) = png_stats(&res.join("charts/heat-iops.png"));
    assert!(colours > 30);

    // Resume: a lost report is run again, the others are not.
    std::fs::remove_file(res.join("points/numjobs=1_iodepth=4.json")).unwrap();
    let before = std::fs::metadata(res.join("points/numjobs=2_iodepth=4.json")).unwrap().modified().unwrap();
    let o = fiox(d, &args);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("resuming"), "{}", o.stdout);
    assert_eq!(o.stdout.matches("done earlier").count(), 7, "{}", o.stdout);
    assert!(res.join("points/numjobs=1_iodepth=4.json").is_file());
    assert_eq!(std::fs::metadata(res.join("points/numjobs=2_iodepth=4.json")).unwrap().modified().unwrap(), before);

    // Another sweep into the same folder is refused, and changes nothing.
    let before = listing(&res.join("points"));
    let mut other = args.to_vec();
    other[2] = "numjobs=1..3";
    let o = fiox(d, &other);
    assert_ne!(o.code, 0);
    assert!(o.stderr.contains("holds a different sweep"), "{}", o.stderr);
    assert_eq!(listing(&res.join("points")), before);
}

/// Ctrl-C stops the sweep after the current point's report is discarded; the same command
/// then finishes the rest.
#[test]
fn interrupted_sweep_resumes() {
    let dir = scratch();
    let d = dir.path();
    let args = [
        "sweep",
        "--vary",
        "iodepth=1,2,3,4",
        "--out",
        "res",
        "--name=j",
        "--ioengine=null",
        "--size=4m",
        "--rw=read",
        "--runtime=1s",
        "--time_based",
    ];
    let child = Command::new(fiox_bin())
        .args(args)
        .current_dir(d)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt once the first point has finished, while the second runs.
    let first = d.join("res/points/iodepth=1.json");
    let start = std::time::Instant::now();
    while !first.exists() && start.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(first.exists(), "the first point never finished");
    std::thread::sleep(std::time::Duration::from_millis(200));
    let kill = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    let o = child.wait_with_output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(128), "{stdout}{stderr}");
    assert!(stderr.contains("run the same command again to resume"), "{stderr}");
    let done = listing(&d.join("res/points"));
    assert!(!done.is_empty() && done.len() < 4, "{done:?}");
    assert!(done.iter().all(|f| f.ends_with(".json")), "no partial report is left: {done:?}");
    let o = fiox(d, &args);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert_eq!(o.stdout.matches("done earlier").count(), done.len(), "{}", o.stdout);
    assert_eq!(listing(&d.join("res/points")).len(), 4);
}

/// A point whose run fails (O_DIRECT reads of 1000 bytes: EINVAL on ext4, the scratch
/// folder's file system on these machines) is reported with the run's own message; the other
/// points still run and the sweep exits 1. Running it again retries only that point.
#[test]
fn sweep_reports_a_failed_point_and_goes_on() {
    let dir = scratch();
    let d = dir.path();
    let args = [
        "sweep",
        "--vary",
        "bs=1000,4k",
        "--out",
        "res",
        "--name=j",
        "--ioengine=psync",
        "--filename=data",
        "--size=1m",
        "--direct=1",
        "--rw=randread",
    ];
    let o = fiox(d, &args);
    assert_eq!(o.code, 1, "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("[1/2] bs=1000: failed (exit status 1): fiox: io_u error"), "{}", o.stdout);
    assert!(o.stdout.contains("[2/2] bs=4k: j read"), "{}", o.stdout);
    assert!(o.stderr.contains("1 run(s) failed"), "{}", o.stderr);
    let points = listing(&d.join("res/points"));
    assert_eq!(points, ["bs=1000.failed.json", "bs=1000.failed.log", "bs=4k.json"]);
    assert_eq!(csv(&d.join("res/summary.csv")).len(), 1, "only the finished point has a row");
    let page = std::fs::read_to_string(d.join("res/index.html")).unwrap();
    assert!(page.contains("<h2>Notes</h2>") && page.contains("bs=1000: failed"), "the page lists the failure");
    let o = fiox(d, &args);
    assert_eq!(o.code, 1);
    assert!(o.stdout.contains("bs=1000: failed") && o.stdout.contains("bs=4k: done earlier"), "{}", o.stdout);
}

/// Bad axes, values, files and folders: a message naming them, a failure, nothing written.
#[test]
fn sweep_refuses_bad_input_before_any_io() {
    let cases: &[(&[&str], &str)] = &[
        (&["--vary", "iodepht=1,2", "--name=j", "--size=1m"], "unknown option 'iodepht'; did you mean 'iodepth'?"),
        (&["--vary", "bs=4k,4q", "--name=j", "--size=1m"], "--vary bs: bad value '4q'"),
        (&["--vary", "iodepth=1,2,...,8", "--name=j", "--size=1m"], "at least three values before '...'"),
        (&["--vary", "rw=read,sideways", "--name=j", "--size=1m"], "--vary rw: bad value 'sideways'"),
        (&["--vary", "iodepth=1,2,1", "--name=j", "--size=1m"], "--vary iodepth: the value '1' is given twice"),
        (
            &["--vary", "iodepth=1,2", "--zip", "--vary", "bs=4k", "--name=j", "--size=1m"],
            "--zip needs axes of equal length",
        ),
        (&["--vary", "bs=4k", "missing.fio"], "cannot read job file 'missing.fio'"),
        (&["--vary", "bs=4k", "--name=j"], "sweep point bs=4k: job 'j': no target size"),
        (&["--vary", "size=1m,2m", "--name=j", "--filename=/nonexistent/dir/f"], "sweep point size=1m"),
        (&["--vary", "bs=4k", "--output=x.json", "--name=j", "--size=1m"], "--output (use --out DIR"),
        (&["--name=j", "--size=1m"], "give at least one axis"),
        (&["--vary", "bs=4k", "--repeat", "0", "--name=j", "--size=1m"], "bad value '0' for --repeat"),
        (&["--find-knee", "--target", "p99<=2", "--name=j", "--size=1m"], "--target 'p99<=2'"),
        (
            &["--find-knee", "--vary", "bs=4k,8k", "--target", "p99<=2ms", "--name=j", "--size=1m"],
            "iodepth and numjobs only",
        ),
    ];
    for (args, needle) in cases {
        let dir = scratch();
        let mut full = vec!["sweep"];
        full.extend_from_slice(args);
        let o = fiox(dir.path(), &full);
        assert_ne!(o.code, 0, "{full:?} should fail: {}", o.stdout);
        assert!(
            o.stderr.starts_with("fiox: ") && o.stderr.contains(needle),
            "{full:?}: expected {needle:?} in: {}",
            o.stderr
        );
        assert!(!o.stderr.contains("panicked"), "{}", o.stderr);
        assert!(listing(dir.path()).is_empty(), "{full:?} wrote {:?}", listing(dir.path()));
    }
    // A folder that is not a sweep's is not taken over.
    let dir = scratch();
    std::fs::create_dir(dir.path().join("res")).unwrap();
    std::fs::write(dir.path().join("res/notes.txt"), "mine").unwrap();
    let o = fiox(dir.path(), &["sweep", "--vary", "bs=4k", "--out", "res", "--name=j", "--ioengine=null", "--size=1m"]);
    assert_ne!(o.code, 0);
    assert!(o.stderr.contains("is not a sweep's results folder"), "{}", o.stderr);
    assert_eq!(listing(&dir.path().join("res")), ["notes.txt"]);
}

/// Axis values override the job file's own (the seed's `[job] runtime=10` edited by sed), and
/// each point's job file is written out.
#[test]
fn sweep_overrides_job_file_values() {
    let dir = scratch();
    let d = dir.path();
    std::fs::write(d.join("fio.conf"), "[global]\nioengine=null\nsize=8m\nrw=read\n[job]\nbs=4k # edited per run\n")
        .unwrap();
    let o = fiox(d, &["sweep", "--vary", "bs=64k,1m", "--out", "res", "fio.conf"]);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    for (bs, ios) in [("64k", 128), ("1m", 8)] {
        let rep = json(&d.join(format!("res/points/bs={bs}.json")));
        assert_eq!(rep["jobs"][0]["read"]["total_ios"].as_u64(), Some(ios), "bs={bs}");
        let job = std::fs::read_to_string(d.join(format!("res/points/bs={bs}.fio"))).unwrap();
        assert!(job.contains(&format!("[job]\nbs=4k\nbs={bs}\n")), "{job}");
    }
}

/// The results page renders in a real browser without errors.
#[test]
fn page_renders_in_headless_chromium() {
    let browser = chromium();
    let dir = scratch();
    let d = dir.path();
    let o = fiox(
        d,
        &[
            "sweep",
            "--vary",
            "iodepth=1,2,4,8,16",
            "--out",
            "res",
            "--name=j",
            "--ioengine=null",
            "--size=4m",
            "--runtime=0.1s",
            "--time_based",
        ],
    );
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let page = d.join("res/index.html");
    let url = format!("file://{}", page.display());
    let shot = d.join("shot.png");
    let common = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--enable-logging=stderr", "--v=0"];
    let run = |extra: &[String]| {
        let o = Command::new(&browser)
            .args(common)
            .args(extra)
            .arg(&url)
            .env("HOME", d)
            .current_dir(d)
            .output()
            .expect("cannot start chromium");
        (
            o.status.success(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (ok, _, log) = run(&[format!("--screenshot={}", shot.display()), "--window-size=1200,2000".into()]);
    assert!(ok, "chromium failed: {log}");
    let (ok, dom, log2) = run(&["--dump-dom".into()]);
    assert!(ok, "chromium failed: {log2}");
    // Console messages from the page are logged as CONSOLE lines; a broken page would log errors.
    let complaint = |l: &&str| l.contains("CONSOLE") || l.contains("Uncaught") || l.contains("Failed to load");
    if let Some(l) = log.lines().chain(log2.lines()).find(complaint) {
        panic!("browser said: {l}");
    }
    // The same check catches a page with a script error (so its silence above means something).
    std::fs::write(d.join("bad.html"), "<html><body><script>undefinedFn();</script></body></html>").unwrap();
    let bad = Command::new(&browser)
        .args(common)
        .arg("--dump-dom")
        .arg(format!("file://{}", d.join("bad.html").display()))
        .env("HOME", d)
        .output()
        .expect("cannot start chromium");
    assert!(String::from_utf8_lossy(&bad.stderr).lines().any(|l| complaint(&l)), "a script error went unnoticed");
    assert!(
        dom.contains("IOPS by iodepth") && dom.matches("<svg").count() >= 3 && dom.contains("<h2>Results</h2>"),
        "{dom}"
    );
    let (w, h, colours) = png_stats(&shot);
    assert_eq!((w, h), (1200, 2000));
    assert!(colours > 100, "the screenshot looks blank: {colours} colours");
}

/// Debian's chromium: installed here when missing (as scripts/test.sh does for fio), else a
/// loud failure.
pub(crate) fn chromium() -> PathBuf {
    static INSTALL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    for p in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] {
        if Path::new(p).exists() {
            return PathBuf::from(p);
        }
    }
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    assert!(
        root,
        "chromium is not installed and cannot be installed here (need root and apt-get): apt-get install chromium"
    );
    let apt = |args: &[&str]| {
        Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    };
    assert!(apt(&["update", "-qq"]), "apt-get update failed");
    assert!(apt(&["install", "-y", "-qq", "chromium", "fonts-dejavu-core"]), "apt-get install chromium failed");
    PathBuf::from("/usr/bin/chromium")
}

/// `fiox plot` on the real fio's own JSON reports and logs.
#[test]
fn plot_reads_fios_reports_and_logs() {
    let dir = scratch();
    let d = dir.path();
    std::fs::create_dir(d.join("bs")).unwrap();
    for bs in ["4k", "16k", "64k"] {
        let o = fio(
            d,
            &[
                "--name=j",
                "--ioengine=psync",
                "--filename=data",
                "--size=2m",
                "--rw=read",
                &format!("--bs={bs}"),
                "--time_based",
                "--runtime=300ms",
                "--output-format=json",
                &format!("--output=bs/{bs}.json"),
                &format!("--write_bw_log=bs/j{bs}"),
                &format!("--write_lat_log=bs/j{bs}"),
                "--log_avg_msec=10",
            ],
        );
        assert_eq!(o.code, 0, "fio: {}", o.stderr);
    }
    let o = fiox(d, &["plot", "--out", "plots", "bs"]);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let charts = listing(&d.join("plots/charts"));
    for c in ["iops.png", "bandwidth.svg", "clat.png", "log-bw.png", "log-clat.svg", "log-lat.png"] {
        assert!(charts.contains(&c.to_string()), "{c} missing: {charts:?}");
    }
    let rows = csv(&d.join("plots/summary.csv"));
    let labels: Vec<&str> = rows.iter().map(|r| r["bs"].as_str()).collect();
    assert_eq!(labels, ["4k", "16k", "64k"], "ordered by size, the axis named after the folder");
    for r in &rows {
        let rep = json(&d.join(format!("bs/{}.json", r["bs"])));
        close(num(&r["iops"]), rep["jobs"][0]["read"]["iops"].as_f64().unwrap(), "iops");
        close(
            num(&r["clat_p99_ns"]),
            rep["jobs"][0]["read"]["clat_ns"]["percentile"]["99.000000"].as_f64().unwrap(),
            "p99",
        );
    }
    let svg = std::fs::read_to_string(d.join("plots/charts/iops.svg")).unwrap();
    assert!(svg_texts(&svg).contains(&"64k".to_string()), "a numeric size axis");
    let (_, _, colours) = png_stats(&d.join("plots/charts/log-bw.png"));
    assert!(colours > 30);
    // fiox's own logs, in fio's format; a JSON file that is no report is passed over in a folder.
    std::fs::create_dir(d.join("fx")).unwrap();
    std::fs::write(d.join("fx/notes.json"), "{\"not\": \"a report\"}").unwrap();
    let o = fiox(
        d,
        &[
            "--name=j",
            "--ioengine=null",
            "--size=64m",
            "--rw=randread",
            "--time_based",
            "--runtime=300ms",
            "--write_iops_log=fx/fx",
            "--log_avg_msec=20",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = fiox(d, &["plot", "--out", "fxplot", "fx"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stderr.contains("skipped") && o.stderr.contains("notes.json"), "{}", o.stderr);
    let (_, _, colours) = png_stats(&d.join("fxplot/charts/log-iops.png"));
    assert!(colours > 30);
    // A single report with several jobs: bars per job.
    let o = fio(
        d,
        &[
            "--name=a",
            "--ioengine=null",
            "--size=8m",
            "--rw=read",
            "--name=b",
            "--ioengine=null",
            "--size=8m",
            "--rw=write",
            "--output-format=json",
            "--output=two.json",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = fiox(d, &["plot", "--out", "one", "two.json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let texts = svg_texts(&std::fs::read_to_string(d.join("one/charts/iops.svg")).unwrap());
    assert!(texts.contains(&"a read".to_string()) && texts.contains(&"b write".to_string()), "{texts:?}");
    assert!(std::fs::read_to_string(d.join("one/charts/iops.svg")).unwrap().contains("<rect"));
    // Unreadable input is refused before anything is written.
    std::fs::write(d.join("bad.json"), "{\"jobs\": [").unwrap();
    let o = fiox(d, &["plot", "--out", "p2", "bad.json"]);
    assert_ne!(o.code, 0);
    assert!(o.stderr.contains("bad.json") && !d.join("p2").exists(), "{}", o.stderr);
}

/// A minimal fio JSON report with one read job.
fn report(job: &str, iops: f64, clat_ns: f64) -> String {
    serde_json::json!({
        "fio version": "fio-3.33",
        "jobs": [{
            "jobname": job, "groupid": 0, "usr_cpu": 10.0, "sys_cpu": 5.0,
            "read": {"iops": iops, "bw_bytes": iops * 4096.0, "total_ios": (iops as u64).max(1), "runtime": 1000,
                     "clat_ns": {"mean": clat_ns, "percentile": {"50.000000": clat_ns as u64, "99.000000": (2.0 * clat_ns) as u64}},
                     "lat_ns": {"mean": clat_ns + 100.0}},
            "write": {"iops": 0.0, "bw_bytes": 0, "total_ios": 0}
        }]
    })
    .to_string()
}

/// Ratios and significance on known inputs; the regression gate's exit status.
#[test]
fn compare_ratios_significance_and_gate() {
    let dir = scratch();
    let d = dir.path();
    std::fs::create_dir_all(d.join("hdd")).unwrap();
    std::fs::create_dir_all(d.join("ssd")).unwrap();
    for (i, (a, b)) in [(100.0, 400.0), (104.0, 396.0), (96.0, 404.0)].iter().enumerate() {
        std::fs::write(d.join(format!("hdd/{i}.json")), report("4k_randread", *a, 1000.0)).unwrap();
        std::fs::write(d.join(format!("ssd/{i}.json")), report("4k_randread", *b, 250.0)).unwrap();
    }
    let o = fiox(d, &["compare", "hdd", "ssd", "--fail-if-slower", "10"]);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let iops = o.stdout.lines().find(|l| l.trim_start().starts_with("IOPS")).unwrap();
    assert!(iops.contains("100 ± ") && iops.contains("400 ± ") && iops.contains("4x better (significant)"), "{iops}");
    let clat = o.stdout.lines().find(|l| l.trim_start().starts_with("clat mean")).unwrap();
    assert!(clat.contains("0.25x better (significant)"), "{clat}");
    assert!(
        o.stdout.contains("hdd (3 runs)") && o.stdout.contains("no job is slower by more than 10%"),
        "{}",
        o.stdout
    );
    // The same as bar charts and a page.
    let o = fiox(d, &["compare", "hdd", "ssd", "--out", "cmp"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    for c in ["iops", "bandwidth", "clat-mean", "clat-p99"] {
        let texts = svg_texts(&std::fs::read_to_string(d.join(format!("cmp/charts/{c}.svg"))).unwrap());
        assert!(
            texts.contains(&"hdd".to_string()) && texts.contains(&"4k_randread read".to_string()),
            "{c}: {texts:?}"
        );
        let (_, _, colours) = png_stats(&d.join(format!("cmp/charts/{c}.png")));
        assert!(colours > 20, "{c}.png");
    }
    let page = std::fs::read_to_string(d.join("cmp/index.html")).unwrap();
    assert!(page.contains("4x (significant)") && page.contains("fiox compare: hdd vs ssd"));
    // Reversed, the gate trips with status 2 and says why.
    let o = fiox(d, &["compare", "ssd", "hdd", "--fail-if-slower", "10"]);
    assert_eq!(o.code, 2, "{}{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("4k_randread read: IOPS 100 on hdd against 400 on ssd (-75.0%)"), "{}", o.stderr);
    // Single runs: a ratio without a verdict; job names that differ are matched in order.
    std::fs::write(d.join("a.json"), report("before", 1000.0, 500.0)).unwrap();
    std::fs::write(d.join("b.json"), report("after", 1500.0, 500.0)).unwrap();
    let o = fiox(d, &["compare", "a.json", "b.json", "--names", "old,new"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("1.5x") && !o.stdout.contains("significant"), "{}", o.stdout);
    assert!(o.stdout.contains("matched in order"), "{}", o.stdout);
    for (args, needle) in [
        (vec!["compare", "a.json"], "at least two results"),
        (vec!["compare", "a.json", "nope.json"], "'nope.json' does not exist"),
        (vec!["compare", "a.json", "b.json", "--fail-if-slower", "lots"], "bad value 'lots' for --fail-if-slower"),
    ] {
        let o = fiox(d, &args);
        assert_eq!(o.code, 1, "{args:?}");
        assert!(o.stderr.contains(needle) && !o.stderr.contains("panicked"), "{args:?}: {}", o.stderr);
    }
}

/// `compare` on the real fio's output against fiox's, for the same job.
#[test]
fn compare_fio_with_fiox() {
    let dir = scratch();
    let d = dir.path();
    let job = ["--name=j", "--ioengine=null", "--size=64m", "--bs=4k", "--rw=read", "--output-format=json"];
    let o = fio(d, &[&job[..], &["--output=fio.json"]].concat());
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = fiox(d, &[&job[..], &["--output=fiox.json"]].concat());
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = fiox(d, &["compare", "fio.json", "fiox.json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.starts_with("j read") && o.stdout.contains("fiox/fio"), "{}", o.stdout);
    assert!(o.stdout.lines().filter(|l| l.contains('x')).count() >= 7, "{}", o.stdout);
}

/// The knee search: every depth meets an easy target (the walk stops when throughput stops
/// growing or at the deepest queue), and an impossible one is reported as such.
#[test]
fn find_knee_reports_the_best_point_meeting_the_target() {
    let dir = scratch();
    let d = dir.path();
    let base = ["--name=j", "--ioengine=null", "--size=16m", "--rw=randread", "--runtime=0.1s", "--time_based"];
    let o = fiox(
        d,
        &[&["sweep", "--find-knee", "--target", "p99<=1s", "--max-iodepth", "8", "--out", "k1"][..], &base[..]]
            .concat(),
    );
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let knee = o.stdout.lines().find(|l| l.starts_with("knee: iodepth=")).unwrap_or_else(|| panic!("{}", o.stdout));
    // The reported knee is the measured point with the most IOPS.
    let rows = csv(&d.join("k1/summary.csv"));
    let best = rows.iter().max_by(|a, b| num(&a["iops"]).total_cmp(&num(&b["iops"]))).unwrap();
    assert!(knee.starts_with(&format!("knee: iodepth={}:", best["iodepth"])), "{knee} vs {best:?}");
    assert!(d.join("k1/charts/knee.png").is_file() && d.join("k1/charts/knee.svg").is_file());
    let page = std::fs::read_to_string(d.join("k1/index.html")).unwrap();
    assert!(page.contains(&crate_escape(knee)), "the page leads with the knee");
    let o = fiox(d, &[&["sweep", "--find-knee", "--target", "p99<=1ns", "--out", "k2"][..], &base[..]].concat());
    assert_eq!(o.code, 1, "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("no point meets p99<=1ns"), "{}", o.stdout);
    assert_eq!(listing(&d.join("k2/points")), ["iodepth=1.json"], "the walk stops at the first miss");
}

fn crate_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}
