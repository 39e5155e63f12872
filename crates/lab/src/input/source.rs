//! An experiment file's text with an index from every key path to its line, so that errors found
//! after parsing (an unknown policy, a value out of range) still name the line they come from.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toml::de::{DeTable, DeValue};

use crate::input::error::{InputError, LabError};

/// Reads an experiment file: a regular file of UTF-8 text, at most
/// [`MAX_EXPERIMENT_BYTES`](smpsched_workloads::input::MAX_EXPERIMENT_BYTES); anything else
/// (a folder, a FIFO, a device, a huge or binary file) is bad input naming the file.
pub fn read_experiment(path: &Path) -> Result<String, InputError> {
    smpsched_workloads::input::read_text(path, smpsched_workloads::input::MAX_EXPERIMENT_BYTES)
        .map_err(|e| InputError {
            file: path.to_path_buf(),
            line: None,
            field: String::new(),
            message: format!("cannot read the experiment file: {e}"),
        })
}

/// A parsed experiment file: its path, text, value tree and key-path index.
#[derive(Debug)]
pub struct Source {
    path: PathBuf,
    text: String,
    /// Byte offset of each key path (`machine.processors`, `workload.0.threads`).
    offsets: BTreeMap<String, usize>,
}

impl Source {
    /// The folder of the file (for paths written in it, relative to it).
    pub fn folder(&self) -> &std::path::Path {
        self.path.parent().unwrap_or(std::path::Path::new(""))
    }

    /// Parses `text`, read from `path`, into a value tree and an index of its keys.
    pub fn parse(path: &Path, text: String) -> Result<(Source, toml::Table), InputError> {
        let mut src = Source {
            path: path.to_path_buf(),
            text,
            offsets: BTreeMap::new(),
        };
        let doc = match DeTable::parse(&src.text) {
            Ok(doc) => doc,
            Err(e) => {
                let line = e.span().map(|s| src.line_of(s.start));
                return Err(InputError {
                    file: src.path.clone(),
                    line,
                    field: String::new(),
                    message: format!("malformed TOML: {}", e.message().trim()),
                });
            }
        };
        let mut offsets = BTreeMap::new();
        index_table(doc.get_ref(), "", &mut offsets);
        src.offsets = offsets;
        let table: toml::Table = toml::from_str(&src.text).map_err(|e| {
            let at = e.span().map(|s| s.start);
            let message = e.message().trim();
            let message = if message.contains("integer") && message.contains("i128") {
                format!(
                    "this whole number is out of range: TOML integers run from {} to {}",
                    i64::MIN,
                    i64::MAX
                )
            } else {
                format!("malformed TOML: {message}")
            };
            InputError {
                file: src.path.clone(),
                line: at.map(|a| src.line_of(a)),
                field: at.and_then(|a| src.key_at(a)).unwrap_or_default(),
                message,
            }
        })?;
        Ok((src, table))
    }

    /// The key path written last at or before byte `offset` (the field a value error at that
    /// offset belongs to).
    pub fn key_at(&self, offset: usize) -> Option<String> {
        self.offsets
            .iter()
            .filter(|(_, &o)| o <= offset)
            .max_by_key(|(_, &o)| o)
            .map(|(k, _)| k.clone())
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// 1-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> usize {
        line_at(&self.text, offset)
    }

    /// Line of a key path, or of its closest enclosing key that appears in the file.
    pub fn line_of_key(&self, path: &str) -> Option<usize> {
        let mut p = path;
        loop {
            if let Some(&off) = self.offsets.get(p) {
                return Some(self.line_of(off));
            }
            p = &p[..p.rfind('.')?];
        }
    }

    /// An input error about `field`, located at that field's line.
    pub fn error(&self, field: &str, message: impl Into<String>) -> InputError {
        InputError {
            file: self.path.clone(),
            line: self.line_of_key(field),
            field: field.to_string(),
            message: message.into(),
        }
    }

    /// An input error about `field`, located at `line`.
    pub fn error_at(
        &self,
        line: Option<usize>,
        field: &str,
        message: impl Into<String>,
    ) -> InputError {
        InputError {
            file: self.path.clone(),
            line,
            field: field.to_string(),
            message: message.into(),
        }
    }
}

