//! The ssh transport and `--rsh`: `fiox --server=stdio` started on the host by the system's
//! `ssh` (so the site's keys, agent, `known_hosts`, `ProxyJump` and `ControlMaster` apply, and
//! ssh has authenticated both ends before a byte of ours flows), or by any launcher that runs
//! a command with its standard streams connected (`ip netns exec NS`, `kubectl exec -i POD --`,
//! `srun`). The child's stdin and stdout are the [`Duplex`]; its stderr is kept (the last few
//! KiB) so that a failed launch reads as one line (`Permission denied (publickey)`,
//! `fiox: not found`) instead of an unexplained end of stream.
//!
//! The child runs in a process group of its own, so a Ctrl-C at the coordinator's terminal
//! reaches the coordinator alone, which can then stop the hosts in order. `close` kills the
//! child by PID (SIGKILL) and reaps it: ssh's connection drops, and the remote server reads
//! the end of its input. If the coordinator dies without closing, the pipe to the child
//! closes, ssh passes the end of input on, and the remote server sees it the same way.
//!
//! Remote shells may print banners before the command's output; the protocol's handshake
//! skips noise before its magic, so nothing is filtered here.

use std::io::{self, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::transport::Duplex;

/// A launch that cannot start, or a target that does not parse.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Error(pub String);

pub type Result<T> = std::result::Result<T, Error>;

/// How remote servers are started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchOpts {
    /// The ssh command with any options of the user's (`--ssh`, `FIOX_SSH`), as words;
    /// options given here win over fiox's defaults, since ssh keeps the first value it sees.
    pub ssh: Vec<String>,
    /// fiox's path on the hosts (`--fiox-path`).
    pub fiox_path: String,
    /// What the remote fiox is told.
    pub server_args: Vec<String>,
    /// ssh's `ConnectTimeout`.
    pub connect_timeout: Duration,
}

impl Default for LaunchOpts {
    fn default() -> Self {
        LaunchOpts {
            ssh: vec!["ssh".into()],
            fiox_path: "fiox".into(),
            server_args: vec!["--server=stdio".into()],
            connect_timeout: Duration::from_secs(5),
        }
    }
}

/// `ssh://[user@]host[:port]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshTarget {
    pub user: Option<String>,
    pub host: String,
    pub port: Option<u16>,
}

impl SshTarget {
    /// Parses `ssh://[user@]host[:port]`; an IPv6 address goes in brackets
    /// (`ssh://root@[2001:2::11]:22`).
    pub fn parse(s: &str) -> Result<SshTarget> {
        let bad = |why: &str| Error(format!("'{s}': {why}; the form is ssh://[user@]host[:port]"));
        let rest = s.strip_prefix("ssh://").ok_or_else(|| bad("not an ssh:// host"))?;
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        let (user, hostport) = match rest.rsplit_once('@') {
            Some((u, h)) if !u.is_empty() => (Some(u.to_string()), h),
            Some(_) => return Err(bad("empty user name")),
            None => (None, rest),
        };
        let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
            let (h, after) = v6.split_once(']').ok_or_else(|| bad("unclosed '['"))?;
            match after {
                "" => (h, None),
                p => (h, Some(p.strip_prefix(':').ok_or_else(|| bad("junk after ']'"))?)),
            }
        } else {
            match hostport.split_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (hostport, None),
            }
        };
        if host.is_empty() || host.starts_with('-') || host.contains(['/', ' ']) {
            return Err(bad("no valid host name"));
        }
        let port = port.map(|p| p.parse::<u16>().ok().filter(|&p| p > 0).ok_or_else(|| bad("bad port"))).transpose()?;
        Ok(SshTarget { user, host: host.to_string(), port })
    }

    /// The target as users write it.
    pub fn url(&self) -> String {
        let host = if self.host.contains(':') { format!("[{}]", self.host) } else { self.host.clone() };
        let user = self.user.as_deref().map(|u| format!("{u}@")).unwrap_or_default();
        let port = self.port.map(|p| format!(":{p}")).unwrap_or_default();
        format!("ssh://{user}{host}{port}")
    }
}

