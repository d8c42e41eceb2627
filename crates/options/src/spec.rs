//! `JobSpec`: one job's options resolved into typed values, with every cross-option check done.
//! This is the only place that turns raw option text into what the runner uses ("parse raw, then
//! resolve"); the runner never sees an option name.

use std::collections::HashMap;

use crate::choices::{
    ClockSource, DedupeMode, ErrorPolicy, ExitWhat, Fadvise, Fallocate, FileService, LockMode, MemKind,
    RandomGenerator, UnifiedRw,
};
use crate::error::{Error, Origin, Result};
use crate::host::{self, HostSettings};
use crate::jobfile::RawOpt;
use crate::table::{self, Kind, OptDef, Pieces, Support};
use crate::value::{self, Ctx, Parsed, RwMode, Value};

pub mod bind;
mod replay;
mod verify;
pub use crate::defs::engine::{
    CephOpts, CmdPrioOpts, CpuioOpts, E4defragOpts, EngineOpts, ExecOpts, GfapiOpts, IoUringOpts, LibaioOpts,
    LibblkioOpts, LibblkioWaitMode, MtdOpts, NbdOpts, NetOpts, NfsOpts, Pvsync2Opts, RdmaOpts, SgOpts,
};
pub use crate::defs::engine::{HttpMode, HttpOpts, Https};
pub use crate::defs::engine::{PiChk, UringCmdOpts, UringCmdWriteMode};
pub use bind::{Arg, Binder};
pub use replay::{ReplaySpec, ZoneMode, ZoneSpec};
pub use verify::VerifySpec;

/// A size that may be relative to the file or device.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SizeSpec {
    Bytes(u64),
    Percent(f64),
}

impl Default for SizeSpec {
    fn default() -> Self {
        SizeSpec::Bytes(0)
    }
}

// The blank `JobSpec` needs a mode; `rw`'s row default replaces it. Written here rather than
// derived in value.rs, which owns the value syntax, not the job model.
#[allow(clippy::derivable_impls)]
impl Default for RwMode {
    fn default() -> Self {
        RwMode::Read
    }
}

pub(crate) const DIST_FORMS: &str =
    "random, zipf:θ[:center], pareto:h[:center], normal:dev[:center], zoned:P/R%:..., zoned_abs:P/SIZE:...";
pub(crate) const IGNORE_FORMS: &str =
    "READ,WRITE,VERIFY lists of errno names or numbers separated by ':', e.g. EIO:ENOSPC,EIO";
pub(crate) const MEMPOLICY_FORMS: &str = "default, local, prefer:N, bind:LIST or interleave:LIST (LIST like 0,2-3)";
pub(crate) const FILE_SERVICE_FORMS: &str =
    "roundrobin[:N], sequential, random[:N], zipf:θ, pareto:h, normal:σ or gauss:σ";
pub(crate) const SS_FORMS: &str =
    "iops, iops_slope, bw or bw_slope, ':' and a threshold: a number or a percentage of the mean, e.g. iops_slope:0.1%";
pub(crate) const PATTERN_FORMS: &str = "0x hex bytes, a quoted string or a number, or several of those in a row";

/// How random offsets are spread over the blocks (`random_distribution`).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum RandomDist {
    /// Uniform, each block once per pass unless `norandommap`.
    #[default]
    Random,
    /// Zipf with exponent θ over the blocks' popularity ranks; the optional second number
    /// (0 to 1) is where in the range the hottest block lies (fio's "center").
    Zipf(f64, Option<f64>),
    /// Pareto with power h (fio's law: h = 0.2 sends 80% of the accesses to 20% of the
    /// blocks, 0.5 is uniform); optional center as for Zipf.
    Pareto(f64, Option<f64>),
    /// fio's "normal" with its deviation value (0 to below 100) and an optional center (default
    /// the middle of the range).
    Normal(f64, Option<f64>),
    /// `(share of accesses %, share of the range %)` zones, in order.
    Zoned(Vec<(f64, f64)>),
    /// `(share of accesses %, bytes)` zones, in order.
    ZonedAbs(Vec<(f64, u64)>),
}

impl RandomDist {
    pub(crate) fn parse(text: &str, ctx: &Ctx) -> std::result::Result<RandomDist, String> {
        let (kind, args) = text.split_once(':').unwrap_or((text, ""));
        // `kind[:value[:center]]`; fio ignores anything after the center.
        let numbers = |default: f64| -> std::result::Result<(f64, Option<f64>), String> {
            let mut parts = args.split(':');
            let mut real = |what: &str| -> std::result::Result<Option<f64>, String> {
                match parts.next().map(str::trim).filter(|s| !s.is_empty()) {
                    Some(v) => v.parse::<f64>().map(Some).map_err(|_| format!("{what} '{v}' is not a number")),
                    None => Ok(None),
                }
            };
            let v = real("the value")?.unwrap_or(default);
            let center = real("the center")?;
            if let Some(c) = center.filter(|c| !(0.0..=1.0).contains(c)) {
                return Err(format!("the center {c} must be between 0 and 1"));
            }
            Ok((v, center))
        };
        let zones = |abs: bool| -> std::result::Result<Vec<(f64, String)>, String> {
            let mut out = Vec::new();
            for z in args.split(':').filter(|s| !s.is_empty()) {
                let (pct, range) = z.split_once('/').ok_or_else(|| format!("zone '{z}' is not access%/range"))?;
                let pct: f64 = pct.trim().parse().map_err(|_| format!("'{pct}' is not a percentage"))?;
                out.push((pct, range.trim().trim_end_matches(if abs { "" } else { "%" }).to_string()));
            }
            let total: f64 = out.iter().map(|z| z.0).sum();
            if out.is_empty() || (total - 100.0).abs() > 1e-6 {
                return Err(format!("zone access percentages add up to {total}%, not 100%"));
            }
            Ok(out)
        };
        match kind {
            "random" => Ok(RandomDist::Random),
            // fio 3.33 takes any theta but 1 (0 is uniform, below 0 favours the last ranks).
            "zipf" => match numbers(1.1)? {
                (t, c) if t.is_finite() && (t - 1.0).abs() > 1e-9 => Ok(RandomDist::Zipf(t, c)),
                (t, _) => Err(format!("zipf theta {t} must not be 1")),
            },
            "pareto" => match numbers(0.2)? {
                (h, c) if h > 0.0 && h < 1.0 => Ok(RandomDist::Pareto(h, c)),
                (h, _) => Err(format!("pareto power {h} must be between 0 and 1 (both excluded)")),
            },
            "normal" | "gauss" => match numbers(0.0)? {
                (s, c) if (0.0..100.0).contains(&s) => Ok(RandomDist::Normal(s, c)),
                (s, _) => Err(format!("normal deviation {s} must be 0 or more and below 100")),
            },
            "zoned" => {
                let z = zones(false)?;
                let mut out: Vec<(f64, Option<f64>)> = Vec::new();
                for (p, r) in z {
                    if r.is_empty() {
                        // `20/`: the rest of the region, as in fio.
                        out.push((p, None));
                        continue;
                    }
                    let r: f64 = r.parse().map_err(|_| format!("'{r}' is not a range percentage"))?;
                    out.push((p, Some(r)));
                }
                let mut used: f64 = out.iter().filter_map(|z| z.1).sum();
                if used > 100.0 + 1e-6 {
                    return Err(format!("zone range percentages add up to {used}%, more than 100%"));
                }
                // Ranges may cover less than the region (fio then never goes past them).
                let out = out
                    .into_iter()
                    .map(|(p, r)| {
                        let r = r.unwrap_or_else(|| {
                            let rest = (100.0 - used).max(0.0);
                            used += rest;
                            rest
                        });
                        (p, r)
                    })
                    .collect();
                Ok(RandomDist::Zoned(out))
            }
            "zoned_abs" => {
                let z = zones(true)?;
                let mut out = Vec::new();
                for (p, r) in z {
                    out.push((p, crate::value::parse_size(&r, ctx)?));
                }
                Ok(RandomDist::ZonedAbs(out))
            }
            other => Err(format!("'{other}' is not a distribution (random, zipf, pareto, normal, zoned, zoned_abs)")),
        }
    }
}

