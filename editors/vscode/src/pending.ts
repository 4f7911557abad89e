// What waits on the person: a command or MCP tool to approve
// (window/showMessageRequest), a question (agent/ask), an edit proposed for
// confirmation (workspace/applyEdit in propose and review mode). Each stays
// here until it is answered, from whichever place the person answers it (a
// notification, the Tasks view, the status bar, the conversation view), or
// until agentls withdraws it ($/cancelRequest, e.g. the task stopped). A
// notification that times out or is closed answers nothing: the question
// stays, so it is never lost. Knows nothing of VS Code's UI.

export type PendingKind = 'approval' | 'question' | 'proposal';

/** A file of a proposed edit, with the recorded texts behind its diff. */
export interface ProposalFile {
  path: string;
  operation: 'create' | 'update' | 'delete' | 'rename';
  diffId?: string;
}

export interface Pending {
  id: string;
  kind: PendingKind;
  /** The folder whose agentls asks (its URI), and its name. */
  folder: string;
  folderName: string;
  /** The task and subtask that asked, when the `ask` event named them. */
  taskId?: string;
  subtaskId?: string;
  /** What is asked, as plain text: relative paths, no Markdown. */
  text: string;
  /** The same with its Markdown (code spans), for views that render it. */
  markdown: string;
  /** The answers offered; a question without options takes free text. */
  options: string[];
  /** A question as agentls asked it, to find the `ask` event that announced it. */
  asked?: string;
  /** A proposal's files. */
  files?: ProposalFile[];
  /** A proposal open in the refactor preview: answered there only. */
  reviewing: boolean;
}

/** What an answer comes to. */
export type AnswerOutcome = 'answered' | 'gone' | 'reviewing' | 'invalid';

type Listener = () => void;

/** The answer options of a proposal. */
export const proposalOptions = ['Accept', 'Reject'] as const;

/** PendingStore holds what waits on the person, oldest first. */
export class PendingStore {
  private readonly items = new Map<string, { item: Pending; answer: (value: string | null) => void; review?: () => Promise<void> }>();
  private readonly listeners = new Set<Listener>();
  private next = 1;

  onDidChange(listener: Listener): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  private changed(): void {
    for (const l of [...this.listeners]) {
      l();
    }
  }

  /**
   * add holds an item until answer or withdraw; answer is called once, with
   * one of the item's options, free text for a question without options,
   * or null (dismissed without an answer).
   */
  add(item: Omit<Pending, 'id' | 'reviewing'>, answer: (value: string | null) => void, review?: () => Promise<void>): Pending {
    const p: Pending = { ...item, id: `p${this.next++}`, reviewing: false };
    this.items.set(p.id, review !== undefined ? { item: p, answer, review } : { item: p, answer });
    this.changed();
    return p;
  }

  /**
   * answer gives an item its answer. A value that is not one of its options
   * (free text aside) is 'invalid'; an item already answered or withdrawn is
   * 'gone'; a proposal under review in the refactor preview is 'reviewing'.
   */
  answer(id: string, value: string | null): AnswerOutcome {
    const entry = this.items.get(id);
    if (entry === undefined) {
      return 'gone';
    }
    const { item } = entry;
    if (item.reviewing) {
      return 'reviewing';
    }
    if (value !== null && item.options.length > 0 && !item.options.includes(value)) {
      return 'invalid';
    }
    this.items.delete(id);
    this.changed();
    entry.answer(value);
    return 'answered';
  }

  /**
   * review opens a proposal in the refactor preview, where the person picks
   * what lands; the proposal is answered from there. 'invalid' for an item
   * that cannot be reviewed.
   */
  review(id: string): AnswerOutcome | 'started' {
    const entry = this.items.get(id);
    if (entry === undefined) {
      return 'gone';
    }
    if (entry.item.reviewing) {
      return 'reviewing';
    }
    if (entry.review === undefined) {
      return 'invalid';
    }
    void entry.review();
    return 'started';
  }

  /** withdraw drops an item agentls no longer waits for; nothing is answered. */
  withdraw(id: string): void {
    if (this.items.delete(id)) {
      this.changed();
    }
  }

  /** attribute says which task (and subtask) an item belongs to, once known. */
  attribute(id: string, taskId: string, subtaskId?: string): void {
    const entry = this.items.get(id);
    if (entry === undefined) {
      return;
    }
    entry.item.taskId = taskId;
    if (subtaskId !== undefined && subtaskId !== '') {
      entry.item.subtaskId = subtaskId;
    }
    this.changed();
  }

  /** setReviewing marks a proposal open in (or back from) the refactor preview. */
  setReviewing(id: string, reviewing: boolean): void {
    const entry = this.items.get(id);
    if (entry !== undefined && entry.item.reviewing !== reviewing) {
      entry.item.reviewing = reviewing;
      this.changed();
    }
  }

  get(id: string): Pending | undefined {
    return this.items.get(id)?.item;
  }

  /** all lists what waits, oldest first. */
  all(): Pending[] {
    return [...this.items.values()].map((e) => e.item);
  }

  /** forTask lists what a task waits on. */
  forTask(taskId: string): Pending[] {
    return this.all().filter((p) => p.taskId === taskId);
  }

  /** withdrawFolder drops what one folder's agentls asked (it stopped). */
  withdrawFolder(folder: string): void {
    let any = false;
    for (const [id, e] of this.items) {
      if (e.item.folder === folder) {
        this.items.delete(id);
        any = true;
      }
    }
    if (any) {
      this.changed();
    }
  }
}

/** pendingTitle is one line that says what waits: for rows, the status bar and pickers. */
export function pendingTitle(p: Pending): string {
  switch (p.kind) {
    case 'approval':
      return p.text;
    case 'question':
      return `Question: ${p.text}`;
    case 'proposal':
      return `Proposed: ${p.text}`;
  }
}
