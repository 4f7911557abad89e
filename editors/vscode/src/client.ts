// The agentls process of one workspace folder as a language client: spawned
// in the folder with its settings as initializationOptions and the provider
// keys in its environment, restarted or reconfigured when either changes.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as vscode from 'vscode';
import {
  ClientCapabilities,
  LanguageClient,
  LanguageClientOptions,
  ResponseError,
  ServerOptions,
  State,
  StaticFeature,
} from 'vscode-languageclient/node';
import { initOptions, InitOptions, resolveBinary, serveArgs, SettingProblem, BinaryChoice, settingsSource, shownOptions } from './config';
import { advertised, fillAgentCapabilities, HeatSnapshot, Methods } from './protocol';
import { ProviderKeys } from './secrets';
import { Connection, register, RpcError, WiringDeps } from './wiring';

/** AgentFeature advertises experimental.agent (contract §2). */
export class AgentFeature implements StaticFeature {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    fillAgentCapabilities(capabilities);
  }
  initialize(): void {
    // Nothing to set up: the reverse calls are registered by the wiring.
  }
  getState(): { kind: 'static' } {
    return { kind: 'static' };
  }
  clear(): void {
    // Nothing held.
  }
}

function isExecutable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** AgentClient owns one folder's language client and its restarts. */
export class AgentClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient> | undefined;
  private readonly subscriptions: { dispose(): void }[] = [];
  private readonly stateEmitter = new vscode.EventEmitter<boolean>();
  /** Fires true when the server is running, false when it stops. */
  readonly onDidChangeRunning = this.stateEmitter.event;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.OutputChannel,
    private readonly keys: ProviderKeys,
    readonly folder: vscode.WorkspaceFolder,
    /** The handlers and stores the client's connection is wired to. */
    private readonly wiring: (lc: LanguageClient) => WiringDeps,
    private readonly onStopped: () => void,
  ) {}

  /** The folder's agentls settings (folder settings over workspace and user ones). */
  config(): vscode.WorkspaceConfiguration {
    return vscode.workspace.getConfiguration('agentls', this.folder.uri);
  }

  /** log writes a line to the agentls output, naming the folder when there are several. */
  log(line: string): void {
    const many = (vscode.workspace.workspaceFolders?.length ?? 0) > 1;
    this.output.appendLine(many ? `[${this.folder.name}] ${line}` : line);
  }

  private reportProblems(problems: SettingProblem[]): void {
    for (const p of problems) {
      this.log(`settings: ${p.key}: ${p.message}`);
      void vscode.window.showWarningMessage(`agentls: ${p.key} ${p.message}`, 'Open Settings').then((pick) => {
        if (pick !== undefined) {
          void vscode.commands.executeCommand('workbench.action.openSettings', p.key);
        }
      });
    }
  }

  binary(): BinaryChoice {
    return resolveBinary(this.config().get<string>('path'), this.context.extensionPath, {
      platform: process.platform,
      arch: process.arch,
      home: os.homedir(),
    }, isExecutable);
  }

  /** get returns the running client, starting it when needed. */
  get(): Promise<LanguageClient> {
    if (this.client !== undefined && this.client.state === State.Running) {
      return Promise.resolve(this.client);
    }
    this.starting ??= this.start().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  /** options reads the folder's settings and the workspace's trust into initializationOptions. */
  private options(): InitOptions {
    const { options, problems } = initOptions(settingsSource(this.config()), vscode.workspace.isTrusted);
    this.reportProblems(problems);
    return options;
  }

  private async start(): Promise<LanguageClient> {
    const folder = this.folder;
    const options = this.options();
    const bin = this.binary();
    const env = { ...process.env, ...(await this.keys.environment()) };
    this.log(`starting ${bin.command} (${bin.source}) in ${folder.uri.fsPath}`);
    if (options.workspaceTrust === 'untrusted') {
      this.log('the workspace is not trusted (Restricted Mode): agentls asks before it runs any command, MCP server or engine');
    }
    const serverOptions: ServerOptions = {
      command: bin.command,
      args: serveArgs(this.config().get('logLevel')),
      options: { cwd: folder.uri.fsPath, env },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [],
      workspaceFolder: folder,
      initializationOptions: options,
      outputChannel: this.output,
      // The agent is not a per-document server: there is nothing to
      // synchronise, and a crash is told once rather than five times.
      connectionOptions: { maxRestartCount: 2 },
    };
    const client = new LanguageClient('agentls', `agentls (${folder.name})`, serverOptions, clientOptions);
    client.registerFeature(new AgentFeature());
    const deps = this.wiring(client);
    const conn: Connection = {
      onRequest: (method, handler) =>
        client.onRequest(method, async (params: unknown, token: vscode.CancellationToken) => {
          try {
            return await handler(params, token);
          } catch (e) {
            if (e instanceof RpcError) {
              return new ResponseError(e.code, e.message);
            }
            this.log(`${method}: ${String(e)}`);
            return new ResponseError(-32603, `${method}: ${e instanceof Error ? e.message : String(e)}`);
          }
        }),
      onNotification: (method, handler) => client.onNotification(method, handler),
      sendNotification: (method, params) => {
        if (client.state === State.Running) {
          client.sendNotification(method, params).catch((e: unknown) => {
            this.log(`${method}: ${String(e)}`);
          });
        }
      },
    };
    this.subscriptions.push(...register(conn, deps));
    this.subscriptions.push(client.onDidChangeState((e) => {
      if (e.newState === State.Running) {
        this.stateEmitter.fire(true);
        void this.loadHeat(client, deps);
      } else if (e.newState === State.Stopped) {
        deps.heat.reset();
        this.onStopped();
        this.stateEmitter.fire(false);
      }
    }));
    this.client = client;
    try {
      await client.start();
    } catch (e) {
      this.client = undefined;
      this.disposeSubscriptions();
      const hint = bin.source === 'path'
        ? ' (no agentls binary is packaged for this platform and none was found on PATH: set agentls.path)'
        : '';
      throw new Error(`agentls did not start: ${e instanceof Error ? e.message : String(e)}${hint}`);
    }
    return client;
  }

  private async loadHeat(client: LanguageClient, deps: WiringDeps): Promise<void> {
    try {
      const snap = await client.sendRequest<HeatSnapshot>(Methods.heatSnapshot, {});
      deps.heat.applySnapshot(snap);
    } catch (e) {
      this.log(`heat snapshot: ${String(e)}`);
    }
  }

  /**
   * reconfigure sends the settings and the workspace's trust to the server
   * for the tasks that start next. A server still starting is waited for:
   * it may have read what changed since (trust granted meanwhile) before.
   */
  async reconfigure(): Promise<void> {
    await this.starting?.catch(() => undefined);
    const client = this.client;
    if (client?.state !== State.Running) {
      return;
    }
    const options = this.options();
    await client.sendNotification(Methods.didChangeConfiguration, { settings: { agentls: options } });
    this.log(`settings sent to agentls for the next task: ${shownOptions(options)}`);
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.get();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.disposeSubscriptions();
    if (client !== undefined && client.state !== State.Stopped) {
      try {
        await client.stop(5000);
      } catch (e) {
        this.log(`stopping agentls: ${String(e)}`);
      }
    }
    this.onStopped();
  }

  running(): boolean {
    return this.client?.state === State.Running;
  }

  /**
   * advertises reports whether the running agentls declared an optional
   * feature in its initialize result (capabilities.experimental.agent.<feature>
   * set to true); false while it is not running.
   */
  advertises(feature: string): boolean {
    if (!this.running()) {
      return false;
    }
    return advertised(this.client?.initializeResult, feature);
  }

  private disposeSubscriptions(): void {
    for (const s of this.subscriptions.splice(0)) {
      s.dispose();
    }
  }

  dispose(): void {
    void this.stop();
    this.stateEmitter.dispose();
  }
}
