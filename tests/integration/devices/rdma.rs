//! `ioengine=rdma` against fio 3.33, over soft-RoCE (the kernel's `rdma_rxe`) in one guest:
//! rxe attached to a dummy network device with 10.9.0.1, servers listening there and clients
//! connecting to it, each pair on a port of its own. fio with fio, fiox with fiox, and each
//! with the other (fiox speaks fio's buffer-list exchange), for the verbs write, read and send.
//! Each side's bytes and I/O counts are compared with what fio's side of the same pair reports.

use super::guest::{available, Batch, Results, Tool};

const PEER: &str = "10.9.0.1";
const SETUP: &str = "modprobe rdma_rxe && modprobe rdma_ucm && ip link set lo up && \
     ip link add rxenet type dummy && ip addr add 10.9.0.1/24 dev rxenet && ip link set rxenet up && \
     rdma link add rxe0 type rxe netdev rxenet && rdma link";

/// One pair: the server's tool, the client's, the verb, and the port.
struct Pair {
    name: String,
    server: Tool,
    client: Tool,
    verb: &'static str,
}

/// The server posts as many receives as the client sends blocks (16), all before the first send:
/// with fewer, a receiver slowed by TCG can leave a send without a posted receive, which ends in
/// "RNR retry counter exceeded" however often the sender retries (seen with fio on both ends,
/// and with fio serving fiox in CI).
fn server_args(port: &str) -> Vec<String> {
    ["--name=srv", "--ioengine=rdma", "--rw=read", "--bs=16k", "--size=256k", "--iodepth=16", "--output-format=json"]
        .iter()
        .map(|s| s.to_string())
        .chain([format!("--port={port}")])
        .collect()
}

fn client_args(port: &str, verb: &str) -> Vec<String> {
    ["--name=cli", "--ioengine=rdma", "--rw=write", "--bs=16k", "--size=256k", "--iodepth=2", "--output-format=json"]
        .iter()
        .map(|s| s.to_string())
        .chain([format!("--hostname={PEER}"), format!("--port={port}"), format!("--verb={verb}")])
        .collect()
}

/// The (bytes, I/Os) of a run's only job in direction `d` (0 read, 1 write).
fn side(r: &Results, name: &str, tool: Tool, d: usize) -> (u64, u64) {
    let (bytes, ios, err) = r.totals(name, tool);
    assert_eq!(err, 0, "{name}: job error {err}");
    (bytes[d], ios[d])
}

#[test]
fn rdma_over_soft_roce_matches_fio_both_ways() {
    if !available() {
        return;
    }
    let mut b = Batch::new("none");
    // No RDMA device yet: one line, no I/O.
    b.run("nodevice", Tool::Fiox, "", &client_args("7000", "write").iter().map(String::as_str).collect::<Vec<_>>());
    b.shell(SETUP);
    let mut pairs = Vec::new();
    for verb in ["write", "read", "send"] {
        for (server, client) in
            [(Tool::Fio, Tool::Fio), (Tool::Fiox, Tool::Fiox), (Tool::Fio, Tool::Fiox), (Tool::Fiox, Tool::Fio)]
        {
            let tag = |t| if t == Tool::Fio { "fio" } else { "fiox" };
            pairs.push(Pair { name: format!("{verb}-{}-{}", tag(server), tag(client)), server, client, verb });
        }
    }
    for (i, p) in pairs.iter().enumerate() {
        let port = (7100 + i).to_string();
        let s = server_args(&port);
        let c = client_args(&port, p.verb);
        b.spawn(&format!("{}.srv", p.name), p.server, &s.iter().map(String::as_str).collect::<Vec<_>>(), 2.0);
        b.run(&format!("{}.cli", p.name), p.client, "", &c.iter().map(String::as_str).collect::<Vec<_>>());
        b.wait();
    }
    // Nothing listens on this port: fiox says so at once.
    b.run("refused", Tool::Fiox, "", &client_args("7999", "write").iter().map(String::as_str).collect::<Vec<_>>());
    // No such host on the RDMA network: fiox gives up in bounded time, naming it.
    let far = with(client_args("7998", "write"), &["--hostname=10.9.0.77"]);
    b.run("unreachable", Tool::Fiox, "", &far.iter().map(String::as_str).collect::<Vec<_>>());
    clones(&mut b);
    let r = b.boot();
    let far = r.out("unreachable", Tool::Fiox);
    assert_ne!(far.code, 0);
    assert_eq!(far.stderr.trim_end().lines().count(), 1, "{}", far.stderr);
    assert!(far.stderr.contains("10.9.0.77:7998"), "{}", far.stderr);
    eprintln!("unreachable: {}", far.stderr.trim_end());
    check_clones(&r);

    let nodev = r.out("nodevice", Tool::Fiox);
    assert_ne!(nodev.code, 0);
    assert_eq!(nodev.stderr.trim_end().lines().count(), 1, "{}", nodev.stderr);
    assert!(nodev.stderr.contains("ioengine rdma needs an RDMA device"), "{}", nodev.stderr);

    let refused = r.out("refused", Tool::Fiox);
    assert_ne!(refused.code, 0);
    assert_eq!(refused.stderr.trim_end().lines().count(), 1, "{}", refused.stderr);
    assert!(refused.stderr.contains("refused the connection (nothing listens on port 7999"), "{}", refused.stderr);

    for p in &pairs {
        let (srv, cli) = (format!("{}.srv", p.name), format!("{}.cli", p.name));
        // Every client wrote 256 KiB in 16 blocks, whatever its verb and its peer.
        assert_eq!(side(&r, &cli, p.client, 1), (262144, 16), "{}: the client", p.name);
        let server = side(&r, &srv, p.server, 0);
        let want = match (p.verb, p.server) {
            // A receiving server counts each block it received.
            ("send", _) => (262144, 16),
            // A passive server moves nothing: fio counts its wait for the client's end as one
            // I/O of no bytes, and so does fiox.
            _ => (0, 1),
        };
        assert_eq!(server, want, "{}: the server", p.name);
        eprintln!("{}: client {:?}, server {:?}", p.name, (262144, 16), server);
    }
}

