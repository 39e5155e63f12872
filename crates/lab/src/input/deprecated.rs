//! Notes on deprecated parameter names (the slice had four names and three units; it
//! is `slice_ms` now). Wherever an experiment file writes a `[scheduler]` or `[machine]` key, in
//! its table, a sweep's dotted path or a point's or reproduction's `set` table, an old name still
//! accepted ([`smpsched_sim::sched::params::DEPRECATED`]) gets a note naming the file, the
//! line and the field, and what to write instead. The runs go on unchanged.

use smpsched_sim::sched::params::deprecation;

use crate::input::source::Source;

/// A note for each deprecated name `table` (the file's document) writes, in file order.
pub fn notes(src: &Source, table: &toml::Table) -> Vec<String> {
    let mut found = Vec::new();
    walk(table, "", &mut Vec::new(), &mut found);
    found.sort_by_key(|(path, _)| src.line_of_key(path));
    found
        .into_iter()
        .map(|(path, instead)| {
            let line = src
                .line_of_key(&path)
                .map_or_else(String::new, |l| format!(":{l}"));
            format!(
                "note: {}{line}: `{}` is deprecated; write {instead}",
                src.path().display(),
                field_of(&path)
            )
        })
        .collect()
}

/// Collects `(key path, what to write instead)` for every deprecated name under `t`; `parts`
/// are the path's components with sweep keys' dots split, so `"scheduler.quantum"` in `[sweep]`
/// is seen as a `scheduler` key.
fn walk(
    t: &toml::Table,
    path: &str,
    parts: &mut Vec<String>,
    found: &mut Vec<(String, &'static str)>,
) {
    for (k, v) in t {
        let p = if path.is_empty() {
            k.clone()
        } else {
            format!("{path}.{k}")
        };
        let depth = parts.len();
        parts.extend(k.split('.').map(str::to_string));
        if let [.., table, name] = parts.as_slice() {
            if let Some(d) = deprecation(table, name) {
                found.push((p.clone(), d.instead));
            }
        }
        match v {
            toml::Value::Table(inner) => walk(inner, &p, parts, found),
            toml::Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    if let toml::Value::Table(inner) = item {
                        walk(inner, &format!("{p}.{i}"), parts, found);
                    }
                }
            }
            _ => {}
        }
        parts.truncate(depth);
    }
}

/// A note for each deprecated name a setting from the command line writes (`--set
/// scheduler.quantum=...`, `--vary`), as the file's own get.
pub fn setting_notes(settings: &[crate::input::setting::Setting]) -> Vec<String> {
    settings
        .iter()
        .filter_map(|s| {
            let parts: Vec<&str> = s.path.split('.').collect();
            let [.., table, name] = parts.as_slice() else {
                return None;
            };
            deprecation(table, name).map(|d| {
                format!(
                    "note: --set `{}` (from the command line) is deprecated; write {}",
                    field_of(&s.path),
                    d.instead
                )
            })
        })
        .collect()
}

/// The field as a user reads it: the key path without array indices.
fn field_of(path: &str) -> String {
    path.split('.')
        .filter(|c| c.parse::<usize>().is_err())
        .collect::<Vec<_>>()
        .join(".")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deprecated_name_set_from_the_command_line_gets_its_note() {
        use crate::input::setting::Setting;
        let set = |t: &str| Setting::parse(t).unwrap();
        let notes = setting_notes(&[
            set("scheduler.quantum=50000"),
            set("machine.processors=4"),
            set("machine.slice_cycles=5"),
        ]);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[0].contains("`scheduler.quantum`") && notes[0].contains("slice_ms"));
        assert!(notes[1].contains("`machine.slice_cycles`"));
    }

    #[test]
    fn old_slice_names_are_noted_wherever_written_and_new_ones_are_not() {
        let text = "name = \"d\"\n\
                    [scheduler]\n\
                    policy = \"round-robin\"\n\
                    quantum = 10000\n\
                    [sweep]\n\
                    \"scheduler.quantum_ticks\" = [1, 2]\n\
                    \"scheduler.slice_ms\" = [1.0]\n\
                    [[point]]\n\
                    set = { scheduler = { quantum = 5 } }\n\
                    [[point]]\n\
                    set = { \"machine.slice_cycles\" = 5, \"machine.slice_ms\" = 1 }\n";
        let (src, table) = Source::parse(std::path::Path::new("d.toml"), text.into()).unwrap();
        let notes = notes(&src, &table);
        assert_eq!(notes.len(), 4, "{notes:#?}");
        assert!(notes[0]
            .starts_with("note: d.toml:4: `scheduler.quantum` is deprecated; write `slice_ms`"));
        assert!(
            notes[1].starts_with("note: d.toml:6: `sweep.scheduler.quantum_ticks` is deprecated")
        );
        assert!(notes[2].starts_with("note: d.toml:9: `point.set.scheduler.quantum` is deprecated"));
        assert!(
            notes[3].starts_with("note: d.toml:11: `point.set.machine.slice_cycles` is deprecated")
        );
    }
}
