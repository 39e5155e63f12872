//! Values set from the command line over every file of a reproduction: `smpsched reproduce
//! PAPER --set PATH=VALUE` (one value) and `--vary PATH=V1,V2,...` (one reproduction per value,
//! then a report across them). A constant a paper does not give is a guess; this is how a user
//! asks whether a finding rests on it.
//!
//! A setting is a dotted path into an experiment file, as `[sweep]` writes them
//! (`workload.0.random_ms`, `machine.processors`), and a value: a TOML value (`0.05`, `true`,
//! `"fifo"`), or a bare word taken as a string (`mach`). It is applied to the file's document
//! before its points are expanded (`apply`), so it is validated as if the file had written it;
//! a path the file's sweep or points also set, or one outside the simulated system (`seed`,
//! `repetitions`, `[reproduce]`), is refused.

use serde::{Deserialize, Serialize};

use crate::input::hash::{fnv, FNV_START};

/// The most values one `--vary` takes.
pub const MOST_VALUES: usize = 100;

/// Top-level keys of an experiment file that describe the file, not the simulated system.
const NOT_SETTABLE: [(&str, &str); 7] = [
    ("name", "the file's name"),
    ("description", "the file's description"),
    ("seed", "the seed: use --seed or --seeds"),
    (
        "repetitions",
        "the repetitions: edit the file (reproduce --scale scales them)",
    ),
    ("sweep", "the file's sweep"),
    ("point", "the file's points"),
    ("reproduce", "the paper's values and claims"),
];

/// A value set at a dotted path over every file, as the command line gave it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setting {
    /// The dotted path (`workload.0.random_ms`).
    pub path: String,
    /// The value as written (a TOML value, or a bare word).
    pub value: String,
}

impl Setting {
    /// Reads `PATH=VALUE`.
    pub fn parse(text: &str) -> Result<Setting, String> {
        let (path, value) = text.split_once('=').ok_or_else(|| {
            format!("expected PATH=VALUE (e.g. workload.0.random_ms=0.05), got `{text}`")
        })?;
        Setting::new(path, value)
    }

    fn new(path: &str, value: &str) -> Result<Setting, String> {
        let (path, value) = (path.trim(), value.trim());
        if path.is_empty()
            || path
                .split('.')
                .any(|s| s.trim().is_empty() || s != s.trim())
        {
            return Err(format!(
                "`{path}` is not a dotted path (e.g. workload.0.random_ms)"
            ));
        }
        if let Some((_, what)) = NOT_SETTABLE
            .iter()
            .find(|(k, _)| path.split('.').next() == Some(*k))
        {
            return Err(format!(
                "`{path}` is {what}, not part of the simulated system; set machine.*, \
                 scheduler.* or workload.N.*"
            ));
        }
        if value.is_empty() {
            return Err(format!("`{path}=` gives no value"));
        }
        Ok(Setting {
            path: path.to_string(),
            value: value.to_string(),
        })
    }

    /// The value as TOML: as written when it reads as a TOML value, else the word as a string.
    pub fn toml_value(&self) -> toml::Value {
        toml::from_str::<toml::Table>(&format!("v = {}", self.value))
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| toml::Value::String(self.value.clone()))
    }

    /// How reports show it: `workload.0.random_ms = 0.05`.
    pub fn label(&self) -> String {
        format!("{} = {}", self.path, self.value)
    }

    /// As the command line writes it: `workload.0.random_ms=0.05`.
    pub fn arg(&self) -> String {
        format!("{}={}", self.path, self.value)
    }

    /// A part of a report's file name: `set-workload.0.random_ms-0.05`.
    pub fn file_part(&self) -> String {
        format!("set-{}-{}", file_safe(&self.path), file_safe(&self.value))
    }
}

/// The longest part of a file name [`file_safe`] gives whole.
const LONGEST_PART: usize = 60;

/// The words that join the parts of a report's name (`dibella92-only-table4-scale-0.1-seed-2-
/// set-...`): a text holding one could be read as two parts, so it is hashed.
const NAME_JOINS: [&str; 6] = ["-only-", "-scale-", "-seed-", "-seeds-", "-set-", "-vary-"];

/// `text` for a file name: every character but letters, digits, `.`, `,`, `_` and `-` as `_`;
/// past `LONGEST_PART` (60) characters, or holding a word that joins a report name's parts
/// (`-set-`), its start and a hash of the whole, so that two texts never share a name (nor two
/// lists of settings one report) and no name outgrows what a file system takes.
pub fn file_safe(text: &str) -> String {
    let safe: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | ',' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.len() <= LONGEST_PART && safe == text && !NAME_JOINS.iter().any(|j| text.contains(j)) {
        return safe;
    }
    // Characters replaced or cut: two texts could meet in one name; the hash keeps them apart.
    let start: String = safe.chars().take(LONGEST_PART - 17).collect();
    format!("{start}-{:016x}", fnv(FNV_START, text.as_bytes()))
}

