//! fiox's multi-host protocol, in a room of its own: how a coordinator (`fiox --client=...`)
//! and servers (`fiox --server`) reach each other and what they say. It knows nothing about
//! jobs, engines or reports' layout; the binary's `src/multihost/` runs jobs on the server side
//! and merges and renders on the coordinator side.
//!
//! Layers, bottom up:
//! - [`transport`]: a connected byte stream of any kind ([`transport::Duplex`]): TCP on
//!   loopback, a unix socket, the standard streams of `fiox --server=stdio` under ssh or
//!   `--rsh`, or TLS 1.3 to a standing server. Everything above works on any of them.
//! - [`tls`] (with [`auth`]): TLS 1.3 to a standing server, authenticated by a shared secret
//!   proven inside the session or by mutual TLS; [`ssh`]: `fiox --server=stdio` started on the
//!   host by the system's ssh or any launcher (`--rsh`). Both hand back a `Duplex`.
//! - [`net`]: fio's `--server=`/`--client=` spellings, listeners, and the two places where
//!   transports are secured ([`net::accept_secure`], [`net::connect_secure`]).
//! - [`frame`]: length-prefixed frames with a cap checked before allocating.
//! - [`msg`]: the closed message enum and its one codec.
//! - [`handshake`]: the magic, version negotiation, shell noise, fio clients recognised.
//! - [`fuzz`]: fuzz targets for everything a peer's bytes reach.
#![forbid(unsafe_code)]

pub mod auth;
pub mod frame;
pub mod fuzz;
pub mod handshake;
pub mod msg;
pub mod net;
pub mod ssh;
pub mod tls;
pub mod transport;
