//! `--scale` for reproductions: the sizes a file lists under `[reproduce] scale` are multiplied
//! by the factor in every point's document. Each path is checked at any factor (a typo would
//! otherwise make `--scale` silently do nothing), and a factor that would round a size below 1
//! is refused with the smallest factor the file allows.

use crate::input::error::InputError;
use crate::input::source::Source;

/// Scales, in one point's document `doc`, every size that `[reproduce] scale` lists (`paths`)
/// by `factor`. At any factor, even 1, each path must name an integer that the point sets, and
/// no path may be listed twice; a factor that would round a size below 1 is refused, naming the
/// smallest scale the whole file allows, found from `every_doc` (each point's label and
/// unscaled document, asked for only then). Sizes below 1 are left for the workload to judge.
pub(crate) fn scale_paths(
    src: &Source,
    doc: &mut toml::Table,
    paths: &[String],
    factor: f64,
    label: &str,
    every_doc: impl FnOnce() -> Vec<(String, toml::Table)>,
) -> Result<(), InputError> {
    let error = |i: usize, message: String| {
        let line = src.line_of_key(&format!("reproduce.scale.{i}"));
        src.error_at(line, "reproduce.scale", message)
    };
    let mut sizes = Vec::with_capacity(paths.len());
    for (i, path) in paths.iter().enumerate() {
        if paths[..i].contains(path) {
            return Err(error(
                i,
                format!("`{path}` is listed twice, so it would be scaled twice"),
            ));
        }
        let v = integer_at(doc, path).map_err(|(why, near)| {
            let pool = if near.is_empty() {
                integer_paths(doc, "")
            } else {
                near
            };
            let like = pool
                .iter()
                .min_by_key(|p| edit_distance(p, path))
                .map_or("workload.0.threads", String::as_str);
            error(
                i,
                format!(
                    "`{path}` names no integer of point `{label}`: {why}. A scaled size is the \
                     dotted path of an integer that every point sets, like `{like}`"
                ),
            )
        })?;
        sizes.push(v);
    }
    if factor == 1.0 {
        return Ok(());
    }
    for (i, (path, &v)) in paths.iter().zip(&sizes).enumerate() {
        if v < 1 || (v as f64 * factor).round() >= 1.0 {
            continue;
        }
        let mut docs = every_doc();
        if docs.is_empty() {
            docs.push((label.to_string(), doc.clone()));
        }
        let mut message =
            format!("--scale {factor:?} would take `{path}` ({v} at point `{label}`) below 1");
        if let Some((smallest, at, value, point)) = smallest_scale(&docs, paths) {
            message.push_str(&format!(
                "; the smallest scale this file allows is {smallest} (`{at}` is {value} at \
                 point `{point}`)"
            ));
        }
        return Err(error(i, message));
    }
    for (path, v) in paths.iter().zip(sizes) {
        if v >= 1 {
            scale_path(doc, path, ((v as f64 * factor).round() as i64).max(1));
        }
    }
    Ok(())
}

/// Sets the integer at dotted `path` of `doc` (checked to exist by [`integer_at`]) to `value`.
fn scale_path(doc: &mut toml::Table, path: &str, value: i64) {
    let mut node: Option<&mut toml::Value> = None;
    for (i, seg) in path.split('.').enumerate() {
        node = if i == 0 {
            doc.get_mut(seg)
        } else {
            match node {
                Some(toml::Value::Table(t)) => t.get_mut(seg),
                Some(toml::Value::Array(a)) => seg.parse::<usize>().ok().and_then(|j| a.get_mut(j)),
                _ => None,
            }
        };
    }
    if let Some(toml::Value::Integer(v)) = node {
        *v = value;
    }
}

