//! dedupe_mode / dedupe_working_set_percentage / dedupe_global, opendir, lockfile and
//! create_serialize against fio 3.33 (measurements in docs/fio-observed/files2.md).

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::Path;

use crate::util::{fio, fiox, scratch, skip};
use crate::util::{json, tool};

/// Each 4 KiB block of the files, as a hash per file.
fn blocks(dir: &Path, files: &[&str]) -> Vec<Vec<u64>> {
    files
        .iter()
        .map(|f| {
            let data = std::fs::read(dir.join(f)).unwrap();
            data.chunks(4096)
                .map(|b| {
                    let mut h = std::collections::hash_map::DefaultHasher::new();
                    b.hash(&mut h);
                    h.finish()
                })
                .collect()
        })
        .collect()
}

/// (percent of blocks that repeat another, distinct blocks that repeat, blocks in every file).
fn dedupe_stats(files: &[Vec<u64>]) -> (f64, usize, usize) {
    let mut count: HashMap<u64, u32> = HashMap::new();
    for f in files {
        for &b in f {
            *count.entry(b).or_default() += 1;
        }
    }
    let total: usize = files.iter().map(Vec::len).sum();
    let dup = 100.0 * (total - count.len()) as f64 / total as f64;
    let repeated = count.values().filter(|&&c| c > 1).count();
    let shared = match files {
        [a, b] => {
            let a: std::collections::HashSet<_> = a.iter().collect();
            b.iter().filter(|x| a.contains(x)).collect::<std::collections::HashSet<_>>().len()
        }
        _ => 0,
    };
    (dup, repeated, shared)
}

