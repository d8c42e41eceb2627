//! The multi-host transports' security, for real: TLS 1.3 sessions over TCP (loopback, and
//! between network namespaces) with every way authentication must fail, and the ssh transport
//! against a real OpenSSH server in a namespace. Each failure's message is asserted on the side
//! that prints it. Everything runs against real sockets, real fio and real ssh; certificates
//! are made by rcgen, keys by `fiox --keygen`'s code.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fiox_multihost::auth;
use fiox_multihost::ssh::{self, LaunchOpts, SshTarget};
use fiox_multihost::tls::{self, ClientConfig, ServerConfig, TlsOpts, HANDSHAKE_TIMEOUT};
use fiox_multihost::transport::Duplex;

use super::netns::{self, Topology};
use super::{keyfile, Guard};
use crate::util::{scratch, skip};

fn secret(path: &Path) -> TlsOpts {
    TlsOpts { auth_key: Some(path.to_path_buf()), ..Default::default() }
}

/// One server `accept` and one client `connect` over loopback, each with its result as text.
fn session(server: &ServerConfig, client: &ClientConfig) -> (Result<Duplex, String>, Result<Duplex, String>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let s = server.clone();
    let t = std::thread::spawn(move || tls::accept(l.accept().unwrap().0, &s, HANDSHAKE_TIMEOUT));
    let c = tls::connect(TcpStream::connect(addr).unwrap(), "127.0.0.1", client, HANDSHAKE_TIMEOUT);
    (t.join().unwrap().map_err(|e| e.to_string()), c.map_err(|e| e.to_string()))
}

/// A line each way through an established pair.
fn ping_pong(server: &mut Duplex, client: &mut Duplex) {
    client.writer.write_all(b"ping\n").unwrap();
    let mut line = [0u8; 5];
    server.reader.read_exact(&mut line).unwrap();
    assert_eq!(&line, b"ping\n");
    server.writer.write_all(b"pong\n").unwrap();
    client.reader.read_exact(&mut line).unwrap();
    assert_eq!(&line, b"pong\n");
}

fn both_refused(r: (Result<Duplex, String>, Result<Duplex, String>)) -> (String, String) {
    match r {
        (Err(s), Err(c)) => (s, c),
        (s, c) => panic!("expected both sides to fail: server {:?}, client {:?}", s.err(), c.err()),
    }
}

#[test]
fn shared_secret_works_and_identifies_both_sides() {
    let dir = scratch();
    let o = secret(&keyfile(dir.path(), "fiox.key"));
    let server = ServerConfig::from_opts(&o).unwrap();
    let key_id = auth::Secret::load(o.auth_key.as_ref().unwrap()).unwrap().key_id();
    assert!(server.describe().contains(&format!("shared secret (key {key_id})")), "{}", server.describe());
    let (s, c) = session(&server, &ClientConfig::from_opts(&o).unwrap());
    let (mut s, mut c) = (s.unwrap(), c.unwrap());
    ping_pong(&mut s, &mut c);
    assert_eq!(s.identity.as_deref(), Some(format!("key {key_id}").as_str()));
    let ci = c.identity.clone().unwrap();
    assert!(ci.starts_with("certificate CN=fiox server ") && ci.ends_with(&format!("key {key_id}")), "{ci}");
    // The server's identity was stored beside the key, private, and is the same next time.
    let ident = dir.path().join("fiox.key.server.pem");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&ident).unwrap().permissions().mode() & 0o777, 0o600);
    let again = ServerConfig::from_opts(&o).unwrap();
    assert_eq!(again.fingerprint(), server.fingerprint());
    (s.close)();
    (c.close)();
}

#[test]
fn wrong_or_missing_secret_is_refused_with_a_reason() {
    let dir = scratch();
    let server = ServerConfig::from_opts(&secret(&keyfile(dir.path(), "a.key"))).unwrap();
    let other = ClientConfig::from_opts(&secret(&keyfile(dir.path(), "b.key"))).unwrap();
    let (s, c) = both_refused(session(&server, &other));
    assert!(s.contains("authentication failed: wrong shared secret: the client's proof does not match"), "{s}");
    assert!(c.contains("refused authentication: wrong shared secret"), "{c}");

    let (s, c) = both_refused(session(&server, &ClientConfig::unauthenticated()));
    assert!(s.contains("authentication failed: no shared secret offered: this server requires --auth-key"), "{s}");
    assert!(c.contains("refused authentication: no shared secret offered"), "{c}");

    // Without credentials neither side is even configured.
    let e = ServerConfig::from_opts(&TlsOpts::default()).unwrap_err().to_string();
    assert!(e.contains("a network server needs credentials: --auth-key=FILE"), "{e}");
    let e = ClientConfig::from_opts(&TlsOpts::default()).unwrap_err().to_string();
    assert!(e.contains("a TLS connection needs credentials"), "{e}");
}

