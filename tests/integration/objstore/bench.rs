//! `fiox s3 bench` against the SeaweedFS server the tests start (strict SigV4): reports with
//! exact counts and bytes, object listings, cleanup of its own prefix only, size
//! distributions, multipart uploads and the open loop.

use std::time::Duration;

use super::{recorder, run, seaweed, tls_recorder, Seen, KEY, S3, SECRET};
use crate::util::Out;

fn bench(s3: &S3, mode: &str, bucket: &str, more: &[&str]) -> Out {
    let mut args: Vec<String> = ["s3", "bench", mode].map(String::from).to_vec();
    args.push(format!("--host=127.0.0.1:{}", s3.port));
    args.push(format!("--access-key={KEY}"));
    args.push(format!("--secret-key={SECRET}"));
    args.push(format!("--bucket={bucket}"));
    args.extend(["--obj.size=16KiB", "--concurrent=4", "--duration=2s", "--objects=32"].map(String::from));
    args.extend(more.iter().map(|s| s.to_string()));
    run(&args).0
}

fn bucket_exists(s3: &S3, bucket: &str) -> bool {
    s3.boto(&format!("c.head_bucket(Bucket='{bucket}')")).is_ok()
}

/// `fiox s3 bench put` and `get` in warp's shape: fio-shaped JSON with operations and exact
/// percentiles of the request and of the time to first byte; the bucket it made is gone
/// afterwards, with every object it wrote.
#[test]
fn s3_bench_put_and_get_report_and_clean_up() {
    s3_or_skip!(s3);
    for (mode, dir) in [("put", "write"), ("get", "read")] {
        let out = bench(s3, mode, "fiox-bench-a", &["--json"]);
        assert_eq!(out.code, 0, "{mode}: {}", out.stderr);
        assert_eq!(out.stderr, "", "{mode}");
        let j: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        let job = &j["jobs"][0];
        assert_eq!(job["jobname"], if mode == "put" { "put" } else { "get" });
        let ios = job[dir]["total_ios"].as_u64().unwrap();
        assert!(ios > 10, "{mode}: {ios} operations in 2 s");
        assert_eq!(job[dir]["io_bytes"].as_u64().unwrap(), ios * 16384, "{mode}: every object whole");
        let p = &job[dir]["clat_ns"]["percentile"];
        let (p50, p99) = (p["50.000000"].as_u64().unwrap(), p["99.000000"].as_u64().unwrap());
        assert!(p50 > 0 && p50 <= p99, "{p}");
        assert!(job[dir]["ttfb_ns"]["percentile"]["50.000000"].as_u64().unwrap() <= p50 + p50 / 64);
        assert_eq!(job["total_err"], 0);
        assert!(!bucket_exists(s3, "fiox-bench-a"), "{mode}: the bucket it created is removed");
    }
}

