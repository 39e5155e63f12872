//! Agreement charts: for each measure a reproduction compares over many points, ours against the
//! paper's as one dot per point in a square plot, beside the line where the two are equal (at
//! 45°) and the band within 25% of the paper's. Where the policies come out in the paper's order the dots rise from left
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
    /// The measure and its unit, which the axes name (`paper, ms per request`); empty: none.
    #[serde(default)]
    pub unit: String,
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
/// A panel's width and height: its plot square, with room for the heading and the axes.
const PANEL: (u32, u32) = (460, 500);
/// The narrowest chart: room for a title and the key on two lines.
const MIN_WIDTH: u32 = 760;

/// A panel's axis (both axes): the range of all its values, so that equal values lie on the
/// diagonal.
fn panel_axis(panel: &AgreementPanel) -> Result<ValueAxis, PlotError> {
    let values: Vec<f64> = panel.dots.iter().flat_map(|d| [d.paper, d.ours]).collect();
    let (lo, hi) = if values.is_empty() {
        (0.0, 1.0)
    } else {
        min_max(&values)
    };
    ValueAxis::linear(lo, hi, false, "x")
}

/// The band's edges y = factor * x within the square `[a, b]` (and x >= 0: the band of a
/// negative value lies the other way), as segments.
fn band_edges(a: f64, b: f64, band: f64) -> Vec<[(f64, f64); 2]> {
    [1.0 - band, 1.0 + band]
        .into_iter()
        .filter(|f| *f > 0.0)
        .filter_map(|factor| {
            let (x0, x1) = (a.max(a / factor).max(0.0), b.min(b / factor));
            (x0 < x1).then_some([(x0, factor * x0), (x1, factor * x1)])
        })
        .collect()
}

/// The key under the panels: what the dots' colours and shapes, the solid line and (where some
/// panel draws them) the dashed lines mean.
fn key_text(spec: &AgreementChart, axes: &[ValueAxis]) -> String {
    let mut key = format!(
        "a dot per point: blue circle within {}% of the paper's, vermillion triangle outside; \
         solid line: equal",
        format_number(spec.band * 100.0)
    );
    if axes
        .iter()
        .any(|a| !band_edges(a.lo, a.hi, spec.band).is_empty())
    {
        key.push_str("; dashed: the band's edges");
    }
    key
}

/// Draws an agreement chart: per panel, the paper's value across and ours up on one scale in a
/// square plot, the line of equality solid (at 45°), the 25% band dashed, a dot per point (a
/// blue circle within the band, a vermillion triangle outside, a count beside dots that fall
/// on one place).
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
    let axes = spec
        .panels
        .iter()
        .map(panel_axis)
        .collect::<Result<Vec<_>, _>>()?;
    let count = spec.panels.len() as u32;
    // At least wide enough for a title and the key beside a single panel, which is centred.
    let width = width_for_title(&spec.title, (PANEL.0 * count).max(MIN_WIDTH));
    let size = (width, PANEL.1 + 40 + title_height(&spec.title, width));
    render(size, |root| {
        let area = draw_title(root, &spec.title)?;
        let (_, height) = area.dim_in_pixel();
        let (area, footer) = area.split_vertically(height.saturating_sub(40));
        let style = TextStyle::from((FONT, LABEL_SIZE).into_font())
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Center));
        let lines = wrap(&key_text(spec, &axes), (width / CHAR_WIDTH) as usize - 4);
        for (i, line) in lines.into_iter().enumerate() {
            let at = (width as i32 / 2, 10 + 16 * i as i32);
            footer
                .draw(&Text::new(line, at, style.clone()))
                .map_err(drawing)?;
        }
        let side = (width - PANEL.0 * count) / 2;
        let area = area.margin(0, 0, side, side);
        let areas = area.split_evenly((1, spec.panels.len()));
        for ((panel, area), axis) in spec.panels.iter().zip(&areas).zip(&axes) {
            draw_panel(root, area, panel, (*axis, spec.band))?;
        }
        Ok(())
    })
}

