//! Value syntax as fio parses it: sizes with suffixes and the `kb_base` quirk, times with units,
//! percentages, ranges, per-direction lists, `bssplit`, `rw` modifiers, booleans, `(expr)`
//! arithmetic and the `$pagesize`/`$ncpus`/`$mb_memory` keywords.
//!
//! fio's number parser reads the longest number and unit it can and ignores the rest
//! (`size=65536)` is 64 KiB, `bs=4q` is 4 bytes, `bsrange=512/25:1k` is 512 to 1k, `iodepth=4)`
//! is 4; measured with fio 3.33's `--debug=parse`). fiox reads such values as fio does, so job
//! files that run under fio run here, and records each reading ([`take_leniency`]) for
//! `--parse-only` to name, so users can clean their files. What fio refuses (an empty value, a
//! value that does not start with a number) stays refused.

use crate::expr;
use crate::table::{Kind, OptDef, Pieces, TimeUnit};

/// Facts value parsing depends on. `Default` is deterministic, for tests; the binary fills it
/// from the machine.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// 1024 (fio's default) or 1000: the base of `k`, `m`, ... and, inverted, of `KiB`, `MiB`.
    pub kb_base: u64,
    pub pagesize: u64,
    pub ncpus: u64,
    pub mb_memory: u64,
}

impl Default for Ctx {
    fn default() -> Self {
        Ctx { kb_base: 1024, pagesize: 4096, ncpus: 1, mb_memory: 1024 }
    }
}

/// The `rw` modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RwMode {
    Read,
    Write,
    Trim,
    RandRead,
    RandWrite,
    RandTrim,
    ReadWrite,
    RandRw,
    TrimWrite,
    RandTrimWrite,
}

impl RwMode {
    pub const WORDS: &'static [(&'static str, RwMode)] = &[
        ("read", RwMode::Read),
        ("write", RwMode::Write),
        ("trim", RwMode::Trim),
        ("randread", RwMode::RandRead),
        ("randwrite", RwMode::RandWrite),
        ("randtrim", RwMode::RandTrim),
        ("rw", RwMode::ReadWrite),
        ("readwrite", RwMode::ReadWrite),
        ("randrw", RwMode::RandRw),
        ("trimwrite", RwMode::TrimWrite),
        ("randtrimwrite", RwMode::RandTrimWrite),
    ];

    /// The name fio prints in a job's header line (`rw=randrw`).
    pub fn name(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::Trim => "trim",
            RwMode::RandRead => "randread",
            RwMode::RandWrite => "randwrite",
            RwMode::RandTrim => "randtrim",
            RwMode::ReadWrite => "rw",
            RwMode::RandRw => "randrw",
            RwMode::TrimWrite => "trimwrite",
            RwMode::RandTrimWrite => "randtrimwrite",
        }
    }
    pub fn is_random(self) -> bool {
        matches!(self, RwMode::RandRead | RwMode::RandWrite | RwMode::RandTrim | RwMode::RandRw | RwMode::RandTrimWrite)
    }
    pub fn reads(self) -> bool {
        matches!(self, RwMode::Read | RwMode::RandRead | RwMode::ReadWrite | RwMode::RandRw)
    }
    pub fn writes(self) -> bool {
        matches!(
            self,
            RwMode::Write
                | RwMode::RandWrite
                | RwMode::ReadWrite
                | RwMode::RandRw
                | RwMode::TrimWrite
                | RwMode::RandTrimWrite
        )
    }
    pub fn trims(self) -> bool {
        matches!(self, RwMode::Trim | RwMode::RandTrim | RwMode::TrimWrite | RwMode::RandTrimWrite)
    }
}

/// A parsed value of one option (or of one direction of a per-direction option).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Str(String),
    Choice(&'static str),
    Int(i64),
    Bool(bool),
    Size(u64),
    Pct(f64),
    Range(u64, u64),
    /// Microseconds.
    Time(u64),
    Float(f64),
    Floats(Vec<f64>),
    /// `(block size, percentage)`; an empty percentage in the input shares what is left.
    Split(Vec<(u64, f64)>),
    /// `cmdprio_bssplit` entries.
    PrioSplit(Vec<PrioSplitEntry>),
    Rw(RwMode, i64),
}

/// A parsed option value: one value, or one per direction (`None` keeps that direction's
/// default, as in `bs=,8k`).
#[derive(Debug, Clone, PartialEq)]
pub enum Parsed {
    One(Value),
    PerDir([Option<Value>; 3]),
}

thread_local! {
    /// What the last [`parse`] read leniently, as fio reads it (see the module's comment).
    static LENIENCY: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn lenient(note: String) {
    LENIENCY.with(|l| l.borrow_mut().push(note));
}

/// What the last [`parse`] on this thread read leniently (`'65536)' read as 65536, ignoring
/// ')'`), if anything; a value with several numbers may have several readings.
pub fn take_leniency() -> Option<String> {
    let notes = LENIENCY.with(|l| std::mem::take(&mut *l.borrow_mut()));
    (!notes.is_empty()).then(|| notes.join("; "))
}

/// Parses `raw` as the value of `opt`. The error is a sentence without the option's name; the
/// caller adds where the value came from.
pub fn parse(opt: &OptDef, raw: &str, ctx: &Ctx) -> Result<Parsed, String> {
    LENIENCY.with(|l| l.borrow_mut().clear());
    let raw = substitute_keywords(raw.trim(), ctx);
    if opt.per_dir && !matches!(opt.kind, Kind::Str) {
        if let Some(dirs) = per_direction(opt.kind, &raw, ctx)? {
            return Ok(Parsed::PerDir(dirs));
        }
        both_bounds(opt.kind, &raw)?;
    }
    match opt.pieces {
        Pieces::One => parse_one(opt.kind, &raw, ctx).map(Parsed::One),
        keep => parse_pieces(opt, &raw, ctx, keep).map(Parsed::One),
    }
}

/// A per-direction value with more than one field, as fio 3.33 reads it (observed with
/// `--debug=parse` and the header line): see [`direction_fields`] for where the fields split.
/// Fields past the third are ignored, an unreadable field keeps its direction's default
/// (`bs=junk,8k`), and a list shorter than three repeats its last entry, so `bs=8k,32k` gives
/// trims 32k. `None` for a single field.
fn per_direction(kind: Kind, raw: &str, ctx: &Ctx) -> Result<Option<[Option<Value>; 3]>, String> {
    let plain = !matches!(kind, Kind::Range | Kind::BsSplit | Kind::PrioSplit);
    let seps: &[char] = if plain { &[',', ':', '-'] } else { &[','] };
    let parts = direction_fields(raw, seps);
    if parts.len() < 2 {
        return Ok(None);
    }
    let mut out: [Option<Value>; 3] = [None, None, None];
    let mut first_err = None;
    let mut notes = Vec::new();
    for (i, p) in parts.iter().take(3).enumerate().filter(|(_, p)| !p.text.trim().is_empty()) {
        match both_bounds(kind, p.text.trim()).and_then(|()| parse_one(kind, p.text.trim(), ctx)) {
            Ok(v) => out[i] = Some(v),
            Err(e) => {
                notes.push(format!("'{}' is unreadable, so that direction keeps its default", p.text.trim()));
                first_err.get_or_insert(e);
            }
        }
    }
    let given = out.iter().filter(|v| v.is_some()).count();
    if given == 0 {
        return Err(first_err.unwrap_or_else(|| format!("'{raw}' has no read, write or trim value")));
    }
    if let Some(other) = parts.iter().take(3).skip(1).map(|p| p.sep).find(|&c| c != ',') {
        notes.push(format!("'{other}' separates read, write and trim values as ',' does"));
    }
    if let Some(rest) = parts.get(3).filter(|p| !raw[p.start..].trim().is_empty()) {
        notes.push(format!("ignoring '{}' after the third value", &raw[rest.start..]));
    }
    // A list shorter than three repeats its last entry.
    let last = parts.len().min(3) - 1;
    for slot in parts.len()..3 {
        out[slot] = out[last].clone();
    }
    if !notes.is_empty() {
        lenient(format!("'{raw}' read per direction: {}", notes.join("; ")));
    }
    Ok(Some(out))
}

/// One field of a per-direction value: its text, where it starts in the value, and the
/// separator before it (`,` for the first, which has none).
struct Field<'a> {
    text: &'a str,
    start: usize,
    sep: char,
}

