//! MLflow's REST API, as the export calls it: JSON in and out, each
//! failure told with the server's address and what was being done.

use std::time::Duration;

use serde_json::Value as Json;

use super::MlflowError;

/// How long one request may take before the server counts as unreachable.
const TIMEOUT: Duration = Duration::from_secs(60);

/// A tracking server at one address.
pub(super) struct Client {
    agent: ureq::Agent,
    /// The address as given, for messages.
    uri: String,
    /// The address without a trailing `/`, for paths.
    base: String,
    /// `MLFLOW_TRACKING_TOKEN`, sent as a bearer token, as MLflow's own
    /// clients send it.
    token: Option<String>,
}

impl Client {
    pub(super) fn new(uri: &str) -> Result<Self, MlflowError> {
        if !(uri.starts_with("http://") || uri.starts_with("https://")) {
            return Err(MlflowError::NotHttp {
                uri: uri.to_owned(),
            });
        }
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(TIMEOUT))
            // The server's error body names what it refused.
            .http_status_as_error(false)
            .build()
            .into();
        Ok(Self {
            agent,
            uri: uri.to_owned(),
            base: uri.trim_end_matches('/').to_owned(),
            token: std::env::var("MLFLOW_TRACKING_TOKEN")
                .ok()
                .filter(|t| !t.is_empty()),
        })
    }

    /// The address as given.
    pub(super) fn uri(&self) -> &str {
        &self.uri
    }

    /// `GET /api/2.0/mlflow/{path}?{query}`; `None` where the server says
    /// the thing does not exist.
    pub(super) fn get(
        &self,
        path: &str,
        query: &[(&str, &str)],
        doing: &str,
    ) -> Result<Option<Json>, MlflowError> {
        let url = format!("{}/api/2.0/mlflow/{path}", self.base);
        let mut request = self.authorized(self.agent.get(url));
        for (name, value) in query {
            request = request.query(*name, *value);
        }
        let answer = request.call();
        match self.answer(answer, doing) {
            Err(MlflowError::Refused { status: 404, .. }) => Ok(None),
            other => other.map(Some),
        }
    }

    /// `POST /api/2.0/mlflow/{path}` with `body`.
    pub(super) fn post(&self, path: &str, body: &Json, doing: &str) -> Result<Json, MlflowError> {
        let url = format!("{}/api/2.0/mlflow/{path}", self.base);
        let answer = self.authorized(self.agent.post(url)).send_json(body);
        self.answer(answer, doing)
    }

    /// Uploads `bytes` to the server's artifact store at `path` (below
    /// `mlflow-artifacts:/`); `false` where the server keeps no artifacts
    /// of its own (started with `--no-serve-artifacts`).
    pub(super) fn put_artifact(
        &self,
        path: &str,
        bytes: &[u8],
        doing: &str,
    ) -> Result<bool, MlflowError> {
        let url = format!("{}/api/2.0/mlflow-artifacts/artifacts/{path}", self.base);
        let request = self
            .agent
            .put(url)
            .header("Content-Type", "application/json");
        let answer = self.authorized(request).send(bytes);
        match self.answer(answer, doing) {
            Ok(_) => Ok(true),
            Err(MlflowError::Refused {
                status: 404 | 501 | 503,
                ..
            }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// `request` with the token, where there is one.
    fn authorized<B>(&self, request: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        match &self.token {
            Some(token) => request.header("Authorization", format!("Bearer {token}")),
            None => request,
        }
    }

    /// The JSON of a successful answer; an error naming the server and
    /// `doing` otherwise.
    fn answer(
        &self,
        answer: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
        doing: &str,
    ) -> Result<Json, MlflowError> {
        let mut response = answer.map_err(|source| MlflowError::Unreachable {
            uri: self.uri.clone(),
            doing: doing.to_owned(),
            source: Box::new(source),
        })?;
        let status = response.status().as_u16();
        let text =
            response
                .body_mut()
                .read_to_string()
                .map_err(|source| MlflowError::Unreachable {
                    uri: self.uri.clone(),
                    doing: doing.to_owned(),
                    source: Box::new(source),
                })?;
        if !(200..300).contains(&status) {
            return Err(MlflowError::Refused {
                uri: self.uri.clone(),
                doing: doing.to_owned(),
                status,
                message: refusal(&text),
            });
        }
        if text.trim().is_empty() {
            return Ok(Json::Object(Default::default()));
        }
        serde_json::from_str(&text).map_err(|_| MlflowError::NotMlflow {
            uri: self.uri.clone(),
            doing: doing.to_owned(),
            answer: excerpt(&text),
        })
    }
}

/// What an error answer says: MLflow's `error_code: message`, or the start
/// of whatever else came back.
fn refusal(text: &str) -> String {
    let json: Option<Json> = serde_json::from_str(text).ok();
    match json
        .as_ref()
        .map(|j| (j["error_code"].as_str(), j["message"].as_str()))
    {
        Some((Some(code), Some(message))) => format!("{code}: {message}"),
        Some((None, Some(message))) => message.to_owned(),
        _ => excerpt(text),
    }
}

/// The first line of `text`, at most 200 characters.
fn excerpt(text: &str) -> String {
    let line = text.trim().lines().next().unwrap_or_default();
    match line.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None if line.is_empty() => "an empty answer".to_owned(),
        None => line.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_says_mlflows_code_and_message() {
        let body = r#"{"error_code": "INVALID_PARAMETER_VALUE", "message": "bad key"}"#;
        assert_eq!(refusal(body), "INVALID_PARAMETER_VALUE: bad key");
        assert_eq!(refusal("<html>\nBad Gateway"), "<html>");
        assert_eq!(refusal(""), "an empty answer");
    }

    #[test]
    fn only_http_addresses_are_taken() {
        for uri in ["file:///tmp/mlruns", "databricks", "sqlite:///mlflow.db"] {
            let error = Client::new(uri).err().map(|e| e.to_string());
            assert!(
                error.as_deref().is_some_and(|e| e.contains(uri)),
                "{uri}: {error:?}"
            );
        }
        assert!(Client::new("http://127.0.0.1:5000/").is_ok());
    }
}
