//! Measurements, reporting and logs.

use crate::choices::{ClockSource, UnifiedRw};
use crate::error::Result;
use crate::host;
use crate::spec::{listen_addr, Arg, JobSpec};
use crate::table::{Category as C, Choice, Kind as K, OptDef as O};

const INT0: K = K::Int { min: 0, max: i64::MAX };

#[rustfmt::skip]
// Binders write `Ok(s.field = value)`: the assignment is the point, so clippy's unit_arg is off.
#[allow(clippy::unit_arg)]
pub(super) static DEFS: &[O] = &[
    O::new("clat_percentiles", K::Bool, C::Measurement, "Report completion latency percentiles").def("1").to(|s, v| Ok(s.clat_percentiles = v.flag())),
    O::new("lat_percentiles", K::Bool, C::Measurement, "Report total latency percentiles").def("0").to(|s, v| Ok(s.lat_percentiles = v.flag())),
    O::new("slat_percentiles", K::Bool, C::Measurement, "Report submission latency percentiles").def("0").to(|s, v| Ok(s.slat_percentiles = v.flag())),
    O::new("percentile_list", K::FloatList, C::Measurement, "Which percentiles to report, separated by ':'").def("1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99").to(|s, v| Ok(s.percentile_list = v.floats())),
    O::new("significant_figures", K::Int { min: 1, max: 10 }, C::Measurement, "Significant figures in the normal output").def("4").to(|s, v| Ok(s.significant_figures = v.u32()?)),
    O::new("unified_rw_reporting", K::Choice(UNIFIED), C::Measurement, "Report reads, writes and trims together").def("none").to(|s, v| Ok(s.unified_rw_reporting = v.typed(UnifiedRw::from_word))),
    O::new("bwavgtime", INT0, C::Measurement, "Window in ms of each bandwidth sample").alias(&["bw_avg_time"]).def("500").to(|s, v| Ok(s.bwavgtime_ms = v.u64())),
    O::new("iopsavgtime", INT0, C::Measurement, "Window in ms of each IOPS sample").alias(&["iops_avg_time"]).def("500").to(|s, v| Ok(s.iopsavgtime_ms = v.u64())),
    O::new("disable_lat", K::Bool, C::Measurement, "Do not keep total latency (no lat statistics or lat log)").def("0").to(|s, v| Ok(s.keep_lat[2] = !v.flag())),
    O::new("disable_clat", K::Bool, C::Measurement, "Do not keep completion latency (no clat statistics, percentiles or clat log)").def("0").to(|s, v| Ok(s.keep_lat[1] = !v.flag())),
    O::new("disable_slat", K::Bool, C::Measurement, "Do not keep submission latency (no slat statistics or slat log)").def("0").to(|s, v| Ok(s.keep_lat[0] = !v.flag())),
    O::new("disable_bw_measurement", K::Bool, C::Measurement, "Do not log each I/O's bandwidth (the per-I/O bw log stays empty)").alias(&["disable_bw"]).def("0").to(|s, v| Ok(s.keep_bw = !v.flag())),
    O::new("gtod_reduce", K::Bool, C::Measurement, "All of disable_lat, disable_clat, disable_slat and disable_bw_measurement").def("0"),
    O::new("clocksource", K::Choice(CLOCKS), C::Measurement, "Clock used for timing (default: the CPU's counter when proven stable)").to(|s, v| Ok(s.clocksource = Some(v.typed(ClockSource::from_word)))),
    O::new("stats", K::Bool, C::Measurement, "Collect statistics for this job (0: it runs but is left out of every report)").def("1").to(|s, v| Ok(s.stats = v.flag())),
    O::new("write_bw_log", K::Str, C::Logging, "Write a bandwidth log with this file-name prefix").bare_job_name().to(|s, v| Ok(s.write_bw_log = Some(log_prefix(v)))),
    O::new("write_lat_log", K::Str, C::Logging, "Write latency logs with this file-name prefix").bare_job_name().to(|s, v| Ok(s.write_lat_log = Some(log_prefix(v)))),
    O::new("write_iops_log", K::Str, C::Logging, "Write an IOPS log with this file-name prefix").bare_job_name().to(|s, v| Ok(s.write_iops_log = Some(log_prefix(v)))),
    O::new("write_intended_lat_log", K::Str, C::Logging, "fiox: write a log of each I/O's intended latency (a paced job's, from when its rate schedule wanted the I/O to start; other jobs' total latency) with this file-name prefix, in fio's log format: PREFIX_intended_lat.N.log").bare_job_name().to(|s, v| Ok(s.write_intended_lat_log = Some(log_prefix(v)))),
    O::new("metrics_listen", K::Str, C::Measurement, "fiox: serve live Prometheus/OpenMetrics metrics at http://ADDR/metrics during the run (ADDR: host:port, or a port on 127.0.0.1)").to(|s, v| Ok(s.metrics_listen = Some(listen(v)?))),
    O::new("live_listen", K::Str, C::Measurement, "fiox: serve a live page of the run at http://ADDR/ (IOPS, bandwidth and completion latency p50/p99/p99.9 each second, per job and for all; data at /live.json; ADDR: host:port, or a port on 127.0.0.1)").to(|s, v| Ok(s.live_listen = Some(listen(v)?))),
    O::new("write_hist_log", K::Str, C::Logging, "Write a latency histogram log with this file-name prefix").bare_job_name().to(|s, v| Ok(s.write_hist_log = Some(log_prefix(v)))),
    O::new("log_hist_coarseness", K::Int { min: 0, max: 6 }, C::Logging, "Coarser histogram logs: each column sums 2^N buckets (1856 >> N columns)").def("0").to(|s, v| Ok(s.log_hist_coarseness = v.u32()?)),
    O::new("log_avg_msec", INT0, C::Logging, "Average log entries over this many ms (0: one entry per I/O)").def("0").to(|s, v| Ok(s.log_avg_msec = v.u64())),
    O::new("log_hist_msec", INT0, C::Logging, "Write a histogram log entry every this many ms").def("0").to(|s, v| Ok(s.log_hist_msec = v.u64())),
    O::new("log_max_value", K::Bool, C::Logging, "Log the window's maximum instead of its average").def("0"),
    O::new("log_offset", K::Bool, C::Logging, "Add each I/O's offset to log entries").def("0").to(|s, v| Ok(s.log_offset = v.flag())),
    O::new("log_unix_epoch", K::Bool, C::Logging, "Log times as milliseconds since the Unix epoch instead of since the job started").def("0"),
    O::new("log_alternate_epoch", K::Bool, C::Logging, "Log times as milliseconds since the epoch of clock log_alternate_epoch_clock_id").def("0"),
    O::new("log_alternate_epoch_clock_id", INT0, C::Logging, "clock_gettime clock whose epoch the logs use (0: CLOCK_REALTIME)").def("0").to(|s, v| Ok(s.log_epoch_clock = Some(v.int() as i32))),
    O::new("disk_util", K::Bool, C::Measurement, "Report the utilisation of the block devices under the job's files").def("1").to(|s, v| Ok(s.disk_util = v.flag())),
    O::new("log_prio", K::Bool, C::Logging, "Log each I/O's priority value (0x<class<<13|level>) instead of 1 for a cmdprio I/O").def("0").to(|s, v| Ok(s.log_prio = v.flag())),
    O::new("per_job_logs", K::Bool, C::Logging, "Put each job's index in its log file names").def("1").to(|s, v| Ok(s.per_job_logs = v.flag())),
    O::new("log_window_value", K::Choice(WINDOW_VALUE), C::Logging, "Log the window's average, maximum or both (fio 3.36+)").def("avg").to(|s, v| Ok(s.log_window_value = match v.choice() { "max" | "1" => 1, "both" | "2" => 2, _ => 0 })),
    O::new("log_issue_time", K::Bool, C::Logging, "Add each I/O's issue time (ns since the job started) as the last column of latency logs; needs write_lat_log and log_offset (fio 3.42)").def("0").to(|s, v| Ok(s.log_issue_time = v.flag())),
    O::new("block_error_percentiles", K::Bool, C::Measurement, "Keep each block's last state (written, trimmed, failed) and report how many blocks are in each").def("0").to(|s, v| Ok(s.block_error_percentiles = v.flag())),
    O::new("log_entries", K::Int { min: 1024, max: 1048576 }, C::Logging, "fio: log entries allocated at first; fiox's logs grow as needed, so this only checks the value").def("1024"),
    O::new("log_compression", K::Size, C::Logging, "Compress stored logs in zlib streams of this many bytes of samples (1024 to 512M; with log_store_compressed)").to(log_compression),
    O::new("log_compression_cpus", K::Str, C::Logging, "CPUs the log compression thread may run on, as a list like 0-3,6").to(log_compression_cpus),
    O::new("log_store_compressed", K::Bool, C::Logging, "Store logs as zlib-compressed binary samples in FILE.log.fz (read with --inflate-log)").def("0").to(|s, v| Ok(s.log_store_compressed = v.flag())),
    O::new("write_iolog", K::Str, C::Logging, "Write the I/O pattern to this file").to(|s, v| Ok(s.write_iolog = Some(v.text().trim().to_string()))),
];

