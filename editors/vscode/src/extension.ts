// The agentls extension: one agentls process per workspace folder, and what
// VS Code shows of them. This file only wires: it makes what every folder's
// agentls shares (the stores, the command runner, the inbox), then each
// concern's module with what it needs of the others, and gives VS Code
// their disposables. Where a command lives:
//
//   commands/run.ts           Run Task…, Run Task on Engine…, Follow Up… (agent/run)
//   commands/controls.ts      Stop, Add, Skip and Remove Subtask, Undo Task and Undo Subtask
//   commands/approvals.ts     Show What Waits for You, Answer…, Run, Always Allow, Deny, Dismiss
//   commands/proposals.ts     Accept, Reject, Review and Show Proposed Diff; Show Change
//   commands/conversation.ts  the conversation view's requests, Open and New Conversation, Attach…
//   commands/viewers.ts       Show Sessions, Show Trace for Line, Show MCP Servers, Show Engines
//   commands/pickers.ts       Choose Model…, Test Connection, Choose Intent…, Choose Engine…
//   commands/providerKeys.ts  Set and Clear Provider Key…
//   commands/lifecycle.ts     the processes' start and restarts, Restart, Show Output
//   commands/views.ts         the Tasks and Heat views, the status bar item, Refresh Neighbours
//
// commands/agents.ts is what they share: the folders' agentls as the
// commands see them, and the one way a command sends a request.
import * as vscode from 'vscode';
import { Choices } from './choices';
import { Requests } from './commands/agents';
import * as approvals from './commands/approvals';
import { ConversationCommands } from './commands/conversation';
import { TaskControls } from './commands/controls';
import * as lifecycle from './commands/lifecycle';
import { Pickers } from './commands/pickers';
import * as proposals from './commands/proposals';
import * as providerKeys from './commands/providerKeys';
import { TaskRunner } from './commands/run';
import { Viewers } from './commands/viewers';
import { Views } from './commands/views';
import { DiffContent, diffScheme } from './diff';
import { EditLog } from './edits';
import { Agents } from './folders';
import { defaultApproveDeps, defaultAskDeps } from './handlers/ask';
import { CommandRunner } from './handlers/runCommand';
import { Inbox } from './inbox';
import { PendingStore } from './pending';
import { ProviderKeys } from './secrets';
import { ConversationView, conversationViewId } from './views/conversation';
import { Conversation } from './views/conversationModel';
import { TaskStore } from './views/taskModel';

let agents: Agents | undefined;

/**
 * saveBeforeCommand saves every modified file before the agent runs a
 * command (agentls.saveBeforeCommand), as VS Code does before a task, so the
 * command sees the agent's edits; what it saved goes to the command's output.
 */
async function saveBeforeCommand(commandOutput: vscode.OutputChannel): Promise<void> {
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
}

export function activate(context: vscode.ExtensionContext): void {
  // What every folder's agentls shares.
  const output = vscode.window.createOutputChannel('agentls');
  const commandOutput = vscode.window.createOutputChannel('agentls: commands');
  const tasks = new TaskStore();
  const pending = new PendingStore();
  const edits = new EditLog();
  tasks.diffOf = (folder, path) => edits.latest(folder, path)?.id;
  const runner = new CommandRunner(commandOutput, () => saveBeforeCommand(commandOutput));
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
  const requests = new Requests(all, output);

  // The concerns, each with what it needs of the others. A module's calls
  // into one made after it are closures, run only once everything is made.
  const views: Views = new Views({
    agents: all,
    tasks,
    pending,
    conversationAgent: () => conversationCommands.agent(),
    refreshConversation: () => {
      conv.refresh();
    },
  });
  const conv: ConversationView = new ConversationView(context.extensionUri, () => conversationCommands.state(), (m) => {
    void conversationCommands.onViewMessage(m);
  });
  const pickers = new Pickers(all, requests, choices);
  const controls = new TaskControls(requests, tasks);
  const showConversation = (): void => {
    void conv.show();
  };
  const taskRunner: TaskRunner = new TaskRunner({
    requests,
    tasks,
    choices,
    conversation,
    showConversation,
    updateViews: () => {
      views.update();
    },
    selectIntent: (a) => pickers.selectIntent(a),
    selectEngine: (a) => pickers.selectEngine(a),
    pickEngine: (a, title) => pickers.pickEngine(a, title),
    openSession: (a, sessionId) => viewers.openSession(a, sessionId),
  });
  const viewers: Viewers = new Viewers({
    agents: all,
    requests,
    runOnEngine: (a, prompt, engine) => taskRunner.run(a, prompt, undefined, undefined, engine),
    continueSession: (a, sessionId) => taskRunner.continueSession(a, sessionId),
    showConversation,
  });
  const conversationCommands: ConversationCommands = new ConversationCommands({
    agents: all,
    requests,
    conversation,
    tasks,
    pending,
    choices,
    inbox,
    history: context.workspaceState,
    view: conv,
    describeModel: (a) => pickers.describeModel(a),
    describeIntent: (a) => pickers.describeIntent(a),
    selectModel: (a) => pickers.selectModel(a),
    selectIntent: (a) => pickers.selectIntent(a),
    selectEngine: (a) => pickers.selectEngine(a),
    run: (a, prompt, sessionId, attachments) => taskRunner.run(a, prompt, sessionId, attachments),
    stop: (taskId) => controls.stop(taskId),
    addSubtask: (arg, text) => controls.addSubtask(arg, text),
    subtaskControl: (arg, method, verb) => controls.subtaskControl(arg, method, verb),
  });

  context.subscriptions.push(
    output,
    commandOutput,
    runner,
    all,
    ...views.register(),
    conv,
    vscode.window.registerWebviewViewProvider(conversationViewId, conv, { webviewOptions: { retainContextWhenHidden: true } }),
    vscode.workspace.registerTextDocumentContentProvider(diffScheme, new DiffContent(edits)),
    ...taskRunner.register(),
    ...controls.register(),
    ...approvals.register({ pending, inbox }),
    ...proposals.register({ pending, inbox, tasks, edits }),
    ...conversationCommands.register(),
    ...viewers.register(),
    ...pickers.register(),
    ...providerKeys.register(keys),
    ...lifecycle.register({ agents: all, tasks, output, onDidChangeKeys: (l) => keys.onDidChange(l) }),
  );

  // Start in the background so the heat of earlier tasks shows and the first
  // task starts at once; a failure is told when the person runs a command.
  lifecycle.startAll(all);
}

export async function deactivate(): Promise<void> {
  const a = agents;
  agents = undefined;
  await Promise.all((a?.all() ?? []).map((x) => x.client.stop()));
  a?.dispose();
}
