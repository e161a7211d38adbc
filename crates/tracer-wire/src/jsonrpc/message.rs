//! Classifying raw JSON into JSON-RPC messages: single bodies and batches, with the -32700 and
//! -32600 errors to answer bad input with.

use super::{ErrorObject, JSONRPC_VERSION, Notification, Request, RequestId, Response, Version};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use std::fmt;

/// Any single JSON-RPC message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    Request(Request),
    Notification(Notification),
    Response(Response),
}

impl Message {
    /// Classifies one JSON value. An invalid message yields the `-32600` error to answer with and
    /// the id, when one could be read.
    #[allow(
        clippy::result_large_err,
        reason = "a cold path; callers answer with it at once"
    )]
    pub(crate) fn from_value(value: Value) -> Result<Message, InvalidMessage> {
        let Value::Object(object) = value else {
            return Err(InvalidMessage::new(None, "a message must be a JSON object"));
        };
        let id_value = object.get("id");
        let id = id_value.and_then(RequestId::from_value);
        match object.get("jsonrpc") {
            Some(Value::String(version)) if version == JSONRPC_VERSION => {}
            Some(other) => {
                let detail = format!("jsonrpc must be \"2.0\", got {other}");
                return Err(InvalidMessage::new(id, detail));
            }
            None => return Err(InvalidMessage::new(id, "missing \"jsonrpc\": \"2.0\"")),
        }
        if let Some(method) = object.get("method") {
            let Value::String(method) = method else {
                return Err(InvalidMessage::new(id, "method must be a string"));
            };
            let params = object.get("params").cloned();
            if let Some(params) = &params
                && !(params.is_object() || params.is_array())
            {
                return Err(InvalidMessage::new(
                    id,
                    "params must be an object or an array",
                ));
            }
            let method = method.clone();
            return match (id_value, id) {
                (None, _) => Ok(Message::Notification(Notification {
                    jsonrpc: Version,
                    method,
                    params,
                })),
                (Some(_), Some(id)) => Ok(Message::Request(Request {
                    jsonrpc: Version,
                    id,
                    method,
                    params,
                })),
                (Some(_), None) => {
                    Err(InvalidMessage::new(None, "id must be a string or a number"))
                }
            };
        }
        if object.contains_key("result") || object.contains_key("error") {
            return Response::deserialize(Value::Object(object))
                .map(Message::Response)
                .map_err(|error| InvalidMessage::new(id, error));
        }
        Err(InvalidMessage::new(
            id,
            "a message needs a method (request) or a result or error (response)",
        ))
    }

    /// The method name of a request or notification.
    #[cfg(test)]
    pub(crate) fn method(&self) -> Option<&str> {
        match self {
            Message::Request(request) => Some(&request.method),
            Message::Notification(notification) => Some(&notification.method),
            Message::Response(_) => None,
        }
    }
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Message::Request(request) => request.serialize(serializer),
            Message::Notification(notification) => notification.serialize(serializer),
            Message::Response(response) => response.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Message::from_value(value).map_err(|invalid| D::Error::custom(invalid.error.message))
    }
}

/// A JSON value that is not a valid JSON-RPC message: the id (if readable) and the -32600 error.
#[derive(Debug, Clone, PartialEq)]
pub struct InvalidMessage {
    pub id: Option<RequestId>,
    pub error: ErrorObject,
}

impl InvalidMessage {
    fn new(id: Option<RequestId>, detail: impl fmt::Display) -> Self {
        InvalidMessage {
            id,
            error: ErrorObject::invalid_request(detail),
        }
    }

    /// The error response to send back for it.
    pub fn into_response(self) -> Response {
        Response::error(self.id, self.error)
    }
}

/// A parsed body: one message, or a batch (a JSON array, allowed only by MCP `2025-03-26`).
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    Single(Result<Message, InvalidMessage>),
    Batch(Vec<Result<Message, InvalidMessage>>),
}

/// Parses a body into messages. Malformed JSON gives the -32700 error; an empty batch gives the
/// -32600 error (both answered with no id).
pub fn parse_body(bytes: &[u8]) -> Result<Body, ErrorObject> {
    let value: Value = serde_json::from_slice(bytes).map_err(ErrorObject::parse_error)?;
    match value {
        Value::Array(items) if items.is_empty() => Err(ErrorObject::invalid_request(
            "an empty batch is not a message",
        )),
        Value::Array(items) => Ok(Body::Batch(
            items.into_iter().map(Message::from_value).collect(),
        )),
        single => Ok(Body::Single(Message::from_value(single))),
    }
}

/// Parses a body that must be exactly one message (stdio lines, single POSTs): a batch or an
/// invalid message becomes the error response to send back.
#[allow(
    clippy::result_large_err,
    reason = "a cold path; callers answer with it at once"
)]
#[cfg(test)]
pub(crate) fn parse_single(bytes: &[u8]) -> Result<Message, Response> {
    match parse_body(bytes) {
        Err(error) => Err(Response::error(None, error)),
        Ok(Body::Single(Ok(message))) => Ok(message),
        Ok(Body::Single(Err(invalid))) => Err(invalid.into_response()),
        Ok(Body::Batch(_)) => Err(Response::error(
            None,
            ErrorObject::invalid_request("batches are not supported here; send one message"),
        )),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::result_large_err)]
