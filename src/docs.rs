//! `fiox man` and `fiox completions SHELL`: the manual page and the shell completions, made by
//! `fiox-options` from the option table, given here what only the binary knows: the
//! subcommands and their flags, the engines it runs, and the README's list of deliberate
//! differences from fio (compiled in, so the page says what the README says). The checked-in
//! copies (`docs/fiox.1`, `completions/`) are compared with these by the integration tests.

use std::process::ExitCode;

use anyhow::{bail, Result};
use fiox_options::completions::{self, Flag, Operands, Shell, Value};
use fiox_options::manpage::{self, Page};
use fiox_options::table;

use crate::lab::cli::{self, Command};
use crate::SUBCOMMANDS;

/// The page's date: when its content last changed in substance. The tests compare the page
/// with its checked-in copy, not with the calendar, so this moves only when someone moves it.
const DATE: &str = "2026-11-25";

const README: &str = include_str!("../README.md");

/// The README's section on deliberate differences, as Markdown.
fn differences() -> &'static str {
    let start =
        README.find("## Where fiox differs from fio on purpose").expect("the README has its differences section");
    let body = &README[start..];
    let body = &body[body.find('\n').map_or(body.len(), |i| i + 1)..];
    &body[..body.find("\n## ").unwrap_or(body.len())]
}

/// The whole manual page.
pub fn page() -> String {
    let subcommands: Vec<manpage::Subcommand> = SUBCOMMANDS
        .iter()
        .map(|s| manpage::Subcommand { name: s.name, args: s.args, summary: s.summary, help: (s.help)() })
        .collect();
    manpage::render(&Page {
        version: env!("CARGO_PKG_VERSION"),
        date: DATE,
        subcommands: &subcommands,
        engines: &fiox_engine::names(),
        differences: differences(),
    })
}

/// The subcommands as the completions see them: their flags from the flag tables.
fn completion_subcommands() -> Vec<completions::Subcommand> {
    let engines: Vec<String> = match table::lookup("ioengine").map(|o| o.kind) {
        Some(table::Kind::Choice(c)) => c.iter().map(|c| c.word.to_string()).collect(),
        _ => Vec::new(),
    };
    let lab = |command: Command| -> Vec<Flag> {
        let mut flags: Vec<Flag> = Vec::new();
        for f in cli::FLAGS.iter().filter(|f| f.commands.contains(&command) && f.name.starts_with("--")) {
            if flags.iter().any(|g| g.name == f.name) {
                continue;
            }
            let value = f.value.map(|v| match v {
                "DIR" => Value::Dir,
                "OPTION=VALUES" => Value::OptionAssign,
                _ => Value::Text,
            });
            let help =
                if f.name == "--help" { "print the command's help" } else { f.help.lines().next().unwrap_or("") };
            flags.push(Flag { name: f.name.to_string(), value, attached: false, help: help.to_string() });
        }
        flags
    };
    SUBCOMMANDS
        .iter()
        .map(|s| {
            let (flags, operands) = match s.name {
                "quick" => (
                    crate::lab::quick::FLAGS
                        .iter()
                        .map(|(name, value, help)| Flag {
                            name: name.to_string(),
                            value: Some(if *value == "ENGINE" { Value::Words(engines.clone()) } else { Value::Text }),
                            attached: true,
                            help: help.to_string(),
                        })
                        .collect(),
                    Operands::Dirs,
                ),
                "ceph" => (
                    crate::ceph::run::FLAGS
                        .iter()
                        .map(|(name, value, help)| Flag {
                            name: name.to_string(),
                            value: Some(if *value == "DIR" { Value::Dir } else { Value::Text }),
                            attached: true,
                            help: help.to_string(),
                        })
                        .chain(crate::ceph::run::SWITCHES.iter().map(|(name, help)| Flag {
                            name: name.to_string(),
                            value: None,
                            attached: false,
                            help: help.to_string(),
                        }))
                        .collect(),
                    Operands::Nothing,
                ),
                "sweep" => (lab(Command::Sweep), Operands::Fio),
                "plot" => (lab(Command::Plot), Operands::Files),
                "compare" => (lab(Command::Compare), Operands::Files),
                "completions" => {
                    (Vec::new(), Operands::Words(Shell::ALL.iter().map(|s| s.name().to_string()).collect()))
                }
                _ => (Vec::new(), Operands::Nothing),
            };
            completions::Subcommand { name: s.name.to_string(), summary: s.summary.to_string(), flags, operands }
        })
        .collect()
}

/// The completion script for `shell`.
pub fn script(shell: Shell) -> String {
    completions::render(shell, &completion_subcommands())
}

pub fn man_help() -> String {
    "usage: fiox man\n\nPrints fiox's manual page (roff): fiox man > fiox.1; man -l fiox.1\n".to_string()
}

/// `fiox man`: prints the page.
pub fn man(args: &[String]) -> Result<ExitCode> {
    match args {
        [] => print!("{}", page()),
        [h] if h == "--help" || h == "-h" => print!("{}", man_help()),
        _ => bail!("man: takes no arguments (fiox man > fiox.1)"),
    }
    Ok(ExitCode::SUCCESS)
}

pub fn completions_help() -> String {
    "usage: fiox completions bash|zsh|fish\n\n\
     Prints the shell's completion script for fiox, for example:\n  \
     fiox completions bash > ~/.local/share/bash-completion/completions/fiox\n  \
     fiox completions zsh > ~/.zfunc/_fiox      (a directory in $fpath)\n  \
     fiox completions fish > ~/.config/fish/completions/fiox.fish\n"
        .to_string()
}

/// `fiox completions SHELL`: prints the script.
pub fn completions(args: &[String]) -> Result<ExitCode> {
    match args {
        [h] if h == "--help" || h == "-h" => print!("{}", completions_help()),
        [s] => match Shell::parse(s) {
            Some(shell) => print!("{}", script(shell)),
            None => bail!("completions: unknown shell '{s}'; use bash, zsh or fish"),
        },
        _ => bail!("completions: give one shell: bash, zsh or fish"),
    }
    Ok(ExitCode::SUCCESS)
}
