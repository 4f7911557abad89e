// agent/readFile: the open document's text (unsaved edits included), else
// the file as VS Code's file system has it.
import * as vscode from 'vscode';
import { ReadFileParams, ReadFileResult } from '../protocol';

/** The parts of the vscode API the handler uses, injectable for tests. */
export interface ReadFileDeps {
  textDocuments(): readonly vscode.TextDocument[];
  readFile(uri: vscode.Uri): Thenable<Uint8Array>;
  /** The workspace root, for a request that only names a relative path. */
  root(): vscode.Uri | undefined;
}

export function defaultReadFileDeps(): ReadFileDeps {
  return {
    textDocuments: () => vscode.workspace.textDocuments,
    readFile: (uri) => vscode.workspace.fs.readFile(uri),
    root: () => vscode.workspace.workspaceFolders?.[0]?.uri,
  };
}

/** Thrown for a request the handler cannot answer; the message says why. */
export class ReadFileError extends Error {}

/** targetUri is the file a request names: its uri, else its path under the root. */
export function targetUri(params: ReadFileParams, root: vscode.Uri | undefined): vscode.Uri {
  if (typeof params.uri === 'string' && params.uri !== '') {
    try {
      return vscode.Uri.parse(params.uri, true);
    } catch (e) {
      throw new ReadFileError(`uri ${JSON.stringify(params.uri)} is not a URI: ${String(e)}`);
    }
  }
  if (typeof params.path !== 'string' || params.path === '') {
    throw new ReadFileError('neither uri nor path given');
  }
  if (root === undefined) {
    throw new ReadFileError(`no workspace folder to resolve ${params.path} against`);
  }
  return vscode.Uri.joinPath(root, ...params.path.split('/'));
}

/** sameFile compares two file URIs as VS Code does for documents. */
function sameFile(a: vscode.Uri, b: vscode.Uri): boolean {
  return a.scheme === b.scheme && a.authority === b.authority && a.path === b.path;
}

export async function readFile(params: ReadFileParams, deps: ReadFileDeps): Promise<ReadFileResult> {
  const uri = targetUri(params, deps.root());
  const open = deps.textDocuments().find((d) => sameFile(d.uri, uri));
  if (open !== undefined) {
    return { content: open.getText() };
  }
  let bytes: Uint8Array;
  try {
    bytes = await deps.readFile(uri);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw new ReadFileError(`cannot read ${params.path || uri.toString()}: ${why}`);
  }
  return { content: new TextDecoder('utf-8').decode(bytes) };
}
