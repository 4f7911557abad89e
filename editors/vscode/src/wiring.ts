// What the extension registers on the connection to one folder's agentls:
// the reverse calls it answers (reads, commands, questions, approvals,
// edits, diagnostics), the notifications it renders, and the one it sends
// (agent/didChangeDiagnostics). Kept apart from the
// language client so the registration itself is unit-tested.
import type * as vscode from 'vscode';
import { attributePending } from './attribute';
import { ApplyEditDeps, applyEdit, ApplyEditResult } from './handlers/applyEdit';
import { ApproveDeps, ask, AskDeps, InboxDeps, showMessageRequest } from './handlers/ask';
import { diagnostics, DiagnosticsDeps, DiagnosticsError } from './handlers/diagnostics';
import { definitions, LocateDeps, LocateError, references } from './handlers/locate';
import { readFile, ReadFileDeps, ReadFileError } from './handlers/readFile';
import { CommandRunner } from './handlers/runCommand';
import {
  AskParams,
  AskResult,
  DiagnosticsResult,
  DidChangeDiagnosticsParams,
  HeatUpdateParams,
  MessageActionItem,
  Methods,
  ReadFileParams,
  ReadFileResult,
  RunCommandParams,
  RunCommandResult,
  ShowMessageRequestParams,
  TaskUpdateParams,
} from './protocol';
import { HeatDecorations } from './views/heat';

/** JSON-RPC error codes the handlers answer with. */
export const ErrorCodes = { invalidParams: -32602, internal: -32603 } as const;

/** An error answer: the language client turns it into a ResponseError. */
export class RpcError extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

/** The part of the language client the wiring uses. */
export interface Connection {
  onRequest(method: string, handler: (params: unknown, token: vscode.CancellationToken) => unknown): { dispose(): void };
  onNotification(method: string, handler: (params: unknown) => void): { dispose(): void };
  /** sendNotification tells agentls something; nothing when it is not running. */
  sendNotification(method: string, params: unknown): void;
}

