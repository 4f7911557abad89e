// Hand-written fakes of what the handlers ask of VS Code: its open
// documents and the disk behind them, and its applyEdit (with the refactor
// preview's answer for edits that need confirmation).
import * as vscode from 'vscode';
import { EditLog } from '../../src/edits';
import { ApplyEditDeps, LspWorkspaceEdit } from '../../src/handlers/applyEdit';
import { Pending, PendingStore } from '../../src/pending';
import { applyTextEdits } from '../../src/text';
import { TaskStore } from '../../src/views/taskModel';

export interface FakeDoc {
  text: string;
  isDirty: boolean;
  version: number;
}

/** FakeEditor holds open documents over a disk, as VS Code does. */
export class FakeEditor {
  readonly docs = new Map<string, FakeDoc>();
  readonly disk = new Map<string, string>();
  readonly saved: string[] = [];
  readonly applied: LspWorkspaceEdit[] = [];
  readonly proposals: Pending[] = [];
  readonly warnings: string[] = [];
  /** The files deps.open opened, each with how many edits had been applied then. */
  readonly opened: { rel: string; appliedBefore: number }[] = [];
  /** Files deps.open fails for (a binary file VS Code does not open). */
  readonly unopenable = new Set<string>();
  /** What the refactor preview answers for an edit that needs confirmation. */
  preview: 'apply' | 'discard' = 'apply';

  constructor(readonly root = '/ws') {}

  uri(rel: string): string {
    return vscode.Uri.file(`${this.root}/${rel}`).toString();
  }

  /** open puts a document in the editor; dirty text differs from the disk. */
  open(rel: string, text: string, dirty = false): void {
    const key = this.uri(rel);
    if (!dirty) {
      this.disk.set(key, text);
    }
    this.docs.set(key, { text, isDirty: dirty, version: 1 });
  }

  text(rel: string): string | undefined {
    const key = this.uri(rel);
    return this.docs.get(key)?.text ?? this.disk.get(key);
  }

  private apply(edit: LspWorkspaceEdit): boolean {
    const needs = Object.values(edit.changeAnnotations ?? {}).some((a) => a.needsConfirmation === true);
    if (needs && this.preview === 'discard') {
      return false;
    }
    this.applied.push(edit);
    const doc = (uri: string): FakeDoc => {
      let d = this.docs.get(uri);
      if (d === undefined) {
        d = { text: this.disk.get(uri) ?? '', isDirty: false, version: 1 };
        this.docs.set(uri, d);
      }
      return d;
    };
    const change = (uri: string, edits: { range: { start: { line: number; character: number }; end: { line: number; character: number } }; newText: string }[]): void => {
      const d = doc(uri);
      d.text = applyTextEdits(d.text, edits);
      d.isDirty = d.text !== (this.disk.get(uri) ?? '');
      d.version++;
    };
    for (const c of edit.documentChanges ?? []) {
      if ('textDocument' in c) {
        change(c.textDocument.uri, c.edits);
      } else if (c.kind === 'create') {
        this.disk.set(c.uri, '');
        doc(c.uri);
      } else if (c.kind === 'delete') {
        this.disk.delete(c.uri);
        this.docs.delete(c.uri);
      }
    }
    for (const [uri, edits] of Object.entries(edit.changes ?? {})) {
      change(uri, edits);
    }
    return true;
  }

  /** deps are the applyEdit handler's, over this editor. */
  deps(o: { pending: PendingStore; edits?: EditLog; tasks?: TaskStore; folder?: string }): ApplyEditDeps {
    const folder = o.folder ?? vscode.Uri.file(this.root).toString();
    return {
      folder: { key: folder, name: this.root.split('/').pop() ?? '', fsPath: this.root },
      pending: o.pending,
      edits: o.edits ?? new EditLog(),
      tasks: o.tasks ?? new TaskStore(),
      parseUri: (u) => vscode.Uri.parse(u, true),
      relative: (uri) => uri.path.startsWith(`${this.root}/`) ? uri.path.slice(this.root.length + 1) : uri.path,
      document: (uri) => {
        const d = this.docs.get(uri.toString());
        return d !== undefined ? { getText: () => d.text, isDirty: d.isDirty, version: d.version } : undefined;
      },
      readDisk: (uri) => Promise.resolve(this.disk.get(uri.toString())),
      convert: (edit) => Promise.resolve(edit as unknown as vscode.WorkspaceEdit),
      apply: (edit) => Promise.resolve(this.apply(edit as unknown as LspWorkspaceEdit)),
      open: (uri) => {
        const key = uri.toString();
        const rel = key.slice(key.indexOf(this.root) + this.root.length + 1);
        const text = this.disk.get(key);
        if (text === undefined || this.unopenable.has(rel)) {
          return Promise.reject(new Error(`cannot open ${rel}`));
        }
        this.opened.push({ rel, appliedBefore: this.applied.length });
        if (!this.docs.has(key)) {
          this.docs.set(key, { text, isDirty: false, version: 1 });
        }
        return Promise.resolve();
      },
      save: (uri) => {
        const key = uri.toString();
        const d = this.docs.get(key);
        if (d === undefined) {
          return Promise.resolve(false);
        }
        this.disk.set(key, d.text);
        d.isDirty = false;
        this.saved.push(key.slice(key.indexOf(this.root) + this.root.length + 1));
        return Promise.resolve(true);
      },
      propose: (p) => {
        this.proposals.push(p);
      },
      warn: (m) => {
        this.warnings.push(m);
      },
    };
  }
}

/** until polls check (every 5 ms) until it holds, or fails after ms. */
export async function until(what: string, check: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}
