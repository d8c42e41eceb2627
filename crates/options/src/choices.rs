//! Choice options as types. The option table checks the word a user typed; `spec.rs` turns it
//! into one of these once, so the runner matches on variants instead of comparing strings, and
//! each word list lives only in the table (`defs/`). A test below walks every word the table
//! accepts through `from_word`.

/// `mem` (`iomem`): where I/O buffers come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MemKind {
    #[default]
    Malloc,
    Mmap,
    MmapHuge,
    MmapShared,
    /// System V shared memory (`shm`), optionally in huge pages (`shmhuge`).
    Shm,
    ShmHuge,
}

impl MemKind {
    pub fn from_word(word: &str) -> Option<MemKind> {
        Some(match word {
            "malloc" => MemKind::Malloc,
            "mmap" => MemKind::Mmap,
            "mmaphuge" => MemKind::MmapHuge,
            "mmapshared" => MemKind::MmapShared,
            "shm" => MemKind::Shm,
            "shmhuge" => MemKind::ShmHuge,
            _ => return None,
        })
    }

    /// The option's word for this kind.
    pub fn name(self) -> &'static str {
        match self {
            MemKind::Malloc => "malloc",
            MemKind::Mmap => "mmap",
            MemKind::MmapHuge => "mmaphuge",
            MemKind::MmapShared => "mmapshared",
            MemKind::Shm => "shm",
            MemKind::ShmHuge => "shmhuge",
        }
    }

    /// Whether the memory comes in huge pages (and so depends on `nr_hugepages`).
    pub fn huge(self) -> bool {
        matches!(self, MemKind::MmapHuge | MemKind::ShmHuge)
    }
}

/// How files are chosen (the parsed `file_service_type`).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum FileService {
    RoundRobin(u32),
    #[default]
    Sequential,
    Random(u32),
    /// A distribution over the files; they are not skipped when done.
    Weighted(crate::spec::RandomDist),
}

impl FileService {
    /// Reads fio's forms: `roundrobin[:N]`, `sequential`, `random[:N]`, `zipf:θ`, `pareto:h`,
    /// `normal:σ` and `gauss:σ`.
    pub fn parse(text: &str) -> Result<FileService, String> {
        let text = text.trim();
        let (kind, arg) = match text.split_once(':') {
            Some((k, a)) => (k.trim(), Some(a.trim())),
            None => (text, None),
        };
        let count = |default: u32| -> Result<u32, String> {
            match arg {
                None => Ok(default),
                Some(a) => match a.parse::<u32>() {
                    Ok(n) if n > 0 => Ok(n),
                    _ => Err(format!("'{a}' is not a count of I/Os (1 or more)")),
                },
            }
        };
        let real = |default: f64, ok: fn(f64) -> bool, what: &str| -> Result<f64, String> {
            match arg {
                None => Ok(default),
                Some(a) => match a.parse::<f64>() {
                    Ok(v) if ok(v) => Ok(v),
                    _ => Err(format!("'{a}' is not a valid {what}")),
                },
            }
        };
        use crate::spec::RandomDist as R;
        Ok(match kind {
            "roundrobin" => FileService::RoundRobin(count(1)?),
            "sequential" if arg.is_none() => FileService::Sequential,
            "random" => FileService::Random(count(1)?),
            // Without a value: the defaults of random_distribution's forms.
            "zipf" => FileService::Weighted(R::Zipf(
                real(1.2, |v| v > 0.0 && v != 1.0, "zipf exponent (above 0, not 1)")?,
                None,
            )),
            "pareto" => FileService::Weighted(R::Pareto(
                real(0.2, |v| v > 0.0 && v < 1.0, "pareto power (between 0 and 1)")?,
                None,
            )),
            "normal" | "gauss" => {
                FileService::Weighted(R::Normal(real(10.0, |v| v > 0.0 && v <= 100.0, "deviation in %")?, None))
            }
            "sequential" => return Err("'sequential' takes no :N".into()),
            _ => return Err(format!("'{kind}' is not a file service type")),
        })
    }
}

/// `fadvise_hint`: the posix_fadvise(2) advice given when a file is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fadvise {
    #[default]
    None,
    /// Sequential for sequential jobs, random for random ones (fio's default, `1`).
    FollowRw,
    Sequential,
    Random,
}

impl Fadvise {
    pub fn from_word(word: &str) -> Option<Fadvise> {
        Some(match word {
            "0" => Fadvise::None,
            "1" => Fadvise::FollowRw,
            "sequential" => Fadvise::Sequential,
            "random" => Fadvise::Random,
            _ => return None,
        })
    }
}

/// `write_hint`: the data lifetime passed with F_SET_RW_HINT, as the kernel numbers it
/// (`RWH_WRITE_LIFE_*`).
pub fn write_hint_from_word(word: &str) -> Option<u64> {
    Some(match word {
        "none" => 1,
        "short" => 2,
        "medium" => 3,
        "long" => 4,
        "extreme" => 5,
        _ => return None,
    })
}

