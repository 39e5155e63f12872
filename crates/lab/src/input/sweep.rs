//! Sweeps and points: an experiment file's `[[point]]` tables and `[sweep]` expand into labelled
//! lists of values set at dotted paths (`machine.processors`, `workload.0.threads`), each
//! remembering the line it was written on, and the paths are applied to a point's document.
//! The expansion is a cartesian product in file order; labels are `key=value` parts joined by
//! `/` (`policy=priority/processors=8`).

use serde::Deserialize;

use crate::input::error::InputError;
use crate::input::source::Source;

/// Most points one experiment may expand to.
pub const MAX_POINTS: usize = 100_000;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
/// A `[[point]]` table as written: a name and the values it sets.
pub(crate) struct RawPoint {
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) set: toml::Table,
}

/// A value set at a dotted path for one point, and the line it was written on.
#[derive(Clone, Debug)]
pub(crate) struct Override {
    pub(crate) path: String,
    pub(crate) value: toml::Value,
    pub(crate) line: Option<usize>,
}

/// Expands named points and the sweep into labelled lists of overrides.
pub(crate) fn expand(
    src: &Source,
    points: &[RawPoint],
    sweep: &toml::Table,
) -> Result<Vec<(String, Vec<Override>)>, InputError> {
    let mut bases: Vec<(String, Vec<Override>)> = Vec::new();
    if points.is_empty() {
        bases.push((String::new(), Vec::new()));
    }
    for (i, p) in points.iter().enumerate() {
        let overrides = p
            .set
            .iter()
            .map(|(k, v)| Override {
                path: k.clone(),
                value: v.clone(),
                line: src.line_of_key(&format!("point.{i}.set.{k}")),
            })
            .collect();
        bases.push((p.name.clone(), overrides));
    }
    let mut axes: Vec<(String, Vec<toml::Value>, Option<usize>)> = Vec::new();
    for (k, v) in sweep {
        let line = src.line_of_key(&format!("sweep.{k}"));
        match v {
            toml::Value::Array(a) if !a.is_empty() => axes.push((k.clone(), a.clone(), line)),
            _ => {
                return Err(src.error_at(
                    line,
                    &format!("sweep.{k}"),
                    "a sweep entry must be a non-empty list of values",
                ))
            }
        }
    }
    let mut total = bases.len();
    for (k, vals, line) in &axes {
        total = total.saturating_mul(vals.len());
        if total > MAX_POINTS {
            return Err(src.error_at(
                *line,
                &format!("sweep.{k}"),
                format!("the sweep expands to more than {MAX_POINTS} points"),
            ));
        }
    }
    let paths: Vec<&str> = axes.iter().map(|(k, _, _)| k.as_str()).collect();
    let keys: Vec<String> = paths
        .iter()
        .map(|p| short_key(p, &paths).to_string())
        .collect();
    let mut out = bases;
    for ((path, vals, line), key) in axes.into_iter().zip(keys) {
        let mut next = Vec::with_capacity(out.len() * vals.len());
        for (label, overrides) in &out {
            for v in &vals {
                let mut o = overrides.clone();
                o.push(Override {
                    path: path.clone(),
                    value: v.clone(),
                    line,
                });
                let part = format!("{key}={}", value_label(v));
                let l = if label.is_empty() {
                    part
                } else {
                    format!("{label}/{part}")
                };
                next.push((l, o));
            }
        }
        out = next;
    }
    for (label, _) in &mut out {
        if label.is_empty() {
            *label = "base".into();
        }
    }
    Ok(out)
}

/// The label's name for the swept `path`: its last segment, or as many trailing segments as
/// tell it apart from every other path of `all` (`0.dedicated` and `1.dedicated` for two
/// workloads' `dedicated`, which `dedicated=false/dedicated=true` could not tell apart).
fn short_key<'a>(path: &'a str, all: &[&str]) -> &'a str {
    let suffix = |p: &'a str, n: usize| -> &'a str {
        match p.rmatch_indices('.').nth(n.saturating_sub(1)) {
            Some((i, _)) if n > 0 => &p[i + 1..],
            _ => p,
        }
    };
    let segments = path.split('.').count();
    (1..=segments)
        .map(|n| suffix(path, n))
        .find(|s| {
            all.iter()
                .filter(|&&o| o != path)
                .all(|o| o != s && !o.ends_with(&format!(".{s}")))
        })
        .unwrap_or(path)
}

/// A short label for a value: strings bare; a table by its `name`, or by its `policy` or `kind`
/// with the other values it sets in parentheses (`gang(fill=true)`), so that two tables of one
/// policy label apart.
pub(crate) fn value_label(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Table(t) => {
            if let Some(name) = t.get("name").and_then(|x| x.as_str()) {
                return name.to_string();
            }
            let Some((key, head)) = ["policy", "kind"]
                .iter()
                .find_map(|k| Some((*k, t.get(*k)?.as_str()?)))
            else {
                return v.to_string();
            };
            let rest: Vec<String> = t
                .iter()
                .filter(|(k, _)| k.as_str() != key)
                .map(|(k, x)| format!("{k}={}", value_label(x)))
                .collect();
            if rest.is_empty() {
                head.to_string()
            } else {
                format!("{head}({})", rest.join(","))
            }
        }
        other => other.to_string(),
    }
}

/// Sets `value` at dotted `path` in `doc`, creating tables on the way; numeric segments index
/// arrays (`workload.0.threads`).
pub(crate) fn set_path(
    doc: &mut toml::Table,
    path: &str,
    value: toml::Value,
) -> Result<(), String> {
    let segs: Vec<&str> = path.split('.').collect();
    if segs.iter().any(|s| s.is_empty()) {
        return Err(format!("`{path}` is not a valid dotted path"));
    }
    let (first, rest) = segs
        .split_first()
        .expect("split yields at least one segment");
    if rest.is_empty() {
        doc.insert(first.to_string(), value);
        return Ok(());
    }
    let child = doc
        .entry(first.to_string())
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    set_in(child, rest, value, path)
}

fn set_in(
    node: &mut toml::Value,
    segs: &[&str],
    value: toml::Value,
    path: &str,
) -> Result<(), String> {
    let Some((seg, rest)) = segs.split_first() else {
        *node = value;
        return Ok(());
    };
    match node {
        toml::Value::Table(t) if rest.is_empty() => {
            t.insert(seg.to_string(), value);
            Ok(())
        }
        toml::Value::Table(t) => {
            let child = t
                .entry(seg.to_string())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            set_in(child, rest, value, path)
        }
        toml::Value::Array(a) => {
            let len = a.len();
            let child = seg
                .parse::<usize>()
                .ok()
                .and_then(|i| a.get_mut(i))
                .ok_or_else(|| {
                    format!("`{seg}` in `{path}` is not an index into a list of {len}")
                })?;
            set_in(child, rest, value, path)
        }
        _ => Err(format!(
            "`{path}`: `{seg}` is inside a value that is not a table"
        )),
    }
}

/// Overrides `base` with `over`, merging nested tables key by key (so `[machine.memory]` with one
/// field keeps the preset's other memory settings).
pub(crate) fn deep_merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => deep_merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}
