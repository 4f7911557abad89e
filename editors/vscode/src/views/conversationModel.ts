// The conversation the conversation view shows: the tasks of one session of
// one folder's agentls, oldest first, each continuing the one before (a
// follow-up continues the session). Knows nothing of VS Code: viewState
// builds what the webview renders from the stores.
import { Pending, PendingStore } from '../pending';
import { RunAttachment } from '../protocol';
import { FolderName, plainText, relativePaths } from '../text';
import { ViewCheck, ViewEntry, ViewGroup, ViewPending, ViewState, ViewTask } from '../webview/state';
import { changeCounts, checkCount, Entry, isFinal, oneLine, progressText, subtaskCounts, TaskStore, TaskView, taskUsageText, usageText } from './taskModel';

/** Something that goes along with the next prompt: a file, a range of it, or an image. */
export interface Attachment {
  id: string;
  /** Workspace-relative path, / separators; a pasted image's name. */
  path: string;
  /** 1-based, inclusive; absent for the whole file. */
  startLine?: number;
  endLine?: number;
  /**
   * An image: a file of the workspace at path ({}), or pasted: its bytes
   * in base64 with their type.
   */
  image?: { data?: string; mimeType?: string };
}

/** The image types agentls takes (docs/PROTOCOL.md §3, Attachments), by extension. */
export const imageTypes: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
};

/** isImagePath says whether a file's name is that of an image agentls takes. */
export function isImagePath(p: string): boolean {
  const ext = /\.([^./\\]+)$/.exec(p)?.[1]?.toLowerCase();
  return ext !== undefined && ext in imageTypes;
}

/** The most bytes of a pasted image (agentls's default maxImageBytes). */
export const maxImageBytes = 5 * 1024 * 1024;

export function attachmentLabel(a: Attachment): string {
  if (a.image !== undefined) {
    return `${a.path} (image)`;
  }
  if (a.startLine === undefined) {
    return a.path;
  }
  return a.endLine === undefined || a.endLine === a.startLine ? `${a.path}:${a.startLine}` : `${a.path}:${a.startLine}-${a.endLine}`;
}

/** runAttachments are the attachments as agent/run takes them: 1-based lines become an LSP range of whole lines. */
export function runAttachments(attachments: readonly Attachment[]): RunAttachment[] {
  return attachments.map((a): RunAttachment => a.image !== undefined
    ? a.image.data !== undefined && a.image.mimeType !== undefined
      ? { type: 'image', data: a.image.data, mimeType: a.image.mimeType, name: a.path }
      : { type: 'image', path: a.path }
    : a.startLine === undefined
      ? { type: 'file', path: a.path }
      : {
      type: 'file',
      path: a.path,
      range: { start: { line: a.startLine - 1, character: 0 }, end: { line: a.endLine ?? a.startLine, character: 0 } },
    });
}

/** The most prompts the history keeps. */
export const maxHistory = 50;

export class Conversation {
  /** The folder of the conversation (its URI); '' before the first task. */
  folder = '';
  /** The tasks shown, oldest first. */
  taskIds: string[] = [];
  attachments: Attachment[] = [];
  private nextAttachment = 1;

  constructor(public history: string[] = []) {}

  /** show puts a task in the view: after the others when it continues them, else alone. */
  show(taskId: string, folder: string, continues: boolean): void {
    if (!continues || folder !== this.folder) {
      this.taskIds = [];
    }
    this.folder = folder;
    if (!this.taskIds.includes(taskId)) {
      this.taskIds.push(taskId);
    }
  }

  /** reset starts a new conversation in folder. */
  reset(folder: string): void {
    this.folder = folder;
    this.taskIds = [];
  }

  /** sessionId is the session a follow-up continues: the newest task's that has one. */
  sessionId(tasks: TaskStore): string | undefined {
    for (const id of [...this.taskIds].reverse()) {
      const s = tasks.get(id)?.sessionId;
      if (s !== undefined && s !== '') {
        return s;
      }
    }
    return undefined;
  }