/// Splits a per-direction value into its fields as fio 3.33 does, one separator at a time:
/// from where a field starts, the next field begins after the first `seps[0]` in the rest of
/// the value, else after the first `seps[1]`, and so on. So `bs=4k:,8k` is `4k:` (read as 4k)
/// then `8k`: 4k reads, 8k writes and trims, and `bs=4k:8k-16k` is 4k, 8k, 16k (observed with
/// the job's header line). Separators inside parentheses, and a `-` opening the value, do not
/// count.
fn direction_fields<'a>(raw: &'a str, seps: &[char]) -> Vec<Field<'a>> {
    let mut out = Vec::new();
    let (mut start, mut sep) = (0, ',');
    loop {
        let rest = &raw[start..];
        let next = seps.iter().find_map(|&c| top_level_find(rest, c, start == 0).map(|i| (i, c)));
        match next {
            Some((i, c)) => {
                out.push(Field { text: &rest[..i], start, sep });
                (start, sep) = (start + i + c.len_utf8(), c);
            }
            None => {
                out.push(Field { text: rest, start, sep });
                return out;
            }
        }
    }
}

/// Where `c` first occurs in `s` outside parentheses (a `-` at the start of the value is a
/// sign, not a separator).
fn top_level_find(s: &str, c: char, value_start: bool) -> Option<usize> {
    let mut depth = 0i32;
    for (i, ch) in s.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ if ch == c && depth == 0 && !(c == '-' && i == 0 && value_start) => return Some(i),
            _ => {}
        }
    }
    None
}

/// A per-direction range (`bsrange`) needs both bounds, as fio 3.33 reads it: `bsrange=1k` is
/// refused, and a field `4k` in `bsrange=4k,1k-2k` keeps its direction's default, while
/// `filesize`, a range of one value, also takes one size (observed).
fn both_bounds(kind: Kind, raw: &str) -> Result<(), String> {
    if matches!(kind, Kind::Range) && split_range(raw).is_none_or(|(_, hi)| hi.is_empty()) {
        return Err(format!("'{raw}' is one size where a range needs both bounds, low-high (1k-4k)"));
    }
    Ok(())
}

/// Reads a value as fio reads its "string or value" options (see [`Pieces`]): the whole text,
/// then the text after each `:`, `-` or `,` outside parentheses.
fn parse_pieces(opt: &OptDef, raw: &str, ctx: &Ctx, keep: Pieces) -> Result<Value, String> {
    let whole = parse_one(opt.kind, raw, ctx);
    let starts = piece_starts(raw);
    if keep == Pieces::Range {
        return time_range(raw, whole, &starts, ctx, opt.kind);
    }
    if starts.is_empty() || (keep == Pieces::First && whole.is_ok()) {
        return whole;
    }
    if matches!(keep, Pieces::ScaledByPct | Pieces::PctSticks) {
        LENIENCY.with(|l| l.borrow_mut().clear());
        let all = readings(opt, raw, ctx);
        let v = fold_readings(keep, all.iter().cloned()).ok_or_else(|| whole.clone().unwrap_err())?;
        let how = match (&v, all.last()) {
            (Value::Size(_), Some(Value::Size(b))) if Some(&v) != all.last() => {
                let p = all.iter().rev().find_map(pct_of).unwrap_or(0.0);
                format!(
                    ", {p}% of {b} (the block size is checked against {b}; only whole blocks of the {} are moved)",
                    shown(&v)
                )
            }
            (_, Some(last)) if last == &v => ", the last of its values".to_string(),
            _ => ", the percentage among its values".to_string(),
        };
        lenient(format!("'{raw}' read as {}{how}", shown(&v)));
        return Ok(v);
    }
    // The pieces' own readings are not what the value was read as: one note says that.
    let first_notes = LENIENCY.with(|l| std::mem::take(&mut *l.borrow_mut()));
    let later = starts.iter().rev().find_map(|&s| parse_one(opt.kind, raw[s..].trim(), ctx).ok());
    LENIENCY.with(|l| l.borrow_mut().clear());
    match (keep, later, whole) {
        (Pieces::Last, Some(v), _) => {
            lenient(format!("'{raw}' read as {}, the last of its values", shown(&v)));
            Ok(v)
        }
        (_, None, Ok(v)) => {
            LENIENCY.with(|l| *l.borrow_mut() = first_notes);
            Ok(v)
        }
        (_, None, Err(e)) => Err(e),
        (_, Some(later), _) => {
            // `First` with an unreadable first piece: fio leaves the option as it was (the
            // job's earlier value, else the default), which `leaves_unchanged` tells the
            // resolver; the value returned here only stands for that.
            lenient(format!("'{raw}' leaves {} as it was: its first value is unreadable", opt.name));
            match opt.default {
                Some(default) => parse_one(opt.kind, default, ctx),
                None => Ok(later),
            }
        }
    }
}

fn pct_of(v: &Value) -> Option<f64> {
    match v {
        Value::Pct(p) => Some(*p),
        _ => None,
    }
}

/// Every reading fio makes of a value it reads piece by piece, in its order: the whole text,
/// then the text after each separator; unreadable pieces are skipped.
pub fn readings(opt: &OptDef, raw: &str, ctx: &Ctx) -> Vec<Value> {
    let raw = substitute_keywords(raw.trim(), ctx);
    let starts = std::iter::once(0).chain(piece_starts(&raw));
    let out = starts.filter_map(|s| parse_one(opt.kind, raw[s..].trim(), ctx).ok()).collect();
    LENIENCY.with(|l| l.borrow_mut().clear());
    out
}

/// What a row's readings, in order, leave it set to (see [`Pieces`]); `None` without any.
pub fn fold_readings(keep: Pieces, values: impl IntoIterator<Item = Value>) -> Option<Value> {
    let (mut pct, mut size, mut last) = (None, None, None);
    for v in values {
        match v {
            Value::Pct(p) => (pct, size) = (Some(p), None),
            Value::Size(b) => size = Some(b),
            _ => {}
        }
        last = Some(v);
    }
    match (keep, pct, size) {
        (Pieces::ScaledByPct, Some(p), Some(b)) => Some(Value::Size((b as f64 * p / 100.0) as u64)),
        (Pieces::ScaledByPct, Some(p), None) | (Pieces::PctSticks, Some(p), _) => Some(Value::Pct(p)),
        _ => last,
    }
}

/// The size a percentage scales in a `ScaledByPct` row's readings (`size=20%:4k`: 4096), if
/// the readings scale one: fio checks that size, not the scaled one, against the block size.
pub fn scaled_base(values: impl IntoIterator<Item = Value>) -> Option<u64> {
    let (mut pct, mut size) = (false, None);
    for v in values {
        match v {
            Value::Pct(_) => (pct, size) = (true, None),
            Value::Size(b) => size = Some(b),
            _ => {}
        }
    }
    size.filter(|_| pct)
}

