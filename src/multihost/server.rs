//! `fiox --server`: waits for a coordinator, checks and plans the job it sends with the same
//! parser and planner as a local run, starts it at the coordinator's barrier, runs it with the
//! ordinary runner, and streams interval reports and the final one back.
//!
//! One run at a time: a second coordinator gets a Reject naming the first. A coordinator that
//! goes silent for `host_timeout` (or whose connection ends) stops the jobs; the server then
//! returns to waiting. Commands (`exec_prerun`, `exec_postrun`, the exec engine) run only with
//! `--allow-exec`.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{anyhow, Context, Result};
use fiox_multihost::handshake::{self, Sniff};
use fiox_multihost::msg::{self, Msg, Prepare, TextLevel};
use fiox_multihost::net::{self, Endpoint, Incoming, Listener};
use fiox_multihost::tls;
use fiox_multihost::transport::Duplex;
use fiox_options::argv::Globals;
use fiox_options::jobfile;

use super::{host_facts, mono_ns, wall_ns, Closer, Sender};
use crate::report::summary;
use crate::{plan, runner};

/// What the server allows and how patient it is, from its own command line.
#[derive(Clone)]
struct Policy {
    allow_exec: bool,
    /// Which paths jobs may open, `--readonly`, `--allow-destructive` (`super::policy`).
    rules: super::policy::Rules,
    /// TLS credentials (`--auth-key` or `--tls-ca`/`--tls-cert`/`--tls-key`): with them the
    /// server listens on any address and takes TLS clients; without, loopback and unix only.
    tls: Option<tls::ServerConfig>,
}

/// Who holds the server (`None`: idle).
type Owner = Arc<Mutex<Option<String>>>;

/// Where a daemonized server's session log goes: set in the detached child, whose standard
/// streams are /dev/null.
const SYSLOG_ENV: &str = "FIOX_SERVER_SYSLOG";

/// The server's log: each session with its peer's identity, refusals with their reasons. On
/// stderr, or under `--daemonize` to syslog (RFC 3164 datagrams, facility daemon, to the socket
/// the parent named: `/dev/log` unless `$FIOX_SYSLOG_SOCKET` names another).
fn log(line: &str) {
    if let Some(socket) = std::env::var_os(SYSLOG_ENV) {
        let msg = format!("<30>fiox[{}]: fiox server: {line}", std::process::id());
        if let Ok(s) = std::os::unix::net::UnixDatagram::unbound() {
            let _ = s.send_to(msg.as_bytes(), socket);
        }
        return;
    }
    let _ = writeln!(std::io::stderr().lock(), "fiox server: {line}");
}

