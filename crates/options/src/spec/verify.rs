//! The verify options resolved into [`VerifySpec`]: how a job's writes are laid out for checking
//! (fio 3.33's block format, from `fiox-verify`) and when and how they are checked.

use fiox_verify::{Kind, Pattern};

use super::Merged;
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

/// fio's pattern forms, for the message about a bad `verify_pattern`.
const PATTERN_FORMS: &str =
    "0x hex bytes (0xdeadbeef), decimal numbers, \"strings\", 'files' and %o (the I/O's offset), concatenated";

/// The verify options of a job. A `verify_pattern` without `verify=` verifies the pattern
/// behind a header, as fio does (its type 17). fio 3.33 accepts `verify=pattern` without a
/// pattern and checks nothing useful; fiox refuses it.
pub(super) fn verify(m: &Merged<'_>) -> Result<Option<VerifySpec>> {
    let read_file = |name: &str| std::fs::read(name);
    // fio 3.42's verify_pattern_interval: the pattern starts again every so many bytes.
    let every = m.size("verify_pattern_interval")?.unwrap_or(0);
    let pattern = m
        .custom("verify_pattern", |v| Pattern::parse(v, &read_file), PATTERN_FORMS)?
        .map(|p| std::sync::Arc::new(p.with_interval(every)));
    let word = m.choice("verify")?;
    let interval = m.int("verify_interval")?.map(|v| v as u64);
    let offset = m.int("verify_offset")?.unwrap_or(0) as u64;
    let (after_write, fatal, dump, only) =
        (m.flag("do_verify")?, m.flag("verify_fatal")?, m.flag("verify_dump")?, m.flag("verify_only")?);
    let (state_save, state_load) = (m.flag("verify_state_save")?, m.flag("verify_state_load")?);
    let backlog = m.size("verify_backlog")?.unwrap_or(0);
    let async_threads = m.u32("verify_async")?;
    let async_cpus = m.string("verify_async_cpus");
    let experimental = m.flag("experimental_verify")?;
    let trim_percentage = m.u32("trim_percentage")? as u64;
    let trim_backlog = m.size("trim_backlog")?.unwrap_or(0);
    let trim_backlog_batch = m.int("trim_backlog_batch")?.unwrap_or(0) as u64;
    let trim_verify_zero = m.flag("trim_verify_zero")?;
    let journal = m.string("verify_journal").map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    let backlog_batch = m.int("verify_backlog_batch")?.unwrap_or(0) as u64;
    let (write_sequence, header_seed) = (m.flag("verify_write_sequence")?, m.flag("verify_header_seed")?);
    let kind = match word {
        // Only when `verify` is not written: `verify=0` with a pattern just fills the buffers.
        "0" | "none" if pattern.is_some() && !m.is_set("verify") => Kind::PatternHdr,
        "0" | "none" => return Ok(None),
        w => Kind::parse(w).unwrap_or_else(|| unreachable!("verify={w} has no kind in fiox-verify")),
    };
    if matches!(kind, Kind::Pattern | Kind::PatternHdr) && pattern.is_none() {
        return Err(m.job_err(format!("verify={word} needs verify_pattern")));
    }
    Ok(Some(VerifySpec {
        kind,
        interval,
        offset,
        pattern,
        after_write,
        fatal,
        dump,
        only,
        async_threads,
        async_cpus,
        experimental,
        journal,
        trim_percentage,
        trim_backlog,
        trim_backlog_batch,
        trim_verify_zero,
        backlog,
        backlog_batch,
        state_save,
        state_load,
        write_sequence,
        header_seed,
    }))
}
