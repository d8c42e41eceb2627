//! What a report is made from: a finished run's figures plus the few job settings the formats
//! print. Built by the runner; read by the formatters.

use fiox_stats::{GroupStat, ThreadStat, Unified};
use serde::{Deserialize, Serialize};

/// Settings that change how numbers are printed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Units {
    /// 1024 (default) or 1000.
    pub kb_base: u64,
    /// `unit_base`: 1 prints bandwidths in bits (`Mibit/s`); 0 (auto) and 8 print bytes. This
    /// is what fio 3.33 does (observed), and what its HOWTO says: 8 = bytes, 1 = bits.
    pub unit_base: u64,
    /// Significant figures of IOPS and bandwidth in the normal output (fio: 4).
    pub sig_figs: u32,
}

impl Default for Units {
    fn default() -> Self {
        Units { kb_base: 1024, unit_base: 0, sig_figs: 4 }
    }
}

/// fio's default `percentile_list`.
pub const DEFAULT_PERCENTILES: [f64; 17] =
    [1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99];

/// One reported job: a job, or under `group_reporting` a whole group merged.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct JobReport {
    pub name: String,
    pub groupid: u32,
    pub pid: u32,
    /// errno of the first error, 0 if none.
    pub error: i32,
    /// Where and why the first error happened, as fio's normal output prints it in
    /// parentheses after `err=` (`file:io_u.c:1876, func=io_u error, error=Invalid argument`).
    /// Empty if none; only printed when `error` is non-zero.
    pub error_text: String,
    /// The job may go on after errors (`continue_on_error`, `ignore_error`): the report shows
    /// `total_err` and `first_error`.
    pub errors_counted: bool,
    pub description: Option<String>,
    /// The job's own options as typed, in order (value-less flags omitted, as fio 3.33 does).
    pub job_options: Vec<(String, String)>,
    pub ts: ThreadStat,
    /// `unified_rw_reporting`; `ts` has been through [`ThreadStat::unify`] with it.
    pub unified: Unified,
    /// Whether the engine is asynchronous: synchronous engines have no submission latency and
    /// print no `slat` line.
    pub has_slat: bool,
    pub clat_percentiles: bool,
    pub lat_percentiles: bool,
    pub slat_percentiles: bool,
    pub percentile_list: Vec<f64>,
    pub units: Units,
    /// The iodepth setting, or the depth latency-target mode found: printed on the
    /// `latency :` line and in JSON `latency_depth`.
    pub iodepth: u32,
    /// Latency-target mode's settings (all zero, percentile 100, when it is off).
    pub latency_target: LatencyTargetReport,
    /// Steady-state detection, when the job asked for it (`steadystate_duration`).
    pub steady: Option<SteadyReport>,
    /// Milliseconds since the epoch when the job started. fio 3.36 and later print it as JSON
    /// `job_start`; fio 3.33, which the formats follow, does not, so it is unused for now.
    pub job_start_ms: u64,
    /// fio 3.42's JSON `job_start`: the reading, in ms, of clock `job_start_clock_id` when the
    /// job started; printed only when the job set that option (a fio 3.42 option, so the
    /// report follows 3.42 there and 3.33 elsewhere).
    #[serde(default)]
    pub job_start: Option<u64>,
    /// Whole seconds the job ran, for JSON `elapsed`.
    pub elapsed_s: u64,
    /// Local time the report was made, as fio's header prints it (`Sat Nov 21 07:09:51 2026`),
    /// without a trailing newline.
    pub ctime: String,
    /// A multi-host run's "All clients" entry: fio prints no option echo and no latency-target
    /// figures for it.
    #[serde(default)]
    pub aggregate: bool,
}

/// Latency-target mode's settings as fio reports them: the target in nanoseconds, the window in
/// microseconds (fio 3.33's units, observed).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LatencyTargetReport {
    pub target_ns: u64,
    pub window_us: u64,
    pub percentile: f64,
}

impl Default for LatencyTargetReport {
    fn default() -> Self {
        LatencyTargetReport { target_ns: 0, window_us: 0, percentile: 100.0 }
    }
}

