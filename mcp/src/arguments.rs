//! Tool arguments on their way to rmcp's deserialization, and the wording of what it
//! refuses.
//!
//! Model clients write whole numbers with a fraction now and then (`"limit": 10.0`,
//! Python's `json.dumps(10.0)`); JSON Schema's `integer` type accepts a number whose
//! fractional part is zero (JSON Schema 2020-12 validation §6.1.1), so folio does too.
//! serde's refusals name Rust types ("expected usize"); an agent is told the JSON it
//! should send instead.

use rmcp::model::JsonObject;
use serde_json::{Number, Value};

/// Turns each top-level argument that `schema` (the tool's input schema) types as
/// `integer` and that holds a whole number written with a fraction (`10.0`) into that
/// integer. Numbers with a fraction (`10.5`), out of the exact range of a 64-bit float
/// (beyond 2^53), and every other argument are left as they are.
pub fn whole_numbers_as_integers(arguments: &mut JsonObject, schema: &JsonObject) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, value) in arguments.iter_mut() {
        let wants_integer = properties
            .get(name)
            .and_then(|p| p.get("type"))
            .is_some_and(|t| match t {
                Value::String(t) => t == "integer",
                Value::Array(types) => types.iter().any(|t| t == "integer"),
                _ => false,
            });
        if !wants_integer {
            continue;
        }
        let Some(number) = value.as_f64().filter(|_| value.is_f64()) else {
            continue;
        };
        const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
        if number.fract() == 0.0 && number.abs() <= EXACT {
            *value = Value::Number(if number >= 0.0 {
                Number::from(number as u64)
            } else {
                Number::from(number as i64)
            });
        }
    }
}

/// serde's refusal of a tool's arguments, with the Rust integer types named as the JSON
/// they stand for (`expected usize` → `expected a whole number of 0 or more`).
pub fn plain_wording(message: &str) -> String {
    let mut out = message.to_string();
    for unsigned in ["usize", "u64", "u32", "u16", "u8"] {
        out = out.replace(
            &format!("expected {unsigned}"),
            "expected a whole number of 0 or more",
        );
    }
    for signed in ["isize", "i64", "i32", "i16", "i8"] {
        out = out.replace(&format!("expected {signed}"), "expected a whole number");
    }
    out.replace("expected f64", "expected a number")
        .replace("expected f32", "expected a number")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(v: Value) -> JsonObject {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn whole_numbers_become_integers_where_the_schema_asks_for_one() {
        let schema = object(json!({"properties": {
            "limit": {"type": "integer"},
            "offset": {"type": ["integer", "null"]},
            "minScore": {"type": "number"},
            "depth": {"type": "integer"},
            "far": {"type": "integer"},
        }}));
        let mut args = object(json!({
            "limit": 10.0, "offset": -2.0, "minScore": 1.0, "depth": 1.5, "far": 1e300, "other": 3.0
        }));
        whole_numbers_as_integers(&mut args, &schema);
        // `json!` keeps `10` an integer and `1.0` a float: they are not equal.
        assert_eq!(
            Value::Object(args),
            json!({"limit": 10, "offset": -2, "minScore": 1.0, "depth": 1.5, "far": 1e300, "other": 3.0})
        );
        assert_ne!(json!(10), json!(10.0));
    }

    #[test]
    fn rust_types_are_named_as_json() {
        assert_eq!(
            plain_wording(
                "failed to deserialize parameters: invalid type: floating point `1.5`, expected usize"
            ),
            "failed to deserialize parameters: invalid type: floating point `1.5`, expected a whole number of 0 or more"
        );
        assert_eq!(
            plain_wording("invalid value: integer `-1`, expected u32"),
            "invalid value: integer `-1`, expected a whole number of 0 or more"
        );
    }
}