#[test]
fn key_files_readable_by_others_are_refused() {
    let dir = scratch();
    let key = keyfile(dir.path(), "fiox.key");
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    for e in [
        ServerConfig::from_opts(&secret(&key)).unwrap_err().to_string(),
        ClientConfig::from_opts(&secret(&key)).unwrap_err().to_string(),
    ] {
        assert_eq!(
            e,
            format!(
                "auth key {} has mode 0644: group or others may read it, so it is refused; chmod 600 {}",
                key.display(),
                key.display()
            )
        );
    }
    // The same through the binary's --keygen: it never loosens or overwrites.
    let out = crate::util::fiox(dir.path(), &["--keygen=fiox.key"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("fiox.key exists; fiox never overwrites a key"), "{}", out.stderr);
}

#[test]
fn keygen_through_the_binary() {
    let dir = scratch();
    let out = crate::util::fiox(dir.path(), &["--keygen"]);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    assert!(out.stdout.contains("wrote a 256-bit key") && out.stdout.contains("--auth-key=fiox.key"), "{}", out.stdout);
    let p = dir.path().join("fiox.key");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(auth::Secret::load(&p).is_ok());
    let out = crate::util::fiox(dir.path(), &["--keygen=-"]);
    assert_eq!(out.stdout.trim().len(), 64, "{}", out.stdout);
}

/// A plaintext peer on either end: fio 3.33's own client against the TLS server, and the TLS
/// client against fio 3.33's server; also a plain TCP client and a silent one (bounded).
#[test]
fn plaintext_peers_are_told_apart() {
    let dir = scratch();
    let o = secret(&keyfile(dir.path(), "fiox.key"));
    let server = ServerConfig::from_opts(&o).unwrap();

    // fio --client against the TLS port.
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let s = server.clone();
    let t = std::thread::spawn(move || tls::accept(l.accept().unwrap().0, &s, HANDSHAKE_TIMEOUT).map(|_| ()));
    std::fs::write(dir.path().join("j.fio"), "[j]\nioengine=null\nsize=1m\n").unwrap();
    let fio = crate::util::fio_within(dir.path(), &[&format!("--client=ip:127.0.0.1,{port}"), "j.fio"], 20);
    let e = t.join().unwrap().unwrap_err().to_string();
    assert!(
        e.contains("does not speak TLS (first bytes 61 00 0a 00): a fio client (fio --client, protocol version 97); this port takes TLS 1.3 only"),
        "{e}"
    );
    assert!(fio.code != 124 && fio.code != 137, "fio hung against the TLS port");

    // Any other plaintext.
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let s = server.clone();
    let t = std::thread::spawn(move || tls::accept(l.accept().unwrap().0, &s, HANDSHAKE_TIMEOUT).map(|_| ()));
    TcpStream::connect(addr).unwrap().write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
    let e = t.join().unwrap().unwrap_err().to_string();
    assert!(e.contains("does not speak TLS (first bytes 47 45 54 20): a plaintext client"), "{e}");

    // A peer that connects and says nothing: the handshake's bound ends it.
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let s = server.clone();
    let t = std::thread::spawn(move || tls::accept(l.accept().unwrap().0, &s, Duration::from_millis(500)).map(|_| ()));
    let _silent = TcpStream::connect(addr).unwrap();
    let start = Instant::now();
    let e = t.join().unwrap().unwrap_err().to_string();
    assert!(e.contains("no answer within the time allowed for the TLS handshake"), "{e}");
    assert!(start.elapsed() < Duration::from_secs(3));

    // The TLS client against fio --server.
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    // Killed by PID when the guard goes, also if an assertion below fails.
    let fio_server = Guard(
        Command::new(crate::util::fio_bin())
            .arg(format!("--server=ip:127.0.0.1,{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let stream = (0..100)
        .find_map(|_| {
            TcpStream::connect(("127.0.0.1", port)).ok().or_else(|| {
                std::thread::sleep(Duration::from_millis(50));
                None
            })
        })
        .expect("fio --server did not listen");
    let e = tls::connect(stream, "127.0.0.1", &ClientConfig::from_opts(&o).unwrap(), HANDSHAKE_TIMEOUT)
        .unwrap_err()
        .to_string();
    drop(fio_server);
    assert!(e.contains("a fio server or a non-fiox service?"), "{e}");
}

/// The bytes a client sent in one good session, replayed on a new connection, are refused:
/// the server's fresh key share makes the recorded Finished (and proof) worthless.
#[test]
fn a_recorded_client_handshake_cannot_be_replayed() {
    let dir = scratch();
    let o = secret(&keyfile(dir.path(), "fiox.key"));
    let server = ServerConfig::from_opts(&o).unwrap();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let server_addr = l.local_addr().unwrap();
    let s = server.clone();
    let accepts = std::thread::spawn(move || {
        let mut first = tls::accept(l.accept().unwrap().0, &s, HANDSHAKE_TIMEOUT).unwrap();
        let mut line = [0u8; 5];
        first.reader.read_exact(&mut line).unwrap();
        first.writer.write_all(&line).unwrap();
        (first.close)();
        tls::accept(l.accept().unwrap().0, &s, HANDSHAKE_TIMEOUT).map(|_| ()).map_err(|e| e.to_string())
    });
    // A recording relay between the client and the server.
    let relay = TcpListener::bind("127.0.0.1:0").unwrap();
    let relay_addr = relay.local_addr().unwrap();
    let recorded = Arc::new(Mutex::new(Vec::new()));
    let rec = recorded.clone();
    let relay_thread = std::thread::spawn(move || {
        let (from_client, _) = relay.accept().unwrap();
        let to_server = TcpStream::connect(server_addr).unwrap();
        let (mut cr, mut sw) = (from_client.try_clone().unwrap(), to_server.try_clone().unwrap());
        let up = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = cr.read(&mut buf) {
                if n == 0 || sw.write_all(&buf[..n]).is_err() {
                    break;
                }
                rec.lock().unwrap().extend_from_slice(&buf[..n]);
            }
            let _ = sw.shutdown(std::net::Shutdown::Write);
        });
        let (mut sr, mut cw) = (to_server, from_client);
        let _ = std::io::copy(&mut sr, &mut cw);
        let _ = cw.shutdown(std::net::Shutdown::Write);
        up.join().unwrap();
    });
    let mut c = tls::connect(
        TcpStream::connect(relay_addr).unwrap(),
        "127.0.0.1",
        &ClientConfig::from_opts(&o).unwrap(),
        HANDSHAKE_TIMEOUT,
    )
    .unwrap();
    c.writer.write_all(b"ping\n").unwrap();
    let mut line = [0u8; 5];
    c.reader.read_exact(&mut line).unwrap();
    assert_eq!(&line, b"ping\n");
    (c.close)();
    relay_thread.join().unwrap();
    let bytes = recorded.lock().unwrap().clone();
    assert!(bytes.len() > 200, "recorded {} bytes", bytes.len());
    // The replay: the same bytes, on a new connection.
    let mut replay = TcpStream::connect(server_addr).unwrap();
    replay.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    replay.write_all(&bytes).unwrap();
    let mut answer = Vec::new();
    let _ = replay.read_to_end(&mut answer);
    let e = accepts.join().unwrap().unwrap_err();
    assert!(
        e.contains("TLS handshake failed: a handshake message failed to decrypt: a replayed or tampered handshake?"),
        "{e}"
    );
}

/// A certificate authority for the mutual-TLS cases.
struct Ca {
    issuer: rcgen::Issuer<'static, rcgen::KeyPair>,
    pem: String,
}

fn ca(name: &str) -> Ca {
    let mut p = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    p.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    p.distinguished_name.push(rcgen::DnType::CommonName, name);
    let key = rcgen::KeyPair::generate().unwrap();
    let pem = p.self_signed(&key).unwrap().pem();
    Ca { issuer: rcgen::Issuer::new(p, key), pem }
}

fn write_private(path: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path).unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

/// A certificate from `ca` for `cn` (also its subject alternative name), expired if asked;
/// returns TLS options holding the CA to trust (`trust`), the certificate and its key.
fn issue(dir: &Path, ca: &Ca, trust: &Ca, cn: &str, expired: bool) -> TlsOpts {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let mut p = rcgen::CertificateParams::new(vec![cn.to_string()]).unwrap();
    p.distinguished_name.push(rcgen::DnType::CommonName, cn);
    if expired {
        p.not_before = rcgen::date_time_ymd(2020, 1, 1);
        p.not_after = rcgen::date_time_ymd(2021, 1, 1);
    }
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = p.signed_by(&key, &ca.issuer).unwrap();
    let stem = format!("{cn}-{}", N.fetch_add(1, std::sync::atomic::Ordering::SeqCst));
    let (c, k, t) = (dir.join(format!("{stem}.crt")), dir.join(format!("{stem}.key")), dir.join(format!("{stem}.ca")));
    std::fs::write(&c, cert.pem()).unwrap();
    write_private(&k, &key.serialize_pem());
    std::fs::write(&t, &trust.pem).unwrap();
    TlsOpts { auth_key: None, ca: Some(t), cert: Some(c), key: Some(k) }
}

#[test]
fn mutual_tls_with_the_site_ca() {
    let dir = scratch();
    let d = dir.path();
    let site = ca("fiox test site CA");
    let server = ServerConfig::from_opts(&issue(d, &site, &site, "127.0.0.1", false)).unwrap();
    let client = ClientConfig::from_opts(&issue(d, &site, &site, "coordinator", false)).unwrap();
    let (s, c) = session(&server, &client);
    let (mut s, mut c) = (s.unwrap(), c.unwrap());
    ping_pong(&mut s, &mut c);
    assert!(s.identity.as_deref().unwrap().starts_with("certificate CN=coordinator (sha256:"), "{:?}", s.identity);
    assert!(c.identity.as_deref().unwrap().starts_with("certificate CN=127.0.0.1 (sha256:"), "{:?}", c.identity);
    (s.close)();
    (c.close)();

    // A client certificate from another CA.
    let rogue = ca("another CA");
    let stranger = ClientConfig::from_opts(&issue(d, &rogue, &site, "stranger", false)).unwrap();
    let (s, c) = both_refused(session(&server, &stranger));
    assert!(
        s.contains("TLS handshake failed: the client's certificate is not signed by the CA in --tls-ca (unknown CA)"),
        "{s}"
    );
    assert!(c.contains("the server refused our certificate: not signed by a CA it trusts (unknown CA"), "{c}");

    // A server certificate from another CA.
    let rogue_server = ServerConfig::from_opts(&issue(d, &rogue, &site, "127.0.0.1", false)).unwrap();
    let (s, c) = both_refused(session(&rogue_server, &client));
    assert!(
        c.contains("TLS handshake failed: the server's certificate is not signed by the CA in --tls-ca (unknown CA)"),
        "{c}"
    );
    assert!(s.contains("the client refused the server's certificate: not signed by a CA it trusts"), "{s}");

    // An expired client certificate, then an expired server certificate.
    let old = ClientConfig::from_opts(&issue(d, &site, &site, "old-coordinator", true)).unwrap();
    let (s, c) = both_refused(session(&server, &old));
    assert!(s.contains("the client's certificate expired on 2021-01-01 00:00:00 UTC"), "{s}");
    assert!(c.contains("the server refused our certificate: it has expired (--tls-cert)"), "{c}");
    let old_server = ServerConfig::from_opts(&issue(d, &site, &site, "127.0.0.1", true)).unwrap();
    let (s, c) = both_refused(session(&old_server, &client));
    assert!(c.contains("the server's certificate expired on 2021-01-01 00:00:00 UTC"), "{c}");
    assert!(s.contains("the client refused the server's certificate: it has expired"), "{s}");

    // A client with only the shared secret, at a server that wants certificates.
    let key = keyfile(d, "fiox.key");
    let secret_only = ClientConfig::from_opts(&secret(&key)).unwrap();
    let (s, c) = both_refused(session(&server, &secret_only));
    assert!(c.contains("the server requires a client certificate: give --tls-cert and --tls-key"), "{c}");
    assert!(
        s.contains("the client presented no certificate; this server requires one from the CA in its --tls-ca"),
        "{s}"
    );

    // A private key others can read.
    let loose = issue(d, &site, &site, "loose", false);
    std::fs::set_permissions(loose.key.as_ref().unwrap(), std::os::unix::fs::PermissionsExt::from_mode(0o640)).unwrap();
    let e = ClientConfig::from_opts(&loose).unwrap_err().to_string();
    assert!(
        e.contains(&format!("{} has mode 0640: group or others may read it", loose.key.as_ref().unwrap().display())),
        "{e}"
    );
}

// ---- Processes inside namespaces ----

/// Not a test: the body of the processes the tests start inside namespaces, chosen by
/// `FIOX_TEST_HELPER` (it does nothing without). Lines for the test start with `HELPER `.
#[test]
#[ignore]
fn helper() {
    let Ok(role) = std::env::var("FIOX_TEST_HELPER") else { return };
    let args: Vec<String> = std::env::var("FIOX_TEST_HELPER_ARGS").unwrap().split('\n').map(String::from).collect();
    let say = |s: String| {
        println!("HELPER {s}");
        std::io::stdout().flush().unwrap();
    };
    match role.as_str() {
        "tls-server" => {
            let cfg = ServerConfig::from_opts(&secret(Path::new(&args[1]))).unwrap();
            let l = TcpListener::bind(&args[0]).unwrap();
            say("listening".into());
            for _ in 0..args[2].parse::<u32>().unwrap() {
                match tls::accept(l.accept().unwrap().0, &cfg, HANDSHAKE_TIMEOUT) {
                    Ok(mut d) => {
                        say(format!("accepted {} as {}", d.peer, d.identity.clone().unwrap_or_default()));
                        let mut line = String::new();
                        BufReader::new(&mut d.reader).read_line(&mut line).unwrap();
                        d.writer.write_all(line.to_uppercase().as_bytes()).unwrap();
                        let _ = d.reader.read(&mut [0u8; 1]);
                    }
                    Err(e) => say(format!("refused {e}")),
                }
            }
        }
        "tls-client" => {
            let cfg = ClientConfig::from_opts(&secret(Path::new(&args[1]))).unwrap();
            let host = args[0].split(':').next().unwrap();
            match tls::connect(TcpStream::connect(&args[0]).unwrap(), host, &cfg, HANDSHAKE_TIMEOUT) {
                Ok(mut d) => {
                    d.writer.write_all(b"hello over veth\n").unwrap();
                    let mut line = String::new();
                    BufReader::new(&mut d.reader).read_line(&mut line).unwrap();
                    say(format!("reply {}", line.trim()));
                    (d.close)();
                }
                Err(e) => say(format!("error {e}")),
            }
        }
        "ssh-coordinator" => {
            let o = LaunchOpts {
                ssh: args[1..].to_vec(),
                fiox_path: "sh".into(),
                server_args: vec!["-c".into(), "echo pid=$$; exec cat".into()],
                ..Default::default()
            };
            let d = ssh::ssh(&SshTarget::parse(&args[0]).unwrap(), &o).unwrap();
            let mut r = BufReader::new(d.reader);
            let pid = remote_pid(&mut r);
            say(format!("remote-pid {pid}"));
            std::thread::sleep(Duration::from_secs(60));
        }
        other => panic!("unknown helper {other}"),
    }
}

fn helper_cmd(t: &Topology, ns: &str, role: &str, args: &[String]) -> Command {
    let mut c = t.cmd(ns, std::env::current_exe().unwrap());
    // The test's name is its module path without the crate's, so a move keeps this right.
    let name = format!("{}::helper", module_path!().split_once("::").unwrap().1);
    c.args(["--exact", &name, "--ignored", "--nocapture", "--test-threads=1"])
        .env("FIOX_TEST_HELPER", role)
        .env("FIOX_TEST_HELPER_ARGS", args.join("\n"))
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    c
}

/// What a helper said on one line of its output, if anything (the test harness may print
/// `test ... ` in front of the first).
fn said(line: &str) -> Option<String> {
    line.find("HELPER ").map(|i| line[i + "HELPER ".len()..].to_string())
}

/// Everything a helper said (it ran to its end).
fn helper_lines(out: &std::process::Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout).lines().filter_map(said).collect()
}

/// Reads lines (the login banner first) until the remote shell's `pid=N`.
fn remote_pid(r: &mut impl BufRead) -> u32 {
    let mut seen = Vec::new();
    for _ in 0..10 {
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        if let Some(p) = line.trim().strip_prefix("pid=") {
            return p.parse().unwrap();
        }
        seen.push(line);
    }
    panic!("no pid line: {seen:?}");
}

/// Whether `ps` still lists the process.
fn ps_lists(pid: u32) -> bool {
    let o = Command::new("ps").args(["-o", "stat=", "-p", &pid.to_string()]).output().unwrap();
    o.status.success() && !String::from_utf8_lossy(&o.stdout).trim_start().starts_with('Z')
}

fn gone_within(pid: u32, limit: Duration) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if !ps_lists(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// TLS between two namespaces over the bridge: a server on host 1, coordinators in the
/// coordinator's namespace with the right key and with another.
#[test]
fn tls_between_namespaces() {
    let t = match Topology::new(1) {
        Ok(t) => t,
        Err(why) => skip!("{why}"),
    };
    let d = t.dir.path();
    let (good, bad) = (keyfile(d, "good.key"), keyfile(d, "bad.key"));
    let listen = format!("{}:8765", t.hosts[0].addr);
    for (key, want_client, want_server) in [
        (&good, "reply HELLO OVER VETH", "accepted 198.18.1.1:"),
        (&bad, "error 198.18.1.11:8765 refused authentication: wrong shared secret", "refused 198.18.1.1:"),
    ] {
        let args = [listen.clone(), good.display().to_string(), "1".into()];
        let mut server =
            Guard(helper_cmd(&t, &t.hosts[0].ns, "tls-server", &args).stdout(Stdio::piped()).spawn().unwrap());
        let mut lines =
            BufReader::new(server.0.stdout.take().unwrap()).lines().map_while(Result::ok).filter_map(|l| said(&l));
        // Bound before it says so: no probing connection needed.
        assert_eq!(lines.next().as_deref(), Some("listening"));
        let out =
            helper_cmd(&t, &t.coord, "tls-client", &[listen.clone(), key.display().to_string()]).output().unwrap();
        let client = helper_lines(&out);
        assert!(client.len() == 1 && client[0].starts_with(want_client), "{client:?}");
        let line = lines.next().unwrap();
        assert!(line.starts_with(want_server), "{line}");
        if key == &good {
            assert!(line.contains(" as key "), "{line}");
        } else {
            assert!(line.contains("wrong shared secret"), "{line}");
        }
    }
}

/// The ssh transport against a real sshd in a host namespace.
#[test]
fn ssh_transport_against_a_real_sshd() {
    let t = match Topology::new(1) {
        Ok(t) => t,
        Err(why) => skip!("{why}"),
    };
    let sshd = match t.start_sshd(0) {
        Ok(s) => s,
        Err(why) => skip!("{why}"),
    };
    assert!(netns::alive(sshd.pid), "sshd runs");
    let target = SshTarget::parse(&format!("ssh://root@{}", sshd.addr)).unwrap();
    let cat = LaunchOpts {
        ssh: sshd.ssh_command("client_key"),
        fiox_path: "sh".into(),
        server_args: vec!["-c".into(), "echo pid=$$; exec cat".into()],
        ..Default::default()
    };

    // Bytes both ways, after the login banner.
    let d = ssh::ssh(&target, &cat).unwrap();
    assert_eq!(d.peer, format!("ssh://root@{}", sshd.addr));
    let Duplex { reader, mut writer, mut close, .. } = d;
    let mut r = BufReader::new(reader);
    let mut banner = String::new();
    r.read_line(&mut banner).unwrap();
    assert!(banner.starts_with("Welcome to fiox test host"), "{banner:?}");
    let pid = remote_pid(&mut r);
    assert!(ps_lists(pid), "the remote command runs as {pid}");
    let data: Vec<u8> = (0..256 << 10).map(|i: u32| (i % 251) as u8).collect();
    let w = std::thread::spawn(move || {
        writer.write_all(&data).unwrap();
        writer.flush().unwrap();
        (writer, data)
    });
    let mut echoed = vec![0u8; 256 << 10];
    r.read_exact(&mut echoed).unwrap();
    let (_writer, data) = w.join().unwrap();
    assert!(echoed == data, "the echoed stream differs");
    // Closing the coordinator's side ends the remote process.
    close();
    assert!(gone_within(pid, Duration::from_secs(5)), "remote process {pid} outlived close()");

    // A key the server does not know: one clear line on the first read.
    let stranger = LaunchOpts { ssh: sshd.ssh_command("stranger_key"), ..cat.clone() };
    let mut d = ssh::ssh(&target, &stranger).unwrap();
    let e = d.reader.read(&mut [0u8; 64]).unwrap_err().to_string();
    assert_eq!(e, format!("ssh://root@{0}: ssh failed: root@{0}: Permission denied (publickey).", sshd.addr));
    (d.close)();

    // No fiox where --fiox-path says.
    let missing =
        LaunchOpts { ssh: sshd.ssh_command("client_key"), fiox_path: "/nonexistent/fiox".into(), ..Default::default() };
    let mut d = ssh::ssh(&target, &missing).unwrap();
    let mut banner = Vec::new();
    let e = d.reader.read_to_end(&mut banner).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!("ssh://root@{}: the remote command ended with status 127: ", sshd.addr))
            && e.contains("/nonexistent/fiox: not found"),
        "{e}"
    );
    (d.close)();

    // A coordinator killed outright (no close): the remote command still ends.
    let mut args = vec![target.url()];
    args.extend(sshd.ssh_command("client_key"));
    let mut coord = helper_cmd(&t, &t.coord, "ssh-coordinator", &args);
    let mut coord = Guard(coord.stdout(Stdio::piped()).spawn().unwrap());
    let line = BufReader::new(coord.0.stdout.take().unwrap()).lines().map_while(Result::ok).find_map(|l| said(&l));
    let line = line.expect("the coordinator helper said nothing");
    let pid: u32 = line.strip_prefix("remote-pid ").unwrap().parse().unwrap();
    assert!(ps_lists(pid));
    netns::kill_pid(coord.0.id());
    assert!(gone_within(pid, Duration::from_secs(10)), "remote process {pid} outlived its killed coordinator");
}

