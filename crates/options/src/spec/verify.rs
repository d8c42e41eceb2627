//! The verify options resolved into [`VerifySpec`]: how a job's writes are laid out for checking
//! (fio 3.33's block format, from `fiox-verify`) and when and how they are checked. The rows
//! (`defs/verify.rs`) bind their own fields; [`verify`] keeps the rules that span them.

use fiox_verify::{Kind, Pattern};

use super::{JobSpec, Merged};
use crate::error::Result;

/// How a job verifies. `None` in `JobSpec::verify` when it does not.
#[derive(Debug, Clone)]
pub struct VerifySpec {
    pub kind: Kind,
    /// `verify_interval` as given (the runner fits it to the block sizes as fio does).
    pub interval: Option<u64>,
    /// `verify_offset`: where in each interval the header goes (0: at its start).
    pub offset: u64,
    /// `verify_pattern`, parsed; its text for messages.
    pub pattern: Option<std::sync::Arc<Pattern>>,
    /// Read back after writing (`do_verify`).
    pub after_write: bool,
    pub fatal: bool,
    pub dump: bool,
    /// `verify_only`: the job's writes become the reads that check them.
    pub only: bool,
    /// `verify_async` threads (fiox checks on the job's thread; the number only names the
    /// error's origin as fio does), `verify_async_cpus` as given, `experimental_verify`.
    pub async_threads: u32,
    pub async_cpus: Option<String>,
    pub experimental: bool,
    /// `verify_backlog` and `verify_backlog_batch` (0: not set).
    pub backlog: u64,
    pub backlog_batch: u64,
    /// `trim_percentage` of the writes trimmed, after every `trim_backlog` writes,
    /// `trim_backlog_batch` at a time (0: not set); `trim_verify_zero`.
    pub trim_percentage: u64,
    pub trim_backlog: u64,
    pub trim_backlog_batch: u64,
    pub trim_verify_zero: bool,
    /// `verify_journal` (fiox): written by a job that writes, read by one that checks.
    pub journal: Option<String>,
    /// `verify_state_save`, `verify_state_load`.
    pub state_save: bool,
    pub state_load: bool,
    /// fio 3.42's `verify_write_sequence` and `verify_header_seed`: whether the header's write
    /// sequence number and seed are checked. fiox checks neither (a block's checksum, offset
    /// and pattern decide), so these only record what the job asked for.
    pub write_sequence: bool,
    pub header_seed: bool,
    /// fio 3.42's `verify_pattern_interval` as bound; [`verify`] gives it to the pattern.
    pub(crate) pattern_interval: u64,
    /// `verify=0` or `none` as bound: no kind asked for ([`verify`] decides whether the job
    /// verifies a `verify_pattern` anyway).
    pub(crate) off: bool,
}

/// The blank the rows bind into: `verify`'s own row (default `0`) always sets the kind, and
/// every other field is zero, empty or off until its row says otherwise.
impl Default for VerifySpec {
    fn default() -> VerifySpec {
        VerifySpec {
            kind: Kind::Null,
            interval: None,
            offset: 0,
            pattern: None,
            after_write: false,
            fatal: false,
            dump: false,
            only: false,
            async_threads: 0,
            async_cpus: None,
            experimental: false,
            backlog: 0,
            backlog_batch: 0,
            trim_percentage: 0,
            trim_backlog: 0,
            trim_backlog_batch: 0,
            trim_verify_zero: false,
            journal: None,
            state_save: false,
            state_load: false,
            write_sequence: false,
            header_seed: false,
            pattern_interval: 0,
            off: true,
        }
    }
}

impl PartialEq for VerifySpec {
    fn eq(&self, o: &Self) -> bool {
        self.kind == o.kind
            && self.interval == o.interval
            && self.offset == o.offset
            && self.pattern.as_ref().map(|p| p.bytes().to_vec()) == o.pattern.as_ref().map(|p| p.bytes().to_vec())
            && (self.after_write, self.fatal, self.dump, self.only) == (o.after_write, o.fatal, o.dump, o.only)
            && (self.state_save, self.state_load) == (o.state_save, o.state_load)
            && (self.backlog, self.backlog_batch, &self.journal) == (o.backlog, o.backlog_batch, &o.journal)
            && (self.trim_percentage, self.trim_backlog, self.trim_backlog_batch, self.trim_verify_zero)
                == (o.trim_percentage, o.trim_backlog, o.trim_backlog_batch, o.trim_verify_zero)
            && (self.async_threads, &self.async_cpus, self.experimental)
                == (o.async_threads, &o.async_cpus, o.experimental)
            && (self.write_sequence, self.header_seed) == (o.write_sequence, o.header_seed)
            && self.pattern.as_ref().map(|p| p.interval()) == o.pattern.as_ref().map(|p| p.interval())
    }
}

impl JobSpec {
    /// The verify settings the verify rows bind into; [`verify`] keeps them only for a job
    /// that verifies.
    pub(crate) fn verify_mut(&mut self) -> &mut VerifySpec {
        self.verify.get_or_insert_with(VerifySpec::default)
    }
}

/// The verify rules, once the rows are bound: `verify=0` (or `none`) verifies nothing, except
/// that a `verify_pattern` without `verify=` verifies the pattern behind a header, as fio does
/// (its type 17); a pattern kind needs a pattern. fio 3.33 accepts `verify=pattern` without a
/// pattern and checks nothing useful; fiox refuses it.
pub(super) fn verify(m: &Merged<'_>, spec: Option<VerifySpec>) -> Result<Option<VerifySpec>> {
    let Some(mut v) = spec else { return Ok(None) };
    if v.off {
        // Only when `verify` is not written: `verify=0` with a pattern just fills the buffers.
        if v.pattern.is_none() || m.is_set("verify") {
            return Ok(None);
        }
        (v.kind, v.off) = (Kind::PatternHdr, false);
    }
    // fio 3.42's verify_pattern_interval: the pattern starts again every so many bytes.
    if v.pattern_interval > 0 {
        v.pattern = v.pattern.map(|p| std::sync::Arc::new(Pattern::clone(&p).with_interval(v.pattern_interval)));
    }
    if matches!(v.kind, Kind::Pattern | Kind::PatternHdr) && v.pattern.is_none() {
        return Err(m.job_err(format!("verify={} needs verify_pattern", v.kind.word())));
    }
    Ok(Some(v))
}
