// The view model of running and finished tasks, fed by agent/taskUpdate
// notifications and agent/run results. It knows nothing of VS Code's UI: the
// tree view and the status bar render it.
import { RunResult, Subtask, TaskState, TaskUpdateParams } from '../protocol';

export interface TaskView {
  taskId: string;
  sessionId: string;
  prompt: string;
  state: TaskState;
  /** seq of the last notification applied; 0 before the first. */
  seq: number;
  subtasks: Subtask[];
  /** The current (or last) tool call of each subtask, e.g. "edit_file main.go". */
  activity: Map<string, string>;
  /** The last message of each subtask (or "" for the coordinator). */
  messages: Map<string, string>;
  /** The question the task waits on, while it waits. */
  question?: string;
  inputTokens: number;
  outputTokens: number;
  summary?: string;
  error?: string;
  changes: { path: string; operation: string; applied: boolean }[];
}

export const finalStates: readonly TaskState[] = ['done', 'failed', 'stopped', 'interrupted'];

export function isFinal(state: TaskState): boolean {
  return finalStates.includes(state);
}

/** describeTool renders a tool call as one short line. */
export function describeTool(tool: string, args: unknown): string {
  const a = (typeof args === 'object' && args !== null ? args : {}) as Record<string, unknown>;
  const str = (k: string): string | undefined => (typeof a[k] === 'string' ? a[k] : undefined);
  const detail = str('path') ?? str('command') ?? str('pattern') ?? str('regex') ?? str('question') ?? str('intent_id') ?? str('summary');
  return detail !== undefined && detail !== '' ? `${tool} ${oneLine(detail, 60)}` : tool;
}

/** oneLine keeps the first line of s, cut to max characters. */
export function oneLine(s: string, max: number): string {
  const first = s.split(/\r?\n/, 1)[0]?.trim() ?? '';
  const chars = Array.from(first);
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : first;
}

type Listener = () => void;

/** TaskStore holds the tasks of this window, newest first, at most `keep` of them. */
export class TaskStore {
  private readonly byId = new Map<string, TaskView>();
  private order: string[] = [];
  private readonly listeners = new Set<Listener>();
  private readonly deltas = new Map<string, string>();

  constructor(private readonly keep = 20) {}

  onDidChange(listener: Listener): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  private changed(): void {
    for (const l of this.listeners) {
      l();
    }
  }

  private add(taskId: string, prompt: string): TaskView {
    const t: TaskView = {
      taskId,
      sessionId: '',
      prompt,
      state: 'planning',
      seq: 0,
      subtasks: [],
      activity: new Map(),
      messages: new Map(),
      inputTokens: 0,
      outputTokens: 0,
      changes: [],
    };
    this.byId.set(taskId, t);
    this.order.unshift(taskId);
    while (this.order.length > this.keep) {
      const old = this.order.pop();
      if (old !== undefined) {
        this.byId.delete(old);
      }
    }
    return t;
  }

  /** begin records a task the client is starting, before its first notification. */
  begin(taskId: string, prompt: string): TaskView {
    const t = this.byId.get(taskId) ?? this.add(taskId, prompt);
    t.prompt = prompt;
    this.changed();
    return t;
  }

  /**
   * update applies one agent/taskUpdate. It returns false for a notification
   * older than one already applied (seq not above the task's).
   */
  update(p: TaskUpdateParams): boolean {
    let t = this.byId.get(p.taskId);
    t ??= this.add(p.taskId, '');
    if (p.seq <= t.seq) {
      return false;
    }
    t.seq = p.seq;
    t.sessionId = p.sessionId || t.sessionId;
    if (!isFinal(t.state) || isFinal(p.state)) {
      t.state = p.state;
    }
    if (Array.isArray(p.subtasks)) {
      t.subtasks = p.subtasks;
    }
    this.applyEvent(t, p);
    this.changed();
    return true;
  }

