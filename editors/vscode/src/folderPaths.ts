// The workspace folders as the extension names them: in messages (their
// path and name) and a file relative to its folder. Apart from folders.ts
// so the commands use them without a language client.
import * as vscode from 'vscode';
import { FolderName } from './text';

/** folderNames are the workspace folders as messages name them. */
export function folderNames(): FolderName[] {
  return (vscode.workspace.workspaceFolders ?? []).map((f) => ({ path: f.uri.fsPath, name: f.name }));
}

/** relativeTo writes uri relative to folder (/ separators), or its path outside it. */
export function relativeTo(folder: vscode.Uri, uri: vscode.Uri): string {
  const base = folder.path.endsWith('/') ? folder.path : `${folder.path}/`;
  if (uri.scheme === folder.scheme && uri.authority === folder.authority && uri.path.startsWith(base)) {
    return uri.path.slice(base.length);
  }
  return uri.scheme === 'file' ? uri.fsPath : uri.toString();
}