/// `startdelay`'s range (see [`Pieces::Range`]), in microseconds; a range whose low end is
/// above its high end is refused (fio waits for ever).
fn time_range(
    raw: &str,
    whole: Result<Value, String>,
    starts: &[usize],
    ctx: &Ctx,
    kind: Kind,
) -> Result<Value, String> {
    let notes = LENIENCY.with(|l| std::mem::take(&mut *l.borrow_mut()));
    let last = starts.iter().rev().find_map(|&s| parse_one(kind, raw[s..].trim(), ctx).ok());
    LENIENCY.with(|l| l.borrow_mut().clear());
    let us = |v: &Value| if let Value::Time(t) = v { *t } else { 0 };
    let (lo, hi) = match (&whole, &last) {
        (Ok(w), None) => {
            LENIENCY.with(|l| *l.borrow_mut() = notes);
            return Ok(Value::Range(us(w), us(w)));
        }
        (Err(e), None) => return Err(e.clone()),
        (w, Some(l)) => (w.as_ref().map_or(0, us), us(l)),
    };
    if lo > hi {
        return Err(format!("the range's low end {lo} us is above its high end {hi} us"));
    }
    // `1:3` and `1-3` are the documented spelling; anything else gets a note.
    let low = starts.first().and_then(|&s| parse_one(kind, raw[..s - 1].trim(), ctx).ok());
    let clean = starts.len() == 1 && low.as_ref().map(us) == Some(lo) && take_leniency().is_none();
    LENIENCY.with(|l| l.borrow_mut().clear());
    if !clean {
        lenient(format!("'{raw}' read as a random time from {lo} us to {hi} us"));
    }
    Ok(Value::Range(lo, hi))
}

/// Whether fio reads `raw` as no change to `opt` at all: a first-piece option whose first
/// value is unreadable while a later one is readable (`verify_backlog=:4`, `number_ios=junk:5`).
/// The option keeps what an earlier line set, or its default.
pub fn leaves_unchanged(opt: &OptDef, raw: &str, ctx: &Ctx) -> bool {
    if opt.pieces != Pieces::First {
        return false;
    }
    let raw = substitute_keywords(raw.trim(), ctx);
    let unchanged = parse_one(opt.kind, &raw, ctx).is_err()
        && piece_starts(&raw).iter().any(|&s| parse_one(opt.kind, raw[s..].trim(), ctx).is_ok());
    LENIENCY.with(|l| l.borrow_mut().clear());
    unchanged
}

/// Where each piece after the first starts: after each `:`, `-` or `,` outside parentheses.
fn piece_starts(raw: &str) -> Vec<usize> {
    let mut depth = 0i32;
    let mut starts = Vec::new();
    for (i, c) in raw.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ':' | '-' | ',' if depth == 0 => starts.push(i + 1),
            _ => {}
        }
    }
    starts
}

/// A value as a note shows it.
fn shown(v: &Value) -> String {
    match v {
        Value::Size(b) => b.to_string(),
        Value::Pct(p) => format!("{p}%"),
        Value::Int(i) => i.to_string(),
        Value::Time(us) => format!("{us} us"),
        other => format!("{other:?}"),
    }
}

/// Replaces fio's reserved keywords. They are whole words starting with `$`.
fn substitute_keywords(raw: &str, ctx: &Ctx) -> String {
    if !raw.contains('$') {
        return raw.to_string();
    }
    raw.replace("$pagesize", &ctx.pagesize.to_string())
        .replace("$ncpus", &ctx.ncpus.to_string())
        .replace("$mb_memory", &ctx.mb_memory.to_string())
}

fn parse_one(kind: Kind, raw: &str, ctx: &Ctx) -> Result<Value, String> {
    if raw.is_empty() && !matches!(kind, Kind::Str | Kind::Flag | Kind::Bool) {
        return Err("the value is empty".into());
    }
    match kind {
        Kind::Str => Ok(Value::Str(raw.to_string())),
        // fio ignores what follows the first ':' or ',' of a choice (`lockfile=readwrite:4`
        // is `readwrite`, measured); the whole word is tried first for words that contain one.
        Kind::Choice(choices) => {
            let head = raw.split([':', ',']).next().unwrap_or(raw);
            choices
                .iter()
                .find(|c| c.word == raw)
                .or_else(|| choices.iter().find(|c| c.word == head))
                .map(|c| Value::Choice(c.word))
                .ok_or_else(|| format!("'{raw}' is not an allowed value"))
        }
        Kind::Int { min, max } => {
            let v = parse_int(raw)?;
            if v < min || v > max {
                return Err(format!("{v} is out of range"));
            }
            Ok(Value::Int(v))
        }
        Kind::Bool | Kind::Flag => match raw {
            "" => Ok(Value::Bool(true)),
            _ => match parse_int(raw)? {
                0 => Ok(Value::Bool(false)),
                1 => Ok(Value::Bool(true)),
                // A flag is on for any other number too (`thread=2` runs threads in fio 3.33).
                v if kind == Kind::Flag => {
                    lenient(format!("'{raw}' read as 1 (on): any number but 0 sets it"));
                    Ok(Value::Bool(v != 0))
                }
                v => Err(format!("{v} is not a boolean")),
            },
        },
        Kind::Size => parse_size(raw, ctx).map(Value::Size),
        // `12.5%` is fio's 12 bytes: its parser stops at the point, so the `%` is lost too.
        // A unit before the `%` makes it a size with a trailing character (`8k%` is 8 KiB);
        // what follows a `%` is ignored (`20%x` is 20%).
        Kind::SizeOrPct => match percent_prefix(raw) {
            Some((v, rest)) => {
                if !(0..=100).contains(&v) {
                    return Err(format!("{v}% is not within 0% to 100%"));
                }
                if !rest.is_empty() {
                    lenient(format!("'{raw}' read as {v}%, ignoring '{rest}'"));
                }
                Ok(Value::Pct(v as f64))
            }
            None => parse_size(raw, ctx).map(Value::Size),
        },
        Kind::Range => {
            let (lo, hi) = match split_range(raw) {
                // fio reads a missing or zero high end as the low end: `filesize=1k-` and
                // `bsrange=4k-0` are 1k and 4k exactly (observed; `bsrange=1k-` is refused
                // above, by [`both_bounds`]).
                Some((a, "")) => (parse_size(a, ctx)?, 0),
                Some((a, b)) => (parse_size(a, ctx)?, parse_size(b, ctx)?),
                None => {
                    let v = parse_size(raw, ctx)?;
                    (v, v)
                }
            };
            let hi = if hi == 0 { lo } else { hi };
            if lo == 0 && hi > 0 {
                // fio refuses the low end ("min value out of range: 0"), then goes on: its
                // bsrange keeps the job's bs there, its filesize drops the whole value.
                lenient(format!(
                    "'{raw}' has a low end of 0 (bsrange takes the job's bs for it; filesize is then ignored)"
                ));
            }
            if lo > hi {
                // fio reads a range either way round (`bsrange=8k-1k` is 1k to 8k).
                lenient(format!("'{raw}' read as {hi} to {lo}, low end first"));
                return Ok(Value::Range(hi, lo));
            }
            Ok(Value::Range(lo, hi))
        }
        Kind::Time { unit } => parse_time(raw, unit).map(Value::Time),
        Kind::Float { min, max } => {
            let v = parse_float(raw)?;
            if v < min || v > max {
                return Err(format!("{v} is out of range"));
            }
            Ok(Value::Float(v))
        }
        Kind::FloatList => {
            let mut out = Vec::new();
            for p in raw.split(':') {
                let v = float_prefix(p.trim())?;
                if !(0.0..=100.0).contains(&v) {
                    return Err(format!("{v} is not a percentile between 0 and 100"));
                }
                out.push(v);
            }
            if out.len() > 20 {
                return Err(format!("{} entries; at most 20", out.len()));
            }
            Ok(Value::Floats(out))
        }
        Kind::BsSplit => parse_bssplit(raw, ctx),
        Kind::PrioSplit => parse_priosplit(raw, ctx),
        Kind::Rw => {
            let (word, modifier) = match raw.split_once(':') {
                Some((w, m)) => (w, Some(m).filter(|m| !m.trim().is_empty())),
                None => (raw, None),
            };
            // As for any choice, fio ignores what follows a ',' (`rw=read,write` is read).
            let word = match word.split_once(',') {
                Some((head, rest)) => {
                    lenient(format!("'{raw}' read as {head}, ignoring ',{rest}'"));
                    head
                }
                None => word,
            };
            let mode = RwMode::WORDS
                .iter()
                .find(|(w, _)| *w == word)
                .map(|(_, m)| *m)
                .ok_or_else(|| format!("'{word}' is not an I/O direction"))?;
            // A negative step (`read:-8k`) reads or writes backwards.
            let n = match modifier.map(str::trim) {
                Some(m) => match m.strip_prefix('-') {
                    Some(back) if mode.is_random() => {
                        return Err(format!("'-{back}' is negative; a random pattern's :N counts I/Os"))
                    }
                    Some(back) => -(parse_size(back.trim(), ctx)?.min(i64::MAX as u64) as i64),
                    None => parse_size(m, ctx)?.min(i64::MAX as u64) as i64,
                },
                None => 0,
            };
            Ok(Value::Rw(mode, n))
        }
    }
}

