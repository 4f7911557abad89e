// The "Tasks" tree view: each task, its subtasks with state icons, what each
// subtask is doing now, and the tokens spent.
import * as vscode from 'vscode';
import { Pending, pendingTitle, PendingStore } from '../pending';
import { SubtaskState, TaskState } from '../protocol';
import { plainText } from '../text';
import { changeCounts, checkCount, formatCost, formatTokens, instructionsText, isFinal, oneLine, progressText, subtaskCounts, TaskStore, TaskView, taskUsageText, usageText } from './taskModel';

export type Node =
  | { kind: 'folder'; folder: string }
  | { kind: 'task'; taskId: string }
  | { kind: 'subtask'; taskId: string; subtaskId: string }
  | { kind: 'pending'; id: string }
  | { kind: 'change'; taskId: string; index: number }
  | { kind: 'info'; id: string; label: string; icon: string; tooltip?: string };

/** A workspace folder as the tree groups tasks by it. */
export interface TreeFolder {
  key: string;
  name: string;
  /** Its path on disk, to name its files relative to it. */
  path?: string;
}

const taskIcons: Record<TaskState, [string, string | undefined]> = {
  planning: ['loading~spin', undefined],
  running: ['sync~spin', undefined],
  waiting: ['question', 'notificationsWarningIcon.foreground'],
  done: ['pass-filled', 'testing.iconPassed'],
  failed: ['error', 'testing.iconFailed'],
  stopped: ['debug-stop', 'disabledForeground'],
  interrupted: ['warning', 'notificationsWarningIcon.foreground'],
};

const subtaskIcons: Record<SubtaskState, [string, string | undefined]> = {
  pending: ['circle-large-outline', undefined],
  running: ['sync~spin', undefined],
  done: ['pass-filled', 'testing.iconPassed'],
  failed: ['error', 'testing.iconFailed'],
  skipped: ['debug-step-over', 'disabledForeground'],
  blocked: ['circle-slash', 'testing.iconSkipped'],
};

function icon([id, color]: [string, string | undefined]): vscode.ThemeIcon {
  return new vscode.ThemeIcon(id, color !== undefined ? new vscode.ThemeColor(color) : undefined);
}

export function taskIcon(state: TaskState): vscode.ThemeIcon {
  return icon(taskIcons[state]);
}

export function subtaskIcon(state: SubtaskState): vscode.ThemeIcon {
  return icon(subtaskIcons[state]);
}

/** The icon of a todo ("done") or an engine's step ("completed") by its status. */
const checkIcons: Record<string, string> = {
  done: 'pass',
  completed: 'pass',
  in_progress: 'arrow-right',
  pending: 'circle-large-outline',
};

const pendingIcons: Record<Pending['kind'], string> = {
  approval: 'shield',
  question: 'question',
  proposal: 'git-pull-request',
};

