//! The messages of fiox's multi-host protocol: one closed enum, and one codec ([`encode`],
//! [`decode`]) so the encoding (serde_json today: self-describing, readable in a dump, exact
//! for u64 and f64) can change in one place. Fields added later carry `#[serde(default)]`, so
//! a peer one version behind still decodes what it knows.
//!
//! No pointer, address or handle ever goes on the wire: statistics travel as values (sparse
//! histograms, see `fiox_stats::LatHist`'s serde form), jobs as their text.

use fiox_report::RunReport;
use serde::{Deserialize, Serialize};

/// At most this many latency histograms in one message (each is 1856 counters once decoded,
/// about 15 KiB), so a decoded message takes at most about 240 MiB whatever its text says.
pub const MAX_HISTOGRAMS: usize = 16384;

/// What a server says about its machine in its Welcome (and what the coordinator's probe
/// line prints, as fio's does).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostFacts {
    pub hostname: String,
    pub os: String,
    pub arch: String,
    pub kernel: String,
    pub cpus: u64,
    pub bigendian: bool,
    pub bits: u32,
}

/// A job file as the coordinator read it (`${VAR}` already expanded there, as fio's client
/// does), under the name error messages use.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JobText {
    pub name: String,
    pub text: String,
}

/// Everything a server needs to check and plan its part of the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Prepare {
    pub run_id: String,
    /// This host's place in the host list, and the list's length.
    pub host_index: u32,
    pub n_hosts: u32,
    /// The host as the coordinator names it (`127.0.0.1,8765`).
    pub host_name: String,
    /// The command line for this host: fio's forwarded switches and command-line job options,
    /// without job file names (their text is in `files`).
    pub argv: Vec<String>,
    pub files: Vec<JobText>,
    /// The coordinator's values of the `${VAR}`s the job files name (fio's client expands
    /// them before sending; fiox sends the values and lets the server's parser expand, so
    /// errors still name the file and line).
    #[serde(default)]
    pub env: Vec<(String, String)>,
    /// `--remote-config=PATH`: a job file the server reads from its own disk.
    pub remote_config: Option<String>,
    /// How often to send Interval reports (ms).
    pub interval_ms: u64,
    /// How often to send heartbeats (ms), and how long without a frame from the coordinator
    /// before the server stops its jobs and returns to idle (ms).
    pub heartbeat_ms: u64,
    pub host_timeout_ms: u64,
}

/// How a server's text line is meant: part of the normal output (job header lines), or a
/// diagnostic for standard error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TextLevel {
    Output,
    Warning,
    Error,
}

/// One message. Directions: C→S from the coordinator, S→C from a server.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Msg {
    /// C→S, first frame after the magic.
    Hello {
        proto_min: u32,
        proto_max: u32,
        fiox_version: String,
        #[serde(default)]
        features: Vec<String>,
        run_id: String,
        /// Who runs the coordinator (`user@host`), for the server's log and a busy Reject.
        coordinator: String,
    },
    /// S→C: the protocol version chosen and the server's machine.
    Welcome {
        proto: u32,
        fiox_version: String,
        host: HostFacts,
        #[serde(default)]
        features: Vec<String>,
    },
    /// S→C: why not (version ranges, busy, refused transport); the server closes after it.
    Reject { reason: String, proto_min: u32, proto_max: u32, fiox_version: String },
    /// C→S.
    Prepare(Box<Prepare>),
    /// S→C: the job checked and planned. `header` is what a local run prints before starting
    /// (job lines, version, `Starting N processes`), shown with the normal output.
    Prepared {
        jobs: u32,
        groups: u32,
        #[serde(default)]
        warnings: Vec<String>,
        #[serde(default)]
        header: String,
    },
    /// S→C: every error the server found in its part of the job.
    PrepareFailed { errors: Vec<String> },
    /// C→S: `t0` on the coordinator's CLOCK_MONOTONIC.
    ClockProbe { seq: u32, t0: u64 },
    /// S→C: `t1` when the probe arrived and `t2` when the reply left, on the server's
    /// CLOCK_MONOTONIC; `wall_ns` its wall clock at `t2` (reported, never relied on).
    ClockReply { seq: u32, t0: u64, t1: u64, t2: u64, wall_ns: u64 },
    /// C→S: start the jobs when the server's CLOCK_MONOTONIC reads `at_host_ns` (the
    /// coordinator's start time mapped through this host's offset).
    Start { at_host_ns: u64 },
    /// S→C: when the jobs were released, on the server's clock; `late` if the Start arrived
    /// after its deadline.
    Started { host_mono_ns: u64, late: bool },
    /// S→C: the run so far (cumulative, as fio's `--status-interval`), every interval.
    Interval { k: u64, host_mono_ns: u64, report: Box<RunReport> },
    /// Both ways, every heartbeat interval.
    Heartbeat { seq: u64, mono_ns: u64 },
    /// S→C: a line the run printed (job headers, warnings).
    Text { level: TextLevel, line: String },
    /// S→C: the finished run: every job's statistics, the groups, the disks, the options echo.
    Final { report: Box<RunReport> },
    /// S→C, last: the run's exit status (fio's: failed jobs) and a fatal error, if any.
    Done { exit: u8, error: Option<String> },
    /// C→S: stop the jobs now (Ctrl-C, `--on-host-failure=abort`); a Final follows.
    Stop { reason: String },
    /// Either way: a fatal protocol or run error; the sender closes after it.
    Error { code: String, msg: String },
    /// S→C, launcher mode only, the first frame once the connection is secured, before the
    /// magic: the rank the launcher gave this server (`rank_from`: the variable it came from),
    /// `None` when it gave none (the coordinator then ranks by arrival).
    Join {
        rank: Option<u32>,
        #[serde(default)]
        rank_from: String,
    },
}

