//! GitHub's published OpenAPI description (npm `@octokit/openapi`,
//! `generated/api.github.com.json`), the contract the fake GitHub holds every request to:
//! the request must be an operation of the description (method and path template), name only
//! query parameters the operation declares, and carry a body its schema accepts.
//!
//! The description is not committed: [`ensure_installed`] installs the pinned package with
//! npm into the target directory on first use, as the e2e suite installs the CLIs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Map, Value};

/// The pinned package.
pub const OPENAPI_PACKAGE: &str = "@octokit/openapi@23.0.2";
/// Overrides where the description is read from.
pub const OPENAPI_ENV: &str = "FORGE_GITHUB_OPENAPI";
const DESCRIPTION: &str = "node_modules/@octokit/openapi/generated/api.github.com.json";

/// Where the description is installed: `$FORGE_GITHUB_OPENAPI`, else
/// `<target>/contracts/github/…/api.github.com.json`.
pub fn description_path() -> PathBuf {
    if let Some(path) = std::env::var_os(OPENAPI_ENV) {
        return PathBuf::from(path);
    }
    install_dir().join(DESCRIPTION)
}

fn install_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"),
        PathBuf::from,
    );
    target.join("contracts/github")
}

/// Installs the description with npm when it is not there yet; its path.
///
/// # Errors
/// A message with npm's output when npm cannot run or the file is still missing.
pub fn ensure_installed() -> Result<PathBuf, String> {
    let path = description_path();
    if path.is_file() {
        return Ok(path);
    }
    let dir = install_dir();
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let out = Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--no-save",
            "--prefix",
        ])
        .arg(&dir)
        .arg(OPENAPI_PACKAGE)
        .output()
        .map_err(|e| format!("running npm to install {OPENAPI_PACKAGE}: {e}"))?;
    if !out.status.success() || !path.is_file() {
        return Err(format!(
            "npm install {OPENAPI_PACKAGE} into {} failed ({}):\n{}{}",
            dir.display(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(path)
}

/// One operation of the description.
#[derive(Debug, Clone)]
pub struct Operation {
    pub id: String,
    /// The query parameters it declares.
    pub query: Vec<String>,
    /// The JSON body's schema, `$ref`s inlined; `None` when it takes no body.
    pub body: Option<Value>,
    pub body_required: bool,
}

/// The operations, by method and path template.
pub struct OpenApi {
    /// `(METHOD, segments of the template)` → operation.
    operations: Vec<(String, Vec<String>, Operation)>,
}

impl OpenApi {
    /// Reads the description at `path`.
    ///
    /// # Errors
    /// A message when the file cannot be read or is not an OpenAPI description.
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        let doc: Value = serde_json::from_slice(&text)
            .map_err(|e| format!("parsing {}: {e}", path.display()))?;
        Self::from_document(&doc)
    }

    /// The operations of a parsed description.
    ///
    /// # Errors
    /// A message when it has no `paths`.
    pub fn from_document(doc: &Value) -> Result<Self, String> {
        let paths = doc
            .get("paths")
            .and_then(Value::as_object)
            .ok_or("the description has no paths")?;
        let mut operations = Vec::new();
        for (template, item) in paths {
            let Some(item) = item.as_object() else {
                continue;
            };
            let shared = item.get("parameters").cloned().unwrap_or_default();
            for (method, op) in item {
                if !matches!(method.as_str(), "get" | "post" | "patch" | "put" | "delete") {
                    continue;
                }
                let mut query = Vec::new();
                for p in shared
                    .as_array()
                    .into_iter()
                    .chain(op.get("parameters").and_then(Value::as_array))
                    .flatten()
                {
                    let p = resolve(doc, p, 0);
                    if p.get("in").and_then(Value::as_str) == Some("query") {
                        if let Some(name) = p.get("name").and_then(Value::as_str) {
                            query.push(name.to_owned());
                        }
                    }
                }
                let request = op.get("requestBody").map(|b| resolve(doc, b, 0));
                let body = request
                    .as_ref()
                    .and_then(|b| b.pointer("/content/application~1json/schema"))
                    .map(|s| resolve(doc, s, 0));
                operations.push((
                    method.to_ascii_uppercase(),
                    template
                        .trim_matches('/')
                        .split('/')
                        .map(str::to_owned)
                        .collect(),
                    Operation {
                        id: op
                            .get("operationId")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_owned(),
                        query,
                        body,
                        body_required: request
                            .as_ref()
                            .and_then(|b| b.get("required"))
                            .and_then(Value::as_bool)
                            .unwrap_or(false),
                    },
                ));
            }
        }
        Ok(Self { operations })
    }

    /// The operation `method path` is, with the path's parameters (`owner` → `octo`).
    pub fn operation(
        &self,
        method: &str,
        path: &str,
    ) -> Option<(&Operation, BTreeMap<String, String>)> {
        let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
        // A literal segment beats a parameter: `/pulls/comments` is not `/pulls/{number}`.
        let mut best: Option<(usize, &Operation, BTreeMap<String, String>)> = None;
        for (m, template, op) in &self.operations {
            if m != method || template.len() != segments.len() {
                continue;
            }
            let mut params = BTreeMap::new();
            let mut literal = 0;
            let fits = template.iter().zip(&segments).all(|(t, s)| {
                if let Some(name) = t.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
                    params.insert(name.to_owned(), (*s).to_owned());
                    !s.is_empty()
                } else {
                    literal += 1;
                    t == s
                }
            });
            if fits && best.as_ref().is_none_or(|(l, ..)| literal > *l) {
                best = Some((literal, op, params));
            }
        }
        best.map(|(_, op, params)| (op, params))
    }

    /// What is wrong with a request: empty when it is an operation of the description with
    /// declared query parameters and a body its schema accepts.
    pub fn violations(&self, method: &str, path_and_query: &str, body: &[u8]) -> Vec<String> {
        let (path, query) = path_and_query
            .split_once('?')
            .unwrap_or((path_and_query, ""));
        let what = format!("{method} {path}");
        let Some((op, _)) = self.operation(method, path) else {
            return vec![format!("{what} is no operation of GitHub's REST API")];
        };
        let mut wrong = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let name = pair.split_once('=').map_or(pair, |(n, _)| n);
            if !op.query.iter().any(|q| q == name) {
                wrong.push(format!(
                    "{what} ({}): query parameter {name:?} is not declared",
                    op.id
                ));
            }
        }
        match (&op.body, body.is_empty()) {
            (Some(_), true) if op.body_required => {
                wrong.push(format!("{what} ({}): the body is required", op.id));
            }
            (None, false) => wrong.push(format!("{what} ({}): takes no body", op.id)),
            (Some(schema), false) => match serde_json::from_slice::<Value>(body) {
                Err(e) => wrong.push(format!("{what} ({}): the body is not JSON: {e}", op.id)),
                Ok(instance) => match jsonschema::validator_for(schema) {
                    Err(e) => wrong.push(format!("{what} ({}): schema: {e}", op.id)),
                    Ok(validator) => {
                        for e in validator.iter_errors(&instance) {
                            wrong.push(format!(
                                "{what} ({}): the body {}: {e}",
                                op.id,
                                e.instance_path()
                            ));
                        }
                    }
                },
            },
            _ => {}
        }
        wrong
    }
}

