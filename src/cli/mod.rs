//! One flag model for every subcommand (`quick`, `sweep`, `plot`, `compare`, `rados`, `rbd`,
//! `ceph`): each declares its flags in a table of [`Flag`] rows, and the same table parses its
//! arguments ([`args`]), writes the flag lines of its `--help` ([`usage`]) and, through
//! [`crate::SUBCOMMANDS`], gives the man page and the shell completions their flags (`docs`).
//! A flag therefore cannot be accepted without being documented and completed, or documented
//! under another spelling. Commands match on a row's `name`, its one canonical spelling; each
//! command's tests read every row of its table, so a row without a meaning fails a test.
//!
//! This module names nothing else in the crate: the wings depend on it, never the other way.

pub mod docs;

/// What a flag's value completes to in the shells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Complete {
    /// Free text: nothing to offer.
    Text,
    File,
    Dir,
    /// `OPTION=VALUE` (sweep's `--vary`): fio's option names, then that option's values.
    OptionAssign,
    /// The I/O engines fiox runs.
    Engines,
    Words(&'static [&'static str]),
}

/// One flag of a subcommand.
#[derive(Debug, Clone, Copy)]
pub struct Flag {
    /// The canonical spelling, with its dashes (`--io-type`); what commands match on.
    pub name: &'static str,
    /// Other spellings of the same flag (`-p` for `--pool`); parsed, not completed.
    pub aliases: &'static [&'static str],
    /// What `--help` calls the value (`DIR`); `None` for a flag that takes no value.
    pub value: Option<&'static str>,
    pub complete: Complete,
    /// The description, one `--help` line per line; empty for a flag `--help` does not list.
    pub help: &'static str,
}

impl Flag {
    /// A flag without a value.
    pub const fn switch(name: &'static str, help: &'static str) -> Flag {
        Flag { name, aliases: &[], value: None, complete: Complete::Text, help }
    }

    /// A flag with a value that `--help` calls `value`.
    pub const fn value(name: &'static str, value: &'static str, help: &'static str) -> Flag {
        Flag { name, aliases: &[], value: Some(value), complete: Complete::Text, help }
    }

    pub const fn aliases(self, aliases: &'static [&'static str]) -> Flag {
        Flag { aliases, ..self }
    }

    pub const fn completes(self, complete: Complete) -> Flag {
        Flag { complete, ..self }
    }

    /// Whether `spelling` is this flag.
    pub fn is(&self, spelling: &str) -> bool {
        self.name == spelling || self.aliases.contains(&spelling)
    }
}

/// `--help` and `-h`, which every subcommand takes.
pub const HELP: Flag = Flag::switch("--help", "").aliases(&["-h"]);

/// How a subcommand's flags carry their values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// `--name VALUE` or `--name=VALUE`; only a long flag carries its value after `=`.
    Gnu,
    /// `--name=VALUE` only (`quick`, whose flags are fio's options under the same names).
    Equals,
    /// Ceph's tools: as `Gnu`, and a short flag may carry its value after `=` too (`-p=rbd`);
    /// a lone `-` is a word.
    Ceph,
}

/// What a subcommand takes besides its flags, for the completions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operands {
    /// fio's options and job files, as fiox itself takes them (`sweep`'s base job).
    Fio,
    Files,
    Dirs,
    Words(&'static [&'static str]),
    Nothing,
}

/// A flag as `--help` shows it: `--out DIR` (`--out=DIR` in the `Equals` syntax).
pub fn label(f: &Flag, syntax: Syntax) -> String {
    match (f.value, syntax) {
        (Some(v), Syntax::Equals) => format!("{}={v}", f.name),
        (Some(v), _) => format!("{} {v}", f.name),
        (None, _) => f.name.to_string(),
    }
}

/// The labels of the flags `--help` lists.
pub fn labels(flags: &[Flag], syntax: Syntax) -> Vec<String> {
    flags.iter().filter(|f| !f.help.is_empty()).map(|f| label(f, syntax)).collect()
}

