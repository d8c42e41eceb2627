//! Multi-host runs: fiox servers and coordinators on loopback (`runs`), the transports' security
//! (`secure`: TLS and ssh), the start barrier and its timing (`timing`), and the network
//! namespaces the last two use as hosts (`netns`). The helpers below serve all three.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use crate::util::{fiox_bin, free_port, wait_listening, Out};

pub(crate) mod netns;
mod runs;
mod secure;
mod timing;

/// A shared-secret key file `name` in `dir`, made by `fiox --keygen`'s code.
fn keyfile(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    fiox_multihost::auth::keygen(&p).unwrap();
    p
}

/// A process killed (by PID) and reaped when dropped, also when the test fails.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        netns::kill_pid(self.0.id());
        let _ = self.0.wait();
    }
}

/// A fiox coordinator run in `dir`, bounded to a minute; its output and how long it took.
fn coordinate(dir: &Path, args: &[String]) -> (Out, f64) {
    let t = Instant::now();
    let o = Command::new("timeout").args(["-k", "2", "60"]).arg(fiox_bin()).args(args).current_dir(dir).output();
    (Out::from(o.unwrap()), t.elapsed().as_secs_f64())
}

/// A server process, killed (SIGKILL, by PID) and reaped when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-CONT", &self.child.id().to_string()]).status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn pid(&self) -> String {
        self.child.id().to_string()
    }
    fn addr(&self) -> String {
        format!("127.0.0.1,{}", self.port)
    }
}

/// `fiox --server=ip:127.0.0.1,PORT [extra]` with `env`, once it accepts connections.
fn fiox_server(dir: &Path, extra: &[&str], env: &[(&str, &str)]) -> Server {
    let port = free_port();
    let child = Command::new(fiox_bin())
        .arg(format!("--server=ip:127.0.0.1,{port}"))
        .args(extra)
        .envs(env.iter().copied())
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Connecting to see it listen costs the server one logged non-handshake.
    wait_listening(port);
    Server { child, port }
}
