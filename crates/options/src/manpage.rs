//! `fiox.1`, the manual page, generated from the option table and the switch table, so that it
//! cannot describe an option differently from `--cmdhelp` or the parser. What the table does not
//! hold (the subcommands' `--help`, the engines fiox runs, the README's list of deliberate
//! differences) comes in through [`Page`] from the binary, which owns those texts. Pure: text in,
//! roff out.

use std::fmt::Write;

use crate::argv::{Arg, SWITCHES};
use crate::table::{self, Category, Kind, OptDef, Support};
use crate::value::RwMode;

/// A subcommand as the page shows it.
pub struct Subcommand<'a> {
    pub name: &'a str,
    /// The arguments after `fiox NAME` in the synopsis.
    pub args: &'a str,
    pub summary: &'a str,
    /// The command's `--help`, shown as it prints.
    pub help: String,
}

/// What the page needs besides the option table.
pub struct Page<'a> {
    pub version: &'a str,
    /// `YYYY-MM-DD`, for the page's header.
    pub date: &'a str,
    pub subcommands: &'a [Subcommand<'a>],
    /// The engines fiox can run; the table's other engines are accepted in job files only.
    pub engines: &'a [&'a str],
    /// The README's bullet list of deliberate differences from fio, in Markdown.
    pub differences: &'a str,
}

/// Text for a roff line: backslashes, hyphens (so that `--rw` is copied as typed), quotes and
/// anything outside ASCII escaped.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\e"),
            '-' => out.push_str("\\-"),
            '\'' => out.push_str("\\(aq"),
            '`' => out.push_str("\\(ga"),
            '"' => out.push_str("\\(dq"),
            '^' => out.push_str("\\(ha"),
            '~' => out.push_str("\\(ti"),
            c if c.is_ascii() && !c.is_ascii_control() => out.push(c),
            '\t' => out.push_str("        "),
            c => {
                let _ = write!(out, "\\[u{:04X}]", c as u32);
            }
        }
    }
    out
}

/// One line of running text: escaped, and protected from being read as a request when it starts
/// with a dot or an apostrophe.
fn text(out: &mut String, s: &str) {
    let e = esc(s);
    if e.starts_with('.') || e.starts_with('\'') || e.is_empty() {
        out.push_str("\\&");
    }
    out.push_str(&e);
    out.push('\n');
}

/// A preformatted block (a command's `--help`), line for line.
fn verbatim(out: &mut String, block: &str) {
    out.push_str(".RS 4\n.nf\n");
    for l in block.trim_end_matches('\n').lines() {
        if l.trim().is_empty() {
            out.push_str(".sp\n");
        } else {
            text(out, l);
        }
    }
    out.push_str(".fi\n.RE\n");
}

/// Markdown's inline code (`` `bs=4k` ``) in bold, everything else as text.
fn inline_md(s: &str) -> String {
    let mut out = String::new();
    for (i, part) in s.split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "\\fB{}\\fR", esc(part));
        } else {
            out.push_str(&esc(part));
        }
    }
    if out.starts_with('.') || out.starts_with('\'') {
        out.insert_str(0, "\\&");
    }
    out
}

/// A Markdown bullet list (`- ` items, continuation lines indented) as roff bullets.
fn bullets(out: &mut String, md: &str) {
    let mut items: Vec<String> = Vec::new();
    for l in md.lines() {
        if let Some(rest) = l.strip_prefix("- ") {
            items.push(rest.trim().to_string());
        } else if let (Some(last), false) = (items.last_mut(), l.trim().is_empty()) {
            last.push(' ');
            last.push_str(l.trim());
        }
    }
    for item in items {
        out.push_str(".IP \\(bu 2\n");
        out.push_str(&inline_md(&item));
        out.push('\n');
    }
}

/// The words a choice option takes, with their help (`rw`'s words have none), each once.
pub fn choices(o: &OptDef) -> Vec<(&'static str, &'static str)> {
    let mut v: Vec<(&'static str, &'static str)> = match o.kind {
        Kind::Choice(c) => c.iter().map(|c| (c.word, c.help)).collect(),
        Kind::Rw => RwMode::WORDS.iter().map(|(w, _)| (*w, "")).collect(),
        Kind::Bool => vec![("0", "off"), ("1", "on")],
        _ => Vec::new(),
    };
    let mut seen = std::collections::HashSet::new();
    v.retain(|(w, _)| seen.insert(*w));
    v
}

