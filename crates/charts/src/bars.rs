//! Grouped bar charts: categories along x, one bar per series in each, the value on each bar,
//! and the legend beside the plot.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::line::{Span, FONT};
use crate::scale::number;
use crate::{colour, err, BarChart, Error};

pub(crate) fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, b: &BarChart) -> Result<(), Error> {
    root.fill(&WHITE).map_err(err)?;
    let area = root.titled(&b.title, (FONT, 24).into_font().style(FontStyle::Bold)).map_err(err)?;
    let (w, _) = area.dim_in_pixel();
    let named = b.series.len() > 1;
    let longest = b.series.iter().map(|s| s.0.chars().count()).max().unwrap_or(0) as u32;
    let legend_w = if named { (longest * 8 + 50).clamp(100, w / 4) } else { 0 };
    let (plot, side) = area.split_horizontally(w - legend_w);

    let vals: Vec<f64> = b.series.iter().flat_map(|s| s.1.iter().flatten().copied()).collect();
    let yr = b.y.range(&vals);
    let yt = b.y.ticks_in(yr);
    let nc = b.categories.len().max(1);
    let xk: Vec<f64> = (0..nc).map(|i| i as f64 + 0.5).collect();
    let mut chart = ChartBuilder::on(&plot)
        .margin(14)
        .x_label_area_size(56)
        .y_label_area_size(78)
        .build_cartesian_2d(Span::new((0.0, nc as f64), xk), Span::new(yr, yt.iter().map(|t| t.0).collect()))
        .map_err(err)?;
    let x_fmt = |v: &f64| b.categories.get(v.floor().max(0.0) as usize).cloned().unwrap_or_default();
    let y_fmt = |v: &f64| {
        yt.iter().min_by(|a, c| (a.0 - v).abs().total_cmp(&(c.0 - v).abs())).map(|t| t.1.clone()).unwrap_or_default()
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_desc(b.x_label.as_str())
        .y_desc(b.y.label.as_str())
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .axis_desc_style((FONT, 17))
        .label_style((FONT, 14))
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()
        .map_err(err)?;
    let ns = b.series.len().max(1) as f64;
    let width = 0.8 / ns;
    let base = match b.y.scale {
        crate::Scale::Linear => yr.0.max(0.0).min(yr.1),
        crate::Scale::Log => yr.0,
    };
    let top = Pos::new(HPos::Center, VPos::Bottom);
    for (si, (_, values)) in b.series.iter().enumerate() {
        let col = colour(si);
        for (ci, v) in values.iter().enumerate() {
            let Some(v) = v else { continue };
            let x0 = ci as f64 + 0.1 + si as f64 * width;
            let y = b.y.tx(*v);
            chart
                .draw_series(std::iter::once(Rectangle::new([(x0, base), (x0 + width * 0.92, y)], col.filled())))
                .map_err(err)?;
            let label = (FONT, 13).into_font().color(&BLACK).pos(top);
            chart
                .draw_series(std::iter::once(
                    EmptyElement::at((x0 + width * 0.46, y)) + Text::new(number(*v), (0, -3), label),
                ))
                .map_err(err)?;
        }
    }
    if named {
        for (row, (name, _)) in b.series.iter().enumerate() {
            let y = 30 + row as i32 * 24;
            side.draw(&Rectangle::new([(6, y - 7), (30, y + 7)], colour(row).filled())).map_err(err)?;
            side.draw(&Text::new(name.clone(), (38, y - 8), (FONT, 15))).map_err(err)?;
        }
    }
    Ok(())
}
