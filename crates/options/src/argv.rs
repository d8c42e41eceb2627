//! fio's command line: global switches, job options in all four spellings (`--opt=val`,
//! `-opt=val`, `--opt val`, `-opt val`), value-less flags (`-thread`), `--name` starting a job
//! and `--name=global` a global section, and job files as plain arguments.
//!
//! Options given before the first `--name` form a global section, so
//! `fio --filename=/dev/x --bs=4k --name=file1` (the spelling in many write-ups) gives job
//! `file1` all of them.

use std::path::PathBuf;

use crate::error::{Error, Origin, Result};
use crate::jobfile::{raw_opt, Section};

/// Output formats; several may be requested at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Normal,
    Terse,
    Json,
    JsonPlus,
}

/// When to print the live status line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eta {
    Auto,
    Always,
    Never,
}

/// The switches that are not job options.
#[derive(Debug, Clone)]
pub struct Globals {
    pub output: Option<PathBuf>,
    pub formats: Vec<Format>,
    pub terse_version: u8,
    /// Milliseconds.
    pub status_interval: Option<u64>,
    pub eta: Eta,
    /// Milliseconds.
    pub eta_newline: Option<u64>,
    /// Milliseconds.
    pub eta_interval: Option<u64>,
    pub parse_only: bool,
    pub showcmd: bool,
    pub sections: Vec<String>,
    pub readonly: bool,
    pub max_jobs: Option<u64>,
    pub warnings_fatal: bool,
    pub version: bool,
    pub help: bool,
    /// `Some("")` for a bare `--cmdhelp`.
    pub cmdhelp: Option<String>,
    pub enghelp: Option<String>,
    /// fiox addition: print a header line of field names before terse output.
    pub terse_header: bool,
    /// fiox addition: `--status-interval` reports cover each interval, not the run so far.
    pub interval_delta: bool,
    /// fiox addition: each JSON report on one line (JSON Lines), for streaming consumers.
    pub json_lines: bool,
    /// `--inflate-log=FILE`: print the text of a compressed (`.fz`) log and exit.
    pub inflate_log: Option<PathBuf>,
    /// `--trigger-file`, `--trigger-timeout` (ms), `--trigger` (a shell command).
    pub trigger_file: Option<PathBuf>,
    pub trigger_timeout_ms: Option<u64>,
    pub trigger_cmd: Option<String>,
    /// `--profile=NAME`: a built-in workload whose jobs join the run (fio echoes it nowhere).
    pub profile: Option<String>,
    /// fiox addition: `--repeat-until=METRIC:BOUND%` with `--repeat-max=N`.
    pub repeat_until: Option<crate::repeat::RepeatUntil>,
    /// fiox addition: credentials and launchers of multi-host runs.
    pub secure: Secure,
    /// Multi-host runs (fio's client/server and fiox's additions).
    pub multihost: MultiHost,
    /// `--debug=CLASS[,CLASS...]` (fio's trace classes; `help` lists them).
    pub debug: Option<String>,
    /// `--crctest[=LIST]`: `Some("")` for every checksum.
    pub crctest: Option<String>,
    /// `--idle-prof=system|percpu|calibrate`.
    pub idle_prof: Option<String>,
}

/// The multi-host transports' switches (`--auth-key`, `--tls-*`, `--keygen`, `--fiox-path`,
/// `--rsh`, `--ssh`). Each but `--keygen` also comes from an environment variable named after
/// it (`FIOX_AUTH_KEY`, `FIOX_TLS_CA`, ..., `FIOX_FIOX_PATH`, `FIOX_RSH`, `FIOX_SSH`), for
/// containers whose settings arrive that way; the command line wins.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Secure {
    pub auth_key: Option<PathBuf>,
    pub tls_ca: Option<PathBuf>,
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    /// `--keygen[=FILE]`: the file to create (`fiox.key` when bare, `-` for standard output).
    pub keygen: Option<PathBuf>,
    pub fiox_path: Option<String>,
    pub rsh: Option<String>,
    pub ssh: Option<String>,
}

