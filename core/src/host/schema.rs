//! JSON Schemas of the host's request and result types: the rule that keeps them
//! portable across MCP clients.

/// Makes an argument schema portable: an optional field is described by its own type
/// (`"type": "string"`, not `["string", "null"]`) with no `"default": null`, since
/// leaving it out is how a caller omits it. Applied to every argument struct.
pub fn portable_schema(schema: &mut schemars::Schema) {
    if let Some(obj) = schema.as_object_mut() {
        if let Some(serde_json::Value::Array(types)) = obj.get("type") {
            let non_null: Vec<serde_json::Value> = types
                .iter()
                .filter(|t| t.as_str() != Some("null"))
                .cloned()
                .collect();
            if non_null.len() == 1 && non_null.len() < types.len() {
                obj.insert("type".into(), non_null[0].clone());
            }
        }
        if obj.get("default") == Some(&serde_json::Value::Null) {
            obj.remove("default");
        }
        if let Some(serde_json::Value::Array(any)) = obj.get("anyOf") {
            let non_null: Vec<serde_json::Value> = any
                .iter()
                .filter(|s| s.get("type").and_then(|t| t.as_str()) != Some("null"))
                .cloned()
                .collect();
            if non_null.len() == 1 && non_null.len() < any.len() {
                obj.remove("anyOf");
                if let serde_json::Value::Object(inner) = &non_null[0] {
                    for (k, v) in inner {
                        obj.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
            }
        }
        // An enum of strings may list `null` among its values.
        if let Some(serde_json::Value::Array(values)) = obj.get_mut("enum") {
            values.retain(|v| !v.is_null());
        }
    }
    schemars::transform::transform_subschemas(&mut portable_schema, schema);
}

/// The formats JSON Schema 2020-12 defines (Validation, section 7.3).
pub const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Removes every `format` JSON Schema does not define ([`STANDARD_FORMATS`]) from a
/// schema and its subschemas: schemars writes `uint32`, `uint`, `int64`, `double` and the
/// like after Rust's types, which validators ignore and some clients (the MCP Inspector)
/// warn about. The bounds that matter stay as `minimum` / `maximum`.
pub fn drop_nonstandard_formats(schema: &mut serde_json::Value) {
    match schema {
        serde_json::Value::Object(obj) => {
            let nonstandard = obj
                .get("format")
                .and_then(|f| f.as_str())
                .is_some_and(|f| !STANDARD_FORMATS.contains(&f));
            // A property named `format` is a schema, not a format keyword.
            if nonstandard {
                obj.remove("format");
            }
            for value in obj.values_mut() {
                drop_nonstandard_formats(value);
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(drop_nonstandard_formats),
        _ => {}
    }
}

/// Keywords that describe a schema rather than constrain a value: they stay on the
/// outside when [`split_nullable_types`] splits a schema.
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];

/// Rewrites every `"type": [T, "null"]` in a schema and its subschemas as
/// `"anyOf": [{"type": T, …}, {"type": "null"}]`, the constraints of `T` (bounds,
/// formats, items, properties) going into its branch: JSON Schema allows a type array,
/// but clients that map tool schemas onto a one-type dialect (the OpenAPI subset of some
/// model providers) reject it; the MCP Inspector recommends this form. Output schemas
/// need it: a result field that is `null` is not the same as one left out.
pub fn split_nullable_types(schema: &mut serde_json::Value) {
    match schema {
        serde_json::Value::Object(obj) => {
            for value in obj.values_mut() {
                split_nullable_types(value);
            }
            let Some(serde_json::Value::Array(types)) = obj.get("type") else {
                return;
            };
            let non_null: Vec<serde_json::Value> = types
                .iter()
                .filter(|t| t.as_str() != Some("null"))
                .cloned()
                .collect();
            if non_null.len() != 1 || types.len() != 2 || obj.contains_key("anyOf") {
                return;
            }
            let mut branch = serde_json::Map::new();
            let keys: Vec<String> = obj.keys().cloned().collect();
            for key in keys {
                if !ANNOTATIONS.contains(&key.as_str()) {
                    let value = obj.remove(&key).expect("listed above");
                    branch.insert(key, value);
                }
            }
            branch.insert("type".into(), non_null[0].clone());
            obj.insert(
                "anyOf".into(),
                serde_json::json!([branch, {"type": "null"}]),
            );
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(split_nullable_types),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nullable_type_array_becomes_any_of_with_its_constraints_in_the_branch() {
        let mut schema = serde_json::json!({
            "type": "object",
            "properties": {
                "n": {"description": "A count.", "type": ["integer", "null"], "minimum": 0},
                "s": {"type": "string"},
                "both": {"type": ["string", "integer"]}
            }
        });
        split_nullable_types(&mut schema);
        assert_eq!(
            schema,
            serde_json::json!({
                "type": "object",
                "properties": {
                    "n": {"description": "A count.", "anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]},
                    "s": {"type": "string"},
                    "both": {"type": ["string", "integer"]}
                }
            })
        );
    }

    #[test]
    fn nonstandard_formats_go_and_standard_ones_and_properties_named_format_stay() {
        let mut schema = serde_json::json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "format": "uint32", "minimum": 0},
                "when": {"type": "string", "format": "date-time"},
                "format": {"type": "string"},
                "list": {"type": "array", "items": {"type": "number", "format": "double"}}
            },
            "$defs": {"X": {"anyOf": [{"type": "integer", "format": "uint"}, {"type": "null"}]}}
        });
        drop_nonstandard_formats(&mut schema);
        assert_eq!(
            schema,
            serde_json::json!({
                "type": "object",
                "properties": {
                    "n": {"type": "integer", "minimum": 0},
                    "when": {"type": "string", "format": "date-time"},
                    "format": {"type": "string"},
                    "list": {"type": "array", "items": {"type": "number"}}
                },
                "$defs": {"X": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}
            })
        );
    }
}