fn with(args: Vec<String>, more: &[&str]) -> Vec<String> {
    args.into_iter().chain(more.iter().map(|s| s.to_string())).collect()
}

/// `numjobs=2`: fio 3.33 gives both clones the same port (observed in the guest: one RDMA-CM id
/// listens on it, and the second server clone's bind fails with EADDRNOTAVAIL), and so does
/// fiox. A second server clone fails at once naming the port; a server turns away the second
/// client clone, which fails at once (fio's own server leaves it waiting for ever).
fn clones(b: &mut Batch) {
    let srv2 = with(server_args("7300"), &["--numjobs=2"]);
    b.run("srv-clones", Tool::Fiox, "", &srv2.iter().map(String::as_str).collect::<Vec<_>>());
    for (i, client) in [Tool::Fio, Tool::Fiox].into_iter().enumerate() {
        let port = (7310 + i).to_string();
        let name = format!("cli-clones-{i}");
        let s = server_args(&port);
        let c = with(client_args(&port, "write"), &["--numjobs=2"]);
        b.spawn(&format!("{name}.srv"), Tool::Fiox, &s.iter().map(String::as_str).collect::<Vec<_>>(), 2.0);
        b.run(&name, client, "", &c.iter().map(String::as_str).collect::<Vec<_>>());
        b.wait();
    }
}

fn check_clones(r: &Results) {
    let srv = r.out("srv-clones", Tool::Fiox);
    assert_ne!(srv.code, 0, "{}", srv.stderr);
    assert!(srv.stderr.contains("port=7300 is taken on 0.0.0.0"), "{}", srv.stderr);
    // fio's client: the first clone writes, the second is rejected and ends with nothing done.
    let (bytes, ios, _) = r.totals("cli-clones-0", Tool::Fio);
    assert_eq!((bytes[1], ios[1]), (262144, 16), "fio's two clients against one fiox server");
    assert!(r.out("cli-clones-0", Tool::Fio).stderr.contains("REJECTED"));
    // fiox's client: the rejected clone fails with the port named, in bounded time.
    let cli = r.out("cli-clones-1", Tool::Fiox);
    assert_ne!(cli.code, 0, "{}", cli.stderr);
    assert!(cli.stderr.contains("10.9.0.1:7311 refused the connection"), "{}", cli.stderr);
    for name in ["cli-clones-0.srv", "cli-clones-1.srv"] {
        let out = r.out(name, Tool::Fiox);
        assert!(out.code == 0 || out.code == 1, "{name} ended by the time limit: {}", out.stderr);
    }
}