/// A command's `--help`: `head` (the usage line and what the command does), one line per flag
/// and line of its description, the descriptions starting at `column`, then `tail`.
pub fn usage(flags: &[Flag], syntax: Syntax, column: usize, head: &str, tail: &str) -> String {
    let width = column - 2;
    let mut s = head.to_string();
    for f in flags.iter().filter(|f| !f.help.is_empty()) {
        let label = label(f, syntax);
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

/// One argument, as a flag table reads it.
#[derive(Debug)]
pub enum Arg<'a> {
    /// One of the table's flags, with its value (empty for a flag that takes none).
    Flag(&'static Flag, String),
    /// Anything else, as typed: a word, or a flag the table does not have (the command says
    /// whether that is an error).
    Other(&'a str),
}

/// Why an argument could not be read; each command words it as its tool does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The flag (as typed) takes a value and none was given.
    NeedsValue(String),
    /// The flag (as typed) takes no value and was given one after `=`.
    TakesNoValue(String),
}

impl Refusal {
    /// The refusal in the lab's words: `sweep: --out needs a value`.
    pub fn message(&self, command: &str) -> String {
        match self {
            Refusal::NeedsValue(n) => format!("{command}: {n} needs a value"),
            Refusal::TakesNoValue(n) => format!("{command}: {n} takes no value"),
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::NeedsValue(n) => write!(f, "{n} needs a value"),
            Refusal::TakesNoValue(n) => write!(f, "{n} takes no value"),
        }
    }
}

impl std::error::Error for Refusal {}

/// A command's arguments, read in order. Reading is lazy, so a command that checks each value
/// as it comes reports the first bad argument, wherever the problem lies.
pub struct Args<'a> {
    flags: &'static [Flag],
    syntax: Syntax,
    args: &'a [String],
    next: usize,
}

/// Reads `args` against the flag table `flags`.
pub fn args<'a>(flags: &'static [Flag], syntax: Syntax, args: &'a [String]) -> Args<'a> {
    Args { flags, syntax, args, next: 0 }
}

impl<'a> Iterator for Args<'a> {
    type Item = Result<Arg<'a>, Refusal>;

    fn next(&mut self) -> Option<Self::Item> {
        let a = self.args.get(self.next)?;
        self.next += 1;
        // Which flags carry their value after '=' (`-h=x` is not `-h` but for Ceph's tools).
        let inline_from = if self.syntax == Syntax::Ceph { "-" } else { "--" };
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if n.starts_with(inline_from) => (n, Some(v)),
            _ => (a.as_str(), None),
        };
        let Some(flag) = self.flags.iter().find(|f| f.is(name)) else {
            return Some(Ok(Arg::Other(a)));
        };
        Some(match (flag.value, inline) {
            (None, None) => Ok(Arg::Flag(flag, String::new())),
            (None, Some(_)) => Err(Refusal::TakesNoValue(name.to_string())),
            (Some(_), Some(v)) => Ok(Arg::Flag(flag, v.to_string())),
            (Some(_), None) if self.syntax == Syntax::Equals => Err(Refusal::NeedsValue(name.to_string())),
            // A value is taken as given, even when it looks like a flag.
            (Some(_), None) => match self.args.get(self.next) {
                Some(v) => {
                    self.next += 1;
                    Ok(Arg::Flag(flag, v.clone()))
                }
                None => Err(Refusal::NeedsValue(name.to_string())),
            },
        })
    }
}

/// Checks a flag table: canonical spellings with dashes, no spelling twice (for the tests).
#[cfg(test)]
pub fn check_table(flags: &[Flag]) -> Result<(), String> {
    let mut seen: Vec<&str> = Vec::new();
    for f in flags {
        for s in std::iter::once(&f.name).chain(f.aliases) {
            if !s.starts_with('-') || s.contains('=') || s.contains(' ') {
                return Err(format!("'{s}' is not a flag's spelling"));
            }
            if seen.contains(s) {
                return Err(format!("'{s}' is in the table twice"));
            }
            seen.push(s);
        }
        if !f.name.starts_with("--") && f.name != "-h" {
            return Err(format!("'{}': a canonical spelling is long (--name)", f.name));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &[Flag] = &[
        HELP,
        Flag::value("--out", "DIR", "where to write\nand more"),
        Flag::switch("--zip", "walk side by side"),
        Flag::value("--pool", "POOL", "the pool").aliases(&["-p"]),
        Flag::value("--target", "METRIC<=TIME", "latency target"),
    ];

    fn read(syntax: Syntax, args: &[&str]) -> Vec<String> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        self::args(T, syntax, &args)
            .map(|a| match a {
                Ok(Arg::Flag(f, v)) => format!("{}={v}", f.name),
                Ok(Arg::Other(a)) => a.to_string(),
                Err(e) => format!("error: {}", e.message("cmd")),
            })
            .collect()
    }

    #[test]
    fn both_spellings_and_a_missing_value() {
        let seen = read(Syntax::Gnu, &["--out=a", "x.json", "--out", "b", "--output=z", "--out"]);
        assert_eq!(seen, ["--out=a", "x.json", "--out=b", "--output=z", "error: cmd: --out needs a value"]);
        // A value is taken as given, even when it looks like a flag.
        assert_eq!(read(Syntax::Gnu, &["--out", "--zip", "--zip"]), ["--out=--zip", "--zip="]);
        assert_eq!(read(Syntax::Gnu, &["--zip=1"]), ["error: cmd: --zip takes no value"]);
        assert_eq!(read(Syntax::Gnu, &["-h=1", "-h", "-p=x", "-p", "y"]), ["-h=1", "--help=", "-p=x", "--pool=y"]);
    }

    #[test]
    fn ceph_and_equals_syntax() {
        assert_eq!(read(Syntax::Ceph, &["-p=x", "-", "-p", "y"]), ["--pool=x", "-", "--pool=y"]);
        assert_eq!(
            read(Syntax::Equals, &["--out=a", "dir", "--out", "b"]),
            ["--out=a", "dir", "error: cmd: --out needs a value", "b"]
        );
    }

    #[test]
    fn help_lines_line_up() {
        let help = usage(T, Syntax::Gnu, 16, "head\n", "tail\n");
        assert!(help.starts_with("head\n  --out DIR     where to write\n                and more\n"), "{help}");
        // Wider than the column: one space.
        assert!(help.contains("  --target METRIC<=TIME latency target\n"), "{help}");
        assert!(help.ends_with("latency target\ntail\n"), "{help}");
        assert!(!help.contains("--help"));
        assert_eq!(labels(T, Syntax::Equals)[0], "--out=DIR");
        assert_eq!(check_table(T), Ok(()));
        assert!(check_table(&[HELP, HELP]).is_err());
    }
}
