//! Drawing pieces the charts share: the SVG canvas, the empty chart, legends, bars and the marks
//! for a zero or missing value.

use super::*;

pub(super) type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Draws into a fresh white SVG canvas and returns the document.
pub(super) fn render<F>(size: (u32, u32), draw: F) -> Result<String, PlotError>
where
    F: for<'a> FnOnce(&Area<'a>) -> Result<(), PlotError>,
{
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(drawing)?;
        draw(&root)?;
        root.present().map_err(drawing)?;
    }
    Ok(apply_dashes(svg))
}

/// A chart that only says why there is nothing to show.
pub(super) fn empty_chart(title: &str, note: &str) -> Result<String, PlotError> {
    let width = width_for_title(title, 640);
    render((width, 160 + title_height(title, width)), |root| {
        let area = draw_title(root, title)?;
        let (width, height) = area.dim_in_pixel();
        let style = TextStyle::from((FONT, AXIS_DESC_SIZE).into_font())
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Center));
        area.draw(&Text::new(
            note.to_string(),
            (width as i32 / 2, height as i32 / 2),
            style,
        ))
        .map_err(drawing)
    })
}

/// How a legend entry's sample is drawn.
pub(super) enum Swatch {
    /// A line (dashed for the paper's) with its marker; `joined: false` draws the marker alone.
    Line {
        color: RGBColor,
        style: SeriesStyle,
        shape: Shape,
        joined: bool,
    },
    Fill {
        color: RGBColor,
        style: SeriesStyle,
    },
    /// A sample of a mark written on the chart (`0`, `n/a`).
    Mark(&'static str),
}

/// The legend's width for labels of these lengths (in characters, elided at [`LONGEST_LABEL`]).
pub(super) fn legend_width(labels: impl Iterator<Item = usize>) -> u32 {
    let longest = labels.max().unwrap_or(0).min(LONGEST_LABEL) as u32;
    (longest * CHAR_WIDTH + 64).clamp(120, 340)
}

/// Draws one legend sample centred at `(x, y)` (a 32-pixel-wide sample).
fn draw_swatch(area: &Area<'_>, (x, y): (i32, i32), swatch: &Swatch) -> Result<(), PlotError> {
    match *swatch {
        Swatch::Line {
            color,
            style,
            shape,
            joined,
        } => {
            let ends = vec![(x - 16, y), (x + 16, y)];
            match (joined, style) {
                (false, _) => {}
                (true, SeriesStyle::Ours) => area
                    .draw(&PathElement::new(ends, color.stroke_width(2)))
                    .map_err(drawing)?,
                (true, SeriesStyle::Paper) => draw_dashed(area, ends, color, 2, Dash::Paper)?,
            }
            draw_marker(area, (x, y), color, style, shape)
        }
        Swatch::Fill { color, style } => {
            draw_bar_rect(area, ((x - 14, y - 7), (x + 14, y + 7)), color, style)
        }
        Swatch::Mark(text) => draw_mark(area, (x, y + 6), text, false),
    }
}

/// Draws legend entries top to bottom at the left of `area`; labels longer than
/// [`LONGEST_LABEL`] lose their middle, and no two read the same.
pub(super) fn draw_legend(area: &Area<'_>, entries: &[(String, Swatch)]) -> Result<(), PlotError> {
    let text = TextStyle::from((FONT, LABEL_SIZE).into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    let names: Vec<String> = entries.iter().map(|(l, _)| l.clone()).collect();
    let names = distinct_labels(&names, LONGEST_LABEL);
    for (index, ((_, swatch), name)) in entries.iter().zip(names).enumerate() {
        let y = 30 + 22 * index as i32;
        draw_swatch(area, (24, y), swatch)?;
        area.draw(&Text::new(name, (48, y), text.clone()))
            .map_err(drawing)?;
    }
    Ok(())
}

/// The width a legend row of these entries takes (see [`draw_legend_row`]).
pub(super) fn legend_row_width(entries: &[(String, Swatch)]) -> u32 {
    entries.iter().map(|(l, _)| 60 + text_width(l)).sum()
}

/// Draws legend entries left to right in one row centred at height `y` of `area`.
pub(super) fn draw_legend_row(
    area: &Area<'_>,
    entries: &[(String, Swatch)],
    y: i32,
) -> Result<(), PlotError> {
    let text = TextStyle::from((FONT, LABEL_SIZE).into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    let (width, _) = area.dim_in_pixel();
    let mut x = (width as i32 - legend_row_width(entries) as i32).max(0) / 2;
    for (label, swatch) in entries {
        draw_swatch(area, (x + 16, y), swatch)?;
        area.draw(&Text::new(label.clone(), (x + 40, y), text.clone()))
            .map_err(drawing)?;
        x += 60 + text_width(label) as i32;
    }
    Ok(())
}

/// Writes `text` (`0` for a zero bar, `n/a` for a missing value) with its foot at `at`, the
/// bar's place on the axis: upright when `turned`, in grey.
pub(super) fn draw_mark(
    area: &Area<'_>,
    at: (i32, i32),
    text: &str,
    turned: bool,
) -> Result<(), PlotError> {
    let style = TextStyle::from((FONT, LABEL_SIZE).into_font()).color(&RGBColor(90, 90, 90));
    let style = if turned {
        style
            .transform(FontTransform::Rotate270)
            .pos(Pos::new(HPos::Left, VPos::Center))
    } else {
        style.pos(Pos::new(HPos::Center, VPos::Bottom))
    };
    area.draw(&Text::new(text.to_string(), (at.0, at.1 - 3), style))
        .map_err(drawing)
}

/// A bar in pixel coordinates: ours solid; the paper's lighter, hatched and outlined.
pub(super) fn draw_bar_rect(
    area: &Area<'_>,
    corners: ((i32, i32), (i32, i32)),
    color: RGBColor,
    style: SeriesStyle,
) -> Result<(), PlotError> {
    let ((x0, y0), (x1, y1)) = corners;
    let (left, right) = (x0.min(x1), x0.max(x1));
    let (top, bottom) = (y0.min(y1), y0.max(y1));
    let rect = [(left, top), (right, bottom)];
    match style {
        SeriesStyle::Ours => area
            .draw(&Rectangle::new(rect, color.filled()))
            .map_err(drawing),
        SeriesStyle::Paper => {
            area.draw(&Rectangle::new(rect, lighten(color, 0.65).filled()))
                .map_err(drawing)?;
            // Diagonal hatching: lines x + y = c, clipped to the rectangle.
            let hatch = color.stroke_width(1);
            let mut c = i64::from(left) + i64::from(top) + 6;
            let end = i64::from(right) + i64::from(bottom);
            let (l, r, t, b) = (
                i64::from(left),
                i64::from(right),
                i64::from(top),
                i64::from(bottom),
            );
            let mut drawn = 0;
            while c < end && drawn < 2000 {
                let xa = l.max(c - b);
                let xb = r.min(c - t);
                if xa < xb {
                    let from = (xa as i32, (c - xa) as i32);
                    let to = (xb as i32, (c - xb) as i32);
                    area.draw(&PathElement::new(vec![from, to], hatch))
                        .map_err(drawing)?;
                }
                c += 6;
                drawn += 1;
            }
            area.draw(&Rectangle::new(rect, color.stroke_width(1)))
                .map_err(drawing)
        }
    }
}

/// The title drawn on `root`, and the area under it split into the plot (`plot_width` wide)
/// and the legend beside it.
pub(super) fn title_and_legend<'b>(
    root: &Area<'b>,
    title: &str,
    plot_width: u32,
) -> Result<(Area<'b>, Area<'b>), PlotError> {
    let area = draw_title(root, title)?;
    Ok(area.split_horizontally(plot_width))
}
