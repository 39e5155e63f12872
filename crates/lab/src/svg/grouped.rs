//! Grouped bars: ours beside the paper's for each point, a panel per measure. The panels sit in
//! a grid (one column when they have many points, several when they have few) under one title
//! and one legend row; each has its own y axis titled by its measure, logarithmic where its
//! positive values span more than two orders of magnitude (zeros then marked at its foot),
//! linear around 0 where values are negative. A zero bar is marked `0`, a missing value `n/a`;
//! when no point of a panel has the paper's value, ours stand alone in the middle of their place.

use super::*;

/// A panel's drawing plan: its labels, axis and size.
struct PanelPlan<'s> {
    panel: &'s BarPanel,
    labels: CategoryLabels,
    axis: ValueAxis,
    /// Whether some group has the paper's value (else ours alone, centred).
    paper: bool,
    /// The y label area's width.
    y_area: u32,
    /// The plot's height.
    plot_height: u32,
    /// Whether its category labels are drawn (not when the panel below has the same).
    show_labels: bool,
}

/// The widest bar, in pixels.
const WIDEST_BAR: i32 = 36;

/// Checks that every value is finite; returns all of them.
fn checked_values(spec: &GroupedBars) -> Result<Vec<f64>, PlotError> {
    let mut values = Vec::new();
    for panel in &spec.panels {
        for group in &panel.groups {
            for (which, value) in [("ours", group.ours), ("paper", group.paper)] {
                if let Some(value) = value {
                    if !value.is_finite() {
                        return Err(PlotError::NonFinite {
                            what: format!("`{}`, group `{}`, {which}", panel.y_label, group.label),
                        });
                    }
                    values.push(value);
                }
            }
        }
    }
    Ok(values)
}

/// A panel's y axis: log where its values want one, else linear from 0 (or below).
fn panel_axis(panel: &BarPanel) -> Result<ValueAxis, PlotError> {
    let values: Vec<f64> = panel
        .groups
        .iter()
        .flat_map(|g| [g.ours, g.paper])
        .flatten()
        .collect();
    if values.is_empty() {
        return ValueAxis::linear(0.0, 1.0, true, "y");
    }
    if wants_log(&values, true) {
        let positive: Vec<f64> = values.iter().copied().filter(|v| *v > 0.0).collect();
        let (lo, hi) = min_max(&positive);
        return Ok(ValueAxis::logarithmic(lo, hi));
    }
    let (lo, hi) = min_max(&values);
    Ok(ValueAxis::linear(lo, hi, true, "y")?.integer(all_integers(&values)))
}

/// Plans each panel (`columns` to a row), the panels below deciding whose labels show.
fn plan_panels(spec: &GroupedBars, columns: usize) -> Result<Vec<PanelPlan<'_>>, PlotError> {
    let mut plans = Vec::new();
    for panel in &spec.panels {
        let names: Vec<String> = panel.groups.iter().map(|g| g.label.clone()).collect();
        let axis = panel_axis(panel)?;
        let title = text_width(&axis_title(&panel.y_label, &axis)) / CHAR_WIDTH * DESC_CHAR_WIDTH;
        plans.push(PanelPlan {
            panel,
            labels: category_labels(&names),
            paper: panel.groups.iter().any(|g| g.paper.is_some()),
            y_area: label_area(&axis, 8),
            axis,
            plot_height: (title + 40).max(200),
            show_labels: true,
        });
    }
    // In one column of panels over the same points, long labels show once, at the foot.
    for index in 0..plans.len() {
        if let Some(below) = plans.get(index + columns) {
            let long = plans[index]
                .labels
                .labels
                .iter()
                .any(|l| text_width(l) > 60);
            plans[index].show_labels = columns > 1 || !long || below.labels != plans[index].labels;
        }
    }
    Ok(plans)
}

