// The conversation view's HTML, from its state: pure functions, so the unit
// tests check what the person sees and the webview only swaps it in. Every
// text is escaped (markdown() and escapeHtml()); actions are buttons with
// data attributes that the webview's one click handler reads.
import { escapeHtml, inline, markdown } from './markdown';
import { ViewCheck, ViewEntry, ViewGroup, ViewPending, ViewState, ViewTask } from './state';

const e = escapeHtml;

function button(label: string, action: string, data: Record<string, string>, cls = '', title = ''): string {
  return rawButton(e(label), action, data, cls, title);
}

/** rawButton is button with its content as HTML (an icon), which the caller escapes. */
function rawButton(html: string, action: string, data: Record<string, string>, cls = '', title = ''): string {
  const attrs = Object.entries(data).map(([k, v]) => ` data-${k}="${e(v)}"`).join('');
  return `<button type="button" class="${e(cls)}" data-action="${e(action)}"${attrs}${title !== '' ? ` title="${e(title)}"` : ''}>${html}</button>`;
}

/**
 * The view's icons: 16 px line drawings in the text's colour, inline (the
 * page loads no font), drawn by the presentation attributes the
 * Content-Security-Policy allows.
 */
export const icons = {
  model: '<rect x="4.5" y="4.5" width="7" height="7" rx="1"/><path d="M6.5 2v2.5M9.5 2v2.5M6.5 11.5V14M9.5 11.5V14M2 6.5h2.5M2 9.5h2.5M11.5 6.5H14M11.5 9.5H14"/>',
  intent: '<circle cx="8" cy="8" r="5.5"/><circle cx="8" cy="8" r="2"/>',
  engine: '<rect x="2" y="3" width="12" height="10" rx="1"/><path d="M4.5 6.5 6.5 8l-2 1.5M8 10h3"/>',
  add: '<path d="M8 3v10M3 8h10"/>',
  file: '<path d="M10.5 5v5.5a2.5 2.5 0 0 1-5 0V4a1.5 1.5 0 0 1 3 0v6.5a.5.5 0 0 1-1 0V5"/>',
  selection: '<path d="M2.5 4h11M2.5 12h7"/><rect x="2" y="6.5" width="12" height="3" rx=".5"/>',
  image: '<rect x="2" y="3" width="12" height="10" rx="1"/><path d="m2 11 3.5-3.5 3 3 2-2L14 12"/><circle cx="10.5" cy="6" r="1"/>',
  send: '<path d="M2.5 8 13.5 3l-4 10.5L7.5 9z"/>',
} as const;

/** icon is one of the view's icons as inline SVG; the element it is in names it. */
export function icon(name: keyof typeof icons): string {
  return `<svg class="icon" viewBox="0 0 16 16" width="16" height="16" aria-hidden="true" focusable="false" fill="none" stroke="currentColor" stroke-width="1.2" stroke-linecap="round" stroke-linejoin="round">${icons[name]}</svg>`;
}

/**
 * chip is a button of the header: an icon and its value, the name of what
 * it chooses said to screen readers (and in the tooltip) but not drawn, so
 * the header keeps one row at the side bar's default width.
 */
function chip(name: string, value: string, action: string, ic: keyof typeof icons, title: string): string {
  return rawButton(`${icon(ic)}<span class="name">${e(name)}: </span><span class="value">${e(value)}</span>`, action, {}, 'chip', `${name}: ${value}. ${title}`);
}

const stateMarks: Record<string, string> = {
  planning: '…',
  running: '●',
  waiting: '?',
  pending: '○',
  done: '✓',
  failed: '✗',
  stopped: '■',
  skipped: '↷',
  blocked: '⊘',
  interrupted: '!',
};

function stateBadge(state: string): string {
  return `<span class="badge state-${e(state)}">${e(stateMarks[state] ?? '')} ${e(state)}</span>`;
}

