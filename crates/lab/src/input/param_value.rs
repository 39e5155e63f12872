//! A value a point sets (a swept or named-point parameter), kept as the file typed it beside
//! the label results show, so that a plot's axis reads the number itself rather than parsing
//! the label back.

use crate::input::sweep::value_label;

/// A value a point sets: as the file wrote it, with its label in results and point names.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamValue {
    value: toml::Value,
    label: String,
}

/// Written as its label, as results have always shown it.
impl serde::Serialize for ParamValue {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.label)
    }
}

impl ParamValue {
    /// The value `v`, labelled as point names show it (a table by its `name`, or its `policy`
    /// or `kind` with its other values).
    pub fn new(v: toml::Value) -> ParamValue {
        ParamValue {
            label: value_label(&v),
            value: v,
        }
    }

    /// Its label, as results and point names show it.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The value as a number, when it is one (an integer or a float).
    pub fn number(&self) -> Option<f64> {
        match self.value {
            toml::Value::Integer(i) => Some(i as f64),
            toml::Value::Float(f) => Some(f),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_read_typed_and_labels_are_those_of_point_names() {
        let v =
            |text: &str| ParamValue::new(toml::from_str::<toml::Table>(text).unwrap()["v"].clone());
        assert_eq!(v("v = 40.0").number(), Some(40.0));
        assert_eq!(v("v = 40.0").label(), "40.0");
        assert_eq!(v("v = 8").number(), Some(8.0));
        // A string that reads as a number is still a string.
        assert_eq!(v("v = \"8\"").number(), None);
        assert_eq!(v("v = \"8\"").label(), "8");
        assert_eq!(v("v = { policy = \"mach\" }").label(), "mach");
        assert_eq!(
            v("v = { policy = \"mach\", ipi = true }").label(),
            "mach(ipi=true)"
        );
        assert_eq!(v("v = { name = \"x\", policy = \"mach\" }").label(), "x");
    }
}