/// What steady-state detection saw over its last window, for one job or, under
/// `group_reporting`, for its group (whose samples are the sums over its jobs).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SteadyReport {
    /// The criterion as fio names it (`iops`, `iops_slope`, `bw`, `bw_slope`).
    pub name: String,
    pub limit: f64,
    /// The limit, and so the criterion, is a percentage of the window's mean.
    pub pct: bool,
    /// Samples in the window (seconds).
    pub duration_s: u64,
    pub attained: bool,
    /// The judged value: the slope or the largest deviation from the mean, as a percentage of
    /// the mean when `pct`; 0 until the window has filled.
    pub criterion: f64,
    /// Largest distance of a sample from the mean (deviation criteria only, else 0).
    pub max_deviation: f64,
    /// Least-squares slope per sample (slope criteria only, else 0).
    pub slope: f64,
    /// Means over the window's slots, empty slots counting as 0: bytes/s and I/Os per second.
    pub bw_mean: f64,
    pub iops_mean: f64,
    /// The window's samples, oldest first; slots not filled yet are 0 at the end.
    pub iops: Vec<u64>,
    pub bw: Vec<u64>,
}

impl SteadyReport {
    /// Whether the criterion is judged on bandwidth rather than IOPS.
    pub fn on_bw(&self) -> bool {
        self.name.starts_with("bw")
    }

    /// Whether the criterion is a slope rather than a deviation.
    pub fn on_slope(&self) -> bool {
        self.name.ends_with("_slope")
    }
}

/// A block device's figures over a run, from `/sys/block/*/stat` deltas: fio's `ios=`,
/// `merge=`, `ticks=`, `in_queue=` and `util=`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DiskFigures {
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_merges: u64,
    pub write_merges: u64,
    pub read_ticks: u64,
    pub write_ticks: u64,
    pub in_queue: u64,
    /// Percent of the run the device was busy.
    pub util: f64,
    /// Bytes read and written (sectors × 512). fio does not print them; fiox checks them
    /// against what the jobs claim to have moved.
    pub read_bytes: u64,
    pub write_bytes: u64,
}

impl DiskFigures {
    /// Adds another period's figures; `util` is weighted by `ms`, the period's length, so that
    /// dividing by the total time afterwards gives the busy share over all periods.
    pub fn add_weighted(&mut self, o: &DiskFigures, ms: u64) {
        self.read_ios += o.read_ios;
        self.write_ios += o.write_ios;
        self.read_merges += o.read_merges;
        self.write_merges += o.write_merges;
        self.read_ticks += o.read_ticks;
        self.write_ticks += o.write_ticks;
        self.in_queue += o.in_queue;
        self.util += o.util * ms as f64;
        self.read_bytes += o.read_bytes;
        self.write_bytes += o.write_bytes;
    }
}

/// The `aggr*` figures fio prints for a stacked device: its slaves' averages, and the busiest
/// slave's utilisation.
pub type DiskAggr = DiskFigures;

/// Utilisation of one block device over the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DiskUtil {
    pub name: String,
    pub figures: DiskFigures,
    /// For a stacked device (device-mapper, md): its slaves' figures.
    pub aggr: Option<DiskAggr>,
}

// The figures read as fields of the device (`d.read_ios`), as the formatters use them.
impl std::ops::Deref for DiskUtil {
    type Target = DiskFigures;
    fn deref(&self) -> &DiskFigures {
        &self.figures
    }
}

impl std::ops::DerefMut for DiskUtil {
    fn deref_mut(&mut self) -> &mut DiskFigures {
        &mut self.figures
    }
}

/// A finished run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunReport {
    /// `fiox-0.1.0`; printed where fio prints `fio-3.33`.
    pub version: String,
    /// Seconds and milliseconds since the epoch when the report was made.
    pub timestamp: u64,
    pub timestamp_ms: u64,
    /// The same instant as `ctime` without the trailing newline.
    pub time: String,
    /// Options of the global sections as typed; `None` when there was no global section (fio
    /// then omits the JSON key).
    pub global_options: Option<Vec<(String, String)>>,
    pub jobs: Vec<JobReport>,
    pub groups: Vec<GroupStat>,
    pub disks: Vec<DiskUtil>,
    /// fiox's additions (run manifest, self-overhead, warnings), printed after everything fio
    /// prints so that fio parsers are unaffected; `None` leaves the output exactly fio's.
    pub fiox: Option<Manifest>,
}

