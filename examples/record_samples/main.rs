//! Records the hop logs of `sample-traces/` by running the real topology in-process: notes-agent
//! and notes-server (or seed 002's phonebook peers) behind the real recording proxy, with a
//! scripted model that answers set bodies (there is no Ollama here). Each scene is one user
//! request; its trace is grouped by the real correlator and written as a hop log.
//!
//! `cargo run --example record_samples -- sample-traces/`

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use http_body_util::BodyExt;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tracer_export::hop_log::HopLog;
use tracer_live::correlate::group_new_hops;
use tracer_record::proxy::{Proxy, ProxySettings, Route};
use tracer_reference::agent::{AgentConfig, McpServerSpec, ModelApi};
use tracer_reference::notes_server::{NotesServer, NotesServerConfig};
use tracer_store::{Recorder, Store};

mod scenes;
mod scripted_peers;

use scripted_peers::{Answer, Body, body, phonebook_server, scripted_model};

async fn post(
    url: &str,
    headers: &[(&str, &str)],
    payload: &Value,
) -> anyhow::Result<(u16, String)> {
    let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build_http();
    let mut request = http::Request::post(url).header("content-type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = client
        .request(request.body(body(payload.to_string()))?)
        .await?;
    let status = response.status().as_u16();
    let bytes = response.into_body().collect().await?.to_bytes();
    Ok((status, String::from_utf8_lossy(&bytes).into_owned()))
}

/// One recorded scene: the notes file before, the user's message, the agent's settings, the script.
struct Scene {
    file: &'static str,
    notes: &'static str,
    message: &'static str,
    stream: bool,
    max_steps: u32,
    answers: Vec<Answer>,
}

/// A running proxy with a store; `finish` stops it, groups the hops and writes a hop log.
struct Recording {
    store: Store,
    stop: tokio::sync::oneshot::Sender<()>,
    run: tokio::task::JoinHandle<tracer_record::proxy::ProxyStats>,
    writer: tokio::task::JoinHandle<tracer_store::WriterReport>,
    listens: Vec<SocketAddr>,
}

async fn record(dir: &Path, routes: Vec<Route>) -> anyhow::Result<Recording> {
    let store = Store::open(&dir.join("tracer.db")).await?;
    let proxy = Proxy::bind(routes, ProxySettings::default()).await?;
    let listens = proxy.routes().iter().map(|r| r.listen).collect();
    let (recorder, writer) = Recorder::spawn(store.clone())?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let run = tokio::spawn(proxy.run(recorder, async move {
        let _ = stopped.await;
    }));
    Ok(Recording {
        store,
        stop,
        run,
        writer,
        listens,
    })
}

impl Recording {
    async fn finish(self, title: &str, out: &Path) -> anyhow::Result<()> {
        let _ = self.stop.send(());
        self.run.await?;
        self.writer.await?;
        group_new_hops(&self.store).await?;
        let traces = self.store.traces().await?;
        let Some(trace) = traces.iter().find(|t| t.title.as_deref() == Some(title)) else {
            bail!(
                "no trace titled {title:?} among {:?}",
                traces.iter().map(|t| &t.title).collect::<Vec<_>>()
            );
        };
        let log = HopLog::from_store(&self.store, &trace.id).await?;
        std::fs::write(out, log.to_json_pretty())
            .with_context(|| format!("writing {}", out.display()))?;
        println!(
            "{}: trace {} with {} hops",
            out.display(),
            trace.id,
            log.hops().len()
        );
        self.store.close().await;
        Ok(())
    }
}

async fn notes_scene(scene: Scene, out_dir: &Path) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let notes_path = dir.path().join("db");
    std::fs::write(&notes_path, scene.notes)?;
    let notes = NotesServer::open(NotesServerConfig::new(&notes_path)).await?;
    let notes_listener = TcpListener::bind("127.0.0.1:0").await?;
    let notes_addr = notes_listener.local_addr()?;
    tokio::spawn(tracer_reference::notes_server::serve_http(
        notes_listener,
        notes,
        std::future::pending(),
    ));
    let model_addr = scripted_model(scene.answers).await?;
    let agent_listener = TcpListener::bind("127.0.0.1:0").await?;
    let agent_addr = agent_listener.local_addr()?;
    let routes = vec![
        Route::new(
            "agent",
            "agent",
            "127.0.0.1:0",
            &format!("http://{agent_addr}"),
        )
        .map_err(anyhow::Error::msg)?,
        Route::new(
            "mcp",
            "notes",
            "127.0.0.1:0",
            &format!("http://{notes_addr}"),
        )
        .map_err(anyhow::Error::msg)?,
        Route::new(
            "model",
            "ollama",
            "127.0.0.1:0",
            &format!("http://{model_addr}"),
        )
        .map_err(anyhow::Error::msg)?,
    ];
    let recording = record(dir.path(), routes).await?;
    let [agent_route, mcp_route, model_route] = recording.listens[..] else {
        bail!("the proxy did not bind three routes");
    };
    let mut config = AgentConfig::new(ModelApi::Ollama, format!("http://{model_route}"));
    config.mcp_servers = vec![McpServerSpec::Http {
        url: format!("http://{mcp_route}/mcp"),
    }];
    config.stream = scene.stream;
    config.max_steps = scene.max_steps;
    tokio::spawn(tracer_reference::agent::serve(agent_listener, config));
    let (status, reply) = post(
        &format!("http://{agent_route}/agent"),
        &[],
        &json!({ "message": scene.message }),
    )
    .await?;
    if status != 200 {
        bail!("{}: the agent answered {status}: {reply}", scene.file);
    }
    recording
        .finish(scene.message, &out_dir.join(scene.file))
        .await
}