/// Starts `fiox --server=stdio` on `target` through ssh.
pub fn ssh(target: &SshTarget, o: &LaunchOpts) -> Result<Duplex> {
    let mut argv = o.ssh.clone();
    if argv.is_empty() {
        return Err(Error("--ssh: empty command".into()));
    }
    // After the user's options, since ssh keeps the first value of each: no prompts (a
    // password prompt would wait forever on a pipe), no terminal, no forwarding, a bounded
    // connect, and dead connections noticed by ssh itself too.
    for o in [
        "BatchMode=yes".to_string(),
        format!("ConnectTimeout={}", o.connect_timeout.as_secs().max(1)),
        "ServerAliveInterval=5".into(),
        "ServerAliveCountMax=3".into(),
        "LogLevel=ERROR".into(),
    ] {
        argv.extend(["-o".to_string(), o]);
    }
    argv.extend(["-T", "-x", "-a"].map(String::from));
    if let Some(p) = target.port {
        argv.extend(["-p".to_string(), p.to_string()]);
    }
    if let Some(u) = &target.user {
        argv.extend(["-l".to_string(), u.clone()]);
    }
    argv.extend(["--".to_string(), target.host.clone()]);
    // ssh hands the remote shell one string: quote each word for it.
    let remote: Vec<String> = std::iter::once(&o.fiox_path).chain(&o.server_args).map(|w| shell_quote(w)).collect();
    argv.push(remote.join(" "));
    let url = target.url();
    spawn(&argv, url.clone(), Some(format!("{url} (authenticated by ssh)")), Launcher::Ssh)
}

/// `--rsh=CMD`: starts `fiox --server=stdio` with CMD's words in front; `{host}` in CMD
/// stands for the host's name from the host list (`--rsh='ip netns exec {host}'`,
/// `--rsh='kubectl exec -i {host} --'`).
pub fn rsh(cmd: &str, host: &str, o: &LaunchOpts) -> Result<Duplex> {
    let words = split_words(cmd).map_err(|e| Error(format!("--rsh='{cmd}': {e}")))?;
    if words.is_empty() {
        return Err(Error("--rsh: empty command".into()));
    }
    let mut argv: Vec<String> = words.iter().map(|w| w.replace("{host}", host)).collect();
    argv.push(o.fiox_path.clone());
    argv.extend(o.server_args.iter().cloned());
    spawn(&argv, host.to_string(), Some(format!("{host} (started by {})", words[0])), Launcher::Other)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Launcher {
    Ssh,
    Other,
}

/// Runs `argv` with piped standard streams as a [`Duplex`].
fn spawn(argv: &[String], peer: String, identity: Option<String>, launcher: Launcher) -> Result<Duplex> {
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| {
            let hint = if launcher == Launcher::Ssh { " (is openssh-client installed?)" } else { "" };
            Error(format!("{peer}: cannot start {}: {e}{hint}", argv[0]))
        })?;
    let stdin = child.stdin.take().expect("piped");
    let stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let proc = Arc::new(Proc {
        child: Mutex::new(child),
        closed: AtomicBool::new(false),
        tail: Mutex::new(Vec::new()),
        stderr_done: AtomicBool::new(false),
        peer: peer.clone(),
        program: argv[0].clone(),
        launcher,
        reported: AtomicBool::new(false),
    });
    let p = proc.clone();
    std::thread::Builder::new()
        .name("fiox-launch-stderr".into())
        .spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut t = p.tail.lock().unwrap_or_else(|e| e.into_inner());
                t.extend_from_slice(&buf[..n]);
                let excess = t.len().saturating_sub(TAIL);
                t.drain(..excess);
            }
            p.stderr_done.store(true, Ordering::SeqCst);
        })
        .map_err(|e| Error(format!("{peer}: cannot start a thread: {e}")))?;
    let reader = ChildReader { out: stdout, proc: proc.clone() };
    let writer = ChildWriter { stdin, proc: proc.clone() };
    Ok(Duplex {
        reader: Box::new(reader),
        writer: Box::new(writer),
        peer,
        identity,
        close: Box::new(move || proc.close()),
    })
}

