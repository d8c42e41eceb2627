//! Hosts for multi-host tests on one machine: network namespaces joined by veth pairs to a
//! bridge, as if they were machines on one switch.
//!
//! A [`Topology`] is a coordinator namespace holding the bridge (address 198.18.1.1) and N
//! host namespaces (198.18.1.11, .12, ...), each with a veth pair into the bridge. Addresses
//! come only from 198.18.0.0/15 (RFC 2544, benchmarking), and everything lives inside the
//! test's own namespaces: nothing is added to the machine's own network (no bridge, route or
//! address in the root namespace), so topologies of tests running in parallel never meet,
//! although each uses the same addresses. Names carry the test process's PID and a counter
//! (`fxt<pid>-<n>-c`, `-h1`, ...).
//!
//! Everything is removed in `Drop`, also when the test panics: every process started through
//! the topology and then every process still inside one of its namespaces (an sshd's sessions,
//! say) is killed by PID, then the namespaces are deleted, which takes their links and bridge
//! with them. Namespaces left by a test process that was itself killed (no `Drop`) are removed
//! by the next topology made.
//!
//! [`Sshd`] is a real OpenSSH server inside a host namespace: host and client keys generated
//! in the topology's scratch folder, and a forced rc command that prints a banner on stdout
//! and stderr before running the requested command, as login scripts do.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The coordinator's address on the bridge.
pub const COORD_ADDR: &str = "198.18.1.1";

/// Host `i`'s address (0-based): 198.18.1.11, .12, ...
pub fn host_addr(i: usize) -> String {
    format!("198.18.1.{}", 11 + i)
}

pub struct Host {
    /// The namespace's name.
    pub ns: String,
    pub addr: String,
    /// The host's end of its veth pair (inside `ns`).
    pub link: String,
}

pub struct Topology {
    /// The coordinator's namespace, which also holds the bridge.
    pub coord: String,
    pub hosts: Vec<Host>,
    /// Scratch folder for keys, configs and logs; removed last.
    pub dir: tempfile::TempDir,
    children: Mutex<Vec<Child>>,
}

static COUNTER: AtomicU32 = AtomicU32::new(0);
const PREFIX: &str = "fxt";

/// Why namespaces cannot be made here, if they cannot (not root, no `ip`).
pub fn unavailable() -> Option<String> {
    // Who we are, from /proc (tests use no unsafe code).
    let root = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("Uid:")).map(|l| l.split_whitespace().nth(2) == Some("0")))
        .unwrap_or(false);
    if !root {
        return Some("network namespaces need root".into());
    }
    if !Command::new("ip").arg("-V").output().is_ok_and(|o| o.status.success()) {
        return Some("iproute2's ip is not installed".into());
    }
    None
}

fn ip(args: &[&str]) -> Result<(), String> {
    let o = Command::new("ip").args(args).output().map_err(|e| format!("ip: {e}"))?;
    if o.status.success() {
        Ok(())
    } else {
        Err(format!("ip {}: {}", args.join(" "), String::from_utf8_lossy(&o.stderr).trim()))
    }
}

/// Kills a process by PID and waits (briefly) until it is gone.
pub fn kill_pid(pid: u32) {
    let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).stderr(Stdio::null()).status();
    let end = Instant::now() + Duration::from_secs(2);
    while alive(pid) && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether a process exists (a zombie counts as gone).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => s.rsplit_once(')').and_then(|(_, r)| r.split_whitespace().next()) != Some("Z"),
        Err(_) => false,
    }
}

/// The PIDs inside a namespace.
fn pids_in(ns: &str) -> Vec<u32> {
    Command::new("ip")
        .args(["netns", "pids", ns])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).split_whitespace().filter_map(|p| p.parse().ok()).collect())
        .unwrap_or_default()
}

fn delete_ns(ns: &str) {
    for pid in pids_in(ns) {
        kill_pid(pid);
    }
    let _ = Command::new("ip").args(["netns", "del", ns]).stderr(Stdio::null()).status();
}

