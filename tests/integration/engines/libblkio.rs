//! `libblkio` (fio 3.42) with libblkio's `io_uring` driver on a scratch file, against a fio 3.42
//! built with its libblkio engine (`scripts/fio-blkio.sh`, which also unpacks libblkio 1.x
//! under the same folder: Debian 12 has no libblkio package). fiox loads libblkio.so.1 at run
//! time, from LD_LIBRARY_PATH here. Compared: bytes and I/O counts per direction and syncs, the
//! data each tool writes as the other reads and verifies it, where plain bytes land in the file,
//! and the refusals (one line, exit 1, no I/O).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{json, scratch, Out};

/// The fio 3.42 binary with libblkio and the folder holding libblkio.so.1, or why not.
fn tools() -> Result<(PathBuf, PathBuf), String> {
    let fio = std::env::var_os("FIOX_FIO_BLKIO")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp/fio-3.42-blkio/fio-3.42/fio"));
    let lib = fio.parent().and_then(Path::parent).map(|d| d.join("libblkio/lib")).unwrap_or_default();
    if !fio.exists() || !lib.join("libblkio.so.1").exists() {
        return Err(format!(
            "no fio 3.42 with libblkio at {} (scripts/fio-blkio.sh builds it; FIOX_FIO_BLKIO names it)",
            fio.display()
        ));
    }
    Ok((fio, lib))
}

struct Tools {
    fio: PathBuf,
    lib: PathBuf,
    dir: tempfile::TempDir,
    img: PathBuf,
}

impl Tools {
    /// The tools and a zero-filled scratch file of `size` bytes; `None` (skipped) without them.
    fn new(size: u64) -> Option<Tools> {
        let (fio, lib) = match tools() {
            Ok(t) => t,
            Err(why) => {
                crate::util::skips::skipped(&why);
                return None;
            }
        };
        let dir = scratch();
        let img = dir.path().join("disk.img");
        std::fs::File::create(&img).and_then(|f| f.set_len(size)).expect("the scratch file");
        Some(Tools { fio, lib, dir, img })
    }

    fn path_arg(&self) -> String {
        format!("--libblkio_path={}", self.img.display())
    }

    /// fio (`fiox_run` false) or fiox with `args`, libblkio's driver io_uring on the file.
    fn run(&self, fiox_run: bool, args: &[&str]) -> Out {
        let path = self.path_arg();
        let base = ["--ioengine=libblkio", "--libblkio_driver=io_uring", path.as_str()];
        let mut cmd = if fiox_run {
            let mut c = Command::new(crate::util::fiox_bin());
            c.env("LD_LIBRARY_PATH", &self.lib);
            c
        } else {
            let mut c = Command::new("timeout");
            c.args(["-k", "5", "120"]).arg(&self.fio);
            c
        };
        cmd.args(base).args(args).current_dir(self.dir.path());
        Out::from(cmd.output().expect("the program starts"))
    }
}

/// `(io_bytes, total_ios)` of each direction, then the sync count, of the first job.
fn figures(out: &Out) -> Vec<(u64, u64)> {
    let j = &json(out)["jobs"][0];
    let mut v: Vec<(u64, u64)> = ["read", "write", "trim"]
        .iter()
        .map(|d| (j[d]["io_bytes"].as_u64().unwrap(), j[d]["total_ios"].as_u64().unwrap()))
        .collect();
    v.push((0, j["sync"]["total_ios"].as_u64().unwrap_or(0)));
    v
}

#[test]
fn libblkio_moves_what_fio_moves() {
    let Some(t) = Tools::new(8 << 20) else { return };
    let jobs: &[&[&str]] = &[
        &["--rw=read", "--bs=4k"],
        &["--rw=write", "--bs=64k", "--size=4m", "--direct=1"],
        &["--rw=randwrite", "--bs=16k", "--size=4m", "--libblkio_vectored=1"],
        &["--rw=randread", "--bs=4k", "--size=2m", "--offset=1m", "--libblkio_wait_mode=eventfd"],
        &["--rw=read", "--bs=8k", "--size=16m", "--offset=6m", "--libblkio_wait_mode=loop"],
        &["--rw=trim", "--bs=64k", "--size=1m", "--libblkio_write_zeroes_on_trim=1"],
        &["--rw=write", "--bs=4k", "--size=256k", "--fsync=4", "--libblkio_force_enable_completion_eventfd=1"],
        &["--rw=randread", "--bs=4k", "--size=1m", "--direct=1", "--libblkio_num_entries=16"],
        &["--rw=randwrite", "--bs=4k", "--size=1m", "--verify=crc32c", "--libblkio_pre_start_props=num-entries=8"],
    ];
    for job in jobs {
        for depth in ["--iodepth=1", "--iodepth=8"] {
            let a = [&["--name=b", depth, "--output-format=json"][..], job].concat();
            let fio = t.run(false, &a);
            assert_eq!(fio.code, 0, "fio {a:?}: {}", fio.stderr);
            let ours = t.run(true, &a);
            assert_eq!(ours.code, 0, "fiox {a:?}: {}", ours.stderr);
            assert_eq!(ours.stderr, "", "fiox {a:?}: a clean run prints nothing on stderr");
            assert_eq!(figures(&ours), figures(&fio), "{a:?}: fiox (left) and fio (right)");
        }
    }
    // Discards: the io_uring driver refuses them on a regular file, in both tools, as the
    // job's error.
    let a = ["--name=d", "--rw=trim", "--bs=64k", "--size=1m", "--output-format=json"];
    let (fio, ours) = (t.run(false, &a), t.run(true, &a));
    assert_eq!((fio.code, ours.code), (1, 1), "{} / {}", fio.stderr, ours.stderr);
    assert!(ours.stderr.contains("Operation not supported: trim offset=0"), "{}", ours.stderr);
    assert_eq!(json(&ours)["jobs"][0]["error"], json(&fio)["jobs"][0]["error"]);
}

