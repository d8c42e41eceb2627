//! The lab's flags: one table per command (`sweep`, `plot`, `compare`) in the crate's flag model
//! (`crate::cli`), which parses the commands' arguments, writes the flag lines of their
//! `--help` and gives the man page and the completions their flags.

use crate::cli::{Complete, Flag, HELP};

/// The column where `--help` starts the flags' descriptions, per command.
pub const SWEEP_COLUMN: usize = 24;
pub const PLOT_COLUMN: usize = 16;
pub const COMPARE_COLUMN: usize = 22;

/// `sweep`'s flags, in the order `--help` lists them; everything else is the base job.
pub const SWEEP: &[Flag] = &[
    HELP,
    Flag::value(
        "--vary",
        "OPTION=VALUES",
        "an axis: 1,2,4,8 | 1..64:x2 | 10..60:+10 | 1k,2k,4k,...,64m | randread,write\n\
         (values with commas of their own: separate them with ';')",
    )
    .completes(Complete::OptionAssign),
    Flag::switch("--zip", "walk the axes side by side instead of their cross product"),
    Flag::value("--repeat", "N", "run every point N times: means and 95% confidence intervals"),
    Flag::value(
        "--repeat-until",
        "METRIC:BOUND%",
        "run each point again until the 95% confidence interval of METRIC's\n\
         mean (iops, bw, lat, p99) is within BOUND% of it (at least 3 runs;\n\
         exit status 2 if a point never gets there)",
    ),
    Flag::value("--repeat-max", "N", "at most N runs per point with --repeat-until (default 10)"),
    Flag::value("--pause", "TIME", "wait between runs (10s, 500ms; a bare number is seconds)"),
    Flag::value(
        "--out",
        "DIR",
        "the results folder (default fiox-sweep); running the same sweep\n\
         again into it resumes where it stopped",
    )
    .completes(Complete::Dir),
    Flag::switch(
        "--find-knee",
        "search iodepth (and numjobs, if given with --vary) for the highest\n\
         throughput that meets --target, instead of running every point",
    ),
    Flag::value("--target", "METRIC<=TIME", "latency target for --find-knee: mean, p50 ... p99.99 (p99<=2ms)"),
    Flag::value("--max-iodepth", "N", "the deepest queue --find-knee tries (default 1024)"),
    Flag::value(
        "--live",
        "ADDR",
        "serve a live page at http://ADDR/ while the sweep runs: the running point's\n\
         IOPS, bandwidth and latency each second, and the finished points\n\
         (ADDR: host:port, or a port on 127.0.0.1)",
    ),
];

/// `plot`'s flags; everything else is the results to plot.
pub const PLOT: &[Flag] = &[
    HELP,
    Flag::value("--out", "DIR", "where to write (default fiox-plot)").completes(Complete::Dir),
    Flag::value("--title", "TEXT", "the page's title"),
];

/// `compare`'s flags; everything else is the results to compare.
pub const COMPARE: &[Flag] = &[
    HELP,
    Flag::value("--names", "a,b,...", "what to call the sides (default: their file or folder names)"),
    Flag::value(
        "--fail-if-slower",
        "P",
        "exit with status 2 if IOPS fell or mean latency rose by more than P%\n\
         on any job (when both sides have repeated runs: only if significant)",
    ),
    Flag::value("--out", "DIR", "also write bar charts (PNG, SVG) and an index.html with the table")
        .completes(Complete::Dir),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{check_table, labels, usage, Syntax};

    #[test]
    fn tables_are_well_formed() {
        for t in [SWEEP, PLOT, COMPARE] {
            assert_eq!(check_table(t), Ok(()));
        }
        assert_eq!(labels(PLOT, Syntax::Gnu), ["--out DIR", "--title TEXT"]);
    }

    #[test]
    fn help_lines_line_up() {
        let help = usage(COMPARE, Syntax::Gnu, COMPARE_COLUMN, "head\n", "tail\n");
        assert!(help.starts_with("head\n  --names a,b,...     what to call the sides"), "{help}");
        assert!(help.contains(
            "  --fail-if-slower P  exit with status 2 if IOPS fell or mean latency rose by more than P%\n\
             \x20                     on any job (when both sides"
        ));
        assert!(help.ends_with("with the table\ntail\n"), "{help}");
        // Wider than the column: one space.
        assert!(usage(SWEEP, Syntax::Gnu, SWEEP_COLUMN, "", "").contains("  --target METRIC<=TIME latency target"));
    }
}
