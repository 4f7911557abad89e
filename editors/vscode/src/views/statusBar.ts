// The status bar item: what waits on the person first (a click answers it),
// else the newest task's state (a click opens the Tasks view); in a
// workspace the person does not trust, a mark that says so, and its tooltip
// offers VS Code's Manage Workspace Trust.
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

/** VS Code's command that opens the workspace trust editor. */
export const manageTrustCommand = 'workbench.trust.manage';

/** What the status item adds in a workspace the person does not trust. */
export const untrustedNote = 'This workspace is not trusted (Restricted Mode): agentls asks before it runs any command, starts an MCP server or runs a subtask on an engine.';

/**
 * withTrust is what the status item shows, given whether the workspace is
 * trusted: as it is when it is; else with a mark and a tooltip that says
 * why agentls asks, with a link to Manage Workspace Trust.
 */
export function withTrust(s: { text: string; tooltip: string }, trusted: boolean): { text: string; tooltip: string | vscode.MarkdownString } {
  if (trusted) {
    return s;
  }
  const tip = new vscode.MarkdownString();
  tip.appendText(s.tooltip);
  tip.appendMarkdown(`\n\n---\n\n$(workspace-untrusted) `);
  tip.appendText(untrustedNote);
  tip.appendMarkdown(` [Manage Workspace Trust](command:${manageTrustCommand})`);
  tip.supportThemeIcons = true;
  tip.isTrusted = { enabledCommands: [manageTrustCommand] };
  return { text: `${s.text} $(workspace-untrusted)`, tooltip: tip };
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
    this.subs = [store.onDidChange(render), pending.onDidChange(render), vscode.workspace.onDidGrantWorkspaceTrust(render)];
    this.render();
    this.item.show();
  }

  render(): void {
    const waiting = this.pending.all();
    const t = this.store.latest();
    const { text, tooltip } = withTrust(statusText(t, this.store.running().length, waiting), vscode.workspace.isTrusted);
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
