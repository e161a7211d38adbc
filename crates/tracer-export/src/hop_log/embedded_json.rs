//! A JSON body inside a hop log, kept as compact text until the log is written: the document
//! still embeds it as JSON (each body parsed only while it is written), but a loaded log holds
//! about one copy of each body's bytes, not a `serde_json::Value` tree five times their size.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// One body's JSON value as compact text (key order kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EmbeddedJson(String);

impl EmbeddedJson {
    pub(crate) fn of(value: &Value) -> Self {
        EmbeddedJson(value.to_string())
    }

    /// The value again (parsed from the compact text this holds).
    pub(crate) fn value(&self) -> Result<Value, String> {
        serde_json::from_str(&self.0).map_err(|e| format!("json: {e}"))
    }
}

impl Serialize for EmbeddedJson {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value()
            .map_err(serde::ser::Error::custom)?
            .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for EmbeddedJson {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(|value| EmbeddedJson::of(&value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_written_as_the_json_it_holds_in_its_key_order() {
        let value: Value = serde_json::from_str(r#"{"z":1,"a":[1.5,"x",{"b":null}]}"#).unwrap();
        let embedded = EmbeddedJson::of(&value);
        assert_eq!(embedded.value().unwrap(), value);
        let pretty =
            serde_json::to_string_pretty(&serde_json::json!({ "json": embedded })).unwrap();
        let direct = serde_json::to_string_pretty(&serde_json::json!({ "json": value })).unwrap();
        assert_eq!(pretty, direct);
        assert!(pretty.find("\"z\"") < pretty.find("\"a\""));
        let back: EmbeddedJson = serde_json::from_str(&embedded.0).unwrap();
        assert_eq!(back, embedded);
    }
}