/// What makes a result reproducible and trustworthy, beyond fio's report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub version: String,
    pub kernel: String,
    pub cpu: String,
    pub cpus: u64,
    /// The clock latencies were measured with.
    pub clock: String,
    pub devices: Vec<DeviceInfo>,
    /// `(job, clone, seed)` of every worker's random streams.
    pub seeds: Vec<(String, u32, u64)>,
    pub overhead: Vec<Overhead>,
    /// Results that look wrong (page-cache reads, a device that saw far less I/O, ...).
    pub warnings: Vec<String>,
    /// `--repeat-until`: the runs' figures and whether the interval was reached.
    pub repeat: Option<RepeatSummary>,
    /// Ceph jobs (`rbd`, `rados`): what their cluster, pool and image were, one per job.
    #[serde(default)]
    pub ceph: Vec<CephManifest>,
    /// Jobs whose engine set up kernel features (io_uring's setup flags and registrations):
    /// which took effect, since the kernel may refuse some and the engine then goes on
    /// without them.
    #[serde(default)]
    pub engine_setup: Vec<EngineSetup>,
}

/// What one worker's engine set up in the kernel and the kernel took.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EngineSetup {
    pub job: String,
    pub clone: u32,
    pub engine: String,
    /// `SINGLE_ISSUER`, `DEFER_TASKRUN`, `NO_SQARRAY`, `REGISTERED_RING`, `FIXED_BUFFERS`, ...
    pub features: Vec<String>,
}

/// A Ceph job's cluster as fiox saw it before and after the run (reference/ceph.md §9.1.5).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CephManifest {
    pub job: String,
    pub engine: String,
    /// librados's and librbd's C API versions (`rbd_version` empty for rados).
    pub rados_version: String,
    pub rbd_version: String,
    pub fsid: String,
    /// The configuration file read (empty: none).
    pub conf: String,
    pub client: String,
    pub pool: String,
    pub namespace: String,
    pub image: Option<CephImage>,
    /// librbd's cache settings as the client saw them (`rbd_cache`, `rbd_cache_policy`, ...).
    pub rbd_cache: Vec<(String, String)>,
    /// Share of the job's possible I/O offsets whose I/O crosses a RADOS object boundary
    /// (librbd splits those in two), per direction that has I/O (read, write, trim).
    pub object_crossing_share: Vec<(String, f64)>,
    /// Share of the read range never written before the run (reads there cost no disk I/O).
    pub unwritten_read_share: Option<f64>,
    /// The exclusive lock's owners before and after the run (`None`: not known).
    pub lock_owners_before: Option<Vec<String>>,
    pub lock_owners_after: Option<Vec<String>>,
    /// rados: the job's objects (all clones), and how many existed before, were created by
    /// the run, were removed by it, and are left after it.
    pub objects: Option<CephObjects>,
    /// Why the look after the run failed, if it did.
    pub after_error: Option<String>,
}

/// An RBD image as `rbd info` describes it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CephImage {
    pub name: String,
    pub size: u64,
    pub order: u32,
    pub object_size: u64,
    pub block_name_prefix: String,
    pub features: u64,
    pub feature_names: Vec<String>,
    pub stripe_unit: u64,
    pub stripe_count: u64,
}

/// A rados job's objects before and after its run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CephObjects {
    pub named: u64,
    pub existed_before: u64,
    pub created: u64,
    pub removed: u64,
    pub left: u64,
    /// Bytes in the objects left.
    pub left_bytes: u64,
}

/// `--repeat-until` (fiox): a metric measured once per run, its mean and the 95% confidence
/// interval of the mean (Student's t), against the bound asked for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RepeatSummary {
    /// `iops`, `bw`, `lat` or `p99`.
    pub metric: String,
    /// Its unit as printed: `IOPS`, `B/s` or `ns`.
    pub unit: String,
    /// Largest acceptable half-width, percent of the mean.
    pub bound_pct: f64,
    pub max_runs: u32,
    /// One value per run, in order.
    pub values: Vec<f64>,
    pub mean: f64,
    /// Half-width of the 95% confidence interval of the mean, and as a percentage of it.
    pub ci95: f64,
    pub ci95_pct: f64,
    pub met: bool,
}

