//! Where and as whom a job runs (uid/gid, NUMA, cgroup, I/O scheduler, CPU masks) and the
//! hints it gives the kernel (fadvise_hint, write_hint), each against the real fio 3.33 on the
//! same job where fio can run it here; `stats=0`.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

use crate::util::{fio_bin, fiox_bin, scratch, skip, strace};
use crate::util::{json, tool};

/// The system calls named in `calls` that both tools make on the same job, as strace prints
/// them with the descriptor and the process id cut off.
fn traced(fiox_run: bool, dir: &Path, calls: &str, args: &[&str]) -> Vec<String> {
    strace(fiox_run, dir, calls, args)
        .iter()
        .filter(|l| calls.split(',').any(|c| l.contains(&format!("{c}("))))
        .map(|l| {
            // "1234  fadvise64(7, 0, 0, POSIX_FADV_RANDOM) = 0" -> "fadvise64 POSIX_FADV_RANDOM = 0"
            let call = l.split_whitespace().nth(1).unwrap_or("").split('(').next().unwrap_or("").to_string();
            let args = l.split_once('(').map_or("", |x| x.1);
            let last = args.rsplit_once(')').map_or("", |x| x.0).rsplit(", ").next().unwrap_or("").to_string();
            let ret = l.rsplit_once(" = ").map_or("", |x| x.1).to_string();
            format!("{call} {last} = {ret}")
        })
        .collect()
}

#[test]
fn fadvise_hint_follows_rw_like_fio() {
    let dir = scratch();
    for (rw, hint, want) in [
        ("read", "1", Some("POSIX_FADV_SEQUENTIAL")),
        ("randread", "1", Some("POSIX_FADV_RANDOM")),
        ("read", "random", Some("POSIX_FADV_RANDOM")),
        ("randread", "0", None),
    ] {
        let args = [
            "--name=f",
            "--filename=f.dat",
            "--size=64k",
            &format!("--rw={rw}"),
            &format!("--fadvise_hint={hint}"),
            "--output=/dev/null",
        ];
        let pattern = |v: Vec<String>| -> Vec<String> { v.into_iter().filter(|c| !c.contains("DONTNEED")).collect() };
        let fio_calls = pattern(traced(false, dir.path(), "fadvise64", &args));
        let fiox_calls = pattern(traced(true, dir.path(), "fadvise64", &args));
        assert_eq!(fiox_calls, fio_calls, "rw={rw} fadvise_hint={hint}");
        assert_eq!(fiox_calls.first().map(|c| c.contains(want.unwrap_or("-"))), want.map(|_| true), "{fiox_calls:?}");
    }
}

#[test]
fn write_hint_reaches_the_kernel_like_fio() {
    let dir = scratch();
    let args = ["--name=h", "--filename=h.dat", "--size=64k", "--rw=write", "--write_hint=short", "--output=/dev/null"];
    let _ = &dir;
    // strace prints F_SET_RW_HINT as its number, 0x40c, and the value as a pointer.
    let count = |fiox_run: bool| {
        let bin = if fiox_run { fiox_bin() } else { fio_bin() };
        let d = scratch();
        let out = Command::new("strace")
            .args(["-f", "-qq", "-e", "trace=fcntl", "-o", "t.txt"])
            .arg(bin)
            .args(args)
            .current_dir(d.path())
            .output()
            .unwrap();
        assert!(out.status.success());
        std::fs::read_to_string(d.path().join("t.txt"))
            .unwrap()
            .lines()
            .filter(|l| l.contains("0x40c") && l.ends_with("= 0"))
            .count()
    };
    assert_eq!(count(true), 1, "one successful F_SET_RW_HINT");
    assert_eq!(count(true), count(false));
}

