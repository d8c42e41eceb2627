//! Replaying recorded I/O (`read_iolog` and its companions) and zoned I/O (`zonemode` and the
//! zone sizes). Ranges and defaults are fio 3.33's, as `fio --cmdhelp` prints them.

use crate::error::Result;
use crate::spec::{Arg, JobSpec, ZoneMode};
use crate::table::{Category as C, Choice, Kind as K, OptDef as O};

const INT0: K = K::Int { min: 0, max: i64::MAX };
const ZONES: K = K::Int { min: 0, max: 4096 };
const FRACTION: K = K::Float { min: 0.0, max: 1.0 };

#[rustfmt::skip]
// Binders write `Ok(s.field = value)`: the assignment is the point, so clippy's unit_arg is off.
#[allow(clippy::unit_arg)]
pub(super) static DEFS: &[O] = &[
    O::new("read_iolog", K::Str, C::IoType, "Replay the I/O recorded in this iolog (version 2 or 3) or blktrace file; several blktrace files separated by ':' are merged").to(|s, v| Ok(s.replay_mut().paths = v.trimmed().map_or_else(Vec::new, |l| l.split(':').filter(|p| !p.is_empty()).map(str::to_string).collect()))),
    O::new("read_iolog_chunked", K::Bool, C::IoType, "Read the iolog in pieces while replaying (fiox reads it whole before the job starts)").def("0").to(|s, v| Ok(s.replay_mut().chunked = v.flag())),
    O::new("replay_no_stall", K::Bool, C::IoType, "Replay as fast as possible instead of keeping the log's time between I/Os").def("0").to(|s, v| Ok(s.replay_mut().no_stall = v.flag())),
    O::new("replay_redirect", K::Str, C::IoType, "Replay every I/O on this file or device, whatever the log names").to(|s, v| Ok(s.replay_mut().redirect = v.trimmed())),
    O::new("replay_align", INT0, C::IoType, "Round replayed offsets down to a multiple of this power of two").to(replay_align),
    O::new("replay_scale", INT0, C::IoType, "Divide replayed offsets by this factor").def("1").to(|s, v| Ok(s.replay_mut().scale = v.u64().max(1))),
    O::new("replay_time_scale", K::Int { min: 1, max: i64::MAX }, C::IoType, "Time between replayed I/Os, in percent of the log's (200: twice as fast)").def("100").to(|s, v| Ok(s.replay_mut().time_scale = v.u64().max(1))),
    O::new("replay_skip", K::Str, C::IoType, "Leave these kinds of blktrace I/O out of the replay: read, write, trim, sync").to(replay_skip),
    O::new("merge_blktrace_file", K::Str, C::IoType, "Merge the blktrace files of read_iolog into this file, then replay it").to(|s, v| Ok(s.replay_mut().merge_file = v.trimmed())),
    O::new("merge_blktrace_scalars", K::FloatList, C::IoType, "Per merged trace: its time between I/Os, in percent (50: twice as fast)").to(|s, v| Ok(s.replay_mut().merge_scalars = v.floats())),
    O::new("merge_blktrace_iters", K::FloatList, C::IoType, "Per merged trace: how many times it is repeated in the merge").to(|s, v| Ok(s.replay_mut().merge_iters = v.floats())),
    O::new("zonemode", K::Choice(ZONEMODE), C::Target, "How zonesize, zonerange and zoneskip divide the I/O region").def("none").to(|s, v| Ok(s.zones.mode = match v.choice() { "strided" => ZoneMode::Strided, "zbd" => ZoneMode::Zbd, _ => ZoneMode::None })),
    O::new("zonesize", K::Size, C::Target, "Bytes of I/O done in each zone before the next one").def("0").first_piece().to(|s, v| Ok(s.zones.size = v.size())),
    O::new("zonerange", K::Size, C::Target, "Size of a zone (random I/O stays within it; default: zonesize)").def("0").first_piece().to(|s, v| Ok(s.zones.range = v.size())),
    O::new("zoneskip", K::Size, C::Target, "Bytes skipped between the end of one zone and the next").def("0").last_piece().to(|s, v| Ok(s.zones.skip = v.size())),
    O::new("zonecapacity", K::Size, C::Target, "Writable bytes of each zone (zonemode=zbd)").def("0").first_piece().to(|s, v| Ok(s.zones.capacity = v.size())),
    O::new("read_beyond_wp", K::Bool, C::Target, "Let reads go past a zone's write pointer (zonemode=zbd)").def("0").to(|s, v| Ok(s.zones.read_beyond_wp = v.flag())),
    O::new("max_open_zones", ZONES, C::Target, "Most zones open for writing at once (zonemode=zbd; 0: the device's limit)").def("0").to(|s, v| Ok(s.zones.max_open_zones = v.u32()?)),
    O::new("job_max_open_zones", ZONES, C::Target, "Most zones one job has open for writing at once (zonemode=zbd)").def("0").to(|s, v| Ok(s.zones.job_max_open_zones = v.u32()?)),
    O::new("ignore_zone_limits", K::Bool, C::Target, "Ignore the device's open and active zone limits (zonemode=zbd)").def("0").to(|s, v| Ok(s.zones.ignore_zone_limits = v.flag())),
    O::new("zone_reset_threshold", FRACTION, C::Target, "Share of written zone bytes above which zones are reset (zonemode=zbd)").to(|s, v| Ok(s.zones.reset_threshold = Some(v.float()))),
    O::new("write_zone_remainder", K::Bool, C::Target, "Write a zone's unaligned remainder instead of finishing the zone (zonemode=zbd; fio 3.42)").def("0").to(|s, v| Ok(s.zones.write_remainder = v.flag())),
    O::new("recover_zbd_write_error", K::Bool, C::Target, "With continue_on_error, move write pointers past failed writes (zonemode=zbd; fio 3.42)").def("0").to(|s, v| Ok(s.zones.recover_write_error = v.flag())),
    O::new("zone_reset_frequency", FRACTION, C::Target, "How often a zone is reset when over the threshold, 0 to 1 (zonemode=zbd)").to(|s, v| Ok(s.zones.reset_frequency = Some(v.float()))),
];

