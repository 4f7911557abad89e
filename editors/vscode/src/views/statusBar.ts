// The status bar item: what waits on the person first (a click answers it),
// else the newest task's state (a click opens the Tasks view).
import * as vscode from 'vscode';
import { Pending, pendingTitle, PendingStore } from '../pending';
import { oneLine, progressText, subtaskCounts, TaskStore, TaskView } from './taskModel';

const stateIcons: Record<TaskView['state'], string> = {
  planning: '$(loading~spin)',
  running: '$(sync~spin)',
  waiting: '$(question)',
  done: '$(pass)',
  failed: '$(error)',
  stopped: '$(debug-stop)',
  interrupted: '$(warning)',
};

/** statusText renders what the status bar shows: what waits, else a task (or none). */
export function statusText(t: TaskView | undefined, running: number, waiting: readonly Pending[] = []): { text: string; tooltip: string } {
  const first = waiting.at(0);
  if (first !== undefined) {
    const n = waiting.length;
    return {
      text: `$(bell-dot) agentls: ${n === 1 ? 'waiting for you' : `${n} waiting for you`}`,
      tooltip: `${oneLine(pendingTitle(first), 200)}${n > 1 ? `\n…and ${n - 1} more` : ''}\nClick to answer.`,
    };
  }
  if (t === undefined) {
    return { text: '$(hubot) agentls', tooltip: 'agentls: no task yet. Click to open the Tasks view.' };
  }
  const counts = progressText(t);
  const more = running > 1 ? ` +${running - 1}` : '';
  const text = `${stateIcons[t.state]} agentls: ${t.state}${counts !== '' ? ` ${counts}` : ''}${more}`;
  const ending = subtaskCounts(t);
  const tooltip = `${oneLine(t.prompt, 120)}\n${t.state}${ending !== '' ? `: ${ending}` : ''}\nClick to open the Tasks view.`;
  return { text, tooltip };
}

export class TaskStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly subs: { dispose(): void }[];

  constructor(private readonly store: TaskStore, private readonly pending: PendingStore = new PendingStore()) {
    this.item = vscode.window.createStatusBarItem('agentls.status', vscode.StatusBarAlignment.Left, 50);
    this.item.name = 'agentls';
    this.item.command = 'agentls.showPending';
    const render = (): void => {
      this.render();
    };
    this.subs = [store.onDidChange(render), pending.onDidChange(render)];
    this.render();
    this.item.show();
  }

  render(): void {
    const waiting = this.pending.all();
    const t = this.store.latest();
    const { text, tooltip } = statusText(t, this.store.running().length, waiting);
    this.item.text = text;
    this.item.tooltip = tooltip;
    this.item.backgroundColor = waiting.length > 0 || t?.state === 'waiting' ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
  }

  dispose(): void {
    for (const s of this.subs) {
      s.dispose();
    }
    this.item.dispose();
  }
}
