// agent/references and agent/definition: the code graph's questions to the
// language servers VS Code runs (docs/PROTOCOL.md §4), answered with VS
// Code's own reference and definition providers
// (vscode.executeReferenceProvider, vscode.executeDefinitionProvider), so
// whatever extension serves the document (Go, Python, Rust, TypeScript…)
// answers. null when none answers: agentls then answers from its graph.
import type * as vscode from 'vscode';
import { Location, TextDocumentPositionParams } from '../protocol';

/** A range as VS Code's providers give it (vscode.Range is one). */
export interface RangeLike {
  readonly start: { readonly line: number; readonly character: number };
  readonly end: { readonly line: number; readonly character: number };
}

/** A place as VS Code's providers give it: a Location, or a LocationLink. */
export interface PlaceLike {
  uri?: vscode.Uri;
  range?: RangeLike;
  targetUri?: vscode.Uri;
  targetRange?: RangeLike;
  targetSelectionRange?: RangeLike;
}

/** The parts of the vscode API the handlers use, injectable for tests. */
export interface LocateDeps {
  /** references runs vscode.executeReferenceProvider at a place of a document. */
  references(uri: vscode.Uri, line: number, character: number): Thenable<readonly PlaceLike[] | undefined>;
  /** definitions runs vscode.executeDefinitionProvider there. */
  definitions(uri: vscode.Uri, line: number, character: number): Thenable<readonly PlaceLike[] | undefined>;
  parseUri(uri: string): vscode.Uri;
}

/** Thrown for a request the handlers cannot read; the message says why. */
export class LocateError extends Error {}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** place reads the document and position of a request. */
function place(params: unknown, deps: LocateDeps): { uri: vscode.Uri; line: number; character: number } {
  const p = params as Partial<TextDocumentPositionParams> | undefined;
  if (!isObject(p) || !isObject(p.textDocument) || typeof p.textDocument.uri !== 'string') {
    throw new LocateError('invalid params: textDocument.uri is required');
  }
  const pos = p.position;
  if (!isObject(pos) || !Number.isInteger(pos.line) || !Number.isInteger(pos.character) || pos.line < 0 || pos.character < 0) {
    throw new LocateError('invalid params: position needs a line and a character, whole numbers from 0');
  }
  let uri: vscode.Uri;
  try {
    uri = deps.parseUri(p.textDocument.uri);
  } catch (e) {
    throw new LocateError(`invalid params: textDocument.uri ${JSON.stringify(p.textDocument.uri)} is not a URI: ${String(e)}`);
  }
  return { uri, line: pos.line, character: pos.character };
}

function toRange(r: RangeLike): Location['range'] {
  return { start: { line: r.start.line, character: r.start.character }, end: { line: r.end.line, character: r.end.character } };
}

/** locations turns VS Code's places into the protocol's, a link into its target's name. */
export function locations(places: readonly PlaceLike[] | undefined): Location[] {
  const out: Location[] = [];
  for (const p of places ?? []) {
    if (p.uri !== undefined && p.range !== undefined) {
      out.push({ uri: p.uri.toString(), range: toRange(p.range) });
    } else if (p.targetUri !== undefined) {
      const r = p.targetSelectionRange ?? p.targetRange;
      if (r !== undefined) {
        out.push({ uri: p.targetUri.toString(), range: toRange(r) });
      }
    }
  }
  return out;
}

/**
 * references answers agent/references: every place the provider names, the
 * declaration included (VS Code asks its providers so), or null when no
 * provider named any (none serves the document).
 */
export async function references(params: unknown, deps: LocateDeps): Promise<Location[] | null> {
  const at = place(params, deps);
  const found = locations(await deps.references(at.uri, at.line, at.character));
  return found.length > 0 ? found : null;
}

/** definitions answers agent/definition: where the name is defined, or null when no provider says. */
export async function definitions(params: unknown, deps: LocateDeps): Promise<Location[] | null> {
  const at = place(params, deps);
  const found = locations(await deps.definitions(at.uri, at.line, at.character));
  return found.length > 0 ? found : null;
}
