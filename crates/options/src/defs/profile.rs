//! fio's built-in profiles (`--profile=tiobench`, `--profile=act`, run by `crate::profile`) and
//! their options. fio registers the options for every job, where they do nothing unless the
//! profile runs: fio 3.33's own examples/waitfor.fio and steadystate.fio set `threads=1` (meaning
//! `thread`), and fio runs them as if it were not there. fiox accepts them the same way.

use crate::table::{Category as C, Choice, Kind as K, OptDef as O, TimeUnit};

const PROFILES: &[Choice] = &[
    Choice { word: "tiobench", help: "tiotest/tiobench benchmark" },
    Choice { word: "act", help: "ACT Aerospike like benchmark" },
];

const INT0: K = K::Int { min: 0, max: i64::MAX };

pub(super) static DEFS: &[O] = &[
    O::new(
        "profile",
        K::Choice(PROFILES),
        C::Profile,
        "Select a specific builtin performance test (command line only, as in fio)",
    ),
    O::new("block", K::Size, C::Profile, "tiobench profile: block size in bytes").def("4096"),
    O::new("numruns", INT0, C::Profile, "tiobench profile: number of runs"),
    O::new("dir", K::Str, C::Profile, "tiobench profile: test directory"),
    O::new("threads", INT0, C::Profile, "tiobench profile: number of threads"),
    O::new("device-names", K::Str, C::Profile, "act profile: devices to use"),
    O::new("load", INT0, C::Profile, "act profile: load multiplier").def("1"),
    O::new("test-duration", K::Time { unit: TimeUnit::Sec }, C::Profile, "act profile: how long the whole test runs")
        .def("24h"),
    O::new("threads-per-queue", INT0, C::Profile, "act profile: read threads per device").def("8"),
    O::new("read-req-num-512-blocks", INT0, C::Profile, "act profile: 512-byte blocks per read").def("3"),
    O::new(
        "large-block-op-kbytes",
        INT0,
        C::Profile,
        "act profile: size of large block writes (fio says KiB; fio 3.33 and fiox use bytes)",
    )
    .def("131072"),
    O::new("prep", K::Flag, C::Profile, "act profile: run the prep phase"),
];