mod tests {
    use super::*;
    use crate::jsonrpc::code;
    use serde_json::json;

    fn single(text: &str) -> Result<Message, InvalidMessage> {
        match parse_body(text.as_bytes()).unwrap() {
            Body::Single(message) => message,
            Body::Batch(_) => panic!("expected a single message"),
        }
    }

    #[test]
    fn request_round_trips_with_key_order_kept() {
        let text = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#;
        let message = single(text).unwrap();
        assert!(matches!(&message, Message::Request(r) if r.id == RequestId::from(1)));
        assert_eq!(serde_json::to_string(&message).unwrap(), text);
    }

    #[test]
    fn string_ids_and_large_numbers_are_kept_exactly() {
        let message = single(r#"{"jsonrpc":"2.0","id":"abc","method":"ping"}"#).unwrap();
        assert!(matches!(message, Message::Request(r) if r.id == RequestId::from("abc")));
        let big = single(r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#).unwrap();
        assert_eq!(
            serde_json::to_value(&big).unwrap()["id"],
            json!(18446744073709551615u64)
        );
    }

    #[test]
    fn notification_has_no_id() {
        let message = single(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap();
        assert_eq!(
            message,
            Message::Notification(Notification::new("notifications/initialized", None))
        );
    }

    #[test]
    fn responses_are_classified_and_serialized() {
        let ok = single(r#"{"jsonrpc":"2.0","id":2,"result":{"x":1}}"#).unwrap();
        assert_eq!(
            ok,
            Message::Response(Response::result(2.into(), json!({"x": 1})))
        );
        let text = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#;
        let Message::Response(response) = single(text).unwrap() else {
            panic!("not a response")
        };
        assert_eq!(response.id, None);
        assert_eq!(response.error_object().unwrap().code, code::PARSE_ERROR);
        assert_eq!(
            serde_json::to_string(&response).unwrap(),
            r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"bad"}}"#
        );
    }

    #[test]
    fn malformed_json_is_a_parse_error() {
        let error = parse_body(b"{not json").unwrap_err();
        assert_eq!(error.code, code::PARSE_ERROR);
        assert!(error.message.starts_with("Parse error: "));
    }

    #[test]
    fn non_requests_are_invalid_requests_keeping_the_id() {
        let both = r#"{"jsonrpc":"2.0","id":8,"result":1,"error":{"code":1,"message":"m"}}"#;
        for (text, id) in [
            (r#"42"#, None),
            (r#"{"id":3,"method":"ping"}"#, Some(RequestId::from(3))),
            (
                r#"{"jsonrpc":"1.0","id":4,"method":"ping"}"#,
                Some(RequestId::from(4)),
            ),
            (
                r#"{"jsonrpc":"2.0","id":5,"method":7}"#,
                Some(RequestId::from(5)),
            ),
            (
                r#"{"jsonrpc":"2.0","id":6,"method":"x","params":"s"}"#,
                Some(RequestId::from(6)),
            ),
            (r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, None),
            (r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#, None),
            (r#"{"jsonrpc":"2.0","id":7}"#, Some(RequestId::from(7))),
            (both, Some(RequestId::from(8))),
        ] {
            let invalid = single(text).unwrap_err();
            assert_eq!(invalid.error.code, code::INVALID_REQUEST, "{text}");
            assert_eq!(invalid.id, id, "{text}");
        }
    }

    #[test]
    fn batches_classify_each_item_and_empty_batch_is_invalid() {
        let body = parse_body(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"foo":1}]"#).unwrap();
        let Body::Batch(items) = body else {
            panic!("expected a batch")
        };
        assert!(matches!(items[0], Ok(Message::Request(_))));
        assert!(items[1].is_err());
        assert_eq!(parse_body(b"[]").unwrap_err().code, code::INVALID_REQUEST);
        let refused = parse_single(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#).unwrap_err();
        assert_eq!(refused.error_object().unwrap().code, code::INVALID_REQUEST);
    }

    #[test]
    fn typed_deserialize_of_message_and_response() {
        let message: Message =
            serde_json::from_value(json!({"jsonrpc":"2.0","id":1,"method":"m"})).unwrap();
        assert_eq!(message.method(), Some("m"));
        let response: Response =
            serde_json::from_value(json!({"jsonrpc":"2.0","id":"a","result":null})).unwrap();
        assert_eq!(response.into_result().unwrap(), Value::Null);
        assert!(serde_json::from_value::<Response>(json!({"jsonrpc":"2.0","id":1})).is_err());
        let wrong_version = json!({"jsonrpc":"2.1","id":1,"method":"m"});
        assert!(serde_json::from_value::<Request>(wrong_version).is_err());
    }

    #[test]
    fn error_constructors_use_standard_codes() {
        assert_eq!(
            ErrorObject::method_not_found("x").message,
            "Method not found: x"
        );
        assert_eq!(ErrorObject::invalid_params("Unknown tool: x").code, -32602);
        assert_eq!(ErrorObject::internal_error("disk").code, -32603);
        let with_data = ErrorObject::invalid_request("x").with_data(json!({"a": 1}));
        assert_eq!(serde_json::to_value(&with_data).unwrap()["data"]["a"], 1);
    }
}
