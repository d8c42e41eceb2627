//! What fiox serves while a run goes, and the page kit its pages share: the small HTTP server
//! (`http`), the Prometheus endpoint (`metrics`), the live page (`live`), and the pieces a
//! results page is made of (`html`: the page's HTML and style; `figure`: how a measured figure
//! is drawn), used by the live page and by the lab's results page alike.
//!
//! Nothing here runs I/O or reads reports: the run (or the sweep) pushes figures in, and pages
//! are drawn from them on request.

pub mod figure;
pub mod html;
pub mod http;
pub mod live;
pub mod metrics;