/// Seed 002: open-webui (via mcpo) and gemma3:27b; the host is played by this program.
async fn phonebook_scene(out_dir: &Path) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let mcp_addr = phonebook_server().await?;
    let model_addr = scripted_model(vec![
        Answer::Whole(json!({
            "model": "gemma3:27b", "created_at": "2025-11-08T15:53:10.989452276Z",
            "message": { "role": "assistant", "content": "```json\n{\n \"tool_calls\": [\n {\n \"name\": \"tool_get_phonenumber_post\",\n \"parameters\": {\n \"name\": \"Joshua Wilson\"\n }\n }\n ]\n}\n```" },
            "done": true, "done_reason": "stop", "total_duration": 2035516062u64, "load_duration": 316418425u64,
            "prompt_eval_count": 349, "prompt_eval_duration": 140556964u64, "eval_count": 60, "eval_duration": 1472558770u64
        }).to_string()),
        Answer::Whole(json!({
            "model": "gemma3:27b", "created_at": "2025-11-08T15:53:13.402118930Z",
            "message": { "role": "assistant", "content": "The phone number associated with the request is 555-66666666." },
            "done": true, "done_reason": "stop", "prompt_eval_count": 96, "eval_count": 19
        }).to_string()),
    ])
    .await?;
    let routes = vec![
        Route::new(
            "mcp",
            "phonebook",
            "127.0.0.1:0",
            &format!("http://{mcp_addr}"),
        )
        .map_err(anyhow::Error::msg)?,
        Route::new(
            "model",
            "ollama",
            "127.0.0.1:0",
            &format!("http://{model_addr}"),
        )
        .map_err(anyhow::Error::msg)?,
    ];
    let recording = record(dir.path(), routes).await?;
    let [mcp_route, model_route] = recording.listens[..] else {
        bail!("the proxy did not bind two routes");
    };
    let mcp_url = format!("http://{mcp_route}/mcp");
    let model_url = format!("http://{model_route}/api/chat");
    let accept = [("accept", "application/json, text/event-stream")];
    post(
        &mcp_url,
        &accept,
        &json!({"method": "tools/list", "jsonrpc": "2.0", "id": 1}),
    )
    .await?;
    let question = "What is the phone number of Joshua Wilson?";
    let system = format!(
        "Available Tools: [{}]\n\nYour task is to choose and return the correct tool(s) from the list of available tools based on the query. Follow these guidelines:\n\n- Return only the JSON object, without any additional text or explanation.\n\n- If no tools match the query, return an empty array: \n   {{\n     \"tool_calls\": []\n   }}\n\n- If one or more tools match the query, construct a JSON response containing a \"tool_calls\" array with objects that include:\n   - \"name\": The tool's name.\n   - \"parameters\": A dictionary of required parameters and their corresponding values.\n\nThe format for the JSON response is strictly:\n{{\n  \"tool_calls\": [\n    {{\"name\": \"toolName1\", \"parameters\": {{\"key1\": \"value1\"}}}},\n    {{\"name\": \"toolName2\", \"parameters\": {{\"key2\": \"value2\"}}}}\n  ]\n}}",
        json!({"name": "tool_get_phonenumber_post", "description": "Deliver the phone number for a certain person.\n\nArgs:\n    name: Name of the person (e.g., 'Axel Foley')\n\nReturns:\n    A string with the person's phone number", "parameters": {"type": "object", "properties": {"name": {"type": "string", "title": "Name", "description": ""}}, "required": ["name"]}})
    );
    post(&model_url, &[], &json!({"model": "gemma3:27b", "messages": [
        {"role": "system", "content": system},
        {"role": "user", "content": format!("Query: History:\nUSER: \"\"\"{question}\"\"\"\nQuery: {question}")}
    ], "stream": false})).await?;
    post(&mcp_url, &accept, &json!({"method": "tools/call", "params": {"name": "get_phonenumber", "arguments": {"name": "Joshua Wilson"}}, "jsonrpc": "2.0", "id": 2})).await?;
    post(&model_url, &[], &json!({"model": "gemma3:27b", "messages": [
        {"role": "system", "content": "<context>\n<source id=\"1\" name=\"server:3/tool_get_phonenumber_post\">555-66666666</source>\n</context>"},
        {"role": "user", "content": format!("<user_query>\n{question}\n</user_query>\n{question}\nTool `server:3/tool_get_phonenumber_post` Output: 555-66666666")}
    ], "stream": false})).await?;
    let title = format!("Query: History:\nUSER: \"\"\"{question}\"\"\"\nQuery: {question}");
    recording
        .finish(&title, &out_dir.join("phonebook-text-tool-call.json"))
        .await
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let out_dir: PathBuf = std::env::args_os()
        .nth(1)
        .map_or_else(|| PathBuf::from("sample-traces"), PathBuf::from);
    std::fs::create_dir_all(&out_dir)?;
    for scene in scenes::scenes() {
        notes_scene(scene, &out_dir).await?;
    }
    phonebook_scene(&out_dir).await?;
    Ok(())
}
