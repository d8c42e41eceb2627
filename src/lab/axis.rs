//! Sweep axes: `--vary OPTION=VALUES`, checked against the option table before anything runs.
//!
//! VALUES is a comma-separated list whose items are values of the option as fio writes them,
//! or ranges that expand to several:
//!
//! - `1,2,4,8`, `randread,randwrite`, `4k,64k,1m`;
//! - `1..16` (step +1; sizes double by default), `1..64:x2` (multiply), `10..60:+10` (add);
//! - `1k,2k,4k,...,64m`: `...` continues the progression set by the (at least three) values
//!   before it, doubling here, up to the value after it;
//! - a value with commas of its own (`bs=4k,8k`, read and write sizes): separate the values with
//!   `;` instead, `--vary 'bs=4k,8k;16k,32k'`.

use anyhow::{bail, Result};
use fiox_options::table::{self, Kind, OptDef, TimeUnit};
use fiox_options::{value, Ctx};

/// Points per axis and per sweep beyond which a typo is more likely than a plan.
pub const MAX_VALUES: usize = 1000;

/// One swept option and its values, as they will be written into the job.
#[derive(Debug, Clone)]
pub struct Axis {
    pub def: &'static OptDef,
    /// The option's name as the user typed it (an alias stays an alias).
    pub typed: String,
    pub values: Vec<String>,
}

impl Axis {
    /// The value's position on a numeric axis (bytes, microseconds, counts); `None` for words.
    pub fn numeric(&self, v: &str, ctx: &Ctx) -> Option<f64> {
        numeric(self.def, v, ctx)
    }

    /// Numeric positions for every value, when all have one.
    pub fn positions(&self, ctx: &Ctx) -> Option<Vec<f64>> {
        self.values.iter().map(|v| self.numeric(v, ctx)).collect()
    }

    /// A value given twice (pointless in a cross product; zipped axes may repeat values).
    pub fn repeated(&self) -> Option<&str> {
        let mut seen = std::collections::HashSet::new();
        self.values.iter().find(|v| !seen.insert(v.as_str())).map(String::as_str)
    }

    /// Whether the values are sizes in bytes.
    pub fn is_size(&self) -> bool {
        matches!(self.def.kind, Kind::Size | Kind::SizeOrPct | Kind::Range)
    }
}

/// Parses one `--vary` argument.
pub fn parse(spec: &str, ctx: &Ctx) -> Result<Axis> {
    let Some((name, list)) = spec.split_once('=') else {
        bail!("--vary '{spec}': write OPTION=VALUES, e.g. --vary bs=4k,64k,1m or --vary iodepth=1..64:x2");
    };
    let name = name.trim().trim_start_matches('-');
    let Some(def) = table::lookup(name) else {
        let s = table::suggest(name);
        let hint = if s.is_empty() { String::new() } else { format!("; did you mean '{}'?", s[0]) };
        bail!("--vary: unknown option '{name}'{hint}");
    };
    if def.name == "name" {
        bail!("--vary: 'name' cannot be swept (points are told apart by their values)");
    }
    let sep = if list.contains(';') { ';' } else { ',' };
    let items: Vec<&str> = list.split(sep).map(str::trim).collect();
    if items.iter().all(|i| i.is_empty()) {
        bail!("--vary {name}: no values after '='");
    }
    let mut values: Vec<String> = Vec::new();
    let mut i = 0;
    while i < items.len() {
        let item = items[i];
        if item.is_empty() {
            bail!("--vary {name}={list}: empty value in the list");
        }
        if item == "..." {
            let Some(end) = items.get(i + 1).filter(|e| !e.is_empty() && **e != "...") else {
                bail!("--vary {name}={list}: '...' needs a last value after it, e.g. 1k,2k,4k,...,64m");
            };
            let more = continue_progression(def, name, &values, end, ctx)?;
            values.extend(more);
            i += 2;
            continue;
        }
        if let Some((lo, rest)) = split_range(item) {
            values.extend(expand_range(def, name, lo, rest, ctx)?);
        } else {
            values.push(item.to_string());
        }
        if values.len() > MAX_VALUES {
            bail!("--vary {name}: more than {MAX_VALUES} values");
        }
        i += 1;
    }
    for v in &values {
        check(def, name, v, ctx)?;
    }
    Ok(Axis { def, typed: name.to_string(), values })
}