fn dedupe_run(fiox_run: bool, extra: &[&str], numjobs: &str) -> (f64, usize, usize) {
    let dir = scratch();
    let mut args = vec!["--output-format=json", "--name=j", "--rw=write", "--bs=4k", "--size=8m"];
    args.extend_from_slice(&["--dedupe_percentage=50", "--numjobs", numjobs]);
    args.extend_from_slice(extra);
    let out = tool(fiox_run, dir.path(), &args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let names: Vec<String> = (0..numjobs.parse::<u32>().unwrap()).map(|k| format!("j.{k}.0")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    dedupe_stats(&blocks(dir.path(), &names))
}

#[test]
fn duplicate_share_matches_fio_in_both_modes_and_with_dedupe_global() {
    let cases: [(&[&str], &str); 4] = [
        (&["--dedupe_mode=repeat"], "1"),
        (&["--dedupe_mode=working_set"], "1"),
        (&["--dedupe_mode=working_set", "--dedupe_working_set_percentage=20"], "1"),
        (&["--dedupe_mode=working_set", "--dedupe_global=1"], "2"),
    ];
    for (extra, n) in cases {
        let (fio_dup, fio_rep, fio_shared) = dedupe_run(false, extra, n);
        let (dup, rep, shared) = dedupe_run(true, extra, n);
        // 2048 blocks per file at 50%: the binomial spread is about 1.1 points.
        assert!((dup - fio_dup).abs() < 4.0, "{extra:?}: fiox {dup:.1}% duplicates, fio {fio_dup:.1}%");
        if extra.contains(&"--dedupe_mode=working_set") {
            // The working set is 5% (or 20%) of 2048 blocks; the members that random picks
            // happen to repeat vary a little (about 375 of 409 at 20%).
            assert!(
                rep.abs_diff(fio_rep) <= fio_rep / 20 + 2,
                "{extra:?}: {rep} distinct repeated blocks, fio {fio_rep}"
            );
        }
        // dedupe_global: both files hold every member of the one shared set.
        assert_eq!(shared, fio_shared, "{extra:?}: blocks the two files share");
    }
}

#[test]
fn dedupe_global_example_job_file_runs() {
    let dir = scratch();
    let job = dir.path().join("d.fio");
    // fio's examples/dedupe-global.fio, at 8 MiB instead of 100 MiB and with psync.
    let text = "[global]\nioengine=psync\nsize=8m\ndedupe_mode=working_set\ndedupe_global=1\n\
                dedupe_percentage=50\nblocksize=4k\nrw=write\nbuffer_compress_percentage=50\n\
                dedupe_working_set_percentage=50\n\n[a]\n\n[b]\n";
    std::fs::write(&job, text).unwrap();
    let out = fiox(dir.path(), &["--output-format=terse", job.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    let (dup, _, shared) = dedupe_stats(&blocks(dir.path(), &["a.0.0", "b.0.0"]));
    assert!((dup - 50.0).abs() < 4.0, "{dup}");
    assert!(shared > 0);
}

/// `(file, action, offset)` of an iolog, without close lines (when fio and fiox close files
/// differs, see the report).
fn iolog(path: &Path) -> Vec<(String, String, String)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .filter(|w| w.len() >= 3 && w[2] != "close")
        .map(|w| (w[1].clone(), w[2].clone(), w.get(3).cloned().unwrap_or_default()))
        .collect()
}

#[test]
fn opendir_takes_every_regular_file_in_fio_order() {
    for fiox_run in [false, true] {
        let dir = scratch();
        let d = dir.path().join("D");
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::write(d.join("b"), vec![1u8; 16384]).unwrap();
        std::fs::write(d.join("sub/c"), vec![2u8; 4096]).unwrap();
        std::fs::write(d.join("a"), vec![3u8; 8192]).unwrap();
        std::os::unix::fs::symlink("a", d.join("link")).unwrap();
        let out = tool(fiox_run, dir.path(), &["--name=j", "--opendir=D", "--rw=read", "--write_iolog=il"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(out.stdout.starts_with("fio: opendir added 3 files\n"), "{}", out.stdout);
        // The order is the directory's own (not sorted); the next test compares it with fio's
        // on one directory.
        let log = iolog(&dir.path().join("il"));
        let reads: u64 = log.iter().filter(|l| l.1 == "read").count() as u64;
        assert_eq!(reads, 7, "{log:?}");
        let files: Vec<&String> = log.iter().filter(|l| l.1 == "add").map(|l| &l.0).collect();
        let mut sorted = files.clone();
        sorted.sort();
        assert_eq!(sorted, ["D/a", "D/b", "D/sub/c"], "{log:?}");
    }
}

#[test]
fn opendir_iolog_matches_fio_on_one_directory() {
    let dir = scratch();
    let d = dir.path().join("D");
    std::fs::create_dir_all(d.join("sub")).unwrap();
    std::fs::write(d.join("b"), vec![1u8; 16384]).unwrap();
    std::fs::write(d.join("sub/c"), vec![2u8; 4096]).unwrap();
    std::fs::write(d.join("a"), vec![3u8; 8192]).unwrap();
    let mut logs = Vec::new();
    for (fiox_run, name) in [(false, "fio.log"), (true, "fiox.log")] {
        let out = tool(
            fiox_run,
            dir.path(),
            &["--output-format=json", "--name=j", "--opendir=D/", "--rw=write", "--size=12k", "--write_iolog", name],
        );
        assert_eq!(out.code, 0, "{}", out.stderr);
        let j = json(&out);
        assert_eq!(j["jobs"][0]["write"]["io_bytes"], 12288);
        assert_eq!(j["jobs"][0]["write"]["total_ios"], 3);
        logs.push(iolog(&dir.path().join(name)));
    }
    // fio names files DIR + "/" + name: "D//b".
    assert!(logs[0][0].0.starts_with("D//"), "{:?}", logs[0]);
    assert_eq!(logs[1], logs[0]);
}

#[test]
fn lockfile_keeps_bytes_and_counts_of_fio() {
    for mode in ["exclusive", "readwrite", "readwrite:4"] {
        let mut seen = Vec::new();
        for fiox_run in [false, true] {
            let dir = scratch();
            std::fs::write(dir.path().join("f"), vec![7u8; 65536]).unwrap();
            let lock = format!("--lockfile={mode}");
            let args = [
                "--output-format=json",
                &lock,
                "--filename=f",
                "--bs=4k",
                "--size=64k",
                "--name=a",
                "--rw=randread",
                "--name=b",
                "--rw=randwrite",
                "--numjobs=2",
            ];
            let out = tool(fiox_run, dir.path(), &args);
            assert_eq!(out.code, 0, "{mode}: {}", out.stderr);
            assert!(out.stderr.is_empty(), "{}", out.stderr);
            let j = json(&out);
            let jobs: Vec<(u64, u64, u64, u64)> = j["jobs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| {
                    let n = |d: &str, k: &str| x[d][k].as_u64().unwrap();
                    (n("read", "io_bytes"), n("read", "total_ios"), n("write", "io_bytes"), n("write", "total_ios"))
                })
                .collect();
            seen.push(jobs);
        }
        assert_eq!(seen[0], seen[1], "lockfile={mode}");
    }
}

/// Two jobs on one file with every pread/pwrite slowed to 100 ms by strace: the longest job
/// time shows whether their I/O overlapped (measured with fio: 0.5 s without a lock, 1 s
/// exclusive, 0.5 s for two readers under readwrite).
#[test]
fn lockfile_serialises_io_as_fio_does() {
    if !Path::new("/usr/bin/strace").exists() {
        skip!("strace is not installed");
    }
    let longest = |fiox_run: bool, mode: &str, a: &str, b: &str| -> u64 {
        let dir = scratch();
        std::fs::write(dir.path().join("f"), vec![7u8; 65536]).unwrap();
        let bin = if fiox_run { crate::util::fiox_bin() } else { crate::util::fio_bin() };
        let out = std::process::Command::new("/usr/bin/strace")
            .args([
                "-f",
                "-o",
                "/dev/null",
                "-e",
                "trace=pread64,pwrite64",
                "-e",
                "inject=pread64,pwrite64:delay_exit=100000",
            ])
            .arg(bin)
            .args(["--output-format=json", &format!("--lockfile={mode}"), "--filename=f", "--bs=4k", "--size=20k"])
            .args(["--name=a", &format!("--rw={a}"), "--name=b", &format!("--rw={b}")])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let j: serde_json::Value = serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap();
        j["jobs"].as_array().unwrap().iter().map(|x| x["job_runtime"].as_u64().unwrap()).max().unwrap()
    };
    for fiox_run in [false, true] {
        // 5 I/Os of 100 ms each per job: 500 ms in parallel, 1000 ms one at a time. The
        // bounds are loose; the machine is shared.
        assert!(longest(fiox_run, "none", "write", "write") < 800);
        assert!(longest(fiox_run, "exclusive", "write", "write") >= 900);
        assert!(longest(fiox_run, "exclusive", "read", "read") >= 900);
        assert!(longest(fiox_run, "readwrite", "read", "read") < 800);
        assert!(longest(fiox_run, "readwrite", "read", "write") >= 900);
    }
}

#[test]
fn create_serialize_zero_lays_out_every_job_as_fio() {
    let mut seen = Vec::new();
    for fiox_run in [false, true] {
        let dir = scratch();
        let args = ["--create_serialize=0", "--rw=read", "--bs=64k", "--size=1m", "--name=a", "--name=b", "--name=c"];
        let out = tool(fiox_run, dir.path(), &args);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(out.stderr.is_empty(), "{}", out.stderr);
        let mut lines: Vec<&str> = out.stdout.lines().filter(|l| l.contains("Laying out")).collect();
        // Parallel layouts print in no fixed order, in fio as in fiox.
        lines.sort();
        let sizes: Vec<u64> =
            ["a.0.0", "b.0.0", "c.0.0"].iter().map(|f| std::fs::metadata(dir.path().join(f)).unwrap().len()).collect();
        seen.push((lines.join("\n"), sizes));
    }
    assert_eq!(seen[0], seen[1]);
}

#[test]
fn bad_values_are_refused_before_any_io() {
    let cases = [
        ("--lockfile=bogus", "lockfile"),
        ("--dedupe_mode=bogus", "dedupe_mode"),
        ("--dedupe_working_set_percentage=101", "dedupe_working_set_percentage"),
        ("--create_serialize=2", "create_serialize"),
        ("--opendir=NOPE", "opendir=NOPE"),
        // An empty directory adds nothing; without size= there is then no file to use.
        ("--opendir=E", "size"),
    ];
    for (arg, name) in cases {
        let dir = scratch();
        std::fs::create_dir(dir.path().join("E")).unwrap();
        let out = fiox(dir.path(), &["--name=j", "--rw=write", arg]);
        assert_ne!(out.code, 0, "{arg}");
        assert!(out.stderr.contains(name), "{arg}: {}", out.stderr);
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
        assert_eq!(crate::util::listing(dir.path()), ["E"], "{arg}: no file made");
        // fio refuses all of them too.
        assert_ne!(fio(dir.path(), &["--name=j", "--rw=write", arg]).code, 0, "{arg}");
    }
}

#[test]
fn time_based_without_runtime_warns_and_runs_once_as_fio() {
    for fiox_run in [false, true] {
        let dir = scratch();
        let out = tool(
            fiox_run,
            dir.path(),
            &["--output-format=json", "--name=j", "--ioengine=null", "--size=1m", "--time_based"],
        );
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(out.stderr.contains("time_based requires a runtime"), "{}", out.stderr);
        assert_eq!(json(&out)["jobs"][0]["read"]["io_bytes"], 1048576);
    }
}

/// Random jobs over several files whose sizes are not whole blocks: fio's pass ends when every
/// whole block is done (86016 bytes over 4 files is 5.25 blocks each: 20 I/Os, not 21); without
/// the block map fio moves the full size.
#[test]
fn random_passes_over_files_with_partial_blocks_end_like_fio() {
    let dir = scratch();
    for extra in [
        &["--rw=randwrite"][..],
        &["--rw=randrw"],
        &["--rw=randread", "--file_service_type=sequential"],
        &["--rw=randwrite", "--norandommap"],
        &["--rw=randwrite", "--bsrange=4k-8k"],
    ] {
        let mut args = vec!["--name=x", "--filename=a:b:c:d", "--size=86016", "--bs=4k", "--output-format=json"];
        args.extend_from_slice(extra);
        let bytes = |fiox_run| {
            let v = json(&tool(fiox_run, dir.path(), &args));
            let j = &v["jobs"][0];
            j["read"]["io_bytes"].as_u64().unwrap() + j["write"]["io_bytes"].as_u64().unwrap()
        };
        assert_eq!(bytes(true), bytes(false), "{extra:?}");
    }
}

#[test]
fn a_later_phase_reads_a_file_an_earlier_phase_creates_as_fio_does() {
    // fio sizes a file when its phase starts: the second phase reads what the first wrote,
    // with no size= of its own. Neither file exists before the run.
    let text = "[global]\nioengine=psync\nbs=4k\n[w]\nfilename=f\nrw=write\nsize=1m\n\
                [r]\nstonewall\nfilename=f\nrw=read\n[w2]\nstonewall\nfilename=g\nrw=write\nsize=512k\n\
                [r2]\nfilename=g2\nrw=read\nsize=64k\n";
    let mut seen = Vec::new();
    for fiox_run in [false, true] {
        let dir = scratch();
        std::fs::write(dir.path().join("j.fio"), text).unwrap();
        let out = tool(fiox_run, dir.path(), &["--output-format=json", "j.fio"]);
        assert_eq!(out.code, 0, "fiox {fiox_run}: {}", out.stderr);
        let v = json(&out);
        let per: Vec<(String, u64, u64, u64)> = v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| {
                let name = j["jobname"].as_str().unwrap().to_string();
                (
                    name,
                    j["read"]["io_bytes"].as_u64().unwrap(),
                    j["read"]["total_ios"].as_u64().unwrap(),
                    j["write"]["io_bytes"].as_u64().unwrap(),
                )
            })
            .collect();
        seen.push(per);
    }
    assert_eq!(seen[0], seen[1], "fio, then fiox");
    assert_eq!(seen[1][1], ("r".to_string(), 1 << 20, 256, 0));
    // A file no earlier phase writes is still refused before any I/O.
    let dir = scratch();
    let out = fiox(dir.path(), &["--name=r", "--filename=nope", "--rw=read"]);
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("'nope' does not exist and no size= was given"), "{}", out.stderr);
    assert!(!dir.path().join("nope").exists());
}