impl Msg {
    /// The message's name, for "unexpected X" errors.
    pub fn name(&self) -> &'static str {
        match self {
            Msg::Hello { .. } => "hello",
            Msg::Welcome { .. } => "welcome",
            Msg::Reject { .. } => "reject",
            Msg::Prepare(_) => "prepare",
            Msg::Prepared { .. } => "prepared",
            Msg::PrepareFailed { .. } => "prepare_failed",
            Msg::ClockProbe { .. } => "clock_probe",
            Msg::ClockReply { .. } => "clock_reply",
            Msg::Start { .. } => "start",
            Msg::Started { .. } => "started",
            Msg::Interval { .. } => "interval",
            Msg::Heartbeat { .. } => "heartbeat",
            Msg::Text { .. } => "text",
            Msg::Final { .. } => "final",
            Msg::Done { .. } => "done",
            Msg::Stop { .. } => "stop",
            Msg::Error { .. } => "error",
            Msg::Join { .. } => "join",
        }
    }
}

/// A message as a frame's payload.
pub fn encode(m: &Msg) -> Vec<u8> {
    // Serializing plain data to a Vec cannot fail, except for a non-finite float, which
    // serde_json writes as null (and the reader then refuses: a clear error, not a panic).
    serde_json::to_vec(m).unwrap_or_else(|e| {
        serde_json::to_vec(&Msg::Error { code: "encode".into(), msg: e.to_string() }).unwrap_or_default()
    })
}

/// A frame's payload as a message; errors name what was wrong, for the peer's log.
pub fn decode(payload: &[u8]) -> Result<Msg, String> {
    fiox_stats::with_wire_budget(MAX_HISTOGRAMS, || serde_json::from_slice(payload))
        .map_err(|e| format!("undecodable message: {e}"))
}

/// Writes one message as a frame.
pub fn send(w: &mut dyn std::io::Write, m: &Msg) -> std::io::Result<()> {
    crate::frame::write_frame(w, &encode(m))
}

/// Reads one message; `Ok(None)` at a clean end of stream.
pub fn recv(r: &mut dyn std::io::Read) -> std::io::Result<Option<Msg>> {
    match crate::frame::read_frame(r)? {
        None => Ok(None),
        Some(p) => decode(&p).map(Some).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fiox_report::JobReport;
    use fiox_stats::{DirStat, ThreadStat};

    #[test]
    fn every_kind_round_trips() {
        let mut ts = ThreadStat { jobs: 1, ..ThreadStat::default() };
        ts.dirs[0] = DirStat::active();
        for v in [100u64, 2000, 3_000_000, u32::MAX as u64 * 7] {
            ts.dirs[0].clat.add(v);
            ts.dirs[0].clat_hist.as_mut().unwrap().add(v);
            ts.dirs[0].bw.add(v / 3);
        }
        let report = RunReport {
            version: "fiox-0.1.0".into(),
            jobs: vec![JobReport { name: "j".into(), ts, percentile_list: vec![50.0, 99.9], ..JobReport::default() }],
            ..RunReport::default()
        };
        let all = vec![
            Msg::Hello {
                proto_min: 1,
                proto_max: 1,
                fiox_version: "0.1.0".into(),
                features: vec![],
                run_id: "r".into(),
                coordinator: "u@h".into(),
            },
            Msg::Welcome { proto: 1, fiox_version: "0.1.0".into(), host: HostFacts::default(), features: vec![] },
            Msg::Reject { reason: "busy".into(), proto_min: 1, proto_max: 1, fiox_version: "x".into() },
            Msg::Prepare(Box::default()),
            Msg::Prepared { jobs: 1, groups: 1, warnings: vec!["w".into()], header: "h\n".into() },
            Msg::PrepareFailed { errors: vec!["e".into()] },
            Msg::ClockProbe { seq: 1, t0: u64::MAX },
            Msg::ClockReply { seq: 1, t0: 1, t1: 2, t2: 3, wall_ns: 4 },
            Msg::Start { at_host_ns: 5 },
            Msg::Started { host_mono_ns: 6, late: true },
            Msg::Interval { k: 2, host_mono_ns: 7, report: Box::new(report.clone()) },
            Msg::Heartbeat { seq: 3, mono_ns: 8 },
            Msg::Text { level: TextLevel::Output, line: "x\n".into() },
            Msg::Final { report: Box::new(report) },
            Msg::Done { exit: 0, error: None },
            Msg::Stop { reason: "ctrl-c".into() },
            Msg::Error { code: "c".into(), msg: "m".into() },
            Msg::Join { rank: Some(3), rank_from: "SLURM_PROCID".into() },
        ];
        for m in all {
            let back = decode(&encode(&m)).unwrap();
            // The report has no PartialEq (histograms compare, f64 sums too): compare the text.
            assert_eq!(encode(&back), encode(&m), "{}", m.name());
        }
    }

    #[test]
    fn bad_payloads_are_errors() {
        assert!(decode(b"").is_err());
        assert!(decode(b"{\"type\":\"nosuch\"}").unwrap_err().contains("nosuch"));
        assert!(decode(b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[").is_err());
    }
}
