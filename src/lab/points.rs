//! The point algebra of a sweep, shared by `sweep`, `--find-knee`, `plot` and the base job:
//! which points a set of axes makes (their cross product, or the axes walked side by side),
//! what a point is called (`bs=4k iodepth=8`) and its file-name-safe id, and how the axes are
//! charted. Pure functions of the axes: nothing here reads, writes or runs anything.

use anyhow::{bail, Result};
use fiox_options::Ctx;

use crate::lab::axis::Axis;
use crate::lab::charts::AxisView;

/// Every combination, first axis outermost (as nested shell loops).
pub(crate) fn cross(axes: &[Axis]) -> Result<Vec<Vec<String>>> {
    let n: usize = axes.iter().map(|a| a.values.len()).product();
    if n > 10_000 {
        bail!("sweep: {n} points is too many (the cross product of the axes); at most 10000");
    }
    let mut out: Vec<Vec<String>> = vec![Vec::new()];
    for a in axes {
        out =
            out.into_iter().flat_map(|p| a.values.iter().map(move |v| [p.clone(), vec![v.clone()]].concat())).collect();
    }
    Ok(out)
}

/// The axes walked side by side: the first point takes every axis's first value, and so on.
pub(crate) fn zipped(axes: &[Axis]) -> Result<Vec<Vec<String>>> {
    let n = axes[0].values.len();
    if let Some(a) = axes.iter().find(|a| a.values.len() != n) {
        bail!(
            "sweep: --zip needs axes of equal length, but {} has {} values and {} has {n}",
            a.typed,
            a.values.len(),
            axes[0].typed
        );
    }
    Ok((0..n).map(|i| axes.iter().map(|a| a.values[i].clone()).collect()).collect())
}

/// A point as progress lines and errors name it: `bs=4k iodepth=8`.
pub(crate) fn describe(axes: &[Axis], values: &[String]) -> String {
    axes.iter().zip(values).map(|(a, v)| format!("{}={v}", a.typed)).collect::<Vec<_>>().join(" ")
}

/// The axes as charted, and each point's index into their values.
pub(crate) fn cross_view(axes: &[Axis], points: &[Vec<String>], ctx: &Ctx) -> (Vec<AxisView>, Vec<Vec<usize>>) {
    let coords = points
        .iter()
        .map(|p| p.iter().enumerate().map(|(a, v)| axes[a].values.iter().position(|x| x == v).unwrap_or(0)).collect())
        .collect();
    (axis_views(axes, ctx), coords)
}

/// Zipped axes are one axis of points labelled with all their values (`randread 4k`), placed by
/// the first axis's values when those are distinct numbers.
pub(crate) fn zip_view(axes: &[Axis], points: &[Vec<String>], ctx: &Ctx) -> (Vec<AxisView>, Vec<Vec<usize>>) {
    let firsts: Vec<&String> = points.iter().map(|p| &p[0]).collect();
    let distinct = firsts.iter().collect::<std::collections::HashSet<_>>().len() == firsts.len();
    let positions: Option<Vec<f64>> = firsts.iter().map(|v| axes[0].numeric(v, ctx)).collect();
    let view = AxisView {
        name: axes.iter().map(|a| a.typed.as_str()).collect::<Vec<_>>().join(", ") + " (zipped)",
        values: points.iter().map(|p| p.join(" ")).collect(),
        positions: positions.filter(|_| distinct),
        bytes: axes[0].is_size(),
        unit: time_unit(&axes[0]),
    };
    (vec![view], (0..points.len()).map(|i| vec![i]).collect())
}

/// The unit of a time option's values when all are bare numbers (`runtime=10,20` are seconds).
pub(crate) fn time_unit(a: &Axis) -> Option<&'static str> {
    use fiox_options::table::{Kind, TimeUnit};
    let Kind::Time { unit } = a.def.kind else { return None };
    if !a.values.iter().all(|v| v.trim().parse::<f64>().is_ok()) {
        return None;
    }
    Some(match unit {
        TimeUnit::Usec => "µs",
        TimeUnit::Msec => "ms",
        TimeUnit::Sec => "s",
    })
}

/// File-name-safe, unique ids for the points: `bs=4k_iodepth=8`.
pub(crate) fn ids(axes: &[Axis], points: &[Vec<String>]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, p) in points.iter().enumerate() {
        let mut id: String = axes
            .iter()
            .zip(p)
            .map(|(a, v)| {
                let v: String =
                    v.chars().map(|c| if c.is_ascii_alphanumeric() || ".+-".contains(c) { c } else { '_' }).collect();
                format!("{}={v}", a.typed)
            })
            .collect::<Vec<_>>()
            .join("_");
        if id.len() > 150 {
            id.truncate(150);
        }
        if out.contains(&id) {
            id = format!("{id}~{i}");
        }
        out.push(id);
    }
    out
}

/// Every axis as charted on its own (a cross product's axes).
pub(crate) fn axis_views(axes: &[Axis], ctx: &Ctx) -> Vec<AxisView> {
    axes.iter()
        .map(|a| AxisView {
            unit: time_unit(a),
            name: a.typed.clone(),
            values: a.values.clone(),
            positions: a.positions(ctx),
            bytes: a.is_size(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::axis;

    fn ctx() -> Ctx {
        Ctx { kb_base: 1024, pagesize: 4096, ncpus: 2, mb_memory: 1024 }
    }

    #[test]
    fn points_cross_and_zip() {
        let a = axis::parse("numjobs=1,2", &ctx()).unwrap();
        let b = axis::parse("iodepth=1,4,16", &ctx()).unwrap();
        let c = cross(&[a.clone(), b.clone()]).unwrap();
        assert_eq!(c.len(), 6);
        assert_eq!(c[1], ["1", "4"]);
        assert_eq!(c[3], ["2", "1"]);
        assert!(zipped(&[a.clone(), b.clone()]).unwrap_err().to_string().contains("equal length"));
        let b2 = axis::parse("iodepth=8,16", &ctx()).unwrap();
        assert_eq!(zipped(&[a.clone(), b2.clone()]).unwrap(), [["1", "8"], ["2", "16"]]);
        let f = axis::parse("filename=/dev/a,/dev/b", &ctx()).unwrap();
        assert_eq!(
            ids(&[f.clone(), a], &cross(&[f, axis::parse("numjobs=1,2", &ctx()).unwrap()]).unwrap())[3],
            "filename=_dev_b_numjobs=2"
        );
    }
}