/// fio 3.42's `sprandom` and its `spr_*` options, as given.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Sprandom {
    pub on: bool,
    /// `spr_num_regions`, as given (fio refuses less than one when the job starts).
    pub regions: i64,
    pub op: f64,
    pub cache: u64,
    /// Whether sprandom chose `random_generator=lfsr` and `norandommap=1` because the job did
    /// not set them: fio 3.42 says so ("fio: sprandom sets ...") before the job header.
    pub set_lfsr: bool,
    pub set_norandommap: bool,
}

/// What steady state is judged on (`steadystate`, `ss_dur`, `ss_ramp`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SteadyState {
    /// Bandwidth rather than IOPS.
    pub bw: bool,
    /// The least-squares slope of the window rather than its largest deviation from the mean.
    pub slope: bool,
    /// The threshold; a percentage of the window's mean when `pct`.
    pub limit: f64,
    pub pct: bool,
    /// The rolling window, in whole one-second samples.
    pub dur_s: u64,
    /// How long after measurement starts samples begin to be collected (microseconds).
    pub ramp_us: u64,
    /// Time between samples in microseconds (`steadystate_check_interval`, fio 3.42; 1 s
    /// before): the window holds `ss_dur / ss_interval` samples.
    pub interval_us: u64,
}

impl SteadyState {
    /// The criterion's name as fio writes it (`iops_slope`).
    pub fn name(&self) -> &'static str {
        match (self.bw, self.slope) {
            (false, false) => "iops",
            (false, true) => "iops_slope",
            (true, false) => "bw",
            (true, true) => "bw_slope",
        }
    }

    /// Takes the criterion and limit of `c`, keeping the window and ramp.
    pub(crate) fn criterion(&mut self, c: SteadyState) {
        *self = SteadyState { dur_s: self.dur_s, ramp_us: self.ramp_us, interval_us: self.interval_us, ..c };
    }

    /// `criterion:limit[%]`, the criterion one of fio's four words, the limit a number of 0 or
    /// more; the window and ramp are filled in by the caller.
    pub(crate) fn parse(text: &str) -> std::result::Result<SteadyState, String> {
        let text = text.trim();
        let Some((word, limit)) = text.split_once(':') else {
            return Err("a threshold must follow the criterion, as in iops_slope:0.1% or bw:2m".into());
        };
        let (bw, slope) = match word.trim() {
            "iops" => (false, false),
            "iops_slope" => (false, true),
            "bw" => (true, false),
            "bw_slope" => (true, true),
            other => return Err(format!("'{other}' is not a criterion (iops, iops_slope, bw, bw_slope)")),
        };
        let limit = limit.trim();
        let (number, pct) = match limit.strip_suffix('%') {
            Some(n) => (n.trim(), true),
            None => (limit, false),
        };
        let limit: f64 = number.parse().map_err(|_| format!("threshold '{limit}' is not a number or a percentage"))?;
        if !limit.is_finite() || limit < 0.0 {
            return Err(format!("threshold '{number}' must be a number of 0 or more"));
        }
        Ok(SteadyState { bw, slope, limit, pct, dur_s: 0, ramp_us: 0, interval_us: 1_000_000 })
    }
}

/// `sync_file_range=FLAGS[:N]`: which sync_file_range(2) flags, every how many writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncFileRange {
    /// SYNC_FILE_RANGE_WAIT_BEFORE (1), _WRITE (2), _WAIT_AFTER (4), or'd.
    pub flags: u32,
    /// Every this many writes (fio's default 1).
    pub every: u32,
}

impl SyncFileRange {
    /// fio's syntax: words from `wait_before`, `write`, `wait_after` separated by commas, then
    /// an optional `:N`. fio reads N with atoi, so `write:` means 0 (never); fiox takes the
    /// same empty value but refuses an N that is not a number, and any unknown word (fio
    /// refuses one alone and ignores one after a valid word). `None`: N is 0, no syncs.
    pub fn parse(text: &str) -> std::result::Result<Option<SyncFileRange>, String> {
        let (words, nr) = match text.split_once(':') {
            Some((w, n)) => (w, Some(n.trim())),
            None => (text, None),
        };
        let mut flags = 0;
        for w in words.split(',') {
            flags |= match w.trim() {
                "wait_before" => 1,
                "write" => 2,
                "wait_after" => 4,
                other => {
                    return Err(format!("sync_file_range: '{other}' is not one of wait_before, write, wait_after"))
                }
            };
        }
        let every = match nr {
            None => 1,
            Some("") => 0,
            Some(n) => n.parse::<u32>().map_err(|_| format!("sync_file_range: ':{n}' is not a number of writes"))?,
        };
        Ok((every > 0).then_some(SyncFileRange { flags, every }))
    }
}

