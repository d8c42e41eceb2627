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

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use fiox_multihost::handshake;
use fiox_multihost::msg::{self, HostFacts, JobText, Msg, Prepare, TextLevel};
use fiox_multihost::net::{self, Endpoint};
use fiox_multihost::{ssh, tls};
use fiox_options::argv::{self, Format, Globals};
use fiox_options::jobfile;
use fiox_report::{ClientsReport, HostEntry, RunReport};

use super::{mono_ns, probe_line, wall_ns, Closer, Sender};

/// One host of the run, as the command line makes it.
struct HostSpec {
    /// As the user wrote it.
    name: String,
    route: Route,
    argv: Vec<String>,
    files: Vec<PathBuf>,
}

/// How a host is reached.
#[derive(Clone)]
enum Route {
    /// A standing server: loopback TCP or a unix socket in plain, anything else over TLS.
    Net(Endpoint),
    /// `ssh://[user@]host[:port]`: `fiox --server=stdio` started there by ssh.
    Ssh(ssh::SshTarget),
    /// `--rsh=CMD`: `fiox --server=stdio` started by CMD with the host's name for `{host}`.
    Rsh(String),
    /// `--join`: a server started by a launcher that dialled in (`None` until it has).
    Join(Option<Joined>),
}

/// A server that joined: its rank and address, and its connection until `open` takes it.
#[derive(Clone)]
struct Joined {
    addr: std::net::IpAddr,
    duplex: Arc<Mutex<Option<fiox_multihost::transport::Duplex>>>,
}

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

/// What the coordinator knows about a host as the run goes.
#[derive(Default)]
struct Host {
    /// How it was reached (`tcp`, `unix`, `tls`, `ssh`, `rsh`), once connected.
    transport: &'static str,
    tx: Option<Sender>,
    closer: Option<Closer>,
    facts: HostFacts,
    fiox_version: String,
    proto: u32,
    header: String,
    prepared: bool,
    prepare_errors: Vec<String>,
    last_seen: u64,
    /// Best clock probe: round trip, offset (host − coordinator), wall-clock offset.
    rtt: Option<u64>,
    offset: i64,
    wall_offset: i64,
    probes_answered: u32,
    started_coord_ns: Option<i64>,
    late: bool,
    interval: Option<RunReport>,
    final_report: Option<RunReport>,
    /// What each report said so far (runtime ms, then bytes and I/Os per direction, summed
    /// over its jobs): the first-done aggregate interpolates in it.
    series: Vec<(u64, [u64; 3], [u64; 3])>,
    exit: Option<u8>,
    error: Option<String>,
    failed_at_s: Option<f64>,
    /// Its failure was already printed (before the start).
    announced: bool,
    /// Text received without its end of line yet (a run prints some lines in pieces), for
    /// the normal output and for standard error.
    out_text: String,
    err_text: String,
}

/// Appends `piece` to `buf` and returns the whole lines it completes, each prefixed with the
/// host as fio prefixes a host's text.
fn whole_lines(buf: &mut String, piece: &str, host: &str) -> String {
    buf.push_str(piece);
    let Some(end) = buf.rfind('\n') else { return String::new() };
    let done: String = buf.drain(..=end).collect();
    done.lines().map(|l| format!("<{host}> {l}\n")).collect()
}