#[test]
fn uid_and_gid_run_the_job_as_that_user_like_fio() {
    let dir = scratch();
    // Both tools must be able to enter the scratch directory as the user.
    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    // fio 3.33 lays the file out as root and then fails to open it as the user (EACCES) unless
    // the job creates it itself (create_on_open=1); fiox hands the laid-out file to the user.
    for (fiox_run, file, on_open) in [(false, "fio.dat", "1"), (true, "fiox.dat", "0")] {
        let name = format!("--filename={file}");
        let on_open = format!("--create_on_open={on_open}");
        let args = [
            "--name=u",
            &name,
            &on_open,
            "--size=64k",
            "--rw=write",
            "--uid=65534",
            "--gid=65534",
            "--output-format=json",
        ];
        let out = tool(fiox_run, dir.path(), &args);
        assert_eq!(out.code, 0, "fiox {fiox_run}: {}", out.stderr);
        assert_eq!(json(&out)["jobs"][0]["write"]["io_bytes"], 65536);
        let meta = std::fs::metadata(dir.path().join(file)).unwrap();
        assert_eq!((meta.uid(), meta.gid()), (65534, 65534), "fiox {fiox_run}: the file belongs to the job's user");
    }
    // The user cannot write a root-only file: the job fails, as it would for that user.
    std::fs::write(dir.path().join("root.dat"), vec![0u8; 65536]).unwrap();
    std::fs::set_permissions(dir.path().join("root.dat"), std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let out = tool(true, dir.path(), &["--name=u", "--filename=root.dat", "--size=64k", "--rw=read", "--uid=65534"]);
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("root.dat") && out.stderr.contains("ermission denied"), "{}", out.stderr);
}