/// The axes' descriptions: `paper` and `ours`, each with the measure where known.
fn axis_names(panel: &AgreementPanel) -> (String, String) {
    if panel.unit.is_empty() {
        ("paper".to_string(), "ours".to_string())
    } else {
        (
            format!("paper, {}", panel.unit),
            format!("ours, {}", panel.unit),
        )
    }
}

/// One panel on `area`: its heading, then a square plot with both axes over the range of all
/// its values (the dashes and dots drawn on `root`, the whole canvas, in its coordinates).
fn draw_panel(
    root: &Area<'_>,
    area: &Area<'_>,
    panel: &AgreementPanel,
    (axis, band): (ValueAxis, f64),
) -> Result<(), PlotError> {
    let heading = elide_middle(&panel.heading, (PANEL.0 / CHAR_WIDTH) as usize);
    let (width, height) = area.dim_in_pixel();
    // The plot square: what is left of the panel once the heading, axes and margins are off.
    let y_area = label_area(&axis, 8);
    let across = width.saturating_sub(y_area + 24);
    let up = height.saturating_sub(28 + 44 + 24);
    let side = across.min(up);
    let (extra_x, extra_y) = ((across - side) / 2, up - side);
    // The heading right above the square, centred on it.
    let style = TextStyle::from((FONT, AXIS_DESC_SIZE).into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    let half = (text_width(&heading) / 2).min(width / 2);
    let middle = (extra_x + y_area + 12 + side / 2).clamp(half, width - half) as i32;
    area.draw(&Text::new(
        heading,
        (middle, (extra_y / 2) as i32 + 8),
        style,
    ))
    .map_err(drawing)?;
    let area = area.margin(28 + extra_y / 2, extra_y - extra_y / 2, extra_x, extra_x);
    let (x_desc, y_desc) = axis_names(panel);
    let mut chart = ChartBuilder::on(&area)
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(y_area)
        .build_cartesian_2d(axis, axis)
        .map_err(drawing)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
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
    for edge in band_edges(a, b, band) {
        let pixels = edge.iter().map(|p| chart.backend_coord(p)).collect();
        draw_dashed(root, pixels, GUIDE, 1, Dash::Guide)?;
    }
    draw_dots(root, &chart, &panel.dots)
}

/// The dots (circles within the band, triangles outside), with `×n` beside a place that `n`
/// dots share (lie within 3 pixels of its first; counts that would touch are added up).
fn draw_dots(
    area: &Area<'_>,
    chart: &ChartContext<'_, SVGBackend<'_>, Cartesian2d<ValueAxis, ValueAxis>>,
    dots: &[AgreementDot],
) -> Result<(), PlotError> {
    let mut places: Vec<((i32, i32), usize)> = Vec::new();
    for dot in dots {
        let at = chart.backend_coord(&(dot.paper, dot.ours));
        if dot.within {
            draw_marker(area, at, WITHIN, SeriesStyle::Ours, Shape::Circle)?;
        } else {
            draw_marker(area, at, OUTSIDE, SeriesStyle::Ours, Shape::TriangleUp)?;
        }
        // Dots less than a marker apart hide one another: counted as one place.
        let near = |p: &(i32, i32)| (p.0 - at.0).abs() <= 3 && (p.1 - at.1).abs() <= 3;
        match places.iter_mut().find(|(p, _)| near(p)) {
            Some((_, n)) => *n += 1,
            None => places.push((at, 1)),
        }
    }
    // A count that would touch another joins it: `×n` then counts the dots around there.
    let mut counts: Vec<((i32, i32), usize)> = Vec::new();
    for (at, n) in places.into_iter().filter(|(_, n)| *n > 1) {
        let touches = |p: &(i32, i32)| (p.0 - at.0).abs() < 18 && (p.1 - at.1).abs() < 12;
        match counts.iter_mut().find(|(p, _)| touches(p)) {
            Some((_, m)) => *m += n,
            None => counts.push((at, n)),
        }
    }
    let style = TextStyle::from((FONT, LABEL_SIZE).into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Bottom));
    for ((x, y), n) in counts {
        area.draw(&Text::new(format!("×{n}"), (x + 5, y - 3), style.clone()))
            .map_err(drawing)?;
    }
    Ok(())
}
