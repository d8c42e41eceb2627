//! A verifying job's block layout, checked when the job is planned: the verify interval fio
//! 3.33 uses, the layout of its blocks, and fio's warnings about the job. The runner's
//! `verify.rs` writes and checks the blocks.

use fiox_options::{JobSpec, VerifySpec};
use fiox_verify::Layout;

use crate::plan::io::block_range;

/// The interval fio 3.33 uses for a job: `verify_interval` fitted to the block sizes (at most
/// the smallest block written or read, and dividing every block written), else the smallest
/// block written.
pub fn interval(spec: &JobSpec, v: &VerifySpec) -> u64 {
    let dir = if spec.rw.writes() { 1 } else { 0 };
    let (lo, hi) = block_range(spec, dir);
    let (lo, hi) = (lo.max(1), hi.max(1));
    let mut iv = v.interval.unwrap_or(lo).min(lo);
    if spec.rw.reads() && spec.rw.writes() {
        iv = iv.min(block_range(spec, 0).0.max(1));
    }
    if iv == 0 || lo % iv != 0 || hi % iv != 0 {
        iv = gcd(lo, hi);
    }
    iv
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// How a job's blocks are laid out.
pub fn layout(spec: &JobSpec, v: &VerifySpec) -> Layout {
    Layout {
        kind: v.kind,
        interval: interval(spec, v) as usize,
        verify_offset: v.offset as usize,
        pattern: v.pattern.as_deref().cloned(),
    }
}

/// Checks a verifying job before anything runs (its blocks must hold their headers) and
/// returns fio's warnings about it: writers sharing a file, `norandommap` with variable
/// blocks, a time-based job that only writes and so never reaches its read-back.
pub fn preflight(spec: &JobSpec) -> anyhow::Result<Vec<String>> {
    let Some(v) = &spec.verify else { return Ok(Vec::new()) };
    let name = &spec.name;
    if spec.bs_unaligned {
        anyhow::bail!("job '{name}': verify with bs_unaligned is not supported yet by fiox");
    }
    layout(spec, v).validate().map_err(|e| anyhow::anyhow!("job '{name}': {e}"))?;
    // fio's warnings, in its words and order.
    let mut warnings = Vec::new();
    let write_only = spec.rw.writes() && !spec.rw.reads();
    if spec.numjobs > 1 && spec.filename.is_some() && spec.rw.writes() && v.after_write {
        warnings.push(
            "fio: multiple writers may overwrite blocks that belong to other jobs. This can cause verification failures."
                .to_string(),
        );
    }
    let (lo, hi) = block_range(spec, 1);
    if spec.norandommap && spec.rw.is_random() && spec.rw.writes() && lo != hi {
        // fio's own verification is limited here; fiox's map is not (the newest write of each
        // interval is what it checks), but the warning is fio's.
        warnings.push("fio: norandommap given for variable block sizes, verify limited".to_string());
    }
    if spec.time_based && write_only && v.after_write && !v.only {
        warnings
            .push("fio: verification read phase will never start because write phase uses all of runtime".to_string());
    }
    Ok(warnings)
}