/// `--rsh` with `ip netns exec {host}`: the launcher runs the command in the host's namespace.
#[test]
fn rsh_launcher_into_a_namespace() {
    let t = match Topology::new(1) {
        Ok(t) => t,
        Err(why) => skip!("{why}"),
    };
    let o = LaunchOpts {
        fiox_path: "sh".into(),
        server_args: vec!["-c".into(), "echo pid=$$; ip -brief addr show eth0; exec cat".into()],
        ..Default::default()
    };
    let d = ssh::rsh("ip netns exec {host}", &t.hosts[0].ns, &o).unwrap();
    let Duplex { reader, mut writer, mut close, .. } = d;
    let mut r = BufReader::new(reader);
    let pid = remote_pid(&mut r);
    let mut addr = String::new();
    r.read_line(&mut addr).unwrap();
    assert!(addr.contains("198.18.1.11/24"), "runs in the host's namespace: {addr}");
    writer.write_all(b"through the launcher\n").unwrap();
    let mut echo = String::new();
    r.read_line(&mut echo).unwrap();
    assert_eq!(echo, "through the launcher\n");
    close();
    assert!(gone_within(pid, Duration::from_secs(3)));
}

/// The harness cleans up after itself: namespaces and processes are gone after Drop, also
/// when the test panics.
#[test]
fn topology_is_removed_even_after_a_panic() {
    if let Some(why) = netns::unavailable() {
        skip!("{why}");
    }
    let names = Arc::new(Mutex::new(Vec::new()));
    let pids = Arc::new(Mutex::new(Vec::new()));
    let (n2, p2) = (names.clone(), pids.clone());
    let r = std::thread::spawn(move || {
        let t = Topology::new(2).unwrap();
        n2.lock().unwrap().extend([t.coord.clone(), t.hosts[0].ns.clone(), t.hosts[1].ns.clone()]);
        let mut c = t.cmd(&t.hosts[1].ns, "sleep");
        c.arg("60");
        p2.lock().unwrap().push(t.spawn(c));
        // A grandchild the topology did not start itself.
        let out = t.run(&t.hosts[0].ns, &["sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!"], 5);
        p2.lock().unwrap().push(String::from_utf8_lossy(&out.stdout).trim().parse().unwrap());
        // Host 2 answers across the bridge (a refused port); a blackhole route makes a new
        // connection fail at once; and a link can be taken down.
        let probe = |addr: &str| {
            let o = t.run(&t.coord, &["bash", "-c", &format!("echo > /dev/tcp/{addr}/1")], 5);
            String::from_utf8_lossy(&o.stderr).into_owned()
        };
        assert!(probe("198.18.1.12").contains("Connection refused"), "{}", probe("198.18.1.12"));
        t.blackhole(&t.coord, "198.18.1.11");
        assert!(probe("198.18.1.11").contains("Invalid argument"), "{}", probe("198.18.1.11"));
        t.set_link(1, false);
        panic!("deliberate");
    })
    .join();
    assert!(r.is_err());
    let listed =
        String::from_utf8_lossy(&Command::new("ip").args(["netns", "list"]).output().unwrap().stdout).into_owned();
    for n in names.lock().unwrap().iter() {
        assert!(!listed.lines().any(|l| l.split_whitespace().next() == Some(n)), "{n} is still there");
    }
    for &p in pids.lock().unwrap().iter() {
        assert!(!ps_lists(p), "process {p} survived");
    }
}

