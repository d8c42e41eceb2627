//! Line charts: one line per series, a legend beside the plot (never over the data), error bars,
//! point labels, target lines, marked points and an optional right-hand axis.

use std::ops::Range;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::{colour, err, Axis, Error, LineChart, Series};

type Coord = Cartesian2d<Span, Span>;

/// A linear coordinate with ticks exactly where we put them (plotters' own f64 ranges choose
/// their ticks and cannot take key points and label formatters together).
#[derive(Debug, Clone)]
pub(crate) struct Span {
    lo: f64,
    hi: f64,
    keys: Vec<f64>,
}

impl Span {
    pub(crate) fn new((lo, hi): (f64, f64), keys: Vec<f64>) -> Span {
        Span { lo, hi, keys }
    }
}

impl Ranged for Span {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let t = ((v - self.lo) / (self.hi - self.lo)).clamp(-10.0, 10.0);
        limit.0 + ((limit.1 - limit.0) as f64 * t).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.keys.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.lo..self.hi
    }
}

pub(crate) const FONT: &str = "sans-serif";

/// The axis's ticks as key points and a label lookup.
struct Ticks {
    points: Vec<f64>,
    labels: Vec<(f64, String)>,
}

impl Ticks {
    fn new(axis: &Axis, range: (f64, f64)) -> Ticks {
        let labels = axis.ticks_in(range);
        Ticks { points: labels.iter().map(|t| t.0).collect(), labels }
    }

    fn label(&self, v: f64) -> String {
        self.labels
            .iter()
            .min_by(|a, b| (a.0 - v).abs().total_cmp(&(b.0 - v).abs()))
            .map(|t| t.1.clone())
            .unwrap_or_default()
    }
}

fn values<'a>(series: impl Iterator<Item = &'a Series>, f: impl Fn(&crate::Point) -> Vec<f64>) -> Vec<f64> {
    series.flat_map(|s| s.points.iter().flat_map(&f)).collect()
}

pub(crate) fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, c: &LineChart) -> Result<(), Error> {
    root.fill(&WHITE).map_err(err)?;
    let title_style = (FONT, 24).into_font().style(FontStyle::Bold);
    let area = root.titled(&c.title, title_style).map_err(err)?;

    // Legend entries: every named series, right-axis ones marked as such.
    let mut legend: Vec<(String, usize, bool)> =
        c.series.iter().enumerate().map(|(i, s)| (s.name.clone(), i, s.dashed)).collect();
    if let Some((_, s2)) = &c.y2 {
        let n = c.series.len();
        legend.extend(
            s2.iter()
                .enumerate()
                .map(|(i, s)| (format!("{} (right axis)", s.name), y2_colour(n, s2.len(), i), s.dashed)),
        );
    }
    legend.retain(|l| !l.0.is_empty());
    let (w, _) = area.dim_in_pixel();
    let longest = legend.iter().map(|l| l.0.chars().count()).max().unwrap_or(0) as u32;
    let legend_w = if legend.is_empty() { 0 } else { (longest * 8 + 70).clamp(120, w / 3) };
    let (plot, side) = area.split_horizontally(w - legend_w);

    let xs = values(c.series.iter().chain(c.y2.iter().flat_map(|y| y.1.iter())), |p| vec![p.x]);
    let xr = c.x.range(&xs);
    let ys = values(c.series.iter(), |p| {
        let e = p.err.unwrap_or(0.0);
        // An interval reaching below zero does not pull a positive axis below zero.
        let low = match c.y.scale {
            crate::Scale::Log => p.y,
            crate::Scale::Linear if p.y >= 0.0 => (p.y - e).max(0.0),
            crate::Scale::Linear => p.y - e,
        };
        vec![p.y, p.y + e, low]
    });
    let mut ys = ys;
    ys.extend(c.hlines.iter().map(|h| h.y));
    ys.extend(c.marks.iter().map(|m| m.y));
    let yr = c.y.range(&ys);
    let xt = Ticks::new(&c.x, xr);
    let yt = Ticks::new(&c.y, yr);

    let mut builder = ChartBuilder::on(&plot);
    builder.margin(14).x_label_area_size(56).y_label_area_size(78);
    if c.y2.is_some() {
        builder.right_y_label_area_size(78);
    }
    let mut chart =
        builder.build_cartesian_2d(Span::new(xr, xt.points.clone()), Span::new(yr, yt.points.clone())).map_err(err)?;
    match &c.y2 {
        None => {
            mesh(&mut chart, c, &xt, &yt)?;
            draw_series(&mut chart, c, &c.x, &c.y, &c.series, 0)?
        }
        Some((axis2, s2)) => {
            let ys2 = values(s2.iter(), |p| vec![p.y, p.y + p.err.unwrap_or(0.0)]);
            let yr2 = axis2.range(&ys2);
            let yt2 = Ticks::new(axis2, yr2);
            let y2_fmt = |v: &f64| yt2.label(*v);
            // The secondary coordinate takes over the right-hand label area, so it is set before
            // the primary mesh is drawn (which would otherwise label both sides).
            let mut dual =
                chart.set_secondary_coord(Span::new(xr, xt.points.clone()), Span::new(yr2, yt2.points.clone()));
            mesh(&mut dual, c, &xt, &yt)?;
            dual.configure_secondary_axes()
                .y_desc(axis2.label.as_str())
                .y_label_formatter(&y2_fmt)
                .axis_desc_style((FONT, 17))
                .label_style((FONT, 14))
                .draw()
                .map_err(err)?;
            draw_series(&mut dual, c, &c.x, &c.y, &c.series, 0)?;
            for (i, s) in s2.iter().enumerate() {
                let style = ShapeStyle::from(&colour(y2_colour(c.series.len(), s2.len(), i))).stroke_width(2);
                let pts: Vec<(f64, f64)> = s.points.iter().map(|p| (c.x.tx(p.x), axis2.tx(p.y))).collect();
                if s.dashed {
                    dual.draw_secondary_series(DashedLineSeries::new(pts.clone(), 9, 5, style)).map_err(err)?;
                } else {
                    dual.draw_secondary_series(LineSeries::new(pts.clone(), style)).map_err(err)?;
                }
                dual.draw_secondary_series(pts.iter().map(|p| Circle::new(*p, 4, style.filled()))).map_err(err)?;
            }
        }
    }

    // The legend, beside the plot.
    for (row, (name, ci, dashed)) in legend.iter().enumerate() {
        let y = 30 + row as i32 * 24;
        let style = ShapeStyle::from(&colour(*ci)).stroke_width(3);
        if *dashed {
            // Two dashes with gaps either side of the marker.
            side.draw(&PathElement::new(vec![(4, y), (12, y)], style)).map_err(err)?;
            side.draw(&PathElement::new(vec![(32, y), (40, y)], style)).map_err(err)?;
        } else {
            side.draw(&PathElement::new(vec![(8, y), (36, y)], style)).map_err(err)?;
        }
        side.draw(&Circle::new((22, y), 4, style.filled())).map_err(err)?;
        side.draw(&Text::new(name.clone(), (46, y - 8), (FONT, 15))).map_err(err)?;
    }
    Ok(())
}

