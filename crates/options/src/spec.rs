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
use crate::table::{self, Kind, OptDef, Support};
use crate::value::{self, Ctx, Parsed, RwMode, Value};

mod replay;
mod verify;
pub use replay::{ReplaySpec, ZoneMode, ZoneSpec};
pub use verify::VerifySpec;

/// A size that may be relative to the file or device.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SizeSpec {
    Bytes(u64),
    Percent(f64),
}

const DIST_FORMS: &str =
    "random, zipf:θ[:center], pareto:h[:center], normal:dev[:center], zoned:P/R%:..., zoned_abs:P/SIZE:...";
const IGNORE_FORMS: &str = "READ,WRITE,VERIFY lists of errno names or numbers separated by ':', e.g. EIO:ENOSPC,EIO";
const MEMPOLICY_FORMS: &str = "default, local, prefer:N, bind:LIST or interleave:LIST (LIST like 0,2-3)";
const FILE_SERVICE_FORMS: &str = "roundrobin[:N], sequential, random[:N], zipf:θ, pareto:h, normal:σ or gauss:σ";
const SS_FORMS: &str =
    "iops, iops_slope, bw or bw_slope, ':' and a threshold: a number or a percentage of the mean, e.g. iops_slope:0.1%";
const PATTERN_FORMS: &str = "0x hex bytes, a quoted string or a number, or several of those in a row";

