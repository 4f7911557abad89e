// The views beside the conversation and what keeps them current: the Tasks
// view (its badge, its message of what waits, agentls.taskRunning and
// agentls.canAttach for the menus' when-clauses), the Heat view (redrawn on
// each folder's heat, Refresh Neighbours forgetting what the code graph
// said), and the status bar item.
import * as vscode from 'vscode';
import { PendingStore } from '../pending';
import { CodeGraphResult, Features } from '../protocol';
import { HeatStore } from '../views/heat';
import { HeatTreeNode, HeatTreeProvider } from '../views/heatTree';
import { TaskStatusBar } from '../views/statusBar';
import { oneLine, TaskStore } from '../views/taskModel';
import { Node, TaskTreeProvider, TreeFolder } from '../views/taskTree';
import { Agent, AgentSet } from './agents';

/** A folder's agentls as the views show it: with its heat and its code graph (FolderAgent). */
export interface ViewAgent extends Agent {
  readonly heat: { readonly store: HeatStore; readonly onDidChange: vscode.Event<void> };
  graph(path: string): Promise<CodeGraphResult>;
}

export interface ViewsDeps {
  agents: AgentSet<ViewAgent> & {
    /** Fires when folders come or go. */
    readonly onDidChange: vscode.Event<void>;
    /** Fires when a folder's agentls starts or stops. */
    readonly onDidChangeRunning: vscode.Event<void>;
  };
  tasks: TaskStore;
  pending: PendingStore;
  /** The folder the conversation is in. */
  conversationAgent(): Agent | undefined;
  /** Redraws the conversation view. */
  refreshConversation(): void;
}

export class Views {
  private readonly tree: TaskTreeProvider;
  private readonly view: vscode.TreeView<Node>;
  private readonly status: TaskStatusBar;
  private readonly heatTree: HeatTreeProvider;
  private readonly heatView: vscode.TreeView<HeatTreeNode>;
  /** Each folder's heat subscription, by its key. */
  private readonly heatSubs = new Map<string, { dispose(): void }>();

  constructor(private readonly d: ViewsDeps) {
    const treeFolders = (): TreeFolder[] => d.agents.all().map((a) => ({ key: a.key, name: a.folder.name, path: a.folder.uri.fsPath }));
    this.tree = new TaskTreeProvider(d.tasks, d.pending, treeFolders);
    this.view = vscode.window.createTreeView('agentls.tasks', { treeDataProvider: this.tree, showCollapseAll: true });
    this.status = new TaskStatusBar(d.tasks, d.pending);
    this.heatTree = new HeatTreeProvider(() => d.agents.all().map((a) => ({
      key: a.key,
      name: a.folder.name,
      uri: a.folder.uri,
      store: a.heat.store,
      graph: (p: string) => a.graph(p),
    })));
    this.heatView = vscode.window.createTreeView('agentls.heat', { treeDataProvider: this.heatTree, showCollapseAll: true });
    this.watchHeat();
  }

  /** watchHeat redraws the Heat view on each folder's heat; its neighbours are asked for on unfolding. */
  private watchHeat(): void {
    const keys = new Set(this.d.agents.all().map((a) => a.key));
    for (const [k, sub] of this.heatSubs) {
      if (!keys.has(k)) {
        sub.dispose();
        this.heatSubs.delete(k);
      }
    }
    for (const a of this.d.agents.all()) {
      if (!this.heatSubs.has(a.key)) {
        this.heatSubs.set(a.key, a.heat.onDidChange(() => {
          this.heatTree.refresh();
        }));
      }
    }
  }

  /** update renders what the tasks and what waits change: the Tasks view's badge and message, the context keys, the conversation. */
  update(): void {
    const { tasks, pending } = this.d;
    const running = tasks.running();
    void vscode.commands.executeCommand('setContext', 'agentls.taskRunning', running.length > 0);
    const waiting = pending.all();
    this.view.badge = waiting.length > 0 ? { value: waiting.length, tooltip: `${waiting.length} waiting for you` }
      : running.length > 0 ? { value: running.length, tooltip: `${running.length} running` } : undefined;
    const first = waiting.at(0);
    void vscode.commands.executeCommand('setContext', 'agentls.canAttach', this.d.conversationAgent()?.client.advertises(Features.attachments) ?? false);
    this.view.message = first !== undefined ? `Waiting for you: ${oneLine(first.text, 120)}${waiting.length > 1 ? ` (and ${waiting.length - 1} more)` : ''}` : undefined;
    this.d.refreshConversation();
  }

  /** register returns the views, their subscriptions and Refresh Neighbours, to dispose of. */
  register(): { dispose(): void }[] {
    const { agents, tasks, pending } = this.d;
    const update = (): void => {
      this.update();
    };
    return [
      this.tree,
      this.view,
      this.heatTree,
      this.heatView,
      {
        dispose: () => {
          for (const sub of this.heatSubs.values()) {
            sub.dispose();
          }
        },
      },
      this.status,
      tasks.onDidChange(update),
      pending.onDidChange(update),
      agents.onDidChange(() => {
        this.watchHeat();
        this.heatTree.refresh();
        this.tree.refresh();
        this.d.refreshConversation();
      }),
      // Whether the conversation's agentls takes attachments is known once it runs.
      agents.onDidChangeRunning(update),
      vscode.commands.registerCommand('agentls.refreshHeat', () => {
        this.heatTree.forget();
      }),
    ];
  }
}