fn replay_align(s: &mut JobSpec, v: &Arg<'_>) -> Result<()> {
    let align = v.u64();
    if align != 0 && !align.is_power_of_two() {
        // fio refuses the option while parsing it ("must be a power-of-2").
        return Err(v.err(format!("replay_align={align} must be a power of two")));
    }
    s.replay_mut().align = align;
    Ok(())
}

fn replay_skip(s: &mut JobSpec, v: &Arg<'_>) -> Result<()> {
    let list = v.text();
    for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        let i = match word {
            "read" => 0,
            "write" => 1,
            "trim" => 2,
            "sync" => 3,
            _ => {
                return Err(v.err(format!("replay_skip={list}: '{word}' is not an I/O kind (read, write, trim, sync)")))
            }
        };
        s.replay_mut().skip[i] = true;
    }
    Ok(())
}

static ZONEMODE: &[Choice] = &[
    Choice { word: "none", help: "No zones" },
    Choice { word: "strided", help: "zonesize bytes in each zonerange, skipping zoneskip between" },
    Choice { word: "zbd", help: "A zoned block device (host-managed or host-aware)" },
];

#[cfg(test)]
mod tests {
    use crate::spec::bind::check::lands;
    use crate::ZoneMode;

    #[test]
    fn rows_land_in_their_fields() {
        lands(&[
            ("read_iolog=a.log replay_no_stall=1 replay_redirect=/dev/x replay_align=4096 replay_scale=2", |s| {
                s.replay.as_ref().is_some_and(|r| {
                    r.paths == ["a.log"]
                        && r.no_stall
                        && r.redirect.as_deref() == Some("/dev/x")
                        && r.align == 4096
                        && r.scale == 2
                })
            }),
            ("read_iolog=a:b merge_blktrace_file=m merge_blktrace_scalars=50:100 merge_blktrace_iters=1:2", |s| {
                s.replay.as_ref().is_some_and(|r| {
                    r.merge_file.as_deref() == Some("m")
                        && r.merge_scalars == [50.0, 100.0]
                        && r.merge_iters == [1.0, 2.0]
                })
            }),
            ("read_iolog=a replay_time_scale=200 replay_skip=read,sync read_iolog_chunked=1", |s| {
                s.replay
                    .as_ref()
                    .is_some_and(|r| r.time_scale == 200 && r.skip == [true, false, false, true] && r.chunked)
            }),
            ("replay_no_stall=1", |s| s.replay.is_none()),
            ("zonemode=strided zonesize=1m zoneskip=2m", |s| {
                s.zones.mode == ZoneMode::Strided
                    && s.zones.size == 1 << 20
                    && s.zones.range == 1 << 20
                    && s.zones.skip == 2 << 20
            }),
            ("zonemode=zbd zonerange=4m zonecapacity=2m read_beyond_wp=1 max_open_zones=3 job_max_open_zones=2", |s| {
                let z = &s.zones;
                z.range == 4 << 20
                    && z.capacity == 2 << 20
                    && z.read_beyond_wp
                    && z.max_open_zones == 3
                    && z.job_max_open_zones == 2
            }),
            ("zonemode=zbd ignore_zone_limits=1 zone_reset_threshold=0.5 zone_reset_frequency=0.25", |s| {
                s.zones.ignore_zone_limits
                    && s.zones.reset_threshold == Some(0.5)
                    && s.zones.reset_frequency == Some(0.25)
            }),
            ("", |s| s.zones == Default::default() && s.replay.is_none()),
        ]);
    }
}
