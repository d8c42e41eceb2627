//! The option table's types: what an option is called, what its value looks like, its default and
//! its help. The table itself lives in `defs/`; this module only describes its shape and looks
//! names up.
//!
//! Architecture Invariant: every consumer of options (command line, job files, `--cmdhelp`,
//! `--enghelp`, `--showcmd`, the JSON option echo and validation) goes through [`lookup`] and
//! [`all`]; nothing else knows an option's name.

use crate::defs;
use crate::spec::bind::Binder;

/// How an option's value is written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// Free text (names, paths, lists the runner parses later).
    Str,
    /// One of a fixed set of words.
    Choice(&'static [Choice]),
    /// A whole number, optionally as an `(expr)`, within `min..=max`.
    Int { min: i64, max: i64 },
    /// `0` or `1` (also `true`/`false`); the bare name means `1`.
    Bool,
    /// A switch written without a value (`time_based`); `=0`/`=1` is also accepted.
    Flag,
    /// A byte count with fio's suffixes (`4k`, `1MiB`, `0x1000`, `(4*1024)`).
    Size,
    /// A byte count or a percentage of the file or device (`50%`).
    SizeOrPct,
    /// A byte range `low-high` (`4k-64k`); a single size means `size-size`.
    Range,
    /// A duration; a bare number is in `unit`.
    Time { unit: TimeUnit },
    /// A decimal number within `min..=max`.
    Float { min: f64, max: f64 },
    /// Colon-separated decimals (`percentile_list=50:99:99.9`).
    FloatList,
    /// Block size split `4k/50:64k/50`.
    BsSplit,
    /// Priority by block size `4k/30:64k/50/2/3` (`cmdprio_bssplit`).
    PrioSplit,
    /// `rw`: a mode word with an optional `:N` offset modifier.
    Rw,
}

/// One allowed word of a [`Kind::Choice`] option, with our own one-line help.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Choice {
    pub word: &'static str,
    pub help: &'static str,
}

/// The unit a bare number is taken in, per option (fio's `runtime=10` means seconds, its
/// `thinktime=10` microseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    Usec,
    Msec,
    Sec,
}

/// How fio reads a value that holds several numbers separated by `:`, `-` or `,` (`size=4k:8k`),
/// as its "string or value" options do (measured with fio 3.33's `--debug=parse` and runs): it
/// reads the whole text, then the text after each separator in turn, ignores the pieces that do
/// not start with a number, and refuses the value only when none does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pieces {
    /// One value; what follows its number is ignored like any trailing character.
    One,
    /// The first piece counts (`runtime=1:2` is 1 s); when it is unreadable the option keeps
    /// its default (`number_ios=:5` is no limit).
    First,
    /// Each piece read replaces the one before, so the last readable one counts
    /// (`io_size=4k:8k` is 8 KiB, `offset_increment=8k:junk` 8 KiB).
    Last,
    /// `size`: as `Last`, except that a percentage and a size are kept apart: a percentage
    /// drops the size read before it, and a size read after a percentage is that share of it
    /// (`size=4k:20%` is 20% of the file, `size=20%:64k` is 12.8 KiB). Lines of the job
    /// follow one another the same way (`size=20%` in `[global]`, `size=64k` in the job).
    ScaledByPct,
    /// `offset`: as `Last`, except that a percentage, once read, outlasts any size after it
    /// (`offset=20%:64k` is 20%), on later lines too.
    PctSticks,
    /// `startdelay`: a range from the whole text's reading (0 when it has none) to the last
    /// readable piece's (`1:3`, `1-3` and `1:2:3` are 1 to 3 s, `:3` is 0 to 3 s).
    Range,
}

/// Where an option appears in `--cmdhelp` and the docs; the groups follow the sections of fio's
/// HOWTO so that people find options where they expect them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Category {
    Description,
    Time,
    Target,
    IoType,
    BlockSize,
    Buffers,
    IoSize,
    Engine,
    IoDepth,
    Rate,
    Latency,
    Process,
    Verify,
    SteadyState,
    Measurement,
    Logging,
    Errors,
    Units,
    /// Options of fio's built-in profiles, which do nothing outside them.
    Profile,
}

impl Category {
    pub fn title(self) -> &'static str {
        match self {
            Category::Description => "Job description",
            Category::Time => "Time related",
            Category::Target => "Target file/device",
            Category::IoType => "I/O type",
            Category::BlockSize => "Block size",
            Category::Buffers => "Buffers and memory",
            Category::IoSize => "I/O size",
            Category::Engine => "I/O engine",
            Category::IoDepth => "I/O depth",
            Category::Rate => "I/O rate and pacing",
            Category::Latency => "I/O latency",
            Category::Process => "Threads, processes and job synchronization",
            Category::Verify => "Verification",
            Category::SteadyState => "Steady state",
            Category::Measurement => "Measurements and reporting",
            Category::Logging => "Logging",
            Category::Errors => "Error handling",
            Category::Units => "Units",
            Category::Profile => "Profile options (no effect without --profile, as in fio)",
        }
    }
}