/// A log's file-name prefix: the value, or the job's name when the option is written bare.
fn log_prefix(v: &Arg<'_>) -> String {
    v.written().map_or_else(|| v.job().to_string(), |w| w.trim().to_string())
}

/// `metrics_listen` and `live_listen`: a socket address, checked now.
fn listen(v: &Arg<'_>) -> Result<std::net::SocketAddr> {
    listen_addr(&v.text()).map_err(|reason| v.err(format!("{}={reason}", v.name())))
}

fn log_compression(s: &mut JobSpec, v: &Arg<'_>) -> Result<()> {
    let size = v.size();
    // fio's bounds: a chunk of at least 1 KiB, at most 512 MiB.
    if !(1024..=512 << 20).contains(&size) {
        return Err(v.err(format!("log_compression={size}: the size must be within 1024 and 512M")));
    }
    s.log_compression = Some(size);
    Ok(())
}

fn log_compression_cpus(s: &mut JobSpec, v: &Arg<'_>) -> Result<()> {
    let list = v.text();
    let cpus = host::node_list(&list).map_err(|e| v.err(format!("log_compression_cpus={list}: {e}")))?;
    // fio checks the CPUs against the machine when it parses the option.
    if let Some(&c) = cpus.iter().find(|&&c| c as u64 >= v.ctx().ncpus) {
        return Err(v.err(format!(
            "log_compression_cpus={list}: CPU {c} does not exist (this machine has {} CPUs)",
            v.ctx().ncpus
        )));
    }
    s.log_compression_cpus = cpus;
    Ok(())
}

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

