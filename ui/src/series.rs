//! The data behind a chart line, shared by the charts and their CSV export.

/// One line on a chart: `(seconds since the start, value)` points in time order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}
