//! The small HTTP server behind `metrics_listen` and `live_listen`: GET requests only, one
//! answer per connection (`Connection: close`), each connection on a short-lived thread so a
//! slow client cannot hold up the others. It serves figures the run has already computed; it
//! never touches the workers, so nothing it does reaches the I/O path.
//!
//! When both options name the same address, one server answers for both sites.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};

/// An answer.
pub struct Response {
    pub status: &'static str,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl Response {
    pub fn ok(content_type: &'static str, body: impl Into<Vec<u8>>) -> Response {
        Response { status: "200 OK", content_type, body: body.into() }
    }

    /// Nothing new since what the client has (the live page's poll).
    pub fn no_content() -> Response {
        Response { status: "204 No Content", content_type: "text/plain; charset=utf-8", body: Vec::new() }
    }
}

/// A site's handler: gets the path and the query string, answers `None` for a path it does
/// not serve.
pub type Handler = Box<dyn Fn(&str, &str) -> Option<Response> + Send + Sync>;

/// What one option serves: a description of its paths (for the 404 answer) and the handler.
pub struct Site {
    pub paths: &'static str,
    pub respond: Handler,
}

/// Connections answered at once; beyond this a client waits in the listen queue.
const MAX_CONNECTIONS: usize = 16;

/// Binds `addr` (so a taken port fails the run before any I/O; `option` names it in the error)
/// and serves `sites` from a thread that lives as long as the process.
pub fn serve(addr: SocketAddr, option: &str, sites: Vec<Site>) -> Result<()> {
    let listener = TcpListener::bind(addr).with_context(|| format!("{option}={addr}: cannot listen there"))?;
    let sites = Arc::new(sites);
    let busy = Arc::new(AtomicUsize::new(0));
    std::thread::Builder::new().name("fiox-http".into()).spawn(move || {
        for conn in listener.incoming().flatten() {
            while busy.load(Ordering::Acquire) >= MAX_CONNECTIONS {
                std::thread::sleep(Duration::from_millis(5));
            }
            busy.fetch_add(1, Ordering::AcqRel);
            let (sites, done) = (sites.clone(), busy.clone());
            let spawned = std::thread::Builder::new().name("fiox-http-conn".into()).spawn(move || {
                answer(conn, &sites);
                done.fetch_sub(1, Ordering::AcqRel);
            });
            if spawned.is_err() {
                busy.fetch_sub(1, Ordering::AcqRel);
            }
        }
    })?;
    Ok(())
}

fn answer(mut conn: TcpStream, sites: &[Site]) {
    // The whole request head, so that closing the connection never drops unread bytes (which
    // would make the kernel reset it under the client's read).
    let _ = conn.set_read_timeout(Some(Duration::from_secs(2)));
    let _ = conn.set_write_timeout(Some(Duration::from_secs(10)));
    let mut req = Vec::with_capacity(512);
    let mut buf = [0u8; 512];
    while !req.windows(4).any(|w| w == b"\r\n\r\n") && req.len() < 16 << 10 {
        match conn.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => req.extend_from_slice(&buf[..n]),
        }
    }
    let head = String::from_utf8_lossy(&req);
    let mut words = head.split_whitespace();
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let resp = if method != "GET" && method != "HEAD" {
        Response {
            status: "405 Method Not Allowed",
            content_type: "text/plain; charset=utf-8",
            body: b"GET only\n".to_vec(),
        }
    } else {
        sites.iter().find_map(|s| (s.respond)(path, query)).unwrap_or_else(|| {
            let paths: Vec<&str> = sites.iter().map(|s| s.paths).collect();
            Response {
                status: "404 Not Found",
                content_type: "text/plain; charset=utf-8",
                body: format!("fiox serves {} only\n", paths.join(" and ")).into_bytes(),
            }
        })
    };
    let head = format!(
        "HTTP/1.1 {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        resp.status,
        resp.content_type,
        resp.body.len()
    );
    let body: &[u8] = if method == "HEAD" { &[] } else { &resp.body };
    let _ = conn.write_all(head.as_bytes()).and_then(|_| conn.write_all(body));
}