#[cfg(test)]
mod tests {
    use crate::choices::{ClockSource, UnifiedRw};
    use crate::spec::bind::check::lands;

    /// Each row lands in its field, and a row's default is what a job gets without it.
    #[test]
    fn rows_land_in_their_fields() {
        lands(&[
            ("clat_percentiles=0 lat_percentiles=1 slat_percentiles=1", |s| {
                !s.clat_percentiles && s.lat_percentiles && s.slat_percentiles
            }),
            ("percentile_list=50:99", |s| s.percentile_list == [50.0, 99.0]),
            ("significant_figures=6", |s| s.significant_figures == 6),
            ("unified_rw_reporting=both", |s| s.unified_rw_reporting == UnifiedRw::Both),
            ("bwavgtime=100 iopsavgtime=200", |s| s.bwavgtime_ms == 100 && s.iopsavgtime_ms == 200),
            ("disable_lat=1 disable_slat=1", |s| s.keep_lat == [false, true, false] && s.keep_bw),
            ("disable_clat=1 disable_bw_measurement=1", |s| s.keep_lat == [true, false, true] && !s.keep_bw),
            ("gtod_reduce=1", |s| s.keep_lat == [false; 3] && !s.keep_bw),
            ("clocksource=clock_gettime", |s| s.clocksource == Some(ClockSource::ClockGettime)),
            ("stats=0", |s| !s.stats),
            ("write_bw_log=a write_lat_log=b write_iops_log=c write_hist_log=d write_intended_lat_log=e", |s| {
                [&s.write_bw_log, &s.write_lat_log, &s.write_iops_log, &s.write_hist_log, &s.write_intended_lat_log]
                    .map(|l| l.as_deref())
                    == [Some("a"), Some("b"), Some("c"), Some("d"), Some("e")]
            }),
            ("metrics_listen=9187 live_listen=127.0.0.1:9188", |s| {
                s.metrics_listen.is_some_and(|a| a.port() == 9187) && s.live_listen.is_some_and(|a| a.port() == 9188)
            }),
            ("log_hist_coarseness=2 log_avg_msec=10 log_hist_msec=20", |s| {
                s.log_hist_coarseness == 2 && s.log_avg_msec == 10 && s.log_hist_msec == 20
            }),
            ("log_offset=1 disk_util=0 log_prio=1 per_job_logs=0", |s| {
                s.log_offset && !s.disk_util && s.log_prio && !s.per_job_logs
            }),
            ("log_window_value=both", |s| s.log_window_value == 2),
            ("log_max_value=1", |s| s.log_window_value == 1),
            ("block_error_percentiles=1", |s| s.block_error_percentiles),
            ("log_compression=1m log_store_compressed=1", |s| {
                s.log_compression == Some(1 << 20) && s.log_store_compressed
            }),
            ("log_compression_cpus=0", |s| s.log_compression_cpus == [0]),
            ("write_iolog=x.log", |s| s.write_iolog.as_deref() == Some("x.log")),
            ("log_unix_epoch=1", |s| s.log_epoch_clock == Some(0)),
            ("log_alternate_epoch=1 log_alternate_epoch_clock_id=1", |s| s.log_epoch_clock == Some(1)),
            // The rows' defaults.
            ("", |s| {
                s.clat_percentiles
                    && s.percentile_list.len() == 17
                    && s.significant_figures == 4
                    && s.bwavgtime_ms == 500
                    && s.iopsavgtime_ms == 500
                    && s.keep_lat == [true; 3]
                    && s.stats
                    && s.disk_util
                    && s.per_job_logs
                    && s.log_window_value == 0
                    && s.log_epoch_clock.is_none()
                    && s.clocksource.is_none()
            }),
        ]);
    }
}