/// How random offsets are spread over the blocks (`random_distribution`).
#[derive(Debug, Clone, PartialEq)]
pub enum RandomDist {
    /// Uniform, each block once per pass unless `norandommap`.
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
    fn parse(text: &str, ctx: &Ctx) -> std::result::Result<RandomDist, String> {
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

/// What steady state is judged on (`steadystate`, `ss_dur`, `ss_ramp`).
#[derive(Debug, Clone, Copy, PartialEq)]
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

    /// `criterion:limit[%]`, the criterion one of fio's four words, the limit a number of 0 or
    /// more; the window and ramp are filled in by the caller.
    fn parse(text: &str) -> std::result::Result<SteadyState, String> {
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
        Ok(SteadyState { bw, slope, limit, pct, dur_s: 0, ramp_us: 0 })
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
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencyTarget {
    pub target_us: u64,
    pub window_us: u64,
    pub percentile: f64,
    /// Keep adjusting the depth for the whole run instead of ending once it is found.
    pub run: bool,
}

/// Options that only some engines read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EngineOpts {
    pub hipri: bool,
    /// pvsync2: the share of I/Os (percent) sent with RWF_HIPRI when `hipri` is set.
    pub hipri_percentage: u32,
    pub uncached: bool,
    pub nowait: bool,
    pub fixedbufs: bool,
    pub registerfiles: bool,
    pub sqthread_poll: bool,
    pub sqthread_poll_cpu: Option<u32>,
    pub nonvectored: i32,
    pub force_async: u64,
    pub userspace_reap: bool,
    /// Per direction: the share of I/Os (percent) sent with priority `cmdprio_class`/`cmdprio`.
    pub cmdprio_percentage: [u32; 3],
    pub cmdprio_class: [u32; 3],
    pub cmdprio: [u32; 3],
    /// Per direction: `(block size, percent, explicit (class, level))` (`cmdprio_bssplit`).
    pub cmdprio_bssplit: [Vec<crate::value::PrioSplitEntry>; 3],
    /// cpuio: the share of a CPU to burn (0: not given; values above 100, and negative ones as
    /// in fio, mean 100), the length of one burn in microseconds, qsort instead of a busy loop,
    /// and whether to stop once the jobs doing I/O have finished.
    pub cpuload: u32,
    pub cpuchunks: u32,
    pub cpumode_qsort: bool,
    pub exit_on_io_done: bool,
    /// exec: the program, its raw argument string, seconds between SIGTERM and SIGKILL, and
    /// whether its output goes to JOBNAME.stdout/.stderr.
    pub program: Option<String>,
    pub arguments: Option<String>,
    pub grace_time: u32,
    pub std_redirect: bool,
    /// e4defrag: the donor file and whether its space is allocated per I/O.
    pub donorname: Option<String>,
    pub inplace: bool,
    /// e4defrag: how much of the donor to allocate at start (`filesize`, its low end; 0: unset).
    pub donor_size: u64,
    /// net/netsplice (hostname and port also rdma).
    pub hostname: Option<String>,
    pub port: Option<u16>,
    pub protocol: &'static str,
    pub nodelay: bool,
    pub listen: bool,
    pub pingpong: bool,
    pub interface: Option<String>,
    pub ttl: u32,
    pub window_size: Option<u32>,
    pub mss: Option<u32>,
    /// rbd and rados (Ceph): which cluster, client, configuration, pool and image.
    pub ceph: CephOpts,
    /// Options of engines fiox cannot run on this kind of machine (sg, io_uring_cmd, mtd,
    /// nbd, rdma, gfapi): parsed and checked so that job files for them are accepted, and
    /// named in the error that refuses the run. `(option, value)` in the order read.
    pub other: Vec<(&'static str, String)>,
}

/// The options of fio's `rbd` and `rados` engines, with fio 3.33's defaults.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CephOpts {
    /// The cluster's name (`clustername`): picks `$cluster.conf` and the full client name.
    pub clustername: Option<String>,
    /// The client (`clientname`), `admin` when unset.
    pub clientname: Option<String>,
    /// The configuration file (`conf`; for rbd a fiox extension); unset, librados's search (`$CEPH_CONF`, then
    /// `/etc/ceph/$cluster.conf`, `~/.ceph/$cluster.conf`, `./$cluster.conf`).
    pub conf: Option<String>,
    pub pool: Option<String>,
    /// rbd: the image (`rbdname`).
    pub rbdname: Option<String>,
    /// Spin for completions instead of sleeping (`busy_poll`; rbd only, as in fio).
    pub busy_poll: bool,
    /// rados: create every object when the job starts (`touch_objects`, default 1).
    pub touch_objects: bool,
    /// fiox: the RADOS namespace of the image or objects (`namespace`).
    pub namespace: Option<String>,
    /// fiox: how long to wait for the monitors, microseconds (`ceph_connect_timeout`); unset,
    /// the configuration's `client_mount_timeout` if it sets one, else 60 s.
    pub connect_timeout_us: Option<u64>,
    /// fiox: one librados client for all jobs of the process that agree on it
    /// (`ceph_shared_client`).
    pub shared_client: bool,
    /// fiox: one open rbd image for all jobs of the process on it (`rbd_shared_handle`).
    pub shared_handle: bool,
    /// fiox: the stall watchdog's threshold, microseconds (`ceph_stall_warn`; 0: off).
    pub stall_warn_us: u64,
    /// The keyring file (`--keyring` of `fiox rbd`/`fiox rados`; no job option): replaces the
    /// configuration's `keyring`.
    pub keyring: Option<String>,
}

/// One rule of which I/Os get a priority: those of `bs` (any size if `None`), `pct` percent of
/// them, with `ioprio` (`class << 13 | level`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrioRule {
    pub bs: Option<u64>,
    pub pct: f64,
    pub ioprio: u16,
}

impl EngineOpts {
    /// The priority rules of direction `d` (`cmdprio_bssplit`, else `cmdprio_percentage`);
    /// empty when neither is set. The first rule whose block size matches applies.
    pub fn cmdprio_rules(&self, d: usize) -> Vec<PrioRule> {
        let value = |class: u32, level: u32| ((class << 13) | level) as u16;
        let default = value(self.cmdprio_class[d], self.cmdprio[d]);
        if !self.cmdprio_bssplit[d].is_empty() {
            return self.cmdprio_bssplit[d]
                .iter()
                .map(|&(bs, pct, p)| PrioRule { bs: Some(bs), pct, ioprio: p.map_or(default, |(c, l)| value(c, l)) })
                .collect();
        }
        if self.cmdprio_percentage[d] == 0 {
            return Vec::new();
        }
        vec![PrioRule { bs: None, pct: self.cmdprio_percentage[d] as f64, ioprio: default }]
    }
}

/// A job, resolved. Times are in microseconds, sizes in bytes.
#[derive(Debug, Clone)]
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
    pub loops: u32,
    pub numjobs: u32,
    pub thread: bool,
    pub group_reporting: bool,
    pub stonewall: bool,
    pub new_group: bool,
    pub randrepeat: bool,
    pub randseed: u64,
    pub norandommap: bool,
    pub lockmem: u64,
    pub kb_base: u64,
    pub end_fsync: bool,
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
    pub startdelay_us: u64,
    pub exitall: bool,
    pub thinktime_us: u64,
    pub thinktime_spin_us: u64,
    pub thinktime_blocks: u32,
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
    ctx: Ctx,
    job: &'a str,
}

impl<'a> Merged<'a> {
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

    fn u32(&self, name: &str, fallback: u32) -> Result<u32> {
        let v = self.int(name)?.unwrap_or(fallback as i64);
        u32::try_from(v).map_err(|_| self.job_err(format!("{name}={v} is too large")))
    }

    fn size(&self, name: &str) -> Result<Option<u64>> {
        Ok(match self.one(name)? {
            Some(Value::Size(v)) => Some(v),
            _ => None,
        })
    }

    fn size_spec(&self, name: &str) -> Result<Option<SizeSpec>> {
        Ok(match self.one(name)? {
            Some(Value::Size(v)) => Some(SizeSpec::Bytes(v)),
            Some(Value::Pct(p)) => Some(SizeSpec::Percent(p)),
            _ => None,
        })
    }

