//! Bar charts: stacked bars (a breakdown per point) and grouped bars (ours beside the paper's).

use super::*;

/// Draws the category labels under bars at `centers` (backend x), turned upright when they do
/// not fit side by side; returns nothing but errors from drawing.
pub(super) fn draw_category_labels(
    root: &Area<'_>,
    labels: &[String],
    centers: &[i32],
    baseline: i32,
    turned: bool,
) -> Result<(), PlotError> {
    let style = TextStyle::from((FONT, LABEL_SIZE).into_font()).color(&BLACK);
    let style = if turned {
        style
            .transform(FontTransform::Rotate270)
            .pos(Pos::new(HPos::Right, VPos::Center))
    } else {
        style.pos(Pos::new(HPos::Center, VPos::Top))
    };
    for (label, &x) in labels.iter().zip(centers) {
        root.draw(&Text::new(shorten(label), (x, baseline + 8), style.clone()))
            .map_err(drawing)?;
    }
    Ok(())
}

/// Layout shared by the bar charts: canvas width, label area height and whether labels turn.
pub(super) fn bar_layout(labels: &[String], per_bar: u32, legend: u32) -> (u32, u32, bool) {
    let count = labels.len().max(1) as u32;
    let plot_width = (count.saturating_mul(per_bar)).clamp(360, 3600);
    let slot = plot_width / count;
    let longest = labels
        .iter()
        .map(|l| text_width(&shorten(l)))
        .max()
        .unwrap_or(0);
    let turned = longest + 6 > slot;
    let label_height = if turned {
        (longest + 20).clamp(40, 300)
    } else {
        40
    };
    (plot_width + 100 + legend, label_height, turned)
}

/// A bar chart's plot: categories along x, `y_axis` up.
pub(super) type BarChart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<CategoryAxis, ValueAxis>>;

/// A bar chart of `count` categories on `area`, its mesh drawn with `y_labels` labels on the y
/// axis.
pub(super) fn bar_chart<'a, 'b>(
    area: &'a Area<'b>,
    label_height: u32,
    count: usize,
    y_axis: ValueAxis,
    y_label: &str,
    y_labels: usize,
) -> Result<BarChart<'a, 'b>, PlotError> {
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .x_label_area_size(label_height)
        .y_label_area_size(76)
        .build_cartesian_2d(CategoryAxis { count }, y_axis)
        .map_err(drawing)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .y_desc(y_label)
        .y_labels(y_labels)
        .label_style((FONT, LABEL_SIZE))
        .axis_desc_style((FONT, AXIS_DESC_SIZE))
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()
        .map_err(drawing)?;
    Ok(chart)
}

/// Checks every stacked bar (one finite, non-negative value per category) and returns the top
/// of the y axis: 100, or the largest sum past it.
fn stacked_top(spec: &StackedBars) -> Result<f64, PlotError> {
    let categories = spec.categories.len();
    let mut top: f64 = 100.0;
    for bar in &spec.bars {
        if bar.values.len() != categories {
            return Err(PlotError::WrongSegmentCount {
                bar: bar.label.clone(),
                expected: categories,
                found: bar.values.len(),
            });
        }
        let mut sum = 0.0;
        for (value, category) in bar.values.iter().zip(&spec.categories) {
            let what = || format!("bar `{}`, segment `{category}`", bar.label);
            if !value.is_finite() {
                return Err(PlotError::NonFinite { what: what() });
            }
            if *value < 0.0 {
                return Err(PlotError::NegativeSegment {
                    what: what(),
                    value: format_number(*value),
                });
            }
            sum += value;
        }
        if !sum.is_finite() {
            return Err(PlotError::RangeTooLarge { axis: "y" });
        }
        top = top.max(sum);
    }
    Ok(top)
}

/// The legend of stacked bars: the categories, top segment first, and the paper's style when
/// a bar is the paper's.
fn stacked_legend(spec: &StackedBars) -> Vec<(String, Swatch)> {
    let mut entries: Vec<(String, Swatch)> = spec
        .categories
        .iter()
        .enumerate()
        .rev()
        .map(|(slot, name)| {
            let swatch = Swatch::Fill {
                color: CATEGORY_COLORS[slot % CATEGORY_COLORS.len()],
                style: SeriesStyle::Ours,
            };
            (name.clone(), swatch)
        })
        .collect();
    if spec.bars.iter().any(|b| b.style == SeriesStyle::Paper) {
        entries.push((
            "paper: lighter, hatched".to_string(),
            Swatch::Fill {
                color: RGBColor(110, 110, 110),
                style: SeriesStyle::Paper,
            },
        ));
    }
    entries
}