impl Secure {
    /// Fills what the command line left unset from the environment (`env` looks a variable
    /// up); empty variables count as unset.
    pub fn with_env(mut self, env: impl Fn(&str) -> Option<String>) -> Secure {
        let get = |name: &str| env(name).filter(|v| !v.is_empty());
        let path = |slot: &mut Option<PathBuf>, name: &str| {
            if slot.is_none() {
                *slot = get(name).map(PathBuf::from);
            }
        };
        path(&mut self.auth_key, "FIOX_AUTH_KEY");
        path(&mut self.tls_ca, "FIOX_TLS_CA");
        path(&mut self.tls_cert, "FIOX_TLS_CERT");
        path(&mut self.tls_key, "FIOX_TLS_KEY");
        for (slot, name) in
            [(&mut self.fiox_path, "FIOX_FIOX_PATH"), (&mut self.rsh, "FIOX_RSH"), (&mut self.ssh, "FIOX_SSH")]
        {
            if slot.is_none() {
                *slot = get(name);
            }
        }
        self
    }
}

/// The switches of multi-host runs. `--client` splits the command line (job files after it are
/// that host's), which the binary's coordinator does itself; here each value is only checked
/// and kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultiHost {
    /// `--server[=ARGS]`: `Some("")` for a bare `--server`.
    pub server: Option<String>,
    pub daemonize: Option<PathBuf>,
    /// `--client=HOST[,PORT]` or `--client=HOSTFILE`, in order.
    pub clients: Vec<String>,
    pub remote_config: Option<String>,
    /// `--hosts=h1,h2` and `--hosts-file=F` (fiox).
    pub hosts: Vec<String>,
    pub hosts_file: Option<PathBuf>,
    pub connect_timeout_ms: u64,
    pub host_timeout_ms: u64,
    /// `--on-host-failure=abort` (default `continue`).
    pub abort_on_host_failure: bool,
    /// A server's consent to run `exec_prerun`, `exec_postrun` and the exec engine.
    pub allow_exec: bool,
    /// `--allow-path=GLOB[,GLOB...]`: the files and devices a server's jobs may open (checked
    /// by the server, which also knows its working directory, the default).
    pub allow_path: Vec<String>,
    /// A server's consent to jobs writing to a device that is mounted or holds a file system
    /// or partition table (the jobs still need `allow_mounted_write=1`).
    pub allow_destructive: bool,
    /// `--join=HOST:PORT`: the coordinator waits there for `join_count` workers started by a
    /// launcher (`fiox --server=join:HOST:PORT`), at most `join_timeout_ms`.
    pub join: Option<String>,
    pub join_count: Option<u32>,
    pub join_timeout_ms: u64,
}

impl Default for MultiHost {
    fn default() -> Self {
        MultiHost {
            server: None,
            daemonize: None,
            clients: Vec::new(),
            remote_config: None,
            hosts: Vec::new(),
            hosts_file: None,
            connect_timeout_ms: 5000,
            host_timeout_ms: 10_000,
            abort_on_host_failure: false,
            allow_exec: false,
            allow_path: Vec::new(),
            allow_destructive: false,
            join: None,
            join_count: None,
            join_timeout_ms: 60_000,
        }
    }
}

impl MultiHost {
    /// Whether the command line makes this process a coordinator.
    pub fn coordinator(&self) -> bool {
        !self.clients.is_empty() || !self.hosts.is_empty() || self.hosts_file.is_some() || self.join.is_some()
    }
}

impl Default for Globals {
    fn default() -> Self {
        Globals {
            output: None,
            formats: vec![Format::Normal],
            terse_version: 3,
            status_interval: None,
            eta: Eta::Auto,
            eta_newline: None,
            eta_interval: None,
            parse_only: false,
            showcmd: false,
            sections: Vec::new(),
            readonly: false,
            max_jobs: None,
            warnings_fatal: false,
            version: false,
            help: false,
            cmdhelp: None,
            enghelp: None,
            terse_header: false,
            interval_delta: false,
            json_lines: false,
            inflate_log: None,
            trigger_file: None,
            trigger_timeout_ms: None,
            trigger_cmd: None,
            profile: None,
            repeat_until: None,
            secure: Secure::default(),
            multihost: MultiHost::default(),
            debug: None,
            crctest: None,
            idle_prof: None,
        }
    }
}

/// A parsed command line.
#[derive(Debug, Clone, Default)]
pub struct CommandLine {
    pub globals: Globals,
    /// Sections built from job options on the command line, in order.
    pub sections: Vec<Section>,
    pub job_files: Vec<PathBuf>,
}

