//! The live status line, fio style:
//! `Jobs: 1 (f=1): [r(1)][45.0%][r=267MiB/s][r=68.3k IOPS][eta 00m:03s]`.
//!
//! Split as fio splits it: [`JobsEta`] is the data (gathered from the workers' progress
//! counters), [`render_line`] is a pure function of it.

use fiox_report::units::{num2str, Unit};

/// One sample of the run's progress.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobsEta {
    /// Workers still running, and the files they have open.
    pub running: u32,
    pub files: u32,
    /// One state letter per worker (`R`/`r` reading, `W`/`w` writing, `M`/`m` mixed,
    /// `D`/`d` trimming; upper case sequential, lower case random; `_` done).
    pub states: Vec<char>,
    pub percent: f64,
    /// Bytes and I/Os per second per direction over the last interval.
    pub bw: [u64; 3],
    pub iops: [u64; 3],
    pub eta_secs: u64,
}

/// `[r(2),_(1)]`: runs of the same state, each with its count.
fn states(s: &[char]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        let mut n = 1;
        while i + n < s.len() && s[i + n] == c {
            n += 1;
        }
        if !out.is_empty() {
            out.push(',');
        }
        out.push_str(&format!("{c}({n})"));
        i += n;
    }
    out
}

fn eta(secs: u64) -> String {
    let (d, h, m, s) = (secs / 86400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    if d > 0 {
        format!("{d}d:{h:02}h:{m:02}m:{s:02}s")
    } else if h > 0 {
        format!("{h:02}h:{m:02}m:{s:02}s")
    } else {
        format!("{m:02}m:{s:02}s")
    }
}

pub fn render_line(e: &JobsEta, kb_base: u64) -> String {
    let dirs = ['r', 'w', 't'];
    let active: Vec<usize> = (0..3).filter(|&d| e.bw[d] > 0 || e.iops[d] > 0).collect();
    let mut line = format!("Jobs: {} (f={}): [{}][{:.1}%]", e.running, e.files, states(&e.states), e.percent);
    if !active.is_empty() {
        let bw: Vec<String> =
            active.iter().map(|&d| format!("{}={}", dirs[d], num2str(e.bw[d], 4, kb_base, Unit::BytePerSec))).collect();
        let iops: Vec<String> =
            active.iter().map(|&d| format!("{}={}", dirs[d], num2str(e.iops[d], 4, 1000, Unit::None))).collect();
        line.push_str(&format!("[{}][{} IOPS]", bw.join(","), iops.join(",")));
    }
    line.push_str(&format!("[eta {}]", eta(e.eta_secs)));
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_like_fio() {
        let e = JobsEta {
            running: 1,
            files: 1,
            states: vec!['r'],
            percent: 45.0,
            bw: [267 << 20, 0, 0],
            iops: [68_300, 0, 0],
            eta_secs: 3,
        };
        assert_eq!(render_line(&e, 1024), "Jobs: 1 (f=1): [r(1)][45.0%][r=267MiB/s][r=68.3k IOPS][eta 00m:03s]");
        let e = JobsEta {
            running: 2,
            files: 2,
            states: vec!['m', 'm', '_'],
            percent: 75.0,
            bw: [1 << 20, 2 << 20, 0],
            iops: [256, 512, 0],
            eta_secs: 3725,
        };
        assert_eq!(
            render_line(&e, 1024),
            "Jobs: 2 (f=2): [m(2),_(1)][75.0%][r=1024KiB/s,w=2048KiB/s][r=256,w=512 IOPS][eta 01h:02m:05s]"
        );
    }
}