/** renderPending is a card of what waits on the person, with its answers. */
export function renderPending(p: ViewPending): string {
  const head = p.kind === 'approval' ? 'Approve?' : p.kind === 'question' ? 'Question' : 'Proposed change';
  let body = `<div class="md">${markdown(p.text)}</div>`;
  let actions = '';
  if (p.kind === 'proposal') {
    body += `<ul class="files">${p.files.map((f) =>
      `<li><span class="op">${e(f.operation)}</span> <span class="path">${e(f.path)}</span>${f.diffId !== undefined ? ` ${button('Diff', 'diff', { diff: f.diffId }, 'link', `Open the proposed change to ${f.path} in the diff editor`)}` : ''}</li>`).join('')}</ul>`;
    actions = p.reviewing
      ? '<span class="hint">Open in the Refactor Preview: apply or discard it there.</span>'
      : button('Accept', 'answer', { id: p.id, value: 'Accept' }, 'primary') +
        button('Reject', 'answer', { id: p.id, value: 'Reject' }, 'secondary') +
        button('Review…', 'review', { id: p.id }, 'secondary', 'Pick the changes that land in the Refactor Preview');
  } else if (p.kind === 'question' && p.options.length === 0) {
    actions = `<input type="text" class="answer" data-id="${e(p.id)}" placeholder="Your answer (Enter sends)" aria-label="Your answer">` +
      button('Dismiss', 'dismiss', { id: p.id }, 'secondary', 'Tell the agent you do not answer');
  } else {
    actions = p.options.map((o, i) => button(o, 'answer', { id: p.id, value: o }, i === 0 ? 'primary' : 'secondary')).join('') +
      (p.kind === 'question' ? button('Dismiss', 'dismiss', { id: p.id }, 'secondary', 'Tell the agent you do not answer') : '');
  }
  return `<div class="pending kind-${e(p.kind)}" data-pending="${e(p.id)}"><div class="pending-head">${e(head)}</div>${body}<div class="actions">${actions}</div></div>`;
}

const checkMarks: Record<ViewCheck['status'], string> = { done: '☑', in_progress: '→', pending: '☐' };

/** renderChecklist is a list of todos or steps, each with its mark. */
export function renderChecklist(items: readonly ViewCheck[]): string {
  return `<ul class="checklist">${items.map((c) =>
    `<li class="check check-${e(c.status)}"><span class="mark" aria-label="${e(c.status.replace('_', ' '))}">${checkMarks[c.status]}</span> ${e(c.text)}</li>`).join('')}</ul>`;
}

function renderEntry(taskId: string, group: string, x: ViewEntry): string {
  switch (x.kind) {
    case 'text':
      return `<div class="text md${x.streaming ? ' streaming' : ''}">${markdown(x.text)}</div>`;
    case 'thinking':
      // Folded: one line that a click, Enter or Space opens (a <summary> is focusable).
      return `<details class="thinking${x.streaming ? ' streaming' : ''}" data-key="${e(`${taskId}/${group}/${x.id}`)}"><summary>Thinking…</summary><div class="thought">${e(x.text)}</div></details>`;
    case 'checklist': {
      const head = x.items.length === 0 ? `${x.what === 'todos' ? 'Todos' : 'Steps'} cleared` : `${x.what === 'todos' ? 'Todos' : 'Steps'}: ${x.count}`;
      return `<details class="checklist-entry" data-key="${e(`${taskId}/${group}/${x.id}`)}"><summary>${e(head)}</summary>${renderChecklist(x.items)}</details>`;
    }
    case 'tool': {
      const mark = x.ok === undefined ? '…' : x.ok ? '✓' : '✗';
      const cls = x.ok === undefined ? 'tool-running' : x.ok ? 'tool-ok' : 'tool-failed';
      // Labelled, so that neither reads as the agent's own words.
      const result = x.result !== undefined && x.result !== ''
        ? `<div class="label">${x.ok === false ? 'Error' : 'Result'}</div><div class="result">${e(x.result)}</div>`
        : '';
      return `<details class="tool ${cls}" data-key="${e(`${taskId}/${group}/${x.id}`)}"><summary><span class="mark">${mark}</span> ${e(x.detail)}</summary><div class="label">Arguments</div><pre><code>${e(x.args)}</code></pre>${result}</details>`;
    }
    case 'change': {
      const word = x.status === 'applied' ? 'applied' : x.status === 'rejected' ? 'rejected' : 'held for review';
      const diff = x.diffId !== undefined ? ` ${button('Diff', 'diff', { diff: x.diffId }, 'link', `Open the change to ${x.path} in the diff editor`)}` : '';
      const reason = x.reason !== undefined && x.reason !== '' ? `<div class="reason">${e(x.reason)}</div>` : '';
      return `<div class="change change-${e(x.status)}"><span class="path">${e(x.path)}</span> <span class="word">${e(word)}</span>${diff}${reason}</div>`;
    }
    case 'ask':
      return `<div class="ask"><span class="q">${inline(x.question)}</span>${x.answered ? ` <span class="a">${x.answer === null || x.answer === undefined ? 'no answer' : `→ ${e(x.answer)}`}</span>` : ''}</div>`;
    case 'note':
      return `<div class="note${x.tone !== undefined ? ` note-${e(x.tone)}` : ''}">${markdown(x.text)}</div>`;
  }
}

