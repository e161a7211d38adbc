// The words of an answer still streaming: its SSE `data:` lines or NDJSON lines read as the model APIs write them.

/** The text one streamed event adds, for the APIs tracer reads (else ''). */
export function textOf(event) {
  if (!event || typeof event !== 'object') return '';
  const choice = Array.isArray(event.choices) ? event.choices[0] : null;
  if (choice && choice.delta && typeof choice.delta.content === 'string') return choice.delta.content; // OpenAI chat
  if (choice && typeof choice.text === 'string') return choice.text; // OpenAI completions
  if (event.type === 'content_block_delta' && event.delta && typeof event.delta.text === 'string') return event.delta.text; // Anthropic
  if (event.type === 'response.output_text.delta' && typeof event.delta === 'string') return event.delta; // OpenAI Responses
  const candidate = Array.isArray(event.candidates) ? event.candidates[0] : null; // Gemini
  if (candidate && candidate.content && Array.isArray(candidate.content.parts)) {
    return candidate.content.parts.map((p) => (p && typeof p.text === 'string' && !p.thought ? p.text : '')).join('');
  }
  if (event.message && typeof event.message.content === 'string') return event.message.content; // Ollama chat
  if (typeof event.response === 'string') return event.response; // Ollama generate
  return '';
}

const MAX_LINE = 1 << 20;

/** Reads a stream's bytes as they come: whole lines only, each `data:` or NDJSON line parsed. */
export class StreamWords {
  constructor() {
    this.pending = '';
    this.words = '';
  }

  /** Feeds more of the stream; returns the words it added ('' for none yet). */
  push(chunk) {
    this.pending += chunk;
    if (this.pending.length > MAX_LINE) this.pending = '';
    const lines = this.pending.split('\n');
    this.pending = lines.pop();
    let added = '';
    for (const raw of lines) {
      const line = raw.trim();
      const json = line.startsWith('data:') ? line.slice(5).trim() : line;
      if (!json.startsWith('{')) continue;
      try {
        added += textOf(JSON.parse(json));
      } catch (_) {
        // Not JSON (yet): the line is shown as bytes only.
      }
    }
    this.words += added;
    return added;
  }
}

const byHop = new Map(); // hop_id -> StreamWords, the newest 200 hops
const HOPS = 200;

/** Feeds a hop's streamed bytes; returns all the words its stream has spelled so far. */
export function feed(hopId, text) {
  let words = byHop.get(hopId);
  if (!words) {
    words = new StreamWords();
    byHop.set(hopId, words);
    if (byHop.size > HOPS) byHop.delete(byHop.keys().next().value);
  }
  words.push(text);
  return words.words;
}
