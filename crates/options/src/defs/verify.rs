//! Data verification: what writes carry (`verify`, `verify_pattern`, `verify_interval`,
//! `verify_offset`), when it is read back (`do_verify`, `verify_backlog`, `verify_only`,
//! `verify_state_*`) and what a failure does (`verify_fatal`, `verify_dump`). fio 3.33's ranges:
//! an interval holds at least two headers (80 bytes), a moved header starts at byte 40 or later.

use std::sync::Arc;

use fiox_verify::{Kind, Pattern};

use crate::error::Result;
use crate::spec::{Arg, JobSpec};
use crate::table::{Category as C, Choice, Kind as K, OptDef as O};

const INT0: K = K::Int { min: 0, max: i64::MAX };
const PCT: K = K::Int { min: 0, max: 100 };

/// fio's pattern forms, for the message about a bad `verify_pattern`.
const PATTERN_FORMS: &str =
    "0x hex bytes (0xdeadbeef), decimal numbers, \"strings\", 'files' and %o (the I/O's offset), concatenated";

#[rustfmt::skip]
// Binders write `Ok(s.field = value)`: the assignment is the point, so clippy's unit_arg is off.
#[allow(clippy::unit_arg)]
pub(super) static DEFS: &[O] = &[
    O::new("verify", K::Choice(VERIFY), C::Verify, "Write blocks that carry a header and a checksum, and check them when read").def("0").to(kind),
    O::new("do_verify", K::Bool, C::Verify, "Read back and check what a write job wrote, after writing").def("1").to(|s, v| Ok(s.verify_mut().after_write = v.flag())),
    O::new("verify_interval", K::Int { min: 80, max: i64::MAX }, C::Verify, "A header every this many bytes of a block (default: the block size)").to(|s, v| Ok(s.verify_mut().interval = Some(v.u64()))),
    O::new("verify_offset", K::Int { min: 40, max: i64::MAX }, C::Verify, "Swap the header with the bytes at this offset of each interval").to(|s, v| Ok(s.verify_mut().offset = v.u64())),
    O::new("verify_pattern", K::Str, C::Verify, "Fill with this pattern and check it: 0x hex bytes, decimal numbers, \"strings\", 'files' and %o (the I/O's offset)").to(pattern),
    O::new("verify_pattern_interval", K::Size, C::Verify, "Start verify_pattern again every this many bytes of a block, %o being that point's offset (fio 3.42; 0: once per block)").def("0").to(|s, v| Ok(s.verify_mut().pattern_interval = v.size())),
    O::new("verify_fatal", K::Bool, C::Verify, "Stop the job at the first verify failure").def("0").to(|s, v| Ok(s.verify_mut().fatal = v.flag())),
    O::new("verify_dump", K::Bool, C::Verify, "Write the received and expected data of a failed block to files").def("0").to(|s, v| Ok(s.verify_mut().dump = v.flag())),
    O::new("verify_only", K::Flag, C::Verify, "Do not write: check what an earlier run of the same job wrote").to(|s, v| Ok(s.verify_mut().only = v.flag())),
    O::new("verify_backlog", K::Size, C::Verify, "Read back and check after every this many blocks written").first_piece().to(|s, v| Ok(s.verify_mut().backlog = v.size())),
    O::new("verify_backlog_batch", INT0, C::Verify, "Check this many blocks each time (default: verify_backlog)").to(|s, v| Ok(s.verify_mut().backlog_batch = v.u64())),
    O::new("verify_async", INT0, C::Verify, "Number of threads checking reads (fiox checks on the job's own thread; accepted for fio's job files)").def("0").to(|s, v| Ok(s.verify_mut().async_threads = v.u32()?)),
    O::new("verify_async_cpus", K::Str, C::Verify, "CPUs of the verify threads (accepted; see verify_async)").to(|s, v| Ok(s.verify_mut().async_cpus = v.written())),
    O::new("verify_state_save", K::Bool, C::Verify, "Save where a write job stopped (local-JOB-INDEX-verify.state), for a later verify").def("1").to(|s, v| Ok(s.verify_mut().state_save = v.flag())),
    O::new("verify_state_load", K::Bool, C::Verify, "Verify only up to where the saved write job stopped").def("0").to(|s, v| Ok(s.verify_mut().state_load = v.flag())),
    O::new("verify_journal", K::Str, C::Verify, "fiox: a file recording every write as it is made, so a later verify_only or read job checks every acknowledged write, also after the writer was killed").to(|s, v| Ok(s.verify_mut().journal = v.trimmed())),
    O::new("experimental_verify", K::Bool, C::Verify, "Verify by replaying the write sequence instead of remembering it (fiox always remembers: same blocks checked)").to(|s, v| Ok(s.verify_mut().experimental = v.flag())),
    O::new("verify_write_sequence", K::Bool, C::Verify, "Check the header's write sequence number (fio 3.42; fiox never fails a block on it, so 0 and 1 check the same)").def("1").to(|s, v| Ok(s.verify_mut().write_sequence = v.flag())),
    O::new("verify_header_seed", K::Bool, C::Verify, "Check the header's random seed (fio 3.42; fiox never fails a block on it, so 0 and 1 check the same)").def("1").to(|s, v| Ok(s.verify_mut().header_seed = v.flag())),
    O::new("trim_percentage", PCT, C::Verify, "Percentage of written blocks to trim and check as zeros").def("0").to(|s, v| Ok(s.verify_mut().trim_percentage = v.u64())),
    O::new("trim_verify_zero", K::Bool, C::Verify, "Check that trimmed blocks read back as zeros").def("1").to(|s, v| Ok(s.verify_mut().trim_verify_zero = v.flag())),
    O::new("trim_backlog", K::Size, C::Verify, "Trim after every this many blocks written (default 1)").first_piece().to(|s, v| Ok(s.verify_mut().trim_backlog = v.size())),
    O::new("trim_backlog_batch", INT0, C::Verify, "Trim this many picked blocks each time (default: trim_backlog)").to(|s, v| Ok(s.verify_mut().trim_backlog_batch = v.u64())),
];

