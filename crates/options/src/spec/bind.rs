//! How an option row's value lands in the job model. A row of the table says it itself with
//! [`OptDef::to`](crate::table::OptDef::to): `O::new("iodepth", ..).def("1").to(|s, v| Ok(s.iodepth =
//! v.u32()?))`. When a job is resolved, every row with a binder is called once, in table order,
//! with the value the job set or else the row's default, so the row's `.def(..)` is the only
//! default there is; a row with neither leaves its field as [`JobSpec::default`] has it (`None`,
//! empty, zero). What spans several options (one overriding another, values derived from
//! several) is left to the named rules of `JobSpec::resolve`.

use super::{JobSpec, SizeSpec};
use crate::error::{Error, Result};
use crate::jobfile::RawOpt;
use crate::table::OptDef;
use crate::value::{self, Ctx, Parsed, Value};

/// A row's binder: stores the value in the spec, refusing it with an error naming the job when
/// the value is valid syntax but unusable (`iodepth` too large for its field, say).
pub type Binder = fn(&mut JobSpec, &Arg<'_>) -> Result<()>;

/// One row's value as its binder sees it: parsed, with where it came from.
pub struct Arg<'a> {
    def: &'static OptDef,
    parsed: Parsed,
    /// The job's option, or `None` when the value is the row's default.
    raw: Option<&'a RawOpt>,
    ctx: &'a Ctx,
    job: &'a str,
}

impl<'a> Arg<'a> {
    pub(super) fn new(
        def: &'static OptDef,
        parsed: Parsed,
        raw: Option<&'a RawOpt>,
        ctx: &'a Ctx,
        job: &'a str,
    ) -> Self {
        Arg { def, parsed, raw, ctx, job }
    }

