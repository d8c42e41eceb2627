//! fio's statistics, by fio's definitions: the log-linear latency histogram, running
//! min/max/mean/stddev, per-job (`ThreadStat`) and per-group (`GroupStat`) totals.
//!
//! Architecture Invariant: pure data and arithmetic. No clock, no I/O, no `unsafe`; the runner
//! feeds numbers in and the report formatters read them out.
#![forbid(unsafe_code)]

mod hist;
mod io_stat;
pub mod runs;
mod thread;

pub use hist::{plat_idx_to_val, plat_val_to_idx, with_wire_budget, LatHist, PLAT_NR};
pub use io_stat::{IoStat, SampleStat};
pub use thread::{
    DirStat, GroupStat, PrioStat, ThreadStat, Unified, DDIR_MIXED, DDIR_NAMES, LAT_MS_BUCKETS, LAT_NS_BUCKETS,
};