  /** running is the conversation's task that has not ended, if one has not. */
  running(tasks: TaskStore): TaskView | undefined {
    return this.taskIds.map((id) => tasks.get(id)).find((t): t is TaskView => t !== undefined && !isFinal(t.state));
  }

  attach(a: Omit<Attachment, 'id'>): Attachment {
    const same = a.image?.data !== undefined ? undefined
      : this.attachments.find((x) => x.path === a.path && x.startLine === a.startLine && x.endLine === a.endLine && (x.image === undefined) === (a.image === undefined));
    if (same !== undefined) {
      return same;
    }
    const att = { ...a, id: `a${this.nextAttachment++}` };
    this.attachments.push(att);
    return att;
  }

  /** pastedName is the name of the next pasted image of a type: image-1.png, image-2.png… */
  pastedName(mimeType: string): string {
    const ext = Object.entries(imageTypes).find(([, m]) => m === mimeType)?.[0] ?? 'png';
    for (let i = 1; ; i++) {
      const name = `image-${i}.${ext}`;
      if (!this.attachments.some((a) => a.path === name)) {
        return name;
      }
    }
  }

  detach(id: string): void {
    this.attachments = this.attachments.filter((a) => a.id !== id);
  }

  /** remember adds a sent prompt to the history (no repeat of the last one). */
  remember(prompt: string): void {
    if (this.history.at(-1) !== prompt) {
      this.history.push(prompt);
    }
    if (this.history.length > maxHistory) {
      this.history.splice(0, this.history.length - maxHistory);
    }
  }
}

/** The most characters of a tool call's arguments the view shows. */
const maxArgs = 4000;

function argsText(args: unknown): string {
  if (args === undefined) {
    return '';
  }
  let s: string;
  try {
    s = JSON.stringify(args, null, 2);
  } catch {
    s = '(arguments that cannot be shown)';
  }
  return s.length > maxArgs ? `${s.slice(0, maxArgs)}\n…` : s;
}

function viewEntry(x: Entry, folders: FolderName[]): ViewEntry {
  switch (x.kind) {
    case 'text':
      return { kind: 'text', id: x.id, text: relativePaths(x.text, folders), streaming: x.streaming };
    case 'thinking':
      return { kind: 'thinking', id: x.id, text: x.text, streaming: x.streaming };
    case 'todos':
      return { kind: 'checklist', id: x.id, what: 'todos', count: checkCount(x.todos), items: x.todos.map(viewCheck) };
    case 'steps':
      return { kind: 'checklist', id: x.id, what: 'steps', count: checkCount(x.steps), items: x.steps.map(viewCheck) };
    case 'tool': {
      const v: ViewEntry = { kind: 'tool', id: x.id, tool: x.tool, detail: oneLine(plainText(x.detail, folders), 120), args: relativePaths(argsText(x.arguments), folders) };
      if (x.ok !== undefined) {
        v.ok = x.ok;
      }
      if (x.result !== undefined) {
        v.result = relativePaths(x.result, folders);
      }
      return v;
    }
    case 'change':
      return { ...x };
    case 'ask':
      return { kind: 'ask', id: x.id, question: relativePaths(x.question, folders), answered: x.answered, ...(x.answered ? { answer: x.answer ?? null } : {}) };
    case 'note':
      return { ...x, text: relativePaths(x.text, folders) };
  }
}

function viewCheck(x: { content: string; status: string }): ViewCheck {
  return { text: x.content, status: x.status === 'completed' ? 'done' : x.status === 'in_progress' ? 'in_progress' : x.status === 'done' ? 'done' : 'pending' };
}

