//! The option table, one file per group of options. Each row is one [`OptDef`]; the order of
//! rows within a file is the order `--cmdhelp` prints them in.
//!
//! Options marked `not_yet()` are fio options the runner does not implement: fiox parses them so
//! that it can say exactly that, instead of "unknown option" or, worse, ignoring them.

use crate::table::OptDef;

pub use placement::{Placement, PlacementMode};

pub(crate) mod engine;
mod general;
mod host;
mod io;
mod placement;
mod profile;
mod replay;
mod report;
mod verify;

/// All tables, in `--cmdhelp` order.
pub(crate) static TABLES: &[&[OptDef]] = &[
    general::DEFS,
    host::DEFS,
    io::DEFS,
    placement::DEFS,
    report::DEFS,
    engine::DEFS,
    engine::io_uring::DEFS,
    engine::io_uring_cmd::DEFS,
    engine::libblkio::DEFS,
    engine::sg::DEFS,
    engine::cpuio::DEFS,
    engine::exec::DEFS,
    engine::e4defrag::DEFS,
    engine::net::DEFS,
    engine::others::DEFS,
    engine::gfapi::DEFS,
    engine::ceph::DEFS,
    engine::http::DEFS,
    profile::DEFS,
    replay::DEFS,
    verify::DEFS,
];