/// fio's latency-target mode (`latency_target`, `latency_window`, `latency_percentile`,
/// `latency_run`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LatencyTarget {
    pub target_us: u64,
    pub window_us: u64,
    pub percentile: f64,
    /// Keep adjusting the depth for the whole run instead of ending once it is found.
    pub run: bool,
}

/// One rule of which I/Os get a priority: those of `bs` (any size if `None`), `pct` percent of
/// them, with `ioprio` (`class << 13 | level`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrioRule {
    pub bs: Option<u64>,
    pub pct: f64,
    pub ioprio: u16,
}

/// A job, resolved. Times are in microseconds, sizes in bytes.
///
/// `Default` is only the blank that the rows are bound onto (`spec/bind.rs`): every row with a
/// default overwrites its field, so a choice type's own `Default` is never what a job gets.
#[derive(Debug, Clone, Default)]
pub struct JobSpec {
    pub name: String,
    pub description: Option<String>,
    pub rw: RwMode,
    /// `rw=...:N`: the step added after each sequential I/O (negative: backwards), or the
    /// number of I/Os in each random run.
    pub rw_modifier: i64,
    pub rwmixread: u32,
    /// Block size per direction (read, write, trim).
    pub bs: [u64; 3],
    pub size: Option<SizeSpec>,
    /// The size a percentage scaled into `size` (`size=20%:4k`: 4096, and `size` is 819
    /// bytes): fio checks it against the block size, and the job moves the whole blocks of the
    /// scaled size, none when it holds no block (observed). `None` when nothing was scaled.
    pub size_scaled_from: Option<u64>,
    pub filesize: Option<(u64, u64)>,
    pub io_size: Option<SizeSpec>,
    pub offset: SizeSpec,
    pub offset_increment: SizeSpec,
    pub filename: Option<String>,
    pub directory: Option<String>,
    /// How files are named when `filename` is not given: `$jobname`, `$jobnum` (the clone),
    /// `$filenum` and `$clientuid` (empty outside client/server runs) are replaced.
    pub filename_format: String,
    /// Which latencies are kept: `[slat, clat, lat]` (`disable_slat`, `disable_clat`,
    /// `disable_lat`, all off under `gtod_reduce`).
    pub keep_lat: [bool; 3],
    /// Each I/O's bandwidth goes to a per-I/O bw log (off: `disable_bw_measurement`).
    pub keep_bw: bool,
    /// Logs carry each I/O's priority value (`log_prio`) rather than whether cmdprio chose it.
    pub log_prio: bool,
    /// The clock whose epoch log times count from under `log_unix_epoch` or
    /// `log_alternate_epoch` (`log_alternate_epoch_clock_id`, CLOCK_REALTIME by default);
    /// `None`: the job's start.
    pub log_epoch_clock: Option<i32>,
    /// The devices under the job's files are in the disk statistics (`disk_util`).
    pub disk_util: bool,
    pub nrfiles: u32,
    pub ioengine: &'static str,
    pub engine: EngineOpts,
    pub iodepth: u32,
    pub iodepth_batch_submit: u32,
    pub iodepth_batch_complete_min: u32,
    pub iodepth_batch_complete_max: u32,
    pub iodepth_low: u32,
    pub direct: bool,
    pub runtime_us: u64,
    /// `hang_timeout` (fiox): how long a job may go without any I/O completing before it is
    /// declared hung.
    pub hang_timeout_us: u64,
    pub time_based: bool,
    pub ramp_time_us: u64,
    /// `ramp_size` (fio 3.42): bytes of I/O done before statistics count (0: none).
    pub ramp_size: u64,
    pub loops: u32,
    pub numjobs: u32,
    pub thread: bool,
    pub group_reporting: bool,
    pub stonewall: bool,
    pub new_group: bool,
    pub randrepeat: bool,
    pub randseed: u64,
    /// Whether the job set `randseed` (fio restarts a mixed job's direction stream on each
    /// loop only when it did not).
    pub randseed_given: bool,
    pub norandommap: bool,
    pub lockmem: u64,
    pub kb_base: u64,
    pub end_fsync: bool,
    /// `end_syncfs` (fio 3.42): one syncfs(2) of the files' file system when the writes are done.
    pub end_syncfs: bool,
    pub fsync_on_close: bool,
    pub unlink: bool,
    /// `unlink_each_loop`: delete (and recreate) the job's files between loops.
    pub unlink_each_loop: bool,
    pub allow_mounted_write: bool,
    pub readonly: bool,
    pub zero_buffers: bool,
    pub refill_buffers: bool,
    pub scramble_buffers: bool,
    pub mem: MemKind,
    pub iomem_align: u64,
    pub clat_percentiles: bool,
    pub lat_percentiles: bool,
    pub slat_percentiles: bool,
    pub percentile_list: Vec<f64>,
    pub significant_figures: u32,
    pub bwavgtime_ms: u64,
    pub iopsavgtime_ms: u64,
    /// `verify` and its companions (`None`: the job does not verify).
    pub verify: Option<VerifySpec>,
    /// Block size range per direction, when set.
    pub bsrange: [Option<(u64, u64)>; 3],
    /// Weighted block sizes per direction (empty: not set).
    pub bssplit: [Vec<(u64, f64)>; 3],
    /// Alignment of random offsets per direction (0: the smallest block size).
    pub blockalign: [u64; 3],
    pub bs_unaligned: bool,
    pub percentage_random: [u32; 3],
    pub fsync: u32,
    pub fdatasync: u32,
    /// `sync_file_range=FLAGS[:N]`: sync_file_range(2) flags and every how many writes.
    pub sync_file_range: Option<SyncFileRange>,
    /// `serialize_overlap`: an I/O waits while one in flight overlaps it.
    pub serialize_overlap: bool,
    /// `io_submit_mode=offload`: rate-limited I/O is issued on schedule, whatever the
    /// completions (see the runner's `Worker::reap`).
    pub offload: bool,
    pub number_ios: u64,
    pub invalidate: bool,
    /// `startdelay`'s range in microseconds; each clone waits a time drawn from it.
    pub startdelay_us: (u64, u64),
    pub exitall: bool,
    pub thinktime_us: u64,
    pub thinktime_spin_us: u64,
    pub thinktime_blocks: u32,
    /// `thinkcycles` (fio 3.42): busy-loop iterations after each completed I/O.
    pub thinkcycles: u64,
    /// Bytes per second per direction (0: unlimited).
    pub rate: [u64; 3],
    pub rate_iops: [u64; 3],
    pub rate_poisson: bool,
    /// CPUs the job may run on (empty: any).
    pub cpus_allowed: Vec<usize>,
    pub cpus_split: bool,
    pub nice: i32,
    /// `(class, level)` for ioprio_set, when set.
    pub ioprio: Option<(u32, u32)>,
    /// `priohint` (fio 3.42): the I/O priority hint (bits 3 to 12 of the priority value).
    pub priohint: u32,
    /// File to record every issued I/O in (fio's iolog version 3).
    pub write_iolog: Option<String>,
    /// Name of a job this one starts after.
    pub wait_for: Option<String>,
    pub write_bw_log: Option<String>,
    pub write_lat_log: Option<String>,
    pub write_iops_log: Option<String>,
    pub write_hist_log: Option<String>,
    /// `write_intended_lat_log` (fiox): each I/O's intended latency, in fio's log format.
    pub write_intended_lat_log: Option<String>,
    /// `metrics_listen` (fiox): where the run serves live metrics (checked: a socket address).
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// `live_listen` (fiox): where the run serves its live page (checked: a socket address).
    pub live_listen: Option<std::net::SocketAddr>,
    pub log_hist_msec: u64,
    /// Each histogram-log column sums 2^N buckets (`log_hist_coarseness`).
    pub log_hist_coarseness: u32,
    pub log_avg_msec: u64,
    /// What a windowed log line holds: the average (0), the maximum (1) or both (2);
    /// `log_window_value` (fio 3.36+), or `log_max_value=1` as fio 3.33 spells max.
    pub log_window_value: u8,
    pub log_offset: bool,
    /// `log_issue_time` (fio 3.42): a last column with each I/O's issue time, in ns since the
    /// job's measurement started.
    pub log_issue_time: bool,
    /// `job_start_clock_id` (fio 3.42): the clock whose reading at the job's start the JSON
    /// report shows as `job_start` (`None`: not set; the key is fio 3.42's, not 3.33's).
    pub job_start_clock: Option<i32>,
    /// `filetype` (fio 3.42): the type every file of the job is taken to be (`none`: stat it).
    pub filetype: &'static str,
    /// `num_range` (fio 3.42): ranges per trim command of io_uring_cmd (1 elsewhere).
    pub num_range: u32,
    /// fio 3.42's SSD preconditioning (`sprandom`, `spr_*`).
    pub sprandom: Sprandom,
    /// fio 3.42's NVMe data placement (`dataplacement`, `plids`, `plid_select`, `dp_scheme`).
    pub placement: crate::defs::Placement,
    /// Logs are stored as zlib-compressed binary samples, `FILE.log.fz` (`log_store_compressed`).
    pub log_store_compressed: bool,
    /// Bytes of samples in each zlib stream of a compressed log (`log_compression`); `None`:
    /// fiox's default.
    pub log_compression: Option<u64>,
    /// CPUs the job's log compression thread runs on (`log_compression_cpus`); empty: any.
    pub log_compression_cpus: Vec<usize>,
    /// `clocksource`; `None` lets fiox choose.
    pub clocksource: Option<ClockSource>,
    pub unified_rw_reporting: UnifiedRw,
    pub random_generator: RandomGenerator,
    pub errors: ErrorPolicy,
    pub exitall_on_error: bool,
    pub exit_what: ExitWhat,
    pub per_job_logs: bool,
    /// `sync=`: open files with O_SYNC (`sync`, `1`) or O_DSYNC (`dsync`).
    pub open_sync: Option<bool>,
    pub random_distribution: RandomDist,
    /// 1: report bandwidth in bits; 0 (automatic) or 8: bytes.
    pub unit_base: u64,
    /// Minimum bytes and I/Os per second per direction (0: none), checked every `rate_cycle_ms`.
    pub rate_min: [u64; 3],
    pub rate_iops_min: [u64; 3],
    pub rate_cycle_ms: u64,
    pub create_on_open: bool,
    /// Files must exist and be large enough (`allow_file_create=0`).
    pub allow_file_create: bool,
    /// Lay out, then no I/O (`create_only`).
    pub create_only: bool,
    /// `flow`, `flow_id`, `flow_sleep` (µs): flow control among jobs.
    pub flow: i64,
    pub flow_id: u64,
    pub flow_sleep_us: u64,
    /// Read the files' regions into the cache before the job (`pre_read`).
    pub pre_read: bool,
    /// Shell commands run before and after the job (`exec_prerun`, `exec_postrun`).
    pub exec_prerun: Option<String>,
    pub exec_postrun: Option<String>,
    /// fsync a file after writing its layout (`create_fsync`).
    pub create_fsync: bool,
    /// A file's region starts at its current end (`file_append`).
    pub file_append: bool,
    /// What a percentage offset is rounded up to (`offset_align`; 0: the block size).
    pub offset_align: u64,
    /// In client/server runs, generated file names start with the client's name
    /// (`unique_filename`); a local run names files the same either way, as fio does.
    pub unique_filename: bool,
    pub overwrite: bool,
    pub fallocate: Fallocate,
    /// The bytes of `buffer_pattern`, repeated through write buffers.
    pub buffer_pattern: Option<Vec<u8>>,
    pub buffer_compress_percentage: u32,
    pub buffer_compress_chunk: u64,
    pub dedupe_percentage: u32,
    /// Where deduplicated buffers come from (`dedupe_mode`), the working set's share of the
    /// job's size in percent (`dedupe_working_set_percentage`), and whether jobs share one
    /// working set (`dedupe_global`).
    pub dedupe_mode: DedupeMode,
    pub dedupe_working_set_pct: u32,
    pub dedupe_global: bool,
    /// Directories whose regular files (recursively) join the job's files (`opendir`, in the
    /// order given).
    pub opendir: Vec<String>,
    /// Per-I/O file locking among the jobs sharing a file (`lockfile`).
    pub lockfile: LockMode,
    /// Jobs lay out their files one after another (`create_serialize`, fio's default) or each
    /// its own, in parallel.
    pub create_serialize: bool,
    /// time_based was set without a runtime: fio warns and runs without it, and so does fiox.
    pub time_based_dropped: bool,
    /// thinktime_blocks counts completions (fio's default) rather than submissions.
    pub think_on_complete: bool,
    /// Think after this much I/O time instead of after a number of blocks (microseconds).
    pub thinktime_iotime_us: u64,
    /// `rw_sequencer=identical`: `randread:N` repeats one offset N times.
    pub rw_sequencer_identical: bool,
    /// User, group, NUMA, cgroup and I/O scheduler settings (`host.rs`).
    pub host: HostSettings,
    pub fadvise: Fadvise,
    /// How the next file is chosen, and how many files are in play at a time (0: all).
    pub file_service: FileService,
    pub openfiles: u32,
    /// After a think, go on at the rate instead of catching up (`rate_ignore_thinktime`).
    pub rate_ignore_thinktime: bool,
    /// The bs lists are sequential,random instead of read,write (`bs_is_seq_rand`).
    pub bs_is_seq_rand: bool,
    /// Write until ENOSPC; without a size, the file system's free space (`fill_device`).
    pub fill_device: bool,
    /// `write_hint` as the kernel's `RWH_WRITE_LIFE_*` number.
    pub write_hint: Option<u64>,
    /// `hugepage-size`: what huge-page buffers (`mem=mmaphuge`, `shmhuge`) are rounded up to.
    pub hugepage_size: u64,
    /// Keep each block's last state and report the counts (`block_error_percentiles`).
    pub block_error_percentiles: bool,
    /// `stats=0`: the job runs but no report shows it.
    pub stats: bool,
    /// Steady-state detection, when `steadystate_duration` is set.
    pub steadystate: Option<SteadyState>,
    /// Latency-target mode, when `latency_target` is set.
    pub latency_target: Option<LatencyTarget>,
    /// `max_latency`: an I/O slower than this fails the job (microseconds; 0: no limit).
    pub max_latency_us: u64,
    /// `read_iolog`: the job replays a log instead of generating I/O.
    pub replay: Option<ReplaySpec>,
    /// `zonemode` and the zone sizes.
    pub zones: ZoneSpec,
}

