//! One REST or GraphQL call: the status mapped to forge's errors, the body read as JSON.

use forge_domain::ForgeError;
use http_body_util::BodyExt;
use octocrab::Octocrab;
use serde_json::Value;

/// How a request goes out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    Get,
    Post,
    Patch,
}

impl Method {
    fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Patch => "PATCH",
        }
    }
}

/// An authenticated GitHub API and where it lives.
#[derive(Clone)]
pub(crate) struct Api {
    client: Octocrab,
    /// Without a trailing slash: `https://api.github.com`, `https://HOST/api/v3`.
    base: String,
}

impl Api {
    pub(crate) fn new(client: Octocrab, base: &str) -> Self {
        Self {
            client,
            base: base.trim_end_matches('/').to_owned(),
        }
    }

    /// GitHub's GraphQL endpoint: `https://api.github.com/graphql`; on GitHub Enterprise
    /// Server `https://HOST/api/graphql` beside the REST API's `/api/v3`.
    pub(crate) fn graphql_url(&self) -> String {
        match self.base.strip_suffix("/api/v3") {
            Some(host) => format!("{host}/api/graphql"),
            None => format!("{}/graphql", self.base),
        }
    }

    /// `method` on `path` (below the base, starting with `/`), with a JSON body. `Ok(None)`
    /// for a 404 when `missing_ok` (a user who is no collaborator).
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] for a 404 or 422 (the forge understood and refused);
    /// [`ForgeError::Io`] for anything else: unreachable, another status, a body that is not
    /// JSON. The message names the method, the path and GitHub's own `message`.
    pub(crate) async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        missing_ok: bool,
    ) -> Result<Option<Value>, ForgeError> {
        let url = if path.starts_with("http") {
            path.to_owned()
        } else {
            format!("{}{path}", self.base)
        };
        let what = format!("github: {} {path}", method.as_str());
        let io = |message: String| ForgeError::Io {
            context: what.clone(),
            message,
        };
        let response = match method {
            Method::Get => self.client._get(url.as_str()).await,
            Method::Post => self.client._post(url.as_str(), body).await,
            Method::Patch => self.client._patch(url.as_str(), body).await,
        }
        .map_err(|e| io(error_text(&e)))?;
        let status = response.status();
        let bytes = response
            .into_body()
            .collect()
            .await
            .map_err(|e| io(format!("reading the answer: {}", error_text(&e))))?
            .to_bytes();
        if status.as_u16() == 404 && missing_ok {
            return Ok(None);
        }
        let json: Option<Value> = if bytes.is_empty() {
            Some(Value::Null)
        } else {
            serde_json::from_slice(&bytes).ok()
        };
        if status.is_success() {
            return json
                .map(Some)
                .ok_or_else(|| io(format!("{status}: the answer is not JSON")));
        }
        let reason = json.as_ref().map(github_reason).unwrap_or_default();
        let message = format!("{} {reason}", status.as_u16())
            .trim_end()
            .to_owned();
        if matches!(status.as_u16(), 404 | 422) {
            Err(ForgeError::InvalidRequest {
                reason: format!("{what}: {message}"),
            })
        } else {
            Err(io(message))
        }
    }

    /// A GraphQL mutation or query; its `data`.
    ///
    /// # Errors
    /// As [`Api::call`]; GraphQL's own `errors` are [`ForgeError::InvalidRequest`].
    pub(crate) async fn graphql(&self, query: &str, variables: Value) -> Result<Value, ForgeError> {
        let body = serde_json::json!({ "query": query, "variables": variables });
        let answer = self
            .call(Method::Post, &self.graphql_url(), Some(&body), false)
            .await?
            .unwrap_or_default();
        if let Some(errors) = answer.get("errors").and_then(Value::as_array) {
            let messages: Vec<&str> = errors
                .iter()
                .filter_map(|e| e.get("message").and_then(Value::as_str))
                .collect();
            return Err(ForgeError::InvalidRequest {
                reason: format!("github: graphql: {}", messages.join("; ")),
            });
        }
        Ok(answer.get("data").cloned().unwrap_or_default())
    }
}

/// GitHub's `message`, and each validation error's, e.g. `Validation Failed (A pull request
/// already exists for octo:forge/t-1.)`.
fn github_reason(body: &Value) -> String {
    let message = body.get("message").and_then(Value::as_str).unwrap_or("");
    let details: Vec<String> = body
        .get("errors")
        .and_then(Value::as_array)
        .map(|errors| {
            errors
                .iter()
                .filter_map(|e| {
                    e.get("message")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .or_else(|| e.get("code").and_then(Value::as_str).map(str::to_owned))
                })
                .collect()
        })
        .unwrap_or_default();
    if details.is_empty() {
        message.to_owned()
    } else {
        format!("{message} ({})", details.join("; "))
    }
}

/// An octocrab error's text with its causes; octocrab never puts the token in one.
fn error_text(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
