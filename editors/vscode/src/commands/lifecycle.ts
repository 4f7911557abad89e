// The agentls processes' lives: each folder's started in the background at
// activation and when folders come, so the heat of earlier tasks shows and
// the first task starts at once; restarted by agentls: Restart, by a setting
// read only at start (at once when none of its tasks runs, else when the
// person says so), and by a new provider key; reconfigured in place for the
// settings a running agentls takes and when the person trusts the workspace
// (VS Code reloads the window when trust is taken back). Show Output opens
// their log.
import * as vscode from 'vscode';
import { changeAction } from '../config';
import { TaskStore } from '../views/taskModel';
import { Agent, AgentSet, errorText } from './agents';

export interface LifecycleDeps {
  agents: AgentSet & { readonly onDidChange: vscode.Event<void> };
  tasks: TaskStore;
  /** The agentls output channel. */
  output: { show(): void };
  /** Fires when a provider key is stored or removed. */
  onDidChangeKeys(listener: () => void): { dispose(): void };
}

/** restart restarts a folder's agentls, telling the person when it cannot start. */
export async function restart(a: Agent): Promise<void> {
  try {
    await a.client.restart();
  } catch (e) {
    void vscode.window.showErrorMessage(`agentls: ${errorText(e)}`);
  }
}

/** startAll starts every folder's agentls that is not running; a failure is logged, and told when the person runs a command. */
export function startAll(agents: AgentSet): void {
  for (const a of agents.all()) {
    if (!a.client.running()) {
      a.client.get().catch((e: unknown) => {
        a.client.log(errorText(e));
      });
    }
  }
}

/** register adds Restart and Show Output, and follows the settings, the workspace's trust, the keys and the folders. */
export function register(d: LifecycleDeps): { dispose(): void }[] {
  const { agents } = d;
  const runningIn = (a: Agent): number => d.tasks.running().filter((t) => t.folder === a.key).length;
  return [
    vscode.commands.registerCommand('agentls.restart', async () => {
      for (const a of agents.all()) {
        await restart(a);
      }
    }),
    vscode.commands.registerCommand('agentls.showOutput', () => {
      d.output.show();
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      for (const a of agents.all()) {
        switch (changeAction((s) => e.affectsConfiguration(s, a.folder.uri))) {
          case 'restart':
            if (runningIn(a) === 0) {
              void restart(a);
            } else {
              void vscode.window.showInformationMessage(`agentls: the change takes effect when agentls${agents.all().length > 1 ? ` (${a.folder.name})` : ''} restarts`, 'Restart Now').then((p) => {
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
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      // workspaceTrust goes with the settings: every folder's agentls stops
      // asking for what the settings let run without asking.
      for (const a of agents.all()) {
        void a.client.reconfigure();
      }
    }),
    d.onDidChangeKeys(() => {
      // A key is read by the process at start: a new one needs a new process.
      for (const a of agents.all()) {
        if (a.client.running() && runningIn(a) === 0) {
          void restart(a);
        }
      }
    }),
    agents.onDidChange(() => {
      startAll(agents);
    }),
  ];
}
