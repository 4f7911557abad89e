// The "Tasks" tree view: each task, its subtasks with state icons, what each
// subtask is doing now, and the tokens spent.
import * as vscode from 'vscode';
import { SubtaskState, TaskState } from '../protocol';
import { formatTokens, oneLine, progressText, TaskStore, TaskView } from './taskModel';

export type Node =
  | { kind: 'task'; taskId: string }
  | { kind: 'subtask'; taskId: string; subtaskId: string }
  | { kind: 'info'; id: string; label: string; icon: string; tooltip?: string };

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

export class TaskTreeProvider implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly sub: { dispose(): void };

  constructor(private readonly store: TaskStore) {
    this.sub = store.onDidChange(() => {
      this.emitter.fire(undefined);
    });
  }

  dispose(): void {
    this.sub.dispose();
    this.emitter.dispose();
  }

  getChildren(node?: Node): Node[] {
    if (node === undefined) {
      return this.store.tasks().map((t) => ({ kind: 'task', taskId: t.taskId }));
    }
    const t = this.store.get(node.kind === 'info' ? '' : node.taskId);
    if (t === undefined) {
      return [];
    }
    if (node.kind === 'task') {
      return this.taskChildren(t);
    }
    if (node.kind === 'subtask') {
      return this.subtaskChildren(t, node.subtaskId);
    }
    return [];
  }

  private taskChildren(t: TaskView): Node[] {
    const out: Node[] = [];
    const id = (s: string): string => `${t.taskId}/${s}`;
    if (t.question !== undefined) {
      out.push({ kind: 'info', id: id('question'), label: `Waiting for you: ${oneLine(t.question, 80)}`, icon: 'question', tooltip: t.question });
    }
    const coordinator = t.messages.get('') ?? t.activity.get('');
    if (t.subtasks.length === 0 && !isEnded(t) && coordinator === undefined) {
      out.push({ kind: 'info', id: id('planning'), label: 'Planning…', icon: 'loading~spin' });
    }
    for (const s of t.subtasks) {
      out.push({ kind: 'subtask', taskId: t.taskId, subtaskId: s.id });
    }
    if (t.summary !== undefined && t.summary !== '') {
      out.push({ kind: 'info', id: id('summary'), label: oneLine(t.summary, 100), icon: 'note', tooltip: t.summary });
    }
    if (t.error !== undefined) {
      out.push({ kind: 'info', id: id('error'), label: oneLine(t.error, 100), icon: 'error', tooltip: t.error });
    }
    for (const c of t.changes) {
      out.push({
        kind: 'info',
        id: id(`change:${c.path}`),
        label: `${c.operation} ${c.path}${c.applied ? '' : ' (not applied)'}`,
        icon: c.operation === 'create' ? 'diff-added' : c.operation === 'delete' ? 'diff-removed' : 'diff-modified',
      });
    }
    if (t.inputTokens > 0 || t.outputTokens > 0) {
      out.push({
        kind: 'info',
        id: id('tokens'),
        label: `Tokens: ${formatTokens(t.inputTokens)} in · ${formatTokens(t.outputTokens)} out`,
        icon: 'symbol-number',
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
      out.push({ kind: 'info', id: id('tool'), label: act, icon: 'tools' });
    }
    const msg = t.messages.get(subtaskId);
    if (msg !== undefined && msg !== '') {
      out.push({ kind: 'info', id: id('message'), label: oneLine(msg, 100), icon: 'comment', tooltip: msg });
    }
    if (s.error !== undefined && s.error !== '') {
      out.push({ kind: 'info', id: id('error'), label: oneLine(s.error, 100), icon: 'error', tooltip: s.error });
    }
    if (s.dependsOn !== undefined && s.dependsOn !== null && s.dependsOn.length > 0) {
      out.push({ kind: 'info', id: id('deps'), label: `after ${s.dependsOn.join(', ')}`, icon: 'arrow-small-up' });
    }
    return out;
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === 'info') {
      const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
      item.id = node.id;
      item.iconPath = new vscode.ThemeIcon(node.icon);
      if (node.tooltip !== undefined) {
        item.tooltip = node.tooltip;
      }
      return item;
    }
    const t = this.store.get(node.taskId);
    if (node.kind === 'task') {
      const label = t !== undefined && t.prompt !== '' ? oneLine(t.prompt, 60) : node.taskId;
      const item = new vscode.TreeItem(label, vscode.TreeItemCollapsibleState.Expanded);
      item.id = node.taskId;
      if (t !== undefined) {
        const counts = progressText(t);
        item.description = counts !== '' ? `${t.state} · ${counts}` : t.state;
        item.iconPath = taskIcon(t.state);
        item.tooltip = new vscode.MarkdownString(
          `**${escapeMd(oneLine(t.prompt, 200))}**\n\nstate: ${t.state}` +
          (t.sessionId !== '' ? `\n\nsession: \`${t.sessionId}\`` : '') +
          `\n\ntask: \`${t.taskId}\``,
        );
        item.contextValue = isEnded(t) ? 'agentls.task.ended' : 'agentls.task.running';
      }
      return item;
    }
    const s = t?.subtasks.find((x) => x.id === node.subtaskId);
    const label = s !== undefined ? `${s.id}. ${oneLine(s.content, 70)}` : node.subtaskId;
    const item = new vscode.TreeItem(label, vscode.TreeItemCollapsibleState.Collapsed);
    item.id = `${node.taskId}/${node.subtaskId}`;
    if (s !== undefined) {
      const act = t?.activity.get(s.id);
      item.description = s.state === 'running' && act !== undefined ? act : s.state;
      item.iconPath = subtaskIcon(s.state);
      item.tooltip = `${s.content}\n\nstate: ${s.state}${s.role !== undefined && s.role !== '' ? `\nrole: ${s.role}` : ''}`;
      if (s.state === 'running') {
        item.collapsibleState = vscode.TreeItemCollapsibleState.Expanded;
      }
    }
    return item;
  }

  getParent(node: Node): Node | undefined {
    if (node.kind === 'subtask') {
      return { kind: 'task', taskId: node.taskId };
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
