//! Line charts: ours solid with filled markers, the paper's dashed and hollow, a marker shape
//! per series; x a number or a category, y linear or (for wide spans) logarithmic.

use super::*;

/// Checks every point (finite, and positive on a logarithmic y axis) and returns the x and y
/// values of all series.
fn line_values(spec: &LineChart) -> Result<(Vec<f64>, Vec<f64>), PlotError> {
    let mut x_values = Vec::new();
    let mut y_values = Vec::new();
    for series in &spec.series {
        for (index, &(x, y)) in series.points.iter().enumerate() {
            let what = |coordinate: &str| {
                format!(
                    "series `{}`, point {}, {coordinate}",
                    series.name,
                    index + 1
                )
            };
            if !x.is_finite() {
                return Err(PlotError::NonFinite { what: what("x") });
            }
            if !y.is_finite() {
                return Err(PlotError::NonFinite { what: what("y") });
            }
            if spec.log_x && x <= 0.0 {
                return Err(PlotError::NonPositiveOnLogScale {
                    what: what("x"),
                    value: format_number(x),
                });
            }
            if spec.log_y && y <= 0.0 {
                return Err(PlotError::NonPositiveOnLogScale {
                    what: what("y"),
                    value: format_number(y),
                });
            }
            x_values.push(x);
            y_values.push(y);
        }
    }
    Ok((x_values, y_values))
}

/// A line chart's plot.
type LinePlot<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<ValueAxis, ValueAxis>>;

/// Draws one series on `chart` (solid or dashed, sorted by x, or its points alone) with its
/// markers of `shape` on `root`, in `color`; returns its legend entry.
fn draw_series(
    root: &Area<'_>,
    chart: &LinePlot<'_, '_>,
    series: &Series,
    (color, shape): (RGBColor, Shape),
    joined: bool,
) -> Result<(String, Swatch), PlotError> {
    let mut points = series.points.clone();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let pixels: Vec<(i32, i32)> = points.iter().map(|p| chart.backend_coord(p)).collect();
    if joined && pixels.len() > 1 {
        match series.style {
            SeriesStyle::Ours => root
                .draw(&PathElement::new(pixels.clone(), color.stroke_width(2)))
                .map_err(drawing)?,
            SeriesStyle::Paper => draw_dashed(root, pixels.clone(), color, 2, Dash::Paper)?,
        }
    }
    for &at in &pixels {
        draw_marker(root, at, color, series.style, shape)?;
    }
    let swatch = Swatch::Line {
        color,
        style: series.style,
        shape,
        joined,
    };
    let name = if series.name.trim().is_empty() {
        match series.style {
            SeriesStyle::Ours => "ours".to_string(),
            SeriesStyle::Paper => "paper".to_string(),
        }
    } else {
        series.name.clone()
    };
    Ok((name, swatch))
}

/// The chart's axes: x linear (whole-number ticks where every x is whole, or the categories
/// 1..n) or logarithmic (asked for), y linear or logarithmic (asked for, or where positive values span more than
/// [`WIDE_SPAN`] to one), covering `y_range` where given.
fn line_axes(
    spec: &LineChart,
    xs: &[f64],
    ys: &[f64],
) -> Result<(ValueAxis, ValueAxis), PlotError> {
    let (mut x_min, mut x_max) = min_max(xs);
    if !spec.x_names.is_empty() {
        (x_min, x_max) = (x_min.min(1.0), x_max.max(spec.x_names.len() as f64));
    }
    let x_axis = if spec.log_x && spec.x_names.is_empty() {
        ValueAxis::logarithmic(x_min, x_max)
    } else {
        ValueAxis::linear(x_min, x_max, false, "x")?.integer(all_integers(xs))
    };
    let (mut y_min, mut y_max) = min_max(ys);
    if let Some((lo, hi)) = spec
        .y_range
        .filter(|(lo, hi)| lo.is_finite() && hi.is_finite())
    {
        (y_min, y_max) = (y_min.min(lo), y_max.max(hi));
    }
    let y_axis = if spec.log_y || wants_log(ys, false) {
        ValueAxis::logarithmic(y_min, y_max)
    } else {
        ValueAxis::linear(y_min, y_max, false, "y")?.integer(all_integers(ys))
    };
    Ok((x_axis, y_axis))
}

/// Draws a line chart: each series with a marker shape of its own, ours solid with filled
/// markers, the paper's dashed with hollow ones, a legend at the right.
pub fn line_chart(spec: &LineChart) -> Result<String, PlotError> {
    let (x_values, y_values) = line_values(spec)?;
    if x_values.is_empty() {
        return empty_chart(&spec.title, "no data");
    }
    let (x_axis, y_axis) = line_axes(spec, &x_values, &y_values)?;
    let names = if spec.x_names.is_empty() {
        None
    } else {
        Some(category_labels(&spec.x_names))
    };
    let longest = names
        .iter()
        .flat_map(|n| n.labels.iter().map(|l| text_width(l)))
        .max()
        .unwrap_or(0);
    let x_area = if longest > 60 { longest + 44 } else { 48 };
    let legend = legend_width(spec.series.iter().map(|s| s.name.chars().count()));
    let width = width_for_title(&spec.title, 760 + legend);
    let size = (width, 432 + x_area + title_height(&spec.title, width));
    render(size, |root| {
        let (plot_area, legend_area) = title_and_legend(root, &spec.title, size.0 - legend)?;
        let mut chart = ChartBuilder::on(&plot_area)
            .margin(12)
            .x_label_area_size(x_area)
            .y_label_area_size(label_area(&y_axis, 10))
            .build_cartesian_2d(x_axis, y_axis)
            .map_err(drawing)?;
        let x_label = match &names {
            Some(CategoryLabels { parts: Some(p), .. }) => format!("{} ({p})", spec.x_label),
            _ => axis_title(&spec.x_label, &x_axis),
        };
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc(axis_title(&spec.y_label, &y_axis))
            .x_labels(if names.is_some() { 0 } else { 10 })
            .y_labels(10)
            .label_style((FONT, LABEL_SIZE))
            .axis_desc_style((FONT, AXIS_DESC_SIZE))
            .bold_line_style(RGBColor(225, 225, 225))
            .draw()
            .map_err(drawing)?;
        if let Some(names) = &names {
            let centers: Vec<i32> = (1..=names.labels.len())
                .map(|k| chart.backend_coord(&(k as f64, y_axis.range().start)).0)
                .collect();
            let baseline = chart.backend_coord(&(x_axis.lo, y_axis.range().start)).1;
            draw_category_labels(root, &names.labels, &centers, baseline, longest > 60)?;
        }
        // Ours and the paper's each take the colours and shapes in order.
        let mut entries = Vec::new();
        let (mut ours_seen, mut paper_seen) = (0, 0);
        for series in &spec.series {
            let slot = match series.style {
                SeriesStyle::Ours => &mut ours_seen,
                SeriesStyle::Paper => &mut paper_seen,
            };
            let look = (
                LINE_COLORS[*slot % LINE_COLORS.len()],
                SHAPES[*slot % SHAPES.len()],
            );
            *slot += 1;
            entries.push(draw_series(root, &chart, series, look, !spec.points_only)?);
        }
        draw_legend(&legend_area, &entries)
    })
}

pub(super) fn min_max(values: &[f64]) -> (f64, f64) {
    values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        })
}
