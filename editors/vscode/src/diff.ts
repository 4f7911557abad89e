// A change in VS Code's diff editor: the texts recorded for each file of an
// edit (EditLog), served read-only under the agentls-diff: scheme, with the
// file's name and extension so the diff editor colours its language.
import * as vscode from 'vscode';
import { EditLog, EditRecord } from './edits';

export const diffScheme = 'agentls-diff';

/** diffUris are the two sides of a record: /<id>/before/<path> and /<id>/after/<path>. */
export function diffUris(r: EditRecord): { before: vscode.Uri; after: vscode.Uri } {
  const path = r.path.replace(/^\/+/, '');
  return {
    before: vscode.Uri.from({ scheme: diffScheme, path: `/${r.id}/before/${path}` }),
    after: vscode.Uri.from({ scheme: diffScheme, path: `/${r.id}/after/${path}` }),
  };
}

/** diffTitle names a diff editor's tab. */
export function diffTitle(r: EditRecord, proposed: boolean): string {
  const name = r.path.split('/').pop() ?? r.path;
  const what = proposed ? 'proposed' : r.operation === 'create' ? 'created' : r.operation === 'delete' ? 'deleted' : 'changed';
  return `${name} (agentls: ${what})`;
}

/** The recorded text a diff URI stands for, undefined for none. */
export function diffText(edits: EditLog, uri: vscode.Uri): string | undefined {
  const m = /^\/([^/]+)\/(before|after)\//.exec(uri.path);
  if (m === null) {
    return undefined;
  }
  const r = edits.get(m.at(1) ?? '');
  if (r === undefined) {
    return undefined;
  }
  return m[2] === 'before' ? r.before : r.after;
}

export class DiffContent implements vscode.TextDocumentContentProvider {
  constructor(private readonly edits: EditLog) {}

  provideTextDocumentContent(uri: vscode.Uri): string {
    return diffText(this.edits, uri) ?? '(this change is no longer kept: agentls keeps the texts of the last 200 edits of this window)';
  }
}

/** showDiff opens a recorded change in the diff editor; false when it is not kept. */
export async function showDiff(edits: EditLog, id: string, proposed = false): Promise<boolean> {
  const r = edits.get(id);
  if (r === undefined) {
    return false;
  }
  const { before, after } = diffUris(r);
  await vscode.commands.executeCommand('vscode.diff', before, after, diffTitle(r, proposed), { preview: true });
  return true;
}