  private applyEvent(t: TaskView, p: TaskUpdateParams): void {
    const e = p.event;
    const sub = e.subtaskId ?? '';
    const key = `${t.taskId}\u0000${sub}`;
    switch (e.kind) {
      case 'toolCall':
        if (e.tool !== undefined) {
          t.activity.set(sub, describeTool(e.tool, e.arguments));
        }
        break;
      case 'toolResult':
        if (e.tool !== undefined) {
          const mark = e.ok === false ? '✗' : '✓';
          const prev = t.activity.get(sub);
          t.activity.set(sub, `${mark} ${prev !== undefined && prev.startsWith(e.tool) ? prev : e.tool}`);
        }
        break;
      case 'message':
        this.deltas.delete(key);
        if (e.text !== undefined && e.text !== '') {
          t.messages.set(sub, e.text);
        }
        break;
      case 'messageDelta': {
        const text = (this.deltas.get(key) ?? '') + (e.text ?? '');
        this.deltas.set(key, text);
        t.messages.set(sub, text);
        break;
      }
      case 'subtaskFinished':
        t.activity.delete(sub);
        if (e.summary !== undefined && e.summary !== '') {
          t.messages.set(sub, e.summary);
        }
        break;
      case 'ask':
        t.question = e.question ?? e.text ?? 'waiting for you';
        break;
      case 'answered':
        t.question = undefined;
        break;
      case 'usage':
        // The event carries the task's totals so far (docs/PROTOCOL.md §5):
        // shown as they are, never added up. A zero total is left out.
        t.inputTokens = e.inputTokens ?? 0;
        t.outputTokens = e.outputTokens ?? 0;
        break;
      case 'stateChanged':
        if (p.state !== 'waiting') {
          t.question = undefined;
        }
        if (e.summary !== undefined && e.summary !== '') {
          t.summary = e.summary;
        }
        break;
      default:
        break;
    }
  }

  /** finish applies the agent/run result: the final word on a task. */
  finish(r: RunResult): void {
    const t = this.byId.get(r.taskId) ?? this.add(r.taskId, '');
    t.state = r.state;
    t.sessionId = r.sessionId || t.sessionId;
    t.summary = r.summary;
    t.question = undefined;
    if (Array.isArray(r.subtasks)) {
      t.subtasks = r.subtasks;
    }
    t.activity.clear();
    t.inputTokens = r.usage.inputTokens;
    t.outputTokens = r.usage.outputTokens;
    t.changes = (r.changes ?? []).map((c) => ({ path: c.path, operation: c.operation, applied: c.applied }));
    this.changed();
  }

  /** fail marks a task whose agent/run request itself failed. */
  fail(taskId: string, message: string): void {
    const t = this.byId.get(taskId);
    if (t === undefined) {
      return;
    }
    t.state = 'failed';
    t.error = message;
    t.question = undefined;
    t.activity.clear();
    this.changed();
  }

  get(taskId: string): TaskView | undefined {
    return this.byId.get(taskId);
  }

  /** tasks lists every task, newest first. */
  tasks(): TaskView[] {
    return this.order.map((id) => this.byId.get(id)).filter((t): t is TaskView => t !== undefined);
  }

  /** running lists the tasks that have not ended, newest first. */
  running(): TaskView[] {
    return this.tasks().filter((t) => !isFinal(t.state));
  }

  /** latest is the newest task, running or not. */
  latest(): TaskView | undefined {
    return this.tasks()[0];
  }

  clearFinished(): void {
    this.order = this.order.filter((id) => {
      const t = this.byId.get(id);
      if (t !== undefined && isFinal(t.state)) {
        this.byId.delete(id);
        return false;
      }
      return true;
    });
    this.changed();
  }
}

/** progressText is "2/3 subtasks" style counting of ended subtasks. */
export function progressText(t: TaskView): string {
  if (t.subtasks.length === 0) {
    return '';
  }
  const ended = t.subtasks.filter((s) => s.state === 'done' || s.state === 'failed' || s.state === 'skipped' || s.state === 'blocked').length;
  return `${ended}/${t.subtasks.length}`;
}

/** formatTokens renders a token count compactly: 950, 12.3k, 1.2M. */
export function formatTokens(n: number): string {
  if (n < 1000) {
    return String(n);
  }
  if (n < 1_000_000) {
    return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  }
  return `${(n / 1_000_000).toFixed(1)}M`;
}
