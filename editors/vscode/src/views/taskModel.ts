// The view model of running and finished tasks, fed by agent/taskUpdate
// notifications and agent/run results. It knows nothing of VS Code's UI: the
// tree view and the status bar render it.
import { InstructionFile, PlanStep, RunResult, Subtask, SubtaskCounts, TaskState, TaskUpdateParams, Todo, Usage } from '../protocol';

/**
 * One thing a subtask (or the coordinator) did, in order: the model's text
 * (streamed while `streaming`), a tool call with its result, a change, a
 * question, a note of the task's steering. What the conversation view shows.
 */
export type Entry =
  | { kind: 'text'; id: string; text: string; streaming: boolean }
  /** A block of the model's thinking: shown folded, never recorded. */
  | { kind: 'thinking'; id: string; text: string; streaming: boolean }
  /** The checklist the worker set (its todo tool), whole. */
  | { kind: 'todos'; id: string; todos: Todo[] }
  /** The plan an engine reported, whole. */
  | { kind: 'steps'; id: string; steps: PlanStep[] }
  | { kind: 'tool'; id: string; tool: string; detail: string; arguments?: unknown; ok?: boolean; result?: string }
  | { kind: 'change'; id: string; path: string; status: 'applied' | 'rejected' | 'held'; reason?: string; diffId?: string }
  | { kind: 'ask'; id: string; question: string; options: string[]; answered: boolean; answer?: string | null }
  | { kind: 'note'; id: string; text: string; tone?: 'warning' | 'error' };

/** The most entries kept per subtask; older ones are dropped first. */
export const maxEntries = 400;

/** An `ask` event not yet answered: what a reverse call that waits on the person belongs to. */
export interface OpenAsk {
  folder: string;
  taskId: string;
  subtaskId: string;
  question: string;
  options: string[];
  /** Taken by the request it announced (window/showMessageRequest or agent/ask). */
  claimed: boolean;
}

export interface TaskView {
  taskId: string;
  /** The workspace folder the task runs in (its URI), '' when not known. */
  folder: string;
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
  /** The task's cost so far, where every call has a known price. */
  cost?: number;
  /** Of its input tokens, those the provider's prompt cache read. */
  cacheReadTokens?: number;
  /** The project's instruction files the task works under (its last instructions event). */
  instructions?: InstructionFile[];
  /** How full the context of the agent of the last usage event was ('' the coordinator). */
  context?: { subtaskId: string; tokens: number; window?: number };
  summary?: string;
  error?: string;
  changes: { path: string; operation: string; applied: boolean; diff?: string }[];
  /** Changes applied and rejected (agent/run's counts), once the task has ended. */
  applied?: number;
  rejected?: number;
  /**
   * How its subtasks ended (agent/run's counts, the removed ones
   * included), once the task has ended: what every view says of the end.
   */
  counts?: SubtaskCounts;
  /** What each subtask did ('' is the coordinator), oldest first. */
  transcript: Map<string, Entry[]>;
  /** The model and intent the task was started with, when the client chose them. */
  model?: string;
  intentId?: string;
  /** The engine the client forced for every subtask. */
  engine?: string;
}

export const finalStates: readonly TaskState[] = ['done', 'failed', 'stopped', 'interrupted'];

export function isFinal(state: TaskState): boolean {
  return finalStates.includes(state);
}

/** The most characters of a tool call's line kept. */
const maxDetail = 1000;

/**
 * describeTool renders a tool call as one line: the tool and what it works
 * on, whole (views shorten it once they have made its paths relative).
 */