/// Whether the runner implements an option.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Support {
    /// Every value the syntax allows is honoured.
    Full,
    /// Only these values (as the user would write them) are honoured, e.g. `verify=0`.
    Only(&'static [&'static str]),
    /// Parsed and validated, but the runner does not do it yet: setting it is an error, never
    /// silently ignored.
    NotYet,
}

/// One row of the option table.
#[derive(Debug, Clone, Copy)]
pub struct OptDef {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub kind: Kind,
    /// The default as the user would write it; parsed by the same code as user values.
    pub default: Option<&'static str>,
    /// Whether the value may be a `read,write,trim` list.
    pub per_dir: bool,
    pub category: Category,
    pub help: &'static str,
    pub support: Support,
    /// Engine-private options name the engines that own them; empty for general options.
    pub engines: &'static [&'static str],
    /// fiox: more engines that accept this engine-private option, left out of their
    /// `--enghelp` so that it stays fio's (`conf` for rbd).
    pub extra_engines: &'static [&'static str],
    /// Written bare in a job file, the option takes the job's name as its value (fio's log
    /// prefixes).
    pub bare_job_name: bool,
    /// The option refines another (`cpuchunks` under `cpuload`); `--enghelp` indents it below
    /// its parent, as fio does.
    pub parent: Option<&'static str>,
    /// Help text that differs by engine, as `--enghelp=ENGINE` prints it (fio describes Ceph's
    /// `pool` one way for rbd and another for rados); `help` otherwise.
    pub engine_help: &'static [(&'static str, &'static str)],
    /// How the value lands in the job model (`None`: the row is read by a rule of
    /// `JobSpec::resolve` that spans options, or by another stage; see `spec/bind.rs`).
    pub bind: Option<Binder>,
    /// How a value of several `:`, `-` or `,`-separated numbers is read.
    pub pieces: Pieces,
}

impl OptDef {
    /// Builds a general option; the `const fn` setters below fill in the rest, so each row in
    /// `defs/` reads as one expression.
    pub const fn new(name: &'static str, kind: Kind, category: Category, help: &'static str) -> Self {
        OptDef {
            name,
            aliases: &[],
            kind,
            default: None,
            per_dir: false,
            category,
            help,
            support: Support::Full,
            engines: &[],
            extra_engines: &[],
            bare_job_name: false,
            parent: None,
            engine_help: &[],
            bind: None,
            pieces: Pieces::One,
        }
    }
    /// fio reads the value piece by piece and keeps the first piece's reading (see [`Pieces`]).
    pub const fn first_piece(mut self) -> Self {
        self.pieces = Pieces::First;
        self
    }
    /// fio reads the value piece by piece and keeps the last readable piece (see [`Pieces`]).
    pub const fn last_piece(mut self) -> Self {
        self.pieces = Pieces::Last;
        self
    }
    /// fio reads the value piece by piece and combines the pieces (see [`Pieces`]).
    pub const fn pieces(mut self, pieces: Pieces) -> Self {
        self.pieces = pieces;
        self
    }
    /// Says how the value lands in the job model: called with the job's value or the row's
    /// default when a job is resolved (see `spec/bind.rs`).
    pub const fn to(mut self, bind: Binder) -> Self {
        self.bind = Some(bind);
        self
    }
    pub const fn bare_job_name(mut self) -> Self {
        self.bare_job_name = true;
        self
    }
    pub const fn child_of(mut self, parent: &'static str) -> Self {
        self.parent = Some(parent);
        self
    }
    pub const fn alias(mut self, aliases: &'static [&'static str]) -> Self {
        self.aliases = aliases;
        self
    }
    pub const fn def(mut self, default: &'static str) -> Self {
        self.default = Some(default);
        self
    }
    pub const fn per_dir(mut self) -> Self {
        self.per_dir = true;
        self
    }
    pub const fn not_yet(mut self) -> Self {
        self.support = Support::NotYet;
        self
    }
    pub const fn only(mut self, values: &'static [&'static str]) -> Self {
        self.support = Support::Only(values);
        self
    }
    pub const fn engines(mut self, engines: &'static [&'static str]) -> Self {
        self.engines = engines;
        self
    }
    pub const fn extra_engines(mut self, engines: &'static [&'static str]) -> Self {
        self.extra_engines = engines;
        self
    }
    /// Whether a job of `engine` may set this option (general options: any).
    pub fn accepted_by(&self, engine: &str) -> bool {
        self.engines.is_empty() || self.engines.contains(&engine) || self.extra_engines.contains(&engine)
    }
    pub const fn engine_help(mut self, helps: &'static [(&'static str, &'static str)]) -> Self {
        self.engine_help = helps;
        self
    }

    /// The help text `--enghelp=engine` prints for this option.
    pub fn help_for(&self, engine: &str) -> &'static str {
        self.engine_help.iter().find(|(e, _)| *e == engine).map_or(self.help, |(_, h)| *h)
    }

    /// Whether the option is written without a value on the command line (`-thread`).
    pub fn takes_no_value(&self) -> bool {
        matches!(self.kind, Kind::Flag)
    }

    /// A short description of the accepted forms, used in error messages and `--cmdhelp`.
    pub fn forms(&self) -> String {
        let base = match self.kind {
            Kind::Str => "text".to_string(),
            Kind::Choice(c) => {
                let words: Vec<&str> = c.iter().map(|c| c.word).collect();
                format!("one of: {}", words.join(", "))
            }
            Kind::Int { min, max } => {
                if max == i64::MAX {
                    format!("an integer >= {min}")
                } else {
                    format!("an integer from {min} to {max}")
                }
            }
            Kind::Bool => "a boolean: 0 or 1".to_string(),
            Kind::Flag => "no value (or =0 / =1)".to_string(),
            Kind::Size => "a size: a number with an optional k/m/g/t/p suffix (4k, 1MiB, 0x1000, (4*1024))".to_string(),
            Kind::SizeOrPct => "a size (4k, 1g, ...) or a percentage (50%)".to_string(),
            Kind::Range if self.per_dir => "a size range low-high (4k-64k)".to_string(),
            Kind::Range => "a size range low-high (4k-64k) or a single size".to_string(),
            Kind::Time { unit } => {
                let u = match unit {
                    TimeUnit::Usec => "microseconds",
                    TimeUnit::Msec => "milliseconds",
                    TimeUnit::Sec => "seconds",
                };
                format!("a time: a number of {u}, or with a unit us/ms/s/m/h/d (500ms, 2m)")
            }
            Kind::Float { min, max } => format!("a decimal number from {min} to {max}"),
            Kind::FloatList => "decimal numbers separated by ':' (50:99:99.9)".to_string(),
            Kind::BsSplit => "size/percentage pairs separated by ':' (4k/50:64k/50)".to_string(),
            Kind::PrioSplit => {
                "size/percentage or size/percentage/class/level entries separated by ':' (4k/30:64k/50/2/3)".to_string()
            }
            Kind::Rw => {
                "one of read, write, trim, randread, randwrite, randtrim, rw, readwrite, randrw, trimwrite, randtrimwrite, optionally with :N".to_string()
            }
        };
        if self.per_dir {
            format!("{base}; or a read,write,trim list")
        } else {
            base
        }
    }
}

