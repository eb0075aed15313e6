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