export class TaskTreeProvider implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly subs: { dispose(): void }[];

  constructor(
    private readonly store: TaskStore,
    private readonly pending: PendingStore = new PendingStore(),
    /** The workspace folders: with more than one, tasks are grouped by folder. */
    private readonly folders: () => TreeFolder[] = () => [],
  ) {
    const redraw = (): void => {
      this.emitter.fire(undefined);
    };
    this.subs = [store.onDidChange(redraw), pending.onDidChange(redraw)];
  }

  /** refresh redraws the whole tree, e.g. when workspace folders come or go. */
  refresh(): void {
    this.emitter.fire(undefined);
  }

  dispose(): void {
    for (const s of this.subs) {
      s.dispose();
    }
    this.emitter.dispose();
  }

  private grouped(): boolean {
    return this.folders().length > 1;
  }

  /** What waits on the person that no task of the tree shows. */
  private loosePending(folder?: string): Pending[] {
    return this.pending.all().filter((p) =>
      (folder === undefined || p.folder === folder) && (p.taskId === undefined || this.store.get(p.taskId) === undefined));
  }

  getChildren(node?: Node): Node[] {
    if (node === undefined) {
      if (this.grouped()) {
        return this.folders().map((f) => ({ kind: 'folder', folder: f.key }));
      }
      return [
        ...this.loosePending().map((p): Node => ({ kind: 'pending', id: p.id })),
        ...this.store.tasks().map((t): Node => ({ kind: 'task', taskId: t.taskId })),
      ];
    }
    if (node.kind === 'folder') {
      return [
        ...this.loosePending(node.folder).map((p): Node => ({ kind: 'pending', id: p.id })),
        ...this.store.tasks().filter((t) => t.folder === node.folder).map((t): Node => ({ kind: 'task', taskId: t.taskId })),
      ];
    }
    if (node.kind !== 'task' && node.kind !== 'subtask') {
      return [];
    }
    const t = this.store.get(node.taskId);
    if (t === undefined) {
      return [];
    }
    if (node.kind === 'task') {
      return this.taskChildren(t);
    }
    return this.subtaskChildren(t, node.subtaskId);
  }

  private taskChildren(t: TaskView): Node[] {
    const out: Node[] = [];
    const id = (s: string): string => `${t.taskId}/${s}`;
    for (const p of this.pending.forTask(t.taskId)) {
      out.push({ kind: 'pending', id: p.id });
    }
    const coordinator = t.messages.get('') ?? t.activity.get('');
    if (t.subtasks.length === 0 && !isEnded(t) && coordinator === undefined) {
      out.push({ kind: 'info', id: id('planning'), label: 'Planning…', icon: 'loading~spin' });
    }
    for (const s of t.subtasks) {
      out.push({ kind: 'subtask', taskId: t.taskId, subtaskId: s.id });
    }
    if (t.summary !== undefined && t.summary !== '') {
      out.push({ kind: 'info', id: id('summary'), label: oneLine(this.plain(t.summary), 100), icon: 'note', tooltip: this.plain(t.summary) });
    }
    if (t.error !== undefined) {
      out.push({ kind: 'info', id: id('error'), label: oneLine(t.error, 100), icon: 'error', tooltip: t.error });
    }
    const counts = changeCounts(t);
    if (counts !== '') {
      out.push({ kind: 'info', id: id('counts'), label: `Changes: ${counts}`, icon: 'diff' });
    }
    t.changes.forEach((_c, index) => {
      out.push({ kind: 'change', taskId: t.taskId, index });
    });
    if (t.instructions !== undefined && t.instructions.length > 0) {
      const text = instructionsText(t.instructions);
      out.push({ kind: 'info', id: id('instructions'), label: oneLine(text, 100), icon: 'book', tooltip: `The project's instruction files the prompts carry.\n${text}` });
    }
    const usage = taskUsageText(t);
    if (usage !== '') {
      out.push({
        kind: 'info',
        id: id('tokens'),
        label: usage,
        icon: 'symbol-number',
        tooltip: `What the task used so far, every agent's calls${t.cost === undefined ? ' (no cost: a model without a known price, see agentls.prices)' : ''}` +
          (t.context !== undefined ? `; the context is that of the last call, ${t.context.subtaskId !== '' ? `subtask ${t.context.subtaskId}'s` : "the coordinator's"}` : ''),
      });
    }
    return out;
  }

  private subtaskChildren(t: TaskView, subtaskId: string): Node[] {
    const s = t.subtasks.find((x) => x.id === subtaskId);
    if (s === undefined) {
      return [];
    }
    const out: Node[] = [];
    const id = (k: string): string => `${t.taskId}/${subtaskId}/${k}`;
    const act = t.activity.get(subtaskId);
    if (act !== undefined) {
      out.push({ kind: 'info', id: id('tool'), label: oneLine(this.plain(act), 100), icon: 'tools' });
    }
    const msg = t.messages.get(subtaskId);
    if (msg !== undefined && msg !== '') {
      out.push({ kind: 'info', id: id('message'), label: oneLine(this.plain(msg), 100), icon: 'comment', tooltip: this.plain(msg) });
    }
    if (s.error !== undefined && s.error !== '') {
      out.push({ kind: 'info', id: id('error'), label: oneLine(s.error, 100), icon: 'error', tooltip: s.error });
    }
    const deps = s.dependsOn ?? [];
    if (deps.length > 0) {
      out.push({ kind: 'info', id: id('deps'), label: `after ${deps.join(', ')}`, icon: 'arrow-small-up' });
    }
    (s.todos ?? []).forEach((td, i) => {
      out.push({ kind: 'info', id: id(`todo${i}`), label: td.content, icon: checkIcons[td.status] ?? 'circle-large-outline', tooltip: `todo, ${td.status.replace('_', ' ')}` });
    });
    (s.steps ?? []).forEach((st, i) => {
      out.push({ kind: 'info', id: id(`step${i}`), label: st.content, icon: checkIcons[st.status] ?? 'circle-large-outline', tooltip: `step of ${s.engine ?? 'the engine'}, ${st.status.replace('_', ' ')}` });
    });
    const usage = usageText(s.usage);
    if (usage !== '') {
      out.push({ kind: 'info', id: id('usage'), label: usage, icon: 'symbol-number' });
    }
    return out;
  }

  getTreeItem(node: Node): vscode.TreeItem {
    switch (node.kind) {
      case 'info': {
        const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
        item.id = node.id;
        item.iconPath = new vscode.ThemeIcon(node.icon);
        if (node.tooltip !== undefined) {
          item.tooltip = node.tooltip;
        }
        return item;
      }
      case 'folder': {
        const f = this.folders().find((x) => x.key === node.folder);
        const item = new vscode.TreeItem(f?.name ?? node.folder, vscode.TreeItemCollapsibleState.Expanded);
        item.id = `folder:${node.folder}`;
        item.iconPath = new vscode.ThemeIcon('root-folder');
        const tasks = this.store.tasks().filter((t) => t.folder === node.folder);
        const running = tasks.filter((t) => !isFinal(t.state)).length;
        const waiting = this.pending.all().filter((p) => p.folder === node.folder).length;
        item.description = [
          tasks.length === 0 ? 'no task yet' : `${tasks.length} task${tasks.length === 1 ? '' : 's'}`,
          running > 0 ? `${running} running` : '',
          waiting > 0 ? `${waiting} waiting for you` : '',
        ].filter((x) => x !== '').join(' · ');
        item.contextValue = 'agentls.folder';
        return item;
      }
      case 'pending':
        return this.pendingItem(node.id);
      case 'change':
        return this.changeItem(node.taskId, node.index);
      case 'task':
        return this.taskItem(node.taskId);
      case 'subtask':
        return this.subtaskItem(node.taskId, node.subtaskId);
    }
  }

  /** plain is what agentls says as the tree shows it: no Markdown, workspace paths relative. */
  private plain(text: string): string {
    return plainText(text, this.folders().flatMap((f) => (f.path !== undefined ? [{ path: f.path, name: f.name }] : [])));
  }

  private pendingItem(id: string): vscode.TreeItem {
    const p = this.pending.get(id);
    if (p === undefined) {
      return new vscode.TreeItem('answered', vscode.TreeItemCollapsibleState.None);
    }
    const label = `${p.kind === 'proposal' ? '' : 'Waiting for you: '}${oneLine(pendingTitle(p), 100)}`;
    const item = new vscode.TreeItem(label, vscode.TreeItemCollapsibleState.None);
    item.id = `pending:${p.id}`;
    item.iconPath = new vscode.ThemeIcon(pendingIcons[p.kind], new vscode.ThemeColor('notificationsWarningIcon.foreground'));
    item.description = p.reviewing ? 'in the Refactor Preview'
      : p.kind === 'proposal' ? (p.files ?? []).map((f) => f.path).join(', ')
        : p.subtaskId !== undefined ? `subtask ${p.subtaskId}` : '';
    const answers = p.kind === 'question' && p.options.length === 0 ? 'type an answer' : p.options.join(' / ');
    item.tooltip = `${p.text}\n\n${answers}${p.reviewing ? '\n\nOpen in the Refactor Preview: apply or discard it there.' : ''}`;
    item.contextValue = `agentls.pending.${p.kind}${p.reviewing ? '.reviewing' : ''}`;
    item.command = { command: 'agentls.answer', title: 'Answer…', arguments: [{ kind: 'pending', id: p.id }] };
    return item;
  }

  private changeItem(taskId: string, index: number): vscode.TreeItem {
    const c = this.store.get(taskId)?.changes[index];
    if (c === undefined) {
      return new vscode.TreeItem('', vscode.TreeItemCollapsibleState.None);
    }
    const item = new vscode.TreeItem(`${c.operation} ${c.path}${c.applied ? '' : ' (rejected)'}`, vscode.TreeItemCollapsibleState.None);
    item.id = `${taskId}/change:${index}`;
    item.iconPath = new vscode.ThemeIcon(!c.applied ? 'diff-ignored' : c.operation === 'create' ? 'diff-added' : c.operation === 'delete' ? 'diff-removed' : 'diff-modified');
    item.tooltip = c.applied ? `${c.path}: ${c.operation}d. Click to see the change.` : `${c.path}: not applied (rejected). Click to see what was proposed.`;
    item.contextValue = 'agentls.change';
    item.command = { command: 'agentls.showChange', title: 'Show Diff', arguments: [{ kind: 'change', taskId, index }] };
    return item;
  }

  private taskItem(taskId: string): vscode.TreeItem {
    const t = this.store.get(taskId);
    const label = t !== undefined && t.prompt !== '' ? oneLine(t.prompt, 60) : taskId;
    const item = new vscode.TreeItem(label, vscode.TreeItemCollapsibleState.Expanded);
    item.id = taskId;
    if (t !== undefined) {
      const counts = progressText(t);
      const waiting = this.pending.forTask(t.taskId).length;
      item.description = [counts !== '' ? `${t.state} · ${counts}` : t.state, waiting > 0 ? `${waiting} waiting for you` : ''].filter((x) => x !== '').join(' · ');
      item.iconPath = taskIcon(t.state);
      item.tooltip = new vscode.MarkdownString(
        `**${escapeMd(oneLine(t.prompt, 200))}**\n\nstate: ${t.state}` +
        (subtaskCounts(t) !== '' ? `\n\n${subtaskCounts(t)}` : '') +
        (t.model !== undefined ? `\n\nmodel: \`${t.model}\`` : '') +
        (t.intentId !== undefined ? `\n\nintent: \`${t.intentId}\`` : '') +
        (t.sessionId !== '' ? `\n\nsession: \`${t.sessionId}\`` : '') +
        `\n\ntask: \`${t.taskId}\``,
      );
      item.contextValue = isEnded(t) ? `agentls.task.ended${t.sessionId !== '' ? '.session' : ''}` : 'agentls.task.running';
    }
    return item;
  }

  private subtaskItem(taskId: string, subtaskId: string): vscode.TreeItem {
    const t = this.store.get(taskId);
    const s = t?.subtasks.find((x) => x.id === subtaskId);
    const label = s !== undefined ? `${s.id}. ${oneLine(s.content, 70)}${s.engine !== undefined && s.engine !== '' ? ` [${s.engine}]` : ''}` : subtaskId;
    const item = new vscode.TreeItem(label, vscode.TreeItemCollapsibleState.Collapsed);
    item.id = `${taskId}/${subtaskId}`;
    if (s !== undefined && t !== undefined) {
      const act = t.activity.get(s.id);
      const todos = s.todos ?? [];
      item.description = [
        s.state === 'running' && act !== undefined ? oneLine(this.plain(act), 80) : s.state,
        todos.length > 0 ? checkCount(todos) : '',
        s.usage !== undefined && (s.usage.inputTokens > 0 || s.usage.outputTokens > 0)
          ? `${formatTokens(s.usage.inputTokens + s.usage.outputTokens)} tokens${typeof s.usage.cost === 'number' ? `, ${formatCost(s.usage.cost)}` : ''}`
          : '',
      ].filter((x) => x !== '').join(' · ');
      item.iconPath = subtaskIcon(s.state);
      const usage = usageText(s.usage);
      item.tooltip = `${s.content}\n\nstate: ${s.state}${s.role !== undefined && s.role !== '' ? `\nrole: ${s.role}` : ''}` +
        `${s.engine !== undefined && s.engine !== '' ? `\nengine: ${s.engine}` : ''}${usage !== '' ? `\ntokens: ${usage}` : ''}`;
      if (s.state === 'running') {
        item.collapsibleState = vscode.TreeItemCollapsibleState.Expanded;
      }
      // "agentls.subtask.<state>.<task running|ended>": the menus read both.
      item.contextValue = `agentls.subtask.${s.state}.${isEnded(t) ? 'ended' : 'running'}`;
    }
    return item;
  }

  getParent(node: Node): Node | undefined {
    if (node.kind === 'subtask') {
      return { kind: 'task', taskId: node.taskId };
    }
    if (node.kind === 'pending') {
      const p = this.pending.get(node.id);
      if (p?.taskId !== undefined && this.store.get(p.taskId) !== undefined) {
        return { kind: 'task', taskId: p.taskId };
      }
      return p !== undefined && this.grouped() ? { kind: 'folder', folder: p.folder } : undefined;
    }
    if (node.kind === 'change') {
      return { kind: 'task', taskId: node.taskId };
    }
    if (node.kind === 'task' && this.grouped()) {
      const t = this.store.get(node.taskId);
      return t !== undefined && t.folder !== '' ? { kind: 'folder', folder: t.folder } : undefined;
    }
    return undefined;
  }
}

function isEnded(t: TaskView): boolean {
  return t.state === 'done' || t.state === 'failed' || t.state === 'stopped' || t.state === 'interrupted';
}

function escapeMd(s: string): string {
  return s.replace(/[\\`*_{}[\]()#+\-.!|]/g, (c) => `\\${c}`);
}