/// A local run has no use for the transport switches: they are refused rather than ignored.
#[test]
fn transport_switches_outside_multihost_runs_are_refused() {
    let dir = scratch();
    let out = crate::util::fiox(dir.path(), &["--auth-key=k", "--name=j", "--ioengine=null", "--size=1m"]);
    assert_eq!(out.code, 1);
    assert_eq!(out.stderr, "fiox: --auth-key applies to multi-host runs only (fiox --server, --client, --hosts)\n");
    assert!(out.stdout.is_empty());
}

// Whole multi-host runs over the secure transports: `fiox --server` with credentials in host
// namespaces, the coordinator in its own, reaching them over the bridge.

/// Starts `fiox --server` with `args` in host `i`'s namespace, working in its own folder
/// (returned, with the server's log); waits until it listens on port 8765.
fn wire_server(t: &Topology, i: usize, args: &[&str]) -> (PathBuf, PathBuf) {
    let work = t.dir.path().join(format!("srv-h{}", i + 1));
    std::fs::create_dir_all(&work).unwrap();
    let log = t.dir.path().join(format!("srv-h{}.log", i + 1));
    let mut c = t.cmd(&t.hosts[i].ns, crate::util::fiox_bin());
    c.arg(format!("--server=ip:{},8765", t.hosts[i].addr))
        .args(args)
        .current_dir(&work)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap());
    t.spawn(c);
    t.wait_listening(&t.coord, &t.hosts[i].addr, 8765, Duration::from_secs(10)).unwrap();
    (work, log)
}

