//! fio's output formats as pure functions: `(&RunReport, ...) -> String`. No clock, no
//! environment, no I/O: the runner gathers everything into a [`RunReport`] first.
//!
//! - [`render`]: a finished report in one format, with the [`ReportOpts`] the command line set;
//! - [`normal`]: the human-readable report (and the lines printed before a run);
//! - [`json`]: JSON and JSON+, pretty as fio prints them or on one line;
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
    CephImage, CephManifest, CephObjects, ClientsReport, DeviceInfo, DiskAggr, DiskFigures, DiskUtil, EngineSetup,
    FirstDone, HostEntry, JobReport, LatencyTargetReport, Manifest, Overhead, RepeatSummary, RunReport, SteadyReport,
    Units, DEFAULT_PERCENTILES,
};

/// fio's output formats (`--output-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Normal,
    Terse,
    Json,
    JsonPlus,
}

/// How a report is printed, beyond its format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReportOpts {
    /// fio's `--terse-version`: 2 to 5.
    pub terse_version: u8,
    /// A line of field names before the terse lines (fiox's `--terse-header`).
    pub terse_header: bool,
    /// Each JSON document on one line (fiox's `--json-lines`).
    pub json_lines: bool,
}

/// A finished report in one format, as printed.
pub fn render(format: Format, report: &RunReport, opts: &ReportOpts) -> String {
    match format {
        Format::Json | Format::JsonPlus => {
            let plus = format == Format::JsonPlus;
            if opts.json_lines {
                json::render_line(report, plus)
            } else {
                json::render(report, plus)
            }
        }
        Format::Terse if opts.terse_header => {
            // The header names the fields of the report's own shape: its disks, and the
            // directions of its reporting mode.
            let unified = report.jobs.first().map(|j| j.unified).unwrap_or_default();
            terse::header_with_disks(opts.terse_version, report.disks.len(), unified)
                + &terse::render(report, opts.terse_version)
        }
        Format::Terse => terse::render(report, opts.terse_version),
        Format::Normal => normal::render(report),
    }
}

/// A multi-host run's report in one format: fio 3.33's client layout (per-host entries in
/// host-list order, then "All clients") with fiox's corrections and additions (see
/// [`json::render_clients`], [`normal::render_clients`], [`terse::render_clients`]).
pub fn render_clients(format: Format, report: &ClientsReport, opts: &ReportOpts) -> String {
    match format {
        Format::Json | Format::JsonPlus => json::render_clients(report, format == Format::JsonPlus, opts.json_lines),
        Format::Terse => {
            let head = if opts.terse_header { terse::header(opts.terse_version) } else { String::new() };
            head + &terse::render_clients(report, opts.terse_version)
        }
        Format::Normal => normal::render_clients(report),
    }
}