/// A bucket holding someone else's objects is refused; with --use-existing the run goes on
/// beside them, and deletes only what it made. mixed runs every operation.
#[test]
fn s3_bench_keeps_others_objects() {
    s3_or_skip!(s3);
    s3.boto("c.create_bucket(Bucket='fiox-bench-b'); c.put_object(Bucket='fiox-bench-b',Key='theirs',Body=b'keep me')")
        .unwrap();
    let out = bench(s3, "put", "fiox-bench-b", &[]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("holds objects fiox did not create") && out.stderr.contains("--use-existing"),
        "{}",
        out.stderr
    );
    let out = bench(s3, "mixed", "fiox-bench-b", &["--use-existing", "--json", "--prefix=mine"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let j: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let names: Vec<&str> = j["jobs"].as_array().unwrap().iter().map(|x| x["jobname"].as_str().unwrap()).collect();
    assert_eq!(names, ["get", "put", "delete", "stat"], "{}", out.stdout);
    let left =
        s3.boto("print([o['Key'] for o in c.list_objects_v2(Bucket='fiox-bench-b').get('Contents',[])])").unwrap();
    assert_eq!(left.trim(), "['theirs']");
    assert_eq!(
        s3.boto("print(c.get_object(Bucket='fiox-bench-b',Key='theirs')['Body'].read())").unwrap().trim(),
        "b'keep me'"
    );
}

/// Wrong credentials end the bench at once with the server's refusal.
#[test]
fn s3_bench_wrong_secret() {
    s3_or_skip!(s3);
    let mut args: Vec<String> = ["s3", "bench", "put"].map(String::from).to_vec();
    args.push(format!("--host=127.0.0.1:{}", s3.port));
    args.extend(["--access-key=fioxtestkey", "--secret-key=wrong", "--duration=2s"].map(String::from));
    let (out, took) = run(&args);
    assert_eq!(out.code, 1);
    assert!(took < Duration::from_secs(20));
    assert!(out.stderr.contains("SignatureDoesNotMatch") || out.stderr.contains("HTTP 403"), "{}", out.stderr);
}

/// The keys under `prefix/` in `bucket`, with their sizes.
fn listing(s3: &S3, bucket: &str, prefix: &str) -> Vec<(String, u64)> {
    let out = s3
        .boto(&format!(
            "p=c.get_paginator('list_objects_v2')\nfor page in p.paginate(Bucket='{bucket}',Prefix='{prefix}/'):\n  for o in page.get('Contents',[]): print(o['Key'], o['Size'])"
        ))
        .unwrap();
    out.lines().map(|l| l.split_once(' ').map(|(k, s)| (k.to_string(), s.parse().unwrap())).unwrap()).collect()
}

/// Removes a bucket a `--noclear` run left, with its objects.
fn drop_bucket(s3: &S3, bucket: &str) {
    s3.boto(&format!(
        "p=c.get_paginator('list_objects_v2')\nfor page in p.paginate(Bucket='{bucket}'):\n  for o in page.get('Contents',[]): c.delete_object(Bucket='{bucket}',Key=o['Key'])\nc.delete_bucket(Bucket='{bucket}')"
    ))
    .unwrap();
}

fn report(out: &Out) -> serde_json::Value {
    assert_eq!((out.code, out.stderr.as_str()), (0, ""), "{}", out.stdout);
    serde_json::from_str(&out.stdout).unwrap()
}

/// The flags are the flag model's: refusals name the flag and value, and come before any
/// request (the endpoint here has no server).
#[test]
fn s3_bench_refuses_bad_flags_before_io() {
    let base = ["s3", "bench", "put", "--host=127.0.0.1:1", "--access-key=k", "--secret-key=s"];
    for (more, msg) in [
        ("--obj.size=4KiB:x", "s3 bench: --obj.size=4KiB:x: weight 'x' is not a whole number"),
        ("--obj.size=8k-4k", "s3 bench: --obj.size=8k-4k: the smallest size comes first"),
        ("--rate=fast", "s3 bench: --rate=fast: not a rate (a number above 0, then /s or /m: 200/s)"),
        ("--part.size=0", "s3 bench: --part.size=0: a size from 1 byte to 4 TiB"),
        ("--concurrent", "s3 bench: --concurrent needs a value"),
        ("--noclear=yes", "s3 bench: --noclear takes no value"),
        ("--warp-client=x", "s3 bench: unknown option '--warp-client' (fiox s3 bench --help)"),
    ] {
        let mut args: Vec<String> = base.map(String::from).to_vec();
        args.push(more.to_string());
        let (out, took) = run(&args);
        assert_eq!((out.code, out.stdout.as_str()), (1, ""), "{more}");
        assert_eq!(out.stderr, format!("fiox: {msg}\n"), "{more}");
        assert!(took < Duration::from_secs(5));
    }
}

/// Sizes drawn from a weighted distribution, on an open-loop schedule of 25 PUTs a second for
/// 2 s: exactly 50 objects, and the bucket's listing adds up to the bytes the report gives,
/// with every size of the distribution and no other. warp's log2 spread stays in its range.
#[test]
fn s3_bench_size_distribution_matches_the_listing() {
    s3_or_skip!(s3);
    let j = report(&bench(
        s3,
        "put",
        "fiox-bench-d",
        &["--obj.size=1KiB:1,4KiB:1,16KiB:2", "--rate=25/s", "--noclear", "--prefix=dist", "--json"],
    ));
    let w = &j["jobs"][0]["write"];
    let listed = listing(s3, "fiox-bench-d", "dist");
    assert_eq!(w["total_ios"], 50, "{}", j["fiox"]);
    assert_eq!(listed.len(), 50);
    assert_eq!(w["io_bytes"].as_u64().unwrap(), listed.iter().map(|k| k.1).sum::<u64>());
    let mut sizes: Vec<u64> = listed.iter().map(|k| k.1).collect();
    sizes.sort();
    sizes.dedup();
    assert_eq!(sizes, [1024, 4096, 16384]);
    assert_eq!(j["jobs"][0]["job options"]["obj.size"], "1 KiB:1,4 KiB:1,16 KiB:2");
    assert_eq!(j["fiox"]["s3 bench"]["open_loop"]["rate"], 25.0);

    let j = report(&bench(
        s3,
        "put",
        "fiox-bench-d",
        &["--obj.size=64KiB", "--obj.randsize", "--noclear", "--prefix=rand", "--use-existing", "--json"],
    ));
    let listed = listing(s3, "fiox-bench-d", "rand");
    assert_eq!(j["jobs"][0]["write"]["total_ios"].as_u64().unwrap(), listed.len() as u64);
    assert_eq!(j["jobs"][0]["write"]["io_bytes"].as_u64().unwrap(), listed.iter().map(|k| k.1).sum::<u64>());
    assert!(listed.iter().all(|k| (256..=65536).contains(&k.1)), "{listed:?}");
    let mut distinct: Vec<u64> = listed.iter().map(|k| k.1).collect();
    distinct.dedup();
    assert!(distinct.len() > listed.len() / 2, "{listed:?}");
    drop_bucket(s3, "fiox-bench-d");
}

/// multipart-put: each operation is one whole upload of --obj.size in --part.size parts; the
/// listing has exactly the objects reported, whole, no upload is left open, and without
/// --noclear they are gone afterwards. Parts under S3's 5 MiB are the server's to refuse
/// (SeaweedFS does): the run says so, and aborts the uploads it began.
#[test]
fn s3_bench_multipart_uploads_whole_objects() {
    s3_or_skip!(s3);
    let open_uploads = || {
        s3.boto("print(len(c.list_multipart_uploads(Bucket='fiox-bench-m').get('Uploads',[])))")
            .unwrap()
            .trim()
            .to_string()
    };
    let j = report(&bench(
        s3,
        "multipart-put",
        "fiox-bench-m",
        &[
            "--obj.size=11MiB",
            "--part.size=5MiB",
            "--noclear",
            "--prefix=mp",
            "--json",
            "--concurrent=2",
            "--duration=1s",
        ],
    ));
    let names: Vec<&str> = j["jobs"].as_array().unwrap().iter().map(|x| x["jobname"].as_str().unwrap()).collect();
    assert_eq!(names, ["multipart", "part"]);
    let (mp, parts) = (&j["jobs"][0]["write"], &j["jobs"][1]["write"]);
    let n = mp["total_ios"].as_u64().unwrap();
    assert!(n >= 2, "{n} uploads in 1 s");
    assert_eq!(parts["total_ios"].as_u64().unwrap(), 3 * n, "5 + 5 + 1 MiB");
    assert_eq!(mp["io_bytes"].as_u64().unwrap(), n * (11 << 20));
    assert_eq!(parts["io_bytes"], mp["io_bytes"]);
    let listed = listing(s3, "fiox-bench-m", "mp");
    assert_eq!(listed.len() as u64, n);
    assert!(listed.iter().all(|k| k.1 == 11 << 20), "{listed:?}");
    assert_eq!(open_uploads(), "0");

    let small = ["--obj.size=40KiB", "--part.size=16KiB", "--prefix=small", "--use-existing", "--duration=1s"];
    let out = bench(s3, "multipart-put", "fiox-bench-m", &small);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(out.stderr.contains("completing: HTTP 400 EntityTooSmall"), "{}", out.stderr);
    assert!(listing(s3, "fiox-bench-m", "small").is_empty());
    assert_eq!(open_uploads(), "0");
    drop_bucket(s3, "fiox-bench-m");

    let out = bench(
        s3,
        "multipart-put",
        "fiox-bench-m",
        &["--obj.size=6MiB", "--part.size=5MiB", "--duration=1s", "--concurrent=1"],
    );
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    assert!(
        out.stdout.contains("Operation: MULTIPART, 6 MiB objects")
            && out.stdout.contains("Operation: PART, 5 MiB objects"),
        "{}",
        out.stdout
    );
    assert!(!bucket_exists(s3, "fiox-bench-m"));
}

/// Answers as an empty bucket that takes every PUT (its body is dropped).
fn quick_s3() -> super::Answer {
    Box::new(|s: &Seen, _: &mut std::collections::HashMap<String, Vec<u8>>| {
        Some(match s.method.as_str() {
            "GET" => (200, b"<ListBucketResult></ListBucketResult>".to_vec()),
            "DELETE" => (204, Vec::new()),
            _ => (200, Vec::new()),
        })
    })
}

/// The open loop against a server that takes 50 ms a request, at 40 requests a second through
/// one connection: the schedule outruns it, the backlog grows, and the latencies, counted from
/// each request's intended start, show it (the last waits about a second), where the closed
/// loop sees only the 50 ms. Exactly the 40 scheduled PUTs reach the server, and the cleanup
/// deletes exactly those.
#[test]
fn s3_bench_open_loop_has_no_coordinated_omission() {
    let answer: super::Answer = Box::new(|s: &Seen, _: &mut std::collections::HashMap<String, Vec<u8>>| {
        Some(match s.method.as_str() {
            "PUT" => {
                std::thread::sleep(Duration::from_millis(50));
                (200, Vec::new())
            }
            "GET" => (200, b"<ListBucketResult></ListBucketResult>".to_vec()),
            "DELETE" => (204, Vec::new()),
            _ => (200, Vec::new()),
        })
    });
    let (port, seen) = recorder(Some(answer));
    let args = |more: &[&str]| -> Vec<String> {
        let mut v: Vec<String> =
            ["s3", "bench", "put", "--access-key=k", "--secret-key=s", "--bucket=b"].map(String::from).to_vec();
        v.push(format!("--host=127.0.0.1:{port}"));
        v.extend(["--concurrent=1", "--duration=1s", "--obj.size=1KiB", "--json", "--prefix=ol"].map(String::from));
        v.extend(more.iter().map(|s| s.to_string()));
        v
    };
    let (out, _) = run(&args(&["--rate=40/s"]));
    let j = report(&out);
    let w = &j["jobs"][0]["write"];
    assert_eq!(w["total_ios"], 40);
    let (p50, max) = (w["clat_ns"]["percentile"]["50.000000"].as_u64().unwrap(), w["clat_ns"]["max"].as_u64().unwrap());
    assert!(p50 > 300_000_000 && max > 700_000_000, "p50 {p50} max {max}");
    assert!(j["fiox"]["s3 bench"]["open_loop"]["started_late"].as_u64().unwrap() >= 30);
    let count = |m: &str| seen.lock().unwrap().iter().filter(|s| s.method == m && s.path.starts_with("/b/ol/")).count();
    assert_eq!((count("PUT"), count("DELETE")), (40, 40));

    let (out, _) = run(&args(&[]));
    let w = &report(&out)["jobs"][0]["write"];
    assert!(w["clat_ns"]["max"].as_u64().unwrap() < 400_000_000, "{w}");

    // Poisson arrivals at 60 a second: n of them in the second, served 50 ms each, so the
    // last ends about n * 50 ms after the start and waited at least that less a second.
    seen.lock().unwrap().clear();
    let (out, _) = run(&args(&["--rate=60/s", "--rate.process=poisson", "--prefix=pq"]));
    let j = report(&out);
    let w = &j["jobs"][0]["write"];
    let n = w["total_ios"].as_u64().unwrap();
    let (p50, max) = (w["clat_ns"]["percentile"]["50.000000"].as_u64().unwrap(), w["clat_ns"]["max"].as_u64().unwrap());
    assert!(n >= 35, "{n} Poisson arrivals at 60/s in 1 s");
    let backlog = (n * 50_000_000).saturating_sub(1_000_000_000);
    assert!(max >= backlog * 9 / 10 && p50 > 150_000_000, "n {n} p50 {p50} max {max}");
    assert_eq!(j["fiox"]["s3 bench"]["open_loop"]["process"], "poisson");
}

/// The open loop's arrivals as the server sees them: at 100 a second for 2 s, evenly spaced
/// (gaps of 10 ms, little spread) or Poisson (exponential gaps: a mean of 10 ms, a standard
/// deviation as large as the mean, about 63% of the gaps shorter than the mean, and a
/// Kolmogorov-Smirnov distance to the exponential distribution small enough for ~200 draws).
#[test]
fn s3_bench_poisson_arrivals_reach_the_server_exponentially_spaced() {
    let (port, seen) = recorder(Some(quick_s3()));
    let gaps = |process: &str| -> Vec<f64> {
        seen.lock().unwrap().clear();
        let mut v: Vec<String> =
            ["s3", "bench", "put", "--access-key=k", "--secret-key=s", "--bucket=b"].map(String::from).to_vec();
        v.push(format!("--host=127.0.0.1:{port}"));
        v.push(format!("--rate.process={process}"));
        v.extend(
            ["--concurrent=1", "--duration=2s", "--obj.size=1KiB", "--json", "--rate=100/s", "--noclear"]
                .map(String::from),
        );
        let j = report(&run(&v).0);
        let times: Vec<std::time::Instant> = seen
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.method == "PUT" && s.path.starts_with("/b/fiox-"))
            .map(|s| s.at)
            .collect();
        assert_eq!(j["jobs"][0]["write"]["total_ios"].as_u64().unwrap(), times.len() as u64, "{process}");
        times.windows(2).map(|w| (w[1] - w[0]).as_secs_f64()).collect()
    };
    let stats = |g: &[f64]| {
        let mean = g.iter().sum::<f64>() / g.len() as f64;
        let sd = (g.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / g.len() as f64).sqrt();
        (mean, sd / mean)
    };
    let linear = gaps("linear");
    let (mean, cv) = stats(&linear);
    assert!((195..=201).contains(&(linear.len() + 1)), "{} linear arrivals", linear.len() + 1);
    assert!((mean - 0.01).abs() < 0.001 && cv < 0.35, "linear: mean {mean} cv {cv}");

    let mut p = gaps("poisson");
    assert!((140..=260).contains(&p.len()), "{} Poisson arrivals at 100/s in 2 s", p.len() + 1);
    let (mean, cv) = stats(&p);
    assert!((mean - 0.01).abs() < 0.002 && (0.7..1.3).contains(&cv), "Poisson: mean {mean} cv {cv}");
    let under = p.iter().filter(|&&g| g < 0.01).count() as f64 / p.len() as f64;
    assert!((0.5..0.76).contains(&under), "{under} of the gaps under 10 ms");
    p.sort_by(f64::total_cmp);
    let ks = p
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let f = 1.0 - (-g / 0.01).exp();
            (f - i as f64 / p.len() as f64).abs().max((f - (i + 1) as f64 / p.len() as f64).abs())
        })
        .fold(0.0, f64::max);
    // 1.95 / sqrt(n) is the 0.1% critical value; loopback and sleep jitter add a little.
    assert!(ks < 1.95 / (p.len() as f64).sqrt() + 0.03, "KS distance {ks}");
}

