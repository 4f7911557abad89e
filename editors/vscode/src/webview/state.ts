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

/** One thing a subtask did, as the view shows it. */
export type ViewEntry =
  | { kind: 'text'; id: string; text: string; streaming: boolean }
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
  tokens: string;
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
  tasks: ViewTask[];
  /** What waits on the person outside this conversation's tasks. */
  pending: ViewPending[];
  /**
   * The agentls of the conversation takes files and selections along with a
   * prompt (it advertises attachments): the attach buttons show only then.
   */
  canAttach: boolean;
  attachments: { id: string; label: string }[];
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
  | { type: 'attach'; what: 'file' | 'selection' }
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
    case 'new':
      return true;
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
      return x.what === 'file' || x.what === 'selection';
    case 'detach':
      return str('id');
    default:
      return false;
  }
}