/// How a global switch takes its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    None,
    Required,
    Optional,
}

/// One of fio's global switches (`--output=FILE`): not a job option, so not in the option table.
/// This table parses them and writes their lines in `--help`, the man page and the completions.
#[derive(Debug, Clone, Copy)]
pub struct Switch {
    pub name: &'static str,
    pub arg: Arg,
    /// Whether fiox implements it; the others are refused with "not supported yet".
    pub supported: bool,
    /// What `--help` calls the value (`FILE`); empty for a switch without a value.
    pub value: &'static str,
    /// The values to offer when completing, if they are a fixed set of words.
    pub words: &'static [&'static str],
    /// Whether the value is a file name (for completions).
    pub file: bool,
    /// One line for `--help`; empty for an unsupported switch.
    pub help: &'static str,
}

const fn sw(name: &'static str, arg: Arg, value: &'static str, help: &'static str) -> Switch {
    Switch { name, arg, supported: true, value, words: &[], file: false, help }
}

const fn words(mut s: Switch, words: &'static [&'static str]) -> Switch {
    s.words = words;
    s
}

const fn file(mut s: Switch) -> Switch {
    s.file = true;
    s
}

/// A switch fio has but fiox does not (client/server, ...): listed so that it gets a clear "not
/// supported yet".
const fn no(name: &'static str, arg: Arg) -> Switch {
    Switch { name, arg, supported: false, value: "", words: &[], file: false, help: "" }
}

