// Steering a task: Stop, Add Subtask…, Skip and Remove Subtask while it
// runs, and Undo Task… or Undo Subtask… once it has ended, from the Tasks
// view's rows, the conversation or the palette.
import * as vscode from 'vscode';
import { undoRefusals, undoSummary } from '../choices';
import { folderNames } from '../folderPaths';
import { AddSubtaskResult, Methods, UndoResult } from '../protocol';
import { plainText } from '../text';
import { isFinal, oneLine, TaskStore } from '../views/taskModel';
import { Requests } from './agents';
import { nodeOf, taskOf } from './args';

export class TaskControls {
  constructor(private readonly requests: Requests, private readonly tasks: TaskStore) {}

  /** stop stops a task: the one given, else the only one running, else the one picked. */
  async stop(taskId?: string): Promise<void> {
    const running = this.tasks.running();
    let id = taskId;
    if (id === undefined) {
      if (running.length === 0) {
        void vscode.window.showInformationMessage('agentls: no task is running');
        return;
      }
      if (running.length === 1) {
        id = running[0]?.taskId;
      } else {
        const p = await vscode.window.showQuickPick(
          running.map((t) => ({ label: oneLine(t.prompt, 80), description: t.state, taskId: t.taskId })),
          { title: 'agentls: Stop which task?' },
        );
        id = p?.taskId;
      }
    }
    const t = id !== undefined ? this.tasks.get(id) : undefined;
    const a = t !== undefined ? this.requests.agentOf(t) : undefined;
    if (id === undefined || a === undefined) {
      return;
    }
    const res = await this.requests.request<{ stopped: boolean }>(a, Methods.stop, { taskId: id }, 'stop failed');
    if (res !== undefined && !res.stopped) {
      void vscode.window.showInformationMessage('agentls: that task had already ended');
    }
  }

  /**
   * addSubtask adds a subtask to a running task: text given (the
   * conversation's), or asked for with the open subtasks it comes after.
   */
  async addSubtask(arg?: unknown, text?: string): Promise<void> {
    const t = taskOf(this.tasks, arg, true);
    if (t === undefined || isFinal(t.state)) {
      void vscode.window.showInformationMessage('agentls: subtasks are added to a running task');
      return;
    }
    const a = this.requests.agentOf(t);
    if (a === undefined) {
      return;
    }
    const content = text ?? await vscode.window.showInputBox({
      title: `agentls: Add a subtask to "${oneLine(t.prompt, 60)}"`,
      prompt: 'What should a worker do?',
      ignoreFocusOut: true,
    });
    if (content === undefined || content.trim() === '') {
      return;
    }
    let dependsOn: string[] = [];
    const open = t.subtasks.filter((s) => s.state === 'pending' || s.state === 'running');
    if (text === undefined && open.length > 0) {
      const deps = await vscode.window.showQuickPick(open.map((s) => ({ label: `${s.id}. ${oneLine(s.content, 70)}`, description: s.state, id: s.id })), {
        title: 'agentls: After which subtasks? (none: it starts at once)',
        canPickMany: true,
      });
      if (deps === undefined) {
        return;
      }
      dependsOn = deps.map((d) => d.id);
    }
    const res = await this.requests.request<AddSubtaskResult>(a, Methods.addSubtask, { taskId: t.taskId, content: content.trim(), ...(dependsOn.length > 0 ? { dependsOn } : {}) }, 'cannot add the subtask');
    if (res !== undefined) {
      void vscode.window.setStatusBarMessage(`agentls: subtask ${res.subtaskId} added`, 5000);
    }
  }

  /** subtaskControl sends agent/skipSubtask or agent/removeSubtask for the subtask row given. */
  async subtaskControl(arg: unknown, method: string, verb: string): Promise<void> {
    const n = nodeOf(arg);
    if (n?.kind !== 'subtask') {
      void vscode.window.showInformationMessage(`agentls: pick a subtask in the Tasks view to ${verb}`);
      return;
    }
    const t = this.tasks.get(n.taskId);
    const a = t !== undefined ? this.requests.agentOf(t) : undefined;
    if (a !== undefined) {
      await this.requests.request(a, method, { taskId: n.taskId, subtaskId: n.subtaskId }, `cannot ${verb} subtask ${n.subtaskId}`);
    }
  }

