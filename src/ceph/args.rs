//! The command line of Ceph's tools, one parser for `fiox rados`, `fiox rbd` and `fiox ceph`:
//! each declares its flags in a table (`crate::cli`'s flag model), the connection flags every
//! Ceph tool takes are rows shared here, and a [`Dialect`] says how the tool words what it
//! refuses, so each command keeps the messages (and the exit statuses) of the tool it mimics.

use anyhow::Result;
use fiox_options::CephOpts;

use crate::cli::{self, Arg, Complete, Flag, Refusal, Syntax};

pub const CONF: Flag =
    Flag::value("--conf", "FILE", "the Ceph configuration file").aliases(&["-c"]).completes(Complete::File);
pub const CLUSTER: Flag = Flag::value("--cluster", "NAME", "the cluster's name (default ceph)");
pub const ID: Flag = Flag::value("--id", "ID", "the client's id (default admin)").aliases(&["-i"]);
pub const NAME: Flag = Flag::value("--name", "TYPE.ID", "the client's name (client.admin)").aliases(&["-n"]);
pub const POOL: Flag = Flag::value("--pool", "POOL", "the pool").aliases(&["-p"]);
pub const NAMESPACE: Flag = Flag::value("--namespace", "NS", "the namespace in the pool");
pub const KEYRING: Flag =
    Flag::value("--keyring", "FILE", "the keyring with the client's key").aliases(&["-k"]).completes(Complete::File);

/// How a tool words a refusal of its command line.
pub struct Dialect {
    /// For a flag, as typed, that lacks its value.
    pub needs_value: fn(&str) -> anyhow::Error,
    /// For a flag, as typed, given a value it does not take.
    pub takes_no_value: fn(&str) -> anyhow::Error,
    /// For a flag no row of the table has: the argument as typed and the flag's spelling.
    pub unknown: fn(&str, &str) -> anyhow::Error,
    /// Whether words (arguments that are not flags) are the command's to read; if not, each is
    /// refused as `unknown`.
    pub words: bool,
}

/// Reads a Ceph tool's arguments against its flag table: the connection flags land in `ceph`,
/// the tool's own flags go to `own` (with their values, as given), and the words come back in
/// order. The first refusal ends the reading.
pub fn parse(
    flags: &'static [Flag],
    args: &[String],
    ceph: &mut CephOpts,
    dialect: &Dialect,
    mut own: impl FnMut(&'static Flag, String) -> Result<()>,
) -> Result<Vec<String>> {
    let mut words = Vec::new();
    for arg in cli::args(flags, Syntax::Ceph, args) {
        let (f, v) = match arg {
            Ok(Arg::Flag(f, v)) => (f, v),
            Ok(Arg::Other(a)) if a.starts_with('-') && a != "-" => {
                return Err((dialect.unknown)(a, a.split_once('=').map_or(a, |(n, _)| n)));
            }
            Ok(Arg::Other(a)) if dialect.words => {
                words.push(a.to_string());
                continue;
            }
            Ok(Arg::Other(a)) => return Err((dialect.unknown)(a, a)),
            Err(Refusal::NeedsValue(n)) => return Err((dialect.needs_value)(&n)),
            Err(Refusal::TakesNoValue(n)) => return Err((dialect.takes_no_value)(&n)),
        };
        match f.name {
            "--conf" => ceph.conf = Some(v),
            "--cluster" => ceph.clustername = Some(v),
            "--id" | "--name" => ceph.clientname = Some(v),
            "--pool" => ceph.pool = Some(v),
            "--namespace" => ceph.namespace = Some(v),
            "--keyring" => ceph.keyring = Some(v),
            _ => own(f, v)?,
        }
    }
    Ok(words)
}

/// A size in Ceph's 1024-based units (`4K`, `4M`, `4MiB`, `4194304`), read by the options crate.
pub fn size(v: &str) -> Option<u64> {
    fiox_options::value::parse_binary_size(v).ok()
}

/// `flags`' lines for a `--help`, under an `Options:` heading.
pub fn options_help(flags: &[Flag]) -> String {
    cli::usage(flags, Syntax::Ceph, 26, "\nOptions:\n", "")
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &[Flag] = &[cli::HELP, CONF, POOL, Flag::switch("--no-cleanup", "keep")];

    fn dialect(words: bool) -> Dialect {
        Dialect {
            needs_value: |n| anyhow::anyhow!("{n} needs"),
            takes_no_value: |n| anyhow::anyhow!("{n} takes none"),
            unknown: |a, n| anyhow::anyhow!("unknown {a} {n}"),
            words,
        }
    }

    fn run(args: &[&str], words: bool) -> Result<(CephOpts, Vec<String>, Vec<String>)> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let mut ceph = CephOpts::default();
        let mut own = Vec::new();
        let w = parse(T, &args, &mut ceph, &dialect(words), |f, v| {
            own.push(format!("{}={v}", f.name));
            Ok(())
        })?;
        Ok((ceph, w, own))
    }

    #[test]
    fn connection_flags_words_and_refusals() {
        let (ceph, words, own) = run(&["-p", "bench", "bench", "-c=x.conf", "10", "--no-cleanup", "-"], true).unwrap();
        assert_eq!((ceph.pool.as_deref(), ceph.conf.as_deref()), (Some("bench"), Some("x.conf")));
        assert_eq!(words, ["bench", "10", "-"]);
        assert_eq!(own, ["--no-cleanup="]);
        let e = |args: &[&str], words| run(args, words).unwrap_err().to_string();
        assert_eq!(e(&["--snap=1"], true), "unknown --snap=1 --snap");
        assert_eq!(e(&["bench"], false), "unknown bench bench");
        assert_eq!(e(&["-p"], true), "-p needs");
        assert_eq!(e(&["--no-cleanup=1"], true), "--no-cleanup takes none");
    }

    #[test]
    fn sizes_are_1024_based() {
        assert_eq!(size("4M"), Some(4 << 20));
        assert_eq!(size("4MiB"), Some(4 << 20));
        assert_eq!(size("64k"), Some(64 << 10));
        assert_eq!(size("4096000"), Some(4_096_000));
        assert_eq!(size("4Q"), None);
    }
}
