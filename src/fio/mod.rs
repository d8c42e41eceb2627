//! The fio-compatible mode: `fiox [options] [job options] <job file(s)>`, as `fio` takes them.
//! It answers the informational switches, hands `--server` and `--client` to `multihost`, and
//! runs a local plan; with the multi-host coordinator it is the only place that writes results
//! to standard output or `--output`. `act` prints the ACT profile's table and verdict.

pub mod act;
mod crctest;
mod idle_prof;
mod observe;

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Mutex;

use anyhow::{Context, Result};
use fiox_options::argv::{self, Format};
use fiox_options::{help, jobfile, showcmd};

use crate::fio::act::ActTable;
use crate::report::summary;
use crate::{plan, runner, VERSION_STRING};

/// `--help` and the usage printed for an empty command line: the subcommands, then fio's global
/// switches, both from their tables.
pub fn usage() -> String {
    let mut s = String::from("usage: fiox [options] [job options] <job file(s)>\n");
    for c in crate::SUBCOMMANDS {
        let call = format!("fiox {} {}", c.name, c.args);
        // A long call keeps three spaces before its summary, as in fio-style usage texts.
        let pad = 26usize.saturating_sub(call.len()).max(3);
        s.push_str(&format!(
            "       {}{}{}\n",
            call.trim_end(),
            " ".repeat(pad + call.len() - call.trim_end().len()),
            c.summary
        ));
    }
    s.push_str("\nfio-compatible options (see --cmdhelp for job options):\n");
    s.push_str(&argv::switch_help());
    s
}

