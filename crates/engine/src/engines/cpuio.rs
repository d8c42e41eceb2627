//! `cpuio`: burns CPU instead of doing I/O. Each "I/O" spins in user space for `cpuchunks`
//! microseconds (`cpumode=noop`) or sorts a fixed array (`cpumode=qsort`, whose length does not
//! depend on `cpuchunks`); the job then pauses `cpuchunks * (100 - cpuload) / cpuload`
//! microseconds, so that the burn takes `cpuload` percent of one CPU. The "I/Os" move no bytes:
//! the runner counts them as reads with their burn time as latency, as fio reports them.
//!
//! As in fio, the job has no end of its own: it needs `runtime=`, or `exit_on_io_done=1` with
//! other jobs doing I/O.

use std::io;
use std::time::{Duration, Instant};

use crate::{EngineInfo, IoEngine, IoUnit, QueueStatus, Setup};

#[derive(Default)]
pub struct Cpuio {
    load: u32,
    chunk: Duration,
    qsort: bool,
    banner: String,
    /// qsort mode's work: sorted afresh from the same shuffled contents each time.
    data: Vec<u32>,
    scratch: Vec<u32>,
}

/// qsort mode sorts this many 32-bit numbers per "I/O" (4 MiB, about as long as fio's per-I/O
/// work on the machine it was measured on).
const QSORT_LEN: usize = 1 << 20;

fn preflight(spec: &fiox_options::JobSpec) -> Result<(), String> {
    if spec.engine.cpuio.cpuload == 0 {
        return Err("ioengine cpuio needs cpuload= (the percentage of one CPU to burn, 1 to 100)".to_string());
    }
    Ok(())
}

impl IoEngine for Cpuio {
    fn init(&mut self, setup: &Setup<'_>) -> io::Result<()> {
        let o = &setup.opts.cpuio;
        if o.cpuload == 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "ioengine cpuio needs cpuload="));
        }
        self.load = o.cpuload.min(100);
        self.chunk = Duration::from_micros(o.cpuchunks as u64);
        self.qsort = o.cpumode_qsort;
        self.banner = format!(
            "{} ({}): ioengine=cpuio, cpuload={}, cpucycle={}\n",
            setup.job_name,
            if self.qsort { "qsort" } else { "noop" },
            self.load,
            o.cpuchunks
        );
        if self.qsort {
            let mut x: u32 = 0x9e37_79b9;
            self.data = (0..QSORT_LEN)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    x
                })
                .collect();
            self.scratch = self.data.clone();
        }
        Ok(())
    }

    fn queue(&mut self, _index: u32, _io: &IoUnit) -> io::Result<QueueStatus> {
        if self.qsort {
            self.scratch.copy_from_slice(&self.data);
            self.scratch.sort_unstable();
            std::hint::black_box(&self.scratch);
        } else {
            let start = Instant::now();
            while start.elapsed() < self.chunk {
                std::hint::spin_loop();
            }
        }
        Ok(QueueStatus::Completed(0))
    }

    fn think_ns(&self) -> u64 {
        self.chunk.as_nanos() as u64 * (100 - self.load as u64) / self.load.max(1) as u64
    }

    fn banner(&self) -> Option<String> {
        Some(self.banner.clone())
    }
}

pub const INFO: EngineInfo = EngineInfo {
    diskless: true,
    no_io: true,
    preflight: Some(preflight),
    ..EngineInfo::base("cpuio", || Box::<Cpuio>::default())
};