  /**
   * undo takes back an ended task's changes (a subtask's, given its row),
   * once the person is sure; when some files cannot be, it offers to undo
   * the rest.
   */
  async undo(arg?: unknown): Promise<void> {
    const n = nodeOf(arg);
    const t = taskOf(this.tasks, arg, false);
    if (t === undefined || !isFinal(t.state)) {
      void vscode.window.showInformationMessage('agentls: a task is undone once it has ended');
      return;
    }
    const a = this.requests.agentOf(t);
    if (a === undefined) {
      return;
    }
    const subtaskId = n?.kind === 'subtask' ? n.subtaskId : undefined;
    const what = subtaskId !== undefined ? `subtask ${subtaskId} of "${oneLine(t.prompt, 60)}"` : `"${oneLine(t.prompt, 60)}"`;
    const sure = await vscode.window.showWarningMessage(`Undo ${what}? Each file it changed goes back to its text before it; your later changes elsewhere in them stay.`, { modal: true }, 'Undo');
    if (sure !== 'Undo') {
      return;
    }
    const params = { taskId: t.taskId, ...(t.sessionId !== '' ? { sessionId: t.sessionId } : {}), ...(subtaskId !== undefined ? { subtaskId } : {}) };
    const res = await this.requests.request<UndoResult>(a, Methods.undo, params, 'cannot undo');
    if (res === undefined) {
      return;
    }
    if (res.undone) {
      void vscode.window.showInformationMessage(`agentls: ${undoSummary(res)}`);
      return;
    }
    const { refused, rest } = undoRefusals(res);
    const detail = refused.map((f) => `• ${plainText(f.reason ?? `${f.path} could not be undone`, folderNames())}`).join('\n');
    if (rest.length === 0) {
      void vscode.window.showWarningMessage(`agentls: nothing was undone`, { modal: true, detail });
      return;
    }
    const p = await vscode.window.showWarningMessage(
      `agentls: ${refused.length} file${refused.length === 1 ? '' : 's'} cannot be undone, so nothing was. Undo the other ${rest.length} (${rest.map((f) => f.path).join(', ')})?`,
      { modal: true, detail },
      'Undo the Rest',
    );
    if (p !== 'Undo the Rest') {
      return;
    }
    const partial = await this.requests.request<UndoResult>(a, Methods.undo, { ...params, partial: true }, 'cannot undo');
    if (partial !== undefined) {
      void vscode.window.showInformationMessage(`agentls: ${undoSummary(partial)}`);
    }
  }

  /** register adds Stop, Add, Skip and Remove Subtask, Undo Task and Undo Subtask. */
  register(): { dispose(): void }[] {
    return [
      vscode.commands.registerCommand('agentls.stop', (arg?: unknown) => {
        const n = nodeOf(arg);
        return this.stop(n !== undefined && n.kind === 'task' ? n.taskId : undefined);
      }),
      vscode.commands.registerCommand('agentls.addSubtask', (arg?: unknown) => this.addSubtask(arg)),
      vscode.commands.registerCommand('agentls.skipSubtask', (arg?: unknown) => this.subtaskControl(arg, Methods.skipSubtask, 'skip')),
      vscode.commands.registerCommand('agentls.removeSubtask', (arg?: unknown) => this.subtaskControl(arg, Methods.removeSubtask, 'remove')),
      vscode.commands.registerCommand('agentls.undoTask', (arg?: unknown) => {
        const n = nodeOf(arg);
        return this.undo(n?.kind === 'subtask' ? { kind: 'task', taskId: n.taskId } : arg);
      }),
      vscode.commands.registerCommand('agentls.undoSubtask', (arg?: unknown) => this.undo(arg)),
    ];
  }
}