    /// The option's (canonical) name.
    pub fn name(&self) -> &'static str {
        self.def.name
    }

    /// The job did not set the option: this is the row's default.
    pub fn is_default(&self) -> bool {
        self.raw.is_none()
    }

    /// The parsing context (kb_base, the machine's CPUs).
    pub fn ctx(&self) -> &Ctx {
        self.ctx
    }

    /// The job's name (bare log options take it as their prefix).
    pub fn job(&self) -> &str {
        self.job
    }

    /// The value, the first given direction's for a per-direction option.
    fn one(&self) -> Option<&Value> {
        match &self.parsed {
            Parsed::One(v) => Some(v),
            Parsed::PerDir(d) => d.iter().flatten().next(),
        }
    }

    fn unexpected(&self) -> ! {
        unreachable!("{}: the binder reads a value of another kind than the row's ({:?})", self.def.name, self.parsed)
    }

    pub fn flag(&self) -> bool {
        matches!(self.one(), Some(Value::Bool(true)))
    }

    pub fn int(&self) -> i64 {
        match self.one() {
            Some(Value::Int(v)) => *v,
            _ => self.unexpected(),
        }
    }

    /// A whole number that must fit in 32 bits (the table allows larger ones for some rows).
    pub fn u32(&self) -> Result<u32> {
        let v = self.int();
        u32::try_from(v).map_err(|_| self.err(format!("{}={v} is too large", self.def.name)))
    }

    /// A whole number whose row has no negative values.
    pub fn u64(&self) -> u64 {
        self.int().max(0) as u64
    }

    pub fn size(&self) -> u64 {
        match self.one() {
            Some(Value::Size(v)) => *v,
            _ => self.unexpected(),
        }
    }

    pub fn size_spec(&self) -> SizeSpec {
        match self.one() {
            Some(Value::Size(v)) => SizeSpec::Bytes(*v),
            Some(Value::Pct(p)) => SizeSpec::Percent(*p),
            _ => self.unexpected(),
        }
    }

    pub fn range(&self) -> (u64, u64) {
        match self.one() {
            Some(Value::Range(lo, hi)) => (*lo, *hi),
            _ => self.unexpected(),
        }
    }

    /// Microseconds.
    pub fn time(&self) -> u64 {
        match self.one() {
            Some(Value::Time(v)) => *v,
            _ => self.unexpected(),
        }
    }

    pub fn float(&self) -> f64 {
        match self.one() {
            Some(Value::Float(v)) => *v,
            _ => self.unexpected(),
        }
    }

    pub fn floats(&self) -> Vec<f64> {
        match self.one() {
            Some(Value::Floats(v)) => v.clone(),
            _ => self.unexpected(),
        }
    }

    /// `rw`'s mode and its `:N` modifier.
    pub fn rw(&self) -> (crate::value::RwMode, i64) {
        match self.one() {
            Some(Value::Rw(mode, n)) => (*mode, *n),
            _ => self.unexpected(),
        }
    }

    pub fn choice(&self) -> &'static str {
        match self.one() {
            Some(Value::Choice(c)) => c,
            _ => self.unexpected(),
        }
    }

    /// A choice as its type (see `choices.rs`, whose test covers every word).
    pub fn typed<T>(&self, from_word: fn(&str) -> Option<T>) -> T {
        let word = self.choice();
        from_word(word).unwrap_or_else(|| unreachable!("{}={word} has no variant in choices.rs", self.def.name))
    }

    /// The text as written (the default's text for a default); empty for a bare option.
    pub fn text(&self) -> String {
        match self.raw {
            Some(r) => r.value.clone().unwrap_or_default(),
            None => self.def.default.unwrap_or_default().to_string(),
        }
    }

    /// The value as the job wrote it (`None` for a default or an option written bare).
    pub fn written(&self) -> Option<String> {
        self.raw.and_then(|r| r.value.clone())
    }

    /// The text, trimmed, or `None` when it is empty.
    pub fn trimmed(&self) -> Option<String> {
        Some(self.text().trim().to_string()).filter(|s| !s.is_empty())
    }

    /// Per-direction values, `None` where a direction keeps its default.
    pub fn per_dir(&self) -> [Option<Value>; 3] {
        match &self.parsed {
            Parsed::One(v) => [Some(v.clone()), Some(v.clone()), Some(v.clone())],
            Parsed::PerDir(d) => d.clone(),
        }
    }

    /// Per-direction whole numbers or sizes, directions left empty taking the row's default
    /// (0 without one).
    pub fn per_dir_u64(&self) -> [u64; 3] {
        let number = |v: &Option<Value>| match v {
            Some(Value::Int(i)) => Some((*i).max(0) as u64),
            Some(Value::Size(s)) => Some(*s),
            _ => None,
        };
        let default = self
            .def
            .default
            .and_then(|d| value::parse(self.def, d, self.ctx).ok())
            .and_then(|p| match p {
                Parsed::One(v) => number(&Some(v)),
                Parsed::PerDir(d) => d.iter().find_map(number),
            })
            .unwrap_or(0);
        self.per_dir().map(|v| number(&v).unwrap_or(default))
    }

    /// A value with a syntax of its own (`random_distribution`, `buffer_pattern`), parsed by
    /// `parse`, its errors reported like every other bad value.
    pub fn custom<T>(&self, parse: impl Fn(&str) -> std::result::Result<T, String>, forms: &str) -> Result<T> {
        let text = self.text();
        parse(&text).map_err(|reason| Error::BadValue {
            option: self.raw.map_or_else(|| self.def.name.to_string(), |r| r.typed.clone()),
            value: text.clone(),
            origin: self.raw.map_or(crate::error::Origin::CommandLine, |r| r.origin.clone()),
            reason,
            forms: forms.to_string(),
        })
    }

    /// An error about this job.
    pub fn err(&self, message: String) -> Error {
        Error::Job { job: self.job.to_string(), message }
    }
}

#[cfg(test)]
pub(crate) mod check {
    //! The per-group tests' helper: a job made of a few options, and a predicate on its spec.

    use crate::{argv, assemble, Ctx, JobSpec};

    /// Resolves `--size=1m` plus the space-separated `options`, then checks each predicate, so
    /// that a table of `("rwmixwrite=30", |s| s.rwmixread == 70)` rows shows where each option
    /// lands.
    /// One check: options to set, and what must then hold of the spec.
    pub(crate) type Case = (&'static str, fn(&JobSpec) -> bool);

    pub(crate) fn lands(cases: &[Case]) {
        for (options, pred) in cases {
            let mut args: Vec<String> = vec!["--size=1m".into()];
            args.extend(options.split_whitespace().map(|o| format!("--{o}")));
            args.push("--name=t".into());
            let cl = argv::parse(args.iter().map(String::as_str).collect::<Vec<_>>())
                .unwrap_or_else(|e| panic!("{options}: {e}"));
            let set = assemble(&cl, &[], &Ctx::default()).unwrap_or_else(|e| panic!("{options}: {e}"));
            assert!(pred(&set.jobs[0].spec), "{options}: the value did not land where the table says");
        }
    }
}