/// The last value of each option wins; this index maps option name to that raw option.
struct Merged<'a> {
    by_name: HashMap<&'static str, &'a RawOpt>,
    /// Every option in order, for the rules that read more than the last value.
    all: &'a [RawOpt],
    ctx: Ctx,
    job: &'a str,
}

impl<'a> Merged<'a> {
    /// Indexes the options, settles `kb_base` and parses and checks every option set,
    /// including those that no row binds.
    fn new(job: &'a str, options: &'a [RawOpt], ctx: &Ctx) -> Result<Self> {
        let by_name = options.iter().map(|o| (o.def.name, o)).collect();
        let mut m = Merged { by_name, all: options, ctx: ctx.clone(), job };
        // kb_base changes how every size is read, so it is settled first.
        if let Some(Value::Choice(b)) = m.one("kb_base")? {
            m.ctx.kb_base = b.parse().expect("kb_base choices are numbers");
        }
        for o in options {
            parse_raw(o, &m.ctx)?;
        }
        // A line fio reads as no change (`verify_backlog=:4`) leaves the earlier line's value.
        m.by_name = options
            .iter()
            .filter(|o| !value::leaves_unchanged(o.def, o.value.as_deref().unwrap_or(""), &m.ctx))
            .map(|o| (o.def.name, o))
            .collect();
        Ok(m)
    }