/// A whole percentage at the start of `raw` (`20%`, `+20%`) and what follows its `%`; a
/// negative one is left to the size reading, which refuses it.
fn percent_prefix(raw: &str) -> Option<(i64, &str)> {
    let body = raw.strip_prefix('+').unwrap_or(raw);
    let n = body.bytes().take_while(u8::is_ascii_digit).count();
    let rest = body[n..].strip_prefix('%').filter(|_| n > 0)?;
    // More digits than any percentage has: out of range whatever they say.
    Some((body[..n].parse::<i64>().unwrap_or(i64::MAX), rest))
}

/// Finds the `-` of a range, skipping a leading sign and anything inside parentheses.
fn split_range(raw: &str) -> Option<(&str, &str)> {
    let mut depth = 0i32;
    for (i, c) in raw.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            '-' | ':' if depth == 0 && i > 0 => return Some((raw[..i].trim(), raw[i + 1..].trim())),
            _ => {}
        }
    }
    None
}

/// A whole number: decimal, `0x` hex, or an `(expr)` without units.
pub fn parse_int(raw: &str) -> Result<i64, String> {
    let raw = raw.trim();
    if raw.starts_with('(') {
        let v = expr::eval(raw, &|t| plain_number(t).map(|v| v as f64))?;
        return float_to_int(v);
    }
    match plain_number(raw) {
        Ok(v) => Ok(v as i64),
        Err(e) => suffixed_int(raw).or_else(|| lenient_int(raw)).ok_or(e),
    }
}

/// fio's reading of an integer with characters after it: the number and a unit it knows,
/// the rest ignored (`4)` is 4, `4kq` is 4096).
fn lenient_int(raw: &str) -> Option<i64> {
    let body = raw.strip_prefix('+').unwrap_or(raw);
    let (value, used) = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        // `0x` with no digit after it is fio's 0 (`direct=0x` is direct=0).
        match h.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(h.len()) {
            0 => (0, 1),
            n => (i64::from_str_radix(&h[..n], 16).ok()?, 2 + n),
        }
    } else {
        let n = body.find(|c: char| !c.is_ascii_digit()).unwrap_or(body.len());
        let v: i64 = body[..n].parse().ok()?;
        let (mult, unit) = unit_at(&body[n..], 1024, true);
        (v.checked_mul(i64::try_from(mult).ok()?)?, n + unit)
    };
    let ignored = &body[used..];
    if ignored.is_empty() {
        return None;
    }
    lenient(format!("'{raw}' read as {value}, ignoring '{ignored}'"));
    Some(value)
}

/// The unit at the start of `rest` as fio's parser finds it: a `k`, `m`, `g`, `t` or `p`
/// (any case) with an optional `i`, `b` or `ib` after it, or a lone `b`; anything else is no
/// unit (a multiplier of 1). Returns the multiplier and how many bytes the unit took. With
/// `same_base` (integer options) `ib` does not invert the base.
fn unit_at(rest: &str, kb_base: u64, same_base: bool) -> (u64, usize) {
    let lower = rest.to_ascii_lowercase();
    let pow = match lower.as_bytes().first() {
        Some(b'k') => 1,
        Some(b'm') => 2,
        Some(b'g') => 3,
        Some(b't') => 4,
        Some(b'p') => 5,
        Some(b'b') => return (1, 1),
        _ => return (1, 0),
    };
    let inverted = if kb_base == 1024 { 1000u64 } else { 1024 };
    if lower[1..].starts_with("ib") {
        ((if same_base { kb_base } else { inverted }).pow(pow), 3)
    } else if lower[1..].starts_with(['i', 'b']) {
        (kb_base.pow(pow), 2)
    } else {
        (kb_base.pow(pow), 1)
    }
}

/// fio's integer options take size suffixes too, always in powers of 1024 whatever kb_base
/// says (measured: `number_ios=1k` is 1024 I/Os, also with kb_base=1000): `200k`, `2M`, `1Ki`,
/// `1kb`.
fn suffixed_int(raw: &str) -> Option<i64> {
    let split = raw.find(|c: char| !c.is_ascii_digit())?;
    let (digits, unit) = raw.split_at(split);
    let n: i64 = digits.parse().ok()?;
    let unit = unit.to_ascii_lowercase();
    let unit =
        unit.strip_suffix("ib").or_else(|| unit.strip_suffix('b')).or_else(|| unit.strip_suffix('i')).unwrap_or(&unit);
    let power = match unit {
        "k" => 1,
        "m" => 2,
        "g" => 3,
        "t" => 4,
        "p" => 5,
        _ => return None,
    };
    n.checked_mul(1i64.checked_shl(10 * power)?)
}

fn float_to_int(v: f64) -> Result<i64, String> {
    if v.abs() > 9.0e18 {
        return Err(format!("{v} is too large"));
    }
    Ok(v as i64)
}

/// Decimal or hex, with an optional sign; no units.
fn plain_number(t: &str) -> Result<i128, String> {
    let (neg, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let v = if let Some(h) = digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        i128::from_str_radix(h, 16).map_err(|_| format!("'{t}' is not a number"))?
    } else if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        digits.parse::<i128>().map_err(|_| format!("'{t}' is too large"))?
    } else {
        return Err(format!("'{t}' is not a number"));
    };
    if v > i64::MAX as i128 {
        return Err(format!("'{t}' is too large"));
    }
    Ok(if neg { -v } else { v })
}