/// What one tool writes the other reads back and verifies, at depth 1 and 8. fio 3.42's
/// verification header is not fio 3.33's (fio 3.42 refuses 3.33's as "unsupported header
/// version"), and fiox writes 3.33's, so the data is `verify=pattern` with the block's offset in
/// it (`%o`): each block says where it belongs, and both tools' files come out byte for byte
/// the same. Plain bytes land in the file where the job put them.
#[test]
fn libblkio_data_crosses_between_fio_and_fiox() {
    let Some(t) = Tools::new(8 << 20) else { return };
    let mut images = Vec::new();
    for (writer_fiox, depth, vectored) in [(false, "1", "0"), (true, "8", "1"), (false, "8", "1"), (true, "1", "0")] {
        std::fs::File::create(&t.img).and_then(|f| f.set_len(8 << 20)).unwrap();
        let q = format!("--iodepth={depth}");
        let v = format!("--libblkio_vectored={vectored}");
        let common =
            ["--name=x", "--bs=4k", "--size=4m", "--offset=2m", "--verify=pattern", "--verify_pattern=%o", &q, &v];
        let w = [&common[..], &["--rw=randwrite", "--do_verify=0", "--output-format=json"]].concat();
        let out = t.run(writer_fiox, &w);
        assert_eq!(out.code, 0, "writing {w:?}: {}", out.stderr);
        let r = [&common[..], &["--rw=read", "--output-format=json"]].concat();
        let out = t.run(!writer_fiox, &r);
        assert_eq!(out.code, 0, "reading back {r:?} (writer fiox: {writer_fiox}): {}", out.stderr);
        assert_eq!(json(&out)["jobs"][0]["read"]["io_bytes"].as_u64(), Some(4 << 20), "{r:?}");
        images.push((writer_fiox, std::fs::read(&t.img).unwrap()));
    }
    let (fio_img, fiox_img) = (&images[0].1, &images[1].1);
    assert!(fio_img == fiox_img, "fio and fiox wrote the same bytes");
    assert!(
        fio_img[..2 << 20].iter().all(|&b| b == 0) && fio_img[6 << 20..].iter().all(|&b| b == 0),
        "only the region"
    );
    std::fs::File::create(&t.img).and_then(|f| f.set_len(8 << 20)).unwrap();
    let a = ["--name=p", "--rw=write", "--bs=64k", "--size=64k", "--offset=1m", "--buffer_pattern=0x5a"];
    let out = t.run(true, &a);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let img = std::fs::read(&t.img).unwrap();
    assert!(img[1 << 20..(1 << 20) + (64 << 10)].iter().all(|&b| b == 0x5a), "the pattern landed at 1 MiB");
    assert_ne!(img[(1 << 20) - 1], 0x5a, "nothing before it");
    assert_ne!(img[(1 << 20) + (64 << 10)], 0x5a, "nothing after it");
}

/// Each way of not getting a device: one line saying why, exit 1, no report, no I/O; fio
/// fails too (fio 3.42 aborts on nrfiles=2).
#[test]
fn libblkio_refusals_are_one_clear_line() {
    let Some(t) = Tools::new(1 << 20) else { return };
    let cases: &[(&[&str], &str)] = &[
        (&["--libblkio_driver="], "needs libblkio_driver="),
        (&["--libblkio_driver=nosuch"], "blkio_create() failed: Unknown driver name"),
        (&["--libblkio_path=/nonexistent/disk"], "No such file or directory"),
        (&["--libblkio_pre_connect_props=bogus"], "libblkio_pre_connect_props=bogus: missing '='"),
        (&["--libblkio_pre_connect_props=nosuch=1"], "error setting property 'nosuch' to '1'"),
        (&["--libblkio_queue_size=64"], "blkio_set_int() failed"),
        (
            &["--hipri", "--libblkio_wait_mode=eventfd"],
            "option hipri is incompatible with option libblkio_wait_mode=eventfd",
        ),
        (
            &["--hipri", "--libblkio_force_enable_completion_eventfd=1"],
            "incompatible with option libblkio_force_enable",
        ),
        (&["--nrfiles=2"], "a job has one file, not 2"),
    ];
    for (extra, why) in cases {
        let a = [&["--name=r", "--rw=write", "--bs=4k"][..], extra].concat();
        let out = t.run(true, &a);
        assert_eq!(out.code, 1, "{a:?}: {}", out.stderr);
        assert_eq!(out.stderr.lines().count(), 1, "{a:?}: one line: {}", out.stderr);
        assert!(out.stderr.contains(why), "{a:?}: {}", out.stderr);
        assert_eq!(out.stdout, "", "{a:?}: no report");
        assert_ne!(t.run(false, &a).code, 0, "fio {a:?} fails too");
    }
    assert!(std::fs::read(&t.img).unwrap().iter().all(|&b| b == 0), "nothing was written");
    // Without libblkio.so.1 where the loader looks: one line naming it and its package.
    let out = Out::from(
        Command::new(crate::util::fiox_bin())
            .env_remove("LD_LIBRARY_PATH")
            .args(["--name=n", "--ioengine=libblkio", "--libblkio_driver=io_uring", &t.path_arg(), "--rw=read"])
            .output()
            .unwrap(),
    );
    if !Path::new("/usr/lib/x86_64-linux-gnu/libblkio.so.1").exists() {
        assert_eq!(out.code, 1, "{}", out.stderr);
        assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
        assert!(
            out.stderr.contains("needs libblkio.so.1 (Debian/Ubuntu: apt-get install libblkio1)"),
            "{}",
            out.stderr
        );
    }
}
