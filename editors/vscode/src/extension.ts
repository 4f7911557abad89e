// The agentls extension: commands, the Tasks view, the conversation view,
// heat in the explorer and the status bar, over one agentls process per
// workspace folder.
import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import { ResponseError } from 'vscode-languageclient/node';
import { checkMessage, Choices, engineItem, engineItems, intentItems, ModelItem, modelItems, undoRefusals, undoSummary } from './choices';
import { changeAction } from './config';
import { DiffContent, diffScheme } from './diff';
import { EditLog } from './edits';
import { Agents, FolderAgent, folderNames, relativeTo } from './folders';
import { defaultApproveDeps, defaultAskDeps } from './handlers/ask';
import { CommandRunner } from './handlers/runCommand';
import { Inbox } from './inbox';
import { PendingStore } from './pending';
import { buildPrompt, SelectionContext } from './prompt';
import {
  AddSubtaskResult,
  CheckModelResult,
  EnginesResult,
  IntentsResult,
  MCPServersResult,
  Features,
  Methods,
  ModelsResult,
  RunAttachment,
  RunParams,
  RunResult,
  SessionResult,
  SessionsResult,
  TraceResult,
  UndoResult,
} from './protocol';
import { providers, ProviderKeys } from './secrets';
import { plainText } from './text';
import { ConversationView, conversationViewId } from './views/conversation';
import { Conversation, imageTypes, isImagePath, maxImageBytes, runAttachments, viewState } from './views/conversationModel';
import { HeatTreeProvider } from './views/heatTree';
import { mcpReport, mcpServerItem } from './views/mcp';
import { sessionItem, traceItem, transcript } from './views/sessions';
import { TaskStatusBar } from './views/statusBar';
import { changeCounts, isFinal, oneLine, TaskStore, TaskView } from './views/taskModel';
import { Node, TaskTreeProvider, TreeFolder } from './views/taskTree';
import { FromView } from './webview/state';

