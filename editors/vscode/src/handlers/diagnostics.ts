// agent/diagnostics: the diagnostics VS Code shows (docs/PROTOCOL.md §4),
// those of every language server and linter, as languages.getDiagnostics
// gives them, so that a worker hears of the errors its edit made. VS Code
// answers at once with what it has: agentls does the waiting, told by
// agent/didChangeDiagnostics (sent on languages.onDidChangeDiagnostics,
// wiring.ts) when they change.
import type * as vscode from 'vscode';
import { Diagnostic, DiagnosticsResult, DocumentDiagnostics } from '../protocol';
import { RangeLike } from './locate';

/** A diagnostic as VS Code's API gives it (vscode.Diagnostic is one). */
export interface DiagnosticLike {
  readonly range: RangeLike;
  /** VS Code's severity: 0 error, 1 warning, 2 information, 3 hint. */
  readonly severity: number;
  readonly message: string;
  readonly source?: string;
  readonly code?: string | number | { readonly value: string | number; readonly target?: unknown };
}

/** The parts of the vscode API the handler uses, injectable for tests. */
export interface DiagnosticsDeps {
  /** of is languages.getDiagnostics(uri): one document's. */
  of(uri: vscode.Uri): readonly DiagnosticLike[];
  /** all is languages.getDiagnostics(): every document's that has any. */
  all(): readonly (readonly [vscode.Uri, readonly DiagnosticLike[]])[];
  /** inside reports whether uri is a document of this folder. */
  inside(uri: vscode.Uri): boolean;
  parseUri(uri: string): vscode.Uri;
  /** onDidChange is languages.onDidChangeDiagnostics: the documents whose diagnostics changed. */
  onDidChange(listener: (uris: readonly vscode.Uri[]) => void): { dispose(): void };
}

/** Thrown for a request the handler cannot read; the message says why. */
export class DiagnosticsError extends Error {}

/** toProtocol turns VS Code's diagnostic into LSP's: severities count from 1 there. */
export function toProtocol(d: DiagnosticLike): Diagnostic {
  const out: Diagnostic = {
    range: { start: { line: d.range.start.line, character: d.range.start.character }, end: { line: d.range.end.line, character: d.range.end.character } },
    severity: (Number.isInteger(d.severity) && d.severity >= 0 && d.severity <= 3 ? d.severity + 1 : 1) as Diagnostic['severity'],
    message: d.message,
  };
  const code = typeof d.code === 'object' ? d.code.value : d.code;
  if (typeof code === 'string' || typeof code === 'number') {
    out.code = String(code);
  }
  if (typeof d.source === 'string' && d.source !== '') {
    out.source = d.source;
  }
  return out;
}

/**
 * diagnostics answers agent/diagnostics: the diagnostics of the documents
 * params.uris names (a document outside the folder, or without any, left
 * out), else of every document of the folder that has some.
 */
export function diagnostics(params: unknown, deps: DiagnosticsDeps): DiagnosticsResult {
  if (params !== undefined && params !== null && (typeof params !== 'object' || Array.isArray(params))) {
    throw new DiagnosticsError('invalid params: agent/diagnostics takes {uris?}');
  }
  const uris: unknown = (params as { uris?: unknown } | null | undefined)?.uris;
  if (uris !== undefined && uris !== null && (!Array.isArray(uris) || !uris.every((u) => typeof u === 'string'))) {
    throw new DiagnosticsError('invalid params: uris must be a list of URIs');
  }
  const items: DocumentDiagnostics[] = [];
  const add = (uri: string, ds: readonly DiagnosticLike[]): void => {
    if (ds.length > 0) {
      items.push({ uri, diagnostics: ds.map(toProtocol) });
    }
  };
  if (Array.isArray(uris) && uris.length > 0) {
    for (const u of uris) {
      let uri: vscode.Uri;
      try {
        uri = deps.parseUri(u);
      } catch {
        continue; // not a URI: no document has diagnostics there
      }
      if (deps.inside(uri)) {
        add(u, deps.of(uri));
      }
    }
  } else {
    for (const [uri, ds] of deps.all()) {
      if (deps.inside(uri)) {
        add(uri.toString(), ds);
      }
    }
  }
  return { items };
}