/** What one folder's agentls is wired to: its handlers and the shared stores. */
export interface WiringDeps extends InboxDeps {
  readFile: ReadFileDeps;
  /** The language servers' answers to the code graph's questions. */
  locate: LocateDeps;
  /** The diagnostics VS Code shows, and the word when they change. */
  diagnostics: DiagnosticsDeps;
  ask: AskDeps;
  approve: ApproveDeps;
  applyEdit: ApplyEditDeps;
  runner: CommandRunner;
  heat: HeatDecorations;
  /** Logs a notification or request that could not be used. */
  warn(message: string): void;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function need(params: unknown, method: string, fields: Record<string, 'string' | 'number'>): Record<string, unknown> {
  if (!isObject(params)) {
    throw new RpcError(ErrorCodes.invalidParams, `invalid params: ${method} takes an object`);
  }
  for (const [k, type] of Object.entries(fields)) {
    if (params[k] !== undefined && typeof params[k] !== type) {
      throw new RpcError(ErrorCodes.invalidParams, `invalid params: ${k} must be a ${type}`);
    }
  }
  return params;
}

export async function onReadFile(params: unknown, deps: ReadFileDeps): Promise<ReadFileResult> {
  const p = need(params, Methods.readFile, { path: 'string', uri: 'string' }) as unknown as ReadFileParams;
  try {
    return await readFile(p, deps);
  } catch (e) {
    if (e instanceof ReadFileError) {
      throw new RpcError(ErrorCodes.invalidParams, e.message);
    }
    throw e;
  }
}

/** onLocate answers agent/references or agent/definition, a bad request with -32602. */
export async function onLocate<T>(answer: (params: unknown, deps: LocateDeps) => Promise<T>, params: unknown, deps: LocateDeps): Promise<T> {
  try {
    return await answer(params, deps);
  } catch (e) {
    if (e instanceof LocateError) {
      throw new RpcError(ErrorCodes.invalidParams, e.message);
    }
    throw e;
  }
}

/** onDiagnostics answers agent/diagnostics, a bad request with -32602. */
export function onDiagnostics(params: unknown, deps: DiagnosticsDeps): DiagnosticsResult {
  try {
    return diagnostics(params, deps);
  } catch (e) {
    if (e instanceof DiagnosticsError) {
      throw new RpcError(ErrorCodes.invalidParams, e.message);
    }
    throw e;
  }
}

export function onRunCommand(params: unknown, runner: CommandRunner, token: vscode.CancellationToken): Promise<RunCommandResult> {
  const p = need(params, Methods.runCommand, { command: 'string', cwd: 'string', timeoutMs: 'number' }) as unknown as RunCommandParams;
  if (typeof p.command !== 'string' || typeof p.cwd !== 'string') {
    throw new RpcError(ErrorCodes.invalidParams, 'invalid params: command and cwd are required');
  }
  return runner.run(p, token);
}

export function onAsk(params: unknown, deps: AskDeps & InboxDeps, token: vscode.CancellationToken): Promise<AskResult> {
  const p = need(params, Methods.ask, { question: 'string' }) as unknown as AskParams;
  const options: unknown = p.options;
  if (options !== undefined && options !== null && (!Array.isArray(options) || !options.every((o) => typeof o === 'string'))) {
    throw new RpcError(ErrorCodes.invalidParams, 'invalid params: options must be a list of strings');
  }
  return ask(p, deps, token);
}

export function onShowMessageRequest(params: unknown, deps: ApproveDeps & InboxDeps, token: vscode.CancellationToken): Promise<MessageActionItem | null> {
  const p = need(params, Methods.showMessageRequest, { message: 'string', type: 'number' }) as unknown as ShowMessageRequestParams;
  const message: unknown = p.message;
  if (typeof message !== 'string') {
    throw new RpcError(ErrorCodes.invalidParams, 'invalid params: message is required');
  }
  const actions: unknown = p.actions;
  if (actions !== undefined && actions !== null &&
    (!Array.isArray(actions) || !actions.every((a: unknown) => isObject(a) && typeof a.title === 'string'))) {
    throw new RpcError(ErrorCodes.invalidParams, 'invalid params: actions must be a list of {title}');
  }
  return showMessageRequest(p, deps, token);
}

function isTaskUpdate(p: unknown): p is TaskUpdateParams {
  return isObject(p) && typeof p.taskId === 'string' && typeof p.seq === 'number' &&
    typeof p.state === 'string' && isObject(p.event) && typeof p.event.kind === 'string';
}

function isHeatUpdate(p: unknown): p is HeatUpdateParams {
  return isObject(p) && typeof p.seq === 'number';
}

/** register wires every handler onto conn and returns what undoes it. */
export function register(conn: Connection, deps: WiringDeps): { dispose(): void }[] {
  return [
    conn.onRequest(Methods.readFile, (params) => onReadFile(params, deps.readFile)),
    conn.onRequest(Methods.references, (params) => onLocate(references, params, deps.locate)),
    conn.onRequest(Methods.definition, (params) => onLocate(definitions, params, deps.locate)),
    conn.onRequest(Methods.diagnostics, (params) => onDiagnostics(params, deps.diagnostics)),
    // agentls waits for the language servers' word on an edit: every
    // change of the folder's diagnostics is told (docs/PROTOCOL.md §4).
    deps.diagnostics.onDidChange((uris) => {
      const ours = uris.filter((u) => deps.diagnostics.inside(u)).map((u) => u.toString());
      if (ours.length > 0) {
        conn.sendNotification(Methods.didChangeDiagnostics, { uris: ours } satisfies DidChangeDiagnosticsParams);
      }
    }),
    conn.onRequest(Methods.runCommand, (params, token) => onRunCommand(params, deps.runner, token)),
    conn.onRequest(Methods.ask, (params, token) => onAsk(params, { ...deps, ...deps.ask }, token)),
    conn.onRequest(Methods.showMessageRequest, (params, token) => onShowMessageRequest(params, { ...deps, ...deps.approve }, token)),
    conn.onRequest(Methods.applyEdit, (params, token): Promise<ApplyEditResult> => applyEdit(params, deps.applyEdit, token)),
    conn.onNotification(Methods.taskUpdate, (params) => {
      if (!isTaskUpdate(params)) {
        deps.warn(`ignored a malformed ${Methods.taskUpdate}: ${JSON.stringify(params)}`);
        return;
      }
      deps.tasks.update(params, deps.folder.key);
      attributePending(deps.pending, deps.tasks, deps.folder.key);
    }),
    conn.onNotification(Methods.heatUpdate, (params) => {
      if (!isHeatUpdate(params)) {
        deps.warn(`ignored a malformed ${Methods.heatUpdate}: ${JSON.stringify(params)}`);
        return;
      }
      deps.heat.applyUpdate(params);
    }),
  ];
}
