//! What reaches the OSD (reference/ceph.md 9.2.5): for fio 3.33 and fiox on the same rbd and
//! rados jobs, the OSD's own counters (`ceph daemon osd.0 perf dump`) read before and after
//! each run. Data bytes written must be equal and write operations too; reads and
//! read-modify-write operations (an image's header, lock and object map) may differ by a few
//! per run: fiox opens an image once more, to check the job against its size before any I/O.
//!
//! The test runs alone on the cluster (no other test's operations in the counters), with
//! librbd's I/O scheduler off: the default one merges a write into an earlier one to the same
//! object still queued, so how many operations a sequential job makes depends on timing (16 MiB
//! of 4 KiB writes at depth 16 were 640 operations for fio and 911 for fiox in one run, the
//! same bytes).

use super::*;

const COUNTERS: [&str; 6] = ["op_w", "op_w_in_bytes", "op_r", "op_r_out_bytes", "op_rw", "op_rw_in_bytes"];

fn counters(c: &Cluster) -> BTreeMap<&'static str, i64> {
    let o = c.tool("ceph", &["daemon", "osd.0", "perf", "dump"]);
    assert_eq!(o.code, 0, "ceph daemon osd.0 perf dump: {}", o.stderr);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    COUNTERS.iter().map(|k| (*k, v["osd"][k].as_i64().unwrap())).collect()
}

#[test]
fn osd_counters_match_fio() {
    cluster_or_skip!(c, alone);
    let dir = util::scratch();
    let conf = dir.path().join("nosched.conf");
    let text = std::fs::read_to_string(&c.conf).unwrap().replace("[client]", "[client]\nrbd io scheduler = none");
    std::fs::write(&conf, text).unwrap();
    let conf_opt = format!("--conf={}", conf.display());
    let cases: &[(&str, &[&str])] = &[
        ("seq write", &["--rw=write", "--bs=4k", "--size=16m", "--offset=8m", "--iodepth=16"]),
        ("random write", &["--rw=randwrite", "--bs=16k", "--size=8m", "--iodepth=8", "--randseed=7"]),
        ("trim", &["--rw=trim", "--bs=1m", "--size=4m", "--offset=4m", "--iodepth=1"]),
        ("flushes", &["--rw=randwrite", "--bs=4k", "--size=1m", "--fsync=4", "--iodepth=1"]),
        ("rados write", &["--rw=write", "--bs=64k", "--size=8m", "--nrfiles=4", "--iodepth=8"]),
    ];
    for (what, case) in cases {
        let mut deltas = Vec::new();
        for fiox_run in [false, true] {
            // (fio takes an engine's options only after --ioengine.)
            let mut args: Vec<String>;
            if *what == "rados write" {
                let name = format!("osdops{}", u8::from(fiox_run));
                args =
                    vec![format!("--name={name}"), "--ioengine=rados".into(), "--pool=bench".into(), conf_opt.clone()];
            } else {
                let image = c.image("osd", 64);
                args = vec!["--name=osd".into(), "--ioengine=rbd".into(), "--pool=bench".into()];
                args.push(format!("--rbdname={image}"));
                if *what == "trim" {
                    // Data to trim, written before the counters are read.
                    let mut pre = args.clone();
                    pre.extend(["--rw=write", "--bs=1m", "--size=16m"].map(String::from));
                    let o = Command::new(if fiox_run { util::fiox_bin() } else { util::fio_bin() })
                        .args(&pre)
                        .env("CEPH_CONF", &conf)
                        .current_dir(dir.path())
                        .output()
                        .unwrap();
                    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
                }
            }
            args.extend(case.iter().map(|s| s.to_string()));
            let before = counters(c);
            let o = Command::new("timeout")
                .args(["-k", "5", "120"])
                .arg(if fiox_run { util::fiox_bin() } else { util::fio_bin() })
                .args(&args)
                .env("CEPH_CONF", &conf)
                .current_dir(dir.path())
                .output()
                .unwrap();
            assert!(o.status.success(), "{what} {args:?}: {}", String::from_utf8_lossy(&o.stderr));
            let after = counters(c);
            let d: BTreeMap<&str, i64> = COUNTERS.iter().map(|k| (*k, after[k] - before[k])).collect();
            deltas.push(d);
        }
        c.remove_objects("osdops");
        let (fio, fiox) = (&deltas[0], &deltas[1]);
        let msg = format!("{what}: OSD counter deltas, fio {fio:?}, fiox {fiox:?}");
        assert_eq!(fio["op_w_in_bytes"], fiox["op_w_in_bytes"], "{msg}");
        assert_eq!(fio["op_w"], fiox["op_w"], "{msg}");
        assert!(fio["op_w"] > 0, "{msg}");
        // The image's metadata: header, lock and object map reads and class calls. fiox opens
        // the image three more times than fio (the planner's size check and the run manifest's
        // looks before and after), about 8 reads each (17 for fio, 41 for fiox here).
        assert!((fio["op_r"] - fiox["op_r"]).abs() <= 32, "{msg}");
        assert!((fio["op_rw"] - fiox["op_rw"]).abs() <= 4, "{msg}");
        assert_eq!(fio["op_rw_in_bytes"], fiox["op_rw_in_bytes"], "{msg}");
    }
}
