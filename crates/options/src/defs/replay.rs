//! Replaying recorded I/O (`read_iolog` and its companions) and zoned I/O (`zonemode` and the
//! zone sizes). Ranges and defaults are fio 3.33's, as `fio --cmdhelp` prints them.

use crate::table::{Category as C, Choice, Kind as K, OptDef as O};

const INT0: K = K::Int { min: 0, max: i64::MAX };
const ZONES: K = K::Int { min: 0, max: 4096 };
const FRACTION: K = K::Float { min: 0.0, max: 1.0 };

#[rustfmt::skip]
pub(super) static DEFS: &[O] = &[
    O::new("read_iolog", K::Str, C::IoType, "Replay the I/O recorded in this iolog (version 2 or 3) or blktrace file; several blktrace files separated by ':' are merged"),
    O::new("read_iolog_chunked", K::Bool, C::IoType, "Read the iolog in pieces while replaying (fiox reads it whole before the job starts)").def("0"),
    O::new("replay_no_stall", K::Bool, C::IoType, "Replay as fast as possible instead of keeping the log's time between I/Os").def("0"),
    O::new("replay_redirect", K::Str, C::IoType, "Replay every I/O on this file or device, whatever the log names"),
    O::new("replay_align", INT0, C::IoType, "Round replayed offsets down to a multiple of this power of two"),
    O::new("replay_scale", INT0, C::IoType, "Divide replayed offsets by this factor").def("1"),
    O::new("replay_time_scale", K::Int { min: 1, max: i64::MAX }, C::IoType, "Time between replayed I/Os, in percent of the log's (200: twice as fast)").def("100"),
    O::new("replay_skip", K::Str, C::IoType, "Leave these kinds of blktrace I/O out of the replay: read, write, trim, sync"),
    O::new("merge_blktrace_file", K::Str, C::IoType, "Merge the blktrace files of read_iolog into this file, then replay it"),
    O::new("merge_blktrace_scalars", K::FloatList, C::IoType, "Per merged trace: its time between I/Os, in percent (50: twice as fast)"),
    O::new("merge_blktrace_iters", K::FloatList, C::IoType, "Per merged trace: how many times it is repeated in the merge"),
    O::new("zonemode", K::Choice(ZONEMODE), C::Target, "How zonesize, zonerange and zoneskip divide the I/O region").def("none"),
    O::new("zonesize", K::Size, C::Target, "Bytes of I/O done in each zone before the next one").def("0"),
    O::new("zonerange", K::Size, C::Target, "Size of a zone (random I/O stays within it; default: zonesize)").def("0"),
    O::new("zoneskip", K::Size, C::Target, "Bytes skipped between the end of one zone and the next").def("0"),
    O::new("zonecapacity", K::Size, C::Target, "Writable bytes of each zone (zonemode=zbd)").def("0"),
    O::new("read_beyond_wp", K::Bool, C::Target, "Let reads go past a zone's write pointer (zonemode=zbd)").def("0"),
    O::new("max_open_zones", ZONES, C::Target, "Most zones open for writing at once (zonemode=zbd; 0: the device's limit)").def("0"),
    O::new("job_max_open_zones", ZONES, C::Target, "Most zones one job has open for writing at once (zonemode=zbd)").def("0"),
    O::new("ignore_zone_limits", K::Bool, C::Target, "Ignore the device's open and active zone limits (zonemode=zbd)").def("0"),
    O::new("zone_reset_threshold", FRACTION, C::Target, "Share of written zone bytes above which zones are reset (zonemode=zbd)"),
    O::new("zone_reset_frequency", FRACTION, C::Target, "How often a zone is reset when over the threshold, 0 to 1 (zonemode=zbd)"),
];

static ZONEMODE: &[Choice] = &[
    Choice { word: "none", help: "No zones" },
    Choice { word: "strided", help: "zonesize bytes in each zonerange, skipping zoneskip between" },
    Choice { word: "zbd", help: "A zoned block device (host-managed or host-aware)" },
];