/** viewPending is a waiting item for the view; where names the folder it comes from when it is not the conversation's. */
export function viewPending(p: Pending, where?: string): ViewPending {
  return {
    id: p.id,
    kind: p.kind,
    text: where !== undefined ? `${p.markdown} (in ${where})` : p.markdown,
    options: p.options,
    files: (p.files ?? []).map((f) => ({ path: f.path, operation: f.operation, ...(f.diffId !== undefined ? { diffId: f.diffId } : {}) })),
    reviewing: p.reviewing,
  };
}

function viewTask(t: TaskView, pending: Pending[], folders: FolderName[], diffOf: (folder: string, path: string) => string | undefined): ViewTask {
  const subIds = new Set(t.subtasks.map((s) => s.id));
  const groups: ViewGroup[] = [];
  const coordinator = (t.transcript.get('') ?? []).map((x) => viewEntry(x, folders));
  groups.push({ id: '', title: 'Plan', state: t.state, entries: coordinator, pending: [], usage: '', todos: [], steps: [] });
  for (const s of t.subtasks) {
    const g: ViewGroup = {
      id: s.id,
      title: s.content,
      state: s.state,
      entries: (t.transcript.get(s.id) ?? []).map((x) => viewEntry(x, folders)),
      pending: pending.filter((p) => p.subtaskId === s.id).map((p) => viewPending(p)),
      usage: usageText(s.usage),
      todos: (s.todos ?? []).map(viewCheck),
      steps: (s.steps ?? []).map(viewCheck),
    };
    if (s.engine !== undefined && s.engine !== '') {
      g.engine = s.engine;
    }
    groups.push(g);
  }
  const v: ViewTask = {
    taskId: t.taskId,
    prompt: t.prompt,
    state: t.state,
    ended: isFinal(t.state),
    counts: changeCounts(t),
    progress: progressText(t),
    ending: subtaskCounts(t),
    tokens: taskUsageText(t),
    groups,
    pending: pending.filter((p) => p.subtaskId === undefined || !subIds.has(p.subtaskId)).map((p) => viewPending(p)),
    changes: t.changes.map((c) => {
      const diffId = diffOf(t.folder, c.path);
      return { path: c.path, operation: c.operation, applied: c.applied, ...(diffId !== undefined ? { diffId } : {}) };
    }),
  };
  if (t.summary !== undefined && t.summary !== '') {
    v.summary = relativePaths(t.summary, folders);
  }
  if (t.error !== undefined) {
    v.error = t.error;
  }
  if (t.engine !== undefined) {
    v.engine = t.engine;
  }
  return v;
}

/** What the view shows beside the conversation itself. */
export interface ViewExtras {
  folderName: string;
  multiRoot: boolean;
  model: string;
  intent: string;
  folders: FolderName[];
  /** The conversation's agentls takes attachments on agent/run. */
  canAttach: boolean;
  /** The engine the next task runs on, '' for the plan's choice. */
  engine: string;
}

/** viewState is what the conversation view renders. */
export function viewState(c: Conversation, tasks: TaskStore, pending: PendingStore, x: ViewExtras): ViewState {
  const shown = c.taskIds.map((id) => tasks.get(id)).filter((t): t is TaskView => t !== undefined);
  const mine = new Set(shown.map((t) => t.taskId));
  const all = pending.all();
  return {
    folderName: x.folderName,
    multiRoot: x.multiRoot,
    model: x.model,
    intent: x.intent,
    engine: x.engine,
    tasks: shown.map((t) => viewTask(t, all.filter((p) => p.taskId === t.taskId), x.folders, tasks.diffOf)),
    pending: all.filter((p) => p.taskId === undefined || !mine.has(p.taskId)).map((p) =>
      viewPending(p, x.multiRoot && p.folder !== c.folder ? p.folderName : undefined)),
    canAttach: x.canAttach,
    attachments: x.canAttach ? c.attachments.map((a) => ({ id: a.id, label: attachmentLabel(a), image: a.image !== undefined })) : [],
    running: c.running(tasks) !== undefined,
    history: [...c.history],
  };
}
