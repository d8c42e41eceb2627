//! io_uring_cmd's own rows (fio 3.42): which NVMe command a write is, the separate metadata
//! buffer, end-to-end protection information (PI) and Write Zeroes' deallocate flag. The rows it
//! shares with io_uring are in `io_uring.rs`, `readfua`/`writefua` (shared with sg) in `sg.rs`.
//! fio 3.33 has none of these; their semantics are fio 3.42's, as its HOWTO describes them and
//! as it behaved on an emulated NVMe drive with metadata (tests/integration/devices/nvme_pi.rs).

use crate::error::Result;
use crate::spec::{Arg, JobSpec};
use crate::table::{Category as C, Choice, Kind as K, OptDef as O};

const BOOL: K = K::Bool;

#[rustfmt::skip]
// Binders write `Ok(s.field = value)`: the assignment is the point, so clippy's unit_arg is off.
#[allow(clippy::unit_arg)]
pub(in crate::defs) static DEFS: &[O] = &[
    O::new("write_mode", K::Choice(WRITE_MODES), C::Engine, "Which NVMe command a write is: Write, Write Uncorrectable, Write Zeroes or Verify (fio 3.42)").def("write").engines(&["io_uring_cmd"]).to(|s, v| Ok(s.engine.io_uring_cmd.write_mode = v.typed(WriteMode::from_word))),
    O::new("verify_mode", K::Choice(VERIFY_MODES), C::Engine, "Which NVMe command the verify phase reads with (fio 3.42)").def("read").engines(&["io_uring_cmd"]).only(&["read"]).to(|_, v| { let _ = v.choice(); Ok(()) }),
    O::new("md_per_io_size", K::Size, C::Engine, "Bytes of the separate metadata buffer of each I/O (fio 3.42)").def("0").engines(&["io_uring_cmd"]).to(|s, v| Ok(s.engine.io_uring_cmd.md_per_io_size = v.size())),
    O::new("pi_act", K::Int { min: 0, max: 1 }, C::Engine, "Protection information action: 1 the drive makes and strips it, 0 fiox does (fio 3.42)").def("1").engines(&["io_uring_cmd"]).to(|s, v| Ok(s.engine.io_uring_cmd.pi_act = v.int() == 1)),
    O::new("pi_chk", K::Str, C::Engine, "Protection information fields checked: GUARD, REFTAG, APPTAG, comma-separated (fio 3.42)").engines(&["io_uring_cmd"]).to(pi_chk),
    O::new("apptag", K::Int { min: 0, max: 0xffff }, C::Engine, "Application tag of the protection information (fio 3.42)").def("0x1234").engines(&["io_uring_cmd"]).to(|s, v| Ok(s.engine.io_uring_cmd.apptag = v.int() as u16)),
    O::new("apptag_mask", K::Int { min: 0, max: 0xffff }, C::Engine, "Bits of the application tag that are checked (fio 3.42)").def("0xffff").engines(&["io_uring_cmd"]).to(|s, v| Ok(s.engine.io_uring_cmd.apptag_mask = v.int() as u16)),
    O::new("deac", BOOL, C::Engine, "Set the deallocate bit of Write Zeroes commands (write_mode=zeroes; fio 3.42)").def("0").engines(&["io_uring_cmd"]).to(|s, v| Ok(s.engine.io_uring_cmd.deac = v.flag())),
];

/// io_uring_cmd's own options (fio 3.42).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UringCmdOpts {
    /// FUA on every read / write (`readfua`, `writefua`; rows shared with sg).
    pub readfua: bool,
    pub writefua: bool,
    pub write_mode: WriteMode,
    /// Bytes of each I/O's separate metadata buffer; 0: none.
    pub md_per_io_size: u64,
    /// `pi_act=1`: the drive inserts and strips protection information (PRACT).
    pub pi_act: bool,
    pub pi_chk: PiChk,
    pub apptag: u16,
    pub apptag_mask: u16,
    /// Write Zeroes with the deallocate bit (`deac`).
    pub deac: bool,
}