/// fiox as fio: parses the command line and job files, answers the informational options
/// (`--version`, `--help`, `--cmdhelp`, `--enghelp`, `--showcmd`, `--parse-only`), and otherwise
/// plans the jobs and runs them.
pub fn run(args: Vec<String>) -> Result<ExitCode> {
    let raw = args.clone();
    let cl = argv::parse(args)?;
    let g = &cl.globals;
    let mut out = std::io::stdout().lock();
    if g.version {
        writeln!(out, "{VERSION_STRING}")?;
        return Ok(ExitCode::SUCCESS);
    }
    if g.help {
        out.write_all(usage().as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(list) = &g.debug {
        if list == "help" || list == "?" {
            out.write_all(crate::runner::debug::help().as_bytes())?;
            return Ok(ExitCode::SUCCESS);
        }
        out.write_all(crate::runner::debug::enable(list)?.as_bytes())?;
    }
    if let Some(list) = &g.crctest {
        return crctest::run(list);
    }
    if let Some(mode) = &g.idle_prof {
        if idle_prof::Mode::parse(mode)? == idle_prof::Mode::Calibrate {
            out.write_all(idle_prof::calibrate_text().as_bytes())?;
            return Ok(ExitCode::SUCCESS);
        }
    }
    if let Some(path) = &g.secure.keygen {
        // A new shared secret for multi-host runs; nothing else on the command line runs.
        if let Some(note) = fiox_multihost::auth::keygen(path)? {
            writeln!(out, "{note}")?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(which) = &g.cmdhelp {
        out.write_all(help::cmdhelp(which)?.as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(path) = &g.inflate_log {
        return inflate_log(path, &mut out);
    }
    if let Some(which) = &g.enghelp {
        out.write_all(help::enghelp(which, &fiox_engine::names())?.as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    {
        let m = &g.multihost;
        if m.join.is_none()
            && (m.join_count.is_some() || m.join_timeout_ms != argv::MultiHost::default().join_timeout_ms)
        {
            anyhow::bail!(
                "--join-count and --join-timeout go with --join (the coordinator's address for joining servers)"
            );
        }
        if m.server.is_none() {
            if let Some(name) = [("allow-path", !m.allow_path.is_empty()), ("allow-destructive", m.allow_destructive)]
                .into_iter()
                .find_map(|(name, set)| set.then_some(name))
            {
                // Ignoring it would let a user believe a coordinator or a local run is limited.
                anyhow::bail!("--{name} goes with --server: it is what a server allows the jobs coordinators send");
            }
        }
    }
    if g.multihost.server.is_some() {
        if g.multihost.coordinator() {
            anyhow::bail!(
                "--server and --client (or --hosts) exclude each other: a process is a server or a coordinator"
            );
        }
        // The server writes from several threads (under ssh or --rsh, stdout is the
        // connection): this thread must not hold standard output's lock meanwhile.
        drop(out);
        return crate::multihost::server::run(g);
    }
    if g.multihost.daemonize.is_some() {
        anyhow::bail!("--daemonize goes with --server");
    }
    if g.multihost.coordinator() {
        drop(out);
        return crate::multihost::coordinator::run(&raw, g);
    }
    if g.multihost.remote_config.is_some() {
        anyhow::bail!("--remote-config goes with --client (the server reads the file)");
    }
    if let Some(name) = multihost_only_switch(&g.secure) {
        // A local run has no use for them; ignoring them would hide a mistyped command line.
        anyhow::bail!("--{name} applies to multi-host runs only (fiox --server, --client, --hosts)");
    }
    let profile = fiox_options::profile::requested(&cl)?;
    if profile == Some(fiox_options::profile::Profile::Act) && g.repeat_until.is_some() {
        // ACT's verdict is about one long run's slices; repeating it would mix runs.
        anyhow::bail!("--repeat-until cannot repeat --profile=act: its verdict covers one run's hourly slices");
    }
    if cl.job_files.is_empty() && cl.sections.is_empty() && profile.is_none() {
        out.write_all(usage().as_bytes())?;
        return Ok(ExitCode::from(1));
    }
    // An unset `${VAR}` stops a run (see `jobfile::expand_env`), but --parse-only substitutes
    // nothing, as fio does: a job file written for another machine's environment still checks.
    let env = |v: &str| std::env::var(v).ok().or_else(|| g.parse_only.then(String::new));
    let mut files = Vec::new();
    for p in &cl.job_files {
        files.push(jobfile::read(p, &env)?);
    }
    if crate::runner::debug::on("parse") {
        for opt in cl.sections.iter().chain(files.iter().flat_map(|f| &f.sections)).flat_map(|s| &s.options) {
            crate::runner::debug::trace("parse", || {
                format!("handle_option={}, ptr={}", opt.typed, opt.value.as_deref().unwrap_or(""))
            });
        }
    }
    if g.showcmd {
        // A profile's jobs are not the user's command line: fio's --showcmd leaves them out.
        out.write_all(showcmd::render("fiox", &cl, &files).as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    let ctx = plan::machine_ctx();
    if let Some(p) = profile {
        files.push(fiox_options::profile::sections(p, &cl, &ctx)?);
    }
    let set = fiox_options::assemble(&cl, &files, &ctx)?;
    // --parse-only checks syntax, values and cross-option rules, like fio's; whether files and
    // devices exist is checked when a run is planned (still before any I/O), so job files
    // written for another machine can be checked here.
    if g.parse_only {
        // Each value read leniently, so users can clean their files (stdout: fio's
        // --parse-only prints nothing, and a run's stderr stays empty).
        for note in fiox_options::take_leniencies() {
            writeln!(out, "fiox: note: {note}")?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    for job in set.jobs.iter().filter(|j| j.spec.time_based_dropped) {
        // fio's warning, on standard error as fio's; the job then runs without time_based.
        eprintln!("fiox: job '{}': time_based requires a runtime/timeout setting; ignored", job.spec.name);
    }
    let plan = plan::build(set, g.readonly, g.max_jobs)?;
    drop(out);
    run_plan(&plan, g)
}

/// The first multi-host transport switch given on the command line (`--keygen` aside), for
/// the runs that cannot use it. Environment variables (`FIOX_AUTH_KEY`, ...) are not looked at
/// here: they may be set for a container whose other runs are local.
fn multihost_only_switch(s: &argv::Secure) -> Option<&'static str> {
    [
        ("auth-key", s.auth_key.is_some()),
        ("tls-ca", s.tls_ca.is_some()),
        ("tls-cert", s.tls_cert.is_some()),
        ("tls-key", s.tls_key.is_some()),
        ("fiox-path", s.fiox_path.is_some()),
        ("rsh", s.rsh.is_some()),
        ("ssh", s.ssh.is_some()),
    ]
    .into_iter()
    .find_map(|(name, set)| set.then_some(name))
}

/// `--inflate-log=FILE`: prints a compressed log as the text log it stands for, as fio does
/// (and exits, whatever else the command line holds).
fn inflate_log(path: &Path, out: &mut impl Write) -> Result<ExitCode> {
    let file = std::fs::File::open(path).with_context(|| format!("--inflate-log: cannot open '{}'", path.display()))?;
    let mut out = std::io::BufWriter::with_capacity(256 << 10, out);
    let mut line = Vec::with_capacity(128);
    runner::logz::inflate(std::io::BufReader::with_capacity(256 << 10, file), |s| {
        line.clear();
        runner::logs::text_line(&mut line, s, None, None);
        out.write_all(&line)
    })
    .map_err(|e| anyhow::anyhow!("--inflate-log: '{}': {e}", path.display()))?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Runs a checked plan and prints its report in the requested formats.
pub fn run_plan(plan: &plan::Plan, g: &argv::Globals) -> Result<ExitCode> {
    let normal = g.formats.contains(&Format::Normal);
    // Planning notes ("opendir added N files") come before the job header, as in fio, and go
    // with the normal output only (fio prints them before its JSON too).
    let notes: String = plan.notes.iter().chain(&plan.warnings).map(|l| format!("{l}\n")).collect();
    // fio's warnings ("verification read phase will never start ...") go where fio prints them,
    // before the report in every format, so standard error stays empty on success.
    let warnings: String = plan.warnings.iter().map(|l| format!("{l}\n")).collect();
    let started: String = plan.started_notes.iter().map(|l| format!("{l}\n")).collect();
    let mut head = if normal { notes + &crate::report::header(plan) + &started } else { warnings + &started };
    // fio prints ACT's table with the normal and terse outputs (and in front of JSON, which
    // fiox keeps clean).
    let act = (g.profile.as_deref() == Some("act") && (normal || g.formats.contains(&Format::Terse)))
        .then(|| ActTable::new(plan))
        .flatten();
    if act.is_some() {
        head.push_str(ActTable::heading());
    }
    if g.output.is_none() && !head.is_empty() {
        print!("{head}");
        std::io::stdout().flush().ok();
        head.clear();
    }
    runner::STOP.store(false, std::sync::atomic::Ordering::Relaxed);
    fiox_engine::sys::stop_on_signals(&runner::STOP);
    let diag: runner::Diag = std::sync::Arc::new(|s: &str| {
        let _ = std::io::stderr().lock().write_all(s.as_bytes());
    });
    let show = match g.eta {
        argv::Eta::Always => true,
        argv::Eta::Never => false,
        argv::Eta::Auto => normal && fiox_engine::sys::stdout_is_tty(),
    };
    let status = show.then(|| runner::StatusLine {
        interval: std::time::Duration::from_millis(g.eta_interval.or(g.eta_newline).unwrap_or(1000).max(100)),
        newline: g.eta_newline.is_some(),
    });
    // Everything the run writes goes to one sink: standard output or --output.
    let sink = std::sync::Arc::new(Output::new(g.output.as_deref(), head)?);
    // fio prints its layout lines with the normal output (stdout or --output), after the
    // header, and nowhere in the other formats: standard error stays empty on success.
    let notice: runner::Diag = if normal {
        let sink = sink.clone();
        std::sync::Arc::new(move |s: &str| {
            let _ = sink.write(s);
        })
    } else {
        std::sync::Arc::new(|_: &str| {})
    };
    let watchers = observe::watchers(plan, g, &sink, act)?;
    let tick = |partial: &[runner::worker::WorkerResult]| watchers.iter().for_each(|w| w.on_interval(partial));
    let every = watchers.iter().filter_map(|w| w.every()).min();
    let interval = every.map(|every| runner::Interval { every, report: &tick });
    // --repeat-until: the whole job set again until the metric's interval is narrow enough;
    // the report is the last run's, with every run's figure in fiox's section.
    let mut values = Vec::new();
    let idle = g.idle_prof.as_deref().map(idle_prof::Mode::parse).transpose()?.map(idle_prof::IdleProf::start);
    let (results, report) = loop {
        watchers.iter().for_each(|w| w.on_begin(values.len() + 1));
        runner::trigger::arm(g.trigger_timeout_ms.map(std::time::Duration::from_millis), g.trigger_file.clone());
        let outcome = runner::run(plan, diag.clone(), notice.clone(), status, interval)?;
        if runner::trigger::fired() {
            if let Some(cmd) = &g.trigger_cmd {
                // fio runs it with system(): the shell's status is not the run's.
                if let Err(e) = std::process::Command::new("/bin/sh").arg("-c").arg(cmd).status() {
                    eprintln!("fiox: --trigger: cannot run '{cmd}': {e}");
                }
            }
        }
        let results = outcome.workers;
        for w in &watchers {
            w.on_end(&results)?;
        }
        let mut report = summary::build(plan, &results, outcome.disks, plan::clock::epoch_ms());
        let mut manifest = crate::report::manifest::build(plan, &results, &report);
        let Some(until) = &g.repeat_until else {
            report.fiox = Some(manifest);
            break (results, report);
        };
        // A failed job, a signal or a trigger ends the repetition with this run's report.
        let stopped = fiox_engine::sys::caught_signal() != 0 || runner::trigger::fired();
        if !stopped && !results.iter().any(|r| r.error.is_some()) {
            match crate::report::repeat::of_report(&report, until.metric) {
                Some(v) => values.push(v),
                None => anyhow::bail!(
                    "--repeat-until: run {} measured no {} (no I/O, or that latency is not kept)",
                    values.len() + 1,
                    until.metric.name()
                ),
            }
        }
        let more =
            !stopped && !results.iter().any(|r| r.error.is_some()) && crate::report::repeat::more(&values, until);
        if !more {
            manifest.repeat = Some(crate::report::repeat::summary(&values, until));
            report.fiox = Some(manifest);
            break (results, report);
        }
    };
    let mut text = formats(g, &report);
    if let Some(idle) = idle.map(idle_prof::IdleProf::finish) {
        // fio adds its idleness to the JSON document and after the normal report.
        text = idle.add_to_json(&text);
        if g.formats.contains(&Format::Normal) {
            text.push_str(&idle.normal());
        }
    }
    sink.write(&text)?;
    let signal = fiox_engine::sys::caught_signal();
    if signal != 0 {
        // fio prints this on standard output, in the middle of JSON; fiox keeps stdout clean.
        eprintln!("fiox: terminating on signal {signal}");
        return Ok(ExitCode::from(128));
    }
    // As fio: the number of jobs that ended on an error (errors a job went on after do not
    // count).
    let failed = results.iter().filter(|r| r.error.is_some()).count();
    if failed == 0 && report.fiox.as_ref().and_then(|m| m.repeat.as_ref()).is_some_and(|r| !r.met) {
        return Ok(ExitCode::from(crate::report::repeat::NOT_MET));
    }
    Ok(ExitCode::from(failed.min(255) as u8))
}

/// The report in every requested format, in fio's order.
fn formats(g: &argv::Globals, report: &fiox_report::RunReport) -> String {
    let opts = crate::report::opts(g);
    let mut text = String::new();
    for f in crate::report::print_order(&g.formats) {
        text.push_str(&fiox_report::render(crate::report::format(f), report, &opts));
    }
    text
}

/// Where results go: standard output, or the `--output` file (created before the run, so a bad
/// path fails before any I/O). Interval reports and the final one are appended in order.
struct Output {
    file: Option<Mutex<std::fs::File>>,
}

impl Output {
    fn new(path: Option<&Path>, head: String) -> Result<Output> {
        let file = match path {
            Some(p) => {
                let mut f = std::fs::File::create(p)
                    .with_context(|| format!("cannot create --output file '{}'", p.display()))?;
                f.write_all(head.as_bytes())?;
                Some(Mutex::new(f))
            }
            None => None,
        };
        Ok(Output { file })
    }

    fn write(&self, text: &str) -> Result<()> {
        match &self.file {
            Some(f) => {
                let mut f = f.lock().map_err(|_| anyhow::anyhow!("output lock poisoned"))?;
                f.write_all(text.as_bytes()).context("cannot write the --output file")
            }
            None => {
                let mut out = std::io::stdout().lock();
                out.write_all(text.as_bytes())?;
                out.flush().context("cannot write to standard output")
            }
        }
    }
}
