//! The lab's flags: one table says which flags `sweep`, `plot` and `compare` take, whether each
//! takes a value (written `--name VALUE` or `--name=VALUE`) and what it does. The same table
//! parses the commands' arguments and writes the flag lines of their `--help`, so a flag cannot
//! be accepted without being documented, or documented under another spelling.

use anyhow::{anyhow, Result};

/// A lab subcommand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Sweep,
    Plot,
    Compare,
}

impl Command {
    fn name(self) -> &'static str {
        match self {
            Command::Sweep => "sweep",
            Command::Plot => "plot",
            Command::Compare => "compare",
        }
    }

    /// The column where `--help` starts the flags' descriptions.
    fn column(self) -> usize {
        match self {
            Command::Sweep => 24,
            Command::Plot => 16,
            Command::Compare => 22,
        }
    }
}

/// What a flag does. Commands match on this, so a flag's spelling is written only in the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Id {
    Help,
    Vary,
    Zip,
    Repeat,
    RepeatUntil,
    RepeatMax,
    Pause,
    Out,
    FindKnee,
    Target,
    MaxIodepth,
    Live,
    Title,
    Names,
    FailIfSlower,
}

/// One flag of one or more lab commands.
#[derive(Debug)]
pub struct Flag {
    pub id: Id,
    pub name: &'static str,
    /// What `--help` calls the value (`DIR`); `None` for a flag that takes no value.
    pub value: Option<&'static str>,
    /// The description, one `--help` line per line; empty for a flag `--help` does not list.
    pub help: &'static str,
    pub commands: &'static [Command],
}

use Command::{Compare, Plot, Sweep};

/// Every lab flag, in the order `--help` lists them. `--out` is three rows because each command
/// writes something different there.
pub const FLAGS: &[Flag] = &[
    Flag { id: Id::Help, name: "--help", value: None, help: "", commands: &[Sweep, Plot, Compare] },
    Flag { id: Id::Help, name: "-h", value: None, help: "", commands: &[Sweep, Plot, Compare] },
    Flag {
        id: Id::Vary,
        name: "--vary",
        value: Some("OPTION=VALUES"),
        help: "an axis: 1,2,4,8 | 1..64:x2 | 10..60:+10 | 1k,2k,4k,...,64m | randread,write\n\
               (values with commas of their own: separate them with ';')",
        commands: &[Sweep],
    },
    Flag {
        id: Id::Zip,
        name: "--zip",
        value: None,
        help: "walk the axes side by side instead of their cross product",
        commands: &[Sweep],
    },
    Flag {
        id: Id::Repeat,
        name: "--repeat",
        value: Some("N"),
        help: "run every point N times: means and 95% confidence intervals",
        commands: &[Sweep],
    },
    Flag {
        id: Id::RepeatUntil,
        name: "--repeat-until",
        value: Some("METRIC:BOUND%"),
        help: "run each point again until the 95% confidence interval of METRIC's\n\
               mean (iops, bw, lat, p99) is within BOUND% of it (at least 3 runs;\n\
               exit status 2 if a point never gets there)",
        commands: &[Sweep],
    },
    Flag {
        id: Id::RepeatMax,
        name: "--repeat-max",
        value: Some("N"),
        help: "at most N runs per point with --repeat-until (default 10)",
        commands: &[Sweep],
    },
    Flag {
        id: Id::Pause,
        name: "--pause",
        value: Some("TIME"),
        help: "wait between runs (10s, 500ms; a bare number is seconds)",
        commands: &[Sweep],
    },
    Flag {
        id: Id::Out,
        name: "--out",
        value: Some("DIR"),
        help: "the results folder (default fiox-sweep); running the same sweep\n\
               again into it resumes where it stopped",
        commands: &[Sweep],
    },
    Flag {
        id: Id::FindKnee,
        name: "--find-knee",
        value: None,
        help: "search iodepth (and numjobs, if given with --vary) for the highest\n\
               throughput that meets --target, instead of running every point",
        commands: &[Sweep],
    },
    Flag {
        id: Id::Target,
        name: "--target",
        value: Some("METRIC<=TIME"),
        help: "latency target for --find-knee: mean, p50 ... p99.99 (p99<=2ms)",
        commands: &[Sweep],
    },
    Flag {
        id: Id::MaxIodepth,
        name: "--max-iodepth",
        value: Some("N"),
        help: "the deepest queue --find-knee tries (default 1024)",
        commands: &[Sweep],
    },
    Flag {
        id: Id::Live,
        name: "--live",
        value: Some("ADDR"),
        help: "serve a live page at http://ADDR/ while the sweep runs: the running point's\n\
               IOPS, bandwidth and latency each second, and the finished points\n\
               (ADDR: host:port, or a port on 127.0.0.1)",
        commands: &[Sweep],
    },
    Flag {
        id: Id::Out,
        name: "--out",
        value: Some("DIR"),
        help: "where to write (default fiox-plot)",
        commands: &[Plot],
    },
    Flag { id: Id::Title, name: "--title", value: Some("TEXT"), help: "the page's title", commands: &[Plot] },
    Flag {
        id: Id::Names,
        name: "--names",
        value: Some("a,b,..."),
        help: "what to call the sides (default: their file or folder names)",
        commands: &[Compare],
    },
    Flag {
        id: Id::FailIfSlower,
        name: "--fail-if-slower",
        value: Some("P"),
        help: "exit with status 2 if IOPS fell or mean latency rose by more than P%\n\
               on any job (when both sides have repeated runs: only if significant)",
        commands: &[Compare],
    },
    Flag {
        id: Id::Out,
        name: "--out",
        value: Some("DIR"),
        help: "also write bar charts (PNG, SVG) and an index.html with the table",
        commands: &[Compare],
    },
];