#[test]
fn numa_options_run_on_node_0_and_name_a_missing_node() {
    let dir = scratch();
    if !Path::new("/sys/devices/system/node/node0").exists() {
        skip!("the kernel shows no NUMA node 0");
    }
    let args = [
        "--name=n",
        "--ioengine=null",
        "--size=1m",
        "--numa_cpu_nodes=0",
        "--numa_mem_policy=bind:0",
        "--output-format=json",
    ];
    for fiox_run in [false, true] {
        let out = tool(fiox_run, dir.path(), &args);
        assert_eq!(out.code, 0, "fiox {fiox_run}: {}", out.stderr);
        assert_eq!(json(&out)["jobs"][0]["read"]["io_bytes"], 1 << 20);
    }
    let out = tool(true, dir.path(), &["--name=n", "--ioengine=null", "--size=1m", "--numa_cpu_nodes=63"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("no NUMA node 63 (nodes: 0"), "{}", out.stderr);
    let out = tool(true, dir.path(), &["--name=n", "--ioengine=null", "--size=1m", "--numa_mem_policy=prefer:0-1"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("'numa_mem_policy'") && out.stderr.contains("one node"), "{}", out.stderr);
    for bad in ["--cpumask=0", "--gtod_cpu=4000"] {
        let out = tool(true, dir.path(), &["--name=n", "--ioengine=null", "--size=1m", bad]);
        assert_eq!(out.code, 1, "{bad}");
        assert!(!out.stderr.is_empty() && !out.stdout.contains("READ:"), "{bad}: {}", out.stderr);
    }
}

/// The blkio cgroup v1 hierarchy, where this machine has one.
fn blkio() -> Option<std::path::PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    mounts.lines().find_map(|l| {
        let w: Vec<&str> = l.split_whitespace().collect();
        (w.len() > 3 && w[2] == "cgroup" && w[3].split(',').any(|o| o == "blkio")).then(|| w[1].into())
    })
}

#[test]
fn cgroup_holds_the_job_while_it_runs_and_goes_away_after() {
    let Some(root) = blkio() else {
        // Without v1 blkio the job is refused with the reason.
        let out = tool(true, scratch().path(), &["--name=c", "--ioengine=null", "--size=1m", "--cgroup=fiox-t"]);
        assert_eq!(out.code, 1);
        assert!(out.stderr.contains("cgroup"), "{}", out.stderr);
        return;
    };
    let dir = scratch();
    let name = format!("fiox-test-{}", std::process::id());
    let cg = root.join(&name);
    let flag = format!("--cgroup={name}");
    // While the job runs, its thread is a task of the cgroup.
    let mut child = Command::new(fiox_bin())
        .args([
            "--name=c",
            "--ioengine=null",
            "--size=1m",
            "--time_based",
            "--runtime=2",
            "--numjobs=2",
            &flag,
            "--output=/dev/null",
        ])
        .current_dir(dir.path())
        .spawn()
        .unwrap();
    let mut tasks = 0;
    for _ in 0..40 {
        std::thread::sleep(std::time::Duration::from_millis(50));
        tasks = std::fs::read_to_string(cg.join("tasks")).map(|t| t.lines().count()).unwrap_or(0);
        if tasks > 0 {
            break;
        }
    }
    assert!(child.wait().unwrap().success());
    assert_eq!(tasks, 2, "both clones' threads join the cgroup");
    assert!(!cg.exists(), "the cgroup fiox made is removed after the run");
    // cgroup_nodelete keeps it, and fio does the same with the same options.
    for fiox_run in [false, true] {
        let out = tool(
            fiox_run,
            dir.path(),
            &["--name=c", "--ioengine=null", "--size=1m", &flag, "--cgroup_nodelete=1", "--output-format=json"],
        );
        assert_eq!(out.code, 0, "fiox {fiox_run}: {}", out.stderr);
        assert_eq!(json(&out)["jobs"][0]["read"]["io_bytes"], 1 << 20);
        assert!(cg.is_dir(), "fiox {fiox_run}: cgroup_nodelete keeps the cgroup");
        std::fs::remove_dir(&cg).unwrap();
    }
}

#[test]
fn ioscheduler_switches_the_device_under_the_file() {
    let dir = scratch();
    std::fs::write(dir.path().join("s.dat"), vec![0u8; 65536]).unwrap();
    // The disk under the scratch directory (a partition's parent), if it has a scheduler.
    let id = std::fs::metadata(dir.path()).unwrap().dev();
    let (major, minor) = (((id >> 8) & 0xfff) | ((id >> 32) & !0xfff), (id & 0xff) | ((id >> 12) & !0xff));
    let dev = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok().and_then(|p| {
        let disk = if p.join("queue").exists() { p } else { p.parent()?.to_path_buf() };
        disk.join("queue/scheduler").exists().then(|| disk.file_name().unwrap().to_string_lossy().into_owned())
    });
    let Some(dev) = dev else { skip!("the disk under the scratch directory has no I/O scheduler") };
    let sched = format!("/sys/block/{dev}/queue/scheduler");
    let before = std::fs::read_to_string(&sched).unwrap();
    let current = before.split_whitespace().find(|w| w.starts_with('[')).unwrap().trim_matches(['[', ']']).to_string();
    let other = if current == "none" { "mq-deadline" } else { "none" };
    let out = tool(
        true,
        dir.path(),
        &["--name=s", "--filename=s.dat", "--size=64k", &format!("--ioscheduler={other}"), "--output=/dev/null"],
    );
    let after = std::fs::read_to_string(&sched).unwrap();
    std::fs::write(&sched, &current).unwrap();
    if !before.contains(other) {
        skip!("{dev} offers no {other} scheduler: {before}");
    }
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(after.contains(&format!("[{other}]")), "{after}");
    let out = tool(true, dir.path(), &["--name=s", "--filename=s.dat", "--size=64k", "--ioscheduler=no-such-sched"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("ioscheduler=no-such-sched") && out.stderr.contains("offers only"), "{}", out.stderr);
}

#[test]
fn stats_0_leaves_the_job_out_of_every_report_like_fio() {
    let dir = scratch();
    let args = [
        "--name=quiet",
        "--ioengine=null",
        "--size=1m",
        "--stats=0",
        "--name=seen",
        "--ioengine=null",
        "--size=2m",
        "--output-format=json",
    ];
    // fio 3.33 adds a nameless all-zero entry for the quiet job at the end; fiox leaves it out.
    let names = |fiox_run: bool| -> Vec<(String, u64)> {
        let out = tool(fiox_run, dir.path(), &args);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let j = json(&out);
        let jobs = j["jobs"].as_array().unwrap();
        assert!(jobs.iter().all(|j| j["jobname"].as_str() != Some("quiet")));
        jobs.iter()
            .filter_map(|j| Some((j["jobname"].as_str()?.to_string(), j["read"]["io_bytes"].as_u64()?)))
            .collect()
    };
    assert_eq!(names(true), names(false));
    assert_eq!(names(true), vec![("seen".to_string(), 2 << 20)]);
}