    fn raw(&self, name: &str) -> Option<&'a RawOpt> {
        debug_assert!(table::lookup(name).is_some(), "spec reads unknown option {name}");
        #[cfg(test)]
        if let Some(def) = table::lookup(name) {
            tests::READ.with(|r| r.borrow_mut().insert(def.name));
        }
        self.by_name.get(name).copied()
    }

    /// Parses the option's value (or its default); `None` if neither exists.
    fn parsed(&self, name: &str) -> Result<Option<Parsed>> {
        let def = table::lookup(name).expect("spec reads only options from the table");
        match self.raw(name) {
            Some(r) => parse_raw(r, &self.ctx).map(Some),
            None => Ok(def.default.map(|d| value::parse(def, d, &self.ctx).expect("defaults are tested to parse"))),
        }
    }

    fn one(&self, name: &str) -> Result<Option<Value>> {
        Ok(match self.parsed(name)? {
            None => None,
            Some(Parsed::One(v)) => Some(v),
            Some(Parsed::PerDir(d)) => d.into_iter().flatten().next(),
        })
    }

    fn is_set(&self, name: &str) -> bool {
        self.raw(name).is_some()
    }

    fn flag(&self, name: &str) -> Result<bool> {
        Ok(matches!(self.one(name)?, Some(Value::Bool(true))))
    }

    fn int(&self, name: &str) -> Result<Option<i64>> {
        Ok(match self.one(name)? {
            Some(Value::Int(v)) => Some(v),
            _ => None,
        })
    }

    fn string(&self, name: &str) -> Option<String> {
        self.raw(name).and_then(|r| r.value.clone())
    }

    fn job_err(&self, message: String) -> Error {
        Error::Job { job: self.job.to_string(), message }
    }

    /// Calls every row's binder with the job's value, or the row's default when the job left
    /// the option unset (rows with neither keep the blank's value), in table order.
    fn bind_rows(&self, spec: &mut JobSpec) -> Result<()> {
        for def in table::all() {
            let Some(bind) = def.bind else { continue };
            let raw = self.by_name.get(def.name).copied();
            let parsed = match (raw, def.default) {
                (Some(_), _) if matches!(def.pieces, Pieces::ScaledByPct | Pieces::PctSticks) => self.folded(def),
                (Some(r), _) => parse_raw(r, &self.ctx)?,
                (None, Some(d)) => value::parse(def, d, &self.ctx).expect("defaults are tested to parse"),
                (None, None) => continue,
            };
            bind(spec, &Arg::new(def, parsed, raw, &self.ctx, self.job))?;
        }
        Ok(())
    }
}

