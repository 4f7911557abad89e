// workspace/applyEdit: agentls's edits, applied through VS Code. Each file's
// text before and after is recorded (EditLog) for the diff editor. An edit
// that needs confirmation (propose and review mode: annotations with
// needsConfirmation) waits as a proposal (PendingStore) until the person
// accepts it, rejects it, or reviews it in the refactor preview, picking
// what lands. After an edit lands, each file it touched is saved, unless it
// had unsaved changes of the person's before the edit: those stay unsaved.
import type * as vscode from 'vscode';
import { EditLog, EditRecord } from '../edits';
import { Pending, PendingStore, proposalOptions, ProposalFile } from '../pending';
import { attributePending } from '../attribute';
import { TaskStore } from '../views/taskModel';
import { applyTextEdits, EditError, plainText, TextEdit } from '../text';

/** The LSP WorkspaceEdit, as agentls sends it (docs/PROTOCOL.md §4). */
export interface LspWorkspaceEdit {
  changes?: Record<string, TextEdit[]>;
  documentChanges?: LspDocumentChange[];
  changeAnnotations?: Record<string, { label: string; needsConfirmation?: boolean; description?: string }>;
}

export type LspDocumentChange =
  | { textDocument: { uri: string; version: number | null }; edits: (TextEdit & { annotationId?: string })[] }
  | { kind: 'create'; uri: string; options?: unknown; annotationId?: string }
  | { kind: 'delete'; uri: string; options?: unknown; annotationId?: string }
  | { kind: 'rename'; oldUri: string; newUri: string; options?: unknown; annotationId?: string };

export interface ApplyEditParams {
  label?: string;
  edit: LspWorkspaceEdit;
}

export interface ApplyEditResult {
  applied: boolean;
  failureReason?: string;
}

/** What a document open in VS Code tells the handler. */
export interface OpenDocument {
  getText(): string;
  readonly isDirty: boolean;
  readonly version: number;
}

/** The parts of VS Code the handler uses, injectable for tests. */
export interface ApplyEditDeps {
  /** The folder whose agentls sends the edits. */
  folder: { key: string; name: string; fsPath: string };
  pending: PendingStore;
  edits: EditLog;
  tasks: TaskStore;
  parseUri(uri: string): vscode.Uri;
  /** Workspace-relative path of uri (its path when outside the folder). */
  relative(uri: vscode.Uri): string;
  document(uri: vscode.Uri): OpenDocument | undefined;
  /** The file's text on disk, undefined when there is none. */
  readDisk(uri: vscode.Uri): Promise<string | undefined>;
  convert(edit: LspWorkspaceEdit): Promise<vscode.WorkspaceEdit>;
  apply(edit: vscode.WorkspaceEdit): Thenable<boolean>;
  /**
   * open is workspace.openTextDocument: a document it opens stays open
   * (VS Code keeps it a few minutes, whether or not an editor shows it).
   */
  open(uri: vscode.Uri): Thenable<unknown>;
  save(uri: vscode.Uri): Thenable<boolean>;
  /** Tells the person of a proposal (a notification); its answers go to the store. */
  propose(p: Pending): void;
  /** Tells the person something went wrong that agentls is not told (a save that failed). */
  warn(message: string): void;
}

