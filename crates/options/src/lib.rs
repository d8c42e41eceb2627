//! fio-compatible options: the option table, value syntax, job files and command lines.
//!
//! Architecture Invariant: this crate does no I/O besides reading job files; it never touches a
//! device, and it has no `unsafe`.
#![forbid(unsafe_code)]
// Errors carry the option, value, origin and accepted forms so messages can name them all; they
// are built once per run at most, so their size costs nothing worth boxing for.
#![allow(clippy::result_large_err)]

pub mod argv;
pub mod choices;
pub mod completions;
mod defs;
pub mod errno;
pub mod error;
mod expr;
pub mod fuzz;
pub mod help;
pub mod host;
pub mod iolog;
pub mod job;
pub mod jobfile;
pub mod manpage;
pub mod profile;
pub mod repeat;
pub mod showcmd;
pub mod spec;
pub mod table;
pub mod value;

pub use choices::{
    ClockSource, DedupeMode, ErrorPolicy, ExitWhat, Fadvise, Fallocate, FileService, LockMode, MemKind,
    RandomGenerator, UnifiedRw,
};
pub use error::{Error, Origin};
pub use job::{assemble, Job, JobSet};
pub use spec::{
    CephOpts, JobSpec, LatencyTarget, PrioRule, RandomDist, ReplaySpec, SizeSpec, SteadyState, SyncFileRange,
    VerifySpec, ZoneMode, ZoneSpec,
};
pub use value::{Ctx, RwMode};