/// A coordinator run to its end inside `ns` (or the root namespace for `None`), bounded;
/// returns its output and how long it took.
fn wire_run(t: &Topology, ns: Option<&str>, args: &[String], secs: u32) -> (crate::util::Out, f64) {
    let mut c = match ns {
        Some(ns) => t.cmd(ns, "timeout"),
        None => Command::new("timeout"),
    };
    c.args(["-k", "2", &secs.to_string()]).arg(crate::util::fiox_bin()).args(args).current_dir(t.dir.path());
    let started = Instant::now();
    let o = c.output().unwrap();
    let out = crate::util::Out::from(o);
    (out, started.elapsed().as_secs_f64())
}

fn strings(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

/// Each host read its 32 MiB and All clients sums them; every host came over `transport`.
fn assert_merged(o: &crate::util::Out, n: usize, transport: &str) -> serde_json::Value {
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stderr.is_empty(), "stderr: {}", o.stderr);
    let d: serde_json::Value = serde_json::from_str(&o.stdout).expect("one JSON document");
    let cs = d["client_stats"].as_array().unwrap();
    let sum: u64 = cs[..n].iter().map(|h| h["read"]["io_bytes"].as_u64().unwrap()).sum();
    assert_eq!(sum, n as u64 * (32 << 20), "every host read its 32 MiB");
    // One host has no All clients entry, as in fio.
    if n > 1 {
        assert_eq!(cs.len(), n + 1);
        assert_eq!(cs[n]["jobname"], "All clients");
        assert_eq!(cs[n]["read"]["io_bytes"].as_u64(), Some(sum));
    } else {
        assert_eq!(cs.len(), 1);
    }
    for h in d["fiox"]["hosts"].as_array().unwrap() {
        assert_eq!((h["status"].as_str(), h["transport"].as_str()), (Some("ok"), Some(transport)), "{h}");
    }
    d
}