/// Removes namespaces and scratch folders of earlier test processes that died without
/// cleaning up (their PID is in the names).
fn sweep_stale() {
    let dead = |pid: u32| pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists();
    let tmp = std::env::temp_dir();
    for e in std::fs::read_dir(&tmp).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(pid) =
            name.strip_prefix("fiox-netns-").and_then(|r| r.split('-').next()).and_then(|p| p.parse().ok())
        {
            if dead(pid) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    let Ok(o) = Command::new("ip").args(["netns", "list"]).output() else { return };
    for line in String::from_utf8_lossy(&o.stdout).lines() {
        let name = line.split_whitespace().next().unwrap_or("");
        let Some(pid) = name.strip_prefix(PREFIX).and_then(|r| r.split('-').next()).and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if dead(pid) {
            delete_ns(name);
        }
    }
}

impl Topology {
    /// A coordinator namespace with the bridge and `n` hosts; `Err` says why not (print it and
    /// skip the test).
    pub fn new(n: usize) -> Result<Topology, String> {
        if let Some(why) = unavailable() {
            return Err(why);
        }
        sweep_stale();
        let tag = format!("{PREFIX}{}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::SeqCst));
        let dir = tempfile::Builder::new()
            .prefix(&format!("fiox-netns-{}-", std::process::id()))
            .tempdir()
            .map_err(|e| e.to_string())?;
        let mut t = Topology { coord: format!("{tag}-c"), hosts: Vec::new(), dir, children: Mutex::new(Vec::new()) };
        // From here on, Drop removes whatever was made, also when a step fails.
        ip(&["netns", "add", &t.coord])?;
        let c = t.coord.clone();
        ip(&["-n", &c, "link", "set", "lo", "up"])?;
        ip(&["-n", &c, "link", "add", "br0", "type", "bridge"])?;
        ip(&["-n", &c, "addr", "add", &format!("{COORD_ADDR}/24"), "dev", "br0"])?;
        ip(&["-n", &c, "link", "set", "br0", "up"])?;
        for i in 0..n {
            let ns = format!("{tag}-h{}", i + 1);
            ip(&["netns", "add", &ns])?;
            t.hosts.push(Host { ns: ns.clone(), addr: host_addr(i), link: "eth0".into() });
            let port = format!("p{}", i + 1);
            // Both ends are made directly in their namespaces: no name ever exists in the
            // root namespace, so parallel tests cannot collide.
            ip(&["link", "add", "eth0", "netns", &ns, "type", "veth", "peer", "name", &port, "netns", &c])?;
            ip(&["-n", &c, "link", "set", &port, "master", "br0"])?;
            ip(&["-n", &c, "link", "set", &port, "up"])?;
            ip(&["-n", &ns, "addr", "add", &format!("{}/24", host_addr(i)), "dev", "eth0"])?;
            ip(&["-n", &ns, "link", "set", "eth0", "up"])?;
            ip(&["-n", &ns, "link", "set", "lo", "up"])?;
        }
        Ok(t)
    }

    /// A command that runs `program` inside namespace `ns`.
    pub fn cmd(&self, ns: &str, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", ns]).arg(program);
        c
    }

    /// Runs a command to its end inside `ns` (bounded by `timeout -k`).
    pub fn run(&self, ns: &str, args: &[&str], secs: u32) -> Output {
        let mut c = self.cmd(ns, "timeout");
        c.args(["-k", "2", &secs.to_string()]).args(args);
        c.output().expect("cannot run ip netns exec")
    }

    /// Starts a command made by [`Topology::cmd`] and keeps it to be killed by PID in `Drop`
    /// (`ip netns exec` execs the program, so the PID is the program's own).
    pub fn spawn(&self, mut cmd: Command) -> u32 {
        let child = cmd.spawn().expect("cannot start a process in a namespace");
        let pid = child.id();
        self.children.lock().unwrap_or_else(|e| e.into_inner()).push(child);
        pid
    }

    /// Takes host `i`'s link down (a silent partition), or up again.
    pub fn set_link(&self, i: usize, up: bool) {
        let h = &self.hosts[i];
        ip(&["-n", &h.ns, "link", "set", &h.link, if up { "up" } else { "down" }]).unwrap();
    }

    /// Drops everything `ns` sends to `addr` (a blackhole route): established connections go
    /// silent, new ones fail at once.
    pub fn blackhole(&self, ns: &str, addr: &str) {
        ip(&["-n", ns, "route", "add", "blackhole", &format!("{addr}/32")]).unwrap();
    }

    /// Waits until something listens on `addr:port` as seen from `ns`.
    pub fn wait_listening(&self, ns: &str, addr: &str, port: u16, limit: Duration) -> Result<(), String> {
        let end = Instant::now() + limit;
        let probe = format!("exec 3<>/dev/tcp/{addr}/{port}");
        loop {
            if self.run(ns, &["bash", "-c", &probe], 2).status.success() {
                return Ok(());
            }
            if Instant::now() > end {
                return Err(format!("nothing listens on {addr}:{port} in {ns} after {limit:?}"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// An OpenSSH server on host `i`'s address, port 22.
    pub fn start_sshd(&self, i: usize) -> Result<Sshd, String> {
        let sshd = ["/usr/sbin/sshd", "/usr/bin/sshd"].into_iter().find(|p| Path::new(p).exists());
        let Some(sshd) = sshd else {
            return Err("openssh-server is not installed (scripts/test.sh installs it)".into());
        };
        let h = &self.hosts[i];
        let d = self.dir.path().join(format!("sshd-h{}", i + 1));
        std::fs::create_dir_all(&d).map_err(|e| e.to_string())?;
        let keygen = |name: &str| -> Result<(), String> {
            let o = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
                .arg(d.join(name))
                .output()
                .map_err(|e| format!("ssh-keygen: {e}"))?;
            o.status.success().then_some(()).ok_or_else(|| String::from_utf8_lossy(&o.stderr).into_owned())
        };
        keygen("host_key")?;
        keygen("client_key")?;
        keygen("stranger_key")?;
        let read = |name: &str| std::fs::read_to_string(d.join(name)).map_err(|e| e.to_string());
        std::fs::write(d.join("authorized_keys"), read("client_key.pub")?).map_err(|e| e.to_string())?;
        std::fs::write(d.join("known_hosts"), format!("{} {}", h.addr, read("host_key.pub")?))
            .map_err(|e| e.to_string())?;
        // The forced command plays a login script: noise on both streams, then the command.
        let rc = d.join("rc");
        std::fs::write(
            &rc,
            "#!/bin/sh\necho \"Welcome to fiox test host $(hostname) (banner noise on stdout)\"\n\
             echo 'motd noise on stderr' >&2\n\
             if [ -n \"$SSH_ORIGINAL_COMMAND\" ]; then exec /bin/sh -c \"$SSH_ORIGINAL_COMMAND\"; fi\nexec /bin/sh\n",
        )
        .map_err(|e| e.to_string())?;
        Command::new("chmod").arg("755").arg(&rc).status().map_err(|e| e.to_string())?;
        let cfg = d.join("sshd_config");
        let p = |n: &str| d.join(n).display().to_string();
        std::fs::write(
            &cfg,
            format!(
                "ListenAddress {}:22\nHostKey {}\nAuthorizedKeysFile {}\nPidFile none\nStrictModes no\nUsePAM no\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n\
                 PermitRootLogin prohibit-password\nForceCommand {}\nLogLevel INFO\n",
                h.addr,
                p("host_key"),
                p("authorized_keys"),
                rc.display()
            ),
        )
        .map_err(|e| e.to_string())?;
        // sshd's privilege separation needs its empty directory (the package makes it at boot).
        std::fs::create_dir_all("/run/sshd").map_err(|e| e.to_string())?;
        let log = std::fs::File::create(d.join("sshd.log")).map_err(|e| e.to_string())?;
        let mut c = self.cmd(&h.ns, sshd);
        c.args(["-D", "-e", "-f"]).arg(&cfg).stdin(Stdio::null()).stdout(Stdio::null()).stderr(log);
        let pid = self.spawn(c);
        self.wait_listening(&self.coord, &h.addr, 22, Duration::from_secs(10))
            .map_err(|e| format!("{e}; sshd log: {}", read("sshd.log").unwrap_or_default()))?;
        Ok(Sshd { dir: d, addr: h.addr.clone(), pid, coord: self.coord.clone() })
    }
}

impl Drop for Topology {
    fn drop(&mut self) {
        for mut c in self.children.lock().unwrap_or_else(|e| e.into_inner()).drain(..) {
            kill_pid(c.id());
            let _ = c.wait();
        }
        for h in &self.hosts {
            delete_ns(&h.ns);
        }
        delete_ns(&self.coord);
    }
}

/// A running sshd in a host namespace (stopped with its topology).
pub struct Sshd {
    pub dir: PathBuf,
    pub addr: String,
    pub pid: u32,
    coord: String,
}

impl Sshd {
    /// The ssh command, run from the coordinator's namespace, that trusts this server's host
    /// key and logs in with `key` (`client_key`, or `stranger_key`, which is not authorized).
    pub fn ssh_command(&self, key: &str) -> Vec<String> {
        let p = |n: &str| self.dir.join(n).display().to_string();
        [
            "ip",
            "netns",
            "exec",
            &self.coord,
            "ssh",
            "-F",
            "/dev/null",
            "-i",
            &p(key),
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            &format!("UserKnownHostsFile={}", p("known_hosts")),
            "-o",
            "StrictHostKeyChecking=yes",
        ]
        .map(String::from)
        .to_vec()
    }
}