/// A value must be valid for its option; the message names the option and the value.
fn check(def: &OptDef, name: &str, v: &str, ctx: &Ctx) -> Result<()> {
    if def.takes_no_value() && !matches!(v, "0" | "1") {
        bail!("--vary {name}: bad value '{v}': {name} is a switch, so its values are 0 and 1");
    }
    let _ = value::take_leniency();
    if let Err(e) = value::parse(def, v, ctx) {
        bail!("--vary {name}: bad value '{v}': {e} (accepted: {})", def.forms());
    }
    // fio reads a slip such as `4q` as 4 (so job files run unchanged), but a sweep's axis is
    // fiox's own syntax: a value fio would read leniently is refused here rather than swept.
    if let Some(note) = value::take_leniency() {
        bail!("--vary {name}: bad value '{v}': {note}; write the value fio should read (accepted: {})", def.forms());
    }
    Ok(())
}

/// `lo..hi` or `lo..hi:step`, but not `...`.
fn split_range(item: &str) -> Option<(&str, &str)> {
    if item.contains("...") {
        return None;
    }
    item.split_once("..")
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Step {
    Times(f64),
    Plus(f64),
}

/// The kinds of value a range can run over, and how to read and write them.
fn numeric(def: &OptDef, v: &str, ctx: &Ctx) -> Option<f64> {
    match def.kind {
        Kind::Int { .. } | Kind::Bool => value::parse_int(v).ok().map(|n| n as f64),
        Kind::Size | Kind::SizeOrPct | Kind::Range => value::parse_size(v, ctx).ok().map(|n| n as f64),
        Kind::Time { unit } => value::parse_time(v, unit).ok().map(|n| n as f64),
        Kind::Float { .. } => v.trim().parse().ok(),
        _ => None,
    }
}

/// Writes a generated number back in the option's syntax: `4k`, `1m`, `30`, `500ms`.
fn render(def: &OptDef, x: f64) -> String {
    match def.kind {
        Kind::Size | Kind::SizeOrPct | Kind::Range => size_text(x.round() as u64),
        Kind::Time { unit } => {
            let us = x.round() as u64;
            let base = match unit {
                TimeUnit::Usec => 1,
                TimeUnit::Msec => 1_000,
                TimeUnit::Sec => 1_000_000,
            };
            if us % base == 0 {
                (us / base).to_string()
            } else if us % 1000 == 0 {
                format!("{}ms", us / 1000)
            } else {
                format!("{us}us")
            }
        }
        Kind::Float { .. } => {
            let s = format!("{x:.6}");
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        }
        _ => (x.round() as i64).to_string(),
    }
}

/// A byte count as fio's size syntax, exactly: `512`, `4k`, `1m`, `1536k`.
pub fn size_text(n: u64) -> String {
    for (shift, suffix) in [(40, "t"), (30, "g"), (20, "m"), (10, "k")] {
        if n >= 1 << shift && n % (1 << shift) == 0 {
            return format!("{}{suffix}", n >> shift);
        }
    }
    n.to_string()
}

fn number(def: &OptDef, name: &str, v: &str, ctx: &Ctx) -> Result<f64> {
    if numeric(def, "1", ctx).is_none() && numeric(def, "1k", ctx).is_none() {
        bail!("--vary {name}: '{v}' is used in a range, but {name} takes {}, not numbers", def.forms());
    }
    match numeric(def, v, ctx) {
        Some(x) => Ok(x),
        None => {
            let why = value::parse(def, v, ctx).err().unwrap_or_else(|| "not a number".into());
            bail!("--vary {name}: bad value '{v}': {why}")
        }
    }
}

fn expand_range(def: &OptDef, name: &str, lo: &str, rest: &str, ctx: &Ctx) -> Result<Vec<String>> {
    let (hi, step) = match rest.split_once(':') {
        Some((hi, s)) => (hi, Some(s)),
        None => (rest, None),
    };
    let (a, b) = (number(def, name, lo.trim(), ctx)?, number(def, name, hi.trim(), ctx)?);
    if b < a {
        bail!("--vary {name}: the range {lo}..{hi} runs backwards");
    }
    let is_size = matches!(def.kind, Kind::Size | Kind::SizeOrPct | Kind::Range);
    let step = match step.map(str::trim) {
        None if is_size => Step::Times(2.0),
        None => Step::Plus(if matches!(def.kind, Kind::Time { .. }) { number(def, name, "1", ctx)? } else { 1.0 }),
        Some(s) => {
            if let Some(m) = s.strip_prefix('x').or_else(|| s.strip_prefix('*')) {
                match m.parse::<f64>() {
                    Ok(m) if m > 1.0 => Step::Times(m),
                    _ => bail!("--vary {name}: bad step ':{s}': a factor must be a number above 1 (:x2)"),
                }
            } else {
                let add = s.strip_prefix('+').unwrap_or(s);
                let d = number(def, name, add, ctx).map_err(|_| {
                    anyhow::anyhow!("--vary {name}: bad step ':{s}': write :xN to multiply or :+N to add")
                })?;
                if d <= 0.0 {
                    bail!("--vary {name}: bad step ':{s}': the step must be above 0");
                }
                Step::Plus(d)
            }
        }
    };
    if let Step::Times(_) = step {
        if a <= 0.0 {
            bail!("--vary {name}: a multiplying range cannot start at {lo}");
        }
    }
    let mut out = Vec::new();
    let mut x = a;
    while x <= b * (1.0 + 1e-12) {
        out.push(render(def, x));
        if out.len() > MAX_VALUES {
            bail!("--vary {name}: the range {lo}..{rest} has more than {MAX_VALUES} values");
        }
        x = match step {
            Step::Times(m) => x * m,
            Step::Plus(d) => x + d,
        };
    }
    Ok(out)
}

/// Values after `a,b,c,...` up to `end`, continuing a constant ratio (1,2,4) or difference
/// (10,20,30).
fn continue_progression(def: &OptDef, name: &str, before: &[String], end: &str, ctx: &Ctx) -> Result<Vec<String>> {
    if before.len() < 3 {
        bail!(
            "--vary {name}: give at least three values before '...' so the step is clear (1,2,4,... doubles; \
             10,20,30,... adds), or write a range such as 1..64:x2"
        );
    }
    let xs: Vec<f64> = before[before.len() - 3..].iter().map(|v| number(def, name, v, ctx)).collect::<Result<_>>()?;
    let last = xs[2];
    let close = |p: f64, q: f64| (p - q).abs() <= 1e-9 * p.abs().max(q.abs()).max(1.0);
    let step = if xs[0] > 0.0 && close(xs[1] / xs[0], xs[2] / xs[1]) && xs[1] / xs[0] > 1.0 {
        Step::Times(xs[1] / xs[0])
    } else if close(xs[1] - xs[0], xs[2] - xs[1]) && xs[1] > xs[0] {
        Step::Plus(xs[1] - xs[0])
    } else {
        bail!(
            "--vary {name}: {} do not grow by a constant factor or step, so '...' cannot continue them",
            before.join(",")
        );
    };
    let target = number(def, name, end, ctx)?;
    let mut out = Vec::new();
    let mut x = last;
    loop {
        x = match step {
            Step::Times(m) => x * m,
            Step::Plus(d) => x + d,
        };
        if x > target * (1.0 + 1e-9) {
            bail!("--vary {name}: {end} is not reached by continuing {}", before.join(","));
        }
        out.push(render(def, x));
        if out.len() > MAX_VALUES {
            bail!("--vary {name}: '...' gives more than {MAX_VALUES} values");
        }
        if close(x, target) {
            // Keep the user's spelling of the last value.
            *out.last_mut().expect("just pushed") = end.to_string();
            return Ok(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--vary` text never panics, whatever it is (mutations of valid and invalid axes).
    #[test]
    fn fuzz_axis_parser() {
        fn target(data: &[u8]) {
            let _ = parse(&String::from_utf8_lossy(data), &ctx());
        }
        let corpus: Vec<Vec<u8>> = [
            "bs=1k,2k,4k,...,64m",
            "numjobs=1..16:x2",
            "runtime=10..60:+10",
            "rw=randread,write",
            "bs=4k,8k;16k,32k",
            "iodepth=1,2,4",
            "size=(1+2)k",
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
        let secs = std::env::var("FIOX_FUZZ_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(2.0);
        assert!(fiox_options::fuzz::run(target, &corpus, secs, 0xa715) > 0);
    }

    fn ctx() -> Ctx {
        Ctx { kb_base: 1024, pagesize: 4096, ncpus: 2, mb_memory: 1024 }
    }

    fn vals(spec: &str) -> Vec<String> {
        parse(spec, &ctx()).unwrap_or_else(|e| panic!("{spec}: {e}")).values
    }

    fn err(spec: &str) -> String {
        parse(spec, &ctx()).unwrap_err().to_string()
    }

    #[test]
    fn lists_ranges_and_progressions() {
        assert_eq!(vals("iodepth=1,2,4"), ["1", "2", "4"]);
        assert_eq!(vals("iodepth=1..64:x2"), ["1", "2", "4", "8", "16", "32", "64"]);
        assert_eq!(vals("numjobs=1..4"), ["1", "2", "3", "4"]);
        assert_eq!(vals("numjobs=1..16:x2"), ["1", "2", "4", "8", "16"]);
        assert_eq!(vals("runtime=10..60:+10"), ["10", "20", "30", "40", "50", "60"]);
        assert_eq!(vals("runtime=10,20,30,40,50,60,90"), ["10", "20", "30", "40", "50", "60", "90"]);
        assert_eq!(vals("bs=4k..64k"), ["4k", "8k", "16k", "32k", "64k"]);
        assert_eq!(vals("bs=4k..16k:+4k"), ["4k", "8k", "12k", "16k"]);
        let bs = vals("bs=1k,2k,4k,...,64m");
        assert_eq!(bs.len(), 17);
        assert_eq!((bs[0].as_str(), bs[10].as_str(), bs[16].as_str()), ("1k", "1m", "64m"));
        assert_eq!(vals("runtime=10,20,30,...,60"), ["10", "20", "30", "40", "50", "60"]);
        assert_eq!(vals("rw=randread,randwrite,read,write"), ["randread", "randwrite", "read", "write"]);
        assert_eq!(vals("bs=4k,8k;16k,32k"), ["4k,8k", "16k,32k"]);
        assert_eq!(vals("blocksize=4k,8k")[1], "8k");
    }

    #[test]
    fn bad_input_names_option_and_value() {
        assert!(
            err("iodepht=1,2").contains("unknown option 'iodepht'; did you mean 'iodepth'?"),
            "{}",
            err("iodepht=1,2")
        );
        assert!(err("bs=4k,4q").contains("--vary bs: bad value '4q'"), "{}", err("bs=4k,4q"));
        assert!(err("iodepth=0,1").contains("bad value '0'"));
        assert!(err("rw=read,foo").contains("bad value 'foo'"));
        assert!(err("rw=read..write").contains("takes"), "{}", err("rw=read..write"));
        assert!(err("iodepth=1,2,...").contains("needs a last value"));
        assert!(err("iodepth=1,2,...,8").contains("at least three values"));
        assert!(err("iodepth=1,2,4,...,12").contains("12 is not reached"));
        assert!(err("iodepth=8..1").contains("backwards"));
        assert!(err("iodepth=1..8:x1").contains("bad step"));
        assert!(err("iodepth").contains("write OPTION=VALUES"));
        assert!(err("iodepth=").contains("no values"));
        assert!(err("iodepth=1..100000").contains("more than"));
    }

    #[test]
    fn sizes_render_exactly() {
        assert_eq!(size_text(4096), "4k");
        assert_eq!(size_text(1536 * 1024), "1536k");
        assert_eq!(size_text(1 << 30), "1g");
        assert_eq!(size_text(1000), "1000");
    }
}