/// A float as fio's float lists read one: the longest number at the start, the rest ignored
/// (`percentile_list=50:99,5` is 50 and 99); without a number at the start, refused.
fn float_prefix(raw: &str) -> Result<f64, String> {
    if let Ok(v) = parse_float(raw) {
        return Ok(v);
    }
    let end = (1..=raw.len())
        .rev()
        .filter(|&i| raw.is_char_boundary(i))
        .find(|&i| raw[..i].parse::<f64>().is_ok_and(f64::is_finite));
    match end {
        Some(i) if raw[..i].bytes().all(|b| b.is_ascii_digit() || b == b'.') => {
            lenient(format!("'{raw}' read as {}, ignoring '{}'", &raw[..i], &raw[i..]));
            parse_float(&raw[..i])
        }
        _ => Err(format!("'{raw}' is not a number")),
    }
}

fn parse_float(raw: &str) -> Result<f64, String> {
    if raw.starts_with('(') {
        return expr::eval(raw, &|t| t.parse::<f64>().map_err(|_| format!("'{t}' is not a number")));
    }
    match raw.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(format!("'{raw}' is not a number")),
    }
}

/// The multiplier of a size suffix, or `None` if the suffix is not one fio documents.
///
/// With `kb_base=1024` (the default) `k`, `kb` and `ki` are 1024 but `kib` is 1000; with
/// `kb_base=1000` it is the other way round. This inversion is fio's documented (and much
/// complained about) behaviour, kept for compatibility.
fn size_multiplier(suffix: &str, kb_base: u64) -> Option<u64> {
    let s = suffix.to_ascii_lowercase();
    if s.is_empty() || s == "b" {
        return Some(1);
    }
    let bytes = s.as_bytes();
    let pow = match bytes[0] {
        b'k' => 1,
        b'm' => 2,
        b'g' => 3,
        b't' => 4,
        b'p' => 5,
        _ => return None,
    };
    let base = match &s[1..] {
        "" | "b" | "i" => kb_base,
        "ib" => {
            if kb_base == 1024 {
                1000
            } else {
                1024
            }
        }
        _ => return None,
    };
    Some(base.pow(pow))
}

/// One size token: a number (decimal, fractional or hex) with an optional suffix; failing
/// that, fio's lenient reading of it.
///
/// A fraction is read only inside an `(expr)`, where fio's arithmetic has them; a plain
/// `1.5k` is fio's 1 (its number parser stops at the point and the unit after it is lost:
/// `size=1.5m` is one byte and `bs=1.5k` one-byte blocks, measured with fio 3.33).
fn size_token(t: &str, ctx: &Ctx, fractions: bool) -> Result<f64, String> {
    let body = t.strip_prefix('+').unwrap_or(t);
    let digits = body.bytes().take_while(u8::is_ascii_digit).count();
    if !fractions && digits > 0 && body[digits..].starts_with('.') {
        return lenient_size_token(t, ctx).ok_or_else(|| format!("'{t}' is not a size"));
    }
    strict_size_token(t, ctx).or_else(|e| lenient_size_token(t, ctx).ok_or(e))
}

/// fio's reading of a size with characters after it: the number and a unit it knows, the
/// rest ignored (`65536)` is 65536, `4q` is 4, `4KiBx` is 4000, `0x10g` is 16).
fn lenient_size_token(t: &str, ctx: &Ctx) -> Option<f64> {
    let body = t.strip_prefix('+').unwrap_or(t);
    let (value, used) = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        match h.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(h.len()) {
            0 => (0.0, 1),
            n => (u64::from_str_radix(&h[..n], 16).ok()? as f64, 2 + n),
        }
    } else {
        let n = body.find(|c: char| !c.is_ascii_digit()).unwrap_or(body.len());
        let v: f64 = body[..n].parse().ok()?;
        let (mult, unit) = unit_at(&body[n..], ctx.kb_base, false);
        (v * mult as f64, n + unit)
    };
    let ignored = &body[used..];
    if ignored.is_empty() && body.len() == t.len() {
        return None;
    }
    let what = if ignored.is_empty() { "'+'".to_string() } else { format!("'{ignored}'") };
    lenient(format!("'{t}' read as {}, ignoring {what}", value as u64));
    Some(value)
}

fn strict_size_token(t: &str, ctx: &Ctx) -> Result<f64, String> {
    if t.starts_with("0x") || t.starts_with("0X") {
        return plain_number(t).map(|v| v as f64);
    }
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    if num.is_empty() {
        return Err(format!("'{t}' is not a size"));
    }
    let n: f64 = num.parse().map_err(|_| format!("'{t}' is not a size"))?;
    let mult = size_multiplier(suffix, ctx.kb_base).ok_or_else(|| {
        format!("'{t}' has an unknown suffix '{suffix}' (use k, m, g, t or p, optionally followed by b or ib)")
    })?;
    Ok(n * mult as f64)
}

/// A byte count.
pub fn parse_size(raw: &str, ctx: &Ctx) -> Result<u64, String> {
    let raw = raw.trim();
    let v = if raw.starts_with('(') {
        expr::eval(raw, &|t| size_token(t, ctx, true))?
    } else {
        if raw.starts_with('-') {
            return Err(format!("'{raw}' is negative; sizes are at least 0"));
        }
        size_token(raw, ctx, false)?
    };
    if !(0.0..1.8e19).contains(&v) {
        return Err(format!("'{raw}' is not a size between 0 and 2^64"));
    }
    Ok(v as u64)
}

/// A byte count in the spelling S3 benchmarks (MinIO's warp) take: `64KiB`, `10MiB`, `4k`
/// (1024-based), `1MB` (1000-based, unlike fio's `kb_base=1024` reading), fractions allowed
/// (`1.5MiB`). Returns the message's tail: what the value is not.
pub fn parse_si_size(raw: &str) -> Result<u64, String> {
    let t = raw.trim();
    let split = t.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().map_err(|_| "not a size (64KiB, 10MiB, 4k, 1MB)".to_string())?;
    let mult: f64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kib" | "ki" => 1024.0,
        "kb" => 1e3,
        "m" | "mib" | "mi" => 1048576.0,
        "mb" => 1e6,
        "g" | "gib" | "gi" => 1073741824.0,
        "gb" => 1e9,
        _ => return Err(format!("unknown unit '{unit}' (KiB, MiB, GiB, KB, MB, GB)")),
    };
    let bytes = n * mult;
    if !(1.0..=(1u64 << 42) as f64).contains(&bytes) {
        return Err("a size from 1 byte to 4 TiB".into());
    }
    Ok(bytes as u64)
}

/// A byte count in the 1024-based units Ceph's tools take: `4k`, `4K`, `4KB` and `4KiB` are all
/// 4096 (fio reads `KiB` as 1000 under its default `kb_base=1024`; Ceph does not).
pub fn parse_binary_size(raw: &str) -> Result<u64, String> {
    let t = raw.trim();
    let lower = t.to_ascii_lowercase();
    let fio_form = match lower.strip_suffix("ib") {
        Some(head) if head.ends_with(|c: char| c.is_ascii_alphabetic()) => format!("{head}b"),
        _ => lower,
    };
    let _ = take_leniency();
    let size = parse_size(&fio_form, &Ctx::default()).map_err(|e| e.replace(&fio_form, t))?;
    // Ceph's tools read their sizes strictly: fio's lenient reading (`4Q` as 4) is not theirs.
    match take_leniency() {
        Some(_) => Err(format!("'{t}' is not a size")),
        None => Ok(size),
    }
}