/// Checks that no two settings (`--set`, and one setting of each path `--vary` varies) set the
/// same value or one inside another.
pub fn check_distinct(set: &[Setting], vary: &[Setting]) -> Result<(), String> {
    let all: Vec<&Setting> = set.iter().chain(vary).collect();
    for (i, a) in all.iter().enumerate() {
        if let Some(b) = all[..i].iter().find(|b| overlap(&a.path, &b.path)) {
            return Err(format!(
                "`{}` and `{}` set the same value; give each once",
                b.path, a.path
            ));
        }
    }
    Ok(())
}

/// Reads `PATH=V1,V2,...` (at least two values, at most [`MOST_VALUES`], none twice): one
/// setting per value, in order.
pub fn parse_vary(text: &str) -> Result<Vec<Setting>, String> {
    let (path, values) = text.split_once('=').ok_or_else(|| {
        format!("expected PATH=V1,V2,... (e.g. workload.0.random_ms=0.02,0.05,0.09), got `{text}`")
    })?;
    vary_axis(path, &top_level_items(values))
}

/// The values of `path` to vary given one by one (the Python API's list), as [`parse_vary`]
/// reads them from `PATH=V1,V2,...`: each must read back as one value there, so a value with a
/// comma outside brackets and quotes is refused (a string holding one is written as TOML text,
/// `"a,b"`), and the report's `--vary` line gives the same runs.
pub fn vary_values(path: &str, values: &[String]) -> Result<Vec<Setting>, String> {
    if let Some(v) = values.iter().find(|v| top_level_items(v).len() > 1) {
        return Err(format!(
            "{}: the value `{v}` holds a comma outside brackets and quotes, which would make it \
             several values; write a string as TOML text (\"{}\")",
            path.trim(),
            v.replace('\\', "\\\\").replace('"', "\\\"")
        ));
    }
    let items: Vec<&str> = values.iter().map(String::as_str).collect();
    vary_axis(path, &items)
}

/// One setting of `path` per value (at least two, at most [`MOST_VALUES`], none twice).
fn vary_axis(path: &str, values: &[&str]) -> Result<Vec<Setting>, String> {
    let settings: Vec<Setting> = values
        .iter()
        .map(|v| Setting::new(path, v))
        .collect::<Result<_, _>>()?;
    if settings.len() < 2 {
        return Err(format!(
            "give at least two values, as {}=A,B (for one, use --set)",
            path.trim()
        ));
    }
    if settings.len() > MOST_VALUES {
        return Err(format!("more than {MOST_VALUES} values"));
    }
    for (i, s) in settings.iter().enumerate() {
        if settings[..i]
            .iter()
            .any(|o| o.toml_value() == s.toml_value())
        {
            return Err(format!("the value {} is given twice", s.value));
        }
    }
    Ok(settings)
}

