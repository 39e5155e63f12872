//! Text that must fit: titles wrapped to the canvas, and labels shortened so that what tells
//! them apart survives (shared `key=` parts dropped, the middle elided, never two alike).

use super::*;

/// `text` in lines of at most `max` characters, broken between words (a word longer than a line
/// is broken inside); nothing is cut.
pub(super) fn wrap(text: &str, max: usize) -> Vec<String> {
    let max = max.max(8);
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let mut word: Vec<char> = word.chars().collect();
        while word.len() > max {
            let rest = word.split_off(max);
            lines.push(word.into_iter().collect());
            word = rest;
        }
        let word: String = word.into_iter().collect();
        match lines.last_mut() {
            Some(line) if line.chars().count() + 1 + word.chars().count() <= max => {
                line.push(' ');
                line.push_str(&word);
            }
            _ => lines.push(word),
        }
    }
    lines
}

/// The lines a title takes on a canvas `width` pixels wide, each within it (estimated at
/// `TITLE_CHAR_WIDTH` a character, 10 pixels clear of each edge).
pub fn title_lines(title: &str, width: u32) -> Vec<String> {
    let max = (width.saturating_sub(20) / TITLE_CHAR_WIDTH) as usize;
    let lines = wrap(title, max);
    // As many lines, as even as they come: the shortest width that takes no more.
    let mut even = title.chars().count().div_ceil(lines.len().max(1));
    while even < max {
        let balanced = wrap(title, even);
        if balanced.len() <= lines.len() {
            return balanced;
        }
        even += 1;
    }
    lines
}

/// The width a canvas needs so that `title` takes at most two lines up to 1,000 pixels, three
/// beyond: at least `width`, at most [`MAX_WIDTH`] (beyond it the title takes more lines).
pub(super) fn width_for_title(title: &str, width: u32) -> u32 {
    let chars = title.chars().count() as u32;
    let two = (chars / 2 + 8) * TITLE_CHAR_WIDTH + 20;
    let needed = if two <= 1000 {
        two
    } else {
        (chars / 3 + 8) * TITLE_CHAR_WIDTH + 20
    };
    width.max(needed.min(MAX_WIDTH))
}

/// Draws the title's lines centred at the top of `root` and returns the area under it.
pub(super) fn draw_title<'b>(root: &Area<'b>, title: &str) -> Result<Area<'b>, PlotError> {
    let (width, _) = root.dim_in_pixel();
    let lines = title_lines(title, width);
    let style = TextStyle::from((FONT, TITLE_SIZE).into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    for (index, line) in lines.iter().enumerate() {
        let at = (width as i32 / 2, 6 + (TITLE_LINE * index as u32) as i32);
        root.draw(&Text::new(line.clone(), at, style.clone()))
            .map_err(drawing)?;
    }
    let height = 10 + TITLE_LINE * lines.len().max(1) as u32;
    Ok(root.margin(height, 0, 0, 0))
}

/// The height [`draw_title`] takes on a canvas `width` wide.
pub(super) fn title_height(title: &str, width: u32) -> u32 {
    10 + TITLE_LINE * title_lines(title, width).len().max(1) as u32
}

/// Category labels as drawn, and what the parts left in them are (an axis description).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategoryLabels {
    /// One label per category, in order.
    pub labels: Vec<String>,
    /// When `key=` parts shared by every label were dropped: the parts' names joined by `/`
    /// (`point` for a part that has no shared key), e.g. `scheduler, client`.
    pub parts: Option<String>,
}

/// Labels longer than this many characters lose the `key=` of each `/`-separated part whose
/// key every label shares at that place.
const SHORT_ENOUGH: usize = 30;

/// Shortens category labels: long labels whose `/`-separated parts share their keys keep only
/// the values, joined by `, ` (`scheduler=static/client=random` becomes `static, random`, and
/// `parts` says `scheduler, client`; not `/`, which would make `1/16` of `q=1/n=16`), and what
/// is still longer than `LONGEST_LABEL` loses its middle; two different labels never come out
/// the same.
pub fn category_labels(labels: &[String]) -> CategoryLabels {
    let longest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let split: Vec<Vec<&str>> = labels.iter().map(|l| l.split('/').collect()).collect();
    let count = split.first().map_or(0, Vec::len);
    let mut keys: Vec<Option<&str>> = vec![None; count];
    if longest > SHORT_ENOUGH && split.iter().all(|s| s.len() == count) {
        for (place, key) in keys.iter_mut().enumerate() {
            let first = split.first().and_then(|s| key_of(s[place]));
            if first.is_some() && split.iter().all(|s| key_of(s[place]) == first) {
                *key = first;
            }
        }
    }
    if keys.iter().all(Option::is_none) {
        return CategoryLabels {
            labels: distinct_labels(labels, LONGEST_LABEL),
            parts: None,
        };
    }
    let stripped: Vec<String> = split
        .iter()
        .map(|s| {
            s.iter()
                .zip(&keys)
                .map(|(part, key)| match key {
                    Some(_) => part.split_once('=').map_or(*part, |(_, v)| v),
                    None => part,
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect();
    let parts = keys
        .iter()
        .map(|k| k.unwrap_or("point"))
        .collect::<Vec<_>>()
        .join(", ");
    CategoryLabels {
        labels: distinct_labels(&stripped, LONGEST_LABEL),
        parts: Some(parts),
    }
}

/// The key of a `key=value` part.
fn key_of(part: &str) -> Option<&str> {
    part.split_once('=').map(|(k, _)| k)
}

/// `label` cut to `max` characters by replacing its middle with an ellipsis.
pub(super) fn elide_middle(label: &str, max: usize) -> String {
    let chars: Vec<char> = label.chars().collect();
    if chars.len() <= max {
        return label.to_string();
    }
    let keep = max.saturating_sub(1).max(2);
    let tail = keep / 2;
    let head = keep - tail;
    let mut short: String = chars[..head].iter().collect();
    short.push('…');
    short.extend(&chars[chars.len() - tail..]);
    short
}

/// Each label elided in its middle to `max` characters, or to more where two different labels
/// would otherwise read the same (equal labels stay equal).
pub fn distinct_labels(labels: &[String], max: usize) -> Vec<String> {
    let longest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let mut max = max;
    loop {
        let short: Vec<String> = labels.iter().map(|l| elide_middle(l, max)).collect();
        let clash = short.iter().enumerate().any(|(i, s)| {
            short[..i]
                .iter()
                .zip(labels)
                .any(|(t, original)| t == s && *original != labels[i])
        });
        if !clash || max >= longest {
            return short;
        }
        max += 4;
    }
}
