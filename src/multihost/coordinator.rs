//! `fiox [options] --client=HOST[,PORT] [jobfiles] [--client=HOST2 [jobfiles]]` (and
//! `--client=HOSTFILE`, `--hosts=`, `--hosts-file=`): the coordinator.
//!
//! Order of a run, each step bounded in time:
//! 1. The command line is split as fio splits it (job files after a `--client` are that
//!    host's; everything before the first `--client` goes to every host), and every host's
//!    part is checked here first, so a typo is reported once, before any host is touched. A
//!    host without a job is an error (fio drops it silently).
//! 2. All hosts are connected in parallel (`--connect-timeout`), greeted, and sent their job;
//!    each server checks and plans it. Every host's errors are reported together, and no host
//!    starts unless all are ready.
//! 3. Clock probes (8 round trips per host; the one with the shortest round trip gives the
//!    host's CLOCK_MONOTONIC offset, within half that round trip), then one start time sent to
//!    every host in its own clock, far enough ahead for the slowest link.
//! 4. The run: interval reports, heartbeats both ways. A host whose connection ends is lost at
//!    once; one silent for `--host-timeout` is lost then, also with no status output asked
//!    for. Its last interval report is kept as its (partial) result. `--on-host-failure=abort`
//!    then stops the others.
//! 5. Every host's report in host-list order, the merge, fiox's host table; exit status 1 if a
//!    host was lost, else the hosts' failed-job counts.

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use fiox_multihost::handshake;
use fiox_multihost::msg::{self, HostFacts, JobText, Msg, Prepare, TextLevel};
use fiox_multihost::net::{self, Endpoint};
use fiox_multihost::{ssh, tls};
use fiox_options::argv::{self, Format, Globals};
use fiox_options::jobfile;

use super::fleet::{totals, whole_lines, Fleet, Host, HostSpec, Joined, Route};
use super::observe::{self, LivePage, Output};
use super::{mono_ns, probe_line, wall_ns, Closer, Sender};
use crate::runner::RunObserver;

/// The transport settings every host's connection shares.
#[derive(Clone)]
struct Transport {
    tls: Option<Arc<tls::ClientConfig>>,
    launch: ssh::LaunchOpts,
    rsh: Option<String>,
    connect_timeout: Duration,
}

impl Transport {
    fn new(g: &Globals) -> Result<Transport> {
        let s = g.secure.clone().with_env(|v| std::env::var(v).ok());
        let opts = tls::TlsOpts { auth_key: s.auth_key, ca: s.tls_ca, cert: s.tls_cert, key: s.tls_key };
        let tls = if opts.is_empty() { None } else { Some(Arc::new(tls::ClientConfig::from_opts(&opts)?)) };
        let connect_timeout = Duration::from_millis(g.multihost.connect_timeout_ms);
        let mut launch = ssh::LaunchOpts { connect_timeout, ..ssh::LaunchOpts::default() };
        if let Some(cmd) = &s.ssh {
            launch.ssh = ssh::split_words(cmd).map_err(|e| anyhow!("--ssh='{cmd}': {e}"))?;
        }
        if let Some(p) = s.fiox_path {
            launch.fiox_path = p;
        }
        Ok(Transport { tls, launch, rsh: s.rsh, connect_timeout })
    }

    /// Connects to one host however its route says.
    fn connect(&self, route: &Route) -> std::io::Result<fiox_multihost::transport::Duplex> {
        let other = |e: ssh::Error| std::io::Error::other(e.to_string());
        match route {
            Route::Net(ep) => net::connect_secure(ep, self.connect_timeout, self.tls.as_deref()),
            Route::Ssh(t) => ssh::ssh(t, &self.launch).map_err(other),
            Route::Rsh(host) => ssh::rsh(self.rsh.as_deref().unwrap_or_default(), host, &self.launch).map_err(other),
            Route::Join(j) => j
                .as_ref()
                .and_then(|j| j.duplex.lock().ok()?.take())
                .ok_or_else(|| std::io::Error::other("the joined connection was already used")),
        }
    }
}

enum Event {
    Ready {
        idx: usize,
        tx: Sender,
        closer: Closer,
        proto: u32,
        version: String,
        facts: HostFacts,
        kind: &'static str,
    },
    Msg {
        idx: usize,
        msg: Msg,
        at: u64,
    },
    /// The connection could not be made, or ended.
    Lost {
        idx: usize,
        why: String,
    },
}

/// Splits fio's command line at each `--client`: the part before the first applies to every
/// host, each later part to its client(s).
fn segments(args: &[String]) -> (Vec<String>, Vec<(String, Vec<String>)>) {
    let mut common = Vec::new();
    let mut clients: Vec<(String, Vec<String>)> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let bare = a.strip_prefix("--").or_else(|| a.strip_prefix('-')).unwrap_or("");
        let value = if bare == "client" {
            i += 1;
            args.get(i).cloned()
        } else {
            bare.strip_prefix("client=").map(str::to_string)
        };
        i += 1;
        match value {
            Some(v) => clients.push((v, Vec::new())),
            None => match clients.last_mut() {
                Some((_, seg)) => seg.push(a.clone()),
                None => common.push(a.clone()),
            },
        }
    }
    (common, clients)
}

/// Host names in a hosts file: whitespace-separated words (fio's rule), `#` comments allowed.
fn hosts_file(path: &Path) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read hosts file '{}'", path.display()))?;
    let hosts: Vec<String> = text
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .flat_map(str::split_whitespace)
        .map(str::to_string)
        .collect();
    if hosts.is_empty() {
        bail!("hosts file '{}' names no host", path.display());
    }
    Ok(hosts)
}

