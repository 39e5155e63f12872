//! Line charts: ours solid with filled markers, the paper's dashed and hollow.

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

/// Draws one series on `chart` (solid or dashed, sorted by x) with its markers on `root`, in
/// `color`; returns its legend entry.
fn draw_series(
    root: &Area<'_>,
    chart: &mut LinePlot<'_, '_>,
    series: &Series,
    color: RGBColor,
) -> Result<(String, Swatch), PlotError> {
    let mut points = series.points.clone();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let stroke = color.stroke_width(2);
    match series.style {
        SeriesStyle::Ours => {
            chart
                .draw_series(LineSeries::new(points.iter().copied(), stroke))
                .map_err(drawing)?;
        }
        SeriesStyle::Paper => {
            chart
                .draw_series(DashedLineSeries::new(points.clone(), 8, 5, stroke))
                .map_err(drawing)?;
        }
    }
    for &point in &points {
        let at = chart.backend_coord(&point);
        draw_marker(root, at, color, series.style)?;
    }
    let swatch = Swatch::Line {
        color,
        style: series.style,
    };
    Ok((series.name.clone(), swatch))
}

/// Draws a line chart: our series solid with filled circles, the paper's dashed with hollow
/// squares, a legend at the right.
pub fn line_chart(spec: &LineChart) -> Result<String, PlotError> {
    let (x_values, y_values) = line_values(spec)?;
    if x_values.is_empty() {
        return empty_chart(&spec.title, "no data");
    }
    let (x_min, x_max) = min_max(&x_values);
    let (y_min, y_max) = min_max(&y_values);
    let x_axis = ValueAxis::linear(x_min, x_max, false, "x")?;
    let y_axis = if spec.log_y {
        ValueAxis::logarithmic(y_min, y_max)
    } else {
        ValueAxis::linear(y_min, y_max, false, "y")?
    };

    let legend = legend_width(spec.series.iter().map(|s| s.name.chars().count()));
    let size = (760 + legend, 480);
    render(size, |root| {
        let (plot_area, legend_area) = title_and_legend(root, &spec.title, size.0 - legend)?;
        let mut chart = ChartBuilder::on(&plot_area)
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(76)
            .build_cartesian_2d(x_axis, y_axis)
            .map_err(drawing)?;
        chart
            .configure_mesh()
            .x_desc(spec.x_label.as_str())
            .y_desc(spec.y_label.as_str())
            .x_labels(10)
            .y_labels(10)
            .label_style((FONT, LABEL_SIZE))
            .axis_desc_style((FONT, AXIS_DESC_SIZE))
            .bold_line_style(RGBColor(225, 225, 225))
            .draw()
            .map_err(drawing)?;
        // Ours and the paper's each take the colours in order.
        let mut entries = Vec::new();
        let (mut ours_seen, mut paper_seen) = (0, 0);
        for series in &spec.series {
            let slot = match series.style {
                SeriesStyle::Ours => &mut ours_seen,
                SeriesStyle::Paper => &mut paper_seen,
            };
            let color = LINE_COLORS[*slot % LINE_COLORS.len()];
            *slot += 1;
            entries.push(draw_series(root, &mut chart, series, color)?);
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
