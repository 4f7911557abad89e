// Running a task: agentls: Run Task… (with the selection as context), Run
// Task on Engine…, Follow Up… on an ended task's session, and the one run
// every other way of starting a task goes through (the conversation's Send,
// a session continued, an engine picked): it shows the task in the
// conversation, sends agent/run with the model, intent and engine chosen
// for the folder, and tells how the task ended.
import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import { Choices } from '../choices';
import { folderNames } from '../folderPaths';
import { buildPrompt, SelectionContext } from '../prompt';
import { Methods, RunAttachment, RunParams, RunResult } from '../protocol';
import { plainText } from '../text';
import { Conversation } from '../views/conversationModel';
import { changeCounts, isFinal, oneLine, TaskStore } from '../views/taskModel';
import { Agent, errorText, isInvalidParams, Requests } from './agents';
import { taskOf } from './args';

/** What running a task needs besides the stores. */
export interface RunDeps {
  requests: Requests;
  tasks: TaskStore;
  choices: Choices;
  conversation: Conversation;
  /** Brings the conversation view forward, the keyboard left where it is. */
  showConversation(): void;
  /** Renders the views again: the new task is shown at once. */
  updateViews(): void;
  /** The pickers the failure of a chosen intent or engine offers. */
  selectIntent(a: Agent): Promise<void>;
  selectEngine(a: Agent): Promise<void>;
  /** Asks which engine to run on: '' the plan's choice, undefined none picked. */
  pickEngine(a: Agent, title: string): Promise<string | undefined>;
  /** Opens a session's transcript. */
  openSession(a: Agent, sessionId: string): Promise<void>;
}

/** selectionContext is the active editor's selection as prompt context. */
export function selectionContext(): SelectionContext | undefined {
  const editor = vscode.window.activeTextEditor;
  if (editor === undefined || editor.selection.isEmpty) {
    return undefined;
  }
  const sel = editor.selection;
  const doc = editor.document;
  return {
    path: vscode.workspace.asRelativePath(doc.uri, false),
    languageId: doc.languageId,
    startLine: sel.start.line + 1,
    endLine: sel.end.character === 0 && sel.end.line > sel.start.line ? sel.end.line : sel.end.line + 1,
    text: doc.getText(sel),
  };
}

export class TaskRunner {
  constructor(private readonly d: RunDeps) {}

  /**
   * run starts a task in a folder and renders its result when it ends. An
   * engine given ('' the plan's choice) wins over the one chosen for the
   * next tasks.
   */
  async run(a: Agent, prompt: string, sessionId?: string, attachments?: RunAttachment[], engineArg?: string): Promise<RunResult | undefined> {
    const { tasks, choices, conversation } = this.d;
    const lc = await this.d.requests.connected(a);
    if (lc === undefined) {
      return undefined;
    }
    const taskId = randomUUID();
    const choice = choices.get(a.key);
    const engine = engineArg !== undefined ? (engineArg !== '' ? engineArg : undefined) : choice.engine;
    tasks.begin(taskId, prompt, {
      folder: a.key,
      ...(sessionId !== undefined ? { sessionId } : {}),
      ...(choice.model !== undefined ? { model: choice.model } : {}),
      ...(choice.intentId !== undefined ? { intentId: choice.intentId } : {}),
      ...(engine !== undefined ? { engine } : {}),
    });
    if (sessionId !== undefined && conversation.sessionId(tasks) !== sessionId) {
      // Continuing a session the view does not show: show its tasks first.
      conversation.reset(a.key);
      for (const t of tasks.tasks().filter((x) => x.sessionId === sessionId && x.taskId !== taskId).reverse()) {
        conversation.show(t.taskId, a.key, true);
      }
    }
    conversation.show(taskId, a.key, sessionId !== undefined);
    this.d.updateViews();
    const params: RunParams = { prompt, taskId };
    if (sessionId !== undefined) {
      params.sessionId = sessionId;
    }
    if (choice.model !== undefined) {
      params.model = choice.model;
    }
    if (choice.intentId !== undefined) {
      params.intentId = choice.intentId;
    }
    if (engine !== undefined) {
      params.engine = engine;
    }
    if (attachments !== undefined && attachments.length > 0) {
      params.attachments = attachments;
    }
    let result: RunResult;
    try {
      result = await lc.sendRequest<RunResult>(Methods.run, params);
    } catch (e) {
      tasks.fail(taskId, errorText(e));
      if (isInvalidParams(e) && /intentId/.test(e.message) && choice.intentId !== undefined) {
        await choices.set(a.key, { intentId: undefined, intentName: undefined });
        void vscode.window.showErrorMessage(`agentls: ${plainText(e.message)} (the intent is no longer chosen)`, 'Choose Intent…').then((p) => {
          if (p !== undefined) {
            void this.d.selectIntent(a);
          }
        });
      } else if (isInvalidParams(e) && /"engine"/.test(e.message) && engine !== undefined && engineArg === undefined) {
        await choices.set(a.key, { engine: undefined });
        void vscode.window.showErrorMessage(`agentls: ${plainText(e.message)} (the engine is no longer chosen)`, 'Choose Engine…').then((p) => {
          if (p !== undefined) {
            void this.d.selectEngine(a);
          }
        });
      } else {
        void vscode.window.showErrorMessage(`agentls: the task failed: ${plainText(errorText(e), folderNames())}`);
      }
      return undefined;
    }
    tasks.finish(result);
    const t = tasks.get(result.taskId);
    const summary = result.summary !== '' ? `: ${oneLine(plainText(result.summary, folderNames()), 200)}` : '';
    const counts = t !== undefined ? changeCounts(t) : '';
    const msg = `agentls: task ${result.state}${summary}${counts !== '' ? ` (${counts})` : ''}`;
    const actions = result.sessionId !== '' ? ['Follow Up…', 'Show Session'] : [];
    const show = result.state === 'done' ? vscode.window.showInformationMessage : vscode.window.showWarningMessage;
    void show(msg, ...actions).then((p) => {
      if (p === 'Follow Up…') {
        void this.followUp(result.taskId);
      } else if (p === 'Show Session') {
        void this.d.openSession(a, result.sessionId);
      }
    });
    return result;
  }

