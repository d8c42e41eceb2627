//! Heat maps: one coloured, annotated cell per pair of categories, and a colour bar.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::line::{Span, FONT};
use crate::scale::number;
use crate::{err, Error, HeatMap};

pub(crate) fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, h: &HeatMap) -> Result<(), Error> {
    root.fill(&WHITE).map_err(err)?;
    let area = root.titled(&h.title, (FONT, 24).into_font().style(FontStyle::Bold)).map_err(err)?;
    let (w, _) = area.dim_in_pixel();
    let (plot, bar) = area.split_horizontally(w - 130);

    let vals: Vec<f64> = h.cells.iter().flatten().flatten().copied().filter(|v| v.is_finite()).collect();
    let key = |v: f64| if h.log { v.max(f64::MIN_POSITIVE).log10() } else { v };
    let lo = vals.iter().copied().map(key).fold(f64::INFINITY, f64::min);
    let hi = vals.iter().copied().map(key).fold(f64::NEG_INFINITY, f64::max);
    let norm = |v: f64| if hi > lo { ((key(v) - lo) / (hi - lo)).clamp(0.0, 1.0) } else { 0.5 };

    let (nc, nr) = (h.cols.len().max(1), h.rows.len().max(1));
    let xk: Vec<f64> = (0..nc).map(|i| i as f64 + 0.5).collect();
    let yk: Vec<f64> = (0..nr).map(|i| i as f64 + 0.5).collect();
    let mut chart = ChartBuilder::on(&plot)
        .margin(14)
        .x_label_area_size(56)
        .y_label_area_size(78)
        .build_cartesian_2d(Span::new((0.0, nc as f64), xk), Span::new((0.0, nr as f64), yk))
        .map_err(err)?;
    let name = |names: &[String], v: f64| names.get(v.floor().max(0.0) as usize).cloned().unwrap_or_default();
    let x_fmt = |v: &f64| name(&h.cols, *v);
    let y_fmt = |v: &f64| name(&h.rows, *v);
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc(h.x_label.as_str())
        .y_desc(h.y_label.as_str())
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .axis_desc_style((FONT, 17))
        .label_style((FONT, 14))
        .draw()
        .map_err(err)?;

    let centre = Pos::new(HPos::Center, VPos::Center);
    for (r, row) in h.cells.iter().enumerate() {
        for (c, cell) in row.iter().enumerate() {
            let (x, y) = (c as f64, r as f64);
            let (fill, text, ink) = match cell {
                Some(v) => {
                    let t = norm(*v);
                    let col = ViridisRGB::get_color_normalized(t, 0.0, 1.0);
                    // Viridis is dark at the low end: white text there, black above.
                    let ink = if t < 0.55 { WHITE } else { BLACK };
                    (col, number(*v), ink)
                }
                None => (RGBColor(235, 235, 235), "n/a".to_string(), RGBColor(120, 120, 120)),
            };
            chart
                .draw_series(std::iter::once(Rectangle::new([(x, y), (x + 1.0, y + 1.0)], fill.filled())))
                .map_err(err)?;
            chart
                .draw_series(std::iter::once(Rectangle::new([(x, y), (x + 1.0, y + 1.0)], WHITE.stroke_width(1))))
                .map_err(err)?;
            let font = (FONT, 14).into_font().color(&ink).pos(centre);
            chart.draw_series(std::iter::once(Text::new(text, (x + 0.5, y + 0.5), font))).map_err(err)?;
        }
    }

    // Colour bar: the gradient with the extreme values.
    let (_, bh) = bar.dim_in_pixel();
    let (top, bottom) = (40i32, bh as i32 - 80);
    let steps = 64;
    for i in 0..steps {
        let t = 1.0 - i as f64 / (steps - 1) as f64;
        let y0 = top + (bottom - top) * i / steps;
        let y1 = top + (bottom - top) * (i + 1) / steps;
        let col = ViridisRGB::get_color_normalized(t, 0.0, 1.0);
        bar.draw(&Rectangle::new([(20, y0), (44, y1 + 1)], col.filled())).map_err(err)?;
    }
    if !vals.is_empty() {
        let unkey = |k: f64| if h.log { 10f64.powf(k) } else { k };
        bar.draw(&Text::new(number(unkey(hi)), (50, top - 6), (FONT, 13))).map_err(err)?;
        bar.draw(&Text::new(number(unkey(lo)), (50, bottom - 8), (FONT, 13))).map_err(err)?;
    }
    bar.draw(&Text::new(h.unit.clone(), (10, bottom + 14), (FONT, 14))).map_err(err)?;
    if h.log {
        bar.draw(&Text::new("(log colour)".to_string(), (10, bottom + 34), (FONT, 12))).map_err(err)?;
    }
    Ok(())
}
