//! Tool arguments on their way to rmcp's deserialization, and the wording of what it
//! refuses.
//!
//! Model clients write whole numbers with a fraction now and then (`"limit": 10.0`,
//! Python's `json.dumps(10.0)`); JSON Schema's `integer` type accepts a number whose
//! fractional part is zero (JSON Schema 2020-12 validation §6.1.1), so folio does too.
//! serde's refusals name Rust types ("expected usize"); an agent is told the JSON it
//! should send instead.

use folio_core::serde_wording::{Format, plain};
use rmcp::model::JsonObject;
use serde_json::{Number, Value};

/// Turns each argument that `schema` (the tool's input schema) types as `integer` and
/// that holds a whole number written with a fraction (`10.0`) into that integer, at any
/// depth the schema describes (`properties`, `items`, `$ref` into `$defs`, `anyOf`,
/// `oneOf`, `allOf`): `kb_edit_table`'s `updates[].rowIndex` as much as `limit`. Numbers
/// with a fraction (`10.5`), beyond the exact range of a 64-bit float (2^53), and every
/// other value are left as they are.
pub fn whole_numbers_as_integers(arguments: &mut JsonObject, schema: &JsonObject) {
    let root = Value::Object(schema.clone());
    for (name, value) in arguments.iter_mut() {
        if let Some(property) = root.get("properties").and_then(|p| p.get(name)) {
            fix(value, property, &root, 0);
        }
    }
}

/// The deepest nesting of schemas followed (a `$ref` cycle ends here).
const MAX_DEPTH: usize = 32;

fn fix(value: &mut Value, schema: &Value, root: &Value, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    if let Some(target) = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/"))
        .and_then(|path| root.pointer(&format!("/{path}")))
    {
        fix(value, target, root, depth + 1);
    }
    for combinator in ["anyOf", "oneOf", "allOf"] {
        for branch in schema
            .get(combinator)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            fix(value, branch, root, depth + 1);
        }
    }
    match value {
        Value::Number(_) if wants_integer(schema) => {
            let Some(number) = value.as_f64().filter(|_| value.is_f64()) else {
                return;
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
        Value::Object(fields) => {
            if let Some(properties) = schema.get("properties") {
                for (name, field) in fields.iter_mut() {
                    if let Some(property) = properties.get(name) {
                        fix(field, property, root, depth + 1);
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = schema.get("items") {
                for element in items {
                    fix(element, item, root, depth + 1);
                }
            }
        }
        _ => {}
    }
}

fn wants_integer(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(types)) => types.iter().any(|t| t == "integer"),
        _ => false,
    }
}

/// serde's refusal of a tool's arguments, with the Rust types named as the JSON they
/// stand for (`expected u32` → `expected a whole number from 0 to 4294967295`; core
/// `serde_wording`, the rule settings files use too).
pub fn plain_wording(message: &str) -> String {
    plain(message, Format::Json)
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
        let schema = object(json!({
            "properties": {
                "limit": {"type": "integer"},
                "offset": {"type": ["integer", "null"]},
                "minScore": {"type": "number"},
                "depth": {"type": "integer"},
                "far": {"type": "integer"},
                "updates": {"type": "array", "items": {"$ref": "#/$defs/CellUpdate"}},
                "one": {"anyOf": [{"$ref": "#/$defs/CellUpdate"}, {"type": "null"}]},
            },
            "$defs": {"CellUpdate": {"type": "object", "properties": {
                "rowIndex": {"type": "integer"}, "value": {"type": "string"}
            }}}
        }));
        let mut args = object(json!({
            "limit": 10.0, "offset": -2.0, "minScore": 1.0, "depth": 1.5, "far": 1e300, "other": 3.0,
            "updates": [{"rowIndex": 1.0, "value": "2.0"}, {"rowIndex": 2.5}],
            "one": {"rowIndex": 4.0, "extra": 5.0},
        }));
        whole_numbers_as_integers(&mut args, &schema);
        // `json!` keeps `10` an integer and `1.0` a float: they are not equal.
        assert_eq!(
            Value::Object(args),
            json!({
                "limit": 10, "offset": -2, "minScore": 1.0, "depth": 1.5, "far": 1e300, "other": 3.0,
                "updates": [{"rowIndex": 1, "value": "2.0"}, {"rowIndex": 2.5}],
                "one": {"rowIndex": 4, "extra": 5.0},
            })
        );
        assert_ne!(json!(10), json!(10.0));
    }

    #[test]
    fn rust_types_are_named_as_json() {
        assert_eq!(
            plain_wording(
                "failed to deserialize parameters: invalid type: floating point `1.5`, expected usize"
            ),
            "failed to deserialize parameters: invalid type: floating point `1.5`, expected a whole number from 0 to 18446744073709551615"
        );
        assert_eq!(
            plain_wording("invalid value: integer `5000000000`, expected u32"),
            "invalid value: integer `5000000000`, expected a whole number from 0 to 4294967295"
        );
    }
}