/// Every host with its command line and job files, checked for duplicates and for a job.
fn host_specs(args: &[String], g: &Globals) -> Result<Vec<HostSpec>> {
    let (common, clients) = segments(args);
    if g.multihost.join.is_some() {
        return join_specs(common, g);
    }
    let mut list: Vec<(String, Vec<String>)> = Vec::new();
    for h in &g.multihost.hosts {
        list.push((h.clone(), common.clone()));
    }
    if let Some(f) = &g.multihost.hosts_file {
        for h in hosts_file(f)? {
            list.push((h, common.clone()));
        }
    }
    for (client, seg) in clients {
        let argv: Vec<String> = common.iter().chain(&seg).cloned().collect();
        // fio: an argument naming a readable file is a list of hosts sharing the job.
        if Path::new(&client).is_file() {
            for h in hosts_file(Path::new(&client))? {
                list.push((h, argv.clone()));
            }
        } else {
            list.push((client, argv));
        }
    }
    let mut specs: Vec<HostSpec> = Vec::new();
    for (name, argv) in list {
        let route = if name.starts_with("ssh://") {
            Route::Ssh(ssh::SshTarget::parse(&name).map_err(|e| anyhow!("{e}"))?)
        } else if g.secure.rsh.is_some() || std::env::var("FIOX_RSH").is_ok_and(|v| !v.is_empty()) {
            Route::Rsh(name.clone())
        } else {
            Route::Net(net::parse_client(&name).map_err(|e| anyhow!("{e}"))?)
        };
        let same = |r: &Route| match (r, &route) {
            (Route::Net(a), Route::Net(b)) => a == b,
            (Route::Ssh(a), Route::Ssh(b)) => a == b,
            (Route::Rsh(a), Route::Rsh(b)) => a == b,
            _ => false,
        };
        if specs.iter().any(|s| same(&s.route)) {
            bail!("host '{name}' is listed twice");
        }
        let cl = argv::parse(argv.clone()).with_context(|| format!("host {name}"))?;
        let files = cl.job_files.clone();
        if files.is_empty() && cl.sections.is_empty() && g.multihost.remote_config.is_none() {
            bail!("host '{name}' has no job: give job files or options after its --client, or before the first --client for every host (fio would silently skip it)");
        }
        specs.push(HostSpec { name, route, argv, files });
    }
    if specs.is_empty() {
        bail!("no hosts");
    }
    Ok(specs)
}

/// `--join=HOST:PORT --join-count=N`: N hosts, each with the whole command line, whose
/// connections and names come when they join ([`await_joiners`]).
fn join_specs(argv: Vec<String>, g: &Globals) -> Result<Vec<HostSpec>> {
    let m = &g.multihost;
    if !m.clients.is_empty() || !m.hosts.is_empty() || m.hosts_file.is_some() {
        bail!("--join cannot be combined with --client, --hosts or --hosts-file: the hosts of a run either join or are listed");
    }
    let Some(n) = m.join_count else {
        bail!("--join needs --join-count=N: how many servers the launcher starts");
    };
    let addr = m.join.as_deref().unwrap_or_default();
    net::parse_join(addr, &format!("--join={addr}")).map_err(|e| anyhow!(e))?;
    let cl = argv::parse(argv.clone())?;
    if cl.job_files.is_empty() && cl.sections.is_empty() && m.remote_config.is_none() {
        bail!("--join: no job for the servers that join: give job files or job options");
    }
    let files = cl.job_files.clone();
    Ok((0..n)
        .map(|i| HostSpec {
            name: format!("rank{i}"),
            route: Route::Join(None),
            argv: argv.clone(),
            files: files.clone(),
        })
        .collect())
}

/// One server's connection to the `--join` listener: secured, and its Join read (bounded).
fn joined(
    s: std::net::TcpStream,
    addr: std::net::SocketAddr,
    tls: Option<&tls::ClientConfig>,
) -> Result<(Option<u32>, String, fiox_multihost::transport::Duplex)> {
    let sock = s.try_clone()?;
    let mut d = net::join_accept(s, addr, tls).map_err(|e| anyhow!("{addr}: {e}"))?;
    sock.set_read_timeout(Some(Duration::from_secs(10)))?;
    let first = msg::recv(&mut d.reader);
    sock.set_read_timeout(None)?;
    match first {
        Ok(Some(Msg::Join { rank, rank_from })) => Ok((rank, rank_from, d)),
        Ok(Some(other)) => {
            (d.close)();
            Err(anyhow!("{addr}: sent {} instead of join (not a fiox --server=join:...?)", other.name()))
        }
        Ok(None) => Err(anyhow!("{addr}: closed before saying its rank")),
        Err(e) => {
            (d.close)();
            Err(anyhow!("{addr}: no join message: {e}"))
        }
    }
}

