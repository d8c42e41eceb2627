//! Choice options as types. The option table checks the word a user typed; `spec.rs` turns it
//! into one of these once, so the runner matches on variants instead of comparing strings, and
//! each word list lives only in the table (`defs/`). A test below walks every word the table
//! accepts through `from_word`.

/// `mem` (`iomem`): where I/O buffers come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemKind {
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

/// `fallocate`: how files are preallocated when they are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fallocate {
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnifiedRw {
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RandomGenerator {
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
        for w in words("clocksource") {
            assert!(ClockSource::from_word(w).is_some(), "clocksource={w}");
        }
        assert_eq!(Fallocate::from_word("1"), Some(Fallocate::Posix));
        assert_eq!(UnifiedRw::from_word("2"), Some(UnifiedRw::Both));
    }
}