/// A duration in microseconds; a bare number is in `unit`.
///
/// fio reads a time as a number and then looks at what follows it (measured with fio 3.33's
/// `--debug=parse`): nothing, or a character that is not a letter (`2)`, `2:3`), leaves the
/// number in the option's unit; `ms…` and `us…` are milli- and microseconds whatever comes after
/// them (`2msq` is 2 ms); `s`, `m`, `h` and `d` count only alone (`2s`, but `2sx` is 2 µs); any
/// other letter makes the bare number microseconds (`2x`, `2sec`, `2min` are 2 µs). A hex number
/// (`0x10`) is microseconds too. fiox reads times the same way and notes each such reading;
/// a fraction (`1.5s`) keeps its fraction, a deliberate difference (fio truncates it).
pub fn parse_time(raw: &str, unit: TimeUnit) -> Result<u64, String> {
    let raw = raw.trim();
    let bare_us = match unit {
        TimeUnit::Usec => 1.0,
        TimeUnit::Msec => 1e3,
        TimeUnit::Sec => 1e6,
    };
    // Inside an expression numbers are plain and the result is in the option's unit, so
    // `runtime=(2*60)` is two minutes.
    let v = if raw.starts_with('(') {
        expr::eval(raw, &|t| {
            t.parse::<f64>().map_err(|_| format!("'{t}' is not a number (no units inside an expression)"))
        })? * bare_us
    } else {
        time_token(raw, bare_us)?
    };
    if !(0.0..1.8e19).contains(&v) {
        return Err(format!("'{raw}' is not a time of 0 or more"));
    }
    Ok(v as u64)
}

/// One time as fio reads it (see [`parse_time`]), in microseconds.
fn time_token(t: &str, bare_us: f64) -> Result<f64, String> {
    let body = t.strip_prefix('+').unwrap_or(t);
    if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        let n = h.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(h.len());
        let v = if n == 0 { 0 } else { u64::from_str_radix(&h[..n], 16).map_err(|_| format!("'{t}' is too large"))? };
        // A hex number takes no unit, not even the option's own: worth a note unless the
        // option counts in microseconds anyway.
        if n < h.len() {
            lenient(format!("'{t}' read as {v} us, ignoring '{}'", &h[n..]));
        } else if bare_us != 1.0 {
            lenient(format!("'{t}' read as {v} us: a hex time has no unit"));
        }
        return Ok(v as f64);
    }
    let split = body.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(body.len());
    let (num, rest) = body.split_at(split);
    let n: f64 = num.parse().map_err(|_| format!("'{t}' is not a time"))?;
    let lower = rest.to_ascii_lowercase();
    let (mult, used) = match lower.as_str() {
        "" => (bare_us, 0),
        "us" | "usec" => (1.0, rest.len()),
        "ms" | "msec" => (1e3, rest.len()),
        "s" => (1e6, 1),
        "m" => (60e6, 1),
        "h" => (3600e6, 1),
        "d" => (86400e6, 1),
        l if l.starts_with("us") => (1.0, 2),
        l if l.starts_with("ms") => (1e3, 2),
        l if l.starts_with(|c: char| c.is_ascii_alphabetic()) => (1.0, 0),
        _ => (bare_us, 0),
    };
    let v = n * mult;
    if used < rest.len() {
        let shown = if mult == 1.0 { format!("{} us", v as u64) } else { format!("{num}{}", &rest[..used]) };
        lenient(format!("'{t}' read as {shown}, ignoring '{}'", &rest[used..]));
    }
    Ok(v)
}

fn parse_bssplit(raw: &str, ctx: &Ctx) -> Result<Value, String> {
    let mut entries = Vec::new();
    let mut given = 0.0;
    let mut blanks = 0;
    for part in raw.split(':') {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let (bs, pct) = part.split_once('/').unwrap_or((part, ""));
        let bs = parse_size(bs, ctx)?;
        if bs == 0 {
            return Err("a block size in bssplit is 0".into());
        }
        let pct = if pct.trim().is_empty() {
            blanks += 1;
            f64::NAN
        } else {
            let p = parse_float(pct.trim())?;
            if !(0.0..=100.0).contains(&p) {
                return Err(format!("{p}% is not within 0% to 100%"));
            }
            given += p;
            p
        };
        entries.push((bs, pct));
    }
    if entries.is_empty() {
        return Err("bssplit has no entries".into());
    }
    if given > 100.0 + 1e-9 {
        return Err(format!("bssplit percentages add up to {given}%, more than 100%"));
    }
    if blanks > 0 {
        let share = (100.0 - given) / blanks as f64;
        for e in entries.iter_mut().filter(|e| e.1.is_nan()) {
            e.1 = share;
        }
    } else if (given - 100.0).abs() > 1e-6 {
        return Err(format!("bssplit percentages add up to {given}%, not 100%"));
    }
    Ok(Value::Split(entries))
}

/// One `cmdprio_bssplit` entry: block size, percentage, and the explicit (class, level) if given.
pub type PrioSplitEntry = (u64, f64, Option<(u32, u32)>);

/// `cmdprio_bssplit`: `bs/percentage` or `bs/percentage/class/level` entries separated by `:`.
/// Each percentage is the share of that block size's I/Os sent with the priority, so they need
/// not add up to anything.
fn parse_priosplit(raw: &str, ctx: &Ctx) -> Result<Value, String> {
    let mut entries = Vec::new();
    for part in raw.split(':').map(str::trim).filter(|p| !p.is_empty()) {
        let fields: Vec<&str> = part.split('/').map(str::trim).collect();
        if fields.len() != 2 && fields.len() != 4 {
            return Err(format!("'{part}' is not bs/percentage or bs/percentage/class/level"));
        }
        let bs = parse_size(fields[0], ctx)?;
        let pct = parse_float(fields[1])?;
        if !(0.0..=100.0).contains(&pct) {
            return Err(format!("{pct}% is not within 0% to 100%"));
        }
        let prio = if fields.len() == 4 {
            let int = |f: &str, what: &str, max: u32| -> Result<u32, String> {
                f.parse::<u32>().ok().filter(|v| *v <= max).ok_or_else(|| format!("'{f}' is not a priority {what}"))
            };
            let class = int(fields[2], "class (1 to 3)", 3)?;
            if class == 0 {
                return Err("'0' is not a priority class (1 to 3)".into());
            }
            Some((class, int(fields[3], "level (0 to 7)", 7)?))
        } else {
            None
        };
        entries.push((bs, pct, prio));
    }
    if entries.is_empty() {
        return Err("cmdprio_bssplit has no entries".into());
    }
    Ok(Value::PrioSplit(entries))
}

