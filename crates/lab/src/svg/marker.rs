//! Markers and dashes: a marker shape per series (so that lines tell apart in greyscale), ours
//! filled and the paper's hollow, and dashed lines drawn as SVG dashes along straight paths.

use super::*;

/// The marker shapes, assigned to series in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    Circle,
    Square,
    TriangleUp,
    Diamond,
    TriangleDown,
    Cross,
}

/// The shapes in assignment order.
pub(super) const SHAPES: [Shape; 6] = [
    Shape::Circle,
    Shape::Square,
    Shape::TriangleUp,
    Shape::Diamond,
    Shape::TriangleDown,
    Shape::Cross,
];

/// The corners of a polygonal shape of half-size `r` around `at` (none for a circle or cross).
fn corners(shape: Shape, (x, y): (i32, i32), r: i32) -> Vec<(i32, i32)> {
    match shape {
        Shape::Square => vec![
            (x - r, y - r),
            (x + r, y - r),
            (x + r, y + r),
            (x - r, y + r),
        ],
        Shape::TriangleUp => vec![(x, y - r - 1), (x + r + 1, y + r), (x - r - 1, y + r)],
        Shape::TriangleDown => vec![(x, y + r + 1), (x + r + 1, y - r), (x - r - 1, y - r)],
        Shape::Diamond => vec![
            (x, y - r - 1),
            (x + r + 1, y),
            (x, y + r + 1),
            (x - r - 1, y),
        ],
        Shape::Circle | Shape::Cross => Vec::new(),
    }
}

/// A marker of `shape` at `at`: ours filled, the paper's hollow with a white inside.
pub(super) fn draw_marker(
    area: &Area<'_>,
    at: (i32, i32),
    color: RGBColor,
    style: SeriesStyle,
    shape: Shape,
) -> Result<(), PlotError> {
    let r = 4;
    let (fill, outline) = match style {
        SeriesStyle::Ours => (color.filled(), None),
        SeriesStyle::Paper => (WHITE.filled(), Some(color.stroke_width(2))),
    };
    match shape {
        Shape::Circle => {
            area.draw(&Circle::new(at, r, fill)).map_err(drawing)?;
            if let Some(line) = outline {
                area.draw(&Circle::new(at, r, line)).map_err(drawing)?;
            }
        }
        Shape::Cross => {
            let width = if style == SeriesStyle::Ours { 3 } else { 2 };
            let (x, y) = at;
            for (a, b) in [
                ((x - r, y - r), (x + r, y + r)),
                ((x - r, y + r), (x + r, y - r)),
            ] {
                area.draw(&PathElement::new(vec![a, b], color.stroke_width(width)))
                    .map_err(drawing)?;
            }
        }
        _ => {
            let points = corners(shape, at, r);
            area.draw(&Polygon::new(points.clone(), fill))
                .map_err(drawing)?;
            if let Some(line) = outline {
                let mut closed = points;
                closed.push(closed[0]);
                area.draw(&PathElement::new(closed, line))
                    .map_err(drawing)?;
            }
        }
    }
    Ok(())
}

/// A dash pattern. plotters draws dashes as separate short segments between whole pixels,
/// which turn into stair steps on a slope; these lines are drawn whole and given the pattern
/// as an SVG `stroke-dasharray` by [`apply_dashes`].
#[derive(Debug, Clone, Copy)]
pub(super) enum Dash {
    /// The paper's lines: 8 on, 5 off.
    Paper,
    /// Guides (the agreement band's edges): 6 on, 4 off.
    Guide,
}

impl Dash {
    /// The opacity that marks a line for the pattern (an opacity no other element uses).
    fn mark(self) -> f64 {
        match self {
            Dash::Paper => 0.997,
            Dash::Guide => 0.996,
        }
    }

    fn pattern(self) -> &'static str {
        match self {
            Dash::Paper => "8,5",
            Dash::Guide => "6,4",
        }
    }
}

/// Draws a dashed line through `points` (backend coordinates).
pub(super) fn draw_dashed(
    area: &Area<'_>,
    points: Vec<(i32, i32)>,
    color: RGBColor,
    width: u32,
    dash: Dash,
) -> Result<(), PlotError> {
    let style = color.mix(dash.mark()).stroke_width(width);
    area.draw(&PathElement::new(points, style)).map_err(drawing)
}

/// Turns the lines [`draw_dashed`] marked into dashed ones.
pub(super) fn apply_dashes(svg: String) -> String {
    let mut svg = svg;
    for dash in [Dash::Paper, Dash::Guide] {
        let marked = format!("<polyline fill=\"none\" opacity=\"{}\"", dash.mark());
        let dashed = format!(
            "<polyline fill=\"none\" opacity=\"1\" stroke-dasharray=\"{}\"",
            dash.pattern()
        );
        svg = svg.replace(&marked, &dashed);
    }
    svg
}
