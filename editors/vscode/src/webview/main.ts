// The conversation view's script, in the webview: renders the state the
// extension posts, and posts back what the person does. Keyboard first: the
// prompt box takes the focus when the view is focused (never by itself: a
// view that shows a task started elsewhere leaves the keyboard where it
// was), Enter sends, Shift+Enter starts a new line, and ArrowUp / ArrowDown
// at the box's first / last line go through what was sent before. Bundled
// by esbuild into dist/webview.js.
import { icon, renderAttachments, renderHeader, renderLog } from './render';
import { FromView, ToView, ViewState } from './state';

interface VsCodeApi {
  postMessage(message: FromView): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();

function el(id: string): HTMLElement {
  const x = document.getElementById(id);
  if (x === null) {
    throw new Error(`#${id} is missing`);
  }
  return x;
}

const header = el('header');
const log = el('log');
const attachments = el('attachments');
const prompt = el('prompt') as HTMLTextAreaElement;
const send = el('send');
const hint = el('hint');

let state: ViewState | undefined;
/** Where the person is in the history: state.history.length is the draft. */
let historyAt = -1;
let draft = '';
/** The <details> the person opened or closed, by key: kept across renders. */
const toggled = new Map<string, boolean>();

function post(m: FromView): void {
  vscode.postMessage(m);
}

function render(s: ViewState): void {
  state = s;
  const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
  // Keep what the person is typing in an answer box across the redraw.
  const typing = new Map<string, string>();
  for (const input of log.querySelectorAll<HTMLInputElement>('input.answer')) {
    typing.set(input.dataset.id ?? '', input.value);
  }
  const focused = document.activeElement instanceof HTMLInputElement && document.activeElement.classList.contains('answer')
    ? document.activeElement.dataset.id
    : undefined;
  header.innerHTML = renderHeader(s);
  log.innerHTML = renderLog(s);
  attachments.innerHTML = renderAttachments(s);
  for (const b of document.querySelectorAll<HTMLButtonElement>('button[data-attach]')) {
    b.hidden = !s.canAttach;
  }
  for (const d of log.querySelectorAll<HTMLDetailsElement>('details[data-key]')) {
    const open = toggled.get(d.dataset.key ?? '');
    if (open !== undefined) {
      d.open = open;
    }
  }
  for (const input of log.querySelectorAll<HTMLInputElement>('input.answer')) {
    const id = input.dataset.id ?? '';
    input.value = typing.get(id) ?? '';
    if (id === focused) {
      input.focus();
    }
  }
  if (send.dataset.running !== String(s.running)) {
    send.dataset.running = String(s.running);
    send.innerHTML = s.running ? `${icon('add')}<span class="label">Add subtask</span>` : `${icon('send')}<span class="label">Send</span>`;
    send.title = s.running ? 'Add subtask (Enter): what you typed becomes a subtask of the running task' : 'Send (Enter)';
  }
  prompt.placeholder = s.running
    ? 'Add a subtask to the running task…'
    : s.tasks.length > 0 ? 'Follow up…' : 'Ask agentls for a change…';
  hint.textContent = s.running
    ? 'Enter adds a subtask · Shift+Enter new line'
    : 'Enter sends · Shift+Enter new line · ↑ ↓ history';
  hint.title = s.running
    ? 'A task is running: what you send is added to it as a subtask. Enter sends, Shift+Enter starts a new line.'
    : 'Enter sends, Shift+Enter starts a new line, ↑ and ↓ go through what you sent before.';
  if (historyAt < 0 || historyAt > s.history.length) {
    historyAt = s.history.length;
  }
  if (atBottom) {
    log.scrollTop = log.scrollHeight;
  }
}

function submit(): void {
  const text = prompt.value;
  if (text.trim() === '') {
    return;
  }
  post({ type: 'send', text });
  prompt.value = '';
  draft = '';
  historyAt = (state?.history.length ?? 0) + 1;
}

function caretLine(): { first: boolean; last: boolean } {
  const v = prompt.value;
  const at = prompt.selectionStart;
  return { first: !v.slice(0, at).includes('\n'), last: !v.slice(prompt.selectionEnd).includes('\n') };
}

function recall(step: -1 | 1): boolean {
  const history = state?.history ?? [];
  const next = historyAt + step;
  if (next < 0 || next > history.length) {
    return false;
  }
  if (historyAt === history.length) {
    draft = prompt.value;
  }
  historyAt = next;
  prompt.value = next === history.length ? draft : history[next] ?? '';
  const end = prompt.value.length;
  prompt.setSelectionRange(end, end);
  return true;
}

prompt.addEventListener('keydown', (ev) => {
  if (ev.isComposing) {
    return;
  }
  if (ev.key === 'Enter' && !ev.shiftKey && !ev.altKey && !ev.ctrlKey && !ev.metaKey) {
    ev.preventDefault();
    submit();
    return;
  }
  if (ev.key === 'ArrowUp' && !ev.shiftKey && caretLine().first && recall(-1)) {
    ev.preventDefault();
  } else if (ev.key === 'ArrowDown' && !ev.shiftKey && caretLine().last && recall(1)) {
    ev.preventDefault();
  }
});

// An image pasted into the prompt box goes along with the prompt, when
// agentls takes attachments; text pastes as usual.
prompt.addEventListener('paste', (ev) => {
  const files = [...(ev.clipboardData?.files ?? [])].filter((f) => f.type.startsWith('image/'));
  if (files.length === 0 || state?.canAttach !== true) {
    return;
  }
  ev.preventDefault();
  for (const f of files) {
    const reader = new FileReader();
    reader.addEventListener('load', () => {
      const url = typeof reader.result === 'string' ? reader.result : '';
      const comma = url.indexOf(',');
      if (comma >= 0) {
        post({ type: 'paste', data: url.slice(comma + 1), mimeType: f.type });
      }
    });
    reader.readAsDataURL(f);
  }
});

send.addEventListener('click', () => {
  submit();
  prompt.focus();
});

for (const b of document.querySelectorAll<HTMLButtonElement>('button[data-attach]')) {
  b.addEventListener('click', () => {
    const what = b.dataset.attach;
    post({ type: 'attach', what: what === 'selection' || what === 'image' ? what : 'file' });
  });
}

// One handler for every action button the renders draw.
document.addEventListener('click', (ev) => {
  const target = ev.target instanceof Element ? ev.target.closest<HTMLButtonElement>('button[data-action]') : null;
  if (target === null) {
    return;
  }
  const d = target.dataset;
  switch (d.action) {
    case 'answer':
      post({ type: 'answer', id: d.id ?? '', value: d.value ?? '' });
      break;
    case 'dismiss':
      post({ type: 'answer', id: d.id ?? '', value: null });
      break;
    case 'review':
      post({ type: 'review', id: d.id ?? '' });
      break;
    case 'diff':
      post({ type: 'diff', diffId: d.diff ?? '' });
      break;
    case 'stop':
      post({ type: 'stop', taskId: d.task ?? '' });
      break;
    case 'skip':
      ev.preventDefault(); // inside a <summary>: do not fold it
      post({ type: 'skip', taskId: d.task ?? '', subtaskId: d.subtask ?? '' });
      break;
    case 'detach':
      post({ type: 'detach', id: d.id ?? '' });
      break;
    case 'model':
      post({ type: 'model' });
      break;
    case 'intent':
      post({ type: 'intent' });
      break;
    case 'engine':
      post({ type: 'engine' });
      break;
    case 'new':
      post({ type: 'new' });
      prompt.focus();
      break;
    default:
      break;
  }
});

// A free-text answer: Enter sends it.
log.addEventListener('keydown', (ev) => {
  const t = ev.target;
  if (t instanceof HTMLInputElement && t.classList.contains('answer') && ev.key === 'Enter' && !ev.isComposing) {
    ev.preventDefault();
    if (t.value.trim() !== '') {
      post({ type: 'answer', id: t.dataset.id ?? '', value: t.value });
    }
  }
});

log.addEventListener('toggle', (ev) => {
  const d = ev.target;
  if (d instanceof HTMLDetailsElement && d.dataset.key !== undefined) {
    toggled.set(d.dataset.key, d.open);
  }
}, true);

window.addEventListener('message', (ev: MessageEvent<ToView>) => {
  const m = ev.data;
  if (m.type === 'state') {
    render(m.state);
  } else {
    prompt.focus();
  }
});

// The view focused (Focus on Conversation View, a click on it, Tab from
// the side bar) with nothing of its own focused: the prompt box takes the
// keyboard. A click on a button or a text focuses that instead, after this.
window.addEventListener('focus', () => {
  if (document.activeElement === null || document.activeElement === document.body) {
    prompt.focus();
  }
});

post({ type: 'ready' });
