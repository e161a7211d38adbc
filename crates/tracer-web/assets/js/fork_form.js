// "Fork from here": the `tracer fork` command for a message, built from the edits typed.

import { h, on, button } from './dom.js';

/** A word as the shell reads it: bare when safe, else in single quotes. */
export function shellWord(word) {
  const quote = String.fromCharCode(39);
  const safe = /^[A-Za-z0-9_\-./=:,@%+]+$/;
  return safe.test(word) ? word : quote + word.split(quote).join(quote + '\\' + quote + quote) + quote;
}

/** The command line for forking trace `traceId` at message `number` with `edits`. */
export function forkCommand(traceId, number, edits) {
  const words = ['tracer', 'fork', traceId, '--at', String(number)];
  const add = (flag, value) => { if (value) words.push(flag, shellWord(value)); };
  add('--set', edits.set);
  add('--model', edits.model);
  add('--tool-description', edits.description);
  if (edits.returns) add(edits.fails ? '--error' : '--result', edits.returns);
  return words.join(' ');
}

function field(label, placeholder, testid) {
  const input = h('input', { type: 'text', placeholder, 'aria-label': label, 'data-testid': testid, spellcheck: 'false' });
  return [input, h('label', { class: 'fork-field' }, h('span', null, label), input)];
}

/** The section under an open message: edits in, the command out (run it in a terminal). */
export function forkSection(traceId, m) {
  const tool = m.case === 'mcp_tool_call' || m.case === 'mcp_tool_result';
  const [set, setRow] = field('set (JSON Pointer = JSON)', '/messages/1/content="Add eggs to my notes"', 'fork-set');
  const [model, modelRow] = field('model, from here on', 'qwen3:8b', 'fork-model');
  const [description, descriptionRow] = field('a tool\'s description, from here on (NAME=TEXT)', 'append=Add a line to the notes', 'fork-description');
  const [returns, returnsRow] = field('what the tool returns instead of running', 'disk full', 'fork-returns');
  const fails = h('input', { type: 'checkbox', 'data-testid': 'fork-fails' });
  const command = h('pre', { class: 'mono fork-command', 'data-testid': 'fork-command' });
  const update = () => {
    command.textContent = forkCommand(traceId, m.number, {
      set: set.value.trim(), model: model.value.trim(), description: description.value.trim(),
      returns: tool ? returns.value : '', fails: fails.checked,
    });
  };
  for (const input of [set, model, description, returns, fails]) on(input, 'input', update);
  on(fails, 'change', update);
  update();
  const copy = button('copy', () => navigator.clipboard && navigator.clipboard.writeText(command.textContent), { title: 'copy the command' });
  return h('details', { class: 'sec fork', 'data-testid': 'fork-here' },
    h('summary', null, 'fork from here'),
    h('p', { class: 'muted' }, `Run the trace again: the messages before ${m.number} answered from the recording, `
      + `${m.number} edited, the rest live (the host runs again, and so may its tools). Run the command in a terminal `
      + 'beside the database (add --db PATH if it is not ./tracer.db).'),
    setRow, modelRow, descriptionRow,
    tool ? h('div', null, returnsRow, h('label', { class: 'fork-check' }, fails, 'as an error')) : null,
    h('div', { class: 'fork-out' }, command, copy));
}