/// The natural width of a panel: its plot (`per` pixels a group, narrower to fit
/// [`MAX_WIDTH`]) and its y axis.
fn panel_width(plan: &PanelPlan<'_>) -> u32 {
    let per = if plan.paper { 56 } else { 40 };
    let room = MAX_WIDTH - plan.y_area - 24;
    plot_width(plan.panel.groups.len(), (per, 14), room, 160) + plan.y_area + 24
}

/// How many panels to a row: as many as fit in [`MAX_WIDTH`], spread over balanced rows.
fn columns(widths: &[u32]) -> usize {
    let widest = widths.iter().copied().max().unwrap_or(1).max(1);
    let fit = ((MAX_WIDTH / widest) as usize).clamp(1, widths.len().max(1));
    let rows = widths.len().div_ceil(fit).max(1);
    widths.len().div_ceil(rows).max(1)
}

/// The height of the labels under a panel `width` wide (0 when they do not show) and whether
/// they turn.
fn labels_below(plan: &PanelPlan<'_>, width: u32) -> (u32, bool) {
    if !plan.show_labels {
        return (8, false);
    }
    let count = plan.panel.groups.len().max(1) as u32;
    let slot = width.saturating_sub(plan.y_area + 24) / count;
    let (height, turned) = label_height(&plan.labels.labels, slot);
    let parts = if plan.labels.parts.is_some() { 24 } else { 0 };
    (height + parts, turned)
}

