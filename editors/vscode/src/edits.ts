// The texts behind each file of each edit agentls sent (workspace/applyEdit):
// before the edit, and after it (proposed, then what landed), so that a
// change can be opened in VS Code's diff editor. Bounded: the oldest records
// go first past maxRecords or maxChars.

export interface EditRecord {
  id: string;
  /** The folder whose agentls sent the edit (its URI). */
  folder: string;
  /** Workspace-relative path, / separators. */
  path: string;
  operation: 'create' | 'update' | 'delete' | 'rename';
  /** The edit's label, e.g. "agentls: update main.go". */
  label: string;
  before: string;
  after: string;
}

export const maxRecords = 200;
export const maxChars = 32 << 20;

export class EditLog {
  private readonly records = new Map<string, EditRecord>();
  private chars = 0;
  private next = 1;

  constructor(private readonly limits = { records: maxRecords, chars: maxChars }) {}

  add(r: Omit<EditRecord, 'id'>): EditRecord {
    const rec: EditRecord = { ...r, id: `e${this.next++}` };
    this.records.set(rec.id, rec);
    this.chars += rec.before.length + rec.after.length;
    for (const [id, old] of this.records) {
      if (this.records.size <= 1 || (this.records.size <= this.limits.records && this.chars <= this.limits.chars)) {
        break;
      }
      this.records.delete(id);
      this.chars -= old.before.length + old.after.length;
    }
    return rec;
  }

  /** landed replaces a record's after text with what the file holds once applied. */
  landed(id: string, after: string): void {
    const r = this.records.get(id);
    if (r !== undefined) {
      this.chars += after.length - r.after.length;
      r.after = after;
    }
  }

  get(id: string): EditRecord | undefined {
    return this.records.get(id);
  }

  /** latest is the newest record of path in folder. */
  latest(folder: string, path: string): EditRecord | undefined {
    let found: EditRecord | undefined;
    for (const r of this.records.values()) {
      if (r.folder === folder && r.path === path) {
        found = r;
      }
    }
    return found;
  }
}