/// Draws stacked bars on a 0–100 % axis (extended if a bar sums past 100), one fixed colour per
/// category in order, the paper's bars lighter and hatched, with a legend.
pub fn stacked_bars(spec: &StackedBars) -> Result<String, PlotError> {
    let top = stacked_top(spec)?;
    if spec.bars.is_empty() || spec.categories.is_empty() {
        return empty_chart(&spec.title, "no data");
    }
    let y_axis = if top > 100.0 {
        ValueAxis::linear(0.0, top, true, "y")?
    } else {
        ValueAxis {
            lo: 0.0,
            hi: 100.0,
            log: false,
        }
    };
    let labels: Vec<String> = spec.bars.iter().map(|b| b.label.clone()).collect();
    let mut legend_labels: Vec<String> = spec.categories.clone();
    legend_labels.push("paper: lighter, hatched".to_string());
    let legend = legend_width(legend_labels.iter().map(|l| l.chars().count()));
    let (width, label_height, turned) = bar_layout(&labels, 72, legend);
    let size = (width, 440 + label_height);

    render(size, |root| {
        let (plot_area, legend_area) = title_and_legend(root, &spec.title, size.0 - legend)?;
        let count = spec.bars.len();
        let chart = bar_chart(&plot_area, label_height, count, y_axis, &spec.y_label, 11)?;
        let mut centers = Vec::new();
        for (index, bar) in spec.bars.iter().enumerate() {
            let x = index as f64;
            let mut bottom = 0.0;
            for (slot, value) in bar.values.iter().enumerate() {
                let color = CATEGORY_COLORS[slot % CATEGORY_COLORS.len()];
                let upper = bottom + value;
                if *value > 0.0 {
                    let a = chart.backend_coord(&(x - 0.35, bottom));
                    let b = chart.backend_coord(&(x + 0.35, upper));
                    draw_bar_rect(root, (a, b), color, bar.style)?;
                }
                bottom = upper;
            }
            centers.push(chart.backend_coord(&(x, 0.0)).0);
        }
        let baseline = chart.backend_coord(&(0.0, y_axis.range().start)).1;
        draw_category_labels(root, &labels, &centers, baseline, turned)?;
        draw_legend(&legend_area, &stacked_legend(spec))
    })
}

/// The legend of grouped bars: ours and the paper's, in one colour.
fn grouped_legend(color: RGBColor) -> [(String, Swatch); 2] {
    [
        (
            "ours".to_string(),
            Swatch::Fill {
                color,
                style: SeriesStyle::Ours,
            },
        ),
        (
            "paper".to_string(),
            Swatch::Fill {
                color,
                style: SeriesStyle::Paper,
            },
        ),
    ]
}

/// Draws our value and the paper's side by side for each group (the paper's lighter and
/// hatched), with a legend; a missing value leaves its place empty.
pub fn grouped_bars(spec: &GroupedBars) -> Result<String, PlotError> {
    let mut values = Vec::new();
    for group in &spec.groups {
        for (which, value) in [("ours", group.ours), ("paper", group.paper)] {
            if let Some(value) = value {
                if !value.is_finite() {
                    return Err(PlotError::NonFinite {
                        what: format!("group `{}`, {which}", group.label),
                    });
                }
                values.push(value);
            }
        }
    }
    if values.is_empty() {
        return empty_chart(&spec.title, "no data");
    }
    let (min, max) = min_max(&values);
    let y_axis = ValueAxis::linear(min, max, true, "y")?;
    let labels: Vec<String> = spec.groups.iter().map(|g| g.label.clone()).collect();
    let legend = legend_width([4usize, 5].into_iter());
    let (width, label_height, turned) = bar_layout(&labels, 56, legend);
    let size = (width, 440 + label_height);
    let color = LINE_COLORS[0];

    render(size, |root| {
        let (plot_area, legend_area) = title_and_legend(root, &spec.title, size.0 - legend)?;
        let count = spec.groups.len();
        let chart = bar_chart(&plot_area, label_height, count, y_axis, &spec.y_label, 10)?;
        let mut centers = Vec::new();
        for (index, group) in spec.groups.iter().enumerate() {
            let x = index as f64;
            let bars = [
                (group.ours, SeriesStyle::Ours, x - 0.38, x - 0.02),
                (group.paper, SeriesStyle::Paper, x + 0.02, x + 0.38),
            ];
            for (value, style, left, right) in bars {
                if let Some(value) = value {
                    let a = chart.backend_coord(&(left, 0.0));
                    let b = chart.backend_coord(&(right, value));
                    draw_bar_rect(root, (a, b), color, style)?;
                }
            }
            centers.push(chart.backend_coord(&(x, 0.0)).0);
        }
        let baseline = chart.backend_coord(&(0.0, y_axis.range().start)).1;
        draw_category_labels(root, &labels, &centers, baseline, turned)?;
        // A zero line when values go below zero.
        if y_axis.lo < 0.0 {
            let a = chart.backend_coord(&(-0.5, 0.0));
            let b = chart.backend_coord(&(spec.groups.len() as f64 - 0.5, 0.0));
            root.draw(&PathElement::new(vec![a, b], BLACK.stroke_width(1)))
                .map_err(drawing)?;
        }
        draw_legend(&legend_area, &grouped_legend(color))
    })
}
