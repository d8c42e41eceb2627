//! One conformance test for every engine: write a known pattern through the engine, read it back
//! through the engine, compare. Run buffered and with O_DIRECT, at depth 1 and 8, and with each
//! io_uring and libaio option that changes the submission path. An engine whose kernel feature is
//! missing is skipped with the reason printed, never passed silently.

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;

use crate::{Completion, Ddir, EngineInfo, EngineOpts, Io, IoQueue, MemKind, QueueConfig, QueueStatus, ENGINES};
use fiox_options::spec::{IoUringOpts, LibaioOpts};

const BS: usize = 4096;
const BLOCKS: usize = 64;

fn pattern(block: usize, i: usize) -> u8 {
    (block.wrapping_mul(31) ^ i.wrapping_mul(7)) as u8
}

/// Drives `BLOCKS` I/Os of direction `ddir` through the queue, one per block, in a shuffled
/// order, with the same queue / commit / reap calls the runner makes; on reads, checks each
/// block's content.
fn pass(q: &mut IoQueue, ddir: Ddir) -> Result<(), String> {
    let depth = q.depth() as usize;
    let order: Vec<usize> = (0..BLOCKS).map(|i| (i * 37) % BLOCKS).collect();
    let mut next = 0;
    let mut done = 0;
    let mut out: Vec<Completion> = Vec::new();
    let check = |q: &IoQueue, idx: u32, result: i64| -> Result<(), String> {
        let block = (q.io(idx).offset as usize) / BS;
        if result != BS as i64 {
            return Err(format!("{ddir:?} of block {block} returned {result}"));
        }
        if ddir == Ddir::Read {
            let got = &q.buf(idx)[..BS];
            if let Some(i) = (0..BS).find(|&i| got[i] != pattern(block, i)) {
                return Err(format!("block {block} byte {i}: read {} expected {}", got[i], pattern(block, i)));
            }
        }
        Ok(())
    };
    while done < BLOCKS {
        while next < BLOCKS {
            let Some(idx) = q.next_idle() else { break };
            let block = order[next];
            let buf = &mut q.buf_mut(idx)[..BS];
            if ddir == Ddir::Write {
                for (i, b) in buf.iter_mut().enumerate() {
                    *b = pattern(block, i);
                }
            } else {
                buf.fill(0xee);
            }
            let io = Io { ddir, file: 0, offset: (block * BS) as u64, len: BS as u32, ioprio: 0 };
            match q.queue(idx, io).map_err(|e| e.to_string())? {
                QueueStatus::Completed(result) => {
                    check(q, idx, result)?;
                    done += 1;
                }
                QueueStatus::Queued => {}
                QueueStatus::Busy => break,
            }
            next += 1;
        }
        q.commit().map_err(|e| e.to_string())?;
        if q.in_engine() > 0 {
            out.clear();
            q.reap(1, depth as u32, &mut out).map_err(|e| e.to_string())?;
            for c in &out {
                check(q, c.index, c.result)?;
                done += 1;
            }
        }
    }
    Ok(())
}

/// A queue's configuration over one scratch file of `BS * BLOCKS` bytes, buffered, reading
/// and writing.
fn one_file<'a>(
    engine: &'static EngineInfo,
    file: std::fs::File,
    path: &'a std::path::PathBuf,
    depth: u32,
    opts: &'a EngineOpts,
) -> QueueConfig<'a> {
    QueueConfig {
        engine,
        files: vec![file],
        paths: std::slice::from_ref(path),
        sizes: &[(BS * BLOCKS) as u64],
        block_devices: &[false],
        writes: true,
        reads: true,
        depth,
        buf_size: BS,
        buf_align: 4096,
        mem: MemKind::Malloc,
        huge_page: 2 << 20,
        share_read_buffers: false,
        waits_for_completions: true,
        opts,
        job_name: "conformance",
        runtime_us: 0,
        clone: 0,
        sync_range_flags: 0,
        direct: false,
        invalidate: false,
        sync: false,
    }
}