impl Host {
    fn live(&self) -> bool {
        self.failed_at_s.is_none() && self.error.is_none() && self.exit.is_none()
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

/// Where results go: standard output or `--output`.
fn sink(g: &Globals) -> Result<Box<dyn Write>> {
    Ok(match &g.output {
        Some(p) => Box::new(
            std::fs::File::create(p).with_context(|| format!("cannot create --output file '{}'", p.display()))?,
        ),
        None => Box::new(std::io::stdout()),
    })
}

/// The coordinator: `args` is the whole command line, `g` its switches.
pub fn run(args: &[String], g: &Globals) -> Result<ExitCode> {
    let mut specs = host_specs(args, g)?;
    let transport = Transport::new(g)?;
    // Every host's part checked here, all errors together, before any connection.
    let mut errors = Vec::new();
    let mut preps = Vec::new();
    let mut live_at = None;
    let mut hints = Vec::new();
    let run_id = format!("{:x}-{:x}", wall_ns(), std::process::id());
    let host_timeout = Duration::from_millis(g.multihost.host_timeout_ms);
    let heartbeat = (host_timeout / 4).clamp(Duration::from_millis(50), Duration::from_secs(1));
    for (i, s) in specs.iter().enumerate() {
        match check_locally(s, g) {
            Ok((files, env, live, h)) => {
                live_at = live_at.or(live);
                hints.push(h);
                preps.push(Prepare {
                    run_id: run_id.clone(),
                    host_index: i as u32,
                    n_hosts: specs.len() as u32,
                    host_name: s.name.clone(),
                    argv: s.argv.clone(),
                    files,
                    env,
                    remote_config: g.multihost.remote_config.clone(),
                    interval_ms: g.status_interval.unwrap_or(1000).clamp(100, 1000),
                    heartbeat_ms: heartbeat.as_millis() as u64,
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
    if g.multihost.join.is_some() {
        await_joiners(g, &mut specs, &transport)?;
        for (p, s) in preps.iter_mut().zip(&specs) {
            p.host_name = s.name.clone();
        }
    }
    // live_listen: the live page is the coordinator's, fed by the hosts' interval reports (a
    // series per host, and all of them), bound before anything connects.
    let mut live_page = match live_at {
        Some(addr) => {
            let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
            let feed = crate::serve::live::LiveFeed::new(format!("fiox on {}", names.join(", ")));
            crate::serve::http::serve(addr, "live_listen", vec![feed.site()])?;
            feed.begin(format!("{} hosts", specs.len()));
            Some((feed, crate::serve::live::record::SeriesRecorder::default()))
        }
        None => None,
    };
    let mut next_live: Option<std::time::Instant> = None;
    let mut out = sink(g)?;
    let normal = g.formats.contains(&Format::Normal);
    runner_stop_on_signals();
    let (etx, erx) = mpsc::channel();
    let mut hosts: Vec<Host> = specs.iter().map(|_| Host { last_seen: mono_ns(), ..Host::default() }).collect();
    for (i, (s, p)) in specs.iter().zip(preps).enumerate() {
        let (route, tr, etx, run_id) = (s.route.clone(), transport.clone(), etx.clone(), run_id.clone());
        std::thread::spawn(move || open(i, route, tr, p, run_id, etx));
    }
    drop(etx);
    let abort = g.multihost.abort_on_host_failure;
    let mut started_at: Option<std::time::Instant> = None;
    // Heartbeats to every connected host, from their own thread.
    let senders: Arc<Mutex<Vec<Sender>>> = Arc::new(Mutex::new(Vec::new()));
    {
        let senders = senders.clone();
        std::thread::spawn(move || {
            let mut seq = 0;
            loop {
                std::thread::sleep(heartbeat);
                seq += 1;
                let list = senders.lock().map(|l| l.clone()).unwrap_or_default();
                for s in list {
                    let _ = s.send(&Msg::Heartbeat { seq, mono_ns: mono_ns() });
                }
            }
        });
    }
    let fail = |h: &mut Host, why: String, started: Option<std::time::Instant>| {
        if h.failed_at_s.is_some() || h.exit.is_some() {
            return;
        }
        h.error = Some(why);
        h.failed_at_s = Some(started.map_or(0.0, |s| s.elapsed().as_secs_f64()));
        if let Some(c) = &h.closer {
            c.close();
        }
    };
    // Phase: prepared everywhere (or failed).
    #[derive(PartialEq, Clone, Copy)]
    enum Phase {
        Prepare,
        Probe(u32),
        Run,
    }
    let mut phase = Phase::Prepare;
    let mut probe_sent = std::time::Instant::now();
    let mut stop_sent = false;
    let mut stop_deadline: Option<std::time::Instant> = None;
    // --status-interval: the merged report so far, every interval, once the hosts are running.
    let status_every = g.status_interval.map(Duration::from_millis);
    let mut next_status: Option<std::time::Instant> = None;
    // The status line (--eta), every host's figures in one line, shown as a local run shows it.
    let eta_every = match g.eta {
        argv::Eta::Always => true,
        argv::Eta::Never => false,
        argv::Eta::Auto => normal && fiox_engine::sys::stdout_is_tty(),
    }
    .then(|| Duration::from_millis(g.eta_interval.or(g.eta_newline).unwrap_or(1000).max(100)));
    let mut eta_line = super::eta::MergedEta::default();
    let kb_base = hints.iter().flatten().next().map_or(1024, |h| h.kb_base);
    let mut next_eta: Option<std::time::Instant> = None;
    let mut eta_width = 0usize;
    // The first host to send its final report, for the first-done aggregate.
    let mut first_final: Option<usize> = None;
    loop {
        let ev = erx.recv_timeout(Duration::from_millis(50));
        let now = mono_ns();
        match ev {
            Ok(Event::Ready { idx, tx, closer, proto, version, facts, kind }) => {
                let h = &mut hosts[idx];
                h.transport = kind;
                h.tx = Some(tx.clone());
                h.closer = Some(closer);
                h.proto = proto;
                h.fiox_version = version;
                h.facts = facts;
                h.last_seen = now;
                if let Ok(mut l) = senders.lock() {
                    l.push(tx);
                }
            }
            Ok(Event::Lost { idx, why }) => {
                let h = &mut hosts[idx];
                if h.exit.is_none() {
                    let why = if h.tx.is_none() { why } else { format!("lost: {why}") };
                    fail(h, why, started_at);
                }
            }
            Ok(Event::Msg { idx, msg, at }) => {
                let h = &mut hosts[idx];
                h.last_seen = at;
                match msg {
                    Msg::Heartbeat { .. } => {}
                    Msg::Prepared { header, .. } => {
                        h.prepared = true;
                        h.header = header;
                    }
                    Msg::PrepareFailed { errors } => h.prepare_errors = errors,
                    Msg::ClockReply { t0, t1, t2, wall_ns: wall, .. } => {
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
                    Msg::Started { host_mono_ns, late } => {
                        h.started_coord_ns = Some(host_mono_ns as i64 - h.offset);
                        h.late = late;
                    }
                    Msg::Interval { report, .. } => {
                        h.series.push(totals(&report));
                        h.interval = Some(*report);
                    }
                    Msg::Text { level, line } => {
                        // Output lines (fio's layout lines) belong to the normal output, as in
                        // a local run, which prints none with the other formats; diagnostics
                        // go to standard error.
                        if level != TextLevel::Output {
                            eprint!("{}", whole_lines(&mut h.err_text, &line, &specs[idx].name));
                        } else if normal {
                            out.write_all(whole_lines(&mut h.out_text, &line, &specs[idx].name).as_bytes())?;
                        }
                    }
                    Msg::Final { report } => {
                        h.series.push(totals(&report));
                        h.final_report = Some(*report);
                        first_final.get_or_insert(idx);
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
                    Msg::Error { msg, .. } => fail(h, format!("server error: {msg}"), started_at),
                    other => fail(h, format!("unexpected {} from the server", other.name()), started_at),
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {}
        }

        // Liveness: a connected host silent for host_timeout is lost.
        for h in hosts.iter_mut().filter(|h| h.tx.is_some() && h.live()) {
            let silent = now.saturating_sub(h.last_seen);
            if silent > host_timeout.as_nanos() as u64 {
                let why = format!(
                    "no message for {:.1} s (--host-timeout={}ms)",
                    silent as f64 / 1e9,
                    host_timeout.as_millis()
                );
                fail(h, why, started_at);
            }
        }
        let live: Vec<usize> = (0..hosts.len()).filter(|&i| hosts[i].live()).collect();
        let interrupted = fiox_engine::sys::caught_signal() != 0;
        match phase {
            Phase::Prepare => {
                let pending = hosts.iter().any(|h| h.live() && !h.prepared && h.prepare_errors.is_empty());
                if interrupted {
                    bail!("interrupted before the start; no host ran anything");
                }
                if pending {
                    continue;
                }
                let mut errs: Vec<String> = Vec::new();
                for (h, s) in hosts.iter().zip(&specs) {
                    for e in &h.prepare_errors {
                        errs.push(format!("host {}: {e}", s.name));
                    }
                }
                let unreachable: Vec<String> = hosts
                    .iter()
                    .zip(&specs)
                    .filter(|(h, _)| !h.prepared && h.prepare_errors.is_empty())
                    .map(|(h, s)| format!("host {}: {}", s.name, h.error.as_deref().unwrap_or("not ready")))
                    .collect();
                if !errs.is_empty() || (!unreachable.is_empty() && (abort || unreachable.len() == hosts.len())) {
                    for h in &hosts {
                        if let Some(tx) = &h.tx {
                            let _ = tx.send(&Msg::Stop { reason: "another host failed to prepare".into() });
                        }
                        if let Some(c) = &h.closer {
                            c.close();
                        }
                    }
                    errs.extend(unreachable);
                    // One host: its own line says it all.
                    let tail = if hosts.len() > 1 { "\nfiox: no host started" } else { "" };
                    bail!("{}{tail}", errs.join("\nfiox: "));
                }
                for line in &unreachable {
                    eprintln!("fiox: {line}");
                }
                for h in hosts.iter_mut().filter(|h| !h.prepared) {
                    h.announced = true;
                }
                if normal {
                    // fio's probe lines, then each host's job header, before the run.
                    let mut head = String::new();
                    for (h, s) in hosts.iter().zip(&specs).filter(|(h, _)| h.prepared) {
                        head.push_str(&probe_line(&h.facts, &h.fiox_version, h.proto));
                        head.push('\n');
                        for l in h.header.lines() {
                            head.push_str(&format!("<{}> {l}\n", s.name));
                        }
                    }
                    out.write_all(head.as_bytes())?;
                    out.flush()?;
                }
                phase = Phase::Probe(0);
                probe_sent = std::time::Instant::now() - Duration::from_secs(1);
            }
            Phase::Probe(round) => {
                const ROUNDS: u32 = 8;
                let answered = live.iter().all(|&i| hosts[i].probes_answered >= round);
                if !answered && probe_sent.elapsed() < host_timeout {
                    continue;
                }
                if round < ROUNDS {
                    let t0 = mono_ns();
                    for &i in &live {
                        if let Some(tx) = &hosts[i].tx {
                            let _ = tx.send(&Msg::ClockProbe { seq: round, t0 });
                        }
                    }
                    probe_sent = std::time::Instant::now();
                    phase = Phase::Probe(round + 1);
                    continue;
                }
                // The barrier: far enough ahead for the slowest link, at least 50 ms.
                let max_rtt = live.iter().filter_map(|&i| hosts[i].rtt).max().unwrap_or(0);
                let lead = (10 * max_rtt).max(50_000_000);
                let t = mono_ns() + lead;
                for &i in &live {
                    let h = &hosts[i];
                    if let Some(tx) = &h.tx {
                        let at = (t as i64 + h.offset).max(0) as u64;
                        let _ = tx.send(&Msg::Start { at_host_ns: at });
                    }
                }
                started_at = Some(std::time::Instant::now() + Duration::from_nanos(lead));
                phase = Phase::Run;
                // The run is synchronised on CLOCK_MONOTONIC; a wall clock far off only makes
                // that host's timestamps disagree with the others', so it is said, not refused.
                for &i in &live {
                    let off = hosts[i].wall_offset;
                    if off.unsigned_abs() >= 1_000_000_000 {
                        eprintln!(
                            "fiox: warning: host {}: its wall clock is {:+.1} s off the coordinator's (the start is synchronised on CLOCK_MONOTONIC; timestamps in its report are its own)",
                            specs[i].name,
                            off as f64 / 1e9
                        );
                    }
                }
            }
            Phase::Run => {
                if abort && hosts.iter().any(|h| h.failed_at_s.is_some()) && !stop_sent {
                    stop_sent = true;
                    for &i in &live {
                        if let Some(tx) = &hosts[i].tx {
                            let _ = tx
                                .send(&Msg::Stop { reason: "another host was lost (--on-host-failure=abort)".into() });
                        }
                    }
                    stop_deadline = Some(std::time::Instant::now() + Duration::from_secs(5));
                }
                if interrupted && !stop_sent {
                    stop_sent = true;
                    for &i in &live {
                        if let Some(tx) = &hosts[i].tx {
                            let _ = tx.send(&Msg::Stop { reason: "the coordinator was interrupted".into() });
                        }
                    }
                    stop_deadline = Some(std::time::Instant::now() + Duration::from_secs(5));
                }
                if stop_deadline.is_some_and(|d| std::time::Instant::now() > d) {
                    for h in hosts.iter_mut().filter(|h| h.live()) {
                        fail(h, "no final report within 5 s of the stop".into(), started_at);
                    }
                }
                if hosts.iter().all(|h| !h.live()) {
                    break;
                }
                if let (Some((feed, rec)), Some(start)) = (live_page.as_mut(), started_at) {
                    // Half a second after the hosts report (they do each second from the start), so each
                    // tick sees every host's newest report.
                    let due = *next_live.get_or_insert(start + Duration::from_millis(1500));
                    if std::time::Instant::now() >= due {
                        next_live = Some(due + Duration::from_secs(1));
                        feed.push(crate::serve::live::Record::Interval(rec.interval(&live_series(&specs, &hosts))));
                    }
                }
                if let (Some(every), Some(start)) = (eta_every, started_at) {
                    let due = *next_eta.get_or_insert(start + every);
                    if std::time::Instant::now() >= due {
                        next_eta = Some(due + every);
                        let elapsed = std::time::Instant::now().saturating_duration_since(start).as_secs_f64();
                        let (line, running) = eta_line.line(&eta_views(&hints, &hosts), elapsed, false, kb_base);
                        // Once no job runs, the last line (after the loop) is the only one left.
                        if running > 0 {
                            print_eta(&line, g.eta_newline.is_some(), &mut eta_width, false);
                        }
                    }
                }
                if let (Some(every), Some(start)) = (status_every, started_at) {
                    let due = *next_status.get_or_insert(start + every);
                    if std::time::Instant::now() >= due && hosts.iter().any(|h| h.interval.is_some()) {
                        next_status = Some(due + every);
                        let report = build_report(&specs, &hosts, true);
                        // Interval reports in JSON are one line each (JSON lines), so a
                        // reader can take them as they come.
                        let opts = fiox_report::ReportOpts { json_lines: true, ..crate::report::opts(g) };
                        for f in crate::report::print_order(&g.formats) {
                            out.write_all(
                                fiox_report::render_clients(crate::report::format(f), &report, &opts).as_bytes(),
                            )?;
                        }
                        out.flush()?;
                    }
                }
            }
        }
    }
    if let (Some(_), Some(start)) = (eta_every, started_at) {
        if next_eta.is_some() {
            let elapsed = start.elapsed().as_secs_f64();
            let (line, _) = eta_line.line(&eta_views(&hints, &hosts), elapsed, true, kb_base);
            print_eta(&line, g.eta_newline.is_some(), &mut eta_width, true);
        }
    }
    let mut report = build_report(&specs, &hosts, false);
    report.first_done = first_final.and_then(|i| first_done(i, &specs, &hosts));
    if let Some((feed, rec)) = live_page.as_mut() {
        // The last interval (the hosts' final reports), then the run's state.
        feed.push(crate::serve::live::Record::End(rec.interval(&live_series(&specs, &hosts))));
        if let Some(h) = hosts.iter().zip(&specs).find(|(h, _)| h.failed_at_s.is_some() || h.final_report.is_none()) {
            feed.push(crate::serve::live::Record::Failed {
                why: format!("host {}: {}", h.1.name, h.0.error.as_deref().unwrap_or("no final report")),
            });
        }
    }
    let opts = crate::report::opts(g);
    for f in crate::report::print_order(&g.formats) {
        out.write_all(fiox_report::render_clients(crate::report::format(f), &report, &opts).as_bytes())?;
    }
    out.flush()?;
    for (h, s) in hosts.iter().zip(&specs) {
        if h.failed_at_s.is_some() && !h.announced {
            eprintln!("fiox: host {}: {}", s.name, h.error.as_deref().unwrap_or("failed"));
        }
    }
    if fiox_engine::sys::caught_signal() != 0 {
        return Ok(ExitCode::from(128));
    }
    if hosts.iter().any(|h| h.failed_at_s.is_some() || h.final_report.is_none()) {
        return Ok(ExitCode::from(1));
    }
    let failed: u32 = hosts.iter().map(|h| h.exit.unwrap_or(1) as u32).sum();
    Ok(ExitCode::from(failed.min(255) as u8))
}

/// What the status line sees of each host.
fn eta_views<'a>(hints: &'a [Vec<super::eta::JobHint>], hosts: &'a [Host]) -> Vec<super::eta::HostView<'a>> {
    hints
        .iter()
        .zip(hosts)
        .map(|(hints, h)| super::eta::HostView {
            hints,
            report: h.final_report.as_ref().or(h.interval.as_ref()),
            running: h.live() && h.final_report.is_none(),
        })
        .collect()
}

/// Prints the status line on standard output as a local run does: rewritten in place, or one
/// per line with `--eta-newline`; the last one ends its line.
fn print_eta(line: &str, newline: bool, width: &mut usize, last: bool) {
    let mut out = std::io::stdout().lock();
    if newline {
        let _ = writeln!(out, "{line}");
    } else {
        let pad = width.saturating_sub(line.len());
        let _ = write!(out, "\r{line}{}", " ".repeat(pad));
        *width = line.len();
        if last {
            let _ = writeln!(out);
        }
    }
    let _ = out.flush();
}

/// The longest runtime in a report's groups (ms): a host's runtime so far, or in the end.
fn report_runtime_ms(r: &RunReport) -> u64 {
    r.groups.iter().flat_map(|g| g.max_run.iter().copied()).max().unwrap_or(0)
}

/// A report's runtime and its jobs' bytes and I/Os per direction.
fn totals(r: &RunReport) -> (u64, [u64; 3], [u64; 3]) {
    let (mut bytes, mut ios) = ([0u64; 3], [0u64; 3]);
    for j in &r.jobs {
        for d in 0..3 {
            bytes[d] += j.ts.dirs[d].io_bytes;
            ios[d] += j.ts.dirs[d].total_ios;
        }
    }
    (report_runtime_ms(r), bytes, ios)
}

/// The aggregate until host `idx`, the first to finish, was done: every host's figures at
/// that host's runtime, interpolated between the two reports around it (a host that ended
/// or was lost before then counts with what it last reported).
fn first_done(idx: usize, specs: &[HostSpec], hosts: &[Host]) -> Option<fiox_report::FirstDone> {
    let t = hosts[idx].series.last()?.0;
    if t == 0 {
        return None;
    }
    let mut f = fiox_report::FirstDone { host: specs[idx].name.clone(), runtime_ms: t, ..Default::default() };
    for h in hosts {
        let mut before = (0u64, [0u64; 3], [0u64; 3]);
        let mut at = None;
        for p in &h.series {
            if p.0 >= t {
                at = Some(*p);
                break;
            }
            before = *p;
        }
        let (b, i) = match at {
            Some(p) if p.0 > before.0 => {
                let w = (t - before.0) as f64 / (p.0 - before.0) as f64;
                let mix = |x: [u64; 3], y: [u64; 3]| -> [u64; 3] {
                    std::array::from_fn(|d| x[d] + ((y[d].saturating_sub(x[d])) as f64 * w) as u64)
                };
                (mix(before.1, p.1), mix(before.2, p.2))
            }
            Some(p) => (p.1, p.2),
            None => (before.1, before.2),
        };
        for d in 0..3 {
            f.io_bytes[d] += b[d];
            f.ios[d] += i[d];
        }
    }
    for d in 0..3 {
        f.bw_bytes[d] = f.io_bytes[d] * 1000 / t;
        f.iops[d] = f.ios[d] * 1000 / t;
    }
    Some(f)
}

/// Ctrl-C and SIGTERM stop the hosts' jobs (a Stop to each) rather than the coordinator.
fn runner_stop_on_signals() {
    static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    fiox_engine::sys::stop_on_signals(&STOP);
}

/// The live page's series: each host's jobs as its latest report (final, else interval) has
/// them.
fn live_series<'a>(specs: &'a [HostSpec], hosts: &'a [Host]) -> Vec<(String, Vec<&'a fiox_stats::ThreadStat>)> {
    specs
        .iter()
        .zip(hosts)
        .map(|(s, h)| {
            let r = h.final_report.as_ref().or(h.interval.as_ref());
            (s.name.clone(), r.map(|r| r.jobs.iter().map(|j| &j.ts).collect()).unwrap_or_default())
        })
        .collect()
}

/// Every host's entry in host-list order, and the merge: at the end, or (`so_far`) during the
/// run from the hosts' latest interval reports, running hosts marked `running`.
fn build_report(specs: &[HostSpec], hosts: &[Host], so_far: bool) -> ClientsReport {
    let now_ms = crate::plan::clock::epoch_ms();
    let first_start = hosts.iter().filter_map(|h| h.started_coord_ns).min();
    let entries: Vec<HostEntry> = specs
        .iter()
        .zip(hosts)
        .map(|(s, h)| {
            let (hostname, port) = match &s.route {
                Route::Net(Endpoint::Tcp { host, port, .. }) => (host.clone(), *port),
                Route::Net(other) => (other.to_string(), 0),
                Route::Ssh(t) => (t.host.clone(), t.port.unwrap_or(22)),
                Route::Rsh(h) => (h.clone(), 0),
                Route::Join(j) => (j.as_ref().map(|j| j.addr.to_string()).unwrap_or_default(), 0),
            };
            let partial = h.final_report.is_none() && h.interval.is_some() && !(so_far && h.live());
            let report = h.final_report.clone().or_else(|| h.interval.clone());
            let runtime_ms = report
                .as_ref()
                .map_or(0, |r| r.groups.iter().flat_map(|g| g.max_run.iter().copied()).max().unwrap_or(0));
            HostEntry {
                name: s.name.clone(),
                hostname,
                port,
                probe: if h.fiox_version.is_empty() {
                    String::new()
                } else {
                    probe_line(&h.facts, &h.fiox_version, h.proto)
                },
                report,
                status: if so_far && h.live() {
                    "running".into()
                } else if h.failed_at_s.is_some() || h.final_report.is_none() {
                    "failed".into()
                } else {
                    "ok".into()
                },
                error: h.error.clone(),
                partial,
                failed_at_s: h.failed_at_s,
                transport: match (&s.route, h.transport) {
                    (_, k) if !k.is_empty() => k.into(),
                    (Route::Net(Endpoint::Unix(_)), _) => "unix".into(),
                    (Route::Net(_), _) => "tcp".into(),
                    (Route::Ssh(_), _) => "ssh".into(),
                    (Route::Rsh(_), _) => "rsh".into(),
                    (Route::Join(_), _) => "join".into(),
                },
                fiox_version: h.fiox_version.clone(),
                proto: h.proto,
                clock_offset_ns: h.offset,
                wallclock_offset_ns: h.wall_offset,
                rtt_ns: h.rtt.unwrap_or(0),
                start_ns: h.started_coord_ns.zip(first_start).map(|(s, f)| s - f),
                late_start: h.late,
                runtime_ms,
                // The host's own epoch ms, brought to the coordinator's wall clock.
                job_start_ms: h
                    .final_report
                    .as_ref()
                    .or(h.interval.as_ref())
                    .and_then(|r| r.jobs.iter().map(|j| j.job_start_ms).filter(|&ms| ms > 0).min())
                    .map(|ms| ms as i64 - h.wall_offset / 1_000_000),
            }
        })
        .collect();
    let starts: Vec<i64> = hosts.iter().filter_map(|h| h.started_coord_ns).collect();
    let skew =
        (starts.len() > 1).then(|| (starts.iter().max().unwrap_or(&0) - starts.iter().min().unwrap_or(&0)) as u64);
    let bound = hosts.iter().filter(|h| h.started_coord_ns.is_some()).filter_map(|h| h.rtt).max().unwrap_or(0);
    let time = fiox_engine::sys::ctime((now_ms / 1000) as i64);
    let with_data: Vec<&HostEntry> = entries.iter().filter(|e| e.report.is_some()).collect();
    let all = (entries.len() > 1 && !with_data.is_empty())
        .then(|| super::merge::all_clients(with_data.iter().filter_map(|e| e.report.as_ref()), &time, now_ms));
    let merged_groups = if with_data.is_empty() {
        Vec::new()
    } else {
        super::merge::per_group(with_data.iter().filter_map(|e| e.report.as_ref()), &time, now_ms)
    };
    let failed: Vec<&HostEntry> = entries.iter().filter(|e| e.status == "failed").collect();
    let degraded = (!failed.is_empty() && all.is_some()).then(|| {
        let ok = entries.len() - failed.len();
        let what: Vec<String> = failed
            .iter()
            .map(|e| {
                format!(
                    "{} failed at {:.1} s{}: {}",
                    e.name,
                    e.failed_at_s.unwrap_or(0.0),
                    if e.partial { " (partial figures kept)" } else { "" },
                    e.error.as_deref().unwrap_or("no final report")
                )
            })
            .collect();
        format!("{ok} of {} hosts complete; {}", entries.len(), what.join("; "))
    });
    ClientsReport {
        version: crate::VERSION_STRING.to_string(),
        timestamp: now_ms / 1000,
        timestamp_ms: now_ms,
        time,
        hosts: entries,
        all,
        merged_groups,
        degraded,
        start_skew_ns: skew,
        skew_bound_ns: bound,
        first_done: None,
    }
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
    fn text_pieces_become_prefixed_lines() {
        let mut buf = String::new();
        assert_eq!(whole_lines(&mut buf, "lay: Laying out (1 file / ", "h"), "");
        assert_eq!(whole_lines(&mut buf, "4MiB)\nnext", "h"), "<h> lay: Laying out (1 file / 4MiB)\n");
        assert_eq!(buf, "next");
    }

    /// First done: the finished host's own figures, and the other's interpolated between its
    /// reports around that time.
    #[test]
    fn first_done_interpolates_the_other_hosts() {
        let spec =
            |n: &str| HostSpec { name: n.into(), route: Route::Rsh(n.into()), argv: Vec::new(), files: Vec::new() };
        let specs = vec![spec("a"), spec("b")];
        let pt = |ms: u64, b: u64| (ms, [b, 0, 0], [b / 10, 0, 0]);
        let mut hosts = vec![Host::default(), Host::default()];
        hosts[0].series = vec![pt(500, 50), pt(1000, 100)];
        hosts[1].series = vec![pt(800, 40), pt(1600, 80)];
        let f = first_done(0, &specs, &hosts).unwrap();
        assert_eq!((f.host.as_str(), f.runtime_ms), ("a", 1000));
        assert_eq!((f.io_bytes[0], f.ios[0], f.bw_bytes[0], f.iops[0]), (150, 15, 150, 15));
    }

    #[test]
    fn job_file_variables_are_sent() {
        std::env::set_var("FIOX_MH_TEST_VAR", "/tmp/x");
        let vars = env_of("filename=${FIOX_MH_TEST_VAR}\nsize=${FIOX_MH_UNSET_VAR}\nbs=${FIOX_MH_TEST_VAR}");
        assert_eq!(vars, vec![("FIOX_MH_TEST_VAR".to_string(), "/tmp/x".to_string())]);
    }
}