/// How much of the child's stderr is kept.
const TAIL: usize = 8 << 10;

struct Proc {
    child: Mutex<Child>,
    closed: AtomicBool,
    tail: Mutex<Vec<u8>>,
    stderr_done: AtomicBool,
    peer: String,
    program: String,
    launcher: Launcher,
    /// Whether the failure was already returned once (later reads see a plain end).
    reported: AtomicBool,
}

impl Proc {
    fn close(&self) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        let mut c = self.child.lock().unwrap_or_else(|e| e.into_inner());
        // By PID: the child alone, which is ssh (or the launcher); the remote side ends when
        // its connection or its input does.
        let _ = c.kill();
        let _ = c.wait();
    }

    /// The child's exit status, waiting up to `limit` for it.
    fn status(&self, limit: Duration) -> Option<ExitStatus> {
        let end = Instant::now() + limit;
        loop {
            if let Ok(Some(s)) = self.child.lock().unwrap_or_else(|e| e.into_inner()).try_wait() {
                return Some(s);
            }
            if Instant::now() >= end {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// What to tell the reader or writer when the stream ended: `None` for a clean end.
    fn failure(&self) -> Option<io::Error> {
        if self.closed.load(Ordering::SeqCst) || self.reported.load(Ordering::SeqCst) {
            return None;
        }
        let status = self.status(Duration::from_secs(3));
        // The child's last words arrive after its exit; give the stderr thread a moment.
        let end = Instant::now() + Duration::from_millis(500);
        while !self.stderr_done.load(Ordering::SeqCst) && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(5));
        }
        let line = self.last_line();
        let said = if line.is_empty() { String::new() } else { format!(": {line}") };
        let msg = match (status, status.and_then(|s| s.code())) {
            (Some(_), Some(0)) => return None,
            (Some(_), Some(255)) if self.launcher == Launcher::Ssh => format!("{}: ssh failed{said}", self.peer),
            (Some(_), Some(code)) => {
                format!("{}: the remote command ended with status {code}{said}", self.peer)
            }
            (Some(s), None) => {
                format!("{}: {} was killed by signal {}{said}", self.peer, self.program, s.signal().unwrap_or(0))
            }
            (None, _) => format!("{}: {} closed its output but is still running{said}", self.peer, self.program),
        };
        self.reported.store(true, Ordering::SeqCst);
        Some(io::Error::new(io::ErrorKind::ConnectionAborted, msg))
    }

    /// The last line of stderr that says something (ssh's warnings about known hosts skipped).
    fn last_line(&self) -> String {
        let t = self.tail.lock().unwrap_or_else(|e| e.into_inner());
        let text = String::from_utf8_lossy(&t);
        text.lines()
            .map(str::trim)
            .rfind(|l| !l.is_empty() && !l.starts_with("Warning: Permanently added"))
            .unwrap_or_default()
            .to_string()
    }
}

struct ChildReader {
    out: ChildStdout,
    proc: Arc<Proc>,
}

impl Read for ChildReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.out.read(buf) {
            Ok(0) if !buf.is_empty() => match self.proc.failure() {
                Some(e) => Err(e),
                None => Ok(0),
            },
            Err(_) if self.proc.closed.load(Ordering::SeqCst) => Ok(0),
            r => r,
        }
    }
}

struct ChildWriter {
    stdin: ChildStdin,
    proc: Arc<Proc>,
}

impl Write for ChildWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.stdin.write(buf).map_err(|e| self.explain(e))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.stdin.flush().map_err(|e| self.explain(e))
    }
}

