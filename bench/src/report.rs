//! How every benchmark prints: a table for people, CSV for spreadsheets, JSON for scripts.
//! Rows are JSON objects, so the three formats always agree.

use std::fmt::Write as _;

use clap::ValueEnum;
use serde_json::{Map, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Csv,
    Json,
}

pub type Row = Map<String, Value>;

/// Renders `rows` (all with the same keys, in order) in `format`; `notes` follow a table.
pub fn render(format: Format, rows: &[Row], notes: &[String]) -> String {
    match format {
        Format::Json => serde_json::to_string_pretty(rows).unwrap_or_default() + "\n",
        Format::Csv => csv(rows),
        Format::Table => table(rows, notes),
    }
}

fn keys(rows: &[Row]) -> Vec<&str> {
    rows.first().map(|r| r.keys().map(String::as_str).collect()).unwrap_or_default()
}

fn cell(v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::String(s) => s.clone(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() => format!("{f:.2}"),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

fn csv(rows: &[Row]) -> String {
    let mut out = keys(rows).join(",") + "\n";
    for row in rows {
        let cells: Vec<String> =
            row.values().map(|v| if v.is_null() { String::new() } else { cell(v) }).collect();
        out += &(cells.join(",") + "\n");
    }
    out
}

fn table(rows: &[Row], notes: &[String]) -> String {
    let keys = keys(rows);
    let cells: Vec<Vec<String>> = rows.iter().map(|r| r.values().map(cell).collect()).collect();
    let widths: Vec<usize> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| cells.iter().map(|r| r[i].len()).chain([k.len()]).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    let line = |out: &mut String, items: &[String]| {
        let padded: Vec<String> =
            items.iter().zip(&widths).map(|(c, w)| format!("{c:>w$}")).collect();
        let _ = writeln!(out, "{}", padded.join("  "));
    };
    line(&mut out, &keys.iter().map(|k| k.to_string()).collect::<Vec<_>>());
    for row in &cells {
        line(&mut out, row);
    }
    for note in notes {
        let _ = writeln!(out, "{note}");
    }
    out
}

/// Median, minimum and maximum of `samples` (which must not be empty).
pub fn spread(samples: &[f64]) -> (f64, f64, f64) {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let median = if n % 2 == 1 { sorted[n / 2] } else { (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0 };
    (median, sorted[0], sorted[n - 1])
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rows() -> Vec<Row> {
        let a = json!({"name": "a", "ms": 1.5, "n": 3, "x": null});
        let b = json!({"name": "b", "ms": 10.25, "n": 40, "x": 1});
        [a, b].into_iter().map(|v| v.as_object().unwrap().clone()).collect()
    }

    #[test]
    fn csv_has_a_header_and_empty_nulls() {
        assert_eq!(render(Format::Csv, &rows(), &[]), "name,ms,n,x\na,1.50,3,\nb,10.25,40,1\n");
    }

    #[test]
    fn json_round_trips() {
        let parsed: Vec<Row> = serde_json::from_str(&render(Format::Json, &rows(), &[])).unwrap();
        assert_eq!(parsed, rows());
    }

    #[test]
    fn table_aligns_columns_and_appends_notes() {
        let out = render(Format::Table, &rows(), &["note".into()]);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0].len(), lines[1].len());
        assert_eq!(lines[3], "note");
    }

    #[test]
    fn spread_of_odd_and_even_samples() {
        assert_eq!(spread(&[3.0, 1.0, 2.0]), (2.0, 1.0, 3.0));
        assert_eq!(spread(&[4.0, 1.0, 2.0, 3.0]), (2.5, 1.0, 4.0));
    }
}