/// `verify=`: a kind, or `0`/`none` for none (the rule in `spec/verify.rs` decides then).
fn kind(s: &mut JobSpec, v: &Arg<'_>) -> Result<()> {
    let spec = s.verify_mut();
    match v.choice() {
        "0" | "none" => spec.off = true,
        w => {
            spec.kind = Kind::parse(w).unwrap_or_else(|| unreachable!("verify={w} has no kind in fiox-verify"));
            spec.off = false;
        }
    }
    Ok(())
}

/// `verify_pattern`, parsed (its `'files'` read now, so a missing one stops the job before any
/// I/O).
fn pattern(s: &mut JobSpec, v: &Arg<'_>) -> Result<()> {
    let read_file = |name: &str| std::fs::read(name);
    s.verify_mut().pattern = Some(Arc::new(v.custom(|t| Pattern::parse(t, &read_file), PATTERN_FORMS)?));
    Ok(())
}

static VERIFY: &[Choice] = &[
    Choice { word: "0", help: "No verification" },
    Choice { word: "none", help: "No verification" },
    Choice { word: "md5", help: "MD5 checksum" },
    Choice { word: "crc64", help: "CRC-64 checksum" },
    Choice { word: "crc32c", help: "CRC-32C checksum" },
    Choice { word: "crc32c-intel", help: "CRC-32C with hardware help" },
    Choice { word: "crc32", help: "CRC-32 checksum" },
    Choice { word: "crc16", help: "CRC-16 checksum" },
    Choice { word: "crc7", help: "CRC-7 checksum" },
    Choice { word: "xxhash", help: "xxHash checksum" },
    Choice { word: "sha512", help: "SHA-512 checksum (fio 3.33's: only 128 bytes of the block are covered)" },
    Choice { word: "sha256", help: "SHA-256 checksum (fio 3.33's encoding)" },
    Choice { word: "sha1", help: "SHA-1 checksum" },
    Choice { word: "sha3-224", help: "SHA3-224 checksum" },
    Choice { word: "sha3-256", help: "SHA3-256 checksum" },
    Choice { word: "sha3-384", help: "SHA3-384 checksum" },
    Choice { word: "sha3-512", help: "SHA3-512 checksum" },
    Choice { word: "meta", help: "Header only (and verify_pattern, if set)" },
    Choice { word: "pattern", help: "Check verify_pattern, no header" },
    Choice { word: "pattern_hdr", help: "Check verify_pattern and a header" },
    Choice { word: "null", help: "Pretend to verify (for testing)" },
];

#[cfg(test)]
mod tests {
    use crate::spec::bind::check::lands;
    use fiox_verify::Kind;

    #[test]
    fn rows_land_in_their_fields() {
        lands(&[
            ("verify=crc32c verify_interval=512 verify_offset=64 do_verify=0 verify_fatal=1 verify_dump=1", |s| {
                s.verify.as_ref().is_some_and(|v| {
                    v.kind == Kind::Crc32c
                        && v.interval == Some(512)
                        && v.offset == 64
                        && !v.after_write
                        && v.fatal
                        && v.dump
                })
            }),
            ("verify=md5 verify_only verify_backlog=16 verify_backlog_batch=4 verify_state_save=0 verify_state_load=1", |s| {
                s.verify.as_ref().is_some_and(|v| {
                    v.only && v.backlog == 16 && v.backlog_batch == 4 && !v.state_save && v.state_load && v.after_write
                })
            }),
            ("verify=sha1 verify_async=2 verify_async_cpus=0-1 experimental_verify=1 verify_journal=/tmp/j", |s| {
                s.verify.as_ref().is_some_and(|v| {
                    v.async_threads == 2
                        && v.async_cpus.as_deref() == Some("0-1")
                        && v.experimental
                        && v.journal.as_deref() == Some("/tmp/j")
                })
            }),
            ("verify=meta trim_percentage=10 trim_backlog=8 trim_backlog_batch=2 trim_verify_zero=0", |s| {
                s.verify.as_ref().is_some_and(|v| {
                    v.trim_percentage == 10 && v.trim_backlog == 8 && v.trim_backlog_batch == 2 && !v.trim_verify_zero
                })
            }),
            // The rules: no verify by default, a pattern alone is checked behind a header, and
            // verify=0 written keeps a pattern to the buffers.
            ("do_verify=1", |s| s.verify.is_none()),
            ("verify_pattern=0xdeadbeef", |s| {
                s.verify.as_ref().is_some_and(|v| {
                    v.kind == Kind::PatternHdr && v.pattern.as_ref().is_some_and(|p| p.bytes() == [0xde, 0xad, 0xbe, 0xef])
                })
            }),
            ("verify=0 verify_pattern=0xdeadbeef", |s| s.verify.is_none()),
            ("verify=pattern verify_pattern=\"ab\"", |s| s.verify.as_ref().is_some_and(|v| v.kind == Kind::Pattern)),
        ]);
    }
}