  /** runTask asks what to do (the selection goes along) and runs it, on an engine picked first when onEngine. */
  async runTask(promptArg?: string, onEngine = false): Promise<void> {
    const a = await this.d.requests.pick(onEngine ? 'Run Task on Engine' : 'Run Task');
    if (a === undefined) {
      return;
    }
    let engine: string | undefined;
    if (onEngine) {
      engine = await this.d.pickEngine(a, 'agentls: Run the task on which engine?');
      if (engine === undefined) {
        return;
      }
    }
    const sel = selectionContext();
    const text = promptArg ?? await vscode.window.showInputBox({
      title: 'agentls: Run Task',
      prompt: sel !== undefined
        ? `What should the agent do? The selection (${sel.path}, lines ${sel.startLine}-${sel.endLine}) goes along.`
        : 'What should the agent do?',
      placeHolder: 'e.g. Add a --verbose flag to the CLI and test it',
      ignoreFocusOut: true,
    });
    if (text === undefined || text.trim() === '') {
      return;
    }
    this.d.showConversation();
    await this.run(a, buildPrompt(text, sel), undefined, undefined, engine);
  }

  /** followUp continues a finished task's session with a new prompt. */
  async followUp(taskId?: string, text?: string): Promise<void> {
    const { tasks } = this.d;
    const t = taskId !== undefined ? tasks.get(taskId) : tasks.tasks().find((x) => isFinal(x.state) && x.sessionId !== '');
    if (t === undefined || t.sessionId === '') {
      void vscode.window.showInformationMessage('agentls: no finished task to follow up');
      return;
    }
    const a = this.d.requests.agentOf(t);
    if (a === undefined) {
      return;
    }
    const prompt = text ?? await vscode.window.showInputBox({
      title: `agentls: Follow up on "${oneLine(t.prompt, 60)}"`,
      prompt: 'The agent sees the conversation so far.',
      ignoreFocusOut: true,
    });
    if (prompt === undefined || prompt.trim() === '') {
      return;
    }
    this.d.showConversation();
    await this.run(a, prompt.trim(), t.sessionId);
  }

  /** continueSession asks for the next prompt of a session and runs it. */
  async continueSession(a: Agent, sessionId: string): Promise<void> {
    const prompt = await vscode.window.showInputBox({ title: 'agentls: Continue the session', prompt: 'The agent sees the conversation so far.', ignoreFocusOut: true });
    if (prompt !== undefined && prompt.trim() !== '') {
      this.d.showConversation();
      await this.run(a, prompt.trim(), sessionId);
    }
  }

  /** register adds agentls.runTask, agentls.runTaskOnEngine and agentls.followUp. */
  register(): { dispose(): void }[] {
    return [
      vscode.commands.registerCommand('agentls.runTask', (prompt?: unknown) => this.runTask(typeof prompt === 'string' ? prompt : undefined)),
      vscode.commands.registerCommand('agentls.runTaskOnEngine', (prompt?: unknown) => this.runTask(typeof prompt === 'string' ? prompt : undefined, true)),
      vscode.commands.registerCommand('agentls.followUp', (arg?: unknown) => this.followUp(taskOf(this.d.tasks, arg, false)?.taskId)),
    ];
  }
}
