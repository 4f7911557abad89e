// The agentls extension: commands, the Tasks view, heat in the explorer and
// the status bar, over one agentls process per window.
import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import { AgentClient } from './client';
import { changeAction } from './config';
import { defaultAskDeps } from './handlers/ask';
import { defaultReadFileDeps } from './handlers/readFile';
import { CommandRunner } from './handlers/runCommand';
import { buildPrompt, SelectionContext } from './prompt';
import { MCPServersResult, Methods, RunParams, RunResult, SessionResult, SessionsResult, TraceResult } from './protocol';
import { providers, ProviderKeys } from './secrets';
import { HeatDecorations, HeatStore } from './views/heat';
import { mcpReport, mcpServerItem } from './views/mcp';
import { sessionItem, traceItem, transcript } from './views/sessions';
import { TaskStatusBar } from './views/statusBar';
import { oneLine, TaskStore } from './views/taskModel';
import { TaskTreeProvider } from './views/taskTree';

let agent: AgentClient | undefined;

function root(): vscode.Uri | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri;
}

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

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel('agentls');
  const commandOutput = vscode.window.createOutputChannel('agentls: commands');
  const tasks = new TaskStore();
  const heat = new HeatDecorations(new HeatStore(), root);
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
  const client = new AgentClient(context, output, keys, {
    readFile: defaultReadFileDeps(),
    ask: defaultAskDeps(),
    runner,
    tasks,
    heat,
    warn: (m) => {
      output.appendLine(m);
    },
  });
  agent = client;
  const tree = new TaskTreeProvider(tasks);
  const view = vscode.window.createTreeView('agentls.tasks', { treeDataProvider: tree, showCollapseAll: true });
  const status = new TaskStatusBar(tasks);

  context.subscriptions.push(
    output,
    commandOutput,
    runner,
    heat,
    client,
    tree,
    view,
    status,
    vscode.window.registerFileDecorationProvider(heat),
    tasks.onDidChange(() => {
      const running = tasks.running();
      void vscode.commands.executeCommand('setContext', 'agentls.taskRunning', running.length > 0);
      const t = tasks.latest();
      view.badge = running.length > 0 ? { value: running.length, tooltip: `${running.length} running` } : undefined;
      view.message = t?.question !== undefined ? `Waiting for you: ${oneLine(t.question, 120)}` : undefined;
    }),
  );

  async function connected(): Promise<Awaited<ReturnType<AgentClient['get']>> | undefined> {
    try {
      return await client.get();
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

  /** run starts a task and renders its result when it ends. */
  async function run(prompt: string, sessionId?: string): Promise<RunResult | undefined> {
    const lc = await connected();
    if (lc === undefined) {
      return undefined;
    }
    const taskId = randomUUID();
    tasks.begin(taskId, prompt);
    void vscode.commands.executeCommand('agentls.tasks.focus');
    const params: RunParams = { prompt, taskId };
    if (sessionId !== undefined) {
      params.sessionId = sessionId;
    }
    let result: RunResult;
    try {
      result = await lc.sendRequest<RunResult>(Methods.run, params);
    } catch (e) {
      tasks.fail(taskId, errorText(e));
      void vscode.window.showErrorMessage(`agentls: the task failed: ${errorText(e)}`);
      return undefined;
    }
    tasks.finish(result);
    const summary = result.summary !== '' ? `: ${oneLine(result.summary, 200)}` : '';
    const msg = `agentls: task ${result.state}${summary}`;
    const actions = result.sessionId !== '' ? ['Continue…', 'Show Session'] : [];
    const show = result.state === 'done' ? vscode.window.showInformationMessage : vscode.window.showWarningMessage;
    void show(msg, ...actions).then((pick) => {
      if (pick === 'Continue…') {
        void runTask(result.sessionId);
      } else if (pick === 'Show Session') {
        void openSession(result.sessionId);
      }
    });
    return result;
  }

  async function runTask(sessionId?: string, promptArg?: string): Promise<void> {
    const sel = selectionContext();
    const request = promptArg ?? await vscode.window.showInputBox({
      title: sessionId !== undefined ? 'agentls: Continue the session' : 'agentls: Run Task',
      prompt: sel !== undefined
        ? `What should the agent do? The selection (${sel.path}, lines ${sel.startLine}-${sel.endLine}) goes along.`
        : 'What should the agent do?',
      placeHolder: 'e.g. Add a --verbose flag to the CLI and test it',
      ignoreFocusOut: true,
    });
    if (request === undefined || request.trim() === '') {
      return;
    }
    await run(buildPrompt(request, sel), sessionId);
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
        const pick = await vscode.window.showQuickPick(
          running.map((t) => ({ label: oneLine(t.prompt, 80), description: t.state, taskId: t.taskId })),
          { title: 'agentls: Stop which task?' },
        );
        id = pick?.taskId;
      }
    }
    if (id === undefined) {
      return;
    }
    const lc = await connected();
    if (lc === undefined) {
      return;
    }
    try {
      const res = await lc.sendRequest<{ stopped: boolean }>(Methods.stop, { taskId: id });
      if (!res.stopped) {
        void vscode.window.showInformationMessage('agentls: that task had already ended');
      }
    } catch (e) {
      void vscode.window.showErrorMessage(`agentls: stop failed: ${errorText(e)}`);
    }
  }

  async function openSession(sessionId: string): Promise<void> {
    const lc = await connected();
    if (lc === undefined) {
      return;
    }
    const s = await lc.sendRequest<SessionResult>(Methods.session, { sessionId });
    const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: transcript(s) });
    await vscode.window.showTextDocument(doc, { preview: true });
  }

  async function showSessions(): Promise<void> {
    const lc = await connected();
    if (lc === undefined) {
      return;
    }
    let res: SessionsResult;
    try {
      res = await lc.sendRequest<SessionsResult>(Methods.sessions, {});
    } catch (e) {
      void vscode.window.showErrorMessage(`agentls: cannot list sessions: ${errorText(e)}`);
      return;
    }
    const sessions = res.sessions ?? [];
    if (sessions.length === 0) {
      void vscode.window.showInformationMessage('agentls: no sessions in this workspace yet');
      return;
    }
    const pick = await vscode.window.showQuickPick(sessions.map(sessionItem), {
      title: 'agentls: Sessions',
      placeHolder: 'Pick a session to open, continue or delete',
      matchOnDetail: true,
    });
    if (pick === undefined) {
      return;
    }
    const action = await vscode.window.showQuickPick(['Open Transcript', 'Continue…', 'Delete'], { title: pick.label });
    try {
      if (action === 'Open Transcript') {
        await openSession(pick.sessionId);
      } else if (action === 'Continue…') {
        await runTask(pick.sessionId);
      } else if (action === 'Delete') {
        const sure = await vscode.window.showWarningMessage(`Delete the session "${pick.label}" and its history?`, { modal: true }, 'Delete');
        if (sure === 'Delete') {
          await lc.sendRequest(Methods.deleteSession, { sessionId: pick.sessionId });
        }
      }
    } catch (e) {
      void vscode.window.showErrorMessage(`agentls: ${errorText(e)}`);
    }
  }

  // showMcpServers lists the MCP servers with their state (agent/mcpServers):
  // picking one, or "Start All", opens the report with every server's tools.
  async function showMcpServers(): Promise<void> {
    const lc = await connected();
    if (lc === undefined) {
      return;
    }
    const list = async (start: boolean): Promise<MCPServersResult | undefined> => {
      try {
        return await lc.sendRequest<MCPServersResult>(Methods.mcpServers, { start });
      } catch (e) {
        void vscode.window.showErrorMessage(`agentls: cannot list the MCP servers: ${errorText(e)}`);
        return undefined;
      }
    };
    let res = await list(false);
    if (res === undefined) {
      return;
    }
    const servers = res.servers ?? [];
    if (servers.length > 0) {
      const startAll = { label: '$(play) Start All', description: 'start the servers not started yet and show the report', server: '' };
      const pick = await vscode.window.showQuickPick([...servers.map(mcpServerItem), startAll], {
        title: 'agentls: MCP Servers',
        placeHolder: 'Pick a server to see the report with every server and its tools',
        matchOnDetail: true,
      });
      if (pick === undefined) {
        return;
      }
      if (pick === startAll) {
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
    const folder = root();
    if (editor === undefined || folder === undefined || vscode.workspace.getWorkspaceFolder(editor.document.uri) === undefined) {
      void vscode.window.showInformationMessage('agentls: open a file of the workspace and put the cursor on a line');
      return;
    }
    const lc = await connected();
    if (lc === undefined) {
      return;
    }
    const path = vscode.workspace.asRelativePath(editor.document.uri, false);
    const line = editor.selection.active.line + 1;
    let res: TraceResult;
    try {
      res = await lc.sendRequest<TraceResult>(Methods.trace, { path, line });
    } catch (e) {
      void vscode.window.showErrorMessage(`agentls: cannot read the trace: ${errorText(e)}`);
      return;
    }
    const entries = res.entries ?? [];
    if (entries.length === 0) {
      void vscode.window.showInformationMessage(`agentls: no agent change recorded for ${path}:${line}`);
      return;
    }
    const pick = await vscode.window.showQuickPick(entries.map(traceItem), {
      title: `agentls: changes to ${path}:${line}`,
      placeHolder: 'Pick one to open its session',
      matchOnDetail: true,
    });
    if (pick !== undefined && pick.entry.sessionId !== '') {
      await openSession(pick.entry.sessionId);
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

  const restart = async (): Promise<void> => {
    try {
      await client.restart();
    } catch (e) {
      void vscode.window.showErrorMessage(`agentls: ${errorText(e)}`);
    }
  };

  context.subscriptions.push(
    vscode.commands.registerCommand('agentls.runTask', (prompt?: unknown) => runTask(undefined, typeof prompt === 'string' ? prompt : undefined)),
    vscode.commands.registerCommand('agentls.stop', (arg?: unknown) => {
      const id = typeof arg === 'string' ? arg
        : typeof arg === 'object' && arg !== null && 'taskId' in arg && typeof arg.taskId === 'string' ? arg.taskId
          : undefined;
      return stop(id);
    }),
    vscode.commands.registerCommand('agentls.showSessions', showSessions),
    vscode.commands.registerCommand('agentls.showTraceForLine', showTraceForLine),
    vscode.commands.registerCommand('agentls.showMcpServers', showMcpServers),
    vscode.commands.registerCommand('agentls.setProviderKey', setProviderKey),
    vscode.commands.registerCommand('agentls.clearProviderKey', clearProviderKey),
    vscode.commands.registerCommand('agentls.restart', restart),
    vscode.commands.registerCommand('agentls.showOutput', () => {
      output.show();
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      switch (changeAction((s) => e.affectsConfiguration(s))) {
        case 'restart':
          if (tasks.running().length === 0) {
            void restart();
          } else {
            void vscode.window.showInformationMessage('agentls: the change takes effect when agentls restarts', 'Restart Now').then((pick) => {
              if (pick !== undefined) {
                void restart();
              }
            });
          }
          break;
        case 'reconfigure':
          void client.reconfigure();
          break;
        case 'none':
          break;
      }
    }),
    keys.onDidChange(() => {
      // A key is read by the process at start: a new one needs a new process.
      if (client.running() && tasks.running().length === 0) {
        void restart();
      }
    }),
  );

  // Start in the background so the heat of earlier tasks shows and the first
  // task starts at once; a failure is told when the person runs a command.
  if (root() !== undefined) {
    client.get().catch((e: unknown) => {
      output.appendLine(errorText(e));
    });
  }
}

export async function deactivate(): Promise<void> {
  await agent?.stop();
  agent = undefined;
}