    fn time(&self, name: &str) -> Result<u64> {
        Ok(match self.one(name)? {
            Some(Value::Time(v)) => v,
            _ => 0,
        })
    }

    /// A log's file-name prefix: the value, or the job's name when the option is written bare.
    fn log_prefix(&self, name: &str, job: &str) -> Option<String> {
        self.raw(name).map(|r| r.value.as_deref().map_or(job.to_string(), |v| v.trim().to_string()))
    }

    fn string(&self, name: &str) -> Option<String> {
        self.raw(name).and_then(|r| r.value.clone())
    }

    fn choice(&self, name: &str) -> Result<&'static str> {
        match self.one(name)? {
            Some(Value::Choice(c)) => Ok(c),
            _ => unreachable!("{name} is a choice with a default"),
        }
    }

    /// A choice option as its type (see `choices.rs`, whose test covers every word).
    fn typed<T>(&self, name: &str, from_word: fn(&str) -> Option<T>) -> Result<T> {
        let word = self.choice(name)?;
        Ok(from_word(word).unwrap_or_else(|| unreachable!("{name}={word} has no variant in choices.rs")))
    }

    /// Per-direction sizes, falling back to the default for directions left empty.
    fn per_dir_size(&self, name: &str) -> Result<[u64; 3]> {
        let def = table::lookup(name).expect("known option");
        let default = match def.default.map(|d| value::parse(def, d, &self.ctx)) {
            Some(Ok(Parsed::One(Value::Size(v)))) => v,
            _ => 0,
        };
        Ok(match self.parsed(name)? {
            Some(Parsed::One(Value::Size(v))) => [v; 3],
            Some(Parsed::PerDir(d)) => d.map(|v| match v {
                Some(Value::Size(s)) => s,
                _ => default,
            }),
            _ => [default; 3],
        })
    }

    /// Per-direction values of any kind, `None` where a direction keeps the default.
    fn per_dir(&self, name: &str) -> Result<[Option<Value>; 3]> {
        Ok(match self.parsed(name)? {
            Some(Parsed::One(v)) => [Some(v.clone()), Some(v.clone()), Some(v)],
            Some(Parsed::PerDir(d)) => d,
            None => [None, None, None],
        })
    }

    fn per_dir_int(&self, name: &str, fallback: u64) -> Result<[u64; 3]> {
        Ok(self.per_dir(name)?.map(|v| match v {
            Some(Value::Int(i)) => i.max(0) as u64,
            Some(Value::Size(s)) => s,
            _ => fallback,
        }))
    }

    /// An option whose value has a syntax of its own (`random_distribution`, `buffer_pattern`):
    /// parsed by `parse`, with errors reported like every other bad value.
    fn custom<T>(
        &self,
        name: &str,
        parse: impl Fn(&str) -> std::result::Result<T, String>,
        forms: &str,
    ) -> Result<Option<T>> {
        let Some(r) = self.raw(name) else { return Ok(None) };
        let raw = r.value.as_deref().unwrap_or("");
        parse(raw).map(Some).map_err(|reason| Error::BadValue {
            option: r.typed.clone(),
            value: raw.to_string(),
            origin: r.origin.clone(),
            reason,
            forms: forms.to_string(),
        })
    }

    fn job_err(&self, message: String) -> Error {
        Error::Job { job: self.job.to_string(), message }
    }
}

