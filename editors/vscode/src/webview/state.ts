// What the extension tells the conversation view, and what the view asks of
// the extension: the messages both sides of the webview exchange. Plain
// data, no DOM and no VS Code, shared by both sides.

export interface ViewPending {
  id: string;
  kind: 'approval' | 'question' | 'proposal';
  /** Markdown: code spans rendered, paths relative. */
  text: string;
  options: string[];
  files: { path: string; operation: string; diffId?: string }[];
  reviewing: boolean;
}

/** One line of a checklist: a worker's todo or an engine's step. */
export interface ViewCheck {
  text: string;
  status: 'pending' | 'in_progress' | 'done';
}

/** One thing a subtask did, as the view shows it. */
export type ViewEntry =
  | { kind: 'text'; id: string; text: string; streaming: boolean }
  /** Folded: one line "Thinking…" until opened. */
  | { kind: 'thinking'; id: string; text: string; streaming: boolean }
  /** A checklist as the worker (todos) or the engine (steps) set it, whole. */
  | { kind: 'checklist'; id: string; what: 'todos' | 'steps'; count: string; items: ViewCheck[] }
  | { kind: 'tool'; id: string; tool: string; detail: string; args: string; ok?: boolean; result?: string }
  | { kind: 'change'; id: string; path: string; status: 'applied' | 'rejected' | 'held'; reason?: string; diffId?: string }
  | { kind: 'ask'; id: string; question: string; answered: boolean; answer?: string | null }
  | { kind: 'note'; id: string; text: string; tone?: 'warning' | 'error' };

export interface ViewGroup {
  /** '' for the coordinator (the plan), else the subtask's id. */
  id: string;
  title: string;
  state: string;
  entries: ViewEntry[];
  pending: ViewPending[];
  /** The external agent it runs on; absent: the built-in worker. */
  engine?: string;
  /** Its tokens, cost and context in one line, '' before its first call. */
  usage: string;
  /** The worker's checklist as it stands. */
  todos: ViewCheck[];
  /** The engine's own plan as it stands. */
  steps: ViewCheck[];
}

export interface ViewTask {
  taskId: string;
  prompt: string;
  state: string;
  ended: boolean;
  summary?: string;
  error?: string;
  /** "2 applied, 1 rejected", '' when no change was made. */
  counts: string;
  /**
   * Its subtasks counted: those ended of those it has while it runs
   * ("1/3"), then those done of every one it had and how the others ended,
   * from agentls's counts ("1/3 (1 skipped, 1 removed)"); '' before the plan.
   */
  progress: string;
  /** The same end in words ("1 of 3 subtasks done, 1 skipped, 1 removed"), '' before the end. */
  ending: string;
  /** Tokens, cost and context in use in one line, '' before the first call. */
  tokens: string;
  /** The engine the task was run on, when one was chosen. */
  engine?: string;
  groups: ViewGroup[];
  /** What waits on the person that no subtask claims. */
  pending: ViewPending[];
  changes: { path: string; operation: string; applied: boolean; diffId?: string }[];
}

export interface ViewState {
  folderName: string;
  multiRoot: boolean;
  /** The model the next task runs with, in words. */
  model: string;
  /** The intent the next task works under, '' for none chosen. */
  intent: string;
  /** The engine the next task runs on, '' for the plan's choice. */
  engine: string;
  tasks: ViewTask[];
  /** What waits on the person outside this conversation's tasks. */
  pending: ViewPending[];
  /**
   * The agentls of the conversation takes files and selections along with a
   * prompt (it advertises attachments): the attach buttons show only then.
   */
  canAttach: boolean;
  attachments: { id: string; label: string; image: boolean }[];
  /** A task of this conversation is running: what is sent becomes its subtask. */
  running: boolean;
  history: string[];
}

/** Messages from the extension to the view. */
export type ToView =
  | { type: 'state'; state: ViewState }
  | { type: 'focus' };

/** Messages from the view to the extension. */
export type FromView =
  | { type: 'ready' }
  | { type: 'send'; text: string }
  | { type: 'stop'; taskId: string }
  | { type: 'skip'; taskId: string; subtaskId: string }
  | { type: 'answer'; id: string; value: string | null }
  | { type: 'review'; id: string }
  | { type: 'diff'; diffId: string }
  | { type: 'attach'; what: 'file' | 'selection' | 'image' }
  /** An image pasted into the prompt box: its bytes in base64. */
  | { type: 'paste'; data: string; mimeType: string }
  | { type: 'engine' }
  | { type: 'detach'; id: string }
  | { type: 'model' }
  | { type: 'intent' }
  | { type: 'new' };

/** isFromView checks a message the view posted (anything may arrive). */
export function isFromView(m: unknown): m is FromView {
  if (typeof m !== 'object' || m === null) {
    return false;
  }
  const x = m as Record<string, unknown>;
  const str = (k: string): boolean => typeof x[k] === 'string';
  switch (x.type) {
    case 'ready':
    case 'model':
    case 'intent':
    case 'engine':
    case 'new':
      return true;
    case 'paste':
      return str('data') && str('mimeType') && /^image\//.test(x.mimeType as string);
    case 'send':
      return str('text');
    case 'stop':
      return str('taskId');
    case 'skip':
      return str('taskId') && str('subtaskId');
    case 'answer':
      return str('id') && (x.value === null || str('value'));
    case 'review':
      return str('id');
    case 'diff':
      return str('diffId');
    case 'attach':
      return x.what === 'file' || x.what === 'selection' || x.what === 'image';
    case 'detach':
      return str('id');
    default:
      return false;
  }
}