/// The 1-based line of byte `offset` of `text` (its last line past the end).
pub fn line_at(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

fn index_table(t: &DeTable<'_>, prefix: &str, out: &mut BTreeMap<String, usize>) {
    for (k, v) in t.iter() {
        let path = join(prefix, k.get_ref());
        out.entry(path.clone()).or_insert(k.span().start);
        index_value(v.get_ref(), v.span().start, &path, out);
    }
}

fn index_value(v: &DeValue<'_>, start: usize, path: &str, out: &mut BTreeMap<String, usize>) {
    match v {
        DeValue::Table(t) => index_table(t, path, out),
        DeValue::Array(a) => {
            for (i, item) in a.iter().enumerate() {
                let p = format!("{path}.{i}");
                out.entry(p.clone()).or_insert(item.span().start.max(start));
                index_value(item.get_ref(), item.span().start, &p, out);
            }
        }
        _ => {}
    }
}

/// Splits a `toml` deserialization error into the key path it names (relative to the value that
/// was deserialized) and its message. `toml` reports the path only in its text ("in `a.b`"), and
/// unknown fields only in the message; validation errors raised by policies and workloads follow
/// the convention `field: message`.
pub fn split_de_error(e: &toml::de::Error) -> (String, String) {
    let message = e.message().trim().to_string();
    let text = e.to_string();
    if let Some(rest) = text.lines().find_map(|l| l.strip_prefix("in `")) {
        if let Some(path) = rest.strip_suffix('`') {
            return (path.to_string(), message);
        }
    }
    if let Some(rest) = message.strip_prefix("unknown field `") {
        if let Some(end) = rest.find('`') {
            return (rest[..end].to_string(), message);
        }
    }
    if let Some(rest) = message.strip_prefix("missing field `") {
        if let Some(end) = rest.find('`') {
            return (rest[..end].to_string(), "required, but missing".into());
        }
    }
    if let Some((field, rest)) = message.split_once(": ") {
        let is_key = !field.is_empty()
            && field
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
        if is_key {
            return (field.to_string(), rest.to_string());
        }
    }
    (String::new(), message)
}

/// The `.toml` files under `dir`, sorted by path, and what could not be read on the way (a
/// link to a folder or to nothing, an unreadable folder), each with why. An absent or
/// unreadable `dir` itself is an error naming it.
pub fn find_experiment_files(dir: &Path) -> Result<(Vec<PathBuf>, Skipped), LabError> {
    std::fs::read_dir(dir).map_err(|e| LabError::io(dir, e))?;
    Ok(smpsched_workloads::input::files_under(dir, "toml"))
}

/// What a walk over experiment files passed over: (path, why).
pub type Skipped = Vec<(PathBuf, String)>;

/// Every `.toml` file under `dir`, sorted by path (links to folders are not followed).
pub fn experiment_files(dir: &Path) -> Result<Vec<PathBuf>, LabError> {
    Ok(find_experiment_files(dir)?.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "name = \"x\"\n\n[machine]\npreset = \"tango-12\"\nprocessors = 4\n\n\
                        [[workload]]\nkind = \"synthetic\"\nthreads = 3\n\n[[workload]]\nkind = \"b\"\n";

    #[test]
    fn keys_map_to_lines() {
        let (src, _) = Source::parse(Path::new("f.toml"), TEXT.into()).unwrap();
        assert_eq!(src.line_of_key("name"), Some(1));
        assert_eq!(src.line_of_key("machine.processors"), Some(5));
        assert_eq!(src.line_of_key("workload.0.threads"), Some(9));
        assert_eq!(src.line_of_key("workload.1.kind"), Some(12));
        // A key absent from the file falls back to its enclosing table.
        assert_eq!(src.line_of_key("machine.slice_cycles"), Some(3));
    }

    #[test]
    fn syntax_errors_carry_a_line() {
        let e = Source::parse(Path::new("f.toml"), "a = 1\nb = = 2\n".into()).unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.to_string().starts_with("f.toml:2:"), "{e}");
    }

    #[test]
    fn de_error_paths_are_recovered() {
        #[derive(serde::Deserialize, Debug)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct S {
            a: u32,
        }
        let v: toml::Value = toml::from_str::<toml::Table>("a = \"x\"").unwrap().into();
        let e = S::deserialize_from(v);
        assert_eq!(split_de_error(&e).0, "a");
        let v: toml::Value = toml::from_str::<toml::Table>("a = 1\nb = 2")
            .unwrap()
            .into();
        let e = S::deserialize_from(v);
        assert_eq!(split_de_error(&e).0, "b");
        let v: toml::Value = toml::Table::new().into();
        let e = S::deserialize_from(v);
        assert_eq!(split_de_error(&e).0, "a", "a missing field is named");
    }

    trait From2: Sized {
        fn deserialize_from(v: toml::Value) -> toml::de::Error;
    }
    impl<T: serde::de::DeserializeOwned + std::fmt::Debug> From2 for T {
        fn deserialize_from(v: toml::Value) -> toml::de::Error {
            v.try_into::<T>().unwrap_err()
        }
    }
}