fn run_case(name: &str, direct: bool, depth: usize, opts: &EngineOpts) -> Result<(), String> {
    let info = crate::find(name).expect("registered");
    let dir = std::env::temp_dir().join(format!("fiox-conf-{}-{name}-{direct}-{depth}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let path = dir.join("data");
    let result = (|| {
        for ddir in [Ddir::Write, Ddir::Read] {
            let mut o = OpenOptions::new();
            o.read(true).write(true).create(true).truncate(false);
            if direct {
                o.custom_flags(libc::O_DIRECT);
            }
            let file = o.open(&path).map_err(|e| e.to_string())?;
            file.set_len((BS * BLOCKS) as u64).map_err(|e| e.to_string())?;
            let mut q = IoQueue::new(one_file(info, file, &path, depth as u32, opts)).map_err(|e| match e {
                crate::QueueError::Engine(e) => format!("SKIP: {e}"),
                crate::QueueError::Buffers(e) => format!("buffers: {e}"),
            })?;
            pass(&mut q, ddir)?;
        }
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

#[test]
fn the_queue_refuses_what_would_be_unsound() {
    let dir = std::env::temp_dir().join(format!("fiox-conf-guard-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("data");
    let file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path).unwrap();
    file.set_len((BS * BLOCKS) as u64).unwrap();
    let opts = EngineOpts::default();
    let mut q = IoQueue::new(one_file(crate::find("libaio").unwrap(), file, &path, 2, &opts)).unwrap();
    // An I/O longer than its buffer never reaches the engine.
    let big = Io { ddir: Ddir::Read, file: 0, offset: 0, len: (BS * 2) as u32, ioprio: 0 };
    assert!(q.queue(0, big).is_err());
    assert_eq!(q.in_engine(), 0);
    // A unit the engine holds lends its buffer to nobody.
    let io = Io { ddir: Ddir::Read, file: 0, offset: 0, len: BS as u32, ioprio: 0 };
    let i = q.next_idle().unwrap();
    assert_eq!(q.queue(i, io).unwrap(), QueueStatus::Queued);
    assert_eq!(q.in_engine(), 1);
    assert_ne!(q.next_idle(), Some(i));
    let lent = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| q.buf(i).len()));
    assert!(lent.is_err(), "the buffer of an in-flight unit was lent out");
    q.commit().unwrap();
    let mut out = Vec::new();
    q.reap(1, 2, &mut out).unwrap();
    assert_eq!(out, vec![Completion { index: i, result: BS as i64 }]);
    assert_eq!(q.in_engine(), 0);
    assert_eq!(q.buf(i).len(), BS);
    drop(q);
    let _ = std::fs::remove_dir_all(&dir);
}

fn uring(io_uring: IoUringOpts) -> EngineOpts {
    EngineOpts { io_uring, ..EngineOpts::default() }
}

#[test]
fn every_engine_writes_and_reads_back() {
    let variants: Vec<(&str, EngineOpts)> = vec![
        ("plain", EngineOpts::default()),
        ("fixedbufs+registerfiles", uring(IoUringOpts { fixedbufs: true, registerfiles: true, ..Default::default() })),
        ("vectored", uring(IoUringOpts { nonvectored: 0, ..Default::default() })),
        ("sqthread_poll", uring(IoUringOpts { sqthread_poll: true, ..Default::default() })),
        ("force_async", uring(IoUringOpts { force_async: 2, ..Default::default() })),
        (
            "userspace_reap",
            EngineOpts { libaio: LibaioOpts { userspace_reap: true, ..Default::default() }, ..Default::default() },
        ),
    ];
    let mut ran = 0;
    let mut failures = Vec::new();
    // Engines that move data; the metadata engines, and falloc and ftruncate (which change a
    // file's allocation and length, not its bytes), are compared with fio in the integration
    // tests.
    // Engines with a preflight check need something this test does not set up (a device, a
    // donor file, a program); the network engines need a peer.
    let moves_data = |e: &&EngineInfo| {
        !e.diskless && !e.metadata && !e.network && e.preflight.is_none() && !matches!(e.name, "falloc" | "ftruncate")
    };
    for info in ENGINES.iter().filter(moves_data) {
        for (vname, opts) in &variants {
            let applies = match *vname {
                "plain" => true,
                "userspace_reap" => info.name == "libaio",
                _ => info.name == "io_uring",
            };
            if !applies {
                continue;
            }
            for direct in [false, true] {
                for depth in [1, 8] {
                    match run_case(info.name, direct, depth, opts) {
                        Ok(()) => ran += 1,
                        Err(e) if e.starts_with("SKIP") => {
                            println!("skipped: {} {vname} direct={direct} depth={depth}: {e}", info.name)
                        }
                        Err(e) => failures.push(format!("{} {vname} direct={direct} depth={depth}: {e}", info.name)),
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "engine conformance failures:\n{}", failures.join("\n"));
    assert!(ran >= 30, "only {ran} engine cases ran");
}

/// io_uring counts committed entries as submitted and makes the system call with the next
/// queue or reap: a reap that need not wait (min 0) must still submit them, and so must
/// queueing the next I/O, or the runner would wait forever for I/O the kernel never saw.
#[test]
fn io_uring_submits_committed_io_without_a_waiting_reap() {
    let dir = std::env::temp_dir().join(format!("fiox-conf-defer-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("data");
    let file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path).unwrap();
    file.set_len((BS * BLOCKS) as u64).unwrap();
    let opts = EngineOpts::default();
    let cfg = one_file(crate::find("io_uring").unwrap(), file, &path, 2, &opts);
    let mut q = match IoQueue::new(cfg) {
        Ok(q) => q,
        Err(e) => {
            println!("skipped: io_uring unavailable: {e:?}");
            return;
        }
    };
    let io = |offset| Io { ddir: Ddir::Read, file: 0, offset, len: BS as u32, ioprio: 0 };
    let mut out = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    // Only non-waiting reaps after the commit: the reap itself has to submit.
    let i = q.next_idle().unwrap();
    assert_eq!(q.queue(i, io(0)).unwrap(), QueueStatus::Queued);
    assert_eq!(q.commit().unwrap(), 1);
    while out.is_empty() {
        assert!(std::time::Instant::now() < deadline, "a committed I/O never completed");
        q.reap(0, 2, &mut out).unwrap();
    }
    assert_eq!(out, vec![Completion { index: i, result: BS as i64 }]);
    // Commit, then queue another before any reap (the first goes to the kernel then): both
    // complete, each once.
    out.clear();
    let a = q.next_idle().unwrap();
    assert_eq!(q.queue(a, io(BS as u64)).unwrap(), QueueStatus::Queued);
    q.commit().unwrap();
    let b = q.next_idle().unwrap();
    assert_eq!(q.queue(b, io(2 * BS as u64)).unwrap(), QueueStatus::Queued);
    q.commit().unwrap();
    while out.len() < 2 {
        assert!(std::time::Instant::now() < deadline, "committed I/O never completed");
        q.reap(1, 2, &mut out).unwrap();
    }
    let mut got: Vec<u32> = out.iter().map(|c| c.index).collect();
    got.sort_unstable();
    let mut want = vec![a, b];
    want.sort_unstable();
    assert_eq!(got, want);
    assert_eq!(q.in_engine(), 0);
    drop(q);
    let _ = std::fs::remove_dir_all(&dir);
}