/// `buffer_pattern`: `0x` hex bytes, a "quoted" or 'quoted' string, or a decimal number (its 32
/// bits, little-endian), and any concatenation of those.
pub fn parse_pattern(text: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        if let Some(hex) = rest.strip_prefix("0x").or_else(|| rest.strip_prefix("0X")) {
            let end = hex.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(hex.len());
            let digits = &hex[..end];
            if digits.is_empty() {
                return Err("'0x' without hex digits".into());
            }
            let padded = if digits.len() % 2 == 1 { format!("0{digits}") } else { digits.to_string() };
            for i in (0..padded.len()).step_by(2) {
                out.push(u8::from_str_radix(&padded[i..i + 2], 16).expect("hex digits"));
            }
            rest = &hex[end..];
        } else if let Some(q) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') {
            let body = &rest[1..];
            let end = body.find(q).ok_or_else(|| "unterminated string".to_string())?;
            out.extend_from_slice(&body.as_bytes()[..end]);
            rest = &body[end + 1..];
        } else {
            let end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
            let n: u32 = rest[..end].parse().map_err(|_| format!("cannot read '{rest}'"))?;
            out.extend_from_slice(&n.to_le_bytes());
            rest = &rest[end..];
        }
        rest = rest.trim_start();
    }
    if out.is_empty() {
        return Err("the pattern is empty".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::lookup;

    fn size(s: &str) -> u64 {
        parse_size(s, &Ctx::default()).unwrap()
    }
    fn size1000(s: &str) -> u64 {
        parse_size(s, &Ctx { kb_base: 1000, ..Ctx::default() }).unwrap()
    }
    fn p(name: &str, raw: &str) -> Result<Parsed, String> {
        parse(lookup(name).unwrap(), raw, &Ctx::default())
    }

    #[test]
    fn binary_sizes_are_1024_based_in_every_spelling() {
        for s in ["4k", "4K", "4KB", "4KiB", "4kib", "4096", " 4k "] {
            assert_eq!(parse_binary_size(s), Ok(4096), "{s}");
        }
        assert_eq!(parse_binary_size("4MiB"), Ok(4 << 20));
        assert_eq!(parse_binary_size("1G"), Ok(1 << 30));
        assert_eq!(parse_binary_size("2T"), Ok(2 << 40));
        assert_eq!(parse_binary_size("4096000"), Ok(4_096_000));
        let e = parse_binary_size("4Q").unwrap_err();
        assert!(e.contains("'4Q'"), "{e}");
        assert!(parse_binary_size("-1k").is_err());
        assert!(parse_binary_size("99999999P").is_err());
        assert!(parse_binary_size("").is_err());
    }

    #[test]
    fn sizes_follow_kb_base_quirk() {
        assert_eq!(size("4k"), 4096);
        assert_eq!(size("4K"), 4096);
        assert_eq!(size("4Ki"), 4096);
        assert_eq!(size("4kb"), 4096);
        assert_eq!(size("4KiB"), 4000);
        assert_eq!(size("1m"), 1 << 20);
        assert_eq!(size("1MiB"), 1_000_000);
        assert_eq!(size("100G"), 100 << 30);
        assert_eq!(size("1t"), 1 << 40);
        assert_eq!(size("1p"), 1 << 50);
        assert_eq!(size("4096"), 4096);
        assert_eq!(size("0x1000"), 4096);
        assert_eq!(size("(1.5*1k)"), 1536);
        assert_eq!(size("(4k*2)"), 8192);
        assert_eq!(size("(1024*1024)"), 1 << 20);
        assert_eq!(size1000("4k"), 4000);
        assert_eq!(size1000("4KiB"), 4096);
        assert_eq!(size1000("1MiB"), 1 << 20);
    }

    #[test]
    fn sizes_read_trailing_characters_as_fio_does() {
        // Each pair measured with fio 3.33's --debug=parse ("ret=0, out=N").
        let c = Ctx::default();
        for (raw, want) in [
            ("65536)", 65536),
            ("4q", 4),
            ("4kq", 4096),
            ("1k:25", 1024),
            ("512/25", 512),
            ("4KiBx", 4000),
            ("4 k", 4),
            ("0x10g", 16),
            ("0x10)", 16),
            ("4kibx", 4000),
            ("4mq", 4 << 20),
            ("+4k", 4096),
            ("4kk", 4096),
            ("4bb", 4),
            ("4e3", 4),
            ("1.5k", 1),
            ("2.5m", 2),
            ("1.9", 1),
        ] {
            assert_eq!(parse_size(raw, &c), Ok(want), "{raw}");
            assert!(take_leniency().is_some_and(|n| n.contains("read as")), "{raw}");
        }
        assert_eq!(parse_size("4k", &c), Ok(4096));
        assert_eq!(take_leniency(), None);
        // What fio refuses stays refused.
        for raw in ["abc", "k4", "-1", "", "(4k)x", "99999999999999999999999"] {
            assert!(parse_size(raw, &c).is_err(), "{raw}");
        }
        // Integers and booleans too: iodepth=4) is 4, direct=1x is 1.
        assert_eq!(parse_int("4)"), Ok(4));
        assert_eq!(parse_int("4kq"), Ok(4096));
        assert!(parse_int("x4").is_err());
    }

    #[test]
    fn keywords() {
        let ctx = Ctx { pagesize: 4096, ncpus: 2, mb_memory: 24000, kb_base: 1024 };
        let bs = lookup("bs").unwrap();
        assert_eq!(parse(bs, "$pagesize", &ctx).unwrap(), Parsed::One(Value::Size(4096)));
        let nj = lookup("numjobs").unwrap();
        assert_eq!(parse(nj, "$ncpus", &ctx).unwrap(), Parsed::One(Value::Int(2)));
        assert_eq!(parse(nj, "($ncpus*2)", &ctx).unwrap(), Parsed::One(Value::Int(4)));
    }

    #[test]
    fn buffer_patterns() {
        assert_eq!(parse_pattern("0xdeadbeef").unwrap(), [0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(parse_pattern("'abc'0x01").unwrap(), b"abc\x01");
        assert_eq!(parse_pattern("\"xy\"").unwrap(), b"xy");
        assert_eq!(parse_pattern("1").unwrap(), [1, 0, 0, 0]);
        assert!(parse_pattern("0x").is_err());
        assert!(parse_pattern("'open").is_err());
        assert!(parse_pattern("zz").is_err());
    }

    #[test]
    fn integers_take_binary_suffixes_like_fio() {
        assert_eq!(parse_int("200k"), Ok(204_800));
        assert_eq!(parse_int("2M"), Ok(2 << 20));
        assert_eq!(parse_int("1Ki"), Ok(1024));
        assert_eq!(parse_int("1kb"), Ok(1024));
        assert_eq!(parse_int("0x10"), Ok(16));
        for bad in ["k", "99999999999p", ""] {
            assert!(parse_int(bad).is_err(), "{bad}");
        }
        // Trailing characters, read as fio reads them.
        assert_eq!(parse_int("1q"), Ok(1));
        assert_eq!(parse_int("1kk"), Ok(1024));
    }

    #[test]
    fn times() {
        use TimeUnit::*;
        assert_eq!(parse_time("10", Sec).unwrap(), 10_000_000);
        assert_eq!(parse_time("10s", Sec).unwrap(), 10_000_000);
        assert_eq!(parse_time("2s", Sec).unwrap(), 2_000_000);
        assert_eq!(parse_time("500ms", Sec).unwrap(), 500_000);
        assert_eq!(parse_time("1m", Sec).unwrap(), 60_000_000);
        assert_eq!(parse_time("2m", Sec).unwrap(), 120_000_000);
        assert_eq!(parse_time("1h", Sec).unwrap(), 3_600_000_000);
        assert_eq!(parse_time("100us", Sec).unwrap(), 100);
        assert_eq!(parse_time("100", Usec).unwrap(), 100);
        assert_eq!(parse_time("(2*60)", Sec).unwrap(), 120_000_000);
        assert!(parse_time("abc", Sec).is_err());
        // fio's readings of trailing characters (fio 3.33, `--debug=parse`).
        assert_eq!(parse_time("10x", Sec).unwrap(), 10);
        assert_eq!(parse_time("2sec", Sec).unwrap(), 2);
        assert_eq!(parse_time("1s5", Sec).unwrap(), 1);
        assert_eq!(parse_time("2msq", Sec).unwrap(), 2000);
        assert_eq!(parse_time("2)", Sec).unwrap(), 2_000_000);
        assert_eq!(parse_time("0x10", Sec).unwrap(), 16);
        assert_eq!(parse_time("2S", Sec).unwrap(), 2_000_000);
    }

    #[test]
    fn pieces_as_fio_reads_them() {
        let size = |name, raw| match p(name, raw) {
            Ok(Parsed::One(Value::Size(s))) => Ok(s),
            Ok(Parsed::One(Value::Int(i))) => Ok(i as u64),
            other => Err(format!("{other:?}")),
        };
        assert_eq!(size("size", "4k:8k"), Ok(8192));
        assert_eq!(size("size", "8k-4k"), Ok(4096));
        assert_eq!(size("offset", "junk:4k:junk"), Ok(4096));
        assert_eq!(size("size", "4k:"), Ok(4096));
        assert!(size("size", "junk:junk").is_err());
        assert_eq!(size("number_ios", "3:5"), Ok(3));
        assert_eq!(size("number_ios", "junk:5"), Ok(0));
        assert_eq!(size("zonesize", "8k:16k"), Ok(8192));
        assert_eq!(size("zoneskip", "8k:16k"), Ok(16384));
    }

    #[test]
    fn per_direction_lists() {
        let v = |s| match p("bs", s).unwrap() {
            Parsed::PerDir(d) => d.map(|v| v.map(|v| if let Value::Size(s) = v { s } else { 0 })),
            Parsed::One(Value::Size(s)) => [Some(s); 3],
            other => panic!("{other:?}"),
        };
        assert_eq!(v("4k"), [Some(4096); 3]);
        assert_eq!(v("4k,8k,1k"), [Some(4096), Some(8192), Some(1024)]);
        assert_eq!(v("8k,32k"), [Some(8192), Some(32768), Some(32768)]);
        assert_eq!(v("8k,32k,"), [Some(8192), Some(32768), None]);
        assert_eq!(v(",8k"), [None, Some(8192), Some(8192)]);
        // fio 3.33's readings (--debug=parse and the job's header line).
        assert_eq!(v("1k,2k,3k,junk"), [Some(1024), Some(2048), Some(3072)]);
        assert_eq!(v("4k:8k"), [Some(4096), Some(8192), Some(8192)]);
        assert_eq!(v("4k-8k"), [Some(4096), Some(8192), Some(8192)]);
        assert_eq!(v("1k-2k-3k"), [Some(1024), Some(2048), Some(3072)]);
        assert_eq!(v("4k,8k:16k"), [Some(4096), Some(8192), Some(16384)]);
        assert_eq!(v("4k-8k,16k"), [Some(4096), Some(16384), Some(16384)]);
        assert_eq!(v(":8k"), [None, Some(8192), Some(8192)]);
        assert_eq!(v("4k,junk,8k"), [Some(4096), None, Some(8192)]);
        // One separator at a time: a ',' anywhere ahead wins over a nearer ':' or '-'.
        assert_eq!(v("4k:,8k"), [Some(4096), Some(8192), Some(8192)]);
        assert_eq!(v("4k:8k,16k"), [Some(4096), Some(16384), Some(16384)]);
        assert_eq!(v("4k:8k-16k"), [Some(4096), Some(8192), Some(16384)]);
        assert_eq!(v("4k-8k:16k"), [Some(4096), Some(16384), Some(16384)]);
        assert_eq!(v("4k,:8k"), [Some(4096), None, Some(8192)]);
        assert_eq!(v("(8k-4k):8k"), [Some(4096), Some(8192), Some(8192)]);
        assert_eq!(v("4k,,8k"), [Some(4096), None, Some(8192)]);
        assert!(take_leniency().is_none());
        assert!(p("bs", ",").is_err());
        assert!(p("bs", "junk,junk").is_err());
    }

    #[test]
    fn a_block_size_range_needs_both_bounds() {
        for one in ["1k", "1k)", "1k:", ":4k", "1k,", ",1k", "1k,2k"] {
            let e = p("bsrange", one).unwrap_err();
            assert!(e.contains("both bounds") || e.contains("not a size"), "{one}: {e}");
        }
        let dirs = |s| match p("bsrange", s).unwrap() {
            Parsed::PerDir(d) => d,
            other => panic!("{other:?}"),
        };
        assert_eq!(dirs("4k,1k-2k"), [None, Some(Value::Range(1024, 2048)), Some(Value::Range(1024, 2048))]);
        assert_eq!(dirs("1k,,2k-4k"), [None, None, Some(Value::Range(2048, 4096))]);
        // filesize is a range that also takes one size.
        assert_eq!(p("filesize", "1k").unwrap(), Parsed::One(Value::Range(1024, 1024)));
        assert_eq!(p("filesize", "1k-").unwrap(), Parsed::One(Value::Range(1024, 1024)));
        assert_eq!(p("filesize", "1k-0").unwrap(), Parsed::One(Value::Range(1024, 1024)));
        assert_eq!(p("bsrange", "4k-0").unwrap(), Parsed::One(Value::Range(4096, 4096)));
        assert!(p("bsrange", "1k-").is_err());
    }

    #[test]
    fn ranges_and_splits() {
        assert_eq!(p("bsrange", "4k-64k").unwrap(), Parsed::One(Value::Range(4096, 65536)));
        assert_eq!(p("bsrange", "64k-4k").unwrap(), Parsed::One(Value::Range(4096, 65536)));
        assert_eq!(p("bssplit", "4k/50:64k/50").unwrap(), Parsed::One(Value::Split(vec![(4096, 50.0), (65536, 50.0)])));
        assert_eq!(
            p("bssplit", "4k/20:8k/:64k/").unwrap(),
            Parsed::One(Value::Split(vec![(4096, 20.0), (8192, 40.0), (65536, 40.0)]))
        );
        assert!(p("bssplit", "4k/60:64k/50").is_err());
        assert!(p("bssplit", "4k/60:64k/30").is_err());
        assert_eq!(
            p("cmdprio_bssplit", "4k/30/2/3:64k/50").unwrap(),
            Parsed::One(Value::PrioSplit(vec![(4096, 30.0, Some((2, 3))), (65536, 50.0, None)]))
        );
        for bad in ["4k", "4k/30/2", "4k/130", "4k/30/4/0", "4k/30/0/0", "4k/30/1/8", ""] {
            assert!(p("cmdprio_bssplit", bad).is_err(), "{bad}");
        }
        match p("bssplit", "4k/50:64k/50,8k/100").unwrap() {
            Parsed::PerDir([Some(_), Some(Value::Split(w)), Some(_)]) => {
                assert_eq!(w, vec![(8192, 100.0)])
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn rw_modifiers() {
        assert_eq!(p("rw", "randread:8").unwrap(), Parsed::One(Value::Rw(RwMode::RandRead, 8)));
        assert_eq!(p("rw", "rw:4k").unwrap(), Parsed::One(Value::Rw(RwMode::ReadWrite, 4096)));
        assert_eq!(p("readwrite", "randrw").unwrap(), Parsed::One(Value::Rw(RwMode::RandRw, 0)));
        assert_eq!(p("rw", "read:-8k").unwrap(), Parsed::One(Value::Rw(RwMode::Read, -8192)));
        assert!(p("rw", "randread:-8").is_err());
        assert!(p("rw", "foo").unwrap_err().contains("'foo' is not an I/O direction"));
    }

    #[test]
    fn booleans_ints_percentages() {
        assert_eq!(p("direct", "1").unwrap(), Parsed::One(Value::Bool(true)));
        assert!(p("direct", "2").is_err());
        assert_eq!(p("time_based", "").unwrap(), Parsed::One(Value::Bool(true)));
        assert!(p("iodepth", "-1").is_err());
        assert!(p("iodepth", "abc").is_err());
        assert_eq!(p("iodepth", "0x10").unwrap(), Parsed::One(Value::Int(16)));
        assert_eq!(p("size", "50%").unwrap(), Parsed::One(Value::Pct(50.0)));
        assert!(p("size", "150%").is_err());
        assert!(p("percentile_list", "50:99:99.9").is_ok());
        assert!(p("percentile_list", "50:101").is_err());
    }
}
