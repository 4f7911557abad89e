// What the command modules know of the folders' agentls, and the one way
// they ask one of them something: the folder a command acts on, the running
// client (a failure to start told with the way to fix it), and a request
// whose failure is told. The types are the parts of folders.ts's Agents and
// FolderAgent the commands use, so a module can be tested with fakes and
// without a language client.
import * as vscode from 'vscode';

/** The part of a language client a command sends requests with. */
export interface Sender {
  sendRequest<R>(method: string, params: unknown): Promise<R>;
}

/** The part of a folder's AgentClient the commands use. */
export interface FolderClient {
  /** The running client, started when needed. */
  get(): Promise<Sender>;
  /** The folder's agentls settings (VS Code's signature: the caller names a setting's type). */
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters
  config(): { get<T>(section: string): T | undefined };
  /** Whether the running agentls declared an optional feature. */
  advertises(feature: string): boolean;
  running(): boolean;
  restart(): Promise<void>;
  /** Sends the settings to a running agentls for its next tasks. */
  reconfigure(): Promise<void>;
  /** Writes a line to the agentls output. */
  log(line: string): void;
}

/** One workspace folder's agentls. */
export interface Agent {
  /** The folder's URI as a string: what tasks, choices and the conversation name it by. */
  readonly key: string;
  readonly folder: vscode.WorkspaceFolder;
  readonly client: FolderClient;
}

/** The agentls of every workspace folder. */
export interface AgentSet<A extends Agent = Agent> {
  /** Every folder's, in the folders' order. */
  all(): A[];
  get(key: string): A | undefined;
  /** The agent of the folder that holds uri. */
  of(uri: vscode.Uri): A | undefined;
  /** The active editor's folder, else the only one, else the one the person picks. */
  pick(purpose: string): Promise<A | undefined>;
}

export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * isInvalidParams reports whether e is agentls's answer -32602 (invalid
 * params) to a request: the error a language client rejects a request with
 * carries the answer's code.
 */
export function isInvalidParams(e: unknown): e is Error & { code: number } {
  return e instanceof Error && 'code' in e && e.code === -32602;
}

/** Requests is how the commands reach a folder's agentls. */
export class Requests {
  constructor(
    private readonly agents: AgentSet,
    /** The agentls output channel, shown when the person asks to see why. */
    private readonly output: { show(): void },
  ) {}

  /** connected is a's running client; a failure to start is told, with Open Settings and Show Output. */
  async connected(a: Agent): Promise<Sender | undefined> {
    try {
      return await a.client.get();
    } catch (e) {
      const pick = await vscode.window.showErrorMessage(`agentls: ${errorText(e)}`, 'Open Settings', 'Show Output');
      if (pick === 'Open Settings') {
        void vscode.commands.executeCommand('workbench.action.openSettings', 'agentls');
      } else if (pick === 'Show Output') {
        this.output.show();
      }
      return undefined;
    }
  }

  /** pick is the folder a command acts on, telling the person when there is none. */
  async pick(purpose: string): Promise<Agent | undefined> {
    if (this.agents.all().length === 0) {
      void vscode.window.showInformationMessage('agentls: open a folder first: agentls works on a workspace folder');
      return undefined;
    }
    return this.agents.pick(purpose);
  }

  /** agentOf is the folder agent of a task: its folder's, else the only one. */
  agentOf(t: { folder: string }): Agent | undefined {
    const all = this.agents.all();
    return this.agents.get(t.folder) ?? (all.length === 1 ? all[0] : undefined);
  }

  /** request sends one request to a folder's agentls; a failure is told and undefined. */
  async request<T>(a: Agent, method: string, params: unknown, what: string): Promise<T | undefined> {
    const lc = await this.connected(a);
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
}
