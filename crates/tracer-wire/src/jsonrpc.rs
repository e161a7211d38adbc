//! JSON-RPC 2.0 envelopes (request, notification, response, error object, id) and the classifier
//! that turns a raw body (single message or batch) into messages or the right JSON-RPC error.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use std::fmt;

mod message;
pub use message::{Body, InvalidMessage, Message, parse_body};

/// The only JSON-RPC version there is: the value of every message's `jsonrpc` member.
pub(crate) const JSONRPC_VERSION: &str = "2.0";

/// The standard JSON-RPC 2.0 error codes (MCP-specific codes live in `crate::mcp`).
pub mod code {
    /// Invalid JSON was received.
    pub(crate) const PARSE_ERROR: i64 = -32700;
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters.
    pub(crate) const INVALID_PARAMS: i64 = -32602;
    /// Internal JSON-RPC error.
    pub(crate) const INTERNAL_ERROR: i64 = -32603;
}

/// The `jsonrpc: "2.0"` marker: serializes as `"2.0"` and refuses any other value when read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Version;

impl Serialize for Version {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(JSONRPC_VERSION)
    }
}

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        if text == JSONRPC_VERSION {
            Ok(Version)
        } else {
            Err(D::Error::custom(format!(
                "jsonrpc must be \"2.0\", got {text:?}"
            )))
        }
    }
}

/// A request id: a string or a number (never null, per MCP). Numbers keep their exact JSON form.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    Number(serde_json::Number),
    String(String),
}

impl RequestId {
    /// Reads an id from a JSON value; `None` for null, bools, arrays and objects.
    pub fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::Number(number) => Some(RequestId::Number(number.clone())),
            Value::String(text) => Some(RequestId::String(text.clone())),
            _ => None,
        }
    }

    /// The id as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            RequestId::Number(number) => Value::Number(number.clone()),
            RequestId::String(text) => Value::String(text.clone()),
        }
    }
}

impl From<i64> for RequestId {
    fn from(value: i64) -> Self {
        RequestId::Number(value.into())
    }
}

impl From<&str> for RequestId {
    fn from(value: &str) -> Self {
        RequestId::String(value.to_owned())
    }
}

impl From<String> for RequestId {
    fn from(value: String) -> Self {
        RequestId::String(value)
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(number) => write!(f, "{number}"),
            RequestId::String(text) => write!(f, "{text:?}"),
        }
    }
}

/// A call that expects an answer: `{"jsonrpc":"2.0","id":…,"method":…,"params"?:…}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub jsonrpc: Version,
    pub id: RequestId,
    pub method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

impl Request {
    pub fn new(id: impl Into<RequestId>, method: impl Into<String>, params: Option<Value>) -> Self {
        Request {
            jsonrpc: Version,
            id: id.into(),
            method: method.into(),
            params,
        }
    }
}

/// A one-way message: like a request but with no `id`, and the receiver must not answer it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Notification {
    pub jsonrpc: Version,
    pub method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

impl Notification {
    pub fn new(method: impl Into<String>, params: Option<Value>) -> Self {
        Notification {
            jsonrpc: Version,
            method: method.into(),
            params,
        }
    }
}

/// The `error` member of an error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("JSON-RPC error {code}: {message}")]
pub struct ErrorObject {
    pub code: i64,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub(crate) fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// -32700: the body is not JSON; `detail` says where it broke.
    pub(crate) fn parse_error(detail: impl fmt::Display) -> Self {
        ErrorObject::new(code::PARSE_ERROR, format!("Parse error: {detail}"))
    }

    /// -32600: JSON, but not a valid JSON-RPC message.
    pub fn invalid_request(detail: impl fmt::Display) -> Self {
        ErrorObject::new(code::INVALID_REQUEST, format!("Invalid Request: {detail}"))
    }

    /// -32601: no such method.
    pub fn method_not_found(method: &str) -> Self {
        ErrorObject::new(
            code::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }

    /// -32602 with a message of the caller's choosing (MCP puts `Unknown tool: X` here).
    pub fn invalid_params(message: impl Into<String>) -> Self {
        ErrorObject::new(code::INVALID_PARAMS, message)
    }

    /// -32603: the server failed.
    pub(crate) fn internal_error(detail: impl fmt::Display) -> Self {
        ErrorObject::new(code::INTERNAL_ERROR, format!("Internal error: {detail}"))
    }
}

/// What a response carries: exactly one of `result` or `error`.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Result(Value),
    Error(ErrorObject),
}

/// An answer to a request. `id` is `None` only when the request's id could not be read
/// (it is then left out of the JSON, as MCP asks; a `null` id is accepted when reading).
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    pub id: Option<RequestId>,
    pub outcome: Outcome,
}

impl Response {
    pub fn result(id: RequestId, result: Value) -> Self {
        Response {
            id: Some(id),
            outcome: Outcome::Result(result),
        }
    }

    pub fn error(id: Option<RequestId>, error: ErrorObject) -> Self {
        Response {
            id,
            outcome: Outcome::Error(error),
        }
    }

    /// The error object, if this is an error response.
    pub fn error_object(&self) -> Option<&ErrorObject> {
        match &self.outcome {
            Outcome::Error(error) => Some(error),
            Outcome::Result(_) => None,
        }
    }

    /// The result value, if this is a success response.
    pub fn result_value(&self) -> Option<&Value> {
        match &self.outcome {
            Outcome::Result(result) => Some(result),
            Outcome::Error(_) => None,
        }
    }

    /// Turns the response into `Ok(result)` or `Err(error)`.
    pub fn into_result(self) -> Result<Value, ErrorObject> {
        match self.outcome {
            Outcome::Result(result) => Ok(result),
            Outcome::Error(error) => Err(error),
        }
    }
}

#[derive(Serialize, Deserialize)]
struct ResponseWire {
    jsonrpc: Version,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<RequestId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<ErrorObject>,
}

impl Serialize for Response {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (result, error) = match &self.outcome {
            Outcome::Result(result) => (Some(result.clone()), None),
            Outcome::Error(error) => (None, Some(error.clone())),
        };
        ResponseWire {
            jsonrpc: Version,
            id: self.id.clone(),
            result,
            error,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Response {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Read through a Value so that `"result": null` counts as a result, not as absent.
        let value = Value::deserialize(deserializer)?;
        let object = value
            .as_object()
            .ok_or_else(|| D::Error::custom("a response must be a JSON object"))?;
        Version::deserialize(object.get("jsonrpc").cloned().unwrap_or(Value::Null))
            .map_err(D::Error::custom)?;
        let id = match object.get("id") {
            None | Some(Value::Null) => None,
            Some(other) => Some(
                RequestId::from_value(other)
                    .ok_or_else(|| D::Error::custom("id must be a string or a number"))?,
            ),
        };
        let outcome = match (object.get("result"), object.get("error")) {
            (Some(result), None) => Outcome::Result(result.clone()),
            (None, Some(error)) => {
                Outcome::Error(ErrorObject::deserialize(error.clone()).map_err(D::Error::custom)?)
            }
            (Some(_), Some(_)) => {
                return Err(D::Error::custom("a response has both result and error"));
            }
            (None, None) => return Err(D::Error::custom("a response needs result or error")),
        };
        Ok(Response { id, outcome })
    }
}