/// `fallocate`: how files are preallocated when they are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fallocate {
    #[default]
    None,
    Native,
    Posix,
    /// `FALLOC_FL_KEEP_SIZE`: space reserved, size unchanged.
    Keep,
    /// `ftruncate` to the size, nothing reserved.
    Truncate,
}

impl Fallocate {
    pub fn from_word(word: &str) -> Option<Fallocate> {
        Some(match word {
            "none" | "0" => Fallocate::None,
            "native" => Fallocate::Native,
            "posix" | "1" => Fallocate::Posix,
            "keep" => Fallocate::Keep,
            "truncate" => Fallocate::Truncate,
            _ => return None,
        })
    }
}

/// `unified_rw_reporting`: whether directions are reported apart, merged, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnifiedRw {
    #[default]
    None,
    Mixed,
    Both,
}

impl UnifiedRw {
    pub fn from_word(word: &str) -> Option<UnifiedRw> {
        Some(match word {
            "none" | "0" => UnifiedRw::None,
            "mixed" | "1" => UnifiedRw::Mixed,
            "both" | "2" => UnifiedRw::Both,
            _ => return None,
        })
    }
}

/// `clocksource`: the clock latencies are measured with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockSource {
    GetTimeOfDay,
    ClockGettime,
    /// The CPU's time stamp counter.
    Cpu,
}

impl ClockSource {
    pub fn from_word(word: &str) -> Option<ClockSource> {
        Some(match word {
            "gettimeofday" => ClockSource::GetTimeOfDay,
            "clock_gettime" => ClockSource::ClockGettime,
            "cpu" => ClockSource::Cpu,
            _ => return None,
        })
    }
}

/// `random_generator`: fiox draws offsets with its own generator whatever the choice; `lfsr`
/// keeps fio's promise that matters to users: every block exactly once per pass, even with
/// `norandommap`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RandomGenerator {
    #[default]
    Tausworthe,
    Lfsr,
    Tausworthe64,
}

impl RandomGenerator {
    pub fn from_word(word: &str) -> Option<RandomGenerator> {
        Some(match word {
            "tausworthe" => RandomGenerator::Tausworthe,
            "lfsr" => RandomGenerator::Lfsr,
            "tausworthe64" => RandomGenerator::Tausworthe64,
            _ => return None,
        })
    }
}

/// `exit_what`: what `exitall` and `exitall_on_error` stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExitWhat {
    /// The jobs running now; later stonewall groups still run.
    #[default]
    Group,
    /// The same (fio 3.33 behaves as for `group`).
    Stonewall,
    /// Everything: later groups do not run.
    All,
}

impl ExitWhat {
    pub fn from_word(word: &str) -> Option<ExitWhat> {
        Some(match word {
            "group" => ExitWhat::Group,
            "stonewall" => ExitWhat::Stonewall,
            "all" => ExitWhat::All,
            _ => return None,
        })
    }
}

/// `dedupe_mode`: where a deduplicated write buffer comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DedupeMode {
    /// The last unique buffer the job wrote, again.
    #[default]
    Repeat,
    /// One of a fixed working set of buffers, chosen at random.
    WorkingSet,
}

impl DedupeMode {
    pub fn from_word(word: &str) -> Option<DedupeMode> {
        Some(match word {
            "repeat" => DedupeMode::Repeat,
            "working_set" => DedupeMode::WorkingSet,
            _ => return None,
        })
    }
}

/// `lockfile`: how jobs sharing a file take turns doing I/O to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LockMode {
    #[default]
    None,
    /// One I/O at a time, whatever its direction.
    Exclusive,
    /// Reads together, writes (and trims, syncs) alone.
    ReadWrite,
}

impl LockMode {
    pub fn from_word(word: &str) -> Option<LockMode> {
        Some(match word {
            "none" => LockMode::None,
            "exclusive" => LockMode::Exclusive,
            "readwrite" => LockMode::ReadWrite,
            _ => return None,
        })
    }
}

/// What an I/O error does to a job (`continue_on_error`, `ignore_error`, `error_dump`). Errors
/// come in three types, fio's: read, write (also trims and syncs) and verify (any EILSEQ).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErrorPolicy {
    /// Per type: whether the listed errors let the job go on.
    pub continues: [bool; 3],
    /// Per type: the errors that let the job go on (fio's default: EIO and EILSEQ).
    pub lists: [Vec<i32>; 3],
    /// The report shows the error counts (`continue_on_error` or `ignore_error` was set).
    pub counted: bool,
    /// Print every error, also those the job goes on after (`error_dump`).
    pub dump: bool,
}

impl ErrorPolicy {
    /// fio's non-fatal errors.
    pub const DEFAULT_LIST: [i32; 2] = [5, 84];

    /// The policy of `continue_on_error=word`, before `ignore_error`.
    pub fn continuing(word: &str) -> Option<ErrorPolicy> {
        let continues = match word {
            "none" | "0" => [false, false, false],
            "read" => [true, false, false],
            "write" => [false, true, false],
            "io" => [true, true, false],
            "verify" => [false, false, true],
            "all" | "1" => [true, true, true],
            _ => return None,
        };
        Some(ErrorPolicy {
            continues,
            lists: [0, 1, 2].map(|_| ErrorPolicy::DEFAULT_LIST.to_vec()),
            counted: continues.iter().any(|&c| c),
            dump: false,
        })
    }

