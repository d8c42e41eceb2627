//! `dedupe_mode=working_set`: deduplicated writes repeat one buffer of a fixed working set,
//! chosen at random, instead of the last unique buffer (`repeat`, see `content.rs`).
//!
//! Measured against fio 3.33 (docs/fio-observed/files2.md, each file hashed block by block):
//! the set holds `dedupe_working_set_percentage` of the job's size in blocks (5% of 16 MiB at
//! 4 KiB: 204 distinct repeated blocks; at 8 KiB: 102), the job's first unique writes are the
//! set's members, and the share of duplicate blocks is `dedupe_percentage` in both modes.
//! Under `dedupe_global=1` the jobs that set it share one set of the first such job's size,
//! each job's first unique writes filling its even share of it, and every job's deduplicated
//! writes pick from the whole set, so the jobs' files share blocks.
//!
//! A member is generated from its own seed, so any job can write any member without the
//! buffers themselves being shared between threads.

use crate::plan::mix64;
use crate::plan::WorkerPlan;
use fiox_options::DedupeMode;

/// One worker's view of a working set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkingSet {
    /// Members in the whole set.
    pub len: u64,
    /// The members this worker's first unique writes are: `first..first + own`.
    pub first: u64,
    pub own: u64,
    /// Seeds the members; the same for every worker sharing the set (`dedupe_global`). A set
    /// of its own is seeded from the worker's seed instead (`Content` mixes it in).
    pub seed: u64,
    pub global: bool,
}

impl WorkingSet {
    /// The seed of member `i`.
    pub fn member_seed(&self, i: u64) -> u64 {
        mix64(self.seed ^ mix64(i.wrapping_add(0x5eed)))
    }
}

/// Whether a worker deduplicates from a working set.
fn uses_set(w: &WorkerPlan) -> bool {
    w.spec.dedupe_percentage > 0 && w.spec.dedupe_mode == DedupeMode::WorkingSet && w.spec.rw.writes()
}

/// Members in a worker's own set: the percentage of its size, in its smallest write blocks.
fn set_len(w: &WorkerPlan) -> u64 {
    let size: u64 = w.files.iter().map(|f| f.region_len).sum();
    let bs = crate::plan::io::min_block_size(&w.spec).max(1);
    (size as u128 * w.spec.dedupe_working_set_pct as u128 / 100 / bs as u128) as u64
}

/// Each worker's working set (`None` for workers that do not use one), in plan order.
pub fn plan_sets(workers: &[WorkerPlan]) -> Vec<Option<WorkingSet>> {
    let global: Vec<usize> =
        (0..workers.len()).filter(|&i| uses_set(&workers[i]) && workers[i].spec.dedupe_global).collect();
    let global_len = global.first().map_or(0, |&i| set_len(&workers[i]));
    let shares = global.len().max(1) as u64;
    workers
        .iter()
        .enumerate()
        .map(|(i, w)| {
            if !uses_set(w) {
                return None;
            }
            Some(match global.iter().position(|&g| g == i) {
                Some(k) => {
                    let (k, len) = (k as u64, global_len);
                    let first = len * k / shares;
                    WorkingSet { len, first, own: len * (k + 1) / shares - first, seed: 0xd3d0_91b4, global: true }
                }
                None => {
                    let len = set_len(w);
                    WorkingSet { len, first: 0, own: len, seed: 0, global: false }
                }
            })
        })
        .collect()
}