/// The option's entry under OPTIONS.
fn option(out: &mut String, o: &OptDef) {
    out.push_str(".TP\n");
    let value = if o.takes_no_value() { String::new() } else { "=\\fIvalue\\fR".to_string() };
    let _ = writeln!(out, "\\fB\\-\\-{}\\fR{value}", esc(o.name));
    text(out, o.help);
    let takes = match o.kind {
        Kind::Choice(_) if o.per_dir => "one of the values below; or a read,write,trim list of them".to_string(),
        Kind::Choice(_) => "one of the values below".to_string(),
        _ => o.forms(),
    };
    let mut facts = vec![format!("Takes {takes}.")];
    if let Some(d) = o.default {
        facts.push(format!("Default: {d}."));
    }
    if !o.aliases.is_empty() {
        facts.push(format!("Aliases: {}.", o.aliases.join(", ")));
    }
    if !o.engines.is_empty() {
        facts.push(format!(
            "Option of the engine{} {}.",
            if o.engines.len() > 1 { "s" } else { "" },
            o.engines.join(", ")
        ));
    }
    if !o.extra_engines.is_empty() {
        facts.push(format!("fiox also takes it with {}.", o.extra_engines.join(", ")));
    }
    if let Some(p) = o.parent {
        facts.push(format!("Refines {p}."));
    }
    match o.support {
        Support::Full => {}
        Support::Only(v) => facts.push(format!("fiox honours only {}; other values are refused.", v.join(", "))),
        Support::NotYet => facts.push("Not supported yet by fiox: any value but the default is refused.".into()),
    }
    for f in facts {
        out.push_str(".br\n");
        // A long default (`percentile_list`'s) may break after its colons: `\:` marks a place
        // to break that prints nothing.
        let mut line = String::new();
        text(&mut line, &f);
        out.push_str(&line.replace(':', ":\\:"));
    }
    if let Kind::Choice(_) = o.kind {
        out.push_str(".RS\n");
        for (w, h) in choices(o) {
            out.push_str(".TP\n");
            let _ = writeln!(out, "\\fB{}\\fR", esc(w));
            text(out, h);
        }
        out.push_str(".RE\n");
    }
}

