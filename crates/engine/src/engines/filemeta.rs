//! The metadata engines: `filecreate` (create and close each file), `filestat` (stat each file)
//! and `filedelete` (unlink each file). One "I/O" is one such operation on one of the job's
//! files; no data moves. fio counts each as `filesize` bytes and times it as completion latency.

use std::io;
use std::path::PathBuf;

use crate::{EngineInfo, IoEngine, IoUnit, QueueStatus, Setup};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Create,
    Stat,
    Delete,
}

pub struct FileMeta {
    op: Op,
    paths: Vec<PathBuf>,
}

fn errno(e: &io::Error) -> i64 {
    -(e.raw_os_error().unwrap_or(libc::EIO) as i64)
}

impl IoEngine for FileMeta {
    fn init(&mut self, setup: &Setup<'_>) -> io::Result<()> {
        self.paths = setup.paths.to_vec();
        Ok(())
    }

    fn queue(&mut self, _index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        let Some(path) = self.paths.get(io.file_index as usize) else {
            return Ok(QueueStatus::Completed(-(libc::EBADF as i64)));
        };
        let r = match self.op {
            Op::Create => std::fs::OpenOptions::new().write(true).create(true).truncate(false).open(path).map(drop),
            Op::Stat => std::fs::metadata(path).map(drop),
            Op::Delete => std::fs::remove_file(path),
        };
        let result = match r {
            Ok(()) => io.len as i64,
            Err(e) => errno(&e),
        };
        Ok(QueueStatus::Completed(result))
    }
}

const fn info(name: &'static str, op: Op) -> EngineInfo {
    EngineInfo {
        name,
        sync: true,
        diskless: false,
        metadata: true,
        creates_files: matches!(op, Op::Create),
        writes_any_direction: false,
        no_io: false,
        network: false,
        preflight: None,
        remote: None,
        device_size: None,
        prepopulates: false,
        instant: false,
        shares_read_buffers: false,
        make: match op {
            Op::Create => || Box::new(FileMeta { op: Op::Create, paths: Vec::new() }),
            Op::Stat => || Box::new(FileMeta { op: Op::Stat, paths: Vec::new() }),
            Op::Delete => || Box::new(FileMeta { op: Op::Delete, paths: Vec::new() }),
        },
    }
}

pub const FILECREATE: EngineInfo = info("filecreate", Op::Create);
pub const FILESTAT: EngineInfo = info("filestat", Op::Stat);
pub const FILEDELETE: EngineInfo = info("filedelete", Op::Delete);