impl ChildWriter {
    /// A write to a launcher that went away (EPIPE) says why it went.
    fn explain(&self, e: io::Error) -> io::Error {
        if e.kind() == io::ErrorKind::BrokenPipe {
            if let Some(f) = self.proc.failure() {
                return f;
            }
        }
        e
    }
}

/// Quotes a word for a POSIX shell (the remote login shell ssh hands the command to).
pub fn shell_quote(w: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
    if !w.is_empty() && w.chars().all(plain) {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

/// Splits a command line into words as a POSIX shell would, without expansions: white space
/// separates, '…' is literal, "…" allows \" \\ \$ \`, a backslash outside quotes escapes.
pub fn split_words(s: &str) -> std::result::Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => cur.push(c),
                        None => return Err("unclosed single quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => cur.push(c),
                            Some(c) => {
                                cur.push('\\');
                                cur.push(c);
                            }
                            None => return Err("unclosed double quote".into()),
                        },
                        Some(c) => cur.push(c),
                        None => return Err("unclosed double quote".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(c) => cur.push(c),
                    None => return Err("a backslash at the end".into()),
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets() {
        let t = SshTarget::parse("ssh://root@198.18.1.11:2222").unwrap();
        assert_eq!(t, SshTarget { user: Some("root".into()), host: "198.18.1.11".into(), port: Some(2222) });
        assert_eq!(t.url(), "ssh://root@198.18.1.11:2222");
        let t = SshTarget::parse("ssh://h1").unwrap();
        assert_eq!((t.user, t.port), (None, None));
        let t = SshTarget::parse("ssh://a@[2001:2::11]:22").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("2001:2::11", Some(22)));
        assert_eq!(t.url(), "ssh://a@[2001:2::11]:22");
        for bad in ["h1", "ssh://", "ssh://@h", "ssh://h:0", "ssh://h:x", "ssh://-oProxyCommand=x", "ssh://[::1"] {
            let e = SshTarget::parse(bad).unwrap_err().to_string();
            assert!(e.contains("ssh://[user@]host[:port]"), "{bad}: {e}");
        }
    }

    #[test]
    fn words_and_quoting() {
        assert_eq!(
            split_words(r#"kubectl exec -i 'pod a' -- "x \"y\"" a\ b"#).unwrap(),
            ["kubectl", "exec", "-i", "pod a", "--", "x \"y\"", "a b"]
        );
        assert!(split_words("a 'b").is_err());
        assert_eq!(split_words("  ").unwrap(), Vec::<String>::new());
        assert_eq!(shell_quote("/opt/fiox/bin/fiox"), "/opt/fiox/bin/fiox");
        assert_eq!(shell_quote("it's here"), r"'it'\''s here'");
        assert_eq!(shell_quote(""), "''");
    }

    /// A local launcher (`sh -c`) stands in for a remote one: bytes both ways, then close
    /// kills it.
    #[test]
    fn launcher_streams_and_close_kills() {
        let o = LaunchOpts { fiox_path: "cat".into(), server_args: vec![], ..Default::default() };
        let mut d = rsh("env", "h", &o).unwrap();
        d.writer.write_all(b"ping\n").unwrap();
        d.writer.flush().unwrap();
        let mut got = [0u8; 5];
        d.reader.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"ping\n");
        (d.close)();
        assert_eq!(d.reader.read(&mut got).unwrap(), 0);
    }

    #[test]
    fn a_failed_launch_reads_as_its_last_words() {
        let o =
            LaunchOpts { fiox_path: "echo banner; echo 'no such thing' >&2; exit 127".into(), ..Default::default() };
        let mut d = rsh("sh -c", "h1", &LaunchOpts { server_args: vec![], ..o }).unwrap();
        let mut text = Vec::new();
        let e = d.reader.read_to_end(&mut text).unwrap_err().to_string();
        assert_eq!(String::from_utf8_lossy(&text), "banner\n");
        assert_eq!(e, "h1: the remote command ended with status 127: no such thing");
    }
}
