//! fiox's charts as pure functions: a chart description in, SVG text or PNG bytes out. No I/O,
//! no clock, no environment; the callers decide what to draw and where to write it.
//!
//! - [`LineChart`]: lines over a numeric or categorical x axis, optional log scales, error bars,
//!   a secondary y axis, labelled points, horizontal target lines and marked points;
//! - [`HeatMap`]: a grid of values over two categorical axes, coloured and annotated;
//! - [`BarChart`]: grouped bars (jobs of one report, sides of a comparison).
//!
//! Text in PNGs is drawn with DejaVu Sans embedded in the binary, so charts look the same on a
//! machine without any fonts installed. SVGs name the `sans-serif` family and leave the
//! rendering to the viewer.
#![forbid(unsafe_code)]

mod bars;
mod heat;
mod line;
pub mod scale;

use plotters::backend::{BitMapBackend, SVGBackend};
use plotters::drawing::IntoDrawingArea;

pub use scale::{Axis, Scale, Unit};

/// Default picture size in pixels.
pub const WIDTH: u32 = 960;
pub const HEIGHT: u32 = 600;

/// One point of a line; `err` is a ± half-width drawn as an error bar.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub err: Option<f64>,
    /// Text written next to the point.
    pub label: Option<String>,
}

impl Point {
    pub fn new(x: f64, y: f64) -> Point {
        Point { x, y, err: None, label: None }
    }
}

/// One line.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<Point>,
    pub dashed: bool,
}

/// A horizontal line across the plot (a target), with its label.
#[derive(Debug, Clone, PartialEq)]
pub struct HLine {
    pub y: f64,
    pub label: String,
}

/// A highlighted point (the knee), drawn larger and labelled.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    pub x: f64,
    pub y: f64,
    pub label: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    /// A second y axis on the right and the series measured against it.
    pub y2: Option<(Axis, Vec<Series>)>,
    pub hlines: Vec<HLine>,
    pub marks: Vec<Mark>,
}

/// Values over two categorical axes: `cells[row][col]`, rows drawn bottom to top.
#[derive(Debug, Clone, PartialEq)]
pub struct HeatMap {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub cols: Vec<String>,
    pub rows: Vec<String>,
    pub cells: Vec<Vec<Option<f64>>>,
    /// Colour by the logarithm of the value (for values spanning decades).
    pub log: bool,
    /// What the colours measure, with its unit, for the colour bar.
    pub unit: String,
}

/// Grouped bars: one group per category, one bar per series, values written on the bars.
#[derive(Debug, Clone, PartialEq)]
pub struct BarChart {
    pub title: String,
    pub x_label: String,
    pub categories: Vec<String>,
    pub y: Axis,
    /// (series name, one value per category).
    pub series: Vec<(String, Vec<Option<f64>>)>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Chart {
    Line(LineChart),
    Heat(HeatMap),
    Bars(BarChart),
}

impl Chart {
    pub fn title(&self) -> &str {
        match self {
            Chart::Line(c) => &c.title,
            Chart::Heat(h) => &h.title,
            Chart::Bars(b) => &b.title,
        }
    }
}

/// Why a chart could not be drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct Error(pub String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot draw the chart: {}", self.0)
    }
}

impl std::error::Error for Error {}

pub(crate) fn err(e: impl std::fmt::Display) -> Error {
    Error(e.to_string())
}

/// Registers the embedded font once; every text style asks for the `sans-serif` family.
fn fonts() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        use plotters::style::{register_font, FontStyle};
        // The bytes are DejaVu's own TTF files; they parse, so these cannot fail.
        let _ = register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular());
        let _ = register_font("sans-serif", FontStyle::Bold, dejavu::sans::bold());
    });
}

/// The chart as an SVG document.
pub fn svg(chart: &Chart) -> Result<String, Error> {
    fonts();
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, HEIGHT)).into_drawing_area();
        draw(root, chart)?;
    }
    Ok(out)
}

/// The chart as a PNG image.
pub fn png(chart: &Chart) -> Result<Vec<u8>, Error> {
    fonts();
    let mut rgb = vec![255u8; (WIDTH * HEIGHT * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (WIDTH, HEIGHT)).into_drawing_area();
        draw(root, chart)?;
    }
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, WIDTH, HEIGHT);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.set_compression(png::Compression::Balanced);
    let mut w = enc.write_header().map_err(err)?;
    w.write_image_data(&rgb).map_err(err)?;
    w.finish().map_err(err)?;
    Ok(out)
}

