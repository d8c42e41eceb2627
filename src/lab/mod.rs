//! fiox's laboratory: `sweep` (run a job over axes of option values, with repeats, resume and
//! knee finding), `plot` (charts from existing fio/fiox reports and logs) and `compare`
//! (results side by side, with ratios and significance). They share one reader of fio's JSON
//! ([`results`]), one table builder ([`summary`]), the chart choices ([`charts`], drawn by
//! `fiox-charts`) and the page ([`html`]).
//!
//! Architecture Invariant: nothing here does benchmark I/O itself; a sweep's points are runs of
//! the fiox binary, and everything else reads reports.

pub mod axis;
pub mod base;
pub mod charts;
pub mod cli;
pub mod compare;
pub mod html;
pub mod knee;
pub mod logs;
pub mod outputs;
pub mod plot;
pub mod results;
pub mod runner;
pub mod stats;
pub mod summary;
pub mod sweep;
