//! fio's built-in profiles (`--profile=tiobench`, `--profile=act`) under both tools.

use crate::util::{fio_within, fiox, json, listing, scratch};
use serde_json::Value;

/// Per job: name, group, and per direction bytes and I/Os.
fn jobs(doc: &Value) -> Vec<(String, u64, u64, u64, u64, u64)> {
    doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            let n = |d: &str, k: &str| j[d][k].as_u64().unwrap();
            (
                j["jobname"].as_str().unwrap().to_string(),
                j["groupid"].as_u64().unwrap(),
                n("read", "io_bytes"),
                n("read", "total_ios"),
                n("write", "io_bytes"),
                n("write", "total_ios"),
            )
        })
        .collect()
}

/// tiobench at its defaults: the same four groups, files, bytes and option echo as fio 3.33
/// (whose size follows the machine's memory: 4 KiB per MiB).
#[test]
fn tiobench_runs_the_jobs_fio_builds() {
    let (a, b) = (scratch(), scratch());
    let args = ["--profile=tiobench", "--output-format=json"];
    let f = fio_within(a.path(), &args, 300);
    let x = fiox(b.path(), &args);
    assert_eq!(f.code, 0, "fio: {}", f.stderr);
    assert_eq!(x.code, 0, "fiox: {}", x.stderr);
    assert_eq!(x.stderr, "");
    let (fd, xd) = (json(&f), json(&x));
    assert_eq!(jobs(&xd), jobs(&fd));
    assert_eq!(xd["global options"], fd["global options"]);
    for i in 0..4 {
        assert_eq!(xd["jobs"][i]["job options"], fd["jobs"][i]["job options"]);
    }
    assert_eq!(listing(b.path()), listing(a.path()));
    for name in listing(a.path()) {
        let size = |d: &std::path::Path| std::fs::metadata(d.join(&name)).unwrap().len();
        assert_eq!(size(b.path()), size(a.path()), "{name}");
    }
    // The normal output's job header as fio prints it: four groups, threads.
    let x = fiox(b.path(), &["--profile=tiobench", "--size=1", "--runtime=1"]);
    assert!(x.stdout.contains("randread: (g=3): rw=randread, bs=(R) 4096B-4096B"), "{}", x.stdout);
    assert!(x.stdout.contains("Starting 4 threads"), "{}", x.stdout);
}

/// fio 3.33 ignores tiobench's own options (size, block, numruns, threads, dir); fiox honours
/// them, `size` in MiB as fio's help says.
#[test]
fn tiobench_options_take_effect() {
    let d = scratch();
    let sub = d.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let dir = format!("--dir={}", sub.display());
    let x = fiox(
        d.path(),
        &["--profile=tiobench", "--size=2", "--block=8k", "--numruns=2", "--threads=2", &dir, "--output-format=json"],
    );
    assert_eq!(x.code, 0, "{}", x.stderr);
    let doc = json(&x);
    let js = jobs(&doc);
    // Two clones per phase, 2 MiB each, twice.
    assert_eq!(js.len(), 8);
    assert_eq!(js[0], ("seqwrite".into(), 0, 0, 0, 4 << 20, 512));
    assert_eq!(js[7], ("randread".into(), 3, 4 << 20, 512, 0, 0));
    assert_eq!(doc["jobs"][0]["job options"]["name"], "seqwrite");
    assert_eq!(listing(&sub), [".fio.tio.1", ".fio.tio.2", ".fio.tio.3", ".fio.tio.4"]);
    assert_eq!(std::fs::metadata(sub.join(".fio.tio.1")).unwrap().len(), 512 << 10);
}

/// act: the same jobs, rates and table as fio 3.33 on one device (a file here), and a verdict.
#[test]
fn act_paces_reads_and_writes_and_prints_fios_table() {
    let d = scratch();
    std::fs::File::create(d.path().join("act.img")).unwrap().set_len(64 << 20).unwrap();
    // A short name: fio 3.33 aborts ("buffer overflow detected") on a device name of about 30
    // characters or more, or on two devices.
    let names = "--device-names=act.img".to_string();
    let args = [&names[..], "--profile=act", "--test-duration=2", "--load=2", "--threads-per-queue=2"];
    let with_json: Vec<&str> = args.iter().copied().chain(["--output-format=json"]).collect();
    let f = fio_within(d.path(), &with_json, 60);
    let x = fiox(d.path(), &with_json);
    assert_eq!((f.code, x.code), (0, 0), "fio: {} fiox: {}", f.stderr, x.stderr);
    assert_eq!(x.stderr, "");
    // fiox's JSON output is one document; fio prints its table in front of it.
    assert!(x.stdout.starts_with('{'), "{}", x.stdout);
    let (fd, xd) = (json(&f), json(&x));
    assert_eq!(xd["global options"], fd["global options"]);
    let (fj, xj) = (&fd["jobs"][0], &xd["jobs"][0]);
    assert_eq!(xj["jobname"], fj["jobname"]);
    assert_eq!(xj["job options"], fj["job options"]);
    // Load 2: 4000 reads of 1536 bytes a second, and writes of 128 KiB carrying 1000 reads'
    // worth of bytes per load unit (24 a second), for 2 s.
    for (dir, want) in [("read", 8000.0), ("write", 2.0 * 24.0)] {
        let (a, b) = (fj[dir]["total_ios"].as_f64().unwrap(), xj[dir]["total_ios"].as_f64().unwrap());
        assert!((b - want).abs() <= want * 0.1 + 2.0, "{dir}: fio {a}, fiox {b}, rate says {want}");
        assert!((b - a).abs() <= a * 0.1 + 2.0, "{dir}: fio {a}, fiox {b}");
    }
    // The table in normal output: fio's heading and row layout, then the verdict.
    let x = fiox(d.path(), &args);
    assert_eq!(x.code, 0, "{}", x.stderr);
    let heading = " slice\t  1\t  8\t 64\t  1\t  8\t 64\n -----  -----   -----  ------   -----   -----  ------\n";
    let at = x.stdout.find(heading).unwrap_or_else(|| panic!("{}", x.stdout));
    let row = x.stdout[at + heading.len()..].lines().next().unwrap();
    let cells: Vec<&str> = row.split('\t').collect();
    assert_eq!(cells[0], "    1", "{row}");
    assert!(cells[1..].iter().all(|c| c.parse::<f64>().is_ok() && c.len() >= 4), "{row}");
    assert!(x.stdout.contains("\nact: test complete, device(s): "), "{}", x.stdout);
    let f = fio_within(d.path(), &args, 60);
    assert!(f.stdout.contains(heading));
    assert!(x.stdout.contains("act-read-") && x.stdout.contains("Starting 3 threads"), "{}", x.stdout);
}

#[test]
fn profile_mistakes_are_named_before_any_io() {
    let d = scratch();
    for (args, want) in [
        (&["--profile=tiobenc"][..], "'tiobenc' for option 'profile'"),
        (&["--profile=act"][..], "--device-names"),
        (
            &["--profile=act", "--device-names=/nonexistent/x", "--large-block-op-kbytes=100"][..],
            "large-block-op-kbytes",
        ),
        (&["--profile=tiobench", "--numruns=x"][..], "numruns"),
    ] {
        let x = fiox(d.path(), args);
        assert_eq!(x.code, 1, "{args:?}");
        assert!(x.stderr.contains(want), "{args:?}: {}", x.stderr);
        assert!(listing(d.path()).is_empty(), "{args:?}");
    }
}