impl Merged<'_> {
    /// A row whose lines combine rather than replace one another (`size=20%` in `[global]`
    /// and `size=64k` in the job is 20% of 64 KiB, as fio reads them): every line's readings
    /// in order, folded. Each line has parsed already, so one reading at least exists.
    fn scaled_base(&self, name: &str) -> Option<u64> {
        let def = table::lookup(name)?;
        let lines = self.all.iter().filter(|o| o.def.name == def.name);
        value::scaled_base(lines.flat_map(|o| value::readings(def, o.value.as_deref().unwrap_or(""), &self.ctx)))
    }

    fn folded(&self, def: &'static OptDef) -> Parsed {
        let lines = self.all.iter().filter(|o| o.def.name == def.name);
        let all = lines.flat_map(|o| value::readings(def, o.value.as_deref().unwrap_or(""), &self.ctx));
        Parsed::One(value::fold_readings(def.pieces, all).expect("a parsed line has a reading"))
    }
}

/// Parses one raw option's value, checking that fiox supports it.
pub(crate) fn parse_raw(r: &RawOpt, ctx: &Ctx) -> Result<Parsed> {
    let raw = r.value.as_deref().unwrap_or("");
    // A flag written bare is on; written with `=` and nothing after it, fio refuses it.
    let empty = r.value.as_deref() == Some("") && matches!(r.def.kind, Kind::Bool | Kind::Flag);
    let parsed = if empty { Err("the value is empty".to_string()) } else { value::parse(r.def, raw, ctx) };
    let parsed = parsed.map_err(|reason| Error::BadValue {
        option: r.typed.clone(),
        value: raw.to_string(),
        origin: r.origin.clone(),
        reason,
        forms: r.def.forms(),
    })?;
    check_support(r.def, raw, &parsed, &r.typed, &r.origin)?;
    if let Some(reading) = value::take_leniency() {
        crate::note_leniency(format!("{}: {}={raw}: {reading}, as fio reads it", r.origin, r.typed));
    }
    Ok(parsed)
}

fn check_support(def: &OptDef, raw: &str, parsed: &Parsed, typed: &str, origin: &Origin) -> Result<()> {
    let err =
        |only: Option<String>| Error::NotSupported { option: format!("{typed}={raw}"), origin: origin.clone(), only };
    match def.support {
        Support::Full => Ok(()),
        Support::Only(values) if values.contains(&raw) => Ok(()),
        Support::Only(values) => Err(err(Some(values.join(", ")))),
        // Setting a not-yet-supported option to what is its default anyway (or switching a flag
        // off) changes nothing, so it is accepted: `--verify=0`-style lines in people's notes
        // should keep working.
        Support::NotYet => {
            let is_default =
                def.default.and_then(|d| value::parse(def, d, &Ctx::default()).ok()).as_ref() == Some(parsed);
            let is_off = matches!(def.kind, Kind::Flag | Kind::Bool) && *parsed == Parsed::One(Value::Bool(false));
            if is_default || is_off {
                Ok(())
            } else {
                Err(Error::NotSupported { option: typed.to_string(), origin: origin.clone(), only: None })
            }
        }
    }
}

impl JobSpec {
    /// Resolves a job from its options in order (globals first, then the job's own); later
    /// options override earlier ones, as in fio.
    pub fn resolve(name: &str, options: &[RawOpt], ctx: &Ctx) -> Result<JobSpec> {
        let m = Merged::new(name, options, ctx)?;
        let mut spec = JobSpec { name: name.to_string(), ..JobSpec::default() };
        m.bind_rows(&mut spec)?;
        spec.derive(&m)?;
        spec.engine_rules(&m)?;
        spec.verify = verify::verify(&m, spec.verify.take())?;
        spec.replay = replay::replay(&m, spec.replay.take())?;
        spec.zones = replay::zones(&m, spec.zones)?;
        spec.check(&m)?;
        Ok(spec)
    }