export function describeTool(tool: string, args: unknown): string {
  const a = (typeof args === 'object' && args !== null ? args : {}) as Record<string, unknown>;
  const str = (k: string): string | undefined => (typeof a[k] === 'string' ? a[k] : undefined);
  const detail = str('path') ?? str('command') ?? str('pattern') ?? str('regex') ?? str('question') ?? str('intent_id') ?? str('summary');
  return detail !== undefined && detail !== '' ? `${tool} ${oneLine(detail, maxDetail)}` : tool;
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
  private asks: OpenAsk[] = [];

  /**
   * diffOf names the recorded edit behind a change event (the last edit of
   * path in folder), for the conversation's diff link.
   */
  diffOf: (folder: string, path: string) => string | undefined = () => undefined;

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

  private add(taskId: string, prompt: string, folder = ''): TaskView {
    const t: TaskView = {
      taskId,
      folder,
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
      transcript: new Map(),
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
  begin(taskId: string, prompt: string, opts: { folder?: string; sessionId?: string; model?: string; intentId?: string; engine?: string } = {}): TaskView {
    const t = this.byId.get(taskId) ?? this.add(taskId, prompt, opts.folder);
    t.prompt = prompt;
    if (opts.folder !== undefined) {
      t.folder = opts.folder;
    }
    if (opts.sessionId !== undefined && t.sessionId === '') {
      t.sessionId = opts.sessionId;
    }
    t.model = opts.model;
    t.intentId = opts.intentId;
    t.engine = opts.engine;
    this.changed();
    return t;
  }

  /**
   * update applies one agent/taskUpdate of the agentls of folder. It
   * returns false for a notification older than one already applied (seq
   * not above the task's).
   */
  update(p: TaskUpdateParams, folder = ''): boolean {
    let t = this.byId.get(p.taskId);
    t ??= this.add(p.taskId, '', folder);
    if (t.folder === '') {
      t.folder = folder;
    }
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

  private entries(t: TaskView, sub: string): Entry[] {
    let list = t.transcript.get(sub);
    if (list === undefined) {
      list = [];
      t.transcript.set(sub, list);
    }
    return list;
  }

  private push(t: TaskView, sub: string, e: Entry): void {
    const list = this.entries(t, sub);
    list.push(e);
    if (list.length > maxEntries) {
      list.splice(0, list.length - maxEntries);
    }
  }

  private applyEvent(t: TaskView, p: TaskUpdateParams): void {
    const e = p.event;
    const sub = e.subtaskId ?? '';
    const key = `${t.taskId}\u0000${sub}`;
    const id = String(p.seq);
    const list = (): Entry[] => this.entries(t, sub);
    const last = (): Entry | undefined => list().at(-1);
    if (e.kind === 'message' || e.kind === 'messageDelta' || e.kind === 'toolCall' || e.kind === 'subtaskFinished') {
      // The agent's thinking up to its next words or call is one block.
      const th = [...list()].reverse().find((x): x is Extract<Entry, { kind: 'thinking' }> => x.kind === 'thinking' && x.streaming);
      if (th !== undefined) {
        th.streaming = false;
      }
    }
    switch (e.kind) {
      case 'thinking': {
        const l = last();
        if (l?.kind === 'thinking' && l.streaming) {
          l.text += e.text ?? '';
        } else {
          this.push(t, sub, { kind: 'thinking', id, text: e.text ?? '', streaming: true });
        }
        break;
      }
      case 'todos':
        this.push(t, sub, { kind: 'todos', id, todos: Array.isArray(e.todos) ? e.todos : [] });
        break;
      case 'steps':
        // The engine's plan is the subtask's steps in this update.
        this.push(t, sub, { kind: 'steps', id, steps: [...(p.subtasks?.find((s) => s.id === sub)?.steps ?? [])] });
        break;
      case 'engineStarted':
        this.push(t, sub, { kind: 'note', id, text: `On engine ${e.text ?? ''}: ${e.summary ?? 'started'}` });
        break;
      case 'toolCall':
        if (e.tool !== undefined) {
          const detail = describeTool(e.tool, e.arguments);
          t.activity.set(sub, detail);
          this.push(t, sub, { kind: 'tool', id, tool: e.tool, detail, arguments: e.arguments });
        }
        break;
      case 'toolResult':
        if (e.tool !== undefined) {
          const mark = e.ok === false ? '✗' : '✓';
          const prev = t.activity.get(sub);
          t.activity.set(sub, `${mark} ${prev !== undefined && prev.startsWith(e.tool) ? prev : e.tool}`);
          const call = [...list()].reverse().find((x): x is Extract<Entry, { kind: 'tool' }> => x.kind === 'tool' && x.tool === e.tool && x.ok === undefined);
          if (call !== undefined) {
            call.ok = e.ok !== false;
            call.result = e.summary ?? '';
          }
        }
        break;
      case 'message': {
        this.deltas.delete(key);
        const text = e.text ?? '';
        if (text !== '') {
          t.messages.set(sub, text);
        }
        // The whole text of the call the deltas streamed, if they did.
        const l = [...list()].reverse().find((x): x is Extract<Entry, { kind: 'text' }> => x.kind === 'text' && x.streaming);
        if (l !== undefined) {
          l.text = text !== '' ? text : l.text;
          l.streaming = false;
        } else if (text !== '') {
          this.push(t, sub, { kind: 'text', id, text, streaming: false });
        }
        break;
      }
      case 'messageDelta': {
        const text = (this.deltas.get(key) ?? '') + (e.text ?? '');
        this.deltas.set(key, text);
        t.messages.set(sub, text);
        const l = last();
        if (l?.kind === 'text' && l.streaming) {
          l.text = text;
        } else {
          this.push(t, sub, { kind: 'text', id, text, streaming: true });
        }
        break;
      }
      case 'planned':
        if (e.text !== undefined && e.text !== '') {
          this.push(t, '', { kind: 'note', id, text: `Plan:\n${e.text}` });
        }
        break;
      case 'subtaskFinished': {
        t.activity.delete(sub);
        if (e.summary !== undefined && e.summary !== '') {
          t.messages.set(sub, e.summary);
        }
        const l = last();
        if (l?.kind === 'text' && l.streaming) {
          l.streaming = false;
        }
        this.deltas.delete(key);
        if (e.reason !== undefined && e.reason !== '') {
          this.push(t, sub, { kind: 'note', id, text: e.reason, tone: 'error' });
        }
        break;
      }
      case 'changeApplied':
      case 'changeRejected':
      case 'changeHeld':
        if (e.path !== undefined && e.path !== '') {
          const status = e.kind === 'changeApplied' ? 'applied' : e.kind === 'changeRejected' ? 'rejected' : 'held';
          const entry: Entry = { kind: 'change', id, path: e.path, status };
          if (e.reason !== undefined && e.reason !== '') {
            entry.reason = e.reason;
          }
          const diffId = status === 'held' ? undefined : this.diffOf(t.folder, e.path);
          if (diffId !== undefined) {
            entry.diffId = diffId;
          }
          this.push(t, sub, entry);
        }
        break;
      case 'blocked':
        this.push(t, sub, { kind: 'note', id, text: `Blocked: ${e.path ?? ''}${e.reason !== undefined && e.reason !== '' ? `: ${e.reason}` : ''}`, tone: 'warning' });
        break;
      case 'subtaskAdded':
        this.push(t, '', { kind: 'note', id, text: `Subtask ${sub} added: ${e.text ?? ''}` });
        break;
      case 'subtaskRemoved':
        this.push(t, '', { kind: 'note', id, text: `Subtask ${sub} removed` });
        break;
      case 'subtaskSkipped':
        this.push(t, '', { kind: 'note', id, text: `Subtask ${sub} skipped` });
        break;
      case 'intentSelected':
        this.push(t, sub, { kind: 'note', id, text: `Works under intent ${e.text ?? ''}` });
        break;
      case 'instructions':
        t.instructions = Array.isArray(e.instructions) ? e.instructions : [];
        this.push(t, sub, { kind: 'note', id, text: instructionsText(t.instructions) });
        break;
      case 'compacted':
        this.push(t, sub, {
          kind: 'note',
          id,
          text: `Context compacted: ${formatTokens(e.tokensBefore ?? 0)} → ${formatTokens(e.tokensAfter ?? 0)} tokens${e.text !== undefined && e.text !== '' ? `. ${e.text}` : ''}`,
        });
        break;
      case 'ask': {
        const question = e.question ?? e.text ?? 'waiting for you';
        t.question = question;
        const options = e.options ?? [];
        this.asks.push({ folder: t.folder, taskId: t.taskId, subtaskId: sub, question, options, claimed: false });
        this.push(t, sub, { kind: 'ask', id, question, options, answered: false });
        break;
      }
      case 'answered': {
        const i = this.asks.findIndex((a) => a.taskId === t.taskId && a.subtaskId === sub);
        if (i >= 0) {
          this.asks.splice(i, 1);
        }
        t.question = this.asks.find((a) => a.taskId === t.taskId)?.question;
        const ask = list().find((x): x is Extract<Entry, { kind: 'ask' }> => x.kind === 'ask' && !x.answered);
        if (ask !== undefined) {
          ask.answered = true;
          ask.answer = e.answer ?? null;
        }
        break;
      }
      case 'usage':
        // The event carries the task's totals so far (docs/PROTOCOL.md §5):
        // shown as they are, never added up. A zero total is left out.
        t.inputTokens = e.inputTokens ?? 0;
        t.outputTokens = e.outputTokens ?? 0;
        t.cost = typeof e.cost === 'number' ? e.cost : undefined;
        t.cacheReadTokens = e.cacheReadTokens ?? 0;
        if (typeof e.contextTokens === 'number' && e.contextTokens > 0) {
          t.context = { subtaskId: sub, tokens: e.contextTokens, ...(typeof e.contextWindow === 'number' && e.contextWindow > 0 ? { window: e.contextWindow } : {}) };
        }
        break;
      case 'stateChanged':
        if (p.state !== 'waiting') {
          t.question = undefined;
        }
        if (e.summary !== undefined && e.summary !== '') {
          t.summary = e.summary;
        }
        if (typeof e.applied === 'number') {
          t.applied = e.applied;
        }
        if (typeof e.rejected === 'number') {
          t.rejected = e.rejected;
        }
        if (isCounts(e.counts)) {
          t.counts = e.counts;
        }
        if (isFinal(p.state)) {
          this.endTask(t);
        }
        break;
      default:
        break;
    }
  }

  /** endTask closes what an ended task left open: streams, questions. */
  private endTask(t: TaskView): void {
    t.question = undefined;
    this.asks = this.asks.filter((a) => a.taskId !== t.taskId);
    for (const list of t.transcript.values()) {
      for (const e of list) {
        if (e.kind === 'text' || e.kind === 'thinking') {
          e.streaming = false;
        }
      }
    }
  }

  /**
   * claimAsk takes the oldest open question of folder that match accepts:
   * the `ask` event that announced a request now waiting on the person
   * (agentls sends the event first, on the same connection).
   */
  claimAsk(folder: string, match: (a: OpenAsk) => boolean): OpenAsk | undefined {
    const a = this.asks.find((x) => !x.claimed && x.folder === folder && match(x));
    if (a !== undefined) {
      a.claimed = true;
    }
    return a;
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
    t.cost = typeof r.usage.cost === 'number' ? r.usage.cost : undefined;
    t.cacheReadTokens = r.usage.cacheReadTokens ?? 0;
    t.changes = (r.changes ?? []).map((c) => ({ path: c.path, operation: c.operation, applied: c.applied, diff: c.diff }));
    t.applied = typeof r.applied === 'number' ? r.applied : t.changes.filter((c) => c.applied).length;
    t.rejected = typeof r.rejected === 'number' ? r.rejected : t.changes.filter((c) => !c.applied).length;
    if (isCounts(r.counts)) {
      t.counts = r.counts;
    }
    this.endTask(t);
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
    t.activity.clear();
    this.endTask(t);
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

/** isCounts checks agentls's subtask counts (an older agentls sends none). */
function isCounts(c: unknown): c is SubtaskCounts {
  if (typeof c !== 'object' || c === null) {
    return false;
  }
  const x = c as Record<string, unknown>;
  return ['done', 'skipped', 'removed', 'failed', 'blocked', 'notRun'].every((k) => typeof x[k] === 'number');
}

/** The counts other than done's, in the order every view says them. */
function otherCounts(c: SubtaskCounts): string[] {
  const words: [number, string][] = [[c.skipped, 'skipped'], [c.removed, 'removed'], [c.failed, 'failed'], [c.blocked, 'blocked'], [c.notRun, 'not run']];
  return words.filter(([n]) => n > 0).map(([n, w]) => `${n} ${w}`);
}

function total(c: SubtaskCounts): number {
  return c.done + c.skipped + c.removed + c.failed + c.blocked + c.notRun;
}

/**
 * subtaskCounts says how an ended task's subtasks ended, from agentls's
 * counts, as agentls's summary says it: "1 of 3 subtasks done, 1 skipped,
 * 1 removed"; '' before the end (or from an agentls that sends none, or
 * of a task that had no subtask: its plan failed).
 */
export function subtaskCounts(t: Pick<TaskView, 'counts'>): string {
  const c = t.counts;
  if (c === undefined || total(c) === 0) {
    return '';
  }
  const n = total(c);
  return [`${c.done} of ${n} ${n === 1 ? 'subtask' : 'subtasks'} done`, ...otherCounts(c)].join(', ');
}

/**
 * progressText counts a task's subtasks in a few characters: while it runs
 * those that ended of those it has ("1/3"); once it has ended those done of
 * every one it had, the removed ones included, and how the others ended
 * ("1/3 (1 skipped, 1 removed)"), from agentls's counts.
 */
export function progressText(t: TaskView): string {
  if (isFinal(t.state) && t.counts !== undefined && total(t.counts) > 0) {
    const others = otherCounts(t.counts);
    return `${t.counts.done}/${total(t.counts)}${others.length > 0 ? ` (${others.join(', ')})` : ''}`;
  }
  if (t.subtasks.length === 0) {
    return '';
  }
  const ended = t.subtasks.filter((s) => s.state === 'done' || s.state === 'failed' || s.state === 'skipped' || s.state === 'blocked').length;
  return `${ended}/${t.subtasks.length}`;
}

/**
 * changeCounts says how many of a task's changes were applied and how many
 * rejected ("2 applied, 1 rejected"), '' when it made none: a rejected
 * change is not a change made.
 */
export function changeCounts(t: Pick<TaskView, 'applied' | 'rejected' | 'changes'>): string {
  const applied = t.applied ?? t.changes.filter((c) => c.applied).length;
  const rejected = t.rejected ?? t.changes.filter((c) => !c.applied).length;
  const parts: string[] = [];
  if (applied > 0) {
    parts.push(`${applied} applied`);
  }
  if (rejected > 0) {
    parts.push(`${rejected} rejected`);
  }
  return parts.join(', ');
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

/** formatCost renders US dollars: four decimals under a cent, else two. */
export function formatCost(c: number): string {
  return c < 0.01 ? `$${c.toFixed(4)}` : `$${c.toFixed(2)}`;
}

/** formatContext renders how full a context is: "context 1.2k of 200k (1%)", or without a window "context 1.2k". */
export function formatContext(tokens: number, window?: number): string {
  if (window === undefined || window <= 0) {
    return `context ${formatTokens(tokens)}`;
  }
  return `context ${formatTokens(tokens)} of ${formatTokens(window)} (${Math.round((100 * tokens) / window)}%)`;
}

/**
 * usageText renders a usage: tokens in and out, the cost where the server
 * priced every call, the context where it is given. '' when nothing was used.
 */
export function usageText(u: Usage | undefined): string {
  if (u === undefined || (u.inputTokens <= 0 && u.outputTokens <= 0)) {
    return '';
  }
  const cached = typeof u.cacheReadTokens === 'number' && u.cacheReadTokens > 0 ? ` (${formatTokens(u.cacheReadTokens)} cached)` : '';
  const parts = [`${formatTokens(u.inputTokens)} in${cached}`, `${formatTokens(u.outputTokens)} out`];
  if (typeof u.cost === 'number') {
    parts.push(formatCost(u.cost));
  }
  if (typeof u.contextTokens === 'number' && u.contextTokens > 0) {
    parts.push(formatContext(u.contextTokens, u.contextWindow));
  }
  return parts.join(' · ');
}

/** taskUsageText is a task's usage in one line: "Tokens: 1.0k in (800 cached) · 100 out · $0.0045 · context 1.0k of 200k (1%)". */
export function taskUsageText(t: Pick<TaskView, 'inputTokens' | 'outputTokens' | 'cost' | 'context' | 'cacheReadTokens'>): string {
  const u = usageText({
    inputTokens: t.inputTokens,
    outputTokens: t.outputTokens,
    ...(t.cacheReadTokens !== undefined ? { cacheReadTokens: t.cacheReadTokens } : {}),
    ...(t.cost !== undefined ? { cost: t.cost } : {}),
    ...(t.context !== undefined ? { contextTokens: t.context.tokens, ...(t.context.window !== undefined ? { contextWindow: t.context.window } : {}) } : {}),
  });
  return u !== '' ? `Tokens: ${u}` : '';
}

const todoMarks: Record<string, string> = { done: '[x]', completed: '[x]', in_progress: '[>]' };

/** checkLine renders a todo or an engine's step: "[x] Add greet", "[>] Test it", "[ ] Ship". */
export function checkLine(x: { content: string; status: string }): string {
  return `${todoMarks[x.status] ?? '[ ]'} ${x.content}`;
}

/** checkCount says how much of a checklist is done: "1 of 2 done". */
export function checkCount(list: readonly { status: string }[]): string {
  return `${list.filter((x) => x.status === 'done' || x.status === 'completed').length} of ${list.length} done`;
}

/**
 * instructionsText names the project's instruction files a task works
 * under: "Instructions: AGENTS.md (9 tokens), pkg/AGENTS.md (cut at 100
 * tokens), docs/X.md (left out)"; "Instructions: none" for an empty list.
 */
export function instructionsText(files: readonly InstructionFile[]): string {
  if (files.length === 0) {
    return 'Instructions: none';
  }
  const one = (f: InstructionFile): string =>
    f.cut === true ? (f.tokens > 0 ? `${f.path} (cut at ${formatTokens(f.tokens)} tokens)` : `${f.path} (left out)`) : `${f.path} (${formatTokens(f.tokens)} tokens)`;
  return `Instructions: ${files.map(one).join(', ')}`;
}