interface FileEdit {
  uri: vscode.Uri;
  key: string;
  operation: ProposalFile['operation'];
  edits: TextEdit[];
  /** Set when the file was open with unsaved changes before the edit. */
  wasDirty: boolean;
  before: string;
  record?: EditRecord;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** needsConfirmation reports whether the edit asks the person first. */
export function needsConfirmation(edit: LspWorkspaceEdit): boolean {
  return Object.values(edit.changeAnnotations ?? {}).some((a) => a.needsConfirmation === true);
}

/** withoutConfirmation is edit without its annotations: applied as it is, with no preview. */
export function withoutConfirmation(edit: LspWorkspaceEdit): LspWorkspaceEdit {
  const out: LspWorkspaceEdit = {};
  if (edit.changes !== undefined) {
    out.changes = edit.changes;
  }
  if (edit.documentChanges !== undefined) {
    out.documentChanges = edit.documentChanges.map((c) => {
      if ('textDocument' in c) {
        return { textDocument: c.textDocument, edits: c.edits.map((e) => ({ range: e.range, newText: e.newText })) };
      }
      const copy = { ...c };
      delete copy.annotationId;
      return copy;
    });
  }
  return out;
}

/** The files an edit touches, in order, with their text edits. */
function filesOf(edit: LspWorkspaceEdit, deps: ApplyEditDeps): FileEdit[] {
  const files = new Map<string, FileEdit>();
  const file = (uri: string, op: FileEdit['operation']): FileEdit => {
    const u = deps.parseUri(uri);
    const key = u.toString();
    let f = files.get(key);
    if (f === undefined) {
      f = { uri: u, key, operation: op, edits: [], wasDirty: false, before: '' };
      files.set(key, f);
    } else if (op === 'delete') {
      f.operation = 'delete';
    }
    return f;
  };
  for (const c of edit.documentChanges ?? []) {
    if ('textDocument' in c) {
      file(c.textDocument.uri, 'update').edits.push(...c.edits);
    } else if (c.kind === 'create') {
      file(c.uri, 'create');
    } else if (c.kind === 'delete') {
      file(c.uri, 'delete');
    } else {
      file(c.newUri, 'rename');
    }
  }
  for (const [uri, edits] of Object.entries(edit.changes ?? {})) {
    file(uri, 'update').edits.push(...edits);
  }
  return [...files.values()];
}

function validEdit(e: unknown): boolean {
  return isObject(e) && (e.changes === undefined || isObject(e.changes)) &&
    (e.documentChanges === undefined || Array.isArray(e.documentChanges));
}

/** A proposal's notification: what it says, and the actions it offers. */
export const reviewAction = 'Review…';

/** One review in the refactor preview at a time: VS Code previews one edit. */
let reviewOpen = false;

/**
 * applyEdit answers workspace/applyEdit. It never throws for an edit it
 * cannot apply: the answer says why, for agentls to tell the model.
 */
export async function applyEdit(params: unknown, deps: ApplyEditDeps, token: vscode.CancellationToken): Promise<ApplyEditResult> {
  if (!isObject(params) || !validEdit(params.edit)) {
    return { applied: false, failureReason: 'workspace/applyEdit: edit must be a WorkspaceEdit' };
  }
  const p = params as unknown as ApplyEditParams;
  const label = typeof p.label === 'string' && p.label !== '' ? p.label : 'agentls: edit';
  const files = filesOf(p.edit, deps);

  // The version check VS Code's own handler makes: an edit for a version of
  // a document that is not the open one is refused.
  for (const c of p.edit.documentChanges ?? []) {
    if ('textDocument' in c && typeof c.textDocument.version === 'number' && c.textDocument.version >= 0) {
      const doc = deps.document(deps.parseUri(c.textDocument.uri));
      if (doc !== undefined && doc.version !== c.textDocument.version) {
        return { applied: false, failureReason: `${deps.relative(deps.parseUri(c.textDocument.uri))} changed in the editor (version ${doc.version}, the edit is for ${c.textDocument.version})` };
      }
    }
  }

  // What each file holds now, and what it will hold.
  for (const f of files) {
    const doc = deps.document(f.uri);
    f.wasDirty = doc?.isDirty ?? false;
    f.before = f.operation === 'create' ? '' : doc !== undefined ? doc.getText() : (await deps.readDisk(f.uri)) ?? '';
    let after = f.before;
    if (f.operation !== 'delete') {
      try {
        after = applyTextEdits(f.before, f.edits);
      } catch (e) {
        if (!(e instanceof EditError)) {
          throw e;
        }
        return { applied: false, failureReason: `${deps.relative(f.uri)}: ${e.message}` };
      }
    } else {
      after = '';
    }
    f.record = deps.edits.add({ folder: deps.folder.key, path: deps.relative(f.uri), operation: f.operation, label, before: f.before, after });
  }

  if (!needsConfirmation(p.edit)) {
    return land(p.edit, files, deps);
  }
  return propose(p.edit, label, files, deps, token);
}

/** The most files of one edit held open for the language servers (holdOpen). */
export const HOLD_OPEN = 20;

/**
 * holdOpen opens, before the edit lands, the files it changes that are not
 * open in VS Code (at most HOLD_OPEN). A language server checks a document
 * while it is open in the editor, and the background document that
 * workspace.applyEdit opens for a file closes as soon as it is saved: the
 * server was told of the change and then of the close, often before it had
 * checked the change (gopls then drops what it found; tsserver and pyright
 * check open files only), so agentls, waiting for the diagnostics of its
 * edit, heard none. Opened here, the document stays open after the save and
 * the servers check the edit. A file the edit creates does not exist yet and
 * is not held; one that cannot be opened is left as it is.
 */
async function holdOpen(files: FileEdit[], deps: ApplyEditDeps): Promise<void> {
  let held = 0;
  for (const f of files) {
    if (held >= HOLD_OPEN) {
      return;
    }
    if (f.operation !== 'update' || deps.document(f.uri) !== undefined) {
      continue;
    }
    held++;
    try {
      await deps.open(f.uri);
    } catch {
      // Not a text document VS Code opens (binary, too large): no server checks it.
    }
  }
}

/** land applies edit as it is (with its annotations when reviewing) and saves what it may. */
async function land(edit: LspWorkspaceEdit, files: FileEdit[], deps: ApplyEditDeps): Promise<ApplyEditResult> {
  await holdOpen(files, deps);
  let ok: boolean;
  try {
    ok = await deps.apply(await deps.convert(edit));
  } catch (e) {
    return { applied: false, failureReason: `VS Code could not apply the edit: ${e instanceof Error ? e.message : String(e)}` };
  }
  if (!ok) {
    return { applied: false, failureReason: 'VS Code did not apply the edit' };
  }
  await settle(files, deps);
  return { applied: true };
}

/**
 * settle records what landed in each file and saves the files the edit
 * touched, but those that held unsaved changes of the person's before it.
 */
async function settle(files: FileEdit[], deps: ApplyEditDeps): Promise<void> {
  for (const f of files) {
    const doc = deps.document(f.uri);
    if (f.record !== undefined) {
      deps.edits.landed(f.record.id, f.operation === 'delete' ? '' : doc?.getText() ?? f.record.after);
    }
    if (f.operation === 'delete' || f.wasDirty || doc === undefined || !doc.isDirty) {
      continue;
    }
    try {
      if (!await deps.save(f.uri)) {
        deps.warn(`agentls: ${deps.relative(f.uri)} was changed but could not be saved`);
      }
    } catch (e) {
      deps.warn(`agentls: ${deps.relative(f.uri)} was changed but could not be saved: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}

/** conflict names a file that changed since the proposal was made, if one did. */
async function conflict(files: FileEdit[], deps: ApplyEditDeps): Promise<string | undefined> {
  for (const f of files) {
    const doc = deps.document(f.uri);
    const now = doc !== undefined ? doc.getText() : await deps.readDisk(f.uri);
    if (f.operation === 'create' ? now !== undefined && now !== '' : (now ?? '') !== f.before) {
      return deps.relative(f.uri);
    }
  }
  return undefined;
}

function propose(edit: LspWorkspaceEdit, label: string, files: FileEdit[], deps: ApplyEditDeps, token: vscode.CancellationToken): Promise<ApplyEditResult> {
  return new Promise<ApplyEditResult>((resolve) => {
    const state: { done: boolean; cancel?: { dispose(): void } } = { done: false };
    const finish = (r: ApplyEditResult): void => {
      if (!state.done) {
        state.done = true;
        state.cancel?.dispose();
        resolve(r);
      }
    };
    const what = label.replace(/^agentls: /, '');
    const item: Omit<Pending, 'id' | 'reviewing'> = {
      kind: 'proposal',
      folder: deps.folder.key,
      folderName: deps.folder.name,
      text: plainText(what, [{ path: deps.folder.fsPath, name: deps.folder.name }]),
      markdown: what,
      options: [...proposalOptions],
      files: files.map((f) => {
        const pf: ProposalFile = { path: deps.relative(f.uri), operation: f.operation };
        if (f.record !== undefined) {
          pf.diffId = f.record.id;
        }
        return pf;
      }),
    };
    const pending = deps.pending.add(item, (value) => {
      if (value !== 'Accept') {
        finish({ applied: false, failureReason: 'rejected by the user' });
        return;
      }
      void (async () => {
        const changed = await conflict(files, deps);
        if (changed !== undefined) {
          deps.warn(`agentls: ${changed} changed while the proposal waited: not applied`);
          finish({ applied: false, failureReason: `${changed} changed in the editor while the proposal waited; read it again` });
          return;
        }
        finish(await land(withoutConfirmation(edit), files, deps));
      })();
    }, async () => {
      if (reviewOpen) {
        deps.warn('agentls: another proposal is open in the Refactor Preview: apply or discard it first');
        return;
      }
      reviewOpen = true;
      deps.pending.setReviewing(pending.id, true);
      try {
        // With its annotations: VS Code opens the refactor preview, where
        // the person ticks what lands (agentls reads back what did).
        const r = await land(edit, files, deps);
        finish(r.applied ? r : { applied: false, failureReason: 'rejected by the user in the refactor preview' });
      } finally {
        reviewOpen = false;
        deps.pending.setReviewing(pending.id, false);
        deps.pending.withdraw(pending.id);
      }
    });
    state.cancel = token.onCancellationRequested(() => {
      deps.pending.withdraw(pending.id);
      finish({ applied: false, failureReason: 'cancelled' });
    });
    if (token.isCancellationRequested) {
      deps.pending.withdraw(pending.id);
      finish({ applied: false, failureReason: 'cancelled' });
      return;
    }
    attributePending(deps.pending, deps.tasks, deps.folder.key);
    deps.propose(pending);
  });
}
