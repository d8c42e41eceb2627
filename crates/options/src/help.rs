//! `--cmdhelp` and `--enghelp` text, generated from the option table so it cannot drift from the
//! parser. Pure functions returning strings.

use std::fmt::Write;

use crate::error::{Error, Origin, Result};
use crate::table::{self, Kind, OptDef, Support};

/// `--cmdhelp` (empty `which`: the list), `--cmdhelp=all`, or `--cmdhelp=OPTION`.
pub fn cmdhelp(which: &str) -> Result<String> {
    let mut out = String::new();
    match which {
        "" => {
            let mut cats: Vec<_> = table::all().map(|o| o.category).collect();
            cats.sort();
            cats.dedup();
            for c in cats {
                let _ = writeln!(out, "{}:", c.title());
                for o in table::all().filter(|o| o.category == c) {
                    let _ = writeln!(out, "  {:<28}: {}{}", o.name, o.help, support_note(o));
                }
            }
        }
        // fio prints every option on one line each, as `name : help`, in its table's order
        // (scripts read the first word).
        "all" => {
            for o in table::all() {
                let _ = writeln!(out, "{:<24}: {}{}", o.name, o.help, support_note(o));
            }
        }
        name => {
            let o = table::lookup(name).ok_or_else(|| Error::UnknownOption {
                name: name.to_string(),
                origin: Origin::CommandLine,
                suggestions: table::suggest(name),
            })?;
            out.push_str(&describe(o));
        }
    }
    Ok(out)
}

fn support_note(o: &OptDef) -> &'static str {
    match o.support {
        Support::Full => "",
        Support::Only(_) => " (partly supported)",
        Support::NotYet => " (not supported yet)",
    }
}

/// The detailed block for one option, in fio's right-aligned `key: value` layout.
pub fn describe(o: &OptDef) -> String {
    let mut out = String::new();
    let mut line = |k: &str, v: &str| {
        let _ = writeln!(out, "{k:>20}: {v}");
    };
    line(o.name, o.help);
    if !o.aliases.is_empty() {
        line("alias", &o.aliases.join(", "));
    }
    line("category", o.category.title());
    line("accepts", &o.forms());
    if let Some(d) = o.default {
        line("default", d);
    }
    if !o.engines.is_empty() {
        let extra = o.extra_engines.iter().map(|e| format!(", {e} (fiox)")).collect::<String>();
        line("ioengines", &format!("{}{extra}", o.engines.join(", ")));
    }
    match o.support {
        Support::Full => {}
        Support::Only(v) => line("supported", &format!("only {}", v.join(", "))),
        Support::NotYet => line("supported", "not yet by fiox"),
    }
    if let Kind::Choice(choices) = o.kind {
        line("valid values", "");
        for c in choices {
            let _ = writeln!(out, "{:>20}  {:<14} {}", "", c.word, c.help);
        }
    }
    out
}

/// `--enghelp` (empty `which`: the list of `available` engines), `--enghelp=ENGINE` (its
/// options) or `--enghelp=ENGINE,OPTION`.
pub fn enghelp(which: &str, available: &[&str]) -> Result<String> {
    let mut out = String::new();
    if which.is_empty() {
        out.push_str("Available IO engines:\n");
        for e in available {
            let _ = writeln!(out, "\t{e}");
        }
        return Ok(out);
    }
    let (engine, option) = match which.split_once(',') {
        Some((e, o)) => (e, Some(o)),
        None => (which, None),
    };
    // An engine fiox cannot run yet still has its options in the table (so job files using it
    // parse); they are listed too.
    if !available.contains(&engine) && !table::all().any(|o| o.engines.contains(&engine)) {
        return Err(Error::Usage(format!(
            "ioengine '{engine}' is not available in fiox; available: {}",
            available.join(", ")
        )));
    }
    let owned: Vec<&OptDef> = table::all().filter(|o| o.engines.contains(&engine)).collect();
    match option {
        None if owned.is_empty() => {
            let _ = writeln!(out, "IO engine {engine} has no options");
        }
        None => {
            // fio's layout: names padded to 24 columns, a child option indented by two.
            for o in owned {
                let name = if o.parent.is_some() { format!("  {}", o.name) } else { o.name.to_string() };
                let _ = writeln!(out, "{name:<24}: {}", o.help_for(engine));
            }
        }
        Some(name) => {
            let o = owned
                .iter()
                .find(|o| o.name == name)
                .ok_or_else(|| Error::Usage(format!("ioengine '{engine}' has no option '{name}'")))?;
            out.push_str(&describe(o));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_details() {
        let list = cmdhelp("").unwrap();
        assert!(list.contains("  bs "), "{list}");
        assert!(list.contains("Block size:"));
        let bs = cmdhelp("bs").unwrap();
        assert!(bs.starts_with("                  bs: "), "{bs}");
        assert!(bs.contains("alias: blocksize"));
        assert!(bs.contains("default: 4096"));
        let rw = cmdhelp("ioengine").unwrap();
        assert!(rw.contains("io_uring"));
        assert!(cmdhelp("nosuchoption").unwrap_err().to_string().contains("unknown option 'nosuchoption'"));
        let all = cmdhelp("all").unwrap();
        assert!(all.lines().any(|l| l.starts_with("iodepth                 : ")), "{all}");
    }

    #[test]
    fn engine_help() {
        let avail = ["psync", "io_uring", "null"];
        assert!(enghelp("", &avail).unwrap().contains("\tio_uring"));
        assert!(enghelp("io_uring", &avail).unwrap().contains("fixedbufs"));
        assert!(enghelp("io_uring,fixedbufs", &avail).unwrap().contains("default: 0"));
        assert!(enghelp("bogus", &avail).is_err());
        // An engine fiox cannot run yet still lists its options.
        assert!(enghelp("rbd", &avail).unwrap().contains("rbdname"));
        assert!(enghelp("null", &avail).unwrap().contains("no options"));
    }
}