/// `fiox --server[=...]`.
pub fn run(g: &Globals) -> Result<ExitCode> {
    let m = &g.multihost;
    let join = match m.server.as_deref().and_then(|a| a.strip_prefix("join:")) {
        Some(a) => Some(net::parse_join(a, &format!("--server=join:{a}")).map_err(|e| anyhow!(e))?),
        None => None,
    };
    let ep = match &join {
        Some(ep) => ep.clone(),
        None => net::parse_server(m.server.as_deref()).map_err(|e| anyhow!(e))?,
    };
    let secure = g.secure.clone().with_env(|v| std::env::var(v).ok());
    let opts =
        tls::TlsOpts { auth_key: secure.auth_key, ca: secure.tls_ca, cert: secure.tls_cert, key: secure.tls_key };
    // Under ssh or --rsh the launcher authenticated the user: credentials have no use there.
    let tls = if opts.is_empty() || ep == Endpoint::Stdio {
        None
    } else {
        Some(tls::ServerConfig::from_opts(&opts).map_err(|e| anyhow!("--server: {e}"))?)
    };
    let cwd = std::env::current_dir().context("--server: no working directory")?;
    let rules = super::policy::Rules::new(&m.allow_path, g.readonly, m.allow_destructive, ep == Endpoint::Stdio, &cwd)?;
    let policy = Policy { allow_exec: m.allow_exec, rules, tls };
    runner::STOP.store(false, Ordering::Relaxed);
    fiox_engine::sys::stop_on_signals(&runner::STOP);
    let owner: Owner = Arc::new(Mutex::new(None));
    if join.is_some() {
        if m.daemonize.is_some() {
            anyhow::bail!("--daemonize and --server=join: exclude each other: a launcher runs the joining server");
        }
        return join_run(&ep, Duration::from_millis(m.connect_timeout_ms), &policy, &owner);
    }
    if ep == Endpoint::Stdio {
        // One session on the standard streams (under ssh or --rsh), then exit.
        let mut d = net::stdio_duplex();
        // sshd says who connected; the user is the one the server runs as.
        if let Ok(c) = std::env::var("SSH_CONNECTION") {
            let from = c.split_whitespace().next().unwrap_or("?").to_string();
            d.peer = format!("ssh from {from}");
            d.identity = Some(format!("ssh user {}", super::coordinator::user()));
        }
        if let Err(e) = session(d, &policy, &owner, &host_facts().hostname) {
            log(&format!("stdio: {e:#}"));
            return Ok(ExitCode::from(1));
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(pidfile) = &m.daemonize {
        return daemonize(pidfile, &ep, policy.tls.is_some());
    }
    let listener =
        Listener::bind(&ep, policy.tls.is_some()).with_context(|| format!("--server: cannot listen on {ep}"))?;
    // SIGINT or SIGTERM: a run in progress stops (its coordinator gets the partial report),
    // then the server exits; the accept below may not notice a signal another thread took.
    {
        let (owner, socket) = (owner.clone(), if let Endpoint::Unix(p) = &ep { Some(p.clone()) } else { None });
        std::thread::spawn(move || {
            while fiox_engine::sys::caught_signal() == 0 {
                std::thread::sleep(Duration::from_millis(100));
            }
            let give_up = std::time::Instant::now() + Duration::from_secs(5);
            while owner.lock().map(|o| o.is_some()).unwrap_or(false) && std::time::Instant::now() < give_up {
                std::thread::sleep(Duration::from_millis(50));
            }
            if let Some(p) = socket {
                let _ = std::fs::remove_file(p);
            }
            std::process::exit(0);
        });
    }
    if let Some(t) = &policy.tls {
        log(&format!("listening on {} with TLS ({})", listener.local(), t.describe()));
    }
    loop {
        let incoming = match listener.accept() {
            Ok(i) => i,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(anyhow!("--server: accept on {}: {e}", listener.local())),
        };
        let (policy, owner) = (policy.clone(), owner.clone());
        std::thread::spawn(move || {
            if let Err(e) = connection(incoming, &policy, &owner) {
                log(&format!("{e:#}"));
            }
        });
    }
}

/// The launcher's rank for this process: Slurm's, Open MPI's, then PMI's (MPICH, Intel MPI);
/// `None` when no launcher set one.
fn launcher_rank() -> Result<(Option<u32>, String)> {
    for var in ["SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"] {
        if let Ok(v) = std::env::var(var) {
            let rank = v.trim().parse::<u32>().map_err(|_| anyhow!("{var}={v}: not a rank (0, 1, 2, ...)"))?;
            return Ok((Some(rank), var.to_string()));
        }
    }
    Ok((None, String::new()))
}

/// `--server=join:HOST:PORT` (launcher mode): dials the coordinator's `--join` listener, says
/// its rank, then serves that one run as a standing server would, and exits.
fn join_run(ep: &Endpoint, within: Duration, policy: &Policy, owner: &Owner) -> Result<ExitCode> {
    let (rank, rank_from) = launcher_rank()?;
    let (mut d, local) = net::join_dial(ep, within, policy.tls.as_ref())
        .with_context(|| format!("--server=join:{}", ep.to_string().replacen(',', ":", 1)))?;
    msg::send(&mut d.writer, &Msg::Join { rank, rank_from }).with_context(|| format!("joining {ep}"))?;
    let who = match rank {
        Some(r) => format!("rank {r}"),
        None => "no rank (arrival order)".into(),
    };
    log(&format!("joined {ep} ({who})"));
    if let Err(e) = session(d, policy, owner, &local.to_string()) {
        // The coordinator closes a join it will not use (a duplicate rank, a missing server, a
        // job error): it says why, here the session just ends.
        log(&format!("{ep}: no run: {e:#}"));
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// `--daemonize=PIDFILE`: the server again as a detached child (its own session, standard
/// streams on /dev/null), its PID in PIDFILE. Refused when PIDFILE names a live process, as
/// fio does. The listening address is checked here first, so a bad one fails in the foreground.
fn daemonize(pidfile: &Path, ep: &Endpoint, secured: bool) -> Result<ExitCode> {
    if let Ok(text) = std::fs::read_to_string(pidfile) {
        if let Ok(pid) = text.trim().parse::<u32>() {
            if fiox_engine::sys::send_signal(pid, 0).is_ok() {
                anyhow::bail!("--daemonize: {} names process {pid}, which is running", pidfile.display());
            }
        }
    }
    drop(Listener::bind(ep, secured).with_context(|| format!("--server: cannot listen on {ep}"))?);
    let args: Vec<String> =
        std::env::args().skip(1).filter(|a| !a.trim_start_matches('-').starts_with("daemonize")).collect();
    // The child's stderr is /dev/null: its session log goes to syslog when there is one.
    let socket = std::env::var_os("FIOX_SYSLOG_SOCKET").unwrap_or_else(|| "/dev/log".into());
    if !Path::new(&socket).exists() {
        log(&format!(
            "no syslog socket at {}: the daemon's session log is discarded (set FIOX_SYSLOG_SOCKET)",
            Path::new(&socket).display()
        ));
    }
    use std::os::unix::process::CommandExt;
    let child = std::process::Command::new(std::env::current_exe()?)
        .args(&args)
        .env(SYSLOG_ENV, &socket)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .context("--daemonize: cannot start the server")?;
    std::fs::write(pidfile, format!("{}\n", child.id()))
        .with_context(|| format!("--daemonize: cannot write {}", pidfile.display()))?;
    Ok(ExitCode::SUCCESS)
}

/// One accepted connection: recognises a fio client (answered in fio's framing), a TLS client
/// or a plain fiox coordinator on TCP, authenticates, then runs a session.
fn connection(incoming: Incoming, policy: &Policy, owner: &Owner) -> Result<()> {
    // `$clientuid`: the address this server was reached at (its hostname on a unix socket).
    let uid = match &incoming {
        Incoming::Tcp(s, _) => s.local_addr().map(|a| a.ip().to_string()).unwrap_or_default(),
        Incoming::Unix(_) => host_facts().hostname,
    };
    let mut is_tls = false;
    if let Incoming::Tcp(s, addr) = &incoming {
        s.set_read_timeout(Some(Duration::from_secs(10)))?;
        let started = std::time::Instant::now();
        let mut buf = [0u8; handshake::fio::HEADER];
        is_tls = loop {
            let n = s.peek(&mut buf).with_context(|| format!("{addr}: no handshake"))?;
            if n == 0 {
                return Ok(());
            }
            match handshake::sniff(&buf[..n]) {
                Sniff::Fiox => break false,
                Sniff::NeedMore if started.elapsed() < Duration::from_secs(10) => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Sniff::NeedMore => return Err(anyhow!("{addr}: sent {n} bytes and then nothing")),
                Sniff::Fio { version } => {
                    let mut w: &std::net::TcpStream = s;
                    let text = "this is a fiox server, which does not speak fio's unauthenticated client/server protocol; run the job with fiox --client instead";
                    let _ = w.write_all(&handshake::fio::refusal(version, text));
                    // Let the client read the answer and close first (it writes after a
                    // STOP, and a socket closed under it would kill it with SIGPIPE).
                    s.set_read_timeout(Some(Duration::from_secs(2)))?;
                    let mut r: &std::net::TcpStream = s;
                    let _ = std::io::copy(&mut r, &mut std::io::sink());
                    return Err(anyhow!(
                        "{addr}: a fio client (protocol version {version}) was told this is a fiox server"
                    ));
                }
                Sniff::Tls => break true,
                Sniff::Other => return Err(anyhow!("{addr}: not a fiox coordinator (unknown first bytes)")),
            }
        };
        s.set_read_timeout(None)?;
    }
    let d = net::accept_secure(incoming, is_tls, policy.tls.as_ref())?;
    session(d, policy, owner, &uid)
}

/// What the session's reader thread hands over.
enum Event {
    /// A message and when it arrived (server's CLOCK_MONOTONIC).
    Msg(Msg, u64),
    Closed(String),
}

/// Releases the server when a session ends, however it ends.
struct Release<'a>(&'a Owner);

impl Drop for Release<'_> {
    fn drop(&mut self) {
        if let Ok(mut o) = self.0.lock() {
            *o = None;
        }
    }
}

/// One coordinator's session: handshake, prepare, clock probes, the run, the reports.
fn session(d: Duplex, policy: &Policy, owner: &Owner, uid: &str) -> Result<()> {
    let Duplex { mut reader, writer, peer, identity, close } = d;
    let tx = Sender::new(writer);
    let closer = Closer::new(close);
    let who = format!("{peer} ({})", identity.as_deref().unwrap_or("unauthenticated"));
    handshake::expect_magic(&mut reader, 0).with_context(|| format!("{who}: handshake"))?;
    let (proto, hello) = {
        let mut w = tx.0.lock().map_err(|_| anyhow!("lock"))?;
        handshake::server_hello(&mut reader, &mut **w).with_context(|| format!("{who}: handshake"))?
    };
    let Msg::Hello { run_id, coordinator, .. } = hello else { unreachable!("server_hello returns a hello") };
    let facts = host_facts();
    {
        let mut o = owner.lock().map_err(|_| anyhow!("owner lock poisoned"))?;
        if let Some(busy) = o.as_ref() {
            let (lo, hi) = handshake::proto_range();
            let reason = format!("busy: {busy}");
            let mut w = tx.0.lock().map_err(|_| anyhow!("lock"))?;
            let _ = handshake::send_first(
                &mut **w,
                &Msg::Reject {
                    reason: reason.clone(),
                    proto_min: lo,
                    proto_max: hi,
                    fiox_version: env!("CARGO_PKG_VERSION").into(),
                },
            );
            closer.close();
            return Err(anyhow!("{who}: refused ({reason})"));
        }
        *o = Some(format!(
            "run {run_id} from {coordinator} ({peer}) since {}",
            fiox_engine::sys::ctime((wall_ns() / 1_000_000_000) as i64)
        ));
    }
    let _release = Release(owner);
    log(&format!("{who}: session for run {run_id} from {coordinator}"));
    {
        let mut w = tx.0.lock().map_err(|_| anyhow!("lock"))?;
        handshake::send_first(
            &mut **w,
            &Msg::Welcome { proto, fiox_version: env!("CARGO_PKG_VERSION").into(), host: facts, features: Vec::new() },
        )?;
    }
    // The reader: every frame refreshes the coordinator's liveness; Stop and a closed
    // connection stop the jobs at once.
    let last_seen = Arc::new(AtomicU64::new(mono_ns()));
    let (etx, erx) = mpsc::channel();
    let running = Arc::new(AtomicBool::new(false));
    {
        let (last_seen, running) = (last_seen.clone(), running.clone());
        std::thread::spawn(move || loop {
            match msg::recv(&mut reader) {
                Ok(Some(m)) => {
                    let now = mono_ns();
                    last_seen.store(now, Ordering::Relaxed);
                    match m {
                        Msg::Heartbeat { .. } => {}
                        Msg::Stop { .. } => {
                            runner::STOP.store(true, Ordering::Relaxed);
                            let _ = etx.send(Event::Msg(m, now));
                        }
                        m => {
                            if etx.send(Event::Msg(m, now)).is_err() {
                                return;
                            }
                        }
                    }
                }
                Ok(None) | Err(_) => {
                    if running.load(Ordering::Relaxed) {
                        runner::STOP.store(true, Ordering::Relaxed);
                    }
                    let _ = etx.send(Event::Closed("the coordinator closed the connection".into()));
                    return;
                }
            }
        });
    }
    let recv = |timeout: Duration| -> Result<Event> {
        erx.recv_timeout(timeout).map_err(|_| anyhow!("{who}: the coordinator sent nothing for {timeout:?}"))
    };
    // The first message is the job; the Prepare says how patient to be afterwards.
    let prep = match recv(Duration::from_secs(60))? {
        Event::Msg(Msg::Prepare(p), _) => p,
        Event::Msg(other, _) => return Err(anyhow!("{who}: expected prepare, got {}", other.name())),
        Event::Closed(why) => return Err(anyhow!("{who}: {why}")),
    };
    let host_timeout = Duration::from_millis(prep.host_timeout_ms.max(100));
    let heartbeat = Duration::from_millis(prep.heartbeat_ms.clamp(50, 5000));
    let done = Arc::new(AtomicBool::new(false));
    // Heartbeats out, and the watchdog: a coordinator silent for host_timeout is gone, and its
    // jobs stop (vdbench's rule; fio's server runs on).
    {
        let (tx, done_hb) = (tx.clone(), done.clone());
        std::thread::spawn(move || {
            let mut seq = 0;
            while !done_hb.load(Ordering::Relaxed) {
                seq += 1;
                if tx.send(&Msg::Heartbeat { seq, mono_ns: mono_ns() }).is_err() {
                    return;
                }
                std::thread::sleep(heartbeat);
            }
        });
        let (last_seen, done, closer, running, who) =
            (last_seen.clone(), done.clone(), closer.clone(), running.clone(), who.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                let silent = mono_ns().saturating_sub(last_seen.load(Ordering::Relaxed));
                if silent > host_timeout.as_nanos() as u64 {
                    log(&format!("{who}: coordinator silent for {} ms; stopping its jobs", silent / 1_000_000));
                    if running.load(Ordering::Relaxed) {
                        runner::STOP.store(true, Ordering::Relaxed);
                    }
                    closer.close();
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        });
    }
    let result = serve(&prep, policy, uid, &tx, &erx, host_timeout, &running);
    done.store(true, Ordering::Relaxed);
    closer.close();
    match &result {
        Ok(()) => log(&format!("{who}: run {run_id} done")),
        Err(e) => log(&format!("{who}: run {run_id}: {e:#}")),
    }
    Ok(())
}

/// Prepare (the job planned, its first phase's files laid out), clock probes and the run,
/// answering the coordinator in order.
fn serve(
    prep: &Prepare,
    policy: &Policy,
    uid: &str,
    tx: &Sender,
    erx: &mpsc::Receiver<Event>,
    host_timeout: Duration,
    running: &Arc<AtomicBool>,
) -> Result<()> {
    runner::STOP.store(false, Ordering::Relaxed);
    if prep.argv.first().map(String::as_str) == Some("s3") {
        return serve_s3(prep, tx, erx, host_timeout, running);
    }
    let (plan, header, laid_out) = match prepare(prep, policy, uid).and_then(|(plan, header)| {
        // The files are laid out now, before the barrier, so that a host with files to lay
        // out starts with the others (heartbeats keep going meanwhile). Its "Laying out" lines
        // follow the job header, as in a local run.
        let lines = Arc::new(Mutex::new(String::new()));
        let sink = lines.clone();
        let notice: runner::Diag = Arc::new(move |s: &str| {
            if let Ok(mut l) = sink.lock() {
                l.push_str(s);
            }
        });
        let laid_out = runner::prepare(&plan, &notice)?;
        let header = header + &lines.lock().map(|l| l.clone()).unwrap_or_default();
        Ok((plan, header, laid_out))
    }) {
        Ok(p) => p,
        Err(e) => {
            tx.send(&Msg::PrepareFailed { errors: vec![format!("{e:#}")] })?;
            return Err(e.context("refused at prepare"));
        }
    };
    tx.send(&Msg::Prepared {
        jobs: plan.jobs.len() as u32,
        groups: plan.workers.iter().map(|w| w.groupid).max().map_or(0, |g| g + 1),
        warnings: plan.warnings.clone(),
        header,
    })?;
    loop {
        let ev = erx.recv_timeout(host_timeout * 2).map_err(|_| anyhow!("no start from the coordinator"))?;
        match ev {
            Event::Msg(Msg::ClockProbe { seq, t0 }, t1) => {
                tx.send(&Msg::ClockReply { seq, t0, t1, t2: mono_ns(), wall_ns: wall_ns() })?;
            }
            Event::Msg(Msg::Start { at_host_ns }, _) => {
                running.store(true, Ordering::Relaxed);
                let r = run_at(&plan, laid_out, prep, tx, at_host_ns);
                running.store(false, Ordering::Relaxed);
                return r;
            }
            Event::Msg(Msg::Stop { .. }, _) => return Ok(()),
            Event::Msg(other, _) => return Err(anyhow!("unexpected {} before start", other.name())),
            Event::Closed(why) => return Err(anyhow!("{why}")),
        }
    }
}

/// A share of `fiox s3 bench` (`--client`): its objects uploaded before the barrier, the
/// bench at the barrier, its report (a job per operation) as the final one. Its objects are
/// removed however the session ends.
fn serve_s3(
    prep: &Prepare,
    tx: &Sender,
    erx: &mpsc::Receiver<Event>,
    host_timeout: Duration,
    running: &Arc<AtomicBool>,
) -> Result<()> {
    let share = match crate::s3::remote::prepare(&prep.argv[1..]) {
        Ok(s) => s,
        Err(e) => {
            tx.send(&Msg::PrepareFailed { errors: vec![format!("{e:#}")] })?;
            return Err(e.context("refused at prepare"));
        }
    };
    tx.send(&Msg::Prepared { jobs: 1, groups: 1, warnings: Vec::new(), header: String::new() })?;
    loop {
        match erx.recv_timeout(host_timeout * 2).map_err(|_| anyhow!("no start from the coordinator"))? {
            Event::Msg(Msg::ClockProbe { seq, t0 }, t1) => {
                tx.send(&Msg::ClockReply { seq, t0, t1, t2: mono_ns(), wall_ns: wall_ns() })?;
            }
            Event::Msg(Msg::Start { at_host_ns }, _) => {
                running.store(true, Ordering::Relaxed);
                wait_until(at_host_ns);
                let started = mono_ns();
                tx.send(&Msg::Started { host_mono_ns: started, late: started > at_host_ns + 1_000_000 })?;
                let k = std::sync::atomic::AtomicU64::new(0);
                let tick = |report: fiox_report::RunReport| {
                    let n = k.fetch_add(1, Ordering::Relaxed) + 1;
                    let _ = tx.send(&Msg::Interval { k: n, host_mono_ns: mono_ns(), report: Box::new(report) });
                };
                let r = share.run(&runner::STOP, &tick);
                running.store(false, Ordering::Relaxed);
                match r {
                    Ok(report) => {
                        let failed = report.jobs.iter().any(|j| j.error != 0);
                        tx.send(&Msg::Final { report: Box::new(report) })?;
                        // The objects go before Done: a coordinator that runs the bench again
                        // (--repeat-until) finds this host's share cleaned up and free.
                        drop(share);
                        tx.send(&Msg::Done { exit: failed as u8, error: None })?;
                    }
                    Err(e) => tx.send(&Msg::Done { exit: 1, error: Some(format!("{e:#}")) })?,
                }
                return Ok(());
            }
            Event::Msg(Msg::Stop { .. }, _) => return Ok(()),
            Event::Msg(other, _) => return Err(anyhow!("unexpected {} before start", other.name())),
            Event::Closed(why) => return Err(anyhow!("{why}")),
        }
    }
}

/// Waits for the barrier: sleeps to 200 µs before it, then spins (a stop ends the wait).
fn wait_until(at: u64) {
    loop {
        let now = mono_ns();
        if runner::STOP.load(Ordering::Relaxed) {
            return;
        }
        if now + 200_000 >= at {
            while mono_ns() < at {
                std::hint::spin_loop();
            }
            return;
        }
        std::thread::sleep(Duration::from_nanos((at - now - 200_000).min(10_000_000)));
    }
}

/// Checks and plans the job as a local run would, and refuses what this server does not allow.
/// Returns the plan and the lines a local run prints before starting.
fn prepare(p: &Prepare, policy: &Policy, uid: &str) -> Result<(plan::Plan, String)> {
    let cl = fiox_options::argv::parse(p.argv.clone())?;
    let vars = p.env.clone();
    let env = |v: &str| vars.iter().find(|(k, _)| k == v).map(|(_, val)| val.clone()).or_else(|| std::env::var(v).ok());
    let mut files = Vec::new();
    for f in &p.files {
        files.push(jobfile::parse_text(&f.text, Path::new(&f.name), &env)?);
    }
    if let Some(path) = &p.remote_config {
        files.push(jobfile::read(Path::new(path), &env).with_context(|| format!("--remote-config={path}"))?);
    }
    let ctx = crate::plan::machine_ctx();
    if let Some(prof) = fiox_options::profile::requested(&cl)? {
        files.push(fiox_options::profile::sections(prof, &cl, &ctx)?);
    }
    if files.is_empty() && cl.sections.is_empty() {
        anyhow::bail!("no job for this host");
    }
    let set = fiox_options::assemble(&cl, &files, &ctx)?;
    if !policy.allow_exec {
        for job in &set.jobs {
            let s = &job.spec;
            let what = if s.exec_prerun.is_some() {
                Some("exec_prerun")
            } else if s.exec_postrun.is_some() {
                Some("exec_postrun")
            } else if s.ioengine == "exec" {
                Some("ioengine=exec")
            } else {
                None
            };
            if let Some(what) = what {
                anyhow::bail!(
                    "job '{}': {what} runs a command, which this server refuses (start it with --allow-exec to allow)",
                    s.name
                );
            }
        }
    }
    policy.rules.precheck(&set)?;
    let plan = plan::build_for_client(set, cl.globals.readonly, cl.globals.max_jobs, uid)?;
    policy.rules.check(&plan)?;
    let notes: String = plan.notes.iter().chain(&plan.warnings).map(|l| format!("{l}\n")).collect();
    let header = notes + &crate::report::header(&plan);
    Ok((plan, header))
}

/// Waits for the barrier (sleeping to 200 µs before it, then spinning), runs the jobs with
/// interval reports streamed, and sends the final report.
fn run_at(plan: &plan::Plan, laid_out: runner::Prepared, prep: &Prepare, tx: &Sender, at: u64) -> Result<()> {
    wait_until(at);
    let started = mono_ns();
    tx.send(&Msg::Started { host_mono_ns: started, late: started > at + 1_000_000 })?;
    let text = |level: TextLevel| -> runner::Diag {
        let tx = tx.clone();
        Arc::new(move |s: &str| {
            let _ = tx.send(&Msg::Text { level, line: s.to_string() });
        })
    };
    let k = AtomicU64::new(0);
    let tick = |partial: &[runner::worker::WorkerResult]| {
        let report = summary::build(plan, partial, Vec::new(), plan::clock::epoch_ms());
        let n = k.fetch_add(1, Ordering::Relaxed) + 1;
        let _ = tx.send(&Msg::Interval { k: n, host_mono_ns: mono_ns(), report: Box::new(report) });
    };
    let interval = runner::Interval { every: Duration::from_millis(prep.interval_ms.max(100)), report: &tick };
    let outcome = if runner::STOP.load(Ordering::Relaxed) {
        None
    } else {
        Some(runner::run_prepared(
            plan,
            laid_out,
            text(TextLevel::Warning),
            text(TextLevel::Output),
            None,
            Some(interval),
        ))
    };
    match outcome {
        Some(Ok(outcome)) => {
            let mut report = summary::build(plan, &outcome.workers, outcome.disks, plan::clock::epoch_ms());
            report.fiox = Some(crate::report::manifest::build(plan, &outcome.workers, &report));
            let failed = outcome.workers.iter().filter(|r| r.error.is_some()).count();
            tx.send(&Msg::Final { report: Box::new(report) })?;
            tx.send(&Msg::Done { exit: failed.min(255) as u8, error: None })?;
        }
        Some(Err(e)) => {
            tx.send(&Msg::Done { exit: 1, error: Some(format!("{e:#}")) })?;
        }
        None => {
            tx.send(&Msg::Done { exit: 1, error: Some("stopped before the start".into()) })?;
        }
    }
    Ok(())
}