const NULL_JOB: [&str; 6] =
    ["--name=j", "--ioengine=null", "--rw=read", "--bs=4k", "--size=32m", "--output-format=json"];

/// Two hosts over TLS with a shared secret, across namespaces: the merged report sums them and
/// each server logs the session with the coordinator's key id. A wrong secret is one clear
/// line, exit 1, and no job runs (the server creates no file).
#[test]
fn run_over_tls_between_namespaces() {
    let t = match Topology::new(2) {
        Ok(t) => t,
        Err(why) => skip!("{why}"),
    };
    let d = t.dir.path();
    let (good, bad) = (keyfile(d, "good.key"), keyfile(d, "bad.key"));
    let auth = format!("--auth-key={}", good.display());
    let servers: Vec<(PathBuf, PathBuf)> = (0..2).map(|i| wire_server(&t, i, &[&auth])).collect();
    let mut args = vec![format!("--hosts={},{}", t.hosts[0].addr, t.hosts[1].addr), auth.clone()];
    args.extend(strings(&NULL_JOB));
    let (o, secs) = wire_run(&t, Some(&t.coord), &args, 20);
    assert_merged(&o, 2, "tls");
    println!("two hosts over TLS: {secs:.2} s");
    for (_, log) in &servers {
        let text = std::fs::read_to_string(log).unwrap();
        let line = text.lines().find(|l| l.contains("session for run")).unwrap_or_else(|| panic!("{text}"));
        assert!(line.contains("198.18.1.1:") && line.contains("key "), "{line}");
    }

    // The wrong key: refused before any job reaches the server.
    let mut args = vec![format!("--hosts={}", t.hosts[0].addr), format!("--auth-key={}", bad.display())];
    args.extend(strings(&["--name=w", "--ioengine=psync", "--rw=write", "--size=1m", "--filename=wrong-secret.dat"]));
    let (o, _) = wire_run(&t, Some(&t.coord), &args, 20);
    assert_eq!(o.code, 1, "{}", o.stderr);
    let lines: Vec<&str> = o.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", o.stderr);
    assert!(lines[0].contains("wrong shared secret"), "{}", o.stderr);
    assert!(!servers[0].0.join("wrong-secret.dat").exists(), "a job ran on the server");
    let text = std::fs::read_to_string(&servers[0].1).unwrap();
    assert!(text.contains("wrong shared secret"), "the server logs the refusal: {text}");

    // Without credentials the coordinator does not try plain TCP to a network address.
    let mut args = vec![format!("--hosts={}", t.hosts[0].addr)];
    args.extend(strings(&NULL_JOB));
    let (o, _) = wire_run(&t, Some(&t.coord), &args, 20);
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("not a loopback address") && o.stderr.contains("--auth-key"), "{}", o.stderr);
}