/// `fiox s3 bench put` at a loopback endpoint with more flags, JSON out; its output and time.
fn bench_at(port: u16, more: &[&str]) -> (Out, Duration) {
    let mut v: Vec<String> =
        ["s3", "bench", "put", "--access-key=k", "--secret-key=s", "--bucket=b"].map(String::from).to_vec();
    v.push(format!("--host=127.0.0.1:{port}"));
    v.extend(["--concurrent=1", "--duration=1s", "--obj.size=1KiB", "--json"].map(String::from));
    v.extend(more.iter().map(|s| s.to_string()));
    run(&v)
}

/// Every way the endpoint can fail ends in bounded time with one clear line: nothing
/// listening, a certificate no CA vouches for (and --insecure accepted), a bucket the server
/// will not create, a server that stalls mid-run (the results so far are reported; the
/// cleanup gives up at the first unanswered request and says what is left: the 5 objects
/// and the one whose PUT went unanswered), and a server
/// answering 503 to every PUT (the report counts the errors and the exit status is 1).
#[test]
fn s3_bench_failures_end_clearly_with_results_so_far() {
    let limit = Duration::from_secs(15);
    let port = crate::util::free_port();
    let (out, took) = bench_at(port, &[]);
    assert_eq!((out.code, out.stdout.as_str()), (1, ""));
    assert!(out.stderr.contains(&format!("HEAD http://127.0.0.1:{port}/b:")), "{}", out.stderr);
    assert!(out.stderr.contains("onnect"), "{}", out.stderr);
    assert!(took < limit, "{took:?}");

    let (port, _) = tls_recorder(Some(quick_s3()));
    let (out, took) = bench_at(port, &["--tls"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("certificate is not trusted") && out.stderr.contains("--insecure"), "{}", out.stderr);
    assert!(took < limit, "{took:?}");
    let (out, _) = bench_at(port, &["--tls", "--insecure"]);
    assert!(report(&out)["jobs"][0]["write"]["total_ios"].as_u64().unwrap() > 10);

    let refuse: super::Answer = Box::new(|s: &Seen, _: &mut std::collections::HashMap<String, Vec<u8>>| {
        Some(match s.method.as_str() {
            "HEAD" => (404, Vec::new()),
            _ => (403, b"<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>".to_vec()),
        })
    });
    let (port, _) = recorder(Some(refuse));
    let (out, _) = bench_at(port, &[]);
    assert_eq!(out.code, 1);
    assert_eq!(out.stderr, "fiox: s3 bench: cannot create bucket 'b': HTTP 403 AccessDenied: Access Denied\n");

    let puts = std::sync::atomic::AtomicUsize::new(0);
    let stall: super::Answer =
        Box::new(move |s: &Seen, _: &mut std::collections::HashMap<String, Vec<u8>>| match s.method.as_str() {
            "PUT" if puts.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= 5 => None,
            "GET" => Some((200, b"<ListBucketResult></ListBucketResult>".to_vec())),
            _ => Some((200, Vec::new())),
        });
    let (port, _) = recorder(Some(stall));
    let (out, took) = bench_at(port, &["--timeout=2s", "--prefix=st"]);
    assert!(took < limit, "{took:?}");
    let j: serde_json::Value = serde_json::from_str(&out.stdout).unwrap_or_else(|_| panic!("{}", out.stderr));
    assert_eq!(j["jobs"][0]["write"]["total_ios"], 5, "the PUTs answered before the stall");
    assert_eq!(j["jobs"][0]["total_err"], 1);
    assert!(
        out.stderr.contains("PUT http://127.0.0.1:") && out.stderr.contains("no answer in 2.0 s (--timeout)"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("cleanup stopped") && out.stderr.contains("6 objects this run made remain under b/st/"),
        "{}",
        out.stderr
    );

    let busy: super::Answer = Box::new(|s: &Seen, _: &mut std::collections::HashMap<String, Vec<u8>>| {
        Some(match s.method.as_str() {
            "PUT" if s.path != "/b" => (
                503,
                b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>".to_vec(),
            ),
            "GET" => (200, b"<ListBucketResult></ListBucketResult>".to_vec()),
            _ => (200, Vec::new()),
        })
    });
    let (port, _) = recorder(Some(busy));
    let (out, took) = bench_at(port, &[]);
    assert_eq!(out.code, 1, "nothing was done");
    assert!(took < limit, "{took:?}");
    let j: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert!(j["jobs"][0]["total_err"].as_u64().unwrap() > 10, "{}", out.stdout);
    assert_eq!(j["jobs"][0]["write"]["total_ios"], 0);
    assert!(out.stderr.contains("HTTP 503 SlowDown: Please reduce your request rate."), "{}", out.stderr);
}

/// A loopback S3 stand-in serving each connection on a thread of its own, each with the
/// answers `make` gives it (the recorder serves one connection at a time).
fn threaded(make: impl Fn() -> super::Answer + Send + 'static) -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in l.incoming().flatten() {
            let answer = Some(make());
            std::thread::spawn(move || {
                let log = std::sync::Mutex::new(Vec::new());
                super::serve(std::io::BufReader::new(conn), &answer, &mut Default::default(), &log);
            });
        }
    });
    port
}