/// fio's global switches, in the order `--help` lists them.
pub const SWITCHES: &[Switch] = &[
    file(sw("output", Arg::Required, "FILE", "write results to FILE")),
    words(
        sw("output-format", Arg::Required, "LIST", "normal, terse, json, json+ (comma-separated)"),
        &["normal", "terse", "json", "json+"],
    ),
    sw("minimal", Arg::None, "", "terse output"),
    words(sw("terse-version", Arg::Required, "N", "terse version 2, 3 (default), 4 or 5"), &["2", "3", "4", "5"]),
    sw("terse-header", Arg::None, "", "print a line of field names before terse output (fiox addition)"),
    sw(
        "status-interval-delta",
        Arg::None,
        "",
        "interval reports cover each interval, not the run so far (fiox addition)",
    ),
    sw("json-lines", Arg::None, "", "each JSON report on one line (fiox addition)"),
    sw(
        "repeat-until",
        Arg::Required,
        "METRIC:BOUND%",
        "run again until the 95% confidence interval of METRIC's mean (iops, bw, lat, p99) is within BOUND% of it; at least 3 runs, exit status 2 if never (fiox addition)",
    ),
    sw("repeat-max", Arg::Required, "N", "at most N runs with --repeat-until (default 10, at least 3)"),
    sw("parse-only", Arg::None, "", "check the jobs and exit without doing I/O"),
    sw("showcmd", Arg::None, "", "print each job file as a command line"),
    sw("section", Arg::Required, "NAME", "run only the named job sections"),
    sw("readonly", Arg::None, "", "refuse any job that writes"),
    sw("status-interval", Arg::Required, "T", "print results every T"),
    words(sw("eta", Arg::Required, "WHEN", "always, never or auto"), &["always", "never", "auto"]),
    sw("eta-newline", Arg::Required, "T", "print the status line on a new line every T"),
    sw("eta-interval", Arg::Required, "T", "update the status line every T"),
    sw("max-jobs", Arg::Required, "N", "refuse a run of more than N jobs (clones counted)"),
    sw("warnings-fatal", Arg::None, "", "accepted for fio's command lines; no effect in fiox"),
    sw("cmdhelp", Arg::Optional, "OPTION|all", "describe job options"),
    sw("enghelp", Arg::Optional, "ENGINE[,OPTION]", "list I/O engines or describe one"),
    file(sw("inflate-log", Arg::Required, "FILE", "print the text of a compressed log (log_store_compressed)")),
    words(
        sw("profile", Arg::Required, "NAME", "add a built-in workload's jobs: tiobench, or act (needs --device-names)"),
        &["tiobench", "act"],
    ),
    file(sw("trigger-file", Arg::Required, "FILE", "stop every job when FILE appears, then run --trigger")),
    sw("trigger-timeout", Arg::Required, "T", "stop every job after T, then run --trigger"),
    sw("trigger", Arg::Required, "CMD", "the shell command to run once a trigger stopped the jobs"),
    sw(
        "server",
        Arg::Optional,
        "ip:HOST,PORT|ip6:HOST,PORT|,PORT|HOST|sock:PATH|stdio",
        "run jobs for fiox coordinators (default port 8765; without credentials on loopback or sock: only); join:HOST:PORT dials a coordinator's --join instead",
    ),
    file(sw("daemonize", Arg::Required, "PIDFILE", "with --server: run in the background, PID in PIDFILE")),
    sw("client", Arg::Required, "HOST[,PORT]|HOSTFILE", "run the jobs (files after it are this host's) on fiox servers"),
    sw("remote-config", Arg::Required, "PATH", "the job file the server reads from its own disk"),
    sw("hosts", Arg::Required, "H1,H2,...", "run the same jobs on these fiox servers (fiox addition)"),
    file(sw("hosts-file", Arg::Required, "FILE", "run the same jobs on the servers listed in FILE (fiox addition)")),
    sw("connect-timeout", Arg::Required, "T", "give up connecting to a host after T (default 5s)"),
    sw("host-timeout", Arg::Required, "T", "declare a silent host (or coordinator) lost after T (default 10s)"),
    words(
        sw("on-host-failure", Arg::Required, "continue|abort", "when a host is lost: the others go on (default) or stop"),
        &["continue", "abort"],
    ),
    sw("allow-exec", Arg::None, "", "with --server: let jobs run commands (exec_prerun, exec_postrun, exec engine)"),
    sw(
        "allow-path",
        Arg::Required,
        "GLOB[,GLOB...]",
        "with --server: the files and devices jobs may open (a match or anything under it; default: the server's working directory)",
    ),
    sw(
        "allow-destructive",
        Arg::None,
        "",
        "with --server: let jobs with allow_mounted_write=1 write to devices holding a file system or partition table",
    ),
    sw("join", Arg::Required, "HOST:PORT", "wait on HOST:PORT for --join-count servers started with --server=join:HOST:PORT (fiox addition)"),
    sw("join-count", Arg::Required, "N", "with --join: how many servers join (ranks 0 to N-1 from SLURM_PROCID, OMPI_COMM_WORLD_RANK or PMI_RANK)"),
    sw("join-timeout", Arg::Required, "T", "with --join: give up when not all servers joined within T (default 60s)"),
    sw("debug", Arg::Required, "CLASS[,CLASS...]", "fio's trace lines for these classes (help lists them)"),
    sw("crctest", Arg::Optional, "CHECKSUM[,CHECKSUM...]", "measure the checksums' speed and exit"),
    words(
        sw("idle-prof", Arg::Required, "MODE", "measure CPU idleness during the run: system, percpu, or calibrate (and exit)"),
        &["system", "percpu", "calibrate"],
    ),
    sw("version", Arg::None, "", "print the version"),
    sw("help", Arg::None, "", "print this help"),
    no("bandwidth-log", Arg::None),
    no("append-terse", Arg::None),
    no("alloc-size", Arg::Required),
    no("cpuclock-test", Arg::None),
    no("trigger-remote", Arg::Required),
    no("aux-path", Arg::Required),
    no("merge-blktrace-only", Arg::None),
    // Multi-host transports: credentials and launchers (fiox additions).
    file(sw(
        "auth-key",
        Arg::Required,
        "FILE",
        "shared-secret key file (mode 0600) for TLS between coordinator and servers (env FIOX_AUTH_KEY)",
    )),
    file(sw("tls-ca", Arg::Required, "FILE", "site CA certificate(s), PEM, for mutual TLS (env FIOX_TLS_CA)")),
    file(sw("tls-cert", Arg::Required, "FILE", "this side's certificate from the site CA, PEM (env FIOX_TLS_CERT)")),
    file(sw("tls-key", Arg::Required, "FILE", "this side's private key, PEM, mode 0600 (env FIOX_TLS_KEY)")),
    file(sw(
        "keygen",
        Arg::Optional,
        "FILE",
        "write a new 256-bit shared secret to FILE (default fiox.key, - for standard output) with mode 0600",
    )),
    sw("fiox-path", Arg::Required, "PATH", "fiox's path on hosts started by ssh or --rsh (env FIOX_FIOX_PATH)"),
    sw(
        "rsh",
        Arg::Required,
        "CMD",
        "start each host's server with CMD, {host} standing for the host (ip netns exec {host}; env FIOX_RSH)",
    ),
    sw("ssh", Arg::Required, "CMD", "the ssh command and its options for ssh:// hosts (default ssh; env FIOX_SSH)"),
];