    /// Applies `ignore_error`: up to three lists (read, write, verify) of errno names or
    /// numbers separated by `:`; a list given makes its type go on after those errors.
    pub fn ignore(&mut self, value: &str) -> Result<(), String> {
        let lists: Vec<&str> = value.split(',').collect();
        if lists.len() > 3 {
            return Err(format!("{} lists given; at most three: READ,WRITE,VERIFY", lists.len()));
        }
        for (t, list) in lists.iter().enumerate() {
            if list.trim().is_empty() {
                continue;
            }
            let mut errs = Vec::new();
            for word in list.split([':', ';']).filter(|w| !w.trim().is_empty()) {
                let n = crate::errno::parse(word)
                    .ok_or_else(|| format!("unknown error '{}': use a name like EIO or a number", word.trim()))?;
                errs.push(n);
            }
            self.lists[t] = errs;
            self.continues[t] = true;
        }
        self.counted = true;
        Ok(())
    }

    /// Whether errno `err` of an I/O of error type `t` (0 read, 1 write, 2 verify) lets the job
    /// go on.
    #[inline]
    pub fn continues_after(&self, t: usize, err: i32) -> bool {
        self.continues[t] && self.lists[t].contains(&err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::{lookup, Kind};

    fn words(option: &str) -> Vec<&'static str> {
        match lookup(option).expect("in the table").kind {
            Kind::Choice(choices) => choices.iter().map(|c| c.word).collect(),
            _ => panic!("{option} is not a choice"),
        }
    }

    #[test]
    fn every_word_of_the_table_has_a_variant() {
        for w in words("mem") {
            let kind = MemKind::from_word(w).unwrap_or_else(|| panic!("mem={w}"));
            assert_eq!(kind.name(), w);
        }
        for w in words("fallocate") {
            assert!(Fallocate::from_word(w).is_some(), "fallocate={w}");
        }
        for w in words("unified_rw_reporting") {
            assert!(UnifiedRw::from_word(w).is_some(), "unified_rw_reporting={w}");
        }
        for w in words("random_generator") {
            assert!(RandomGenerator::from_word(w).is_some(), "random_generator={w}");
        }
        for w in words("fadvise_hint") {
            assert!(Fadvise::from_word(w).is_some(), "fadvise_hint={w}");
        }
        for w in words("write_hint") {
            assert!(write_hint_from_word(w).is_some(), "write_hint={w}");
        }
        for w in words("exit_what") {
            assert!(ExitWhat::from_word(w).is_some(), "exit_what={w}");
        }
        for w in words("dedupe_mode") {
            assert!(DedupeMode::from_word(w).is_some(), "dedupe_mode={w}");
        }
        for w in words("lockfile") {
            assert!(LockMode::from_word(w).is_some(), "lockfile={w}");
        }
        for w in words("continue_on_error") {
            assert!(ErrorPolicy::continuing(w).is_some(), "continue_on_error={w}");
        }
        for w in words("clocksource") {
            assert!(ClockSource::from_word(w).is_some(), "clocksource={w}");
        }
        assert_eq!(Fallocate::from_word("1"), Some(Fallocate::Posix));
        assert_eq!(UnifiedRw::from_word("2"), Some(UnifiedRw::Both));
    }
}

#[cfg(test)]
mod error_policy_tests {
    use super::ErrorPolicy;

    #[test]
    fn continue_on_error_and_ignore_error_as_fio_reads_them() {
        let none = ErrorPolicy::continuing("none").unwrap();
        assert!(!none.continues_after(0, 5) && !none.counted);
        let read = ErrorPolicy::continuing("read").unwrap();
        assert!(read.continues_after(0, 5) && read.continues_after(0, 84) && !read.continues_after(1, 5));
        // ENOSPC is fatal unless listed.
        assert!(!ErrorPolicy::continuing("all").unwrap().continues_after(1, 28));
        // ignore_error alone turns continuing on for its lists only.
        let mut p = ErrorPolicy::continuing("none").unwrap();
        p.ignore("EIO,ENOSPC:122").unwrap();
        assert!(p.continues_after(0, 5) && p.continues_after(1, 28) && p.continues_after(1, 122));
        assert!(!p.continues_after(1, 5), "the write list replaces the default");
        assert!(!p.continues_after(2, 84));
        assert!(p.counted);
        let mut p = ErrorPolicy::continuing("none").unwrap();
        p.ignore(",EIO").unwrap();
        assert!(!p.continues_after(0, 5) && p.continues_after(1, 5));
        assert!(ErrorPolicy::default().ignore("EIO,EIO,EIO,EIO").is_err());
        assert!(ErrorPolicy::default().ignore("EFOO").unwrap_err().contains("EFOO"));
    }
}
