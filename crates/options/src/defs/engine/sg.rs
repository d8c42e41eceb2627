//! sg: SCSI generic. (`hipri`, which sg shares with io_uring, is with io_uring's rows;
//! `readfua` and `writefua` are io_uring_cmd's too, as in fio 3.42.)

use crate::table::{Category as C, Choice, Kind as K, OptDef as O};

const BOOL: K = K::Bool;

#[rustfmt::skip]
// Binders write `Ok(s.field = value)`: the assignment is the point, so clippy's unit_arg is off.
#[allow(clippy::unit_arg)]
pub(in crate::defs) static DEFS: &[O] = &[
    // sg
    O::new("readfua", BOOL, C::Engine, "Set the FUA (force unit access) bit on every read").def("0").engines(&["sg", "io_uring_cmd"]).to(|s, v| Ok((s.engine.sg.readfua, s.engine.io_uring_cmd.readfua) = (v.flag(), v.flag()))),
    O::new("writefua", BOOL, C::Engine, "Set the FUA (force unit access) bit on every write").def("0").engines(&["sg", "io_uring_cmd"]).to(|s, v| Ok((s.engine.sg.writefua, s.engine.io_uring_cmd.writefua) = (v.flag(), v.flag()))),
    O::new("sg_write_mode", K::Choice(SG_WRITE_MODES), C::Engine, "Which SCSI command a write is").def("write").engines(&["sg"]).to(|s, v| Ok(s.engine.sg.write_mode = v.choice())),
    O::new("stream_id", K::Int { min: 0, max: u32::MAX as i64 }, C::Engine, "Stream of WRITE STREAM(16) commands").def("0").engines(&["sg"]).to(|s, v| Ok(s.engine.sg.stream_id = v.u32()?)),
];

/// sg's options.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SgOpts {
    pub hipri: bool,
    pub readfua: bool,
    pub writefua: bool,
    /// Which SCSI command a write is (`sg_write_mode`).
    pub write_mode: &'static str,
    pub stream_id: u32,
}

static SG_WRITE_MODES: &[Choice] = &[
    Choice { word: "write", help: "WRITE commands" },
    Choice { word: "write_and_verify", help: "WRITE AND VERIFY commands" },
    Choice { word: "verify", help: "WRITE AND VERIFY commands (old name)" },
    Choice { word: "write_same", help: "WRITE SAME commands" },
    Choice { word: "same", help: "WRITE SAME commands (old name)" },
    Choice { word: "write_same_ndob", help: "WRITE SAME(16) commands with NDOB" },
    Choice { word: "verify_bytchk_00", help: "VERIFY commands, BYTCHK 00" },
    Choice { word: "verify_bytchk_01", help: "VERIFY commands, BYTCHK 01" },
    Choice { word: "verify_bytchk_11", help: "VERIFY commands, BYTCHK 11" },
    Choice { word: "write_stream", help: "WRITE STREAM(16) commands" },
];

#[cfg(test)]
mod tests {
    use crate::spec::bind::check::lands;

    #[test]
    fn rows_land_in_their_fields() {
        lands(&[
            ("ioengine=sg hipri readfua=1 writefua=1 sg_write_mode=write_same stream_id=3", |s| {
                let o = &s.engine.sg;
                o.hipri && o.readfua && o.writefua && o.write_mode == "write_same" && o.stream_id == 3
            }),
            ("", |s| s.engine.sg.write_mode == "write"),
        ]);
    }
}