impl Switch {
    /// The switch as `--help` shows it: `--output=FILE`, `--cmdhelp[=OPTION|all]`.
    pub fn label(&self) -> String {
        match self.arg {
            Arg::None => format!("--{}", self.name),
            Arg::Required => format!("--{}={}", self.name, self.value),
            Arg::Optional => format!("--{}[={}]", self.name, self.value),
        }
    }
}

/// The supported switches' lines for `--help`, descriptions from column 26.
pub fn switch_help() -> String {
    let mut out = String::new();
    for s in SWITCHES.iter().filter(|s| s.supported) {
        let label = s.label();
        let pad = 24usize.saturating_sub(label.len()).max(1);
        out.push_str(&format!("  {label}{}{}\n", " ".repeat(pad), s.help));
    }
    out
}

/// Parses fio's argv (without the program name).
pub fn parse<I, S>(args: I) -> Result<CommandLine>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let args: Vec<String> = args.into_iter().map(Into::into).collect();
    let mut cl = CommandLine::default();
    let mut explicit_formats: Option<Vec<Format>> = None;
    let mut repeat_max: Option<u32> = None;
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        let Some(stripped) = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-')).filter(|s| !s.is_empty()) else {
            cl.job_files.push(PathBuf::from(arg));
            continue;
        };
        let (name, inline) = match stripped.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (stripped, None),
        };
        if let Some(&Switch { arg: how, supported, .. }) = SWITCHES.iter().find(|s| s.name == name) {
            let value = match (how, inline) {
                (Arg::None, Some(_)) => return Err(Error::Usage(format!("--{name} takes no value"))),
                (Arg::None, None) | (Arg::Optional, None) => None,
                (_, Some(v)) => Some(v),
                (Arg::Required, None) => {
                    let v = args.get(i).cloned().ok_or_else(|| Error::Usage(format!("--{name} needs a value")))?;
                    i += 1;
                    Some(v)
                }
            };
            if !supported {
                return Err(Error::Usage(format!("--{name} is not supported yet by fiox")));
            }
            if name == "repeat-max" {
                let v = value.unwrap_or_default();
                repeat_max =
                    Some(crate::repeat::parse_max(&v).map_err(|e| Error::Usage(format!("--{name}={v}: {e}")))?);
                continue;
            }
            apply_switch(&mut cl.globals, &mut explicit_formats, name, value)?;
            continue;
        }
        // A job option.
        let Some(def) = crate::table::lookup(name) else {
            return Err(Error::UnknownOption {
                name: name.to_string(),
                origin: Origin::CommandLine,
                suggestions: suggest_cli(name),
            });
        };
        let value = match inline {
            Some(v) => Some(v),
            // Value-less flags never take the next argument, as in fio (`-thread -rw=read`).
            None if def.takes_no_value() => None,
            None => {
                let v = args.get(i).cloned().ok_or_else(|| Error::MissingValue {
                    option: name.to_string(),
                    origin: Origin::CommandLine,
                    forms: def.forms(),
                })?;
                i += 1;
                Some(v)
            }
        };
        if def.name == "name" {
            let job = value.unwrap_or_default();
            if job.is_empty() {
                return Err(Error::Usage("--name needs a job name".into()));
            }
            // fio echoes `name` among a command-line job's options (JSON `job options`, and
            // `"name" : "global"` in `global options`), so it is kept as one.
            let opt = raw_opt(name, Some(job.clone()), Origin::CommandLine)?;
            cl.sections.push(Section { name: job, options: vec![opt], origin: Origin::CommandLine });
            continue;
        }
        let opt = raw_opt(name, value, Origin::CommandLine)?;
        if cl.sections.is_empty() {
            cl.sections.push(Section { name: "global".into(), options: Vec::new(), origin: Origin::CommandLine });
        }
        cl.sections.last_mut().expect("a section was just ensured").options.push(opt);
    }
    if let Some(f) = explicit_formats {
        cl.globals.formats = f;
    }
    match (&mut cl.globals.repeat_until, repeat_max) {
        (Some(r), Some(max)) => r.max_runs = max,
        (None, Some(_)) => return Err(Error::Usage("--repeat-max needs --repeat-until".into())),
        _ => {}
    }
    Ok(cl)
}

