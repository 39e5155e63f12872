//! What is generated from the measure table: the measure names error messages list, the
//! measure columns of `results.csv` in order, the terminal's columns, the guide's measure and
//! column tables, and the measures section of `smpsched list`.

use std::fmt::Write as _;

use super::{Args, CsvColumn, Measure, TermColumn, MEASURES};

/// The measures as claims write them (`app_util:APP`), in the table's order.
pub fn names() -> Vec<String> {
    MEASURES
        .iter()
        .filter(|m| m.is_measure())
        .map(Measure::written)
        .collect()
}

/// The measure columns of `results.csv` (after the run's, the point's and `app`), in order.
pub fn csv_columns() -> Vec<CsvColumn> {
    let mut cols: Vec<CsvColumn> = MEASURES.iter().filter_map(|m| m.csv).collect();
    cols.sort_by_key(|c| c.slot);
    cols
}

/// The columns of the terminal's machine table (`app` false) or application table (`app`
/// true), in order.
pub fn terminal_columns(app: bool) -> Vec<TermColumn> {
    let mut cols: Vec<TermColumn> = MEASURES
        .iter()
        .filter(|m| (m.args == Args::App) == app)
        .filter_map(|m| m.terminal)
        .collect();
    cols.sort_by_key(|c| c.slot);
    cols
}

/// The guide's table of measures (Markdown): name, unit and meaning of each.
pub fn guide_measures() -> String {
    let mut out = String::from("| measure | unit | meaning |\n|---|---|---|\n");
    for m in MEASURES.iter().filter(|m| m.is_measure()) {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} |",
            m.written(),
            m.unit.label(),
            m.doc
        );
    }
    out
}

/// The guide's table of the measure columns of `results.csv` (Markdown), in CSV order: header,
/// unit, and what it holds (the measure it is the per-run value of, where there is one).
pub fn guide_csv_columns() -> String {
    let mut rows: Vec<(u8, String)> = Vec::new();
    for m in MEASURES {
        let Some(c) = m.csv else { continue };
        let what = if m.is_measure() {
            format!("the run's value behind `{}`", m.written())
        } else {
            m.doc.to_string()
        };
        let row = format!("| `{}` | {} | {what} |\n", c.header, c.unit.label());
        rows.push((c.slot, row));
    }
    rows.sort_by_key(|(slot, _)| *slot);
    let mut out = String::from("| column | unit | what |\n|---|---|---|\n");
    out.extend(rows.into_iter().map(|(_, row)| row));
    out
}

/// The measures section of `smpsched list`: each measure's name, unit and the first clause of
/// its meaning.
pub fn listing() -> String {
    let mut out = String::from(
        "Measures (claims, expected values and [reproduce] metric; the guide says more):\n",
    );
    for m in MEASURES.iter().filter(|m| m.is_measure()) {
        let _ = writeln!(
            out,
            "  {:<24} {:<11} {}",
            m.written(),
            m.unit.label(),
            first_clause(m.doc)
        );
    }
    out
}

/// A meaning's first clause: up to its first `(` or `:`, for a one-line listing.
fn first_clause(doc: &str) -> &str {
    let end = doc.find([':', '(']).unwrap_or(doc.len());
    doc[..end].trim_end()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_number_each_view_from_zero_without_gaps_and_names_are_unique() {
        let slots: Vec<u8> = csv_columns().iter().map(|c| c.slot).collect();
        assert_eq!(
            slots,
            (0..slots.len() as u8).collect::<Vec<_>>(),
            "CSV slots"
        );
        for app in [false, true] {
            let slots: Vec<u8> = terminal_columns(app).iter().map(|c| c.slot).collect();
            assert_eq!(
                slots,
                (0..slots.len() as u8).collect::<Vec<_>>(),
                "terminal slots"
            );
        }
        let mut names: Vec<&str> = MEASURES.iter().map(|m| m.name).collect();
        names.sort();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "a name appears twice in the measure table");
        let mut headers: Vec<&str> = csv_columns().iter().map(|c| c.header).collect();
        headers.sort();
        headers.dedup();
        assert_eq!(
            headers.len(),
            csv_columns().len(),
            "a CSV header appears twice"
        );
    }

    #[test]
    fn every_measure_has_a_meaning_and_terminal_columns_sit_with_their_table() {
        for m in MEASURES {
            assert!(!m.doc.is_empty(), "{}", m.name);
            if m.terminal.is_some() {
                assert!(matches!(m.args, Args::None | Args::App), "{}", m.name);
            }
        }
        assert!(listing().contains("  app_util:APP "));
        assert!(guide_measures().contains("| `sd:MEASURE` | as MEASURE |"));
    }
}
