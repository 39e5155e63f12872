//! Drawing pieces the charts share: the SVG canvas, the empty chart, legends, markers and bars.

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
    Ok(svg)
}

/// A chart that only says why there is nothing to show.
pub(super) fn empty_chart(title: &str, note: &str) -> Result<String, PlotError> {
    render((640, 240), |root| {
        let area = root
            .titled(&shorten_to(title, LONGEST_TITLE), (FONT, TITLE_SIZE))
            .map_err(drawing)?;
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
    Line { color: RGBColor, style: SeriesStyle },
    Fill { color: RGBColor, style: SeriesStyle },
}

pub(super) fn legend_width(labels: impl Iterator<Item = usize>) -> u32 {
    let longest = labels.max().unwrap_or(0).min(LONGEST_LABEL) as u32;
    (longest * CHAR_WIDTH + 64).clamp(120, 340)
}

/// Draws legend entries top to bottom at the left of `area`.
pub(super) fn draw_legend(area: &Area<'_>, entries: &[(String, Swatch)]) -> Result<(), PlotError> {
    let text = TextStyle::from((FONT, LABEL_SIZE).into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (index, (label, swatch)) in entries.iter().enumerate() {
        let y = 30 + 22 * index as i32;
        match *swatch {
            Swatch::Line { color, style } => {
                let stroke = color.stroke_width(2);
                match style {
                    SeriesStyle::Ours => {
                        area.draw(&PathElement::new(vec![(8, y), (40, y)], stroke))
                            .map_err(drawing)?;
                    }
                    SeriesStyle::Paper => {
                        area.draw(&DashedPathElement::new(vec![(8, y), (40, y)], 7, 4, stroke))
                            .map_err(drawing)?;
                    }
                }
                draw_marker(area, (24, y), color, style)?;
            }
            Swatch::Fill { color, style } => {
                draw_bar_rect(area, ((10, y - 7), (38, y + 7)), color, style)?;
            }
        }
        area.draw(&Text::new(shorten(label), (48, y), text.clone()))
            .map_err(drawing)?;
    }
    Ok(())
}

/// Ours: filled circle. Paper: hollow square with a white inside.
pub(super) fn draw_marker(
    area: &Area<'_>,
    at: (i32, i32),
    color: RGBColor,
    style: SeriesStyle,
) -> Result<(), PlotError> {
    match style {
        SeriesStyle::Ours => area
            .draw(&Circle::new(at, 4, color.filled()))
            .map_err(drawing),
        SeriesStyle::Paper => {
            let corners = [(at.0 - 4, at.1 - 4), (at.0 + 4, at.1 + 4)];
            area.draw(&Rectangle::new(corners, WHITE.filled()))
                .map_err(drawing)?;
            area.draw(&Rectangle::new(corners, color.stroke_width(2)))
                .map_err(drawing)
        }
    }
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
    let area = root
        .titled(&shorten_to(title, LONGEST_TITLE), (FONT, TITLE_SIZE))
        .map_err(drawing)?;
    Ok(area.split_horizontally(plot_width))
}