/// Suggestions among job options and global switches alike.
fn suggest_cli(name: &str) -> Vec<&'static str> {
    let mut s = crate::table::suggest(name);
    for sw in SWITCHES {
        if crate::table::edit_distance(name, sw.name) <= 2 && s.len() < 3 {
            s.push(sw.name);
        }
    }
    s
}

fn apply_switch(g: &mut Globals, formats: &mut Option<Vec<Format>>, name: &str, value: Option<String>) -> Result<()> {
    let v = value.unwrap_or_default();
    let bad = |what: &str| Error::Usage(format!("--{name}={v}: {what}"));
    match name {
        "output" => g.output = Some(PathBuf::from(v)),
        "output-format" => {
            let mut list = Vec::new();
            for part in v.split(',') {
                let f = match part.trim() {
                    "normal" => Format::Normal,
                    "terse" => Format::Terse,
                    "json" => Format::Json,
                    "json+" => Format::JsonPlus,
                    other => {
                        return Err(bad(&format!(
                            "unknown format '{other}'; use normal, terse, json or json+ (comma-separated)"
                        )))
                    }
                };
                if !list.contains(&f) {
                    list.push(f);
                }
            }
            *formats = Some(list);
        }
        "minimal" => *formats = Some(vec![Format::Terse]),
        "terse-version" => {
            g.terse_version = match v.as_str() {
                "2" => 2,
                "3" => 3,
                "4" => 4,
                "5" => 5,
                _ => return Err(bad("terse versions are 2, 3, 4 and 5")),
            }
        }
        "status-interval" => g.status_interval = Some(time_ms(&v).map_err(|e| bad(&e))?),
        "eta" => {
            g.eta = match v.as_str() {
                "auto" => Eta::Auto,
                "always" => Eta::Always,
                "never" => Eta::Never,
                _ => return Err(bad("use always, never or auto")),
            }
        }
        "eta-newline" => g.eta_newline = Some(time_ms(&v).map_err(|e| bad(&e))?),
        "eta-interval" => g.eta_interval = Some(time_ms(&v).map_err(|e| bad(&e))?),
        "parse-only" => g.parse_only = true,
        "showcmd" => g.showcmd = true,
        "section" => g.sections.push(v),
        "readonly" => g.readonly = true,
        "max-jobs" => g.max_jobs = Some(v.parse().map_err(|_| bad("not a whole number"))?),
        "warnings-fatal" => g.warnings_fatal = true,
        "debug" => g.debug = Some(v),
        "crctest" => g.crctest = Some(v),
        "idle-prof" => g.idle_prof = Some(v),
        "version" => g.version = true,
        "help" => g.help = true,
        "cmdhelp" => g.cmdhelp = Some(v),
        "enghelp" => g.enghelp = Some(v),
        "terse-header" => g.terse_header = true,
        "status-interval-delta" => g.interval_delta = true,
        "json-lines" => g.json_lines = true,
        "inflate-log" => g.inflate_log = Some(PathBuf::from(v)),
        "trigger-file" => g.trigger_file = Some(PathBuf::from(v)),
        "trigger-timeout" => g.trigger_timeout_ms = Some(time_ms(&v).map_err(|e| bad(&e))?),
        "trigger" => g.trigger_cmd = Some(v),
        // A built-in workload whose jobs join the run (crate::profile); fio echoes it nowhere.
        "profile" => g.profile = Some(v),
        "repeat-until" => {
            let (metric, bound_pct) = crate::repeat::parse_until(&v).map_err(|e| bad(&e))?;
            let max_runs = crate::repeat::DEFAULT_MAX;
            g.repeat_until = Some(crate::repeat::RepeatUntil { metric, bound_pct, max_runs });
        }
        "auth-key" => g.secure.auth_key = Some(PathBuf::from(v)),
        "tls-ca" => g.secure.tls_ca = Some(PathBuf::from(v)),
        "tls-cert" => g.secure.tls_cert = Some(PathBuf::from(v)),
        "tls-key" => g.secure.tls_key = Some(PathBuf::from(v)),
        "keygen" => g.secure.keygen = Some(PathBuf::from(if v.is_empty() { "fiox.key" } else { v.as_str() })),
        "fiox-path" | "rsh" | "ssh" if v.trim().is_empty() => return Err(bad("empty")),
        "fiox-path" => g.secure.fiox_path = Some(v),
        "rsh" => g.secure.rsh = Some(v),
        "ssh" => g.secure.ssh = Some(v),
        "server" => g.multihost.server = Some(v),
        "daemonize" => g.multihost.daemonize = Some(PathBuf::from(v)),
        "client" if v.is_empty() => return Err(bad("needs a host name or a host file")),
        "client" => g.multihost.clients.push(v),
        "remote-config" => g.multihost.remote_config = Some(v),
        "hosts" => {
            for h in v.split(',').map(str::trim) {
                if h.is_empty() {
                    return Err(bad("an empty host name in the list"));
                }
                g.multihost.hosts.push(h.to_string());
            }
        }
        "hosts-file" => g.multihost.hosts_file = Some(PathBuf::from(v)),
        "connect-timeout" => g.multihost.connect_timeout_ms = time_ms(&v).map_err(|e| bad(&e))?,
        "host-timeout" => g.multihost.host_timeout_ms = time_ms(&v).map_err(|e| bad(&e))?,
        "on-host-failure" => {
            g.multihost.abort_on_host_failure = match v.as_str() {
                "continue" => false,
                "abort" => true,
                _ => return Err(bad("use continue or abort")),
            }
        }
        "allow-exec" => g.multihost.allow_exec = true,
        "allow-path" => {
            for p in v.split(',').map(str::trim) {
                if p.is_empty() {
                    return Err(bad("an empty pattern in the list"));
                }
                g.multihost.allow_path.push(p.to_string());
            }
        }
        "allow-destructive" => g.multihost.allow_destructive = true,
        "join" if v.trim().is_empty() => return Err(bad("needs HOST:PORT to listen on")),
        "join" => g.multihost.join = Some(v),
        "join-count" => {
            g.multihost.join_count = Some(match v.parse::<u32>() {
                Ok(n) if (1..=4096).contains(&n) => n,
                _ => return Err(bad("a number of servers from 1 to 4096")),
            })
        }
        "join-timeout" => g.multihost.join_timeout_ms = time_ms(&v).map_err(|e| bad(&e))?,
        _ => unreachable!("every supported switch is handled"),
    }
    Ok(())
}