/// The whole page.
pub fn render(p: &Page) -> String {
    let mut out = String::new();
    out.push_str(".\\\" Generated by `fiox man` from fiox's option table; do not edit.\n");
    out.push_str(".\\\" Regenerate: cargo run -- man > docs/fiox.1\n");
    let _ = writeln!(out, ".TH FIOX 1 {} \"fiox {}\" \"User Commands\"", p.date, esc(p.version));
    // No hyphenation (option names and values must read as typed) and ragged right margins
    // (a long value has nothing to stretch).
    out.push_str(".nh\n.ad l\n.SH NAME\nfiox \\- a fio\\-compatible storage I/O benchmark\n");

    out.push_str(".SH SYNOPSIS\n");
    out.push_str(".B fiox\n[\\fIoptions\\fR] [\\fIjob options\\fR] [\\fIjob file\\fR ...]\n");
    for s in p.subcommands {
        let _ = writeln!(out, ".br\n.B fiox {}", esc(s.name));
        if !s.args.is_empty() {
            text(&mut out, s.args);
        }
    }

    out.push_str(".SH DESCRIPTION\n");
    for (i, para) in [
        "fiox is a storage I/O benchmark that reads fio's command lines and job files unchanged and prints \
         fio 3.33's outputs (normal, JSON, JSON+ and terse), so that notes, scripts and parsers written for \
         fio keep working. It also sweeps jobs over ranges of option values, draws charts and compares results.",
        "Job options are written on the command line as --name=value, -name=value, --name value or \
         -name value; a --name=NAME option starts a job, and options before the first one apply to \
         every job. In a job file they are written name=value inside [job] sections, with [global] \
         holding defaults. A flag (time_based) takes no value. Every value is checked before any I/O; \
         bad input is refused with the option, the value and where it was written.",
    ]
    .iter()
    .enumerate()
    {
        if i > 0 {
            out.push_str(".PP\n");
        }
        text(&mut out, para);
    }

    out.push_str(".SH GLOBAL SWITCHES\n");
    text(&mut out, "Switches that are not job options; they are written only on the command line.");
    for s in SWITCHES.iter().filter(|s| s.supported) {
        out.push_str(".TP\n");
        let value = match s.arg {
            Arg::None => String::new(),
            Arg::Required => format!("=\\fI{}\\fR", esc(s.value)),
            Arg::Optional => format!("[=\\fI{}\\fR]", esc(s.value)),
        };
        let _ = writeln!(out, "\\fB\\-\\-{}\\fR{value}", esc(s.name));
        text(&mut out, s.help);
        if !s.words.is_empty() {
            out.push_str(".br\n");
            text(&mut out, &format!("Values: {}.", s.words.join(", ")));
        }
    }

    out.push_str(".SH SUBCOMMANDS\n");
    text(&mut out, "A subcommand is the first argument; to run a job file of the same name, write it as ./NAME.");
    for s in p.subcommands {
        let _ = writeln!(out, ".SS fiox {}", esc(s.name));
        text(&mut out, s.summary);
        out.push_str(".sp\n");
        verbatim(&mut out, &s.help);
    }

    out.push_str(".SH OPTIONS\n");
    text(
        &mut out,
        "Job options, grouped as in fio's documentation, with the forms their values take. Each is \
         also described by fiox --cmdhelp=NAME.",
    );
    let mut cats: Vec<Category> = table::all().map(|o| o.category).collect();
    cats.sort();
    cats.dedup();
    for c in cats {
        let _ = writeln!(out, ".SS {}", esc(c.title()));
        for o in table::all().filter(|o| o.category == c) {
            option(&mut out, o);
        }
    }

    out.push_str(".SH ENGINES\n");
    text(
        &mut out,
        "The values of ioengine. Engines fiox does not run are accepted in job files (so they parse \
         and --enghelp lists their options), but a run naming one is refused before any I/O.",
    );
    let ioengine = table::lookup("ioengine").expect("ioengine is in the table");
    for (name, help) in choices(ioengine) {
        out.push_str(".TP\n");
        let _ = writeln!(out, "\\fB{}\\fR", esc(name));
        let runs = if p.engines.contains(&name) { "" } else { " (not run by fiox)" };
        text(&mut out, &format!("{help}{runs}."));
        let opts: Vec<&str> = table::all().filter(|o| o.engines.contains(&name)).map(|o| o.name).collect();
        if !opts.is_empty() {
            out.push_str(".br\n");
            text(&mut out, &format!("Options: {}.", opts.join(", ")));
        }
    }

    out.push_str(".SH DIFFERENCES FROM FIO\n");
    text(&mut out, "Where fiox differs from fio 3.33 on purpose:");
    bullets(&mut out, p.differences);

    out.push_str(".SH EXIT STATUS\n");
    for (code, what) in [
        ("0", "Every job ended without an error, or an informational switch (--help, --cmdhelp, ...) answered."),
        (
            "1",
            "Bad input (an unknown option, a bad value, a missing file), refused before any I/O; \
             for sweep, a point that failed or a knee search whose target no point met.",
        ),
        ("2", "For compare --fail-if-slower: a regression."),
        ("N", "The number of jobs that ended on an error (at most 255)."),
        ("128", "Stopped by SIGINT or SIGTERM; the results so far were printed."),
    ] {
        let _ = writeln!(out, ".TP\n.B {code}");
        text(&mut out, what);
    }

    out.push_str(".SH FILES\n");
    text(
        &mut out,
        "Shell completions for bash, zsh and fish are printed by fiox completions SHELL; this page by fiox man.",
    );
    out.push_str(".SH SEE ALSO\n.BR fio (1)\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_roff_would_read() {
        assert_eq!(esc("--rw=a\\b"), "\\-\\-rw=a\\eb");
        assert_eq!(esc("it's ×"), "it\\(aqs \\[u00D7]");
        let mut s = String::new();
        text(&mut s, ".hidden");
        text(&mut s, "'quoted");
        assert_eq!(s, "\\&.hidden\n\\(aqquoted\n");
    }

    #[test]
    fn bullets_join_their_lines() {
        let mut s = String::new();
        bullets(&mut s, "- one `bs=4k`\n  two\n- three\n");
        assert_eq!(s, ".IP \\(bu 2\none \\fBbs=4k\\fR two\n.IP \\(bu 2\nthree\n");
    }

    #[test]
    fn every_option_is_on_the_page() {
        let page = render(&Page { version: "0", date: "2000-01-01", subcommands: &[], engines: &[], differences: "" });
        for o in table::all() {
            assert!(page.contains(&format!("\\fB\\-\\-{}\\fR", esc(o.name))), "{} missing", o.name);
        }
        assert!(page.contains("\\fBrandtrimwrite\\fR") || page.contains("randtrimwrite"));
    }
}
