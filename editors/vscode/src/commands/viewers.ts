// What agentls keeps and knows, shown on request: Show Sessions (open a
// transcript, continue or delete a session), Show Trace for Line (the agent
// changes to the cursor's line, each opening its session), Show MCP Servers
// (their state and tools) and Show Engines (each engine, and a task run on a
// usable one).
import * as vscode from 'vscode';
import { engineItem } from '../choices';
import { folderNames, relativeTo } from '../folderPaths';
import { EnginesResult, MCPServersResult, Methods, SessionResult, SessionsResult, TraceResult } from '../protocol';
import { plainText } from '../text';
import { mcpReport, mcpServerItem } from '../views/mcp';
import { sessionItem, traceItem, transcript } from '../views/sessions';
import { Agent, AgentSet, Requests } from './agents';

export interface ViewerDeps {
  agents: AgentSet;
  requests: Requests;
  /** Runs a task on an engine (TaskRunner.run). */
  runOnEngine(a: Agent, prompt: string, engine: string): Promise<unknown>;
  /** Asks for a session's next prompt and runs it (TaskRunner.continueSession). */
  continueSession(a: Agent, sessionId: string): Promise<void>;
  /** Brings the conversation view forward. */
  showConversation(): void;
}

export class Viewers {
  constructor(private readonly d: ViewerDeps) {}

  /** openSession shows a session's transcript as a Markdown document. */
  async openSession(a: Agent, sessionId: string): Promise<void> {
    const s = await this.d.requests.request<SessionResult>(a, Methods.session, { sessionId }, 'cannot open the session');
    if (s === undefined) {
      return;
    }
    const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: transcript(s) });
    await vscode.window.showTextDocument(doc, { preview: true });
  }

  async showSessions(): Promise<void> {
    const a = await this.d.requests.pick('Show Sessions');
    if (a === undefined) {
      return;
    }
    const res = await this.d.requests.request<SessionsResult>(a, Methods.sessions, {}, 'cannot list sessions');
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
      await this.openSession(a, p.sessionId);
    } else if (action === 'Continue…') {
      await this.d.continueSession(a, p.sessionId);
    } else if (action === 'Delete') {
      const sure = await vscode.window.showWarningMessage(`Delete the session "${p.label}" and its history?`, { modal: true }, 'Delete');
      if (sure === 'Delete') {
        await this.d.requests.request(a, Methods.deleteSession, { sessionId: p.sessionId }, 'cannot delete the session');
      }
    }
  }

  /**
   * showMcpServers lists the MCP servers with their state (agent/mcpServers):
   * picking one, or "Start All", opens the report with every server's tools.
   */
  async showMcpServers(): Promise<void> {
    const a = await this.d.requests.pick('Show MCP Servers');
    if (a === undefined) {
      return;
    }
    const list = (start: boolean): Promise<MCPServersResult | undefined> => this.d.requests.request<MCPServersResult>(a, Methods.mcpServers, { start }, 'cannot list the MCP servers');
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

  async showTraceForLine(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const a = editor !== undefined ? this.d.agents.of(editor.document.uri) : undefined;
    if (editor === undefined || a === undefined) {
      void vscode.window.showInformationMessage('agentls: open a file of the workspace and put the cursor on a line');
      return;
    }
    const path = relativeTo(a.folder.uri, editor.document.uri);
    const line = editor.selection.active.line + 1;
    const res = await this.d.requests.request<TraceResult>(a, Methods.trace, { path, line }, 'cannot read the trace');
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
      await this.openSession(a, p.entry.sessionId);
    }
  }

  /**
   * showEngines lists agent/engines: each engine, whether it can be used and
   * why not, its version and command; picking a usable one runs a task on it.
   */
  async showEngines(): Promise<void> {
    const a = await this.d.requests.pick('Show Engines');
    if (a === undefined) {
      return;
    }
    const res = await this.d.requests.request<EnginesResult>(a, Methods.engines, {}, 'cannot list the engines');
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
      this.d.showConversation();
      await this.d.runOnEngine(a, text.trim(), p.engine.name);
    }
  }

  /** register adds Show Sessions, Show Trace for Line, Show MCP Servers and Show Engines. */
  register(): { dispose(): void }[] {
    return [
      vscode.commands.registerCommand('agentls.showSessions', () => this.showSessions()),
      vscode.commands.registerCommand('agentls.showTraceForLine', () => this.showTraceForLine()),
      vscode.commands.registerCommand('agentls.showMcpServers', () => this.showMcpServers()),
      vscode.commands.registerCommand('agentls.showEngines', () => this.showEngines()),
    ];
  }
}