/// Status and ETA intervals: a bare number is in seconds, as in fio.
fn time_ms(v: &str) -> std::result::Result<u64, String> {
    let us = crate::value::parse_time(v, crate::table::TimeUnit::Sec)?;
    if us < 1000 {
        return Err("the interval must be at least 1ms".into());
    }
    Ok(us / 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<CommandLine> {
        parse(args.iter().copied())
    }

    #[test]
    fn four_spellings_and_flags() {
        let cl = p(&[
            "-filename=/tmp/x",
            "-direct=1",
            "-iodepth",
            "1",
            "-thread",
            "--rw",
            "read",
            "--bs=4k",
            "-group_reporting",
            "-name=j",
        ])
        .unwrap();
        assert_eq!(cl.sections.len(), 2);
        assert_eq!(cl.sections[0].name, "global");
        let opts: Vec<(&str, Option<&str>)> =
            cl.sections[0].options.iter().map(|o| (o.typed.as_str(), o.value.as_deref())).collect();
        assert_eq!(
            opts,
            vec![
                ("filename", Some("/tmp/x")),
                ("direct", Some("1")),
                ("iodepth", Some("1")),
                ("thread", None),
                ("rw", Some("read")),
                ("bs", Some("4k")),
                ("group_reporting", None),
            ]
        );
        assert_eq!(cl.sections[1].name, "j");
    }

    #[test]
    fn name_global_and_jobs() {
        let cl = p(&["--name=global", "--bs=8k", "--name=a", "--rw=write", "--name=b"]).unwrap();
        let names: Vec<&str> = cl.sections.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["global", "a", "b"]);
        assert_eq!(cl.sections[1].options[1].value.as_deref(), Some("write"));
    }

    #[test]
    fn switches() {
        let cl =
            p(&["--output-format=json,normal", "--output", "out.txt", "job.fio", "--section=x", "--status-interval=1"])
                .unwrap();
        assert_eq!(cl.globals.formats, vec![Format::Json, Format::Normal]);
        assert_eq!(cl.globals.output, Some(PathBuf::from("out.txt")));
        assert_eq!(cl.job_files, vec![PathBuf::from("job.fio")]);
        assert_eq!(cl.globals.sections, vec!["x".to_string()]);
        assert_eq!(cl.globals.status_interval, Some(1000));
        assert_eq!(p(&["--minimal"]).unwrap().globals.formats, vec![Format::Terse]);
        assert_eq!(p(&["--cmdhelp"]).unwrap().globals.cmdhelp, Some(String::new()));
        assert_eq!(p(&["--cmdhelp=bs"]).unwrap().globals.cmdhelp, Some("bs".into()));
        let m = p(&["--server"]).unwrap().globals.multihost;
        assert_eq!((m.server.as_deref(), m.coordinator()), (Some(""), false));
        let m = p(&["--client=h1", "--client", "h2,9000", "--host-timeout=3", "--on-host-failure=abort"])
            .unwrap()
            .globals
            .multihost;
        assert_eq!(m.clients, vec!["h1".to_string(), "h2,9000".to_string()]);
        assert_eq!((m.host_timeout_ms, m.connect_timeout_ms, m.abort_on_host_failure), (3000, 5000, true));
        assert!(m.coordinator());
    }

    #[test]
    fn errors() {
        let e = p(&["--blocksize2=4k"]).unwrap_err().to_string();
        assert_eq!(e, "unknown option 'blocksize2' (command line); did you mean 'blocksize'?");
        assert!(p(&["--bs"]).unwrap_err().to_string().contains("needs a value"));
        assert!(p(&["--output-format=xml"]).unwrap_err().to_string().contains("unknown format 'xml'"));
        assert!(p(&["--trigger-remote=x"]).unwrap_err().to_string().contains("not supported yet"));
        assert!(p(&["--on-host-failure=maybe"]).unwrap_err().to_string().contains("continue or abort"));
        assert!(p(&["--hosts=a,,b"]).unwrap_err().to_string().contains("empty host"));
        assert!(p(&["--name="]).is_err());
    }

    #[test]
    fn secure_switches_and_their_variables() {
        let cl =
            p(&["--auth-key=/k", "--tls-ca", "/ca", "--keygen", "--fiox-path=/opt/fiox", "--rsh=ip netns exec {host}"])
                .unwrap();
        let s = &cl.globals.secure;
        assert_eq!(s.auth_key, Some(PathBuf::from("/k")));
        assert_eq!(s.tls_ca, Some(PathBuf::from("/ca")));
        assert_eq!(s.keygen, Some(PathBuf::from("fiox.key")));
        assert_eq!(s.fiox_path.as_deref(), Some("/opt/fiox"));
        assert_eq!(s.rsh.as_deref(), Some("ip netns exec {host}"));
        assert_eq!(p(&["--keygen=/tmp/x.key"]).unwrap().globals.secure.keygen, Some(PathBuf::from("/tmp/x.key")));
        assert!(p(&["--fiox-path="]).unwrap_err().to_string().contains("--fiox-path=: empty"));
        let env = |n: &str| match n {
            "FIOX_AUTH_KEY" => Some("/env-k".to_string()),
            "FIOX_TLS_CERT" => Some("/env-c".to_string()),
            "FIOX_SSH" => Some(String::new()),
            _ => None,
        };
        let s = cl.globals.secure.clone().with_env(env);
        // The command line wins; unset ones come from the environment; empty ones stay unset.
        assert_eq!(s.auth_key, Some(PathBuf::from("/k")));
        assert_eq!(s.tls_cert, Some(PathBuf::from("/env-c")));
        assert_eq!(s.ssh, None);
    }
}