fn draw<DB: plotters::backend::DrawingBackend>(
    root: plotters::drawing::DrawingArea<DB, plotters::coord::Shift>,
    chart: &Chart,
) -> Result<(), Error> {
    match chart {
        Chart::Line(c) => line::draw(&root, c)?,
        Chart::Heat(h) => heat::draw(&root, h)?,
        Chart::Bars(b) => bars::draw(&root, b)?,
    }
    root.present().map_err(err)
}

/// Distinct series colours (Tableau 10), in order of use.
pub(crate) const PALETTE: [(u8, u8, u8); 10] = [
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
];

pub(crate) fn colour(i: usize) -> plotters::style::RGBColor {
    let (r, g, b) = PALETTE[i % PALETTE.len()];
    plotters::style::RGBColor(r, g, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Chart {
        let pts = |f: fn(f64) -> f64| (0..8).map(|i| Point::new(2f64.powi(i), f(2f64.powi(i)))).collect();
        Chart::Line(LineChart {
            title: "IOPS by iodepth".into(),
            x: Axis::new("iodepth", Scale::Log, Unit::Number),
            y: Axis::new("IOPS", Scale::Linear, Unit::Number),
            series: vec![
                Series { name: "read".into(), points: pts(|x| 1000.0 * x.sqrt()), dashed: false },
                Series { name: "write".into(), points: pts(|x| 700.0 * x.sqrt()), dashed: true },
            ],
            y2: None,
            hlines: vec![HLine { y: 2000.0, label: "target".into() }],
            marks: vec![Mark { x: 4.0, y: 2000.0, label: "knee".into() }],
        })
    }

    #[test]
    fn svg_has_title_labels_and_lines() {
        let s = svg(&sample()).unwrap();
        assert!(s.starts_with("<svg"), "{}", &s[..100]);
        for needle in ["IOPS by iodepth", "iodepth", "read", "write", "target", "knee", "<polyline"] {
            assert!(s.contains(needle), "missing {needle}");
        }
    }

    #[test]
    fn png_decodes_and_has_colours() {
        let bytes = png(&sample()).unwrap();
        let dec = png::Decoder::new(std::io::Cursor::new(&bytes));
        let mut r = dec.read_info().unwrap();
        let mut buf = vec![0; r.output_buffer_size().unwrap()];
        let info = r.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (WIDTH, HEIGHT));
        let mut colours = std::collections::HashSet::new();
        for px in buf[..info.buffer_size()].chunks(3) {
            colours.insert((px[0], px[1], px[2]));
        }
        // Text antialiasing and several series colours.
        assert!(colours.len() > 50, "{} colours", colours.len());
        let blue = buf.chunks(3).filter(|p| (p[0], p[1], p[2]) == PALETTE[0]).count();
        assert!(blue > 200, "the first series is drawn ({blue} pixels)");
    }

    #[test]
    fn heat_map_renders_cells() {
        let h = Chart::Heat(HeatMap {
            title: "IOPS".into(),
            x_label: "iodepth".into(),
            y_label: "numjobs".into(),
            cols: vec!["1".into(), "2".into(), "4".into()],
            rows: vec!["1".into(), "2".into()],
            cells: vec![vec![Some(100.0), Some(200.0), Some(400.0)], vec![Some(150.0), None, Some(900.0)]],
            log: false,
            unit: "IOPS".into(),
        });
        let s = svg(&h).unwrap();
        assert!(s.contains("900") && s.contains("numjobs") && s.contains("<rect"));
        assert!(png(&h).unwrap().len() > 1000);
    }

    #[test]
    fn bars_render_groups() {
        let b = Chart::Bars(BarChart {
            title: "IOPS per job".into(),
            x_label: "job".into(),
            categories: vec!["4k_randread read".into(), "64k_write write".into()],
            y: Axis::new("IOPS", Scale::Linear, Unit::Number),
            series: vec![("hdd".into(), vec![Some(571.0), Some(2745.0)]), ("ssd".into(), vec![Some(90000.0), None])],
        });
        let s = svg(&b).unwrap();
        assert!(s.contains("64k_write write") && s.contains("ssd") && s.contains("90k") && s.contains("<rect"), "{s}");
        let bytes = png(&b).unwrap();
        let dec = png::Decoder::new(std::io::Cursor::new(&bytes));
        let mut r = dec.read_info().unwrap();
        let mut buf = vec![0; r.output_buffer_size().unwrap()];
        r.next_frame(&mut buf).unwrap();
        let orange = buf.chunks(3).filter(|p| (p[0], p[1], p[2]) == PALETTE[1]).count();
        assert!(orange > 1000, "the second series' bar is drawn ({orange} pixels)");
    }
}