/// Waits (at most `--join-timeout`) on the `--join` address for `--join-count` servers, takes
/// each one's rank (the launcher's, else the next free one in arrival order), and makes them
/// the run's hosts in rank order. Two servers with one rank, a rank past the count, or
/// servers missing at the deadline end the run before anything is sent.
fn await_joiners(g: &Globals, specs: &mut [HostSpec], tr: &Transport) -> Result<()> {
    let m = &g.multihost;
    let addr = m.join.as_deref().unwrap_or_default();
    let ep = net::parse_join(addr, &format!("--join={addr}")).map_err(|e| anyhow!(e))?;
    let n = specs.len();
    let listener =
        net::Listener::bind(&ep, tr.tls.is_some()).with_context(|| format!("--join={addr}: cannot listen"))?;
    let net::Listener::Tcp(l) = &listener else { bail!("--join={addr}: not a TCP address") };
    l.set_nonblocking(true)?;
    let timeout = Duration::from_millis(m.join_timeout_ms);
    let deadline = std::time::Instant::now() + timeout;
    let (jtx, jrx) = mpsc::channel();
    type Arrival = (Option<u32>, String, std::net::SocketAddr, fiox_multihost::transport::Duplex);
    let mut arrived: Vec<Arrival> = Vec::new();
    let close_all = |arrived: &mut Vec<Arrival>| {
        for a in arrived.iter_mut() {
            (a.3.close)();
        }
    };
    while arrived.len() < n {
        if fiox_engine::sys::caught_signal() != 0 {
            close_all(&mut arrived);
            bail!("interrupted while waiting for servers to join; no host ran anything");
        }
        if std::time::Instant::now() >= deadline {
            let ranks: Vec<u32> = arrived.iter().filter_map(|a| a.0).collect();
            let missing: Vec<String> = (0..n as u32).filter(|r| !ranks.contains(r)).map(|r| r.to_string()).collect();
            let which = if arrived.iter().all(|a| a.0.is_some()) {
                format!(" (missing ranks: {})", missing.join(", "))
            } else {
                String::new()
            };
            close_all(&mut arrived);
            bail!(
                "--join={addr}: {} of {n} servers joined within --join-timeout={}s{which}; no host ran anything",
                arrived.len(),
                timeout.as_secs_f64()
            );
        }
        let mut idle = true;
        match l.accept() {
            Ok((s, a)) => {
                idle = false;
                s.set_nonblocking(false)?;
                let (jtx, tls) = (jtx.clone(), tr.tls.clone());
                std::thread::spawn(move || {
                    let _ = jtx.send(joined(s, a, tls.as_deref()).map(|(r, from, d)| (r, from, a, d)));
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => {
                close_all(&mut arrived);
                bail!("--join={addr}: accept: {e}");
            }
        }
        while let Ok(r) = jrx.try_recv() {
            idle = false;
            match r {
                Ok(a) => {
                    let clash = a.0.and_then(|r| arrived.iter().find(|b| b.0 == Some(r)).map(|b| (r, b.2.ip())));
                    let rank_bad = a.0.filter(|&r| r as usize >= n);
                    let from = if a.1.is_empty() { String::new() } else { format!(", from {}", a.1) };
                    arrived.push(a);
                    let new = arrived.last().expect("just pushed").2.ip();
                    if let Some((r, first)) = clash {
                        close_all(&mut arrived);
                        bail!("--join={addr}: rank {r} joined twice ({first} and {new}{from}); no host ran anything");
                    }
                    if let Some(r) = rank_bad {
                        close_all(&mut arrived);
                        bail!("--join={addr}: {new} joined as rank {r}{from}, past --join-count={n} (ranks 0 to {}); no host ran anything", n - 1);
                    }
                }
                // One bad caller (a wrong key, a port scan) is not the run's end: the count is.
                Err(e) => eprintln!("fiox: --join: {e:#}"),
            }
        }
        if idle {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    drop(listener);
    // Ranks the launcher did not give go to the others in arrival order.
    let mut free = (0..n as u32).filter(|r| !arrived.iter().any(|a| a.0 == Some(*r))).collect::<Vec<_>>().into_iter();
    let mut ranked: Vec<(u32, Arrival)> = arrived
        .into_iter()
        .map(|a| (a.0.unwrap_or_else(|| free.next().expect("as many free ranks as unranked")), a))
        .collect();
    ranked.sort_by_key(|(r, _)| *r);
    for (spec, (rank, a)) in specs.iter_mut().zip(ranked) {
        let ip = a.2.ip();
        spec.name = format!("rank{rank}@{ip}");
        spec.route = Route::Join(Some(Joined { addr: ip, duplex: Arc::new(Mutex::new(Some(a.3))) }));
    }
    Ok(())
}

/// The `${VAR}`s a job file names, with the coordinator's values.
fn env_of(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("${") {
        rest = &rest[i + 2..];
        if let Some(end) = rest.find('}') {
            let name = &rest[..end];
            if let Ok(v) = std::env::var(name) {
                if !out.iter().any(|(k, _)| k == name) {
                    out.push((name.to_string(), v));
                }
            }
            rest = &rest[end..];
        }
    }
    out
}

/// A host's job files as sent, the values of the `${VAR}`s they name, its jobs'
/// `live_listen` (the coordinator serves the live page; see `run`) and what the status line
/// needs to know of its jobs.
type Checked = (Vec<JobText>, Vec<(String, String)>, Option<std::net::SocketAddr>, Vec<super::eta::JobHint>);

/// Reads and checks one host's part here, as a local run would, before anything is sent.
fn check_locally(spec: &HostSpec, g: &Globals) -> Result<Checked> {
    let cl = argv::parse(spec.argv.clone())?;
    let env = |v: &str| std::env::var(v).ok();
    let mut texts = Vec::new();
    let mut parsed = Vec::new();
    let mut vars = Vec::new();
    for f in &spec.files {
        let text = std::fs::read_to_string(f).with_context(|| format!("cannot read job file '{}'", f.display()))?;
        parsed.push(jobfile::parse_text(&text, f, &env)?);
        vars.extend(env_of(&text));
        texts.push(JobText { name: f.display().to_string(), text });
    }
    let mut live = None;
    let mut hints = Vec::new();
    // A remote config lives on the server's disk: only the server can check it.
    if g.multihost.remote_config.is_none() {
        let mut files = parsed;
        if let Some(p) = fiox_options::profile::requested(&cl)? {
            files.push(fiox_options::profile::sections(p, &cl, &crate::plan::machine_ctx())?);
        }
        let set = fiox_options::assemble(&cl, &files, &crate::plan::machine_ctx())?;
        live = set.jobs.iter().find_map(|j| j.spec.live_listen);
        hints = super::eta::hints(&set);
    }
    Ok((texts, vars, live, hints))
}

/// Connects, greets and sends the job, then forwards every message; runs on its own thread.
fn open(idx: usize, route: Route, tr: Transport, prep: Prepare, run_id: String, etx: mpsc::Sender<Event>) {
    let lost = |why: String| {
        let _ = etx.send(Event::Lost { idx, why });
    };
    let connect_timeout = tr.connect_timeout;
    let d = match tr.connect(&route) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
            return lost(format!("no answer within --connect-timeout={}ms", connect_timeout.as_millis()))
        }
        Err(e) => return lost(format!("cannot connect: {e}")),
    };
    let kind = match &route {
        Route::Net(Endpoint::Unix(_)) => "unix",
        Route::Net(_) if d.identity.as_deref() == Some("loopback") => "tcp",
        Route::Net(_) => "tls",
        Route::Ssh(_) => "ssh",
        Route::Rsh(_) => "rsh",
        Route::Join(_) => "join",
    };
    // A login shell may print a banner before fiox starts; a socket has no such excuse.
    let noise = if matches!(route, Route::Net(_)) { 0 } else { handshake::NOISE_LIMIT };
    let fiox_multihost::transport::Duplex { mut reader, writer, close, .. } = d;
    let tx = Sender::new(writer);
    let closer = Closer::new(close);
    // The handshake is bounded too: a peer that accepts and says nothing is closed.
    let greeted = Arc::new(std::sync::atomic::AtomicBool::new(false));
    {
        let (greeted, closer) = (greeted.clone(), closer.clone());
        std::thread::spawn(move || {
            std::thread::sleep(connect_timeout.max(Duration::from_secs(2)));
            if !greeted.load(Ordering::Relaxed) {
                closer.close();
            }
        });
    }
    let me = format!("{}@{}", user(), super::host_facts().hostname);
    let hs = {
        let Ok(mut w) = tx.0.lock() else { return lost("lock poisoned".into()) };
        handshake::coordinator(&mut reader, &mut **w, noise, &run_id, &me)
    };
    greeted.store(true, Ordering::Relaxed);
    let (proto, version, facts) = match hs {
        Ok(x) => x,
        Err(e) => return lost(e.to_string()),
    };
    if let Err(e) = tx.send(&Msg::Prepare(Box::new(prep))) {
        return lost(format!("sending the job: {e}"));
    }
    if etx.send(Event::Ready { idx, tx, closer, proto, version, facts, kind }).is_err() {
        return;
    }
    loop {
        match msg::recv(&mut reader) {
            Ok(Some(m)) => {
                if etx.send(Event::Msg { idx, msg: m, at: mono_ns() }).is_err() {
                    return;
                }
            }
            Ok(None) => return lost("connection closed by the server (its process ended?)".into()),
            Err(e) => return lost(format!("connection lost: {e}")),
        }
    }
}

/// Who runs the coordinator, for the servers' logs and busy messages.
pub(super) fn user() -> String {
    std::env::var("USER").or_else(|_| std::env::var("LOGNAME")).unwrap_or_else(|_| {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let uid = status.lines().find_map(|l| l.strip_prefix("Uid:")).and_then(|l| l.split_whitespace().next());
        format!("uid {}", uid.unwrap_or("?"))
    })
}

/// The coordinator: `args` is the whole command line, `g` its switches.
pub fn run(args: &[String], g: &Globals) -> Result<ExitCode> {
    if g.repeat_until.is_some() && g.multihost.join.is_some() {
        bail!(
            "--repeat-until cannot go with --join: a joined server serves one run; list the hosts (--client, --hosts)"
        );
    }
    let mut specs = host_specs(args, g)?;
    let transport = Transport::new(g)?;
    let run_id = format!("{:x}-{:x}", wall_ns(), std::process::id());
    let mut parts = check_all(&specs, g, &run_id)?;
    if g.multihost.join.is_some() {
        await_joiners(g, &mut specs, &transport)?;
        for (p, s) in parts.preps.iter_mut().zip(&specs) {
            p.host_name = s.name.clone();
        }
    }
    let Some(until) = &g.repeat_until else {
        let mut c = Coordinator::connect(g, specs, parts, &transport, &run_id, Output::new(g)?)?;
        while c.phase != Phase::Done {
            c.step()?;
        }
        return c.finish();
    };
    repeat_runs(g, until, &specs, &parts, &transport)
}

/// `--repeat-until` with hosts: the whole multi-host run again, until the figure of the merged
/// report (All clients; the one host's report when there is one) is steady, as a local run
/// repeats. The hosts' probe and header lines are printed once, then the last run's report
/// with the summary; a run with a failed job or a lost host ends the repetition with it.
fn repeat_runs(
    g: &Globals,
    until: &fiox_options::repeat::RepeatUntil,
    specs: &[HostSpec],
    parts: &Parts,
    transport: &Transport,
) -> Result<ExitCode> {
    let out = Output::new(g)?;
    let mut values = Vec::new();
    for run in 1.. {
        let run_id = format!("{:x}-{:x}", wall_ns(), std::process::id());
        let (mut report, code) = again(run, || {
            let mut parts = parts.clone();
            for p in &mut parts.preps {
                p.run_id = run_id.clone();
            }
            let mut c = Coordinator::connect(g, specs.to_vec(), parts, transport, &run_id, out.clone())?;
            c.echo = run == 1;
            while c.phase != Phase::Done {
                c.step()?;
            }
            c.end(|_| Ok(()))
        })?;
        let complete = code == ExitCode::SUCCESS
            && report.degraded.is_none()
            && report.hosts.iter().all(|h| h.report.is_some() && !h.partial);
        if complete {
            let merged = report.all.as_ref().or_else(|| report.hosts.first().and_then(|h| h.report.as_ref()));
            match merged.and_then(|r| crate::report::repeat::of_report(r, until.metric)) {
                Some(v) => values.push(v),
                None => bail!(
                    "--repeat-until: run {run} measured no {} (no I/O, or that latency is not kept)",
                    until.metric.name()
                ),
            }
        }
        if complete && crate::report::repeat::more(&values, until) {
            continue;
        }
        report.repeat = Some(crate::report::repeat::summary(&values, until));
        let opts = crate::report::opts(g);
        for f in crate::report::print_order(&g.formats) {
            out.write(fiox_report::render_clients(crate::report::format(f), &report, &opts).as_bytes())?;
        }
        out.flush()?;
        return Ok(crate::s3::remote::exit_status(code, report.repeat.as_ref()));
    }
    unreachable!("the runs end with a return")
}

/// The multi-host switches `fiox s3 bench` hands to this wing, each with a value.
const S3_SWITCHES: [&str; 8] = [
    "--client",
    "--hosts",
    "--hosts-file",
    "--join",
    "--join-count",
    "--join-timeout",
    "--connect-timeout",
    "--host-timeout",
];

/// Whether a bench's command line names hosts (so it runs through [`run_s3`]).
pub fn s3_multihost(args: &[String]) -> bool {
    args.iter().any(|a| S3_SWITCHES.iter().any(|s| a == s || a.strip_prefix(s).is_some_and(|v| v.starts_with('='))))
}

/// Splits a bench's command line (after `bench`) into its `--client` values, the other
/// multi-host switches (as `--NAME=VALUE`, for fio's parser) and the bench's own flags.
fn split_s3(args: &[String]) -> Result<(Vec<String>, Vec<String>, Vec<String>)> {
    let (mut clients, mut switches, mut rest) = (Vec::new(), Vec::new(), Vec::new());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let Some((name, value)) = S3_SWITCHES.iter().find_map(|s| match a.strip_prefix(s) {
            Some("") => Some((*s, None)),
            Some(v) => v.strip_prefix('=').map(|v| (*s, Some(v.to_string()))),
            None => None,
        }) else {
            rest.push(a.clone());
            continue;
        };
        let value = match value {
            Some(v) => v,
            None => it.next().cloned().with_context(|| format!("s3 bench: {name} needs a value"))?,
        };
        if name == "--client" {
            clients.push(value);
        } else {
            switches.push(format!("{name}={value}"));
        }
    }
    Ok((clients, switches, rest))
}

/// The hosts of a bench: `--hosts`, `--hosts-file`, then each `--client` (a readable file
/// being a list of hosts, as for jobs); or, with `--join`, `--join-count` places for the
/// servers that join.
fn s3_hosts(clients: &[String], g: &Globals) -> Result<Vec<(String, Route)>> {
    let m = &g.multihost;
    let mut names = m.hosts.clone();
    if let Some(f) = &m.hosts_file {
        names.extend(hosts_file(f)?);
    }
    for c in clients {
        if Path::new(c).is_file() {
            names.extend(hosts_file(Path::new(c))?);
        } else {
            names.push(c.clone());
        }
    }
    if m.join.is_some() {
        if !names.is_empty() {
            bail!("s3 bench: --join cannot be combined with --client, --hosts or --hosts-file: the hosts of a run either join or are listed");
        }
        let n = m.join_count.context("s3 bench: --join needs --join-count=N: how many servers the launcher starts")?;
        let addr = m.join.as_deref().unwrap_or_default();
        net::parse_join(addr, &format!("--join={addr}")).map_err(|e| anyhow!(e))?;
        return Ok((0..n).map(|i| (format!("rank{i}"), Route::Join(None))).collect());
    }
    if m.join_count.is_some() || m.join_timeout_ms != argv::MultiHost::default().join_timeout_ms {
        bail!("s3 bench: --join-count and --join-timeout go with --join");
    }
    let mut hosts: Vec<(String, Route)> = Vec::new();
    for name in names {
        let route = Route::Net(net::parse_client(&name).map_err(|e| anyhow!("s3 bench: {e}"))?);
        if hosts.iter().any(|(n, _)| n == &name) {
            bail!("s3 bench: host '{name}' is listed twice");
        }
        hosts.push((name, route));
    }
    if hosts.is_empty() {
        bail!("s3 bench: no hosts (--client, --hosts, --hosts-file or --join)");
    }
    Ok(hosts)
}

/// `fiox s3 bench MODE [flags] --client=HOST[,PORT] ...` (or `--hosts`, `--hosts-file`,
/// `--join`): the bench on every host at once (each with `--concurrent` workers, under a
/// prefix of its own), started at one barrier, the hosts' reports merged as a job run's are
/// (per client, All clients, and per operation, the histograms bucket by bucket). The
/// coordinator serves `--live` and `--metrics` from the merged figures and, with
/// `--repeat-until`, runs the whole bench again until the merged figure is steady (a joined
/// server serves one run, so `--join` runs once). `args` is the command line after `s3`.
pub fn run_s3(args: &[String]) -> Result<ExitCode> {
    let (clients, switches, rest) = split_s3(args.get(1..).unwrap_or_default())?;
    let mut claim = crate::s3::remote::claim(&rest)?;
    let format = if claim.json() { "--output-format=json" } else { "--output-format=normal" };
    let g = argv::parse(std::iter::once(format.to_string()).chain(switches))?.globals;
    let hosts = s3_hosts(&clients, &g)?;
    if g.multihost.join.is_some() && claim.repeats() {
        bail!("s3 bench: --repeat-until cannot go with --join: a joined server serves one run; list the hosts (--client, --hosts)");
    }
    // The page's ports first: one taken stops the bench before the bucket is made.
    let page = claim.page()?;
    claim.bucket()?;
    let ran = (|| {
        let mut values = Vec::new();
        for run in 1.. {
            if let Some(p) = &page {
                p.begin(run);
            }
            let (mut report, code) = again(run, || s3_run(&g, &claim, &hosts, page.as_ref(), run))?;
            let complete =
                fiox_engine::sys::caught_signal() == 0 && report.hosts.iter().all(|h| h.report.is_some() && !h.partial);
            let reports = report.hosts.iter().filter_map(|h| h.report.as_ref());
            let (more, repeat) = claim.judge(&mut values, reports, complete)?;
            if more {
                continue;
            }
            report.repeat = repeat;
            let opts = crate::report::opts(&g);
            let f = crate::report::format(if claim.json() { Format::Json } else { Format::Normal });
            let mut out = std::io::stdout().lock();
            std::io::Write::write_all(&mut out, fiox_report::render_clients(f, &report, &opts).as_bytes())?;
            return Ok(crate::s3::remote::exit_status(code, report.repeat.as_ref()));
        }
        unreachable!("the runs end with a return")
    })();
    claim.release();
    ran
}

/// Run `run` of a repeated run: a host still closing the previous run's session refuses the
/// next as busy for a moment; runs after the first try again for up to 5 s.
fn again<T>(run: usize, mut once: impl FnMut() -> Result<T>) -> Result<T> {
    let t0 = Instant::now();
    loop {
        match once() {
            Err(e) if run > 1 && t0.elapsed() < Duration::from_secs(5) && format!("{e:#}").contains(": busy: run ") => {
                std::thread::sleep(Duration::from_millis(100));
            }
            r => return r,
        }
    }
}

/// One run of a multi-host bench: every host prepared, started at the barrier and watched to
/// its end; the merged report (not printed) and the exit status.
fn s3_run(
    g: &Globals,
    claim: &crate::s3::remote::Claim,
    hosts: &[(String, Route)],
    page: Option<&crate::s3::remote::Page>,
    run: usize,
) -> Result<(fiox_report::ClientsReport, ExitCode)> {
    let run_id = format!("{:x}-{:x}", wall_ns(), std::process::id());
    let mut specs = Vec::new();
    let mut parts = Parts { preps: Vec::new(), hints: Vec::new(), live_at: None };
    for (i, (name, route)) in hosts.iter().enumerate() {
        let argv: Vec<String> = std::iter::once("s3".to_string()).chain(claim.host_args(i)).collect();
        parts.hints.push(Vec::new());
        parts.preps.push(Prepare {
            run_id: run_id.clone(),
            host_index: i as u32,
            n_hosts: hosts.len() as u32,
            host_name: name.clone(),
            argv: argv.clone(),
            interval_ms: 1000,
            heartbeat_ms: heartbeat(g).as_millis() as u64,
            host_timeout_ms: g.multihost.host_timeout_ms,
            ..Prepare::default()
        });
        specs.push(HostSpec { name: name.clone(), route: route.clone(), argv, files: Vec::new() });
    }
    let transport = Transport::new(g)?;
    if g.multihost.join.is_some() {
        await_joiners(g, &mut specs, &transport)?;
        for (p, s) in parts.preps.iter_mut().zip(&specs) {
            p.host_name = s.name.clone();
        }
    }
    let mut c = Coordinator::connect(g, specs, parts, &transport, &run_id, Output::new(g)?)?;
    // A repeated bench's hosts say their header lines once.
    c.echo = run == 1;
    if let Some(page) = page {
        c.watchers.push(Box::new(observe::S3Page::new(page)));
    }
    while c.phase != Phase::Done {
        c.step()?;
    }
    c.end(|_| Ok(()))
}

/// Every host's part, checked here and ready to send.
#[derive(Clone)]
struct Parts {
    preps: Vec<Prepare>,
    /// What the status line needs to know of each host's jobs.
    hints: Vec<Vec<super::eta::JobHint>>,
    /// The first `live_listen` of any host's jobs: the coordinator serves the live page.
    live_at: Option<std::net::SocketAddr>,
}

/// How often heartbeats go to each host: a quarter of `--host-timeout`, within 50 ms to 1 s.
fn heartbeat(g: &Globals) -> Duration {
    (Duration::from_millis(g.multihost.host_timeout_ms) / 4).clamp(Duration::from_millis(50), Duration::from_secs(1))
}

/// Every host's part checked here, all errors together, before any connection.
fn check_all(specs: &[HostSpec], g: &Globals, run_id: &str) -> Result<Parts> {
    let mut errors = Vec::new();
    let mut parts = Parts { preps: Vec::new(), hints: Vec::new(), live_at: None };
    for (i, s) in specs.iter().enumerate() {
        match check_locally(s, g) {
            Ok((files, env, live, h)) => {
                parts.live_at = parts.live_at.or(live);
                parts.hints.push(h);
                parts.preps.push(Prepare {
                    run_id: run_id.to_string(),
                    host_index: i as u32,
                    n_hosts: specs.len() as u32,
                    host_name: s.name.clone(),
                    argv: s.argv.clone(),
                    files,
                    env,
                    remote_config: g.multihost.remote_config.clone(),
                    interval_ms: g.status_interval.unwrap_or(1000).clamp(100, 1000),
                    heartbeat_ms: heartbeat(g).as_millis() as u64,
                    host_timeout_ms: g.multihost.host_timeout_ms,
                })
            }
            Err(e) => errors.push(format!("host {}: {e:#}", s.name)),
        }
    }
    if !errors.is_empty() {
        if g.multihost.join.is_some() {
            // Joining hosts share one command line: its errors once.
            errors.truncate(1);
        }
        bail!("{}", errors.join("\nfiox: "));
    }
    Ok(parts)
}

/// Where the coordinator's run is:
///
/// ```text
/// Prepare ──(every host prepared, or lost)──► Probe(0..=8) ──(start sent)──► Run ──(no host live)──► Done
///    └── a host failed to prepare, or none is left: the run ends, no host started
/// ```
#[derive(PartialEq, Clone, Copy)]
enum Phase {
    /// The hosts are connected and sent their job; each answers Prepared or PrepareFailed.
    Prepare,
    /// Round `n` of the clock probes went out (from 0: none yet).
    Probe(u32),
    /// The start was sent; interval reports and heartbeats come until every host is done or
    /// lost.
    Run,
    /// Every host ended: the final report is what is left.
    Done,
}

/// A multi-host run after the hosts were checked (steps 2 to 5 of the module comment): each
/// [`step`](Coordinator::step) takes one event (a host connected, sent a message, or was lost)
/// or waits 50 ms for one, loses hosts that went silent, and moves the [`Phase`] on;
/// [`finish`](Coordinator::finish) writes the report.
struct Coordinator<'a> {
    g: &'a Globals,
    phase: Phase,
    fleet: Fleet,
    events: mpsc::Receiver<Event>,
    /// The connected hosts, for the heartbeat thread.
    heartbeats: Arc<Mutex<Vec<Sender>>>,
    out: Arc<Output>,
    /// Whether the hosts' probe, header and layout lines are printed (a repeated run's later
    /// runs leave them out: they were said by the first).
    echo: bool,
    watchers: Vec<Box<dyn RunObserver<Fleet> + 'a>>,
    host_timeout: Duration,
    /// When the last round of clock probes went out.
    probe_sent: Instant,
    /// The hosts were told to stop (a host lost under `--on-host-failure=abort`, or a
    /// signal): each has until then for its final report.
    stop_deadline: Option<Instant>,
}

impl<'a> Coordinator<'a> {
    /// Serves the live page, opens the output, and connects every host on a thread of its
    /// own (greeted and sent its job there), with heartbeats to each once connected.
    fn connect(
        g: &'a Globals,
        specs: Vec<HostSpec>,
        parts: Parts,
        tr: &Transport,
        run_id: &str,
        out: Arc<Output>,
    ) -> Result<Self> {
        let live = LivePage::serve(parts.live_at, &specs)?;
        runner_stop_on_signals();
        let (etx, events) = mpsc::channel();
        let hosts = specs.iter().map(|_| Host { last_seen: mono_ns(), ..Host::default() }).collect();
        for (i, (s, p)) in specs.iter().zip(parts.preps).enumerate() {
            let (route, tr, etx, run_id) = (s.route.clone(), tr.clone(), etx.clone(), run_id.to_string());
            std::thread::spawn(move || open(i, route, tr, p, run_id, etx));
        }
        let heartbeats = send_heartbeats(heartbeat(g));
        Ok(Coordinator {
            g,
            phase: Phase::Prepare,
            fleet: Fleet { specs, hosts, started: None, first_final: None },
            events,
            heartbeats,
            watchers: observe::watchers(g, live, &out, parts.hints),
            out,
            echo: true,
            host_timeout: Duration::from_millis(g.multihost.host_timeout_ms),
            probe_sent: Instant::now(),
            stop_deadline: None,
        })
    }

    /// One pass: an event (or 50 ms without one), liveness, then the phase's step.
    fn step(&mut self) -> Result<()> {
        let ev = self.events.recv_timeout(Duration::from_millis(50));
        let now = mono_ns();
        if let Ok(ev) = ev {
            self.on_event(ev, now)?;
        }
        self.lose_silent(now);
        let interrupted = fiox_engine::sys::caught_signal() != 0;
        match self.phase {
            Phase::Prepare => self.prepare(interrupted),
            Phase::Probe(round) => {
                self.probe(round);
                Ok(())
            }
            Phase::Run => self.watch(interrupted),
            Phase::Done => Ok(()),
        }
    }

    fn on_event(&mut self, ev: Event, now: u64) -> Result<()> {
        match ev {
            Event::Ready { idx, tx, closer, proto, version, facts, kind } => {
                let h = &mut self.fleet.hosts[idx];
                h.transport = kind;
                h.tx = Some(tx.clone());
                h.closer = Some(closer);
                h.proto = proto;
                h.fiox_version = version;
                h.facts = facts;
                h.last_seen = now;
                if let Ok(mut l) = self.heartbeats.lock() {
                    l.push(tx);
                }
            }
            Event::Lost { idx, why } => {
                let h = &self.fleet.hosts[idx];
                if h.exit.is_none() {
                    let why = if h.tx.is_none() { why } else { format!("lost: {why}") };
                    self.fleet.fail(idx, why);
                }
            }
            Event::Msg { idx, msg, at } => self.on_msg(idx, msg, at)?,
        }
        Ok(())
    }

    /// A host's message, received at `at` (the coordinator's clock).
    fn on_msg(&mut self, idx: usize, msg: Msg, at: u64) -> Result<()> {
        let h = &mut self.fleet.hosts[idx];
        h.last_seen = at;
        match msg {
            Msg::Heartbeat { .. } => {}
            Msg::Prepared { header, .. } => {
                h.prepared = true;
                h.header = header;
            }
            Msg::PrepareFailed { errors } => h.prepare_errors = errors,
            Msg::ClockReply { t0, t1, t2, wall_ns: wall, .. } => clock_reply(h, [t0, t1, t2, at], wall),
            Msg::Started { host_mono_ns, late } => {
                h.started_coord_ns = Some(host_mono_ns as i64 - h.offset);
                h.late = late;
            }
            Msg::Interval { report, .. } => {
                h.series.push(totals(&report));
                h.interval = Some(*report);
            }
            Msg::Text { level, line } => {
                // Output lines (fio's layout lines) belong to the normal output, as in a local
                // run, which prints none with the other formats; diagnostics go to standard
                // error.
                let name = &self.fleet.specs[idx].name;
                if level != TextLevel::Output {
                    eprint!("{}", whole_lines(&mut h.err_text, &line, name));
                } else if self.echo && self.g.formats.contains(&Format::Normal) {
                    self.out.write(whole_lines(&mut h.out_text, &line, name).as_bytes())?;
                }
            }
            Msg::Final { report } => {
                h.series.push(totals(&report));
                h.final_report = Some(*report);
                self.fleet.first_final.get_or_insert(idx);
            }
            Msg::Done { exit, error } => {
                h.exit = Some(exit);
                if let Some(e) = error {
                    h.error = Some(e);
                }
                if let Some(c) = &h.closer {
                    c.close();
                }
            }
            Msg::Error { msg, .. } => self.fleet.fail(idx, format!("server error: {msg}")),
            other => self.fleet.fail(idx, format!("unexpected {} from the server", other.name())),
        }
        Ok(())
    }

    /// Liveness: a connected host silent for `--host-timeout` is lost.
    fn lose_silent(&mut self, now: u64) {
        let timeout = self.host_timeout;
        for i in self.fleet.live() {
            let h = &self.fleet.hosts[i];
            let silent = now.saturating_sub(h.last_seen);
            if h.tx.is_some() && silent > timeout.as_nanos() as u64 {
                let why =
                    format!("no message for {:.1} s (--host-timeout={}ms)", silent as f64 / 1e9, timeout.as_millis());
                self.fleet.fail(i, why);
            }
        }
    }

    /// Prepare: once every host is prepared or lost, either the run goes on (with the hosts
    /// that are ready, unless `--on-host-failure=abort`) or nothing starts anywhere.
    fn prepare(&mut self, interrupted: bool) -> Result<()> {
        let pending = self.fleet.hosts.iter().any(|h| h.live() && !h.prepared && h.prepare_errors.is_empty());
        if interrupted {
            bail!("interrupted before the start; no host ran anything");
        }
        if pending {
            return Ok(());
        }
        self.stop_unless_ready()?;
        if self.echo && self.g.formats.contains(&Format::Normal) {
            // fio's probe lines, then each host's job header, before the run.
            let mut head = String::new();
            for (h, s) in self.fleet.named().filter(|(h, _)| h.prepared) {
                head.push_str(&probe_line(&h.facts, &h.fiox_version, h.proto));
                head.push('\n');
                for l in h.header.lines() {
                    head.push_str(&format!("<{}> {l}\n", s.name));
                }
            }
            self.out.write(head.as_bytes())?;
            self.out.flush()?;
        }
        self.phase = Phase::Probe(0);
        self.probe_sent = Instant::now() - Duration::from_secs(1);
        Ok(())
    }

    /// Ends the run before anything started when a host failed to prepare, or when a host is
    /// unreachable and none may be missed (`--on-host-failure=abort`, or none left); else says
    /// which hosts the run goes without.
    fn stop_unless_ready(&mut self) -> Result<()> {
        let mut errs: Vec<String> = Vec::new();
        for (h, s) in self.fleet.named() {
            errs.extend(h.prepare_errors.iter().map(|e| format!("host {}: {e}", s.name)));
        }
        let unreachable: Vec<String> = self
            .fleet
            .named()
            .filter(|(h, _)| !h.prepared && h.prepare_errors.is_empty())
            .map(|(h, s)| format!("host {}: {}", s.name, h.error.as_deref().unwrap_or("not ready")))
            .collect();
        let n = self.fleet.hosts.len();
        if !errs.is_empty()
            || (!unreachable.is_empty() && (self.g.multihost.abort_on_host_failure || unreachable.len() == n))
        {
            for h in &self.fleet.hosts {
                if let Some(tx) = &h.tx {
                    let _ = tx.send(&Msg::Stop { reason: "another host failed to prepare".into() });
                }
                if let Some(c) = &h.closer {
                    c.close();
                }
            }
            errs.extend(unreachable);
            // One host: its own line says it all.
            let tail = if n > 1 { "\nfiox: no host started" } else { "" };
            bail!("{}{tail}", errs.join("\nfiox: "));
        }
        for line in &unreachable {
            eprintln!("fiox: {line}");
        }
        for h in self.fleet.hosts.iter_mut().filter(|h| !h.prepared) {
            h.announced = true;
        }
        Ok(())
    }

    /// Probe: the next round of clock probes once every live host answered the last (or
    /// `--host-timeout` passed), and after the last round the start.
    fn probe(&mut self, round: u32) {
        const ROUNDS: u32 = 8;
        let live = self.fleet.live();
        let answered = live.iter().all(|&i| self.fleet.hosts[i].probes_answered >= round);
        if !answered && self.probe_sent.elapsed() < self.host_timeout {
            return;
        }
        if round < ROUNDS {
            let t0 = mono_ns();
            for &i in &live {
                if let Some(tx) = &self.fleet.hosts[i].tx {
                    let _ = tx.send(&Msg::ClockProbe { seq: round, t0 });
                }
            }
            self.probe_sent = Instant::now();
            self.phase = Phase::Probe(round + 1);
            return;
        }
        self.start(&live);
    }

    /// The barrier: one start time for every live host, in each one's clock, far enough ahead
    /// for the slowest link (at least 50 ms).
    fn start(&mut self, live: &[usize]) {
        let hosts = &self.fleet.hosts;
        let max_rtt = live.iter().filter_map(|&i| hosts[i].rtt).max().unwrap_or(0);
        let lead = (10 * max_rtt).max(50_000_000);
        let t = mono_ns() + lead;
        for &i in live {
            let h = &hosts[i];
            if let Some(tx) = &h.tx {
                let at = (t as i64 + h.offset).max(0) as u64;
                let _ = tx.send(&Msg::Start { at_host_ns: at });
            }
        }
        self.fleet.started = Some(Instant::now() + Duration::from_nanos(lead));
        self.phase = Phase::Run;
        // The run is synchronised on CLOCK_MONOTONIC; a wall clock far off only makes that
        // host's timestamps disagree with the others', so it is said, not refused.
        for &i in live {
            let off = self.fleet.hosts[i].wall_offset;
            if off.unsigned_abs() >= 1_000_000_000 {
                eprintln!(
                    "fiox: warning: host {}: its wall clock is {:+.1} s off the coordinator's (the start is synchronised on CLOCK_MONOTONIC; timestamps in its report are its own)",
                    self.fleet.specs[i].name,
                    off as f64 / 1e9
                );
            }
        }
    }

    /// Run: stops the hosts when one is lost under `--on-host-failure=abort` or on a signal,
    /// ends when no host is live, and hands the watchers the hosts' latest figures.
    fn watch(&mut self, interrupted: bool) -> Result<()> {
        if self.g.multihost.abort_on_host_failure && self.fleet.hosts.iter().any(|h| h.failed_at_s.is_some()) {
            self.stop("another host was lost (--on-host-failure=abort)");
        }
        if interrupted {
            self.stop("the coordinator was interrupted");
        }
        if self.stop_deadline.is_some_and(|d| Instant::now() > d) {
            for i in self.fleet.live() {
                self.fleet.fail(i, "no final report within 5 s of the stop".into());
            }
        }
        if self.fleet.live().is_empty() {
            self.phase = Phase::Done;
            return Ok(());
        }
        for w in self.watchers.iter().filter(|w| w.every().is_some()) {
            w.on_interval(&self.fleet);
        }
        Ok(self.out.check()?)
    }

    /// Tells every live host to stop (once), giving each 5 s for its final report.
    fn stop(&mut self, reason: &str) {
        if self.stop_deadline.is_some() {
            return;
        }
        for i in self.fleet.live() {
            if let Some(tx) = &self.fleet.hosts[i].tx {
                let _ = tx.send(&Msg::Stop { reason: reason.into() });
            }
        }
        self.stop_deadline = Some(Instant::now() + Duration::from_secs(5));
    }

    /// The end: the watchers' last words, every host's report and the merge, the failures
    /// not yet said, and the exit status (1 if a host was lost, else the hosts' failed-job
    /// counts; 128 after a signal).
    fn finish(self) -> Result<ExitCode> {
        let (out, g) = (self.out.clone(), self.g);
        let opts = crate::report::opts(g);
        let print = |report: &fiox_report::ClientsReport| -> Result<()> {
            for f in crate::report::print_order(&g.formats) {
                out.write(fiox_report::render_clients(crate::report::format(f), report, &opts).as_bytes())?;
            }
            Ok(out.flush()?)
        };
        Ok(self.end(print)?.1)
    }

    /// The end: the watchers' last words, every host's report and the merge (handed to
    /// `print`), the failures not yet said, and the exit status.
    fn end(
        self,
        print: impl FnOnce(&fiox_report::ClientsReport) -> Result<()>,
    ) -> Result<(fiox_report::ClientsReport, ExitCode)> {
        for w in &self.watchers {
            w.on_end(&self.fleet)?;
        }
        let mut report = self.fleet.report(false);
        report.first_done = self.fleet.first_done();
        print(&report)?;
        for (h, s) in self.fleet.named() {
            if h.failed_at_s.is_some() && !h.announced {
                eprintln!("fiox: host {}: {}", s.name, h.error.as_deref().unwrap_or("failed"));
            }
        }
        let hosts = &self.fleet.hosts;
        let code = if fiox_engine::sys::caught_signal() != 0 {
            ExitCode::from(128)
        } else if hosts.iter().any(|h| h.failed_at_s.is_some() || h.final_report.is_none()) {
            ExitCode::from(1)
        } else {
            let failed: u32 = hosts.iter().map(|h| h.exit.unwrap_or(1) as u32).sum();
            ExitCode::from(failed.min(255) as u8)
        };
        Ok((report, code))
    }
}

/// A clock probe's answer: `t` is the probe's send time, the host's receive and reply times,
/// and the answer's arrival (`t0, t1, t2, at`); `wall` the host's wall clock at `t2`. The
/// probe with the shortest round trip gives the host's offset, within half that round trip.
fn clock_reply(h: &mut Host, t: [u64; 4], wall: u64) {
    let [t0, t1, t2, at] = t;
    h.probes_answered += 1;
    let rtt = at.saturating_sub(t0).saturating_sub(t2.saturating_sub(t1));
    if h.rtt.is_none_or(|r| rtt < r) {
        h.rtt = Some(rtt);
        h.offset = ((t1 as i128 - t0 as i128 + t2 as i128 - at as i128) / 2) as i64;
        // The host's wall clock at t2, against ours at the same moment.
        let ours_at_t2 = wall_ns() as i128 - (at as i128 - (t2 as i128 - h.offset as i128));
        h.wall_offset = (wall as i128 - ours_at_t2) as i64;
    }
}

/// Heartbeats every `every` to each host in the list returned, from a thread of their own.
fn send_heartbeats(every: Duration) -> Arc<Mutex<Vec<Sender>>> {
    let senders: Arc<Mutex<Vec<Sender>>> = Arc::new(Mutex::new(Vec::new()));
    let list = senders.clone();
    std::thread::spawn(move || {
        let mut seq = 0;
        loop {
            std::thread::sleep(every);
            seq += 1;
            let targets = list.lock().map(|l| l.clone()).unwrap_or_default();
            for s in targets {
                let _ = s.send(&Msg::Heartbeat { seq, mono_ns: mono_ns() });
            }
        }
    });
    senders
}

/// Ctrl-C and SIGTERM stop the hosts' jobs (a Stop to each) rather than the coordinator.
fn runner_stop_on_signals() {
    static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    fiox_engine::sys::stop_on_signals(&STOP);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    /// fio's split: before the first --client for every host, after it for that host, in
    /// both spellings of the switch.
    #[test]
    fn command_line_is_split_at_each_client() {
        let (common, clients) = segments(&v(&[
            "--output-format=json",
            "--bs=8k",
            "--client=h1",
            "a.fio",
            "-client",
            "h2,9000",
            "b.fio",
            "--section=x",
        ]));
        assert_eq!(common, v(&["--output-format=json", "--bs=8k"]));
        assert_eq!(clients, vec![("h1".into(), v(&["a.fio"])), ("h2,9000".into(), v(&["b.fio", "--section=x"]))]);
    }

    #[test]
    fn job_file_variables_are_sent() {
        std::env::set_var("FIOX_MH_TEST_VAR", "/tmp/x");
        let vars = env_of("filename=${FIOX_MH_TEST_VAR}\nsize=${FIOX_MH_UNSET_VAR}\nbs=${FIOX_MH_TEST_VAR}");
        assert_eq!(vars, vec![("FIOX_MH_TEST_VAR".to_string(), "/tmp/x".to_string())]);
    }
}