    /// Values that depend on more than one row, once every row is bound.
    fn derive(&mut self, m: &Merged<'_>) -> Result<()> {
        self.size_scaled_from = m.scaled_base("size");
        // rwmixwrite gives the read share only when rwmixread is not set.
        if !m.is_set("rwmixread") && m.is_set("rwmixwrite") {
            self.rwmixread = 100 - m.int("rwmixwrite")?.map_or(0, |w| w as u32);
        }
        if !m.is_set("iodepth_low") {
            self.iodepth_low = self.iodepth;
        }
        if !m.is_set("iodepth_batch_complete_max") {
            // fio's default reaps as many as the minimum (1), which keeps the queue full; the
            // observed fio 3.33 QD8 run shows "IO depths: 8=99.7%" and "complete: 4=100%".
            self.iodepth_batch_complete_max = self.iodepth_batch_complete_min.max(1);
        }
        // fio reads a zero bound of bsrange as the job's bs (4 KiB unless set): `bsrange=0-8k`
        // is 4k to 8k, `bsrange=0-0` is 4k.
        for d in 0..3 {
            if let Some((lo, hi)) = &mut self.bsrange[d] {
                let bs = self.bs[d];
                (*lo, *hi) = (if *lo == 0 { bs } else { *lo }, if *hi == 0 { bs } else { *hi });
                *lo = (*lo).min(*hi);
            }
        }
        if m.flag("gtod_reduce")? {
            (self.keep_lat, self.keep_bw) = ([false; 3], false);
        }
        // fio 3.33 spells a window's maximum `log_max_value=1`; log_window_value says more.
        if self.log_window_value == 0 && m.flag("log_max_value")? {
            self.log_window_value = 1;
        }
        // fio reads the clock id (bound to log_epoch_clock) under either option.
        if !(m.flag("log_alternate_epoch")? || m.flag("log_unix_epoch")?) {
            self.log_epoch_clock = None;
        }
        // The rows of latency_target and steadystate fill these in; their modes are on only
        // with a target or a window.
        self.latency_target = self.latency_target.filter(|l| l.target_us > 0);
        // sprandom picks fio's LFSR and no random map unless the job chose otherwise, which
        // fio 3.42 then refuses when it starts the job (`plan::sprandom::rules`).
        if self.sprandom.on {
            self.sprandom.set_lfsr = !m.is_set("random_generator");
            self.sprandom.set_norandommap = !m.is_set("norandommap");
            if self.sprandom.set_lfsr {
                self.random_generator = RandomGenerator::Lfsr;
            }
            if self.sprandom.set_norandommap {
                self.norandommap = true;
            }
        }
        self.steadystate = self.steadystate.filter(|ss| ss.dur_s > 0);
        // cpus_allowed (bound) wins over cpumask.
        if let (false, Some(mask)) = (m.is_set("cpus_allowed"), m.int("cpumask")?) {
            self.cpus_allowed = host::cpus_of_mask(mask as u64);
            if self.cpus_allowed.is_empty() {
                return Err(m.job_err("cpumask=0 leaves the job no CPU to run on".into()));
            }
        }
        self.ioprio = match (m.int("prioclass")?, m.int("prio")?) {
            (None, None) => None,
            // fio's defaults: best effort when only `prio` is given, level 0 when only the
            // class is (its logs show 0x4003 for prio=3, 0x6000 for prioclass=3).
            (class, level) => Some((class.unwrap_or(2) as u32, level.unwrap_or(0) as u32)),
        };
        // fio 3.42's priority hint sits in bits 3 to 12 of the value, beside the level; alone,
        // it takes the best effort class (its logs show 0x4010 for priohint=2).
        if self.priohint > 0 {
            let (class, level) = self.ioprio.unwrap_or((2, 0));
            self.ioprio = Some((class, level | self.priohint << 3));
        }
        if let Some(ss) = self.steadystate {
            // fio 3.42's rules, in its words.
            if ss.interval_us < 1_000_000 {
                return Err(m.job_err("ss_check_interval must be at least 1s".into()));
            }
            if (ss.dur_s * 1_000_000) % ss.interval_us != 0 {
                return Err(m.job_err(format!(
                    "ss_duration {}us must be multiple of ss_check_interval {}us",
                    ss.dur_s * 1_000_000,
                    ss.interval_us
                )));
            }
        }
        // log_issue_time without write_lat_log and log_offset passes fio 3.42's --parse-only
        // and stops its run: checked when the run is planned (`plan::init_rules`).
        if self.log_issue_time && self.log_store_compressed {
            return Err(m.job_err(
                "log_issue_time with log_store_compressed is not supported yet: the compressed samples have no issue time"
                    .into(),
            ));
        }
        self.placement.check().map_err(|e| m.job_err(e))?;
        if self.ramp_time_us > 0 && self.ramp_size > 0 {
            return Err(m.job_err("job rejected: cannot specify both ramp_time and ramp_size".into()));
        }
        // Every opendir= adds its files (fio adds them again when a directory is named twice),
        // so all of them are kept, not only the last.
        if m.raw("opendir").is_some() {
            let all = m.all.iter().filter(|o| o.def.name == "opendir");
            self.opendir = all.filter_map(|o| o.value.as_ref().map(|v| v.trim().to_string())).collect();
        }
        // fio warns ("time_based requires a runtime/timeout setting") and runs the job as if
        // time_based were not set; fio's own example files rely on it.
        if self.time_based && self.runtime_us == 0 {
            self.time_based = false;
            self.time_based_dropped = true;
        }
        Ok(())
    }

    /// The rules between engine-private options and the job's engine.
    fn engine_rules(&mut self, m: &Merged<'_>) -> Result<()> {
        let ioengine = self.ioengine;
        if matches!(ioengine, "net" | "netsplice") {
            if let Some(f) = m.string("filename") {
                self.net_peer_from_filename(&f, m)?;
            }
        }
        // e4defrag allocates the donor at the file's size.
        if let Some((lo, _)) = self.filesize {
            self.engine.e4defrag.donor_size = lo;
        }
        for fiox_ceph in ["namespace", "ceph_connect_timeout", "ceph_shared_client", "ceph_stall_warn"] {
            if m.is_set(fiox_ceph) && !["rbd", "rados"].contains(&ioengine) {
                return Err(m.job_err(format!("{fiox_ceph}= is for ioengine=rbd and ioengine=rados, not {ioengine}")));
            }
        }
        if m.is_set("rbd_shared_handle") && ioengine != "rbd" {
            return Err(m.job_err(format!("rbd_shared_handle= is for ioengine=rbd, not {ioengine}")));
        }
        crate::defs::engine::http::rules(&self.engine.http, |o| m.is_set(o), ioengine).map_err(|e| m.job_err(e))?;
        if self.engine.ceph.connect_timeout_us == Some(0) {
            return Err(m.job_err("ceph_connect_timeout=0 would not wait for the monitors at all".into()));
        }
        if m.is_set("cmdprio_percentage") && m.is_set("cmdprio_bssplit") {
            return Err(m.job_err("cmdprio_percentage and cmdprio_bssplit cannot be used together".into()));
        }
        // Engine-private options must belong to the job's engine (one inherited from a
        // [global] section for jobs of another engine is left alone, as fio does).
        for o in m.all {
            if !o.def.accepted_by(ioengine) && !o.global {
                return Err(Error::WrongEngine {
                    option: o.typed.clone(),
                    origin: o.origin.clone(),
                    owners: o.def.engines.join("/"),
                    job: m.job.to_string(),
                    engine: ioengine.to_string(),
                });
            }
        }
        Ok(())
    }

