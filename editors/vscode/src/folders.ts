// One agentls per workspace folder, as each folder is a project of its own:
// its settings, sessions, heat and trace. Commands act on the folder of the
// active editor, else the only folder, else the one the person picks.
import * as vscode from 'vscode';
import { LanguageClient } from 'vscode-languageclient/node';
import { AgentClient } from './client';
import { EditLog } from './edits';
import { folderNames, relativeTo } from './folderPaths';
import { ApplyEditDeps, LspWorkspaceEdit } from './handlers/applyEdit';
import { AskDeps, ApproveDeps } from './handlers/ask';
import { DiagnosticsDeps } from './handlers/diagnostics';
import { LocateDeps } from './handlers/locate';
import { ReadFileDeps } from './handlers/readFile';
import { CommandRunner } from './handlers/runCommand';
import { PendingStore } from './pending';
import { CodeGraphParams, CodeGraphResult, Methods } from './protocol';
import { ProviderKeys } from './secrets';
import { HeatDecorations, HeatStore } from './views/heat';
import { TaskStore } from './views/taskModel';
import { WiringDeps } from './wiring';

/** What every folder's agentls shares. */
export interface Shared {
  context: vscode.ExtensionContext;
  output: vscode.OutputChannel;
  keys: ProviderKeys;
  tasks: TaskStore;
  pending: PendingStore;
  edits: EditLog;
  runner: CommandRunner;
  ask: AskDeps;
  approve: ApproveDeps;
  /** Tells the person of a proposed edit waiting on them. */
  propose: ApplyEditDeps['propose'];
  warn(message: string): void;
}

/** One folder's agentls and its heat in the explorer. */
export class FolderAgent implements vscode.Disposable {
  readonly client: AgentClient;
  readonly heat: HeatDecorations;
  private readonly subs: vscode.Disposable[] = [];

  constructor(public folder: vscode.WorkspaceFolder, private readonly shared: Shared) {
    this.heat = new HeatDecorations(new HeatStore(), () => folder.uri);
    this.client = new AgentClient(shared.context, shared.output, shared.keys, folder, (lc) => this.wiring(lc), () => {
      this.heat.reset();
      shared.pending.withdrawFolder(this.key);
    });
    this.subs.push(vscode.window.registerFileDecorationProvider(this.heat));
  }

  /** graph asks this folder's agentls for the code graph of a file (agent/codeGraph {path}). */
  async graph(path: string): Promise<CodeGraphResult> {
    const lc = await this.client.get();
    return lc.sendRequest<CodeGraphResult>(Methods.codeGraph, { path } satisfies CodeGraphParams);
  }

  get key(): string {
    return this.folder.uri.toString();
  }

  private wiring(lc: LanguageClient): WiringDeps {
    const s = this.shared;
    const folder = { key: this.key, name: this.folder.name, fsPath: this.folder.uri.fsPath };
    const readFile: ReadFileDeps = {
      textDocuments: () => vscode.workspace.textDocuments,
      readFile: (uri) => vscode.workspace.fs.readFile(uri),
      root: () => this.folder.uri,
    };
    // The code graph's questions go to whatever provider serves the document.
    const locate: LocateDeps = {
      references: (uri, line, character) =>
        vscode.commands.executeCommand<vscode.Location[]>('vscode.executeReferenceProvider', uri, new vscode.Position(line, character)),
      definitions: (uri, line, character) =>
        vscode.commands.executeCommand<(vscode.Location | vscode.LocationLink)[]>('vscode.executeDefinitionProvider', uri, new vscode.Position(line, character)),
      parseUri: (u) => vscode.Uri.parse(u, true),
    };
    // The diagnostics of every language server and linter, this folder's.
    const diagnostics: DiagnosticsDeps = {
      of: (uri) => vscode.languages.getDiagnostics(uri),
      all: () => vscode.languages.getDiagnostics(),
      inside: (uri) => vscode.workspace.getWorkspaceFolder(uri)?.uri.toString() === this.folder.uri.toString(),
      parseUri: (u) => vscode.Uri.parse(u, true),
      onDidChange: (listener) => vscode.languages.onDidChangeDiagnostics((e) => {
        listener(e.uris);
      }),
    };
    const document = (uri: vscode.Uri): vscode.TextDocument | undefined =>
      vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    const applyEdit: ApplyEditDeps = {
      folder,
      pending: s.pending,
      edits: s.edits,
      tasks: s.tasks,
      parseUri: (u) => vscode.Uri.parse(u, true),
      relative: (uri) => relativeTo(this.folder.uri, uri),
      document,
      readDisk: async (uri) => {
        try {
          return new TextDecoder('utf-8').decode(await vscode.workspace.fs.readFile(uri));
        } catch {
          return undefined;
        }
      },
      // The shapes are the protocol's; the checks of applyEdit came first.
      convert: (edit: LspWorkspaceEdit) => lc.protocol2CodeConverter.asWorkspaceEdit(edit as Parameters<typeof lc.protocol2CodeConverter.asWorkspaceEdit>[0] & object),
      apply: (edit) => vscode.workspace.applyEdit(edit),
      open: (uri) => vscode.workspace.openTextDocument(uri),
      save: async (uri) => (await document(uri)?.save()) ?? false,
      propose: s.propose,
      warn: (m) => {
        void vscode.window.showWarningMessage(m);
      },
    };
    return {
      folder,
      pending: s.pending,
      tasks: s.tasks,
      folders: folderNames,
      readFile,
      locate,
      diagnostics,
      ask: s.ask,
      approve: s.approve,
      applyEdit,
      runner: s.runner,
      heat: this.heat,
      warn: (m) => {
        s.warn(m);
      },
    };
  }