/// A server on a network address without credentials is refused at start, naming them.
#[test]
fn network_server_without_credentials_is_refused() {
    let t = match Topology::new(1) {
        Ok(t) => t,
        Err(why) => skip!("{why}"),
    };
    let addr = format!("--server=ip:{},8765", t.hosts[0].addr);
    let o = t.run(&t.hosts[0].ns, &[crate::util::fiox_bin().to_str().unwrap(), &addr], 10);
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("not a loopback address") && e.contains("--auth-key=FILE") && e.contains("--tls-ca"), "{e}");
}

/// ssh:// hosts: the coordinator starts `fiox --server=stdio` through a real sshd (whose login
/// banner is skipped) and runs the job there.
#[test]
fn run_over_ssh_to_a_real_sshd() {
    let t = match Topology::new(1) {
        Ok(t) => t,
        Err(why) => skip!("{why}"),
    };
    let sshd = match t.start_sshd(0) {
        Ok(s) => s,
        Err(why) => skip!("{why}"),
    };
    // The ssh command enters the coordinator's namespace itself, so fiox runs outside.
    let mut args = vec![
        format!("--hosts=ssh://root@{}", sshd.addr),
        format!("--ssh={}", sshd.ssh_command("client_key").join(" ")),
        format!("--fiox-path={}", crate::util::fiox_bin().display()),
    ];
    args.extend(strings(&NULL_JOB));
    let (o, secs) = wire_run(&t, None, &args, 30);
    let d = assert_merged(&o, 1, "ssh");
    assert_eq!(d["client_stats"][0]["hostname"], sshd.addr.as_str());
    println!("one host over ssh: {secs:.2} s");
}

/// --rsh with `ip netns exec {host}`: each host's server is started in its namespace.
#[test]
fn run_through_rsh_into_namespaces() {
    let t = match Topology::new(2) {
        Ok(t) => t,
        Err(why) => skip!("{why}"),
    };
    let mut args = vec![
        format!("--hosts={},{}", t.hosts[0].ns, t.hosts[1].ns),
        "--rsh=ip netns exec {host}".to_string(),
        format!("--fiox-path={}", crate::util::fiox_bin().display()),
    ];
    args.extend(strings(&NULL_JOB));
    let (o, secs) = wire_run(&t, None, &args, 30);
    let d = assert_merged(&o, 2, "rsh");
    // Each ran in its own namespace (the hosts' facts say whose).
    println!("two hosts through rsh: {secs:.2} s; {}", d["fiox"]["hosts"][0]["hostname"]);
}

/// A silent partition mid-run (host 2's link down: no reset, no FIN) over TLS: the host is
/// lost within --host-timeout plus 2 s, its partial results are kept and flagged, exit 1.
#[test]
fn silent_partition_over_tls_is_detected() {
    let t = match Topology::new(2) {
        Ok(t) => t,
        Err(why) => skip!("{why}"),
    };
    let key = keyfile(t.dir.path(), "k.key");
    let auth = format!("--auth-key={}", key.display());
    for i in 0..2 {
        wire_server(&t, i, &[&auth]);
    }
    let mut args = vec![format!("--hosts={},{}", t.hosts[0].addr, t.hosts[1].addr), auth, "--host-timeout=2".into()];
    args.extend(strings(&NULL_JOB));
    args.extend(strings(&["--time_based", "--runtime=6", "--rate=50m"]));
    let cut = Duration::from_millis(2500);
    let (o, secs) = std::thread::scope(|s| {
        let run = s.spawn(|| wire_run(&t, Some(&t.coord), &args, 30));
        std::thread::sleep(cut);
        t.set_link(1, false);
        run.join().unwrap()
    });
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(secs < 6.0 + 4.0, "took {secs} s");
    let d: serde_json::Value = serde_json::from_str(&o.stdout).expect("one JSON document");
    let h = &d["fiox"]["hosts"][1];
    assert_eq!((h["status"].as_str(), h["partial"].as_u64()), (Some("failed"), Some(1)), "{h}");
    let at = h["failed_at_s"].as_f64().unwrap();
    // The run starts a little after the coordinator; the cut is at 2.5 s of the coordinator.
    assert!(at < cut.as_secs_f64() + 2.0 + 2.0, "lost at {at} s");
    println!("partition at {:.1} s, host lost at {at:.2} s of the run; run took {secs:.2} s", cut.as_secs_f64());
    assert!(d["client_stats"][1]["read"]["io_bytes"].as_u64().unwrap() > 0);
    assert_eq!(d["fiox"]["degraded"], 1);
}

