//! Data verification: what writes carry (`verify`, `verify_pattern`, `verify_interval`,
//! `verify_offset`), when it is read back (`do_verify`, `verify_backlog`, `verify_only`,
//! `verify_state_*`) and what a failure does (`verify_fatal`, `verify_dump`). fio 3.33's ranges:
//! an interval holds at least two headers (80 bytes), a moved header starts at byte 40 or later.

use crate::table::{Category as C, Choice, Kind as K, OptDef as O};

const INT0: K = K::Int { min: 0, max: i64::MAX };
const PCT: K = K::Int { min: 0, max: 100 };

pub(super) static DEFS: &[O] = &[
    O::new("verify", K::Choice(VERIFY), C::Verify, "Write blocks that carry a header and a checksum, and check them when read").def("0"),
    O::new("do_verify", K::Bool, C::Verify, "Read back and check what a write job wrote, after writing").def("1"),
    O::new("verify_interval", K::Int { min: 80, max: i64::MAX }, C::Verify, "A header every this many bytes of a block (default: the block size)"),
    O::new("verify_offset", K::Int { min: 40, max: i64::MAX }, C::Verify, "Swap the header with the bytes at this offset of each interval"),
    O::new("verify_pattern", K::Str, C::Verify, "Fill with this pattern and check it: 0x hex bytes, decimal numbers, \"strings\", 'files' and %o (the I/O's offset)"),
    O::new("verify_pattern_interval", K::Size, C::Verify, "Start verify_pattern again every this many bytes of a block, %o being that point's offset (fio 3.42; 0: once per block)").def("0"),
    O::new("verify_fatal", K::Bool, C::Verify, "Stop the job at the first verify failure").def("0"),
    O::new("verify_dump", K::Bool, C::Verify, "Write the received and expected data of a failed block to files").def("0"),
    O::new("verify_only", K::Flag, C::Verify, "Do not write: check what an earlier run of the same job wrote"),
    O::new("verify_backlog", K::Size, C::Verify, "Read back and check after every this many blocks written"),
    O::new("verify_backlog_batch", INT0, C::Verify, "Check this many blocks each time (default: verify_backlog)"),
    O::new("verify_async", INT0, C::Verify, "Number of threads checking reads (fiox checks on the job's own thread; accepted for fio's job files)").def("0"),
    O::new("verify_async_cpus", K::Str, C::Verify, "CPUs of the verify threads (accepted; see verify_async)"),
    O::new("verify_state_save", K::Bool, C::Verify, "Save where a write job stopped (local-JOB-INDEX-verify.state), for a later verify").def("1"),
    O::new("verify_state_load", K::Bool, C::Verify, "Verify only up to where the saved write job stopped").def("0"),
    O::new("verify_journal", K::Str, C::Verify, "fiox: a file recording every write as it is made, so a later verify_only or read job checks every acknowledged write, also after the writer was killed"),
    O::new("experimental_verify", K::Bool, C::Verify, "Verify by replaying the write sequence instead of remembering it (fiox always remembers: same blocks checked)"),
    O::new("verify_write_sequence", K::Bool, C::Verify, "Check the header's write sequence number (fio 3.42; fiox never fails a block on it, so 0 and 1 check the same)").def("1"),
    O::new("verify_header_seed", K::Bool, C::Verify, "Check the header's random seed (fio 3.42; fiox never fails a block on it, so 0 and 1 check the same)").def("1"),
    O::new("trim_percentage", PCT, C::Verify, "Percentage of written blocks to trim and check as zeros").def("0"),
    O::new("trim_verify_zero", K::Bool, C::Verify, "Check that trimmed blocks read back as zeros").def("1"),
    O::new("trim_backlog", K::Size, C::Verify, "Trim after every this many blocks written (default 1)"),
    O::new("trim_backlog_batch", INT0, C::Verify, "Trim this many picked blocks each time (default: trim_backlog)"),
];

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
