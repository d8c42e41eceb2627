//! One conformance test for every engine: write a known pattern through the engine, read it back
//! through the engine, compare. Run buffered and with O_DIRECT, at depth 1 and 8, and with each
//! io_uring and libaio option that changes the submission path. An engine whose kernel feature is
//! missing is skipped with the reason printed, never passed silently.

use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;

use crate::{Completion, Ddir, EngineOpts, IoBuffers, IoUnit, MemKind, Queued, Setup, ENGINES};

const BS: usize = 4096;
const BLOCKS: usize = 64;

fn pattern(block: usize, i: usize) -> u8 {
    (block.wrapping_mul(31) ^ i.wrapping_mul(7)) as u8
}

/// Drives `n` I/Os of direction `ddir` through the engine at `depth`, one per block, in a
/// shuffled order; on reads, checks each block's content.
fn pass(
    engine: &mut dyn crate::IoEngine,
    bufs: &mut IoBuffers,
    fd: i32,
    depth: usize,
    ddir: Ddir,
) -> Result<(), String> {
    let order: Vec<usize> = (0..BLOCKS).map(|i| (i * 37) % BLOCKS).collect();
    let mut next = 0;
    let mut free: Vec<u32> = (0..depth as u32).collect();
    let mut block_of = vec![0usize; depth];
    let mut inflight = 0;
    let mut done = 0;
    let mut out: Vec<Completion> = Vec::new();
    let check = |bufs: &mut IoBuffers, idx: u32, block: usize, result: i64| -> Result<(), String> {
        if result != BS as i64 {
            return Err(format!("{ddir:?} of block {block} returned {result}"));
        }
        if ddir == Ddir::Read {
            let got = &bufs.slice(idx as usize)[..BS];
            if let Some(i) = (0..BS).find(|&i| got[i] != pattern(block, i)) {
                return Err(format!("block {block} byte {i}: read {} expected {}", got[i], pattern(block, i)));
            }
        }
        Ok(())
    };
    while done < BLOCKS {
        while next < BLOCKS {
            let Some(idx) = free.pop() else { break };
            let block = order[next];
            if ddir == Ddir::Write {
                for (i, b) in bufs.slice_mut(idx as usize)[..BS].iter_mut().enumerate() {
                    *b = pattern(block, i);
                }
            } else {
                bufs.slice_mut(idx as usize)[..BS].fill(0xee);
            }
            let mut u = IoUnit {
                ddir,
                fd,
                file_index: 0,
                block_device: false,
                offset: (block * BS) as u64,
                len: BS as u32,
                buf: bufs.ptr(idx as usize),
                result: 0,
                ioprio: 0,
            };
            block_of[idx as usize] = block;
            match engine.queue(idx, &mut u).map_err(|e| e.to_string())? {
                Queued::Completed => {
                    check(bufs, idx, block, u.result)?;
                    free.push(idx);
                    done += 1;
                }
                Queued::Queued => inflight += 1,
                Queued::Busy => {
                    free.push(idx);
                    break;
                }
            }
            next += 1;
        }
        engine.commit().map_err(|e| e.to_string())?;
        if inflight > 0 {
            out.clear();
            engine.getevents(1, depth as u32, &mut out).map_err(|e| e.to_string())?;
            for c in &out {
                check(bufs, c.index, block_of[c.index as usize], c.result)?;
                free.push(c.index);
                inflight -= 1;
                done += 1;
            }
        }
    }
    Ok(())
}

fn run_case(name: &str, direct: bool, depth: usize, opts: &EngineOpts) -> Result<(), String> {
    let info = crate::find(name).expect("registered");
    let dir = std::env::temp_dir().join(format!("fiox-conf-{}-{name}-{direct}-{depth}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let path = dir.join("data");
    let mut o = OpenOptions::new();
    o.read(true).write(true).create(true).truncate(true);
    if direct {
        o.custom_flags(libc::O_DIRECT);
    }
    let file = o.open(&path).map_err(|e| e.to_string())?;
    file.set_len((BS * BLOCKS) as u64).map_err(|e| e.to_string())?;
    let fds = [file.as_raw_fd()];
    let sizes = [(BS * BLOCKS) as u64];
    let mut bufs = IoBuffers::new(depth, BS, 4096, MemKind::Malloc).map_err(|e| e.to_string())?;
    let result = (|| {
        for ddir in [Ddir::Write, Ddir::Read] {
            let mut engine = (info.make)();
            let setup = Setup {
                fds: &fds,
                sizes: &sizes,
                writes: true,
                paths: &[],
                buffers: &bufs,
                depth: depth as u32,
                waits_for_completions: true,
                opts,
            };
            engine.init(&setup).map_err(|e| format!("SKIP: {e}"))?;
            pass(engine.as_mut(), &mut bufs, fds[0], depth, ddir)?;
        }
        Ok(())
    })();
    drop(file);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

#[test]
fn every_engine_writes_and_reads_back() {
    let variants: Vec<(&str, EngineOpts)> = vec![
        ("plain", EngineOpts::default()),
        ("fixedbufs+registerfiles", EngineOpts { fixedbufs: true, registerfiles: true, ..EngineOpts::default() }),
        ("vectored", EngineOpts { nonvectored: 0, ..EngineOpts::default() }),
        ("sqthread_poll", EngineOpts { sqthread_poll: true, ..EngineOpts::default() }),
        ("force_async", EngineOpts { force_async: 2, ..EngineOpts::default() }),
        ("userspace_reap", EngineOpts { userspace_reap: true, ..EngineOpts::default() }),
    ];
    let mut ran = 0;
    let mut failures = Vec::new();
    // Engines that move data; the metadata engines have their own test in the integration tests.
    for info in ENGINES.iter().filter(|e| !e.diskless && !e.metadata) {
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