/// `--part.concurrent`: the parts of one upload go out at once, each on a connection of its
/// own. A server that takes 100 ms a part sees as many parts in flight as asked (4), and one
/// at a time without the flag. On the strict server (warp's `multipart-put` spelling), each
/// 16 MiB object is whole, made of 4 parts (its multipart ETag says so), and no upload is
/// left open.
#[test]
fn s3_bench_part_concurrent_uploads_parts_at_once() {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    for (parallel, want) in [("4", 4), ("1", 1)] {
        let (now, most) = (std::sync::Arc::new(AtomicUsize::new(0)), std::sync::Arc::new(AtomicUsize::new(0)));
        let (n, m) = (now.clone(), most.clone());
        let port = threaded(move || {
            let (now, most) = (n.clone(), m.clone());
            Box::new(move |s: &Seen, _: &mut std::collections::HashMap<String, Vec<u8>>| {
                Some(match s.method.as_str() {
                    "PUT" if s.path.contains("partNumber=") => {
                        most.fetch_max(now.fetch_add(1, SeqCst) + 1, SeqCst);
                        std::thread::sleep(Duration::from_millis(100));
                        now.fetch_sub(1, SeqCst);
                        (200, Vec::new())
                    }
                    "POST" if s.path.ends_with("?uploads=") || s.path.ends_with("?uploads") => (
                        200,
                        b"<InitiateMultipartUploadResult><UploadId>u1</UploadId></InitiateMultipartUploadResult>"
                            .to_vec(),
                    ),
                    "GET" => (200, b"<ListBucketResult></ListBucketResult>".to_vec()),
                    "DELETE" => (204, Vec::new()),
                    _ => (200, b"<CompleteMultipartUploadResult></CompleteMultipartUploadResult>".to_vec()),
                })
            })
        });
        let mut args: Vec<String> = ["s3", "bench", "multipart-put", "--access-key=k", "--secret-key=s", "--bucket=b"]
            .map(String::from)
            .to_vec();
        args.extend(
            ["--concurrent=1", "--duration=1s", "--obj.size=256KiB", "--part.size=64KiB", "--json"].map(String::from),
        );
        args.push(format!("--host=127.0.0.1:{port}"));
        args.push(format!("--part.concurrent={parallel}"));
        let (out, _) = run(&args);
        let j = report(&out);
        let uploads = j["jobs"][0]["write"]["total_ios"].as_u64().unwrap();
        assert!(uploads >= 1, "{}", out.stdout);
        assert_eq!(j["jobs"][1]["write"]["total_ios"].as_u64().unwrap(), 4 * uploads);
        assert_eq!(most.load(SeqCst), want, "parts in flight at once with --part.concurrent={parallel}");
    }

    s3_or_skip!(s3);
    let j = report(&bench(
        s3,
        "multipart-put",
        "fiox-bench-pc",
        &[
            "--obj.size=16MiB",
            "--part.size=5MiB",
            "--part.concurrent=4",
            "--concurrent=1",
            "--noclear",
            "--prefix=pc",
            "--json",
        ],
    ));
    let n = j["jobs"][0]["write"]["total_ios"].as_u64().unwrap();
    assert!(n >= 1);
    assert_eq!(j["jobs"][1]["write"]["total_ios"].as_u64().unwrap(), 4 * n, "5 + 5 + 5 + 1 MiB");
    let listed = listing(s3, "fiox-bench-pc", "pc");
    assert_eq!(listed.len() as u64, n);
    assert!(listed.iter().all(|k| k.1 == 16 << 20), "{listed:?}");
    let etags = s3
        .boto("print([o['ETag'] for o in c.list_objects_v2(Bucket='fiox-bench-pc',Prefix='pc/')['Contents']])")
        .unwrap();
    assert_eq!(etags.matches("-4").count() as u64, n, "{etags}");
    let open = s3.boto("print(len(c.list_multipart_uploads(Bucket='fiox-bench-pc').get('Uploads',[])))").unwrap();
    assert_eq!(open.trim(), "0");
    drop_bucket(s3, "fiox-bench-pc");
}