/// Right-axis series pair with the left-axis ones when there are as many (bandwidth and latency
/// of the same job share a colour, solid and dashed); otherwise they take the next colours.
fn y2_colour(left: usize, right: usize, i: usize) -> usize {
    if left == right {
        i
    } else {
        left + i
    }
}

fn mesh<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Coord>,
    c: &LineChart,
    xt: &Ticks,
    yt: &Ticks,
) -> Result<(), Error> {
    let x_fmt = |v: &f64| xt.label(*v);
    let y_fmt = |v: &f64| yt.label(*v);
    chart
        .configure_mesh()
        .x_desc(c.x.label.as_str())
        .y_desc(c.y.label.as_str())
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .axis_desc_style((FONT, 17))
        .label_style((FONT, 14))
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()
        .map_err(err)
}

fn draw_series<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Coord>,
    c: &LineChart,
    x: &Axis,
    y: &Axis,
    series: &[Series],
    first_colour: usize,
) -> Result<(), Error> {
    let (ylo, _) = {
        let r = chart.as_coord_spec().y_spec().range();
        (r.start, r.end)
    };
    for (i, s) in series.iter().enumerate() {
        let col = colour(first_colour + i);
        let style = ShapeStyle::from(&col).stroke_width(2);
        let pts: Vec<(f64, f64)> = s.points.iter().map(|p| (x.tx(p.x), y.tx(p.y))).collect();
        if s.dashed {
            chart.draw_series(DashedLineSeries::new(pts.clone(), 9, 5, style)).map_err(err)?;
        } else {
            chart.draw_series(LineSeries::new(pts.clone(), style)).map_err(err)?;
        }
        // Markers show where the measurements are; on long time series they would only blur the line.
        if pts.len() <= 60 {
            chart.draw_series(pts.iter().map(|p| Circle::new(*p, 4, style.filled()))).map_err(err)?;
        }
        // Error bars: the confidence interval of repeated runs.
        let bars: Vec<_> = s
            .points
            .iter()
            .filter_map(|p| p.err.filter(|e| *e > 0.0).map(|e| (p, e)))
            .map(|(p, e)| {
                let lo = y.tx((p.y - e).max(y.untx(ylo)));
                ErrorBar::new_vertical(x.tx(p.x), lo, y.tx(p.y), y.tx(p.y + e), style.stroke_width(1), 10)
            })
            .collect();
        chart.draw_series(bars).map_err(err)?;
        let labels: Vec<_> = s
            .points
            .iter()
            .filter_map(|p| p.label.as_ref().map(|l| (p, l)))
            .map(|(p, l)| {
                EmptyElement::at((x.tx(p.x), y.tx(p.y))) + Text::new(l.clone(), (6, -18), (FONT, 13).into_font())
            })
            .collect();
        chart.draw_series(labels).map_err(err)?;
    }
    let xr = chart.as_coord_spec().x_spec().range();
    for h in &c.hlines {
        let red = ShapeStyle::from(&RGBColor(200, 30, 30)).stroke_width(2);
        let ty = y.tx(h.y);
        chart.draw_series(DashedLineSeries::new(vec![(xr.start, ty), (xr.end, ty)], 12, 6, red)).map_err(err)?;
        chart
            .draw_series(std::iter::once(
                EmptyElement::at((xr.start, ty))
                    + Text::new(h.label.clone(), (8, -20), (FONT, 14).into_font().color(&RGBColor(200, 30, 30))),
            ))
            .map_err(err)?;
    }
    for m in &c.marks {
        let red = RGBColor(200, 30, 30);
        let p = (x.tx(m.x), y.tx(m.y));
        chart
            .draw_series(std::iter::once(
                EmptyElement::at(p)
                    + Circle::new((0, 0), 11, red.stroke_width(3))
                    + Text::new(m.label.clone(), (14, 8), (FONT, 15).into_font().style(FontStyle::Bold).color(&red)),
            ))
            .map_err(err)?;
    }
    Ok(())
}
