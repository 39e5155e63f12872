//! Stacked bars (a breakdown per point), and the pieces every bar chart shares: the layout of
//! its categories, their labels and its plot.

use super::*;

/// Draws the category labels (already shortened) under bars at `centers` (backend x), turned
/// upright when they do not fit side by side; returns nothing but errors from drawing.
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
        root.draw(&Text::new(label.clone(), (x, baseline + 8), style.clone()))
            .map_err(drawing)?;
    }
    Ok(())
}

/// The width of the plot of `count` categories: `per` pixels each (at most, narrower down to
/// `least` each to keep within `room`), at least `narrowest`.
pub(super) fn plot_width(count: usize, (per, least): (u32, u32), room: u32, narrowest: u32) -> u32 {
    let count = count.max(1) as u32;
    let fits = (room / count).clamp(least, per);
    count.saturating_mul(fits).max(narrowest)
}

/// The height of the labels of categories `slot` pixels apart, and whether they turn upright
/// (when the widest does not fit in its slot).
pub(super) fn label_height(labels: &[String], slot: u32) -> (u32, bool) {
    let longest = labels.iter().map(|l| text_width(l)).max().unwrap_or(0);
    if longest + 6 > slot {
        ((longest + 20).max(40), true)
    } else {
        (40, false)
    }
}

/// A bar chart's plot: categories along x, `y_axis` up.
pub(super) type BarChart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<CategoryAxis, ValueAxis>>;

/// A bar chart of `count` categories on `area`, its mesh drawn with `y_labels` labels on the y
/// axis (its description saying "(log scale)" on a log axis), the label area `y_area` wide.
pub(super) fn bar_chart<'a, 'b>(
    area: &'a Area<'b>,
    (label_height, y_area): (u32, u32),
    count: usize,
    y_axis: ValueAxis,
    y_label: &str,
    y_labels: usize,
) -> Result<BarChart<'a, 'b>, PlotError> {
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .x_label_area_size(label_height)
        .y_label_area_size(y_area)
        .build_cartesian_2d(CategoryAxis { count }, y_axis)
        .map_err(drawing)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .y_desc(axis_title(y_label, &y_axis))
        .y_labels(y_labels)
        .label_style((FONT, LABEL_SIZE))
        .axis_desc_style((FONT, AXIS_DESC_SIZE))
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()
        .map_err(drawing)?;
    Ok(chart)
}

/// Checks every stacked bar (one finite, non-negative value per category) and returns the top
/// of the y axis: 100, or the largest sum past it by more than rounding (100.5).
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
        if sum > 100.5 {
            top = top.max(sum);
        }
    }
    Ok(top)
}

/// The legend of stacked bars: the categories some bar shows, top segment first (drawn as the
/// paper's where only the paper's bars show it), the paper's style when a bar is the paper's,
/// and the mark of a bar of zeros when one is drawn.
fn stacked_legend(spec: &StackedBars) -> Vec<(String, Swatch)> {
    let shown = |slot: usize, style: SeriesStyle| {
        spec.bars
            .iter()
            .any(|b| b.style == style && b.values.get(slot).is_some_and(|v| *v > 0.0))
    };
    let mut entries: Vec<(String, Swatch)> = spec
        .categories
        .iter()
        .enumerate()
        .rev()
        .filter(|(slot, _)| shown(*slot, SeriesStyle::Ours) || shown(*slot, SeriesStyle::Paper))
        .map(|(slot, name)| {
            let style = if shown(slot, SeriesStyle::Ours) {
                SeriesStyle::Ours
            } else {
                SeriesStyle::Paper
            };
            let color = CATEGORY_COLORS[slot % CATEGORY_COLORS.len()];
            (name.clone(), Swatch::Fill { color, style })
        })
        .collect();
    if spec.bars.iter().any(|b| b.values.iter().all(|v| *v == 0.0)) {
        entries.push(("a bar of zeros".to_string(), Swatch::Mark("0")));
    }
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

/// Draws stacked bars on a 0–100 % axis (extended if a bar sums past 100.5), one fixed colour
/// per category in order, the paper's bars lighter and hatched, a bar of zeros marked `0`, with
/// a legend.
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
            integer: false,
        }
    };
    let names: Vec<String> = spec.bars.iter().map(|b| b.label.clone()).collect();
    let labels = category_labels(&names);
    let legend_entries = stacked_legend(spec);
    let legend = legend_width(legend_entries.iter().map(|(l, _)| l.chars().count()));
    let y_area = label_area(&y_axis, 11);
    let room = MAX_WIDTH - legend - y_area - 24;
    let plot = plot_width(spec.bars.len(), (72, 14), room, 240);
    let (label_height, turned) = label_height(&labels.labels, plot / spec.bars.len() as u32);
    let width = width_for_title(&spec.title, plot + y_area + 24 + legend);
    let size = (width, 400 + label_height + title_height(&spec.title, width));
    let x_desc = labels.parts.clone();

    render(size, |root| {
        let (plot_area, legend_area) = title_and_legend(root, &spec.title, size.0 - legend)?;
        let count = spec.bars.len();
        let areas = (label_height + if x_desc.is_some() { 24 } else { 0 }, y_area);
        let chart = bar_chart(&plot_area, areas, count, y_axis, &spec.y_label, 11)?;
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
            let foot = chart.backend_coord(&(x, 0.0));
            if bar.values.iter().all(|v| *v == 0.0) {
                draw_mark(root, foot, "0", false)?;
            }
            centers.push(foot.0);
        }
        let baseline = chart.backend_coord(&(0.0, y_axis.range().start)).1;
        draw_category_labels(root, &labels.labels, &centers, baseline, turned)?;
        if let Some(parts) = &x_desc {
            draw_parts(
                root,
                parts,
                (centers[0] + centers[count - 1]) / 2,
                baseline + label_height as i32 + 14,
            )?;
        }
        draw_legend(&legend_area, &legend_entries)
    })
}

/// Writes what the parts of the shortened labels are (`labels: scheduler, client`) centred at
/// `at`, under the labels.
pub(super) fn draw_parts(root: &Area<'_>, parts: &str, x: i32, y: i32) -> Result<(), PlotError> {
    let style = TextStyle::from((FONT, AXIS_DESC_SIZE).into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Center));
    root.draw(&Text::new(format!("labels: {parts}"), (x, y), style))
        .map_err(drawing)
}