/// mixed: a DELETE never picks an object a GET or HEAD is reading, and a read never picks one
/// being deleted (warp's rule), so on a few objects with many workers and heavy deletes no
/// request meets a 404: every operation succeeds, and each kind ran.
#[test]
fn s3_bench_mixed_reads_never_race_deletes() {
    s3_or_skip!(s3);
    let weights = ["--get-distrib=40", "--stat-distrib=20", "--put-distrib=20", "--delete-distrib=20"];
    let mut more = vec!["--json", "--objects=6", "--concurrent=12", "--obj.size=1KiB", "--duration=3s"];
    more.extend(weights);
    let j = report(&bench(s3, "mixed", "fiox-bench-race", &more));
    let jobs = j["jobs"].as_array().unwrap();
    let names: Vec<&str> = jobs.iter().map(|x| x["jobname"].as_str().unwrap()).collect();
    assert_eq!(names, ["get", "put", "delete", "stat"], "{j}");
    for job in jobs {
        assert_eq!(job["total_err"], 0, "{}: {}", job["jobname"], j["fiox"]["s3 bench"]["first_error"]);
        let ios: u64 = ["read", "write", "trim"].iter().map(|d| job[d]["total_ios"].as_u64().unwrap()).sum();
        assert!(ios > 5, "{}: {ios}", job["jobname"]);
    }
    assert!(!bucket_exists(s3, "fiox-bench-race"));
}