    /// fio's net engines also take their peer as `filename=host,port[,protocol]`, and a UNIX
    /// socket's path as the filename.
    fn net_peer_from_filename(&mut self, f: &str, m: &Merged<'_>) -> Result<()> {
        let net = &mut self.engine.net;
        let parts: Vec<&str> = f.split(',').collect();
        if net.protocol == "unix" && parts.len() == 1 {
            net.hostname = Some(f.to_string());
        } else if (2..=3).contains(&parts.len()) {
            let port: u16 = parts[1]
                .parse()
                .ok()
                .filter(|&p| p > 0)
                .ok_or_else(|| m.job_err(format!("filename={f}: '{}' is not a port (1 to 65535)", parts[1])))?;
            net.hostname = Some(parts[0].to_string());
            net.port = Some(port);
            if let Some(&p) = parts.get(2) {
                net.protocol = match p {
                    "tcp" => "tcp",
                    "tcpv6" => "tcpv6",
                    "udp" => "udp",
                    "udpv6" => "udpv6",
                    "unix" => "unix",
                    other => {
                        return Err(m.job_err(format!(
                            "filename={f}: '{other}' is not a protocol (tcp, tcpv6, udp, udpv6, unix)"
                        )))
                    }
                };
            }
        }
        Ok(())
    }

    /// Cross-option checks that need no I/O. Checks that need the file or device (its size,
    /// whether it is mounted) happen when the run is planned, still before any I/O.
    fn check(&self, m: &Merged<'_>) -> Result<()> {
        let err = |msg: String| Err(m.job_err(msg));
        if self.bs.contains(&0) {
            return err("bs must be at least 1 byte".into());
        }
        // cpuio and exec have no file: their jobs end on time, not on a size.
        // nbd, rbd and libblkio take their size from the export, the image or the device.
        let sized = !matches!(self.ioengine, "cpuio" | "exec" | "nbd" | "rbd" | "libblkio");
        if sized
            && self.replay.is_none()
            && self.filename.is_none()
            && self.opendir.is_empty()
            && self.size.is_none()
            && self.filesize.is_none()
            && self.io_size.is_none()
            && !self.fill_device
        {
            return err("no target size: set size= (or filesize=), or filename= to an existing file or device".into());
        }
        if self.pre_read && self.direct {
            // fio fails the job with EIO after its first I/O here.
            return err("pre_read=1 fills the page cache, which direct=1 bypasses: use one or the other".into());
        }
        if matches!(self.size, Some(SizeSpec::Bytes(0))) && self.filename.is_none() {
            return err("size=0 leaves nothing to do".into());
        }
        if self.iodepth_batch_complete_min > self.iodepth_batch_complete_max {
            return err(format!(
                "iodepth_batch_complete_min={} is above iodepth_batch_complete_max={}",
                self.iodepth_batch_complete_min, self.iodepth_batch_complete_max
            ));
        }
        if self.rw.is_random() && self.rw_modifier > 1 << 20 {
            return err(format!("rw modifier {} is too large for a random pattern (it counts I/Os)", self.rw_modifier));
        }
        if self.readonly && (self.rw.writes() || self.rw.trims()) {
            return err(format!("rw={} writes, but readonly is set", self.rw.name()));
        }
        if self.log_store_compressed && self.log_window_value == 2 {
            // fio 3.33's compressed sample has one value field, and its --inflate-log could not
            // print the second column.
            return err("log_window_value=both cannot be stored compressed (log_store_compressed=1): a compressed sample holds one value".into());
        }
        Ok(())
    }
}

/// `metrics_listen`'s and `live_listen`'s address: `host:port`, or a bare port on loopback (the
/// safe default: a benchmark's figures are not published to the network unless an address says
/// so).
pub fn listen_addr(v: &str) -> std::result::Result<std::net::SocketAddr, String> {
    let v = v.trim();
    if let Ok(port) = v.parse::<u16>() {
        return Ok(std::net::SocketAddr::from(([127, 0, 0, 1], port)));
    }
    v.parse().map_err(|_| format!("{v}: give host:port with a numeric address (127.0.0.1:9187, [::1]:9187) or a port"))
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::collections::HashSet;

    use crate::table::{self, Support};
    use crate::{argv, assemble, Ctx};

    thread_local! {
        /// The options `Merged` was asked for on this thread (every accessor goes through `raw`).
        pub(super) static READ: RefCell<HashSet<&'static str>> = RefCell::new(HashSet::new());
    }

    /// Options the table supports that the job model leaves to another stage, with where.
    const READ_ELSEWHERE: &[(&str, &str)] = &[
        ("name", "job.rs: the section or --name that starts a job"),
        // Accepted and checked, with no effect in fio 3.33 on Linux either; their help says so.
        ("write_barrier", "no Linux engine of fio 3.33 issues barrier writes"),
        ("atomic", "O_ATOMIC does not exist on Linux (fio opens with flag 0)"),
        ("log_entries", "fiox's logs grow as needed; fio's only sizes its first allocation"),
    ];
    /// Options that do nothing outside a profile, in fio as in fiox (defs/profile.rs).
    fn profile_only(name: &str) -> bool {
        table::lookup(name).is_some_and(|d| d.category == table::Category::Profile)
    }

    /// A silently ignored option is a benchmark's worst bug: every option the table says is
    /// fully supported must have a binder (`spec/bind.rs`) or be read by a rule of `resolve`.
    /// The jobs below cover the rules that read an option only when another one is set.
    #[test]
    fn every_supported_option_is_read() {
        let jobs: &[&[&str]] = &[
            &["--size=1m"],
            &["--size=1m", "--rw=randrw", "--rate=1m", "--rate_iops=10", "--thinktime=1"],
            &["--size=1m", "--ioengine=io_uring", "--cmdprio_percentage=10"],
            &["--size=1m", "--clocksource=clock_gettime", "--prioclass=2", "--cpus_allowed=0"],
        ];
        READ.with(|r| r.borrow_mut().clear());
        for args in jobs {
            let mut a = args.to_vec();
            a.push("--name=t");
            assemble(&argv::parse(a).unwrap(), &[], &Ctx::default()).unwrap();
        }
        let read = READ.with(|r| r.borrow().clone());
        let unread: Vec<&str> = table::all()
            // `Only` rows accept nothing but their default behaviour, so nothing needs reading.
            .filter(|d| matches!(d.support, Support::Full))
            // A row with a binder lands in the job model whenever a job is resolved.
            .filter(|d| d.bind.is_none())
            .map(|d| d.name)
            .filter(|n| !read.contains(n) && !READ_ELSEWHERE.iter().any(|(e, _)| e == n) && !profile_only(n))
            .collect();
        assert!(unread.is_empty(), "supported options the job model never reads: {unread:?}");
    }
}