/// Parses one raw option's value, checking that fiox supports it.
pub(crate) fn parse_raw(r: &RawOpt, ctx: &Ctx) -> Result<Parsed> {
    let raw = r.value.as_deref().unwrap_or("");
    let parsed = value::parse(r.def, raw, ctx).map_err(|reason| Error::BadValue {
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
        let mut by_name = HashMap::new();
        for o in options {
            by_name.insert(o.def.name, o);
        }
        let mut m = Merged { by_name, ctx: ctx.clone(), job: name };
        // kb_base changes how every size is read, so it is settled first.
        if let Some(Value::Choice(b)) = m.one("kb_base")? {
            m.ctx.kb_base = b.parse().expect("kb_base choices are numbers");
        }
        // Every option set is parsed and checked, including those the spec does not read below.
        for o in options {
            parse_raw(o, &m.ctx)?;
        }

        let (rw, rw_modifier) = match m.one("rw")? {
            Some(Value::Rw(mode, n)) => (mode, n),
            _ => (RwMode::Read, 0),
        };
        let rwmixread = match (m.is_set("rwmixread"), m.is_set("rwmixwrite")) {
            (false, true) => 100 - m.u32("rwmixwrite", 50)?,
            _ => m.u32("rwmixread", 50)?,
        };
        let ioengine = m.choice("ioengine")?;
        let iodepth = m.u32("iodepth", 1)?;
        let mut direct = m.flag("direct")?;
        if m.is_set("buffered") && !m.flag("buffered")? {
            direct = true;
        }
        let engine = EngineOpts {
            hipri: m.flag("hipri")?,
            hipri_percentage: m.u32("hipri_percentage", 100)?,
            uncached: m.flag("uncached")?,
            nowait: m.flag("nowait")?,
            fixedbufs: m.flag("fixedbufs")?,
            registerfiles: m.flag("registerfiles")?,
            sqthread_poll: m.flag("sqthread_poll")?,
            sqthread_poll_cpu: m.int("sqthread_poll_cpu")?.map(|v| v as u32),
            nonvectored: m.int("nonvectored")?.unwrap_or(-1) as i32,
            force_async: m.int("force_async")?.unwrap_or(0) as u64,
            userspace_reap: m.flag("userspace_reap")?,
            cmdprio_percentage: m.per_dir_int("cmdprio_percentage", 0)?.map(|v| v as u32),
            cmdprio_class: m.per_dir_int("cmdprio_class", 1)?.map(|v| v as u32),
            cmdprio: m.per_dir_int("cmdprio", 0)?.map(|v| v as u32),
            cmdprio_bssplit: m.per_dir("cmdprio_bssplit")?.map(|v| match v {
                Some(Value::PrioSplit(s)) => s,
                _ => Vec::new(),
            }),
            ..EngineOpts::default()
        };
        let mut engine = engine;
        engine.cpuload = match m.int("cpuload")? {
            None | Some(0) => 0,
            // fio stores the value unsigned, so a negative one wraps to a huge load, which is
            // then capped like any load above 100.
            Some(v) if !(0..=100).contains(&v) => 100,
            Some(v) => v as u32,
        };
        engine.cpuchunks = m.u32("cpuchunks", 50000)?;
        engine.cpumode_qsort = m.choice("cpumode")? == "qsort";
        engine.exit_on_io_done = m.flag("exit_on_io_done")?;
        engine.program = m.string("program");
        engine.arguments = m.string("arguments");
        engine.grace_time = m.u32("grace_time", 1)?;
        engine.std_redirect = m.flag("std_redirect")?;
        engine.donorname = m.string("donorname");
        engine.inplace = m.int("inplace")?.unwrap_or(0) == 1;
        if let Some(Value::Range(lo, _)) = m.one("filesize")? {
            engine.donor_size = lo;
        }
        engine.hostname = m.string("hostname");
        engine.port = m.int("port")?.map(|p| p as u16);
        engine.protocol = m.choice("protocol")?;
        engine.nodelay = m.flag("nodelay")?;
        engine.listen = m.flag("listen")?;
        engine.pingpong = m.flag("pingpong")?;
        engine.interface = m.string("interface");
        engine.ttl = m.u32("ttl", 1)?;
        engine.window_size = m.int("window_size")?.map(|v| v as u32);
        engine.mss = m.int("mss")?.map(|v| v as u32);
        if matches!(ioengine, "net" | "netsplice") {
            // fio's net engines also take their peer as `filename=host,port[,protocol]`, and a
            // UNIX socket's path as the filename.
            if let Some(f) = m.string("filename") {
                let parts: Vec<&str> = f.split(',').collect();
                if engine.protocol == "unix" && parts.len() == 1 {
                    engine.hostname = Some(f.clone());
                } else if (2..=3).contains(&parts.len()) {
                    let port: u16 =
                        parts[1].parse().ok().filter(|&p| p > 0).ok_or_else(|| {
                            m.job_err(format!("filename={f}: '{}' is not a port (1 to 65535)", parts[1]))
                        })?;
                    engine.hostname = Some(parts[0].to_string());
                    engine.port = Some(port);
                    if let Some(&p) = parts.get(2) {
                        engine.protocol = match p {
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
            }
        }
        for name in [
            "cmd_type",
            "readfua",
            "writefua",
            "sg_write_mode",
            "stream_id",
            "skip_bad",
            "uri",
            "bindname",
            "verb",
            "volume",
            "brick",
            "single-instance",
        ] {
            // Read (and so checked) even when unset, so that every row of the table is used.
            let _ = m.parsed(name)?;
            if let Some(v) = m.string(name) {
                engine.other.push((name, v));
            }
        }
        engine.ceph = CephOpts {
            clustername: m.string("clustername"),
            clientname: m.string("clientname"),
            conf: m.string("conf"),
            pool: m.string("pool"),
            rbdname: m.string("rbdname"),
            busy_poll: m.flag("busy_poll")?,
            touch_objects: m.flag("touch_objects")?,
            namespace: m.string("namespace"),
            connect_timeout_us: m.is_set("ceph_connect_timeout").then(|| m.time("ceph_connect_timeout")).transpose()?,
            shared_client: m.flag("ceph_shared_client")?,
            shared_handle: m.flag("rbd_shared_handle")?,
            stall_warn_us: m.time("ceph_stall_warn")?,
            keyring: None,
        };
        for fiox_ceph in ["namespace", "ceph_connect_timeout", "ceph_shared_client", "ceph_stall_warn"] {
            if m.is_set(fiox_ceph) && !["rbd", "rados"].contains(&ioengine) {
                return Err(m.job_err(format!("{fiox_ceph}= is for ioengine=rbd and ioengine=rados, not {ioengine}")));
            }
        }
        if m.is_set("rbd_shared_handle") && ioengine != "rbd" {
            return Err(m.job_err(format!("rbd_shared_handle= is for ioengine=rbd, not {ioengine}")));
        }
        if engine.ceph.connect_timeout_us == Some(0) {
            return Err(m.job_err("ceph_connect_timeout=0 would not wait for the monitors at all".into()));
        }
        let engine = engine;
        if m.is_set("cmdprio_percentage") && m.is_set("cmdprio_bssplit") {
            return Err(m.job_err("cmdprio_percentage and cmdprio_bssplit cannot be used together".into()));
        }
        // Engine-private options must belong to the job's engine (one inherited from a
        // [global] section for jobs of another engine is left alone, as fio does).
        for o in options {
            if !o.def.accepted_by(ioengine) && !o.global {
                return Err(Error::WrongEngine {
                    option: o.typed.clone(),
                    origin: o.origin.clone(),
                    owners: o.def.engines.join("/"),
                    job: name.to_string(),
                    engine: ioengine.to_string(),
                });
            }
        }
        let percentile_list = match m.one("percentile_list")? {
            Some(Value::Floats(v)) => v,
            _ => Vec::new(),
        };
        let filesize = match m.one("filesize")? {
            Some(Value::Range(lo, hi)) => Some((lo, hi)),
            _ => None,
        };
        let mut spec = JobSpec {
            name: name.to_string(),
            description: m.string("description"),
            rw,
            rw_modifier,
            rwmixread,
            bs: m.per_dir_size("bs")?,
            size: m.size_spec("size")?,
            filesize,
            io_size: m.size_spec("io_size")?,
            offset: m.size_spec("offset")?.unwrap_or(SizeSpec::Bytes(0)),
            offset_increment: m.size_spec("offset_increment")?.unwrap_or(SizeSpec::Bytes(0)),
            filename: m.string("filename"),
            directory: m.string("directory"),
            keep_lat: {
                let all = !m.flag("gtod_reduce")?;
                [all && !m.flag("disable_slat")?, all && !m.flag("disable_clat")?, all && !m.flag("disable_lat")?]
            },
            log_prio: m.flag("log_prio")?,
            // fio reads the clock id under either option.
            log_epoch_clock: {
                let id = m.int("log_alternate_epoch_clock_id")?.unwrap_or(0) as i32;
                (m.flag("log_alternate_epoch")? | m.flag("log_unix_epoch")?).then_some(id)
            },
            disk_util: m.flag("disk_util")?,
            keep_bw: !m.flag("gtod_reduce")? && !m.flag("disable_bw_measurement")?,
            filename_format: m.string("filename_format").unwrap_or_else(|| "$jobname.$jobnum.$filenum".into()),
            nrfiles: m.u32("nrfiles", 1)?,
            ioengine,
            engine,
            iodepth,
            iodepth_batch_submit: m.u32("iodepth_batch_submit", 1)?,
            iodepth_batch_complete_min: m.u32("iodepth_batch_complete_min", 1)?,
            // fio's default reaps as many as the minimum (1), which keeps the queue full; the
            // observed fio 3.33 QD8 run shows "IO depths: 8=99.7%" and "complete: 4=100%".
            iodepth_batch_complete_max: m
                .u32("iodepth_batch_complete_max", m.u32("iodepth_batch_complete_min", 1)?.max(1))?,
            iodepth_low: m.u32("iodepth_low", iodepth)?,
            direct,
            runtime_us: m.time("runtime")?,
            hang_timeout_us: m.time("hang_timeout")?,
            time_based: m.flag("time_based")?,
            ramp_time_us: m.time("ramp_time")?,
            loops: m.u32("loops", 1)?,
            numjobs: m.u32("numjobs", 1)?,
            thread: m.flag("thread")?,
            group_reporting: m.flag("group_reporting")?,
            stonewall: m.flag("stonewall")?,
            new_group: m.flag("new_group")?,
            // fiox draws every random choice from one seeded stream per job, so `allrandrepeat`
            // makes all of them repeatable exactly as randrepeat does.
            randrepeat: m.flag("allrandrepeat")? | m.flag("randrepeat")?,
            randseed: m.int("randseed")?.unwrap_or(0x89) as u64,
            norandommap: m.flag("norandommap")?,
            lockmem: m.size("lockmem")?.unwrap_or(0),
            kb_base: m.ctx.kb_base,
            end_fsync: m.flag("end_fsync")?,
            fsync_on_close: m.flag("fsync_on_close")?,
            unlink: m.flag("unlink")?,
            unlink_each_loop: m.flag("unlink_each_loop")?,
            allow_mounted_write: m.flag("allow_mounted_write")?,
            readonly: m.flag("readonly")?,
            zero_buffers: m.flag("zero_buffers")?,
            refill_buffers: m.flag("refill_buffers")?,
            scramble_buffers: m.flag("scramble_buffers")?,
            mem: match m.string("mem").filter(|raw| raw.contains(':')) {
                // fio maps `mmaphuge:FILE` from a file on hugetlbfs; the choice parser keeps only
                // the word, so the file would be ignored without this.
                Some(raw) => {
                    return Err(m.job_err(format!(
                        "mem={raw}: a file for the buffers (after ':') is not supported yet; mem=mmaphuge maps anonymous huge pages"
                    )))
                }
                None => m.typed("mem", MemKind::from_word)?,
            },
            iomem_align: m.size("iomem_align")?.unwrap_or(0),
            clat_percentiles: m.flag("clat_percentiles")?,
            lat_percentiles: m.flag("lat_percentiles")?,
            slat_percentiles: m.flag("slat_percentiles")?,
            percentile_list,
            significant_figures: m.u32("significant_figures", 4)?,
            bwavgtime_ms: m.int("bwavgtime")?.unwrap_or(500) as u64,
            iopsavgtime_ms: m.int("iopsavgtime")?.unwrap_or(500) as u64,
            verify: verify::verify(&m)?,
            bsrange: m.per_dir("bsrange")?.map(|v| match v {
                Some(Value::Range(lo, hi)) => Some((lo, hi)),
                _ => None,
            }),
            bssplit: m.per_dir("bssplit")?.map(|v| match v {
                Some(Value::Split(s)) => s,
                _ => Vec::new(),
            }),
            blockalign: m.per_dir_int("ba", 0)?,
            bs_unaligned: m.flag("bs_unaligned")?,
            percentage_random: m.per_dir_int("percentage_random", 100)?.map(|v| v as u32),
            fsync: m.u32("fsync", 0)?,
            fdatasync: m.u32("fdatasync", 0)?,
            sync_file_range: match m.string("sync_file_range") {
                Some(v) => SyncFileRange::parse(&v).map_err(|e| m.job_err(e))?,
                None => None,
            },
            serialize_overlap: m.flag("serialize_overlap")?,
            offload: m.choice("io_submit_mode")? == "offload",
            number_ios: m.int("number_ios")?.unwrap_or(0) as u64,
            invalidate: m.flag("invalidate")?,
            startdelay_us: m.time("startdelay")?,
            exitall: m.flag("exitall")?,
            thinktime_us: m.time("thinktime")?,
            thinktime_spin_us: m.time("thinktime_spin")?,
            thinktime_blocks: m.u32("thinktime_blocks", 1)?,
            rate: m.per_dir_int("rate", 0)?,
            rate_iops: m.per_dir_int("rate_iops", 0)?,
            rate_poisson: m.choice("rate_process")? == "poisson",
            cpus_allowed: match (m.string("cpus_allowed"), m.int("cpumask")?) {
                (Some(list), _) => {
                    host::cpu_list(&list).map_err(|e| m.job_err(format!("cpus_allowed={list}: {e}")))?
                }
                (None, Some(mask)) => {
                    let cpus = host::cpus_of_mask(mask as u64);
                    if cpus.is_empty() {
                        return Err(m.job_err("cpumask=0 leaves the job no CPU to run on".into()));
                    }
                    cpus
                }
                (None, None) => Vec::new(),
            },
            cpus_split: m.choice("cpus_allowed_policy")? == "split",
            nice: m.int("nice")?.unwrap_or(0) as i32,
            ioprio: match (m.int("prioclass")?, m.int("prio")?) {
                (None, None) => None,
                // fio's defaults: best effort when only `prio` is given, level 0 when only the
                // class is (its logs show 0x4003 for prio=3, 0x6000 for prioclass=3).
                (class, level) => Some((class.unwrap_or(2) as u32, level.unwrap_or(0) as u32)),
            },
            write_iolog: m.string("write_iolog").map(|s| s.trim().to_string()),
            wait_for: m.string("wait_for").map(|s| s.trim().to_string()),
            write_bw_log: m.log_prefix("write_bw_log", name),
            write_lat_log: m.log_prefix("write_lat_log", name),
            write_iops_log: m.log_prefix("write_iops_log", name),
            write_hist_log: m.log_prefix("write_hist_log", name),
            write_intended_lat_log: m.log_prefix("write_intended_lat_log", name),
            metrics_listen: m.string("metrics_listen").map(|v| listen_addr(&v)).transpose().map_err(|reason| {
                Error::Job { job: name.to_string(), message: format!("metrics_listen={reason}") }
            })?,
            live_listen: m.string("live_listen").map(|v| listen_addr(&v)).transpose().map_err(|reason| {
                Error::Job { job: name.to_string(), message: format!("live_listen={reason}") }
            })?,
            log_hist_msec: m.int("log_hist_msec")?.unwrap_or(0) as u64,
            log_hist_coarseness: m.u32("log_hist_coarseness", 0)?,
            log_avg_msec: m.int("log_avg_msec")?.unwrap_or(0) as u64,
            log_window_value: match m.choice("log_window_value")? {
                "max" | "1" => 1,
                "both" | "2" => 2,
                _ if m.flag("log_max_value")? => 1,
                _ => 0,
            },
            log_offset: m.flag("log_offset")?,
            log_store_compressed: m.flag("log_store_compressed")?,
            log_compression: match m.size("log_compression")? {
                // fio's bounds: a chunk of at least 1 KiB, at most 512 MiB.
                Some(v) if !(1024..=512 << 20).contains(&v) => {
                    return Err(m.job_err(format!("log_compression={v}: the size must be within 1024 and 512M")))
                }
                v => v,
            },
            log_compression_cpus: match m.string("log_compression_cpus") {
                None => Vec::new(),
                Some(list) => {
                    let cpus =
                        host::node_list(&list).map_err(|e| m.job_err(format!("log_compression_cpus={list}: {e}")))?;
                    // fio checks the CPUs against the machine when it parses the option.
                    if let Some(&c) = cpus.iter().find(|&&c| c as u64 >= m.ctx.ncpus) {
                        return Err(m.job_err(format!(
                            "log_compression_cpus={list}: CPU {c} does not exist (this machine has {} CPUs)",
                            m.ctx.ncpus
                        )));
                    }
                    cpus
                }
            },
            clocksource: if m.is_set("clocksource") {
                Some(m.typed("clocksource", ClockSource::from_word)?)
            } else {
                None
            },
            unified_rw_reporting: m.typed("unified_rw_reporting", UnifiedRw::from_word)?,
            random_generator: m.typed("random_generator", RandomGenerator::from_word)?,
            errors: {
                let base = m.typed("continue_on_error", ErrorPolicy::continuing)?;
                let ignore = |v: &str| {
                    let mut p = base.clone();
                    p.ignore(v).map(|()| p)
                };
                let mut p = m.custom("ignore_error", ignore, IGNORE_FORMS)?.unwrap_or(base);
                p.dump = m.flag("error_dump")?;
                p
            },
            exitall_on_error: m.flag("exitall_on_error")?,
            exit_what: m.typed("exit_what", ExitWhat::from_word)?,
            per_job_logs: m.flag("per_job_logs")?,
            rate_min: m.per_dir_int("rate_min", 0)?,
            rate_iops_min: m.per_dir_int("rate_iops_min", 0)?,
            create_on_open: m.flag("create_on_open")?,
            allow_file_create: m.flag("allow_file_create")?,
            create_only: m.flag("create_only")?,
            flow: m.int("flow")?.unwrap_or(0),
            flow_id: m.int("flow_id")?.unwrap_or(0) as u64,
            flow_sleep_us: m.int("flow_sleep")?.unwrap_or(0) as u64,
            pre_read: m.flag("pre_read")?,
            exec_prerun: m.string("exec_prerun"),
            exec_postrun: m.string("exec_postrun"),
            create_fsync: m.flag("create_fsync")?,
            file_append: m.flag("file_append")?,
            offset_align: m.size("offset_align")?.unwrap_or(0),
            unique_filename: m.flag("unique_filename")?,
            buffer_pattern: m.custom("buffer_pattern", value::parse_pattern, PATTERN_FORMS)?,
            buffer_compress_percentage: m.u32("buffer_compress_percentage", 0)?,
            buffer_compress_chunk: m.size("buffer_compress_chunk")?.unwrap_or(512),
            dedupe_percentage: m.u32("dedupe_percentage", 0)?,
            dedupe_mode: m.typed("dedupe_mode", DedupeMode::from_word)?,
            dedupe_working_set_pct: m.u32("dedupe_working_set_percentage", 5)?,
            dedupe_global: m.flag("dedupe_global")?,
            // Every opendir= adds its files (fio adds them again when a directory is named
            // twice), so all of them are kept, not only the last.
            opendir: match m.raw("opendir") {
                None => Vec::new(),
                Some(_) => options
                    .iter()
                    .filter(|o| o.def.name == "opendir")
                    .filter_map(|o| o.value.as_ref().map(|v| v.trim().to_string()))
                    .collect(),
            },
            lockfile: m.typed("lockfile", LockMode::from_word)?,
            create_serialize: m.flag("create_serialize")?,
            time_based_dropped: false,
            think_on_complete: m.choice("thinktime_blocks_type")? == "complete",
            thinktime_iotime_us: m.time("thinktime_iotime")?,
            rw_sequencer_identical: m.choice("rw_sequencer")? == "identical",
            replay: replay::replay(&m)?,
            zones: replay::zones(&m)?,
            overwrite: m.flag("overwrite")?,
            fallocate: m.typed("fallocate", Fallocate::from_word)?,
            rate_cycle_ms: m.int("rate_cycle")?.unwrap_or(1000).max(1) as u64,
            unit_base: m.choice("unit_base")?.parse().expect("unit_base choices are numbers"),
            random_distribution: m
                .custom("random_distribution", |v| RandomDist::parse(v.trim(), &m.ctx), DIST_FORMS)?
                .unwrap_or(RandomDist::Random),
            host: HostSettings {
                uid: m.int("uid")?.map(|v| v as u32),
                gid: m.int("gid")?.map(|v| v as u32),
                numa_cpu_nodes: match m.string("numa_cpu_nodes") {
                    Some(list) => {
                        host::node_list(&list).map_err(|e| m.job_err(format!("numa_cpu_nodes={list}: {e}")))?
                    }
                    None => Vec::new(),
                },
                numa_mem_policy: m.custom("numa_mem_policy", host::MemPolicy::parse, MEMPOLICY_FORMS)?,
                cgroup: m.string("cgroup").map(|s| s.trim().to_string()).filter(|s| !s.is_empty()),
                cgroup_weight: m.int("cgroup_weight")?.map(|v| v as u32),
                cgroup_nodelete: m.flag("cgroup_nodelete")?,
                ioscheduler: m.string("ioscheduler").map(|s| s.trim().to_string()).filter(|s| !s.is_empty()),
                gtod_cpu: m.int("gtod_cpu")?.map(|v| v as usize),
            },
            fadvise: m.typed("fadvise_hint", Fadvise::from_word)?,
            file_service: m
                .custom("file_service_type", FileService::parse, FILE_SERVICE_FORMS)?
                .unwrap_or(FileService::RoundRobin(1)),
            openfiles: m.u32("openfiles", 0)?,
            rate_ignore_thinktime: m.flag("rate_ignore_thinktime")?,
            bs_is_seq_rand: m.flag("bs_is_seq_rand")?,
            fill_device: m.flag("fill_device")?,
            write_hint: if m.is_set("write_hint") {
                Some(crate::choices::write_hint_from_word(m.choice("write_hint")?).expect("table words"))
            } else {
                None
            },
            stats: m.flag("stats")?,
            block_error_percentiles: m.flag("block_error_percentiles")?,
            hugepage_size: m.size("hugepage-size")?.unwrap_or(2 << 20),
            steadystate: {
                // fio samples once a second, so the window is a whole number of seconds.
                let dur_s = m.time("steadystate_duration")? / 1_000_000;
                let ramp_us = m.time("steadystate_ramp_time")?;
                let ss = m.custom("steadystate", SteadyState::parse, SS_FORMS)?;
                let ss = ss.unwrap_or_else(|| SteadyState::parse("iops_slope:0.01%").expect("the default parses"));
                (dur_s > 0).then_some(SteadyState { dur_s, ramp_us, ..ss })
            },
            latency_target: {
                let target_us = m.time("latency_target")?;
                let (window_us, run) = (m.time("latency_window")?, m.flag("latency_run")?);
                let percentile = match m.one("latency_percentile")? {
                    Some(Value::Float(p)) => p,
                    _ => 100.0,
                };
                (target_us > 0).then_some(LatencyTarget { target_us, window_us, percentile, run })
            },
            max_latency_us: m.time("max_latency")?,
            open_sync: match m.choice("sync")? {
                "sync" | "1" => Some(true),
                "dsync" => Some(false),
                _ => None,
            },
        };
        // fio warns ("time_based requires a runtime/timeout setting") and runs the job as if
        // time_based were not set; fio's own example files rely on it.
        if spec.time_based && spec.runtime_us == 0 {
            spec.time_based = false;
            spec.time_based_dropped = true;
        }
        spec.check(&m)?;
        Ok(spec)
    }

    /// Cross-option checks that need no I/O. Checks that need the file or device (its size,
    /// whether it is mounted) happen when the run is planned, still before any I/O.
    fn check(&self, m: &Merged<'_>) -> Result<()> {
        let err = |msg: String| Err(m.job_err(msg));
        if self.bs.contains(&0) {
            return err("bs must be at least 1 byte".into());
        }
        // cpuio and exec have no file: their jobs end on time, not on a size.
        // nbd and rbd take their size from the export or the image.
        let sized = !matches!(self.ioengine, "cpuio" | "exec" | "nbd" | "rbd");
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
    /// fully supported must be read when a job is resolved. The jobs below cover the options that are
    /// only read when another one is set.
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
            .map(|d| d.name)
            .filter(|n| !read.contains(n) && !READ_ELSEWHERE.iter().any(|(e, _)| e == n) && !profile_only(n))
            .collect();
        assert!(unread.is_empty(), "supported options the job model never reads: {unread:?}");
    }
}