/// A host that never answers the SYN (its link is down, so nothing comes back) fails within
/// --connect-timeout, not the kernel's two minutes; the other host is not held up by it.
#[test]
fn unanswered_connect_is_bounded_by_connect_timeout() {
    let t = match Topology::new(2) {
        Ok(t) => t,
        Err(why) => skip!("{why}"),
    };
    let key = keyfile(t.dir.path(), "k.key");
    let auth = format!("--auth-key={}", key.display());
    wire_server(&t, 0, &[&auth]);
    t.set_link(1, false);
    let mut args = vec![format!("--hosts={},{}", t.hosts[0].addr, t.hosts[1].addr), auth, "--connect-timeout=1".into()];
    args.extend(strings(&NULL_JOB));
    let (o, secs) = wire_run(&t, Some(&t.coord), &args, 20);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(
        o.stderr.contains(&format!("host {}: no answer within --connect-timeout=1000ms", t.hosts[1].addr)),
        "{}",
        o.stderr
    );
    assert!(secs < 1.0 + 2.0, "took {secs} s");
    println!("unanswered host given up after {secs:.2} s");
}

/// Launcher join between namespaces: a shell loop standing in for srun starts
/// `fiox --server=join:198.18.1.1:PORT --auth-key=K` in each host namespace with
/// SLURM_PROCID set (ranks in reverse host order); the coordinator waits on the bridge
/// address, orders the hosts by rank, and each host's and All clients' figures equal those of
/// the same job over TLS to standing servers. Without credentials neither side joins over the
/// network; a server with the wrong key is refused, named, and missed at --join-timeout.
#[test]
fn launcher_join_between_namespaces() {
    let t = match Topology::new(3) {
        Ok(t) => t,
        Err(why) => skip!("{why}"),
    };
    let d = t.dir.path();
    let (key, bad) = (keyfile(d, "k.key"), keyfile(d, "bad.key"));
    let auth = format!("--auth-key={}", key.display());
    // The reference: the same job over TLS to standing servers.
    for i in 0..3 {
        wire_server(&t, i, &[&auth]);
    }
    let mut args = vec![format!("--hosts={},{},{}", t.hosts[0].addr, t.hosts[1].addr, t.hosts[2].addr), auth.clone()];
    args.extend(strings(&NULL_JOB));
    let (o, _) = wire_run(&t, Some(&t.coord), &args, 30);
    let reference = assert_merged(&o, 3, "tls");

    // The launcher: one worker per host namespace, rank 2 on host 1 down to rank 0 on host 3,
    // started before the coordinator listens (they retry within --connect-timeout).
    let namespaces: Vec<&str> = t.hosts.iter().map(|h| h.ns.as_str()).collect();
    let script = format!(
        "r=2; for ns in {}; do mkdir -p {d}/join-$ns; (cd {d}/join-$ns && SLURM_PROCID=$r exec ip netns exec $ns {fiox} --server=join:198.18.1.1:8766 {auth}) 2>{d}/join-$ns.log & r=$((r-1)); done; wait",
        namespaces.join(" "),
        d = d.display(),
        fiox = crate::util::fiox_bin().display(),
    );
    let mut launcher = Command::new("timeout").args(["-k", "2", "30", "bash", "-c", &script]).spawn().unwrap();
    let mut args = vec!["--join=198.18.1.1:8766".to_string(), "--join-count=3".into(), auth.clone()];
    args.extend(strings(&NULL_JOB));
    let (o, secs) = wire_run(&t, Some(&t.coord), &args, 30);
    let joined = assert_merged(&o, 3, "join");
    assert!(launcher.wait().unwrap().success(), "a joined server failed");
    let names: Vec<&str> =
        joined["client_stats"].as_array().unwrap().iter().take(3).map(|h| h["hostname"].as_str().unwrap()).collect();
    assert_eq!(names, [t.hosts[2].addr.as_str(), t.hosts[1].addr.as_str(), t.hosts[0].addr.as_str()], "rank order");
    for i in 0..4 {
        let (a, b) = (&joined["client_stats"][i]["read"], &reference["client_stats"][i]["read"]);
        assert_eq!(
            (a["io_bytes"].as_u64(), a["total_ios"].as_u64()),
            (b["io_bytes"].as_u64(), b["total_ios"].as_u64())
        );
    }
    for ns in &namespaces {
        let log = std::fs::read_to_string(d.join(format!("join-{ns}.log"))).unwrap();
        assert!(log.contains("joined 198.18.1.1,8766 (rank ") && log.contains("key "), "{log}");
    }
    println!("three hosts joined over TLS: {secs:.2} s");

    // No credentials: a network join is refused on both sides.
    let fiox = crate::util::fiox_bin().display().to_string();
    let o = t.run(&t.hosts[0].ns, &[&fiox, "--server=join:198.18.1.1:8766"], 10);
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("joining 198.18.1.1:8766: not a loopback address") && e.contains("--auth-key=FILE"), "{e}");
    let mut args = vec!["--join=198.18.1.1:8766".to_string(), "--join-count=1".into()];
    args.extend(strings(&NULL_JOB));
    let (o, _) = wire_run(&t, Some(&t.coord), &args, 10);
    assert_eq!(o.code, 1);
    assert!(
        o.stderr
            .contains("--join=198.18.1.1:8766: cannot listen: listening on 198.18.1.1:8766: not a loopback address"),
        "{}",
        o.stderr
    );

    // The wrong key: refused and named; the run ends at the bounded wait.
    let wrong = format!("--auth-key={}", bad.display());
    let mut w = t
        .cmd(&t.hosts[0].ns, &fiox)
        .args(["--server=join:198.18.1.1:8766", &wrong])
        .env("SLURM_PROCID", "0")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut args = vec!["--join=198.18.1.1:8766".to_string(), "--join-count=1".into(), "--join-timeout=3".into(), auth];
    args.extend(strings(&NULL_JOB));
    let (o, secs) = wire_run(&t, Some(&t.coord), &args, 15);
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains(&format!("fiox: --join: {}", t.hosts[0].addr)) && o.stderr.contains("wrong shared secret"),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr.ends_with("0 of 1 servers joined within --join-timeout=3s (missing ranks: 0); no host ran anything\n"),
        "{}",
        o.stderr
    );
    assert!(secs < 3.0 + 2.0, "took {secs} s");
    let mut err = String::new();
    w.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert_eq!(w.wait().unwrap().code(), Some(1), "{err}");
    assert!(err.contains("wrong shared secret"), "{err}");
}
