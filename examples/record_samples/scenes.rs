//! The notes scenes: the user's message, the notes file before, the agent's settings and the
//! scripted model's answers for each sample of `sample-traces/`.

use serde_json::json;

use super::Scene;
use super::scripted_peers::{Answer, call, ollama};

pub fn scenes() -> Vec<Scene> {
    // The article's two model answers, byte for byte as it published them.
    let article_tool_call = "{ \"message\": { \"role\": \"assistant\", \"content\": \"\",\n    \"tool_calls\": [ { \"function\": { \"name\": \"append\", \"arguments\": { \"content\": \"buy milk\" } } } ] },\n  \"done\": true }";
    let article_answer = "{ \"message\": { \"role\": \"assistant\", \"content\": \"I've added \\\"buy milk\\\" to your notes.\" },\n  \"done\": true }";
    let streamed_answer: Vec<(u64, String)> = ["Your", " notes", " say", ":", " buy", " milk", ",", " call", " mum", "."]
        .iter()
        .map(|piece| (60, json!({"model": "qwen2.5:7b", "created_at": "2026-11-29T10:00:01Z", "message": {"role": "assistant", "content": piece}, "done": false}).to_string()))
        .chain(std::iter::once((40, json!({"model": "qwen2.5:7b", "created_at": "2026-11-29T10:00:02Z", "message": {"role": "assistant", "content": ""}, "done_reason": "stop", "done": true, "total_duration": 900_000_000u64, "prompt_eval_count": 420, "eval_count": 10, "eval_duration": 600_000_000u64}).to_string())))
        .collect();
    vec![
        Scene {
            file: "buy-milk.json",
            notes: "",
            message: "Add buy milk to my notes",
            stream: false,
            max_steps: 5,
            answers: vec![Answer::Whole(article_tool_call.into()), Answer::Whole(article_answer.into())],
        },
        Scene {
            file: "read-notes.json",
            notes: "buy milk\ncall mum\n",
            message: "What is in my notes?",
            stream: false,
            max_steps: 5,
            answers: vec![
                ollama("", call("read", json!({})), 402, 14),
                ollama("Your notes have two lines: \"buy milk\" and \"call mum\".", json!([]), 451, 17),
            ],
        },
        Scene {
            file: "tool-error-fixed.json",
            notes: "buy milk\n",
            message: "Add call the plumber to my notes",
            stream: false,
            max_steps: 5,
            answers: vec![
                ollama("", call("append", json!({"text": "call the plumber"})), 405, 19),
                ollama("", call("append", json!({"content": "call the plumber"})), 470, 19),
                ollama("I've added \"call the plumber\" to your notes.", json!([]), 520, 13),
            ],
        },
        Scene {
            file: "step-limit.json",
            notes: "buy milk\n",
            message: "Keep reading my notes until they change",
            stream: false,
            max_steps: 3,
            answers: vec![
                ollama("", call("read", json!({})), 404, 12),
                ollama("", call("read", json!({})), 440, 12),
                ollama("", call("read", json!({})), 476, 12),
                ollama("Your notes still say \"buy milk\"; they did not change while I was reading them.", json!([]), 505, 21),
            ],
        },
        Scene {
            file: "streamed-ndjson.json",
            notes: "buy milk\ncall mum\n",
            message: "Read my notes to me",
            stream: true,
            max_steps: 5,
            answers: vec![
                Answer::Stream(vec![
                    (150, json!({"model": "qwen2.5:7b", "created_at": "2026-11-29T10:00:00Z", "message": {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "read", "arguments": {}}}]}, "done": false}).to_string()),
                    (30, json!({"model": "qwen2.5:7b", "created_at": "2026-11-29T10:00:00Z", "message": {"role": "assistant", "content": ""}, "done_reason": "stop", "done": true, "prompt_eval_count": 398, "eval_count": 12}).to_string()),
                ]),
                Answer::Stream(streamed_answer),
            ],
        },
    ]
}
