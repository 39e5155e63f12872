//! Agreement charts: for each measure a reproduction compares over many points, ours against the
//! paper's as one dot per point, beside the line where the two are equal and the band within
//! 25% of the paper's. Where the policies come out in the paper's order the dots rise from left
//! to right; where our values are off they leave the band, and a reader sees which and how far.

use super::*;

/// One point of an [`AgreementPanel`].
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AgreementDot {
    /// The paper's value.
    pub paper: f64,
    /// Ours.
    pub ours: f64,
    /// Whether ours is within the band (the caller's rule, drawn as the dot's colour).
    pub within: bool,
}

/// One panel of an [`AgreementChart`]: one measure over the points with both values.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AgreementPanel {
    /// The panel's heading, e.g. the measure and its agreement in words.
    pub heading: String,
    /// A dot per point.
    pub dots: Vec<AgreementDot>,
}

/// Ours against the paper's, a panel per measure, left to right.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AgreementChart {
    /// Title above the panels.
    pub title: String,
    /// The band's half-width as a fraction of the paper's value (0.25: within 25%).
    pub band: f64,
    /// The panels.
    pub panels: Vec<AgreementPanel>,
}

/// Colour of a dot within the band, and of one outside it.
const WITHIN: RGBColor = LINE_COLORS[0];
const OUTSIDE: RGBColor = LINE_COLORS[1];
const GUIDE: RGBColor = RGBColor(120, 120, 120);
const PANEL: (u32, u32) = (460, 500);
/// The narrowest chart: room for a title and the key on two lines.
const MIN_WIDTH: u32 = 760;
/// A generous width of one character of the title, for cutting it to the chart's width.
const TITLE_CHAR_WIDTH: u32 = 11;

/// `text` in lines of at most `max` characters, broken between words.
fn wrap(text: &str, max: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 1 + word.chars().count() <= max => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// Draws an agreement chart: per panel, the paper's value across and ours up on one scale, the
/// line of equality solid, the 25% band dashed, a dot per point (blue within the band,
/// vermillion outside).
pub fn agreement_chart(spec: &AgreementChart) -> Result<String, PlotError> {
    for panel in &spec.panels {
        for (index, dot) in panel.dots.iter().enumerate() {
            for (value, what) in [(dot.paper, "paper"), (dot.ours, "ours")] {
                if !value.is_finite() {
                    return Err(PlotError::NonFinite {
                        what: format!("panel `{}`, point {}, {what}", panel.heading, index + 1),
                    });
                }
            }
        }
    }
    if spec.panels.iter().all(|p| p.dots.is_empty()) {
        return empty_chart(&spec.title, "no data");
    }
    let count = spec.panels.len() as u32;
    // At least wide enough for a title and the key beside a single panel, which is centred.
    let width = (PANEL.0 * count).max(MIN_WIDTH);
    let size = (width, PANEL.1 + 80);
    render(size, |root| {
        let title = shorten_to(&spec.title, (width / TITLE_CHAR_WIDTH) as usize);
        let area = root.titled(&title, (FONT, TITLE_SIZE)).map_err(drawing)?;
        let (_, height) = area.dim_in_pixel();
        let (area, footer) = area.split_vertically(height.saturating_sub(40));
        let key = format!(
            "a dot per point: blue within {}% of the paper's, vermillion outside; solid line: \
             equal; dashed: the band's edges",
            format_number(spec.band * 100.0)
        );
        let style = TextStyle::from((FONT, LABEL_SIZE).into_font())
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Center));
        let lines = wrap(&key, (width / CHAR_WIDTH) as usize - 4);
        for (i, line) in lines.into_iter().enumerate() {
            let at = (width as i32 / 2, 10 + 16 * i as i32);
            footer
                .draw(&Text::new(line, at, style.clone()))
                .map_err(drawing)?;
        }
        let side = (width - PANEL.0 * count) / 2;
        let area = area.margin(0, 0, side, side);
        let areas = area.split_evenly((1, spec.panels.len()));
        for (panel, area) in spec.panels.iter().zip(&areas) {
            draw_panel(area, panel, spec.band)?;
        }
        Ok(())
    })
}

/// One panel: both axes over the range of all its values, so that equal values lie on the
/// diagonal.
fn draw_panel(area: &Area<'_>, panel: &AgreementPanel, band: f64) -> Result<(), PlotError> {
    let values: Vec<f64> = panel.dots.iter().flat_map(|d| [d.paper, d.ours]).collect();
    let (lo, hi) = if values.is_empty() {
        (0.0, 1.0)
    } else {
        min_max(&values)
    };
    let axis = ValueAxis::linear(lo, hi, false, "x")?;
    let heading = shorten_to(&panel.heading, (PANEL.0 / CHAR_WIDTH) as usize);
    let mut chart = ChartBuilder::on(area)
        .caption(heading, (FONT, AXIS_DESC_SIZE))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(axis, axis)
        .map_err(drawing)?;
    chart
        .configure_mesh()
        .x_desc("paper")
        .y_desc("ours")
        .x_labels(8)
        .y_labels(8)
        .label_style((FONT, LABEL_SIZE))
        .axis_desc_style((FONT, AXIS_DESC_SIZE))
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()
        .map_err(drawing)?;
    let (a, b) = (axis.lo, axis.hi);
    chart
        .draw_series(LineSeries::new([(a, a), (b, b)], GUIDE.stroke_width(1)))
        .map_err(drawing)?;
    for factor in [1.0 - band, 1.0 + band].into_iter().filter(|f| *f > 0.0) {
        // The band's edge y = factor * x, cut to the plot's square (and to x >= 0: the band of a
        // negative value lies the other way).
        let (x0, x1) = (a.max(a / factor).max(0.0), b.min(b / factor));
        if x0 < x1 {
            let edge = [(x0, factor * x0), (x1, factor * x1)];
            chart
                .draw_series(DashedLineSeries::new(edge, 6, 4, GUIDE.stroke_width(1)))
                .map_err(drawing)?;
        }
    }
    chart
        .draw_series(panel.dots.iter().map(|d| {
            let color = if d.within { WITHIN } else { OUTSIDE };
            Circle::new((d.paper, d.ours), 4, color.filled())
        }))
        .map_err(drawing)?;
    Ok(())
}