/// Every option fiox knows, general ones first, then engine-private ones.
pub fn all() -> impl Iterator<Item = &'static OptDef> {
    defs::TABLES.iter().flat_map(|t| t.iter())
}

/// Finds an option by name or alias. fio matches option names exactly (case-sensitive), and so
/// do we.
pub fn lookup(name: &str) -> Option<&'static OptDef> {
    all().find(|o| o.name == name || o.aliases.contains(&name))
}

/// The closest option names to a misspelt one, best first, for "did you mean" hints.
pub fn suggest(name: &str) -> Vec<&'static str> {
    // Profile options do nothing outside their profile: never a useful guess.
    let mut scored: Vec<(usize, &'static str)> = all()
        .filter(|o| o.category != Category::Profile)
        .flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied()))
        .map(|n| (edit_distance(name, n), n))
        .filter(|(d, n)| *d <= (name.len().max(n.len()) / 3).max(2) || n.starts_with(name) || name.starts_with(n))
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(3).map(|(_, n)| n).collect()
}

/// Levenshtein distance over bytes; option names are ASCII.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for o in all() {
            for n in std::iter::once(o.name).chain(o.aliases.iter().copied()) {
                assert!(seen.insert(n), "option name {n} appears twice in the table");
            }
        }
    }

    #[test]
    fn every_default_parses() {
        let ctx = crate::value::Ctx::default();
        for o in all() {
            if let Some(d) = o.default {
                crate::value::parse(o, d, &ctx).unwrap_or_else(|e| panic!("default of {}: {e}", o.name));
            }
        }
    }

    /// A choice option's words are distinct (`--cmdhelp`, the man page and the completions list
    /// each once).
    #[test]
    fn choice_words_are_unique() {
        for o in all() {
            if let Kind::Choice(c) = o.kind {
                let mut seen = std::collections::HashSet::new();
                for w in c {
                    assert!(seen.insert(w.word), "{}: the value {} is listed twice", o.name, w.word);
                }
            }
        }
    }

    #[test]
    fn lookup_finds_aliases() {
        assert_eq!(lookup("blocksize").unwrap().name, "bs");
        assert_eq!(lookup("readwrite").unwrap().name, "rw");
        assert!(lookup("blocksize2").is_none());
    }

    #[test]
    fn suggestions_are_close() {
        let s = suggest("blocksize2");
        assert!(s.contains(&"blocksize"), "{s:?}");
        assert!(suggest("iodepht").contains(&"iodepth"));
    }
}