fn flags(command: Command) -> impl Iterator<Item = &'static Flag> {
    FLAGS.iter().filter(move |f| f.commands.contains(&command))
}

/// A flag as `--help` shows it: `--out DIR`.
fn label(f: &Flag) -> String {
    match f.value {
        Some(v) => format!("{} {v}", f.name),
        None => f.name.to_string(),
    }
}

/// The labels of the flags `--help` lists for `command`.
pub fn labels(command: Command) -> Vec<String> {
    flags(command).filter(|f| !f.help.is_empty()).map(label).collect()
}

/// A command's `--help`: `head` (the usage line and what the command does), one line per flag
/// and line of its description, then `tail`.
pub fn usage(command: Command, head: &str, tail: &str) -> String {
    let width = command.column() - 2;
    let mut s = head.to_string();
    for f in flags(command).filter(|f| !f.help.is_empty()) {
        let label = label(f);
        for (i, line) in f.help.lines().enumerate() {
            let left = if i == 0 { label.as_str() } else { "" };
            // A label as wide as the column still gets one space before its description.
            let pad = width.saturating_sub(left.len()).max(if left.is_empty() { 0 } else { 1 });
            s.push_str(&format!("  {left}{}{line}\n", " ".repeat(pad)));
        }
    }
    s.push_str(tail);
    s
}

/// One argument of a lab command, as the table reads it.
#[derive(Debug)]
pub enum Arg<'a> {
    /// One of the command's flags, with its value (empty for a flag that takes none).
    Flag(&'static Flag, String),
    /// Anything else, as typed: fio's options and job files for `sweep`, the results to read
    /// (or an unknown option) for `plot` and `compare`.
    Other(&'a str),
}

/// A command's arguments, read in order. Reading is lazy, so a command that checks each value
/// as it comes reports the first bad argument, wherever the problem lies.
pub struct Args<'a> {
    command: Command,
    args: &'a [String],
    next: usize,
}

/// Reads `args` as `command`'s arguments.
pub fn args(command: Command, args: &[String]) -> Args<'_> {
    Args { command, args, next: 0 }
}

impl<'a> Iterator for Args<'a> {
    type Item = Result<Arg<'a>>;

    fn next(&mut self) -> Option<Result<Arg<'a>>> {
        let a = self.args.get(self.next)?;
        self.next += 1;
        // Only a long flag carries its value after '=' (`-h=x` is not `-h`).
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v)),
            _ => (a.as_str(), None),
        };
        let Some(flag) = flags(self.command).find(|f| f.name == name) else {
            return Some(Ok(Arg::Other(a)));
        };
        let command = self.command.name();
        Some(match (flag.value, inline) {
            (None, None) => Ok(Arg::Flag(flag, String::new())),
            (None, Some(_)) => Err(anyhow!("{command}: {name} takes no value")),
            (Some(_), Some(v)) => Ok(Arg::Flag(flag, v.to_string())),
            (Some(_), None) => match self.args.get(self.next) {
                Some(v) => {
                    self.next += 1;
                    Ok(Arg::Flag(flag, v.clone()))
                }
                None => Err(anyhow!("{command}: {name} needs a value")),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(command: Command, args: &[&str]) -> Vec<String> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        self::args(command, &args)
            .map(|a| match a {
                Ok(Arg::Flag(f, v)) => format!("{:?}={v}", f.id),
                Ok(Arg::Other(a)) => a.to_string(),
                Err(e) => format!("error: {e}"),
            })
            .collect()
    }

    #[test]
    fn both_spellings_and_a_missing_value() {
        let seen = read(Plot, &["--out=a", "x.json", "--out", "b", "--output=z", "--out"]);
        assert_eq!(seen, ["Out=a", "x.json", "Out=b", "--output=z", "error: plot: --out needs a value"]);
        // A value is taken as given, even when it looks like a flag.
        assert_eq!(read(Sweep, &["--out", "--zip", "--zip"]), ["Out=--zip", "Zip="]);
        assert_eq!(read(Sweep, &["--zip=1"]), ["error: sweep: --zip takes no value"]);
        assert_eq!(read(Compare, &["-h=1", "-h", "--title", "t"]), ["-h=1", "Help=", "--title", "t"]);
    }

    #[test]
    fn every_flag_is_listed_by_the_commands_that_take_it() {
        for f in FLAGS {
            assert!(f.name.starts_with('-') && !f.name.contains('='), "{}", f.name);
            for &c in f.commands {
                let help = usage(c, "", "");
                assert_eq!(help.contains(&format!("  {} ", label(f))), !f.help.is_empty(), "{} in {c:?}", f.name);
                let others = FLAGS.iter().filter(|g| g.name == f.name && g.commands.contains(&c)).count();
                assert_eq!(others, 1, "{} is in {c:?} twice", f.name);
            }
        }
        assert_eq!(labels(Plot), ["--out DIR", "--title TEXT"]);
    }

    #[test]
    fn help_lines_line_up() {
        let help = usage(Compare, "head\n", "tail\n");
        assert!(help.starts_with("head\n  --names a,b,...     what to call the sides"), "{help}");
        assert!(help.contains(
            "  --fail-if-slower P  exit with status 2 if IOPS fell or mean latency rose by more than P%\n\
             \x20                     on any job (when both sides"
        ));
        assert!(help.ends_with("with the table\ntail\n"), "{help}");
        // Wider than the column: one space.
        assert!(usage(Sweep, "", "").contains("  --target METRIC<=TIME latency target"));
    }
}