/// The integer at dotted `path` of `doc`, or why there is none, with the integers found near
/// the place where the path stops resolving.
fn integer_at(doc: &toml::Table, path: &str) -> Result<i64, (String, Vec<String>)> {
    let a = |v: &toml::Value| match v.type_str() {
        t @ ("integer" | "array") => format!("an {t}"),
        t => format!("a {t}"),
    };
    let mut node: Option<&toml::Value> = None;
    let mut at = String::new();
    for seg in path.split('.') {
        let next = match node {
            None => doc.get(seg),
            Some(toml::Value::Table(t)) => t.get(seg),
            Some(arr @ toml::Value::Array(items)) => match seg.parse::<usize>() {
                Ok(j) => items.get(j),
                Err(_) => {
                    let why = format!(
                        "`{at}` is an array, indexed by numbers 0 to {}, not `{seg}`",
                        items.len().saturating_sub(1)
                    );
                    return Err((why, integer_paths_in(arr, &at)));
                }
            },
            Some(other) => {
                return Err((format!("`{at}` is {}, not a table", a(other)), Vec::new()))
            }
        };
        let Some(next) = next else {
            let there = if at.is_empty() {
                format!("the file has no top-level `{seg}`")
            } else {
                format!("`{at}` has no `{seg}`")
            };
            let found = match node {
                None => integer_paths(doc, ""),
                Some(toml::Value::Table(t)) => integer_paths(t, &at),
                Some(v) => integer_paths_in(v, &at),
            };
            if found.is_empty() {
                return Err((there, found));
            }
            let quoted: Vec<String> = found.iter().map(|p| format!("`{p}`")).collect();
            return Err((
                format!("{there}; integers there: {}", quoted.join(", ")),
                found,
            ));
        };
        at = if at.is_empty() {
            seg.to_string()
        } else {
            format!("{at}.{seg}")
        };
        node = Some(next);
    }
    match node {
        Some(toml::Value::Integer(v)) => Ok(*v),
        Some(other) => Err((format!("it is {}", a(other)), Vec::new())),
        None => Err(("the path is empty".to_string(), Vec::new())),
    }
}

/// Levenshtein distance between two strings, by characters (to suggest the closest path).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// Dotted paths of the integers in `table` (at most 12), prefixed by `prefix`.
fn integer_paths(table: &toml::Table, prefix: &str) -> Vec<String> {
    integer_paths_in(&toml::Value::Table(table.clone()), prefix)
}

fn integer_paths_in(value: &toml::Value, prefix: &str) -> Vec<String> {
    fn walk(v: &toml::Value, path: &str, out: &mut Vec<String>) {
        let join = |k: &str| {
            if path.is_empty() {
                k.to_string()
            } else {
                format!("{path}.{k}")
            }
        };
        match v {
            _ if out.len() >= 12 => {}
            toml::Value::Integer(_) if !path.is_empty() => out.push(path.to_string()),
            toml::Value::Table(t) => t.iter().for_each(|(k, v)| walk(v, &join(k), out)),
            toml::Value::Array(a) => {
                (0..a.len()).for_each(|i| walk(&a[i], &join(&i.to_string()), out))
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(value, prefix, &mut out);
    out
}

/// The smallest scale that keeps every listed size of every point at 1 or more once rounded,
/// written with three significant digits, with the size that sets it: (scale, path, size, point).
fn smallest_scale(
    docs: &[(String, toml::Table)],
    paths: &[String],
) -> Option<(String, String, i64, String)> {
    let (v, path, label) = docs
        .iter()
        .flat_map(|(label, doc)| {
            paths
                .iter()
                .filter_map(move |p| Some((integer_at(doc, p).ok()?, p, label)))
        })
        .filter(|(v, _, _)| *v >= 1)
        .min_by_key(|(v, _, _)| *v)?;
    // Exactly 0.5 / v; written rounded up so that the printed number itself works.
    let exact = 0.5 / v as f64;
    let decimals = (2 - exact.log10().floor() as i32).max(0) as usize;
    let unit = 10f64.powi(-(decimals as i32));
    let mut n = (exact / unit - 1e-9).ceil();
    loop {
        let text = format!("{:.decimals$}", n * unit);
        let text = text.trim_end_matches('0').trim_end_matches('.').to_string();
        if text
            .parse::<f64>()
            .is_ok_and(|f| (v as f64 * f).round() >= 1.0)
        {
            return Some((text, path.clone(), v, label.clone()));
        }
        n += 1.0;
    }
}