/// `value` with every `$ref` into the document inlined and OpenAPI 3.0's `nullable: true`
/// turned into JSON Schema's `null` type; recursion is cut at a depth no request body needs
/// (the description's schemas refer to themselves).
fn resolve(doc: &Value, value: &Value, depth: usize) -> Value {
    const MAX_DEPTH: usize = 12;
    match value {
        Value::Object(map) => {
            if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
                if depth >= MAX_DEPTH {
                    return Value::Object(Map::new());
                }
                let target = reference
                    .strip_prefix('#')
                    .and_then(|pointer| doc.pointer(pointer))
                    .cloned()
                    .unwrap_or_default();
                return resolve(doc, &target, depth + 1);
            }
            let mut out = Map::new();
            for (key, v) in map {
                // Examples are documentation, and hold `$ref`-free JSON of any shape.
                if matches!(key.as_str(), "example" | "examples" | "description") {
                    continue;
                }
                out.insert(key.clone(), resolve(doc, v, depth));
            }
            if out.remove("nullable") == Some(Value::Bool(true)) {
                if let Some(Value::String(t)) = out.get("type").cloned() {
                    out.insert("type".into(), serde_json::json!([t, "null"]));
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| resolve(doc, v, depth)).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A description in small, with GitHub's shapes: a `$ref`'d parameter, a nullable field.
    fn tiny() -> OpenApi {
        OpenApi::from_document(&json!({
            "openapi": "3.0.3",
            "paths": {
                "/repos/{owner}/{repo}/pulls": {
                    "get": {"operationId": "pulls/list", "parameters": [
                        {"$ref": "#/components/parameters/owner"},
                        {"name": "head", "in": "query", "schema": {"type": "string"}}]},
                    "post": {"operationId": "pulls/create", "requestBody": {"required": true,
                        "content": {"application/json": {"schema": {"type": "object",
                            "properties": {"title": {"type": "string"}, "draft": {"type": "boolean"},
                                           "body": {"type": "string", "nullable": true}},
                            "required": ["head", "base"]}}}}}
                },
                "/repos/{owner}/{repo}/pulls/comments": {"get": {"operationId": "pulls/list-review-comments-for-repo"}},
                "/repos/{owner}/{repo}/pulls/{pull_number}": {"get": {"operationId": "pulls/get"}}
            },
            "components": {"parameters": {"owner": {"name": "owner", "in": "path"}}}
        }))
        .unwrap()
    }

    #[test]
    fn requests_that_fit_and_look_alikes() {
        let api = tiny();
        let check = |method: &str, path: &str, body: &str, want: &[&str]| {
            assert_eq!(
                api.violations(method, path, body.as_bytes()),
                want,
                "{method} {path} {body}"
            );
        };
        check("GET", "/repos/o/r/pulls?head=o:b", "", &[]);
        check(
            "POST",
            "/repos/o/r/pulls",
            r#"{"head":"b","base":"main","draft":true,"body":null}"#,
            &[],
        );
        check("GET", "/repos/o/r/pulls/comments", "", &[]);
        check("GET", "/repos/o/r/pulls/7", "", &[]);
        check(
            "DELETE",
            "/repos/o/r/pulls/7",
            "",
            &["DELETE /repos/o/r/pulls/7 is no operation of GitHub's REST API"],
        );
        check(
            "GET",
            "/repos/o/pulls",
            "",
            &["GET /repos/o/pulls is no operation of GitHub's REST API"],
        );
        check(
            "GET",
            "/repos/o/r/pulls?heads=x",
            "",
            &["GET /repos/o/r/pulls (pulls/list): query parameter \"heads\" is not declared"],
        );
        check(
            "POST",
            "/repos/o/r/pulls",
            "",
            &["POST /repos/o/r/pulls (pulls/create): the body is required"],
        );
        check(
            "POST",
            "/repos/o/r/pulls",
            r#"{"head":"b","base":"main","draft":"yes"}"#,
            &[
                "POST /repos/o/r/pulls (pulls/create): the body /draft: \"yes\" is not of type \"boolean\"",
            ],
        );
        check(
            "POST",
            "/repos/o/r/pulls",
            r#"{"head":"b"}"#,
            &["POST /repos/o/r/pulls (pulls/create): the body : \"base\" is a required property"],
        );
        check(
            "GET",
            "/repos/o/r/pulls/7",
            "{}",
            &["GET /repos/o/r/pulls/7 (pulls/get): takes no body"],
        );
        let (op, params) = api.operation("GET", "/repos/octo/hello/pulls/7").unwrap();
        assert_eq!(op.id, "pulls/get");
        assert_eq!(params["pull_number"], "7");
    }
}