/// `values` split at its commas outside brackets, braces and quotes, so that a value may be a
/// TOML array or inline table (`[1, 2],[3, 4]` is two values). A backslash inside a basic
/// string (`"a\",b"`) escapes the character after it, as TOML reads it.
fn top_level_items(values: &str) -> Vec<&str> {
    let (mut items, mut start, mut depth, mut quote) = (Vec::new(), 0, 0i32, None);
    let mut escaped = false;
    for (i, c) in values.char_indices() {
        match (quote, c) {
            (Some(_), _) if escaped => escaped = false,
            (Some('"'), '\\') => escaped = true,
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => {
                items.push(&values[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&values[start..]);
    items
}

/// The runs `--vary` asks for, given once per path (each axis from [`parse_vary`]): every
/// combination of the axes' values, the first axis outermost, each run's settings in the axes'
/// order; at most [`MOST_VALUES`] runs.
pub fn grid(axes: &[Vec<Setting>]) -> Result<Vec<Vec<Setting>>, String> {
    let mut runs: Vec<Vec<Setting>> = vec![Vec::new()];
    for axis in axes {
        let n = runs.len().saturating_mul(axis.len());
        if n > MOST_VALUES {
            let sizes: Vec<String> = axes.iter().map(|a| a.len().to_string()).collect();
            return Err(format!(
                "{} values make more than {MOST_VALUES} reproductions; vary fewer",
                sizes.join(" x ")
            ));
        }
        runs = runs
            .iter()
            .flat_map(|run| {
                axis.iter().map(move |s| {
                    let mut r = run.clone();
                    r.push(s.clone());
                    r
                })
            })
            .collect();
    }
    Ok(runs)
}

/// The runs of a grid as their columns name them: `workload.0.random_ms = 0.05,
/// workload.0.send_ms = 0.33`.
pub fn run_label(run: &[Setting]) -> String {
    let labels: Vec<String> = run.iter().map(Setting::label).collect();
    labels.join(", ")
}

/// Whether one of the two dotted paths lies inside the other (or they are the same): a setting
/// at one and a value the file sets at the other cannot both hold.
pub(crate) fn overlap(a: &str, b: &str) -> bool {
    a.split('.').zip(b.split('.')).all(|(x, y)| x == y)
}

/// Applies the settings to a file's document (its top-level keys but the system's removed):
/// each value at its path, or an error message naming the path.
pub(crate) fn apply(doc: &mut toml::Table, settings: &[Setting]) -> Result<(), (String, String)> {
    for s in settings {
        crate::input::sweep::set_path(doc, &s.path, s.toml_value())
            .map_err(|m| (s.path.clone(), format!("{m} (set by --set or --vary)")))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_setting_and_its_value() {
        let s = Setting::parse("workload.0.random_ms=0.05").unwrap();
        assert_eq!(s.path, "workload.0.random_ms");
        assert_eq!(s.toml_value(), toml::Value::Float(0.05));
        assert_eq!(s.label(), "workload.0.random_ms = 0.05");
        assert_eq!(s.file_part(), "set-workload.0.random_ms-0.05");
        let word = Setting::parse("scheduler.policy=mach").unwrap();
        assert_eq!(word.toml_value(), toml::Value::String("mach".into()));
        let quoted = Setting::parse("scheduler.policy=\"round robin\"").unwrap();
        assert_eq!(
            quoted.toml_value(),
            toml::Value::String("round robin".into())
        );
        assert!(quoted
            .file_part()
            .starts_with("set-scheduler.policy-_round_robin_-"));
        assert_eq!(
            Setting::parse("machine.processors = 8")
                .unwrap()
                .toml_value(),
            toml::Value::Integer(8)
        );
    }

    #[test]
    fn refuses_what_is_not_a_setting() {
        for (text, says) in [
            ("random_ms", "PATH=VALUE"),
            ("=1", "not a dotted path"),
            ("workload..x=1", "not a dotted path"),
            ("workload.0.x=", "gives no value"),
            ("seed=3", "use --seed"),
            ("repetitions=2", "--scale"),
            ("reproduce.tolerance=1", "claims"),
            ("sweep.x=1", "sweep"),
        ] {
            let e = Setting::parse(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn values_to_vary_may_be_arrays_and_tables() {
        let v = parse_vary("workload.0.sizes=[1, 2],[3,4],{ a = \"x,y\" },'p,q'").unwrap();
        let values: Vec<&str> = v.iter().map(|s| s.value.as_str()).collect();
        assert_eq!(values, ["[1, 2]", "[3,4]", "{ a = \"x,y\" }", "'p,q'"]);
        assert!(matches!(v[0].toml_value(), toml::Value::Array(_)));
        assert_eq!(parse_vary("a.b=1,2").unwrap().len(), 2);
    }

    #[test]
    fn values_given_one_by_one_read_as_the_command_line_reads_them() {
        let list = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let one = vary_values("a.b", &list(&["[1, 2]", "\"x,y\"", "'p,q'", "mach"])).unwrap();
        let text = parse_vary("a.b=[1, 2],\"x,y\",'p,q',mach").unwrap();
        assert_eq!(one, text);
        let e = vary_values("a.b", &list(&["4,8", "16"])).unwrap_err();
        assert!(e.contains("comma") && e.contains("\"4,8\""), "{e}");
        assert!(vary_values("a.b", &list(&["1"]))
            .unwrap_err()
            .contains("two values"));
        // A backslash escapes a quote in a basic string: one value, not two.
        let escaped = parse_vary("a.b=\"x\\\",y\",z").unwrap();
        assert_eq!(escaped.len(), 2, "{escaped:?}");
        assert_eq!(escaped[0].toml_value(), toml::Value::String("x\",y".into()));
    }

    #[test]
    fn reads_the_values_to_vary() {
        let v = parse_vary("workload.0.random_ms=0.02,0.05,0.09").unwrap();
        let values: Vec<&str> = v.iter().map(|s| s.value.as_str()).collect();
        assert_eq!(values, ["0.02", "0.05", "0.09"]);
        assert!(v.iter().all(|s| s.path == "workload.0.random_ms"));
        for (text, says) in [
            ("workload.0.random_ms=0.02", "at least two"),
            ("workload.0.random_ms=0.02,0.020", "given twice"),
            ("workload.0.random_ms", "PATH=V1,V2"),
            ("workload.0.random_ms=0.02,", "gives no value"),
            ("seed=1,2", "use --seed"),
        ] {
            let e = parse_vary(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
        let many = format!(
            "machine.processors={}",
            (1..=101)
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(",")
        );
        assert!(parse_vary(&many).unwrap_err().contains("more than 100"));
    }

    #[test]
    fn names_files_safely_and_never_alike() {
        assert_eq!(file_safe("0.05"), "0.05");
        assert_eq!(file_safe("workload.0.random_ms"), "workload.0.random_ms");
        // Replaced characters: a hash keeps `a b` and `a/b` apart.
        let (space, slash) = (file_safe("a b"), file_safe("a/b"));
        assert!(space.starts_with("a_b-") && slash.starts_with("a_b-"));
        assert_ne!(space, slash);
        let long = "x".repeat(300);
        let named = file_safe(&long);
        assert!(named.len() <= 60, "{named}");
        assert_ne!(named, file_safe(&"x".repeat(301)));
    }

    #[test]
    fn refuses_a_value_set_twice() {
        let a = Setting::parse("workload.0.random_ms=0.05").unwrap();
        let b = Setting::parse("workload.0.search_ms=0.001").unwrap();
        assert!(check_distinct(&[a.clone(), b.clone()], &[]).is_ok());
        let e = check_distinct(std::slice::from_ref(&a), std::slice::from_ref(&a)).unwrap_err();
        assert!(e.contains("set the same value"), "{e}");
        let whole = Setting::parse("workload.0={ kind = \"x\" }").unwrap();
        assert!(check_distinct(std::slice::from_ref(&b), std::slice::from_ref(&whole)).is_err());
        // Two paths varied together, and one of them inside the other.
        assert!(check_distinct(&[], &[a.clone(), b.clone()]).is_ok());
        assert!(check_distinct(&[b], &[a, whole]).is_err());
    }

    #[test]
    fn a_grid_is_every_combination_first_axis_outermost() {
        let x = parse_vary("workload.0.random_ms=0.02,0.05").unwrap();
        let y = parse_vary("workload.0.send_ms=0.3,0.32,0.34").unwrap();
        let runs = grid(&[x.clone(), y.clone()]).unwrap();
        let labels: Vec<String> = runs.iter().map(|r| run_label(r)).collect();
        assert_eq!(labels.len(), 6);
        assert_eq!(
            labels[0],
            "workload.0.random_ms = 0.02, workload.0.send_ms = 0.3"
        );
        assert_eq!(
            labels[5],
            "workload.0.random_ms = 0.05, workload.0.send_ms = 0.34"
        );
        assert_eq!(grid(std::slice::from_ref(&x)).unwrap().len(), 2);
        // Each run is reproduced in full: a grid past MOST_VALUES runs is refused.
        let many: Vec<String> = (0..11).map(|v| v.to_string()).collect();
        let z = parse_vary(&format!("workload.0.gap_ms={}", many.join(","))).unwrap();
        let e = grid(&[z.clone(), z]).unwrap_err();
        assert!(e.contains("11 x 11") && e.contains("100"), "{e}");
    }

    #[test]
    fn paths_overlap_when_one_lies_inside_the_other() {
        assert!(overlap("workload.0.scheduler", "workload.0.scheduler"));
        // A table a sweep replaces whole, or a value inside the table set.
        assert!(overlap("workload.0.scheduler", "workload.0"));
        assert!(overlap("workload.0.scheduler", "workload.0.scheduler.x"));
        assert!(!overlap("workload.0.scheduler", "workload.0.client"));
        assert!(!overlap("workload.0.scheduler", "workload.1.scheduler"));
        // Segments, not prefixes of names.
        assert!(!overlap("workload.0.sched", "workload.0.scheduler"));
    }

    #[test]
    fn applies_settings_to_a_document() {
        let mut doc: toml::Table =
            toml::from_str("[[workload]]\nkind = \"x\"\nrandom_ms = 0.02\n").unwrap();
        apply(
            &mut doc,
            &[Setting::parse("workload.0.random_ms=0.09").unwrap()],
        )
        .unwrap();
        assert_eq!(doc["workload"][0]["random_ms"], toml::Value::Float(0.09));
        let e = apply(
            &mut doc,
            &[Setting::parse("workload.3.random_ms=1").unwrap()],
        )
        .unwrap_err();
        assert_eq!(e.0, "workload.3.random_ms");
        assert!(
            e.1.contains("not an index") && e.1.contains("--set"),
            "{}",
            e.1
        );
    }
}
