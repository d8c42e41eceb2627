//! NVMe data placement (fio 3.42): Flexible Data Placement and Streams directives on writes
//! (`dataplacement`/`fdp`, `plids`/`fdp_pli`, `plid_select`/`fdp_pli_select`, `dp_scheme`).
//! fio 3.42 takes them on any engine and any file; a run that asks for FDP needs a device that
//! reports its reclaim unit handles, which only io_uring_cmd and xnvme can fetch, so fio refuses
//! every other run that asks for it when the job's files are set up. fiox checks the options
//! the same way here and refuses the run where fio does (see `fdp_refusal`).

use crate::error::Result;
use crate::spec::{Arg, JobSpec};
use crate::table::{Category as C, Choice, Kind as K, OptDef as O};

/// The most placement IDs a job may list, as in fio 3.42 ("only 128 IDs supported").
pub const MAX_PLIDS: usize = 128;

/// Which placement directive writes carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PlacementMode {
    #[default]
    None,
    Fdp,
    Streams,
}

/// A job's data placement, as given.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Placement {
    pub mode: PlacementMode,
    /// `plids`: placement ID indices (FDP) or stream IDs (streams), in the order given.
    pub ids: Vec<u32>,
    /// `plid_select`: `roundrobin`, `random` or `scheme`.
    pub select: &'static str,
    /// `dp_scheme`: `(start, end, index)` offset ranges, read from the file when the job is
    /// parsed (fio reads it then too).
    pub scheme: Vec<(u64, u64, u32)>,
}

#[rustfmt::skip]
// Binders write `Ok(s.field = value)`: the assignment is the point, so clippy's unit_arg is off.
#[allow(clippy::unit_arg)]
pub(super) static DEFS: &[O] = &[
    O::new("dataplacement", K::Choice(MODES), C::IoType, "Data placement directive on writes (fio 3.42; needs an NVMe device with FDP or Streams)").def("none").to(|s, v| Ok(s.placement.mode = match v.choice() { "fdp" => PlacementMode::Fdp, "streams" => PlacementMode::Streams, _ => s.placement.mode })),
    O::new("fdp", K::Bool, C::IoType, "Flexible Data Placement on writes: the same as dataplacement=fdp (fio 3.42)").def("0").to(|s, v| { if v.flag() { s.placement.mode = PlacementMode::Fdp } Ok(()) }),
    O::new("plid_select", K::Choice(SELECT), C::IoType, "How the next placement ID is chosen (fio 3.42)").alias(&["fdp_pli_select"]).def("roundrobin").to(|s, v| Ok(s.placement.select = v.choice())),
    O::new("plids", K::Str, C::IoType, "Placement ID indices (FDP) or stream IDs (streams) writes may use, as a list like 0,2-4 (fio 3.42; at most 128)").alias(&["fdp_pli"]).to(plids),
    O::new("dp_scheme", K::Str, C::IoType, "File of 'start, end, index' lines choosing the placement ID by write offset (fio 3.42; with plid_select=scheme)").to(dp_scheme),
];

static MODES: &[Choice] = &[
    Choice { word: "none", help: "Do not specify a data placement interface" },
    Choice { word: "fdp", help: "Use Flexible Data Placement interface" },
    Choice { word: "streams", help: "Use Streams interface" },
];

static SELECT: &[Choice] = &[
    Choice { word: "random", help: "Choose a Placement ID at random (uniform)" },
    Choice { word: "roundrobin", help: "Round robin select Placement IDs" },
    Choice { word: "scheme", help: "Use a scheme(based on LBA) to select Placement IDs" },
];

/// `plids=0,2-4`: numbers and ranges, in the order given.
fn plids(s: &mut JobSpec, v: &Arg<'_>) -> Result<()> {
    let text = v.text();
    let mut ids = Vec::new();
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let num = |t: &str| {
            t.trim()
                .parse::<u32>()
                .map_err(|_| v.err(format!("plids={text}: '{t}' is not a number or a range like 2-4")))
        };
        let (lo, hi) = match item.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => (num(item)?, num(item)?),
        };
        if hi < lo {
            return Err(v.err(format!("plids={text}: the range {item} ends before it starts")));
        }
        for id in lo..=hi {
            if ids.len() == MAX_PLIDS {
                return Err(v.err(format!("plids={text}: only {MAX_PLIDS} IDs supported")));
            }
            ids.push(id);
        }
    }
    s.placement.ids = ids;
    Ok(())
}

/// `dp_scheme=FILE`: read now, each line `start, end, index`.
fn dp_scheme(s: &mut JobSpec, v: &Arg<'_>) -> Result<()> {
    let path = v.text().trim().to_string();
    let text =
        std::fs::read_to_string(&path).map_err(|e| v.err(format!("dp_scheme={path}: cannot read the file: {e}")))?;
    let mut scheme = Vec::new();
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let bad = || v.err(format!("dp_scheme={path}, line {}: '{}' is not 'start, end, index'", n + 1, line.trim()));
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let [a, b, c] = fields[..] else { return Err(bad()) };
        let (start, end, index) = (
            a.parse::<u64>().map_err(|_| bad())?,
            b.parse::<u64>().map_err(|_| bad())?,
            c.parse::<u32>().map_err(|_| bad())?,
        );
        scheme.push((start, end, index));
    }
    s.placement.scheme = scheme;
    Ok(())
}

impl Placement {
    /// fio 3.42's check when the job is set up: Streams need their IDs.
    pub(crate) fn check(&self) -> std::result::Result<(), String> {
        if self.mode == PlacementMode::Streams && self.ids.is_empty() {
            return Err("stream IDs must be provided for dataplacement=streams".into());
        }
        Ok(())
    }

    /// Why a run on `file` with `engine` cannot place its writes, in fio 3.42's words where fio
    /// refuses it: every engine but io_uring_cmd and xnvme lacks the command that fetches the
    /// reclaim unit handles. fiox does not fetch them on io_uring_cmd either yet.
    pub fn fdp_refusal(&self, file: &str, engine: &str) -> Option<String> {
        if self.mode != PlacementMode::Fdp {
            return None;
        }
        Some(match engine {
            "io_uring_cmd" | "xnvme" => format!(
                "{file}: dataplacement=fdp: fiox does not fetch reclaim unit handles on {engine} yet, so it cannot place writes"
            ),
            _ => format!("{file}: engine ({engine}) lacks fetch ruhs\nruh info failed for {file} (22)"),
        })
    }
}