  dispose(): void {
    this.client.dispose();
    this.heat.dispose();
    for (const d of this.subs.splice(0)) {
      d.dispose();
    }
  }
}

/** Agents holds the agentls of every workspace folder. */
export class Agents implements vscode.Disposable {
  private readonly byFolder = new Map<string, FolderAgent>();
  private readonly sub: vscode.Disposable;
  private readonly emitter = new vscode.EventEmitter<void>();
  /** Fires when folders come or go. */
  readonly onDidChange = this.emitter.event;
  private readonly runningEmitter = new vscode.EventEmitter<void>();
  /** Fires when a folder's agentls starts or stops. */
  readonly onDidChangeRunning = this.runningEmitter.event;
  private readonly watching = new Map<string, vscode.Disposable>();

  constructor(private readonly shared: Shared) {
    this.sync();
    this.sub = vscode.workspace.onDidChangeWorkspaceFolders(() => {
      this.sync();
      this.emitter.fire();
    });
  }

  /** sync makes an agent for each folder and ends those of folders gone. */
  private sync(): void {
    const folders = vscode.workspace.workspaceFolders ?? [];
    const keep = new Set(folders.map((f) => f.uri.toString()));
    for (const [key, a] of this.byFolder) {
      if (!keep.has(key)) {
        this.watching.get(key)?.dispose();
        this.watching.delete(key);
        a.dispose();
        this.byFolder.delete(key);
      }
    }
    for (const f of folders) {
      const key = f.uri.toString();
      const a = this.byFolder.get(key);
      if (a === undefined) {
        const agent = new FolderAgent(f, this.shared);
        this.byFolder.set(key, agent);
        this.watching.set(key, agent.client.onDidChangeRunning(() => {
          this.runningEmitter.fire();
        }));
      } else {
        a.folder = f; // its index or name may have changed
      }
    }
  }

  all(): FolderAgent[] {
    return [...this.byFolder.values()].sort((a, b) => a.folder.index - b.folder.index);
  }

  get(key: string): FolderAgent | undefined {
    return this.byFolder.get(key);
  }

  /** of is the agent of the folder that holds uri. */
  of(uri: vscode.Uri): FolderAgent | undefined {
    const f = vscode.workspace.getWorkspaceFolder(uri);
    return f !== undefined ? this.byFolder.get(f.uri.toString()) : undefined;
  }

  /**
   * pick is the folder a command acts on: the active editor's, else the only
   * one, else the one the person picks (undefined when they pick none).
   */
  async pick(purpose: string): Promise<FolderAgent | undefined> {
    const all = this.all();
    if (all.length <= 1) {
      return all[0];
    }
    const editor = vscode.window.activeTextEditor;
    const active = editor !== undefined ? this.of(editor.document.uri) : undefined;
    if (active !== undefined) {
      return active;
    }
    const picked = await vscode.window.showQuickPick(
      all.map((a) => ({ label: a.folder.name, description: a.folder.uri.fsPath, agent: a })),
      { title: `agentls: ${purpose}`, placeHolder: 'Which workspace folder?' },
    );
    return picked?.agent;
  }

  dispose(): void {
    this.sub.dispose();
    this.emitter.dispose();
    for (const w of this.watching.values()) {
      w.dispose();
    }
    this.watching.clear();
    this.runningEmitter.dispose();
    for (const a of this.byFolder.values()) {
      a.dispose();
    }
    this.byFolder.clear();
  }
}
