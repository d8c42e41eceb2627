//! `index.html`: one self-contained page (inline CSS, charts as inline SVG, no scripts, nothing
//! fetched) with the settings, the machine manifest, the table and the charts. Pure: the page
//! is returned as text.

use serde_json::Value;

pub struct Table {
    pub head: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// The first columns hold names (left-aligned); the rest numbers.
    pub text_cols: usize,
}

/// A chart on the page: its SVG, and the file name its PNG and SVG are saved under.
pub struct Shown {
    pub file: String,
    pub title: String,
    pub svg: String,
}

pub struct Page<'a> {
    pub title: String,
    /// Lines shown first, in bold (the knee, failures).
    pub headline: Vec<String>,
    pub settings: Vec<(String, String)>,
    pub manifest: Option<&'a Value>,
    pub table: Option<Table>,
    pub charts: Vec<Shown>,
    pub notes: Vec<String>,
}

pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

pub const STYLE: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;margin:0 auto;max-width:1400px;\
padding:1.5em;color:#222;background:#fff}\
h1{font-size:1.6em;margin:.2em 0 .6em}h2{font-size:1.25em;margin:1.6em 0 .5em;border-bottom:1px solid #ddd}\
table{border-collapse:collapse;font-size:.9em;margin:.5em 0}th,td{padding:.25em .7em;border:1px solid #ddd;text-align:right}\
th{background:#f3f5f8;position:sticky;top:0}td.t,th.t{text-align:left}tr:nth-child(even) td{background:#fafbfc}\
.kv td{text-align:left}.kv td:first-child{color:#555;white-space:nowrap}\
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:1.2em}\
figure{margin:0;border:1px solid #e3e3e3;border-radius:6px;padding:.5em;background:#fff}\
figure svg{width:100%;height:auto;display:block}figcaption{font-size:.85em;color:#555;padding:.3em}\
.headline{font-weight:bold;font-size:1.1em}.note{color:#8a4b00}code{background:#f3f3f3;padding:0 .2em}\
.scroll{overflow-x:auto}";

pub fn render(p: &Page<'_>) -> String {
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    h.push_str(&format!("<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n", escape(&p.title)));
    h.push_str(&format!("<h1>{}</h1>\n", escape(&p.title)));
    for l in &p.headline {
        h.push_str(&format!("<p class=\"headline\">{}</p>\n", escape(l)));
    }
    if !p.settings.is_empty() {
        h.push_str("<h2>Settings</h2>\n<table class=\"kv\">\n");
        for (k, v) in &p.settings {
            h.push_str(&format!("<tr><td>{}</td><td><code>{}</code></td></tr>\n", escape(k), escape(v)));
        }
        h.push_str("</table>\n");
    }
    if let Some(m) = p.manifest {
        manifest(&mut h, m);
    }
    if !p.charts.is_empty() {
        h.push_str("<h2>Charts</h2>\n<div class=\"charts\">\n");
        for c in &p.charts {
            h.push_str("<figure>\n");
            h.push_str(strip_prolog(&c.svg));
            h.push_str(&format!(
                "\n<figcaption>{} — <a href=\"charts/{f}.png\">PNG</a> · <a href=\"charts/{f}.svg\">SVG</a></figcaption>\n",
                escape(&c.title),
                f = escape(&c.file)
            ));
            h.push_str("</figure>\n");
        }
        h.push_str("</div>\n");
    }
    if let Some(t) = &p.table {
        h.push_str("<h2>Results</h2>\n<div class=\"scroll\"><table>\n<tr>");
        for (i, c) in t.head.iter().enumerate() {
            let class = if i < t.text_cols { " class=\"t\"" } else { "" };
            h.push_str(&format!("<th{class}>{}</th>", escape(c)));
        }
        h.push_str("</tr>\n");
        for r in &t.rows {
            h.push_str("<tr>");
            for (i, c) in r.iter().enumerate() {
                let class = if i < t.text_cols { " class=\"t\"" } else { "" };
                h.push_str(&format!("<td{class}>{}</td>", escape(c)));
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</table></div>\n");
    }
    if !p.notes.is_empty() {
        h.push_str("<h2>Notes</h2>\n<ul>\n");
        for n in &p.notes {
            h.push_str(&format!("<li class=\"note\">{}</li>\n", escape(n)));
        }
        h.push_str("</ul>\n");
    }
    h.push_str(&format!("<p style=\"color:#888;font-size:.8em\">Made by {}.</p>\n", escape(crate::VERSION_STRING)));
    h.push_str("</body>\n</html>\n");
    h
}

/// An SVG document as an element for inline use (without an XML declaration).
pub fn strip_prolog(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The machine the results come from: fiox's run manifest.
fn manifest(h: &mut String, m: &Value) {
    h.push_str("<h2>Machine</h2>\n<table class=\"kv\">\n");
    for (key, title) in
        [("kernel", "kernel"), ("cpu", "CPU"), ("cpus", "CPUs"), ("version", "fiox"), ("clock", "clock")]
    {
        if let Some(v) = m.get(key) {
            h.push_str(&format!("<tr><td>{title}</td><td>{}</td></tr>\n", escape(&text(v))));
        }
    }
    h.push_str("</table>\n");
    if let Some(devs) = m.get("devices").and_then(Value::as_array).filter(|d| !d.is_empty()) {
        let cols = [
            ("name", "device"),
            ("model", "model"),
            ("scheduler", "scheduler"),
            ("rotational", "rotational"),
            ("logical_block_size", "logical block"),
            ("physical_block_size", "physical block"),
            ("nr_requests", "nr_requests"),
            ("read_ahead_kb", "read-ahead KiB"),
            ("write_cache", "write cache"),
        ];
        h.push_str("<table>\n<tr>");
        for (_, t) in cols {
            h.push_str(&format!("<th class=\"t\">{t}</th>"));
        }
        h.push_str("<th class=\"t\">mounts</th></tr>\n");
        for d in devs {
            h.push_str("<tr>");
            for (k, _) in cols {
                h.push_str(&format!("<td class=\"t\">{}</td>", escape(&d.get(k).map(text).unwrap_or_default())));
            }
            let mounts: Vec<String> = d
                .get("mounts")
                .and_then(Value::as_array)
                .map(|ms| ms.iter().map(|x| format!("{} ({})", text(&x["mountpoint"]), text(&x["fstype"]))).collect())
                .unwrap_or_default();
            h.push_str(&format!("<td class=\"t\">{}</td></tr>\n", escape(&mounts.join(", "))));
        }
        h.push_str("</table>\n");
    }
    if let Some(w) = m.get("warnings").and_then(Value::as_array).filter(|w| !w.is_empty()) {
        h.push_str("<ul>\n");
        for x in w {
            h.push_str(&format!("<li class=\"note\">{}</li>\n", escape(&text(x))));
        }
        h.push_str("</ul>\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_is_self_contained_and_escaped() {
        let m = serde_json::json!({"kernel": "6.1", "cpu": "X <fast>", "cpus": 2,
            "devices": [{"name": "vda", "rotational": 1, "mounts": [{"mountpoint": "/", "fstype": "ext4"}]}]});
        let p = Page {
            title: "fiox sweep: bs".into(),
            headline: vec!["knee at iodepth=8".into()],
            settings: vec![("command".into(), "fiox sweep --vary bs=4k,8k --name=j".into())],
            manifest: Some(&m),
            table: Some(Table {
                head: vec!["bs".into(), "IOPS".into()],
                rows: vec![vec!["4k".into(), "100".into()]],
                text_cols: 1,
            }),
            charts: vec![Shown {
                file: "iops".into(),
                title: "IOPS".into(),
                svg: "<?xml version=\"1.0\"?><svg></svg>".into(),
            }],
            notes: vec!["point x failed".into()],
        };
        let h = render(&p);
        assert!(h.contains("X &lt;fast&gt;") && h.contains("/ (ext4)") && h.contains("<figure>\n<svg></svg>"));
        assert!(!h.contains("<?xml") && !h.contains("<script") && !h.contains("http"));
    }
}
