// The conversation view's HTML, from its state: pure functions, so the unit
// tests check what the person sees and the webview only swaps it in. Every
// text is escaped (markdown() and escapeHtml()); actions are buttons with
// data attributes that the webview's one click handler reads.
import { escapeHtml, inline, markdown } from './markdown';
import { ViewCheck, ViewEntry, ViewGroup, ViewPending, ViewState, ViewTask } from './state';

const e = escapeHtml;

function button(label: string, action: string, data: Record<string, string>, cls = '', title = ''): string {
  const attrs = Object.entries(data).map(([k, v]) => ` data-${k}="${e(v)}"`).join('');
  return `<button type="button" class="${e(cls)}" data-action="${e(action)}"${attrs}${title !== '' ? ` title="${e(title)}"` : ''}>${e(label)}</button>`;
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
      const result = x.result !== undefined && x.result !== '' ? `<div class="result">${e(x.result)}</div>` : '';
      return `<details class="tool ${cls}" data-key="${e(`${taskId}/${group}/${x.id}`)}"><summary><span class="mark">${mark}</span> ${e(x.detail)}</summary><pre><code>${e(x.args)}</code></pre>${result}</details>`;
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
    button(`Model: ${s.model}`, 'model', {}, 'chip', 'Choose the model of the next task') +
    button(s.intent !== '' ? `Intent: ${s.intent}` : 'Intent: none', 'intent', {}, 'chip', 'Choose the intent the next task works under') +
    button(s.engine !== '' ? `Engine: ${s.engine}` : 'Engine: as planned', 'engine', {}, 'chip', 'Choose the engine every subtask of the next task runs on') +
    button('New', 'new', {}, 'chip', 'Start a new conversation');
}

/** renderAttachments are the chips of what goes along with the next prompt. */
export function renderAttachments(s: ViewState): string {
  return s.attachments.map((a) => `<span class="attachment${a.image ? ' attachment-image' : ''}">${e(a.label)} ${button('×', 'detach', { id: a.id }, 'link', `Remove ${a.label}`)}</span>`).join('');
}
