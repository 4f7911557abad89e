// The status bar item: the newest task's state, a click opens the tree.
import * as vscode from 'vscode';
import { oneLine, progressText, TaskStore, TaskView } from './taskModel';

const stateIcons: Record<TaskView['state'], string> = {
  planning: '$(loading~spin)',
  running: '$(sync~spin)',
  waiting: '$(question)',
  done: '$(pass)',
  failed: '$(error)',
  stopped: '$(debug-stop)',
  interrupted: '$(warning)',
};

/** statusText renders what the status bar shows for a task (or none). */
export function statusText(t: TaskView | undefined, running: number): { text: string; tooltip: string } {
  if (t === undefined) {
    return { text: '$(hubot) agentls', tooltip: 'agentls: no task yet. Click to open the Tasks view.' };
  }
  const counts = progressText(t);
  const more = running > 1 ? ` +${running - 1}` : '';
  const text = `${stateIcons[t.state]} agentls: ${t.state}${counts !== '' ? ` ${counts}` : ''}${more}`;
  const tooltip = `${oneLine(t.prompt, 120)}\n${t.state}${t.question !== undefined ? `: ${t.question}` : ''}\nClick to open the Tasks view.`;
  return { text, tooltip };
}

export class TaskStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly sub: { dispose(): void };

  constructor(private readonly store: TaskStore) {
    this.item = vscode.window.createStatusBarItem('agentls.status', vscode.StatusBarAlignment.Left, 50);
    this.item.name = 'agentls';
    this.item.command = 'agentls.tasks.focus';
    this.sub = store.onDidChange(() => {
      this.render();
    });
    this.render();
    this.item.show();
  }

  render(): void {
    const { text, tooltip } = statusText(this.store.latest(), this.store.running().length);
    this.item.text = text;
    this.item.tooltip = tooltip;
    const t = this.store.latest();
    this.item.backgroundColor = t?.state === 'waiting' ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
  }

  dispose(): void {
    this.sub.dispose();
    this.item.dispose();
  }
}
