// The agentls extension: one agentls process per workspace folder, and what
// VS Code shows of them. This file only wires: it makes what every folder's
// agentls shares (the stores, the command runner, the inbox, the output
// channels, the conversation view) and hands it to commands/index.ts, which
// makes each concern's module and registers its commands (its header says
// where each command lives).
import * as vscode from 'vscode';
import { Choices } from './choices';
import { Wired, wire } from './commands';
import { startAll } from './commands/lifecycle';
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
  const output = vscode.window.createOutputChannel('agentls');
  const commandOutput = vscode.window.createOutputChannel('agentls: commands');
  const tasks = new TaskStore();
  const pending = new PendingStore();
  const edits = new EditLog();
  tasks.diffOf = (folder, path) => edits.latest(folder, path)?.id;
  const runner = new CommandRunner(commandOutput, () => saveBeforeCommand(commandOutput));
  const keys = new ProviderKeys(context.secrets);
  const askDeps = defaultAskDeps();
  // A proposal asks in one place: the conversation view's card when it
  // shows, else a notification.
  const inbox = new Inbox(pending, edits, askDeps, () => conv.visible());
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
  // The view asks the conversation's module, made by wire below, for its state.
  const conv: ConversationView = new ConversationView(context.extensionUri, () => wired.conversation.state(), (m) => {
    void wired.conversation.onViewMessage(m);
  });
  const wired: Wired = wire({
    agents: all,
    output,
    tasks,
    pending,
    edits,
    choices: new Choices(context.workspaceState),
    conversation: new Conversation(context.workspaceState.get<string[]>('agentls.history') ?? []),
    inbox,
    keys,
    history: context.workspaceState,
    view: conv,
  });

  context.subscriptions.push(
    output,
    commandOutput,
    runner,
    all,
    conv,
    vscode.window.registerWebviewViewProvider(conversationViewId, conv, { webviewOptions: { retainContextWhenHidden: true } }),
    vscode.workspace.registerTextDocumentContentProvider(diffScheme, new DiffContent(edits)),
    ...wired.disposables,
  );

  // Start in the background so the heat of earlier tasks shows and the first
  // task starts at once; a failure is told when the person runs a command.
  startAll(all);
}

export async function deactivate(): Promise<void> {
  const a = agents;
  agents = undefined;
  await Promise.all((a?.all() ?? []).map((x) => x.client.stop()));
  a?.dispose();
}