/// multipart (warp's): one object of --parts parts is uploaded first, then each GET reads one
/// part of it (`partNumber`): every GET moves exactly a part's bytes, not the whole object's;
/// the object is whole on the server (3 x 5 MiB) and no upload is left open.
#[test]
fn s3_bench_multipart_gets_parts_of_one_object() {
    s3_or_skip!(s3);
    let more = ["--parts=3", "--part.size=5MiB", "--concurrent=2", "--noclear", "--prefix=mpg", "--json"];
    let j = report(&bench(s3, "multipart", "fiox-bench-mg", &more));
    let jobs = j["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1, "{j}");
    let (job, read) = (&jobs[0], &jobs[0]["read"]);
    assert_eq!((job["jobname"].as_str(), job["total_err"].as_u64()), (Some("get"), Some(0)));
    assert_eq!(job["job options"]["parts"], 3);
    let n = read["total_ios"].as_u64().unwrap();
    assert!(n > 2, "{n} part GETs in 2 s");
    assert_eq!(read["io_bytes"].as_u64().unwrap(), n * (5 << 20), "each GET reads one part");
    assert_eq!(listing(s3, "fiox-bench-mg", "mpg"), [("mpg/fiox-multipart.bin".to_string(), 15 << 20)]);
    let open = s3.boto("print(len(c.list_multipart_uploads(Bucket='fiox-bench-mg').get('Uploads',[])))").unwrap();
    assert_eq!(open.trim(), "0");
    drop_bucket(s3, "fiox-bench-mg");
}