/// The legend row: ours, the paper's where drawn, and the marks where written.
fn legend_entries(plans: &[PanelPlan<'_>]) -> Vec<(String, Swatch)> {
    let color = LINE_COLORS[0];
    let mut entries = vec![(
        "ours".to_string(),
        Swatch::Fill {
            color,
            style: SeriesStyle::Ours,
        },
    )];
    if plans.iter().any(|p| p.paper) {
        let style = SeriesStyle::Paper;
        entries.push(("paper".to_string(), Swatch::Fill { color, style }));
    }
    let groups = || {
        plans
            .iter()
            .flat_map(|p| p.panel.groups.iter().map(move |g| (p, g)))
    };
    if groups().any(|(_, g)| g.ours == Some(0.0) || g.paper == Some(0.0)) {
        entries.push(("zero".to_string(), Swatch::Mark("0")));
    }
    if groups().any(|(p, g)| g.ours.is_none() || (p.paper && g.paper.is_none())) {
        entries.push(("no value".to_string(), Swatch::Mark("n/a")));
    }
    entries
}

/// Draws our value and the paper's side by side for each group of each panel (the paper's
/// lighter and hatched), a panel per measure in a grid, with a legend row under the title.
pub fn grouped_bars(spec: &GroupedBars) -> Result<String, PlotError> {
    if checked_values(spec)?.is_empty() && spec.panels.iter().all(|p| p.groups.is_empty()) {
        return empty_chart(&spec.title, "no data");
    }
    let widths: Vec<u32> = plan_panels(spec, 1)?.iter().map(panel_width).collect();
    let columns = columns(&widths);
    let plans = plan_panels(spec, columns)?;
    let legend = legend_entries(&plans);
    let natural = widths.iter().copied().max().unwrap_or(0) * columns as u32;
    let width = width_for_title(&spec.title, natural.max(legend_row_width(&legend) + 40));
    let column = width / columns as u32;
    let rows: Vec<u32> = plans
        .chunks(columns)
        .map(|row| {
            let heights = row
                .iter()
                .map(|p| p.plot_height + 24 + labels_below(p, column).0);
            heights.max().unwrap_or(0)
        })
        .collect();
    let top = title_height(&spec.title, width) + 32;
    let size = (width, top + rows.iter().sum::<u32>() + 8);
    render(size, |root| {
        let body = draw_title(root, &spec.title)?;
        draw_legend_row(&body, &legend, 10)?;
        let mut y = top;
        for (row, height) in plans.chunks(columns).zip(&rows) {
            for (index, plan) in row.iter().enumerate() {
                let x = column * index as u32;
                let area = root.clone().shrink((x, y), (column, *height));
                draw_panel(root, &area, plan, column)?;
            }
            y += height;
        }
        Ok(())
    })
}

/// One panel on `area` (bars, marks and labels drawn on `root`, the whole canvas, in its
/// coordinates): its axis, its bars (or marks) and, where shown, its labels.
fn draw_panel(
    root: &Area<'_>,
    area: &Area<'_>,
    plan: &PanelPlan<'_>,
    width: u32,
) -> Result<(), PlotError> {
    let (label_h, turned) = labels_below(plan, width);
    let count = plan.panel.groups.len();
    let plot = area
        .clone()
        .shrink((0, 0), (width, plan.plot_height + 24 + label_h));
    let sizes = (label_h, plan.y_area);
    let chart = bar_chart(&plot, sizes, count, plan.axis, &plan.panel.y_label, 8)?;
    let base = if plan.axis.log {
        10f64.powf(plan.axis.lo)
    } else {
        0.0
    };
    let mut centers = Vec::new();
    for (index, group) in plan.panel.groups.iter().enumerate() {
        let x = index as f64;
        if count > 6 && index % 2 == 1 {
            let a = chart.backend_coord(&(x - 0.5, plan.axis.range().end));
            let b = chart.backend_coord(&(x + 0.5, plan.axis.range().start));
            root.draw(&Rectangle::new([a, b], BLACK.mix(0.04).filled()))
                .map_err(drawing)?;
        }
        let slots = if plan.paper {
            vec![
                (group.ours, SeriesStyle::Ours, x - 0.2),
                (group.paper, SeriesStyle::Paper, x + 0.2),
            ]
        } else {
            vec![(group.ours, SeriesStyle::Ours, x)]
        };
        let half = if plan.paper { 0.18 } else { 0.3 };
        for (value, style, middle) in slots {
            draw_bar(root, &chart, (value, style), (middle, half), base)?;
        }
        centers.push(chart.backend_coord(&(x, base)).0);
    }
    if plan.axis.lo < 0.0 && !plan.axis.log {
        let a = chart.backend_coord(&(-0.5, 0.0));
        let b = chart.backend_coord(&(count as f64 - 0.5, 0.0));
        root.draw(&PathElement::new(vec![a, b], BLACK.stroke_width(1)))
            .map_err(drawing)?;
    }
    if plan.show_labels {
        let baseline = chart.backend_coord(&(0.0, plan.axis.range().start)).1;
        draw_category_labels(root, &plan.labels.labels, &centers, baseline, turned)?;
        if let (Some(parts), Some(first), Some(last)) =
            (&plan.labels.parts, centers.first(), centers.last())
        {
            let under = baseline + label_h as i32 - 20;
            draw_parts(root, parts, (first + last) / 2, under)?;
        }
    }
    Ok(())
}

/// One bar `half` a group wide either side of `middle` from `base` (at most [`WIDEST_BAR`]
/// pixels wide), or its mark: `0` for zero, `n/a` for no value.
fn draw_bar(
    area: &Area<'_>,
    chart: &BarChart<'_, '_>,
    (value, style): (Option<f64>, SeriesStyle),
    (middle, half): (f64, f64),
    base: f64,
) -> Result<(), PlotError> {
    let foot = chart.backend_coord(&(middle, base));
    match value {
        None => draw_mark(area, foot, "n/a", true),
        Some(0.0) => draw_mark(area, foot, "0", false),
        Some(v) => {
            let (left, _) = chart.backend_coord(&(middle - half, base));
            let half_px = (foot.0 - left).clamp(1, WIDEST_BAR / 2);
            let top = chart.backend_coord(&(middle, v)).1;
            let corners = ((foot.0 - half_px, foot.1), (foot.0 + half_px, top));
            draw_bar_rect(area, corners, LINE_COLORS[0], style)
        }
    }
}
