// DOM building without innerHTML: h() for HTML elements, s() for SVG, text always as text nodes
// (control and bidi characters as visible escapes).

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * Control and bidi characters: C0 (but newline and tab), DEL, C1, and the bidi embeddings,
 * overrides, isolates and marks. Recorded text shows them as escapes (`\x1b`, `\u{202e}`), as
 * every text face of tracer does (crates/tracer-wire/src/safe_text.rs): a U+202E in a tool name
 * must not turn what follows it around on screen.
 */
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Text with its control and bidi characters as visible escapes. */
export function visible(text) {
  return String(text).replace(UNSAFE, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x80 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
  });
}

/** Attributes read out to people (tooltips, labels): shown with the same escapes as text. */
const TEXT_ATTRS = new Set(['title', 'aria-label', 'placeholder', 'alt']);

/** Attribute values that may hold a URL: only same-origin paths and hash links are allowed. */
const URL_ATTRS = new Set(['href', 'src', 'action', 'formaction', 'xlink:href']);

function safeUrl(value) {
  const v = String(value);
  return (v.startsWith('#') || (v.startsWith('/') && !v.startsWith('//'))) ? v : null;
}

function setAttrs(el, attrs) {
  if (!attrs) return;
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    const name = key.toLowerCase();
    if (name.startsWith('on')) throw new Error(`h(): refusing event attribute ${key}`);
    if (name === 'style') throw new Error('h(): refusing a style attribute (CSP); set el.style from JS');
    if (name === 'innerhtml' || name === 'outerhtml') throw new Error(`h(): refusing ${key}`);
    if (key === 'dataset') {
      for (const [k, v] of Object.entries(value)) if (v !== null && v !== undefined) el.dataset[k] = String(v);
      continue;
    }
    if (key === 'text') { el.textContent = visible(value); continue; }
    if (URL_ATTRS.has(name)) {
      const url = safeUrl(value);
      if (url === null) throw new Error(`h(): refusing URL ${String(value).slice(0, 40)}`);
      el.setAttribute(key, url);
      continue;
    }
    el.setAttribute(key, value === true ? '' : TEXT_ATTRS.has(name) ? visible(value) : String(value));
  }
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false || child === '') continue;
    if (Array.isArray(child)) append(el, child);
    else if (child instanceof Node) el.appendChild(child);
    else el.appendChild(document.createTextNode(visible(child)));
  }
}

/** An HTML element: h('div', {class: 'x', dataset: {id}}, 'text', child, [more]). */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

/** An SVG element, built the same way (text children become text nodes). */
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

/** Adds a listener and returns the element (so it chains inside h() calls). */
export function on(el, type, fn, options) {
  el.addEventListener(type, fn, options);
  return el;
}

/** Removes every child. */
export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

/** Replaces the children of el with the given ones. */
export function replace(el, ...children) {
  clear(el);
  append(el, children);
  return el;
}

/** A same-page link to a hash route (parts are encoded). */
export function routeHref(...parts) {
  return '#/' + parts.map((p) => encodeURIComponent(String(p))).join('/');
}

/** A button with a click handler. */
export function button(label, fn, attrs = {}) {
  return on(h('button', { type: 'button', ...attrs }, label), 'click', fn);
}
