//! Measurements, reporting and logs.

use crate::table::{Category as C, Choice, Kind as K, OptDef as O};

const INT0: K = K::Int { min: 0, max: i64::MAX };

#[rustfmt::skip]
pub(super) static DEFS: &[O] = &[
    O::new("clat_percentiles", K::Bool, C::Measurement, "Report completion latency percentiles").def("1"),
    O::new("lat_percentiles", K::Bool, C::Measurement, "Report total latency percentiles").def("0"),
    O::new("slat_percentiles", K::Bool, C::Measurement, "Report submission latency percentiles").def("0"),
    O::new("percentile_list", K::FloatList, C::Measurement, "Which percentiles to report, separated by ':'").def("1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99"),
    O::new("significant_figures", K::Int { min: 1, max: 10 }, C::Measurement, "Significant figures in the normal output").def("4"),
    O::new("unified_rw_reporting", K::Choice(UNIFIED), C::Measurement, "Report reads, writes and trims together").def("none"),
    O::new("bwavgtime", INT0, C::Measurement, "Window in ms of each bandwidth sample").alias(&["bw_avg_time"]).def("500"),
    O::new("iopsavgtime", INT0, C::Measurement, "Window in ms of each IOPS sample").alias(&["iops_avg_time"]).def("500"),
    O::new("disable_lat", K::Bool, C::Measurement, "Do not keep total latency (no lat statistics or lat log)").def("0"),
    O::new("disable_clat", K::Bool, C::Measurement, "Do not keep completion latency (no clat statistics, percentiles or clat log)").def("0"),
    O::new("disable_slat", K::Bool, C::Measurement, "Do not keep submission latency (no slat statistics or slat log)").def("0"),
    O::new("disable_bw_measurement", K::Bool, C::Measurement, "Do not log each I/O's bandwidth (the per-I/O bw log stays empty)").alias(&["disable_bw"]).def("0"),
    O::new("gtod_reduce", K::Bool, C::Measurement, "All of disable_lat, disable_clat, disable_slat and disable_bw_measurement").def("0"),
    O::new("clocksource", K::Choice(CLOCKS), C::Measurement, "Clock used for timing (default: the CPU's counter when proven stable)"),
    O::new("stats", K::Bool, C::Measurement, "Collect statistics for this job (0: it runs but is left out of every report)").def("1"),
    O::new("write_bw_log", K::Str, C::Logging, "Write a bandwidth log with this file-name prefix").bare_job_name(),
    O::new("write_lat_log", K::Str, C::Logging, "Write latency logs with this file-name prefix").bare_job_name(),
    O::new("write_iops_log", K::Str, C::Logging, "Write an IOPS log with this file-name prefix").bare_job_name(),
    O::new("write_intended_lat_log", K::Str, C::Logging, "fiox: write a log of each I/O's intended latency (a paced job's, from when its rate schedule wanted the I/O to start; other jobs' total latency) with this file-name prefix, in fio's log format: PREFIX_intended_lat.N.log").bare_job_name(),
    O::new("metrics_listen", K::Str, C::Measurement, "fiox: serve live Prometheus/OpenMetrics metrics at http://ADDR/metrics during the run (ADDR: host:port, or a port on 127.0.0.1)"),
    O::new("live_listen", K::Str, C::Measurement, "fiox: serve a live page of the run at http://ADDR/ (IOPS, bandwidth and completion latency p50/p99/p99.9 each second, per job and for all; data at /live.json; ADDR: host:port, or a port on 127.0.0.1)"),
    O::new("write_hist_log", K::Str, C::Logging, "Write a latency histogram log with this file-name prefix").bare_job_name(),
    O::new("log_hist_coarseness", K::Int { min: 0, max: 6 }, C::Logging, "Coarser histogram logs: each column sums 2^N buckets (1856 >> N columns)").def("0"),
    O::new("log_avg_msec", INT0, C::Logging, "Average log entries over this many ms (0: one entry per I/O)").def("0"),
    O::new("log_hist_msec", INT0, C::Logging, "Write a histogram log entry every this many ms").def("0"),
    O::new("log_max_value", K::Bool, C::Logging, "Log the window's maximum instead of its average").def("0"),
    O::new("log_offset", K::Bool, C::Logging, "Add each I/O's offset to log entries").def("0"),
    O::new("log_unix_epoch", K::Bool, C::Logging, "Log times as milliseconds since the Unix epoch instead of since the job started").def("0"),
    O::new("log_alternate_epoch", K::Bool, C::Logging, "Log times as milliseconds since the epoch of clock log_alternate_epoch_clock_id").def("0"),
    O::new("log_alternate_epoch_clock_id", INT0, C::Logging, "clock_gettime clock whose epoch the logs use (0: CLOCK_REALTIME)").def("0"),
    O::new("disk_util", K::Bool, C::Measurement, "Report the utilisation of the block devices under the job's files").def("1"),
    O::new("log_prio", K::Bool, C::Logging, "Log each I/O's priority value (0x<class<<13|level>) instead of 1 for a cmdprio I/O").def("0"),
    O::new("per_job_logs", K::Bool, C::Logging, "Put each job's index in its log file names").def("1"),
    O::new("log_window_value", K::Choice(WINDOW_VALUE), C::Logging, "Log the window's average, maximum or both (fio 3.36+)").def("avg"),
    O::new("log_issue_time", K::Bool, C::Logging, "Add each I/O's issue time to log entries (fio 3.36+)").def("0").not_yet(),
    O::new("ss_interval", K::Str, C::Measurement, "Steady-state sampling interval (fio 3.37+)").not_yet(),
    O::new("block_error_percentiles", K::Bool, C::Measurement, "Keep each block's last state (written, trimmed, failed) and report how many blocks are in each").def("0"),
    O::new("log_entries", K::Int { min: 1024, max: 1048576 }, C::Logging, "fio: log entries allocated at first; fiox's logs grow as needed, so this only checks the value").def("1024"),
    O::new("log_compression", K::Size, C::Logging, "Compress stored logs in zlib streams of this many bytes of samples (1024 to 512M; with log_store_compressed)"),
    O::new("log_compression_cpus", K::Str, C::Logging, "CPUs the log compression thread may run on, as a list like 0-3,6"),
    O::new("log_store_compressed", K::Bool, C::Logging, "Store logs as zlib-compressed binary samples in FILE.log.fz (read with --inflate-log)").def("0"),
    O::new("write_iolog", K::Str, C::Logging, "Write the I/O pattern to this file"),
];

static WINDOW_VALUE: &[Choice] = &[
    Choice { word: "avg", help: "The window's average" },
    Choice { word: "0", help: "Same as avg" },
    Choice { word: "max", help: "The window's maximum" },
    Choice { word: "1", help: "Same as max" },
    Choice { word: "both", help: "Average and maximum, in two columns" },
    Choice { word: "2", help: "Same as both" },
];
static UNIFIED: &[Choice] = &[
    Choice { word: "none", help: "Report each direction" },
    Choice { word: "0", help: "Same as none" },
    Choice { word: "mixed", help: "Report one merged direction" },
    Choice { word: "1", help: "Same as mixed" },
    Choice { word: "both", help: "Report each direction and the merged one" },
    Choice { word: "2", help: "Same as both" },
];
static CLOCKS: &[Choice] = &[
    Choice { word: "gettimeofday", help: "gettimeofday(2)" },
    Choice { word: "clock_gettime", help: "clock_gettime(2) with CLOCK_MONOTONIC" },
    Choice { word: "cpu", help: "The CPU's time stamp counter" },
];