/// A block device under test, as the kernel describes it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    pub name: String,
    pub model: String,
    pub scheduler: String,
    pub rotational: bool,
    pub logical_block_size: u64,
    pub physical_block_size: u64,
    pub nr_requests: u64,
    pub read_ahead_kb: u64,
    pub write_cache: String,
    /// `(mount point, file system type, options)` of its mounted file systems.
    pub mounts: Vec<(String, String, String)>,
}

/// fiox's own CPU cost for one reported job.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Overhead {
    pub job: String,
    pub usr_ns_per_io: f64,
    pub sys_ns_per_io: f64,
    /// CPU time of the job's threads over its runtime, percent of one core.
    pub busy_pct: f64,
}

impl Overhead {
    /// A worker that kept its core this busy was probably limited by fiox, not the device.
    pub fn saturated(&self) -> bool {
        self.busy_pct >= 95.0
    }
}

/// One host of a multi-host run, as the coordinator saw it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct HostEntry {
    /// The host as the command line named it (`127.0.0.1,8765`, `sock:/run/f.sock`).
    pub name: String,
    /// What fio's client JSON calls `hostname` and `port`: the address the coordinator used.
    pub hostname: String,
    pub port: u16,
    /// fio's probe line for the host (`hostname=vm, be=0, 64-bit, os=Linux, ...`); empty if the
    /// host never answered.
    pub probe: String,
    /// The host's results: its final report, or for a lost host its last interval report
    /// (`partial`); `None` when nothing arrived.
    pub report: Option<RunReport>,
    /// `ok` or `failed`.
    pub status: String,
    pub error: Option<String>,
    pub partial: bool,
    /// Seconds into the run when the host was lost.
    pub failed_at_s: Option<f64>,
    pub transport: String,
    pub fiox_version: String,
    pub proto: u32,
    /// The host's CLOCK_MONOTONIC minus the coordinator's (ns), its wall clock's offset, and
    /// the round trip of the best clock probe.
    pub clock_offset_ns: i64,
    pub wallclock_offset_ns: i64,
    pub rtt_ns: u64,
    /// When the host released its jobs, relative to the earliest host (ns, coordinator's clock).
    pub start_ns: Option<i64>,
    pub late_start: bool,
    pub runtime_ms: u64,
    /// When the host's first job started measuring, on the coordinator's wall clock (the
    /// host's own epoch ms less its wall-clock offset): shows that file layout, done before
    /// the barrier, did not delay a host's I/O.
    pub job_start_ms: Option<i64>,
}

/// The aggregate until the first host finished (elbencho's "first done"): what every host
/// did up to then, summed; for size-based runs, where hosts end at different times, the rate
/// while all of them were running.
#[derive(Debug, Clone, Default)]
pub struct FirstDone {
    /// The host that finished first, and its runtime (ms).
    pub host: String,
    pub runtime_ms: u64,
    /// Per direction (read, write, trim): bytes and I/Os of every host by then, and their
    /// rate over `runtime_ms`.
    pub io_bytes: [u64; 3],
    pub ios: [u64; 3],
    pub bw_bytes: [u64; 3],
    pub iops: [u64; 3],
}

/// A multi-host run: every host's report in host-list order and their merge ("All clients",
/// fio's name for it).
#[derive(Debug, Clone, Default)]
pub struct ClientsReport {
    pub version: String,
    pub timestamp: u64,
    pub timestamp_ms: u64,
    pub time: String,
    pub hosts: Vec<HostEntry>,
    /// The merge: one job ("All clients") and one group; `None` with fewer than two hosts, as
    /// fio prints none then.
    pub all: Option<RunReport>,
    /// fiox: one merge per group id across hosts (`All clients, group N`), in group order.
    pub merged_groups: Vec<RunReport>,
    /// Why the merge is not over every host (`1 of 2 hosts; h2 failed at 3.1 s: ...`).
    pub degraded: Option<String>,
    /// Latest minus earliest start of the hosts (ns), and the bound of the clock estimates.
    pub start_skew_ns: Option<u64>,
    pub skew_bound_ns: u64,
    /// fiox: the aggregate until the first host finished, once one has.
    pub first_done: Option<FirstDone>,
    /// fiox: `--repeat-until`'s runs and verdict (`fiox s3 bench --client`), the report being
    /// the last run's.
    pub repeat: Option<RepeatSummary>,
}