/// Which NVMe command a write is (`write_mode`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum WriteMode {
    #[default]
    Write,
    /// Write Uncorrectable: the blocks read back as errors until written again.
    Uncor,
    /// Write Zeroes: no data buffer; the blocks read back as zeros.
    Zeroes,
    /// Verify: the drive reads the blocks and checks them, nothing is written or transferred.
    Verify,
}

impl WriteMode {
    fn from_word(word: &str) -> Option<WriteMode> {
        Some(match word {
            "write" => WriteMode::Write,
            "uncor" => WriteMode::Uncor,
            "zeroes" => WriteMode::Zeroes,
            "verify" => WriteMode::Verify,
            _ => return None,
        })
    }
}

/// The protection information fields checked (`pi_chk`): the drive checks them (the command's
/// PRCHK bits), and with `pi_act=0` fiox fills in only these fields of what it writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PiChk {
    pub guard: bool,
    pub reftag: bool,
    pub apptag: bool,
}

impl PiChk {
    /// `GUARD,REFTAG,APPTAG` in any order and case, comma-separated; empty: none.
    pub fn parse(text: &str) -> std::result::Result<PiChk, String> {
        let mut c = PiChk::default();
        for word in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            match word.to_ascii_uppercase().as_str() {
                "GUARD" => c.guard = true,
                "REFTAG" => c.reftag = true,
                "APPTAG" => c.apptag = true,
                _ => return Err(format!("'{word}' is not GUARD, REFTAG or APPTAG")),
            }
        }
        Ok(c)
    }

    pub fn any(&self) -> bool {
        self.guard || self.reftag || self.apptag
    }
}

fn pi_chk(s: &mut JobSpec, v: &Arg<'_>) -> Result<()> {
    s.engine.io_uring_cmd.pi_chk = v.custom(PiChk::parse, "GUARD, REFTAG and APPTAG, comma-separated")?;
    Ok(())
}

static WRITE_MODES: &[Choice] = &[
    Choice { word: "write", help: "Write commands" },
    Choice { word: "uncor", help: "Write Uncorrectable commands" },
    Choice { word: "zeroes", help: "Write Zeroes commands" },
    Choice { word: "verify", help: "Verify commands" },
];

static VERIFY_MODES: &[Choice] = &[
    Choice { word: "read", help: "Read commands, the data checked by fiox" },
    Choice { word: "compare", help: "Compare commands (the drive compares; verify=pattern only)" },
];

#[cfg(test)]
mod tests {
    use super::{PiChk, WriteMode};
    use crate::spec::bind::check::lands;

    #[test]
    fn rows_land_in_their_fields() {
        lands(&[
            (
                "ioengine=io_uring_cmd md_per_io_size=64 pi_act=0 pi_chk=GUARD,apptag apptag=0x55aa apptag_mask=0xff00",
                |s| {
                    let o = &s.engine.io_uring_cmd;
                    o.md_per_io_size == 64
                        && !o.pi_act
                        && o.pi_chk == PiChk { guard: true, reftag: false, apptag: true }
                        && o.apptag == 0x55aa
                        && o.apptag_mask == 0xff00
                },
            ),
            ("ioengine=io_uring_cmd write_mode=zeroes deac=1 readfua=1 writefua=1", |s| {
                let o = &s.engine.io_uring_cmd;
                o.write_mode == WriteMode::Zeroes && o.deac && o.readfua && o.writefua
            }),
            ("ioengine=io_uring_cmd", |s| {
                let o = &s.engine.io_uring_cmd;
                o.pi_act && !o.pi_chk.any() && o.apptag == 0x1234 && o.apptag_mask == 0xffff && o.md_per_io_size == 0
            }),
        ]);
    }

    #[test]
    fn pi_chk_words() {
        assert_eq!(PiChk::parse("REFTAG").unwrap(), PiChk { guard: false, reftag: true, apptag: false });
        assert_eq!(PiChk::parse("").unwrap(), PiChk::default());
        assert!(PiChk::parse("GUARD,BOGUS").unwrap_err().contains("'BOGUS'"));
    }
}