let agents: Agents | undefined;

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** selectionContext is the active editor's selection as prompt context. */
function selectionContext(): SelectionContext | undefined {
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

/** modelName is a model as the view names it: a scripted model by its file's name. */
function modelName(model: string): string {
  const m = /^script:(.*[\\/])?([^\\/]+)$/.exec(model);
  return m !== null ? `script:${m[2]}` : model;
}

/** nodeOf reads the tree node (or task id) a command was given. */
function nodeOf(arg: unknown): Node | undefined {
  if (typeof arg === 'string') {
    return { kind: 'task', taskId: arg };
  }
  if (typeof arg === 'object' && arg !== null && 'kind' in arg) {
    return arg as Node;
  }
  if (typeof arg === 'object' && arg !== null && 'taskId' in arg && typeof arg.taskId === 'string') {
    return { kind: 'task', taskId: arg.taskId };
  }
  return undefined;
}

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel('agentls');
  const commandOutput = vscode.window.createOutputChannel('agentls: commands');
  const tasks = new TaskStore();
  const pending = new PendingStore();
  const edits = new EditLog();
  tasks.diffOf = (folder, path) => edits.latest(folder, path)?.id;
  const runner = new CommandRunner(commandOutput, async () => {
    if (!vscode.workspace.getConfiguration('agentls').get<boolean>('saveBeforeCommand', true)) {
      return;
    }
    const dirty = vscode.workspace.textDocuments.filter((d) => d.isDirty && !d.isUntitled);
    const saved: string[] = [];
    for (const d of dirty) {
      if (await d.save()) {
        saved.push(vscode.workspace.asRelativePath(d.uri, false));
      }
    }
    if (saved.length > 0) {
      commandOutput.appendLine(`  (saved ${saved.join(', ')} first)`);
    }
  });
  const keys = new ProviderKeys(context.secrets);
  const askDeps = defaultAskDeps();
  const inbox = new Inbox(pending, edits, askDeps);
  const all = new Agents({
    context,
    output,
    keys,
    tasks,
    pending,
    edits,
    runner,
    ask: askDeps,
    approve: defaultApproveDeps(),
    propose: (p) => {
      inbox.notifyProposal(p);
    },
    warn: (m) => {
      output.appendLine(m);
    },
  });
  agents = all;
  const choices = new Choices(context.workspaceState);
  const conversation = new Conversation(context.workspaceState.get<string[]>('agentls.history') ?? []);
  const treeFolders = (): TreeFolder[] => all.all().map((a) => ({ key: a.key, name: a.folder.name, path: a.folder.uri.fsPath }));
  const tree = new TaskTreeProvider(tasks, pending, treeFolders);
  const view = vscode.window.createTreeView('agentls.tasks', { treeDataProvider: tree, showCollapseAll: true });
  const status = new TaskStatusBar(tasks, pending);
  const heatTree = new HeatTreeProvider(() => all.all().map((a) => ({
    key: a.key,
    name: a.folder.name,
    uri: a.folder.uri,
    store: a.heat.store,
    graph: (p: string) => a.graph(p),
  })));
  const heatView = vscode.window.createTreeView('agentls.heat', { treeDataProvider: heatTree, showCollapseAll: true });
  // Each folder's heat redraws the view; its neighbours are asked for on unfolding.
  const heatSubs = new Map<string, vscode.Disposable>();
  const watchHeat = (): void => {
    const keys = new Set(all.all().map((a) => a.key));
    for (const [k, d] of heatSubs) {
      if (!keys.has(k)) {
        d.dispose();
        heatSubs.delete(k);
      }
    }
    for (const a of all.all()) {
      if (!heatSubs.has(a.key)) {
        heatSubs.set(a.key, a.heat.onDidChange(() => {
          heatTree.refresh();
        }));
      }
    }
  };
  watchHeat();

  /** The folder the conversation is in: its tasks', else the first folder's. */
  const conversationAgent = (): FolderAgent | undefined => all.get(conversation.folder) ?? all.all()[0];
  const describeModel = (a: FolderAgent | undefined): string => {
    if (a === undefined) {
      return 'none';
    }
    const chosen = choices.get(a.key).model;
    if (chosen !== undefined) {
      return modelName(chosen);
    }
    const setting = a.client.config().get<string>('model') ?? '';
    return setting !== '' ? modelName(setting) : 'configured';
  };
  const describeIntent = (a: FolderAgent | undefined): string => {
    const c = a !== undefined ? choices.get(a.key) : {};
    return c.intentId !== undefined ? `${c.intentId}${c.intentName !== undefined ? ` ${c.intentName}` : ''}` : '';
  };
  const conv = new ConversationView(context.extensionUri, () => {
    const a = conversationAgent();
    return viewState(conversation, tasks, pending, {
      folderName: a?.folder.name ?? '',
      multiRoot: all.all().length > 1,
      model: describeModel(a),
      intent: describeIntent(a),
      folders: folderNames(),
      canAttach: a?.client.advertises(Features.attachments) ?? false,
      engine: a !== undefined ? choices.get(a.key).engine ?? '' : '',
    });
  }, (m) => {
    void onViewMessage(m);
  });

  const updateViews = (): void => {
    const running = tasks.running();
    void vscode.commands.executeCommand('setContext', 'agentls.taskRunning', running.length > 0);
    const waiting = pending.all();
    view.badge = waiting.length > 0 ? { value: waiting.length, tooltip: `${waiting.length} waiting for you` }
      : running.length > 0 ? { value: running.length, tooltip: `${running.length} running` } : undefined;
    const first = waiting.at(0);
    void vscode.commands.executeCommand('setContext', 'agentls.canAttach', conversationAgent()?.client.advertises(Features.attachments) ?? false);
    view.message = first !== undefined ? `Waiting for you: ${oneLine(first.text, 120)}${waiting.length > 1 ? ` (and ${waiting.length - 1} more)` : ''}` : undefined;
    conv.refresh();
  };

  context.subscriptions.push(
    output,
    commandOutput,
    runner,
    all,
    tree,
    view,
    heatTree,
    heatView,
    {
      dispose: () => {
        for (const d of heatSubs.values()) {
          d.dispose();
        }
      },
    },
    status,
    conv,
    vscode.window.registerWebviewViewProvider(conversationViewId, conv, { webviewOptions: { retainContextWhenHidden: true } }),
    vscode.workspace.registerTextDocumentContentProvider(diffScheme, new DiffContent(edits)),
    tasks.onDidChange(updateViews),
    pending.onDidChange(updateViews),
    choices.onDidChange(() => {
      conv.refresh();
    }),
    all.onDidChange(() => {
      watchHeat();
      heatTree.refresh();
      tree.refresh();
      conv.refresh();
    }),
    // Whether the conversation's agentls takes attachments is known once it runs.
    all.onDidChangeRunning(updateViews),
  );

  async function connected(a: FolderAgent): Promise<Awaited<ReturnType<FolderAgent['client']['get']>> | undefined> {
    try {
      return await a.client.get();
    } catch (e) {
      const pick = await vscode.window.showErrorMessage(`agentls: ${errorText(e)}`, 'Open Settings', 'Show Output');
      if (pick === 'Open Settings') {
        void vscode.commands.executeCommand('workbench.action.openSettings', 'agentls');
      } else if (pick === 'Show Output') {
        output.show();
      }
      return undefined;
    }
  }

  /** pick is the folder a command acts on, telling the person when there is none. */
  async function pick(purpose: string): Promise<FolderAgent | undefined> {
    if (all.all().length === 0) {
      void vscode.window.showInformationMessage('agentls: open a folder first: agentls works on a workspace folder');
      return undefined;
    }
    return all.pick(purpose);
  }

  /** agentOf is the folder agent of a task. */
  function agentOf(t: TaskView): FolderAgent | undefined {
    return all.get(t.folder) ?? (all.all().length === 1 ? all.all()[0] : undefined);
  }

  /** request sends one request to a folder's agentls; a failure is told and undefined. */
  async function request<T>(a: FolderAgent, method: string, params: unknown, what: string): Promise<T | undefined> {
    const lc = await connected(a);
    if (lc === undefined) {
      return undefined;
    }
    try {
      return await lc.sendRequest<T>(method, params);
    } catch (e) {
      void vscode.window.showErrorMessage(`agentls: ${what}: ${errorText(e)}`);
      return undefined;
    }
  }

  /** run starts a task in a folder and renders its result when it ends. */
  async function run(a: FolderAgent, prompt: string, sessionId?: string, attachments?: RunAttachment[], engineArg?: string): Promise<RunResult | undefined> {
    const lc = await connected(a);
    if (lc === undefined) {
      return undefined;
    }
    const taskId = randomUUID();
    const choice = choices.get(a.key);
    // An engine given ('' the plan's choice) wins over the one chosen for the next tasks.
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
    updateViews();
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
      if (e instanceof ResponseError && e.code === -32602 && /intentId/.test(e.message) && choice.intentId !== undefined) {
        await choices.set(a.key, { intentId: undefined, intentName: undefined });
        void vscode.window.showErrorMessage(`agentls: ${plainText(e.message)} (the intent is no longer chosen)`, 'Choose Intent…').then((p) => {
          if (p !== undefined) {
            void selectIntent(a);
          }
        });
      } else if (e instanceof ResponseError && e.code === -32602 && /"engine"/.test(e.message) && engine !== undefined && engineArg === undefined) {
        await choices.set(a.key, { engine: undefined });
        void vscode.window.showErrorMessage(`agentls: ${plainText(e.message)} (the engine is no longer chosen)`, 'Choose Engine…').then((p) => {
          if (p !== undefined) {
            void selectEngine(a);
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
        void followUp(result.taskId);
      } else if (p === 'Show Session') {
        void openSession(a, result.sessionId);
      }
    });
    return result;
  }

  async function runTask(promptArg?: string, onEngine = false): Promise<void> {
    const a = await pick(onEngine ? 'Run Task on Engine' : 'Run Task');
    if (a === undefined) {
      return;
    }
    let engine: string | undefined;
    if (onEngine) {
      engine = await pickEngine(a, 'agentls: Run the task on which engine?');
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
    void conv.show();
    await run(a, buildPrompt(text, sel), undefined, undefined, engine);
  }

  /** followUp continues a finished task's session with a new prompt. */
  async function followUp(taskId?: string, text?: string): Promise<void> {
    const t = taskId !== undefined ? tasks.get(taskId) : tasks.tasks().find((x) => isFinal(x.state) && x.sessionId !== '');
    if (t === undefined || t.sessionId === '') {
      void vscode.window.showInformationMessage('agentls: no finished task to follow up');
      return;
    }
    const a = agentOf(t);
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
    void conv.show();
    await run(a, prompt.trim(), t.sessionId);
  }

  async function continueSession(a: FolderAgent, sessionId: string): Promise<void> {
    const prompt = await vscode.window.showInputBox({ title: 'agentls: Continue the session', prompt: 'The agent sees the conversation so far.', ignoreFocusOut: true });
    if (prompt !== undefined && prompt.trim() !== '') {
      void conv.show();
      await run(a, prompt.trim(), sessionId);
    }
  }

  async function stop(taskId?: string): Promise<void> {
    const running = tasks.running();
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
    const t = id !== undefined ? tasks.get(id) : undefined;
    const a = t !== undefined ? agentOf(t) : undefined;
    if (id === undefined || a === undefined) {
      return;
    }
    const res = await request<{ stopped: boolean }>(a, Methods.stop, { taskId: id }, 'stop failed');
    if (res !== undefined && !res.stopped) {
      void vscode.window.showInformationMessage('agentls: that task had already ended');
    }
  }

  /** taskOf finds the task a tree command names, or the newest running one. */
  function taskOf(arg: unknown, running: boolean): TaskView | undefined {
    const n = nodeOf(arg);
    if (n !== undefined && (n.kind === 'task' || n.kind === 'subtask' || n.kind === 'change')) {
      return tasks.get(n.taskId);
    }
    return running ? tasks.running()[0] : tasks.tasks().find((t) => isFinal(t.state));
  }

  async function addSubtask(arg?: unknown, text?: string): Promise<void> {
    const t = taskOf(arg, true);
    if (t === undefined || isFinal(t.state)) {
      void vscode.window.showInformationMessage('agentls: subtasks are added to a running task');
      return;
    }
    const a = agentOf(t);
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
    const res = await request<AddSubtaskResult>(a, Methods.addSubtask, { taskId: t.taskId, content: content.trim(), ...(dependsOn.length > 0 ? { dependsOn } : {}) }, 'cannot add the subtask');
    if (res !== undefined) {
      void vscode.window.setStatusBarMessage(`agentls: subtask ${res.subtaskId} added`, 5000);
    }
  }

  async function subtaskControl(arg: unknown, method: string, verb: string): Promise<void> {
    const n = nodeOf(arg);
    if (n?.kind !== 'subtask') {
      void vscode.window.showInformationMessage(`agentls: pick a subtask in the Tasks view to ${verb}`);
      return;
    }
    const t = tasks.get(n.taskId);
    const a = t !== undefined ? agentOf(t) : undefined;
    if (a !== undefined) {
      await request(a, method, { taskId: n.taskId, subtaskId: n.subtaskId }, `cannot ${verb} subtask ${n.subtaskId}`);
    }
  }

  async function undo(arg?: unknown): Promise<void> {
    const n = nodeOf(arg);
    const t = taskOf(arg, false);
    if (t === undefined || !isFinal(t.state)) {
      void vscode.window.showInformationMessage('agentls: a task is undone once it has ended');
      return;
    }
    const a = agentOf(t);
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
    const res = await request<UndoResult>(a, Methods.undo, params, 'cannot undo');
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
    const partial = await request<UndoResult>(a, Methods.undo, { ...params, partial: true }, 'cannot undo');
    if (partial !== undefined) {
      void vscode.window.showInformationMessage(`agentls: ${undoSummary(partial)}`);
    }
  }

  async function checkModel(a?: FolderAgent): Promise<void> {
    const agent = a ?? await pick('Test Connection');
    if (agent === undefined) {
      return;
    }
    const model = choices.get(agent.key).model;
    const res = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `agentls: testing ${model ?? 'the configured model'}…` },
      () => request<CheckModelResult>(agent, Methods.checkModel, model !== undefined ? { model } : {}, 'cannot test the model'));
    if (res === undefined) {
      return;
    }
    if (res.ok) {
      void vscode.window.showInformationMessage(checkMessage(res));
      return;
    }
    const closest = res.closest ?? [];
    void vscode.window.showWarningMessage(checkMessage(res), ...closest.map((c) => `Use ${c}`)).then(async (p) => {
      if (p !== undefined) {
        await choices.set(agent.key, { model: p.slice('Use '.length) });
        void vscode.window.showInformationMessage(`agentls: the next tasks in ${agent.folder.name} run with ${p.slice('Use '.length)}`);
      }
    });
  }

  async function selectModel(a?: FolderAgent): Promise<void> {
    const agent = a ?? await pick('Choose Model');
    if (agent === undefined) {
      return;
    }
    const chosen = choices.get(agent.key).model;
    const qp = vscode.window.createQuickPick<vscode.QuickPickItem & { action?: ModelItem['action'] }>();
    qp.title = `agentls: the model of the next tasks${all.all().length > 1 ? ` in ${agent.folder.name}` : ''}`;
    qp.placeholder = 'Asking the providers for their models…';
    qp.busy = true;
    qp.matchOnDescription = true;
    qp.show();
    const res = await request<ModelsResult>(agent, Methods.models, {}, 'cannot list the models');
    if (res === undefined) {
      qp.dispose();
      return;
    }
    qp.items = modelItems(res, chosen).map((i) => ({ ...i, kind: i.kind === 'separator' ? vscode.QuickPickItemKind.Separator : vscode.QuickPickItemKind.Default }));
    qp.busy = false;
    qp.placeholder = 'Pick the model of the next tasks (the agentls.model setting is left as it is)';
    const picked = await new Promise<ModelItem['action'] | undefined>((resolve) => {
      qp.onDidAccept(() => {
        resolve(qp.selectedItems[0]?.action);
        qp.hide();
      });
      qp.onDidHide(() => {
        resolve(undefined);
        qp.dispose();
      });
    });
    switch (picked?.type) {
      case 'test':
        await checkModel(agent);
        break;
      case 'default':
        await choices.set(agent.key, { model: undefined });
        void vscode.window.showInformationMessage(`agentls: the next tasks run with the configured model${res.current !== '' ? ` (${res.current})` : ''}`);
        break;
      case 'model':
        await choices.set(agent.key, { model: picked.id });
        void vscode.window.showInformationMessage(`agentls: the next tasks${all.all().length > 1 ? ` in ${agent.folder.name}` : ''} run with ${picked.id}`, 'Test Connection').then((p) => {
          if (p !== undefined) {
            void checkModel(agent);
          }
        });
        break;
      case 'problem':
        void vscode.window.showWarningMessage(`agentls: ${picked.message}`);
        break;
      default:
        break;
    }
  }

  async function selectIntent(a?: FolderAgent): Promise<void> {
    const agent = a ?? await pick('Choose Intent');
    if (agent === undefined) {
      return;
    }
    const res = await request<IntentsResult>(agent, Methods.intents, {}, 'cannot list the intents');
    if (res === undefined) {
      return;
    }
    if (res.error !== undefined && res.error !== '') {
      void vscode.window.showErrorMessage(`agentls: ${plainText(res.error, folderNames())}`);
      return;
    }
    const items = intentItems(res, choices.get(agent.key).intentId);
    if (items.length === 1) {
      void vscode.window.showInformationMessage((res.intents ?? []).length > 0
        ? 'agentls: every intent of .orchestration/active_intents.yaml is COMPLETED: none can be chosen'
        : 'agentls: this folder has no intents (.orchestration/active_intents.yaml)');
      return;
    }
    const p = await vscode.window.showQuickPick(items, { title: 'agentls: the intent the next tasks work under', matchOnDetail: true });
    if (p === undefined) {
      return;
    }
    await choices.set(agent.key, p.intent !== undefined ? { intentId: p.intent.id, intentName: p.intent.name } : { intentId: undefined, intentName: undefined });
  }

  /**
   * pickEngine asks which engine to run on, from agent/engines: '' is the
   * plan's choice, undefined nothing picked. One that cannot be used is
   * shown with its reason and cannot be picked.
   */
  async function pickEngine(agent: FolderAgent, title: string): Promise<string | undefined> {
    const res = await request<EnginesResult>(agent, Methods.engines, {}, 'cannot list the engines');
    if (res === undefined) {
      return undefined;
    }
    for (;;) {
      const p = await vscode.window.showQuickPick(engineItems(res, choices.get(agent.key).engine), { title, matchOnDetail: true });
      if (p === undefined) {
        return undefined;
      }
      if (p.engine !== undefined) {
        return p.engine;
      }
      void vscode.window.showWarningMessage(`agentls: ${plainText(p.problem ?? 'that engine cannot be used', folderNames())}`);
    }
  }

  async function selectEngine(a?: FolderAgent): Promise<void> {
    const agent = a ?? await pick('Choose Engine');
    if (agent === undefined) {
      return;
    }
    const e = await pickEngine(agent, `agentls: the engine of the next tasks${all.all().length > 1 ? ` in ${agent.folder.name}` : ''}`);
    if (e !== undefined) {
      await choices.set(agent.key, { engine: e !== '' ? e : undefined });
    }
  }

  // showEngines lists agent/engines: each engine, whether it can be used and
  // why not, its version and command; picking a usable one runs a task on it.
  async function showEngines(): Promise<void> {
    const a = await pick('Show Engines');
    if (a === undefined) {
      return;
    }
    const res = await request<EnginesResult>(a, Methods.engines, {}, 'cannot list the engines');
    if (res === undefined) {
      return;
    }
    const engines = res.engines ?? [];
    if (engines.length === 0) {
      void vscode.window.showInformationMessage('agentls: no engine is known (agentls.engines adds some)');
      return;
    }
    const p = await vscode.window.showQuickPick(engines.map(engineItem), {
      title: 'agentls: Engines',
      placeHolder: 'Pick a usable engine to run a task on it',
      matchOnDetail: true,
    });
    if (p === undefined) {
      return;
    }
    if (!p.engine.usable) {
      void vscode.window.showWarningMessage(`agentls: ${p.engine.name} cannot be used: ${plainText(p.engine.reason ?? 'not usable', folderNames())}`, 'Open Settings').then((x) => {
        if (x !== undefined) {
          void vscode.commands.executeCommand('workbench.action.openSettings', 'agentls.engines');
        }
      });
      return;
    }
    const text = await vscode.window.showInputBox({ title: `agentls: Run a task on ${p.engine.name}`, prompt: 'What should the agent do?', ignoreFocusOut: true });
    if (text !== undefined && text.trim() !== '') {
      void conv.show();
      await run(a, text.trim(), undefined, undefined, p.engine.name);
    }
  }

  async function openSession(a: FolderAgent, sessionId: string): Promise<void> {
    const s = await request<SessionResult>(a, Methods.session, { sessionId }, 'cannot open the session');
    if (s === undefined) {
      return;
    }
    const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: transcript(s) });
    await vscode.window.showTextDocument(doc, { preview: true });
  }

  async function showSessions(): Promise<void> {
    const a = await pick('Show Sessions');
    if (a === undefined) {
      return;
    }
    const res = await request<SessionsResult>(a, Methods.sessions, {}, 'cannot list sessions');
    if (res === undefined) {
      return;
    }
    const sessions = res.sessions ?? [];
    if (sessions.length === 0) {
      void vscode.window.showInformationMessage('agentls: no sessions in this workspace yet');
      return;
    }
    const p = await vscode.window.showQuickPick(sessions.map(sessionItem), {
      title: 'agentls: Sessions',
      placeHolder: 'Pick a session to open, continue or delete',
      matchOnDetail: true,
    });
    if (p === undefined) {
      return;
    }
    const action = await vscode.window.showQuickPick(['Open Transcript', 'Continue…', 'Delete'], { title: p.label });
    if (action === 'Open Transcript') {
      await openSession(a, p.sessionId);
    } else if (action === 'Continue…') {
      await continueSession(a, p.sessionId);
    } else if (action === 'Delete') {
      const sure = await vscode.window.showWarningMessage(`Delete the session "${p.label}" and its history?`, { modal: true }, 'Delete');
      if (sure === 'Delete') {
        await request(a, Methods.deleteSession, { sessionId: p.sessionId }, 'cannot delete the session');
      }
    }
  }

  // showMcpServers lists the MCP servers with their state (agent/mcpServers):
  // picking one, or "Start All", opens the report with every server's tools.
  async function showMcpServers(): Promise<void> {
    const a = await pick('Show MCP Servers');
    if (a === undefined) {
      return;
    }
    const list = (start: boolean): Promise<MCPServersResult | undefined> => request<MCPServersResult>(a, Methods.mcpServers, { start }, 'cannot list the MCP servers');
    let res = await list(false);
    if (res === undefined) {
      return;
    }
    const servers = res.servers ?? [];
    if (servers.length > 0) {
      const startAll = { label: '$(play) Start All', description: 'start the servers not started yet and show the report', server: '' };
      const p = await vscode.window.showQuickPick([...servers.map(mcpServerItem), startAll], {
        title: 'agentls: MCP Servers',
        placeHolder: 'Pick a server to see the report with every server and its tools',
        matchOnDetail: true,
      });
      if (p === undefined) {
        return;
      }
      if (p === startAll) {
        res = await list(true);
        if (res === undefined) {
          return;
        }
      }
    }
    const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: mcpReport(res) });
    await vscode.window.showTextDocument(doc, { preview: true });
  }

  async function showTraceForLine(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const a = editor !== undefined ? all.of(editor.document.uri) : undefined;
    if (editor === undefined || a === undefined) {
      void vscode.window.showInformationMessage('agentls: open a file of the workspace and put the cursor on a line');
      return;
    }
    const path = relativeTo(a.folder.uri, editor.document.uri);
    const line = editor.selection.active.line + 1;
    const res = await request<TraceResult>(a, Methods.trace, { path, line }, 'cannot read the trace');
    if (res === undefined) {
      return;
    }
    const entries = res.entries ?? [];
    if (entries.length === 0) {
      void vscode.window.showInformationMessage(`agentls: no agent change recorded for ${path}:${line}`);
      return;
    }
    const p = await vscode.window.showQuickPick(entries.map(traceItem), {
      title: `agentls: changes to ${path}:${line}`,
      placeHolder: 'Pick one to open its session',
      matchOnDetail: true,
    });
    if (p !== undefined && p.entry.sessionId !== '') {
      await openSession(a, p.entry.sessionId);
    }
  }

  async function setProviderKey(): Promise<void> {
    const p = await vscode.window.showQuickPick(providers.map((x) => ({ label: x.label, detail: x.detail, env: x.env })), {
      title: 'agentls: Set Provider Key',
    });
    if (p === undefined) {
      return;
    }
    const key = await vscode.window.showInputBox({
      title: `agentls: ${p.env}`,
      prompt: `Stored in VS Code's secret storage and given to agentls as ${p.env}; never written to settings.`,
      password: true,
      ignoreFocusOut: true,
    });
    if (key === undefined || key.trim() === '') {
      return;
    }
    await keys.set(p.env, key);
    void vscode.window.showInformationMessage(`agentls: ${p.env} stored`);
  }

  async function clearProviderKey(): Promise<void> {
    const stored = [];
    for (const p of providers) {
      if (await keys.has(p.env)) {
        stored.push({ label: p.label, detail: p.detail, env: p.env });
      }
    }
    if (stored.length === 0) {
      void vscode.window.showInformationMessage('agentls: no provider key is stored');
      return;
    }
    const p = await vscode.window.showQuickPick(stored, { title: 'agentls: Clear Provider Key' });
    if (p !== undefined) {
      await keys.clear(p.env);
    }
  }

  const restart = async (a: FolderAgent): Promise<void> => {
    try {
      await a.client.restart();
    } catch (e) {
      void vscode.window.showErrorMessage(`agentls: ${errorText(e)}`);
    }
  };
  const runningIn = (a: FolderAgent): number => tasks.running().filter((t) => t.folder === a.key).length;

  let lastEditor: vscode.TextEditor | undefined = vscode.window.activeTextEditor;
  /** attach adds the active editor's file, or its selection, to the next prompt. */
  function attach(what: 'file' | 'selection', editor = vscode.window.activeTextEditor ?? lastEditor): void {
    if (editor === undefined || editor.document.uri.scheme !== 'file') {
      void vscode.window.showInformationMessage('agentls: open a file of the workspace to attach it');
      return;
    }
    const a = all.of(editor.document.uri);
    if (a === undefined) {
      void vscode.window.showInformationMessage('agentls: that file is outside the workspace folders');
      return;
    }
    const into = conversation.taskIds.length === 0 ? a : all.get(conversation.folder) ?? a;
    if (!into.client.advertises(Features.attachments)) {
      void vscode.window.showInformationMessage('agentls: this agentls takes no attachments with a prompt (it does not advertise them): name the file in the prompt');
      return;
    }
    if (conversation.taskIds.length === 0) {
      conversation.folder = a.key;
    }
    const base = all.get(conversation.folder)?.folder.uri ?? a.folder.uri;
    const path = relativeTo(base, editor.document.uri);
    const sel = editor.selection;
    if (what === 'selection' && !sel.isEmpty) {
      const endLine = sel.end.character === 0 && sel.end.line > sel.start.line ? sel.end.line : sel.end.line + 1;
      conversation.attach({ path, startLine: sel.start.line + 1, endLine });
    } else {
      conversation.attach({ path });
    }
    conv.refresh();
  }
  /** attachInto is the folder agent that takes what is attached next, if it takes attachments. */
  function attachInto(a?: FolderAgent): FolderAgent | undefined {
    const into = conversation.taskIds.length === 0 ? a ?? conversationAgent() : all.get(conversation.folder) ?? a;
    if (into === undefined || !into.client.advertises(Features.attachments)) {
      void vscode.window.showInformationMessage('agentls: this agentls takes no attachments with a prompt (it does not advertise them): name the file in the prompt');
      return undefined;
    }
    if (conversation.taskIds.length === 0) {
      conversation.folder = into.key;
    }
    return into;
  }

  /** attachImage offers the images of the conversation's folder, the active editor's first. */
  async function attachImage(): Promise<void> {
    const into = attachInto();
    if (into === undefined) {
      return;
    }
    const glob = `**/*.{${Object.keys(imageTypes).join(',')}}`;
    const found = await vscode.workspace.findFiles(new vscode.RelativePattern(into.folder, glob), '**/{node_modules,.git}/**', 500);
    const paths = found.map((u) => relativeTo(into.folder.uri, u)).filter(isImagePath).sort();
    if (paths.length === 0) {
      void vscode.window.showInformationMessage(`agentls: ${into.folder.name} has no image (png, jpeg, gif, webp) to attach; paste one into the prompt box instead`);
      return;
    }
    const p = await vscode.window.showQuickPick(paths.map((x) => ({ label: x })), { title: 'agentls: Attach which image?', placeHolder: 'An image of the workspace goes along with the next prompt' });
    if (p !== undefined) {
      conversation.attach({ path: p.label, image: {} });
      conv.refresh();
    }
  }

  /** attachPasted takes an image pasted into the prompt box. */
  function attachPasted(data: string, mimeType: string): void {
    if (!Object.values(imageTypes).includes(mimeType)) {
      void vscode.window.showWarningMessage(`agentls: a pasted ${mimeType} cannot go along: agentls takes png, jpeg, gif and webp images`);
      return;
    }
    // base64: four characters for three bytes.
    if (Math.floor((data.length * 3) / 4) > maxImageBytes) {
      void vscode.window.showWarningMessage(`agentls: the pasted image is over ${maxImageBytes / (1024 * 1024)} MiB, more than agentls takes`);
      return;
    }
    if (attachInto() === undefined) {
      return;
    }
    conversation.attach({ path: conversation.pastedName(mimeType), image: { data, mimeType } });
    conv.refresh();
  }

  async function onViewMessage(m: FromView): Promise<void> {
    switch (m.type) {
      case 'send': {
        const text = m.text.trim();
        if (text === '') {
          return;
        }
        conversation.remember(text);
        void context.workspaceState.update('agentls.history', conversation.history);
        const running = conversation.running(tasks);
        if (running !== undefined) {
          // A subtask takes no attachments: they wait for the next task.
          await addSubtask({ kind: 'task', taskId: running.taskId }, text);
          return;
        }
        const a = all.get(conversation.folder) ?? await pick('Send');
        if (a === undefined) {
          return;
        }
        const attached = a.client.advertises(Features.attachments) ? runAttachments(conversation.attachments) : [];
        conversation.attachments = [];
        conv.refresh();
        await run(a, text, conversation.folder === a.key ? conversation.sessionId(tasks) : undefined, attached);
        return;
      }
      case 'stop':
        await stop(m.taskId);
        return;
      case 'skip':
        await subtaskControl({ kind: 'subtask', taskId: m.taskId, subtaskId: m.subtaskId }, Methods.skipSubtask, 'skip');
        return;
      case 'answer':
        inbox.answer(m.id, m.value);
        return;
      case 'review':
        inbox.review(m.id);
        return;
      case 'diff':
        await inbox.diff(m.diffId);
        return;
      case 'attach':
        if (m.what === 'image') {
          await attachImage();
        } else {
          attach(m.what);
        }
        return;
      case 'paste':
        attachPasted(m.data, m.mimeType);
        return;
      case 'engine':
        await selectEngine(conversationAgent());
        return;
      case 'detach':
        conversation.detach(m.id);
        conv.refresh();
        return;
      case 'model':
        await selectModel(conversationAgent());
        return;
      case 'intent':
        await selectIntent(conversationAgent());
        return;
      case 'new': {
        const a = await pick('New Conversation');
        if (a !== undefined) {
          conversation.reset(a.key);
          conversation.attachments = [];
          conv.refresh();
          conv.focus();
        }
        return;
      }
      case 'ready':
        return;
    }
  }

  const pendingId = (arg: unknown): string | undefined => {
    const n = nodeOf(arg);
    if (n?.kind === 'pending') {
      return n.id;
    }
    return pending.all()[0]?.id;
  };
  const answerWith = (value: string) => (arg: unknown): void => {
    const id = pendingId(arg);
    if (id !== undefined) {
      const p = pending.get(id);
      // An approval's action by its place, when agentls words it otherwise.
      const v = p !== undefined && !p.options.includes(value) && p.kind === 'approval'
        ? p.options[['Run', 'Always allow', 'Deny'].indexOf(value)] ?? value
        : value;
      inbox.answer(id, v);
    }
  };

  context.subscriptions.push(
    vscode.window.onDidChangeActiveTextEditor((e) => {
      if (e !== undefined) {
        lastEditor = e;
      }
    }),
    vscode.commands.registerCommand('agentls.runTask', (prompt?: unknown) => runTask(typeof prompt === 'string' ? prompt : undefined)),
    vscode.commands.registerCommand('agentls.runTaskOnEngine', (prompt?: unknown) => runTask(typeof prompt === 'string' ? prompt : undefined, true)),
    vscode.commands.registerCommand('agentls.selectEngine', () => selectEngine()),
    vscode.commands.registerCommand('agentls.showEngines', showEngines),
    vscode.commands.registerCommand('agentls.stop', (arg?: unknown) => {
      const n = nodeOf(arg);
      return stop(n !== undefined && n.kind === 'task' ? n.taskId : undefined);
    }),
    vscode.commands.registerCommand('agentls.followUp', (arg?: unknown) => followUp(taskOf(arg, false)?.taskId)),
    vscode.commands.registerCommand('agentls.addSubtask', (arg?: unknown) => addSubtask(arg)),
    vscode.commands.registerCommand('agentls.skipSubtask', (arg?: unknown) => subtaskControl(arg, Methods.skipSubtask, 'skip')),
    vscode.commands.registerCommand('agentls.removeSubtask', (arg?: unknown) => subtaskControl(arg, Methods.removeSubtask, 'remove')),
    vscode.commands.registerCommand('agentls.undoTask', (arg?: unknown) => {
      const n = nodeOf(arg);
      return undo(n?.kind === 'subtask' ? { kind: 'task', taskId: n.taskId } : arg);
    }),
    vscode.commands.registerCommand('agentls.undoSubtask', (arg?: unknown) => undo(arg)),
    vscode.commands.registerCommand('agentls.selectModel', () => selectModel()),
    vscode.commands.registerCommand('agentls.checkModel', () => checkModel()),
    vscode.commands.registerCommand('agentls.selectIntent', () => selectIntent()),
    vscode.commands.registerCommand('agentls.showPending', async () => {
      if (!await inbox.showPending()) {
        await vscode.commands.executeCommand('agentls.tasks.focus');
      }
    }),
    vscode.commands.registerCommand('agentls.answer', (arg?: unknown) => {
      const id = pendingId(arg);
      return id !== undefined ? inbox.prompt(id) : inbox.showPending();
    }),
    vscode.commands.registerCommand('agentls.approve.run', answerWith('Run')),
    vscode.commands.registerCommand('agentls.approve.always', answerWith('Always allow')),
    vscode.commands.registerCommand('agentls.approve.deny', answerWith('Deny')),
    vscode.commands.registerCommand('agentls.question.dismiss', (arg?: unknown) => {
      const id = pendingId(arg);
      if (id !== undefined) {
        inbox.answer(id, null);
      }
    }),
    vscode.commands.registerCommand('agentls.proposal.accept', answerWith('Accept')),
    vscode.commands.registerCommand('agentls.proposal.reject', answerWith('Reject')),
    vscode.commands.registerCommand('agentls.proposal.review', (arg?: unknown) => {
      const id = pendingId(arg);
      if (id !== undefined) {
        inbox.review(id);
      }
    }),
    vscode.commands.registerCommand('agentls.proposal.diff', async (arg?: unknown) => {
      const id = pendingId(arg);
      const files = (id !== undefined ? pending.get(id)?.files : undefined) ?? [];
      const f = files.length <= 1 ? files[0] : (await vscode.window.showQuickPick(files.map((x) => ({ label: x.path, description: x.operation, f: x })), { title: 'agentls: which file?' }))?.f;
      if (f?.diffId !== undefined) {
        await inbox.diff(f.diffId);
      }
    }),
    vscode.commands.registerCommand('agentls.showChange', async (arg?: unknown) => {
      const n = nodeOf(arg);
      if (n?.kind !== 'change') {
        return;
      }
      const t = tasks.get(n.taskId);
      const c = t?.changes[n.index];
      if (t === undefined || c === undefined) {
        return;
      }
      const id = edits.latest(t.folder, c.path)?.id;
      if (id !== undefined) {
        await inbox.diff(id);
        return;
      }
      // Not kept in this window: the unified diff agentls reported.
      const doc = await vscode.workspace.openTextDocument({ language: 'diff', content: c.diff ?? '' });
      await vscode.window.showTextDocument(doc, { preview: true });
    }),
    vscode.commands.registerCommand('agentls.openConversation', () => conv.reveal()),
    vscode.commands.registerCommand('agentls.newConversation', () => onViewMessage({ type: 'new' })),
    vscode.commands.registerCommand('agentls.attachSelection', () => {
      attach('selection');
      return conv.reveal();
    }),
    vscode.commands.registerCommand('agentls.attachFile', () => {
      attach('file');
      return conv.reveal();
    }),
    vscode.commands.registerCommand('agentls.attachImage', async () => {
      await attachImage();
      await conv.reveal();
    }),
    vscode.commands.registerCommand('agentls.showSessions', showSessions),
    vscode.commands.registerCommand('agentls.showTraceForLine', showTraceForLine),
    vscode.commands.registerCommand('agentls.showMcpServers', showMcpServers),
    vscode.commands.registerCommand('agentls.refreshHeat', () => {
      heatTree.forget();
    }),
    vscode.commands.registerCommand('agentls.setProviderKey', setProviderKey),
    vscode.commands.registerCommand('agentls.clearProviderKey', clearProviderKey),
    vscode.commands.registerCommand('agentls.restart', async () => {
      for (const a of all.all()) {
        await restart(a);
      }
    }),
    vscode.commands.registerCommand('agentls.showOutput', () => {
      output.show();
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      for (const a of all.all()) {
        switch (changeAction((s) => e.affectsConfiguration(s, a.folder.uri))) {
          case 'restart':
            if (runningIn(a) === 0) {
              void restart(a);
            } else {
              void vscode.window.showInformationMessage(`agentls: the change takes effect when agentls${all.all().length > 1 ? ` (${a.folder.name})` : ''} restarts`, 'Restart Now').then((p) => {
                if (p !== undefined) {
                  void restart(a);
                }
              });
            }
            break;
          case 'reconfigure':
            void a.client.reconfigure();
            break;
          case 'none':
            break;
        }
      }
      conv.refresh();
    }),
    keys.onDidChange(() => {
      // A key is read by the process at start: a new one needs a new process.
      for (const a of all.all()) {
        if (a.client.running() && runningIn(a) === 0) {
          void restart(a);
        }
      }
    }),
  );

  // Start in the background so the heat of earlier tasks shows and the first
  // task starts at once; a failure is told when the person runs a command.
  for (const a of all.all()) {
    a.client.get().catch((e: unknown) => {
      a.client.log(errorText(e));
    });
  }
  context.subscriptions.push(all.onDidChange(() => {
    for (const a of all.all()) {
      if (!a.client.running()) {
        a.client.get().catch((e: unknown) => {
          a.client.log(errorText(e));
        });
      }
    }
  }));
}

export async function deactivate(): Promise<void> {
  const a = agents;
  agents = undefined;
  await Promise.all((a?.all() ?? []).map((x) => x.client.stop()));
  a?.dispose();
}
