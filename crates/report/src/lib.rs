//! fio's output formats as pure functions: `(&RunReport, ...) -> String`. No clock, no
//! environment, no I/O: the runner gathers everything into a [`RunReport`] first.
//!
//! - [`normal`]: the human-readable report (and the lines printed before a run);
//! - [`json`]: JSON and JSON+;
//! - [`terse`]: the `;`-separated terse lines, versions 2 to 5, and a header line;
//! - [`units`]: fio's number formatting, shared by the above.
#![forbid(unsafe_code)]

mod calc;
pub mod json;
pub mod model;
pub mod normal;
pub mod terse;
pub mod units;

#[cfg(test)]
mod testutil;

pub use model::{
    DeviceInfo, DiskAggr, DiskFigures, DiskUtil, JobReport, Manifest, Overhead, RunReport, Units, DEFAULT_PERCENTILES,
};