function renderGroup(t: ViewTask, g: ViewGroup): string {
  const entries = g.entries.map((x) => renderEntry(t.taskId, g.id, x)).join('') + g.pending.map(renderPending).join('');
  if (g.id === '') {
    return entries === '' ? '' : `<div class="coordinator">${entries}</div>`;
  }
  const actions = !t.ended && (g.state === 'pending' || g.state === 'running')
    ? `<span class="group-actions">${button('Skip', 'skip', { task: t.taskId, subtask: g.id }, 'link', 'Skip this subtask')}</span>`
    : '';
  const engine = g.engine !== undefined ? ` <span class="engine" title="Runs on the engine ${e(g.engine)}">[${e(g.engine)}]</span>` : '';
  const usage = g.usage !== '' ? `<div class="meta usage">${e(g.usage)}</div>` : '';
  const todos = g.todos.length > 0 ? `<div class="todos" aria-label="Todos of subtask ${e(g.id)}">${renderChecklist(g.todos)}</div>` : '';
  const steps = g.steps.length > 0 ? `<div class="steps" aria-label="Steps of the engine">${renderChecklist(g.steps)}</div>` : '';
  return `<details class="subtask" data-key="${e(`${t.taskId}/${g.id}`)}" open><summary>${stateBadge(g.state)} <span class="title">${e(g.id)}. ${e(g.title)}</span>${engine}${actions}</summary>${usage}${todos}${steps}${entries === '' ? '<div class="empty">Not started yet.</div>' : entries}</details>`;
}

/** renderTask is one task of the conversation: the prompt, then what each subtask did. */
export function renderTask(t: ViewTask): string {
  const out: string[] = [];
  out.push(`<div class="prompt"><div class="who">You</div><div class="md">${markdown(t.prompt)}</div></div>`);
  const progress = t.progress !== ''
    ? ` <span class="progress" title="${e(t.ended && t.ending !== '' ? t.ending : 'Subtasks ended of those it has')}">${e(t.progress)}</span>`
    : '';
  out.push(`<div class="task-head">${stateBadge(t.state)}${progress}${t.engine !== undefined ? ` <span class="engine">on ${e(t.engine)}</span>` : ''}${!t.ended ? ` ${button('Stop', 'stop', { task: t.taskId }, 'secondary')}` : ''}</div>`);
  out.push(t.pending.map(renderPending).join(''));
  out.push(t.groups.map((g) => renderGroup(t, g)).join(''));
  if (t.summary !== undefined && t.summary !== '') {
    out.push(`<div class="summary md">${markdown(t.summary)}</div>`);
  }
  if (t.error !== undefined && t.error !== '') {
    out.push(`<div class="note note-error">${e(t.error)}</div>`);
  }
  if (t.changes.length > 0 || t.counts !== '') {
    out.push(`<div class="changes"><div class="changes-head">Changes: ${e(t.counts !== '' ? t.counts : 'none')}</div><ul>${t.changes.map((c) =>
      `<li class="${c.applied ? 'applied' : 'rejected'}"><span class="op">${e(c.operation)}</span> <span class="path">${e(c.path)}</span>${c.applied ? '' : ' <span class="word">rejected</span>'}${c.diffId !== undefined ? ` ${button('Diff', 'diff', { diff: c.diffId }, 'link')}` : ''}</li>`).join('')}</ul></div>`);
  }
  if (t.tokens !== '') {
    out.push(`<div class="meta">${e(t.tokens)}</div>`);
  }
  return `<section class="task task-${e(t.state)}" data-task="${e(t.taskId)}">${out.join('')}</section>`;
}

/** renderLog is the whole conversation: loose questions first, then its tasks. */
export function renderLog(s: ViewState): string {
  const loose = s.pending.length > 0 ? `<div class="loose">${s.pending.map(renderPending).join('')}</div>` : '';
  if (s.tasks.length === 0) {
    return `${loose}<div class="welcome"><p>Ask for a change: agentls plans it into subtasks and does it through VS Code.</p><p class="hint">Enter sends, Shift+Enter starts a new line, ↑ and ↓ go through what you sent before.</p></div>`;
  }
  return loose + s.tasks.map(renderTask).join('');
}

/** renderHeader is the line above the conversation: folder, model, intent, engine. */
export function renderHeader(s: ViewState): string {
  return (s.multiRoot ? `<span class="folder" title="The workspace folder of this conversation">${e(s.folderName)}</span>` : '') +
    chip('Model', s.model, 'model', 'model', 'Choose the model of the next task') +
    chip('Intent', s.intent !== '' ? s.intent : 'none', 'intent', 'intent', 'Choose the intent the next task works under') +
    chip('Engine', s.engine !== '' ? s.engine : 'as planned', 'engine', 'engine', 'Choose the engine every subtask of the next task runs on') +
    rawButton(`${icon('add')}<span class="name">New</span>`, 'new', {}, 'icon', 'New conversation');
}

/** renderAttachments are the chips of what goes along with the next prompt. */
export function renderAttachments(s: ViewState): string {
  return s.attachments.map((a) => `<span class="attachment${a.image ? ' attachment-image' : ''}">${e(a.label)} ${button('×', 'detach', { id: a.id }, 'link', `Remove ${a.label}`)}</span>`).join('');
}
