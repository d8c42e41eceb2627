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

use crate::cli::{self, Complete, Syntax, HELP};
use crate::SUBCOMMANDS;

/// The page's date: when its content last changed in substance. The tests compare the page
/// with its checked-in copy, not with the calendar, so this moves only when someone moves it.
const DATE: &str = "2026-11-25";

const README: &str = include_str!("../../README.md");

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

/// The shells `fiox completions` writes for, as `Shell` names them.
pub const SHELLS: &[&str] = &["bash", "zsh", "fish"];

/// The subcommands as the completions see them: their flags from their flag tables.
fn completion_subcommands() -> Vec<completions::Subcommand> {
    let engines: Vec<String> = match table::lookup("ioengine").map(|o| o.kind) {
        Some(table::Kind::Choice(c)) => c.iter().map(|c| c.word.to_string()).collect(),
        _ => Vec::new(),
    };
    let words = |w: &[&str]| w.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    SUBCOMMANDS
        .iter()
        .map(|s| {
            let flags = s
                .flags
                .iter()
                .map(|f| Flag {
                    name: f.name.to_string(),
                    value: f.value.map(|_| match f.complete {
                        Complete::Text => Value::Text,
                        Complete::File => Value::File,
                        Complete::Dir => Value::Dir,
                        Complete::OptionAssign => Value::OptionAssign,
                        Complete::Engines => Value::Words(engines.clone()),
                        Complete::Words(w) => Value::Words(words(w)),
                    }),
                    attached: s.syntax == Syntax::Equals,
                    help: if f.name == HELP.name {
                        "print the command's help".to_string()
                    } else {
                        f.help.lines().next().unwrap_or("").to_string()
                    },
                })
                .collect();
            let operands = match s.operands {
                cli::Operands::Fio => Operands::Fio,
                cli::Operands::Files => Operands::Files,
                cli::Operands::Dirs => Operands::Dirs,
                cli::Operands::Words(w) => Operands::Words(words(w)),
                cli::Operands::Nothing => Operands::Nothing,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_subcommand_table_is_well_formed() {
        let shells: Vec<&str> = Shell::ALL.iter().map(|s| s.name()).collect();
        assert_eq!(shells, SHELLS);
        for s in SUBCOMMANDS {
            assert_eq!(cli::check_table(s.flags), Ok(()), "{}", s.name);
            assert!(s.flags.iter().any(|f| f.name == HELP.name), "{} takes --help", s.name);
        }
    }
}
