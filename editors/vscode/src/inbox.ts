// Answering what waits on the person from anywhere in VS Code: a proposal's
// notification, a quick pick for a row of the Tasks view or the status bar
// item, and the words for an answer that came too late.
import * as vscode from 'vscode';
import { EditLog } from './edits';
import { AskDeps, promptQuestion } from './handlers/ask';
import { reviewAction } from './handlers/applyEdit';
import { showDiff } from './diff';
import { AnswerOutcome, Pending, pendingTitle, PendingStore } from './pending';
import { oneLine } from './views/taskModel';

/** outcomeMessage says why an answer did not go through, undefined when it did. */
export function outcomeMessage(o: AnswerOutcome | 'started'): string | undefined {
  switch (o) {
    case 'gone':
      return 'agentls: that was already answered (or agentls no longer waits for it)';
    case 'reviewing':
      return 'agentls: that change is open in the Refactor Preview: apply or discard it there';
    case 'invalid':
      return 'agentls: that is not one of the answers offered';
    default:
      return undefined;
  }
}

export class Inbox {
  constructor(
    private readonly pending: PendingStore,
    private readonly edits: EditLog,
    private readonly ask: AskDeps,
    /** Whether the person sees the conversation view, where each proposal has its card. */
    private readonly conversationVisible: () => boolean = () => false,
  ) {}

  /** answer gives an item its answer and says so when it could not. */
  answer(id: string, value: string | null): void {
    const msg = outcomeMessage(this.pending.answer(id, value));
    if (msg !== undefined) {
      void vscode.window.showInformationMessage(msg);
    }
  }

  review(id: string): void {
    const msg = outcomeMessage(this.pending.review(id));
    if (msg !== undefined) {
      void vscode.window.showInformationMessage(msg);
    }
  }

  async diff(id: string): Promise<void> {
    if (!await showDiff(this.edits, id, this.pending.all().some((p) => p.files?.some((f) => f.diffId === id)))) {
      void vscode.window.showInformationMessage('agentls: that change is no longer kept (the texts of the last 200 edits of this window are)');
    }
  }

  /**
   * notifyProposal tells of an edit waiting for confirmation, asking in one
   * place: the conversation view's card when the person sees the view,
   * else a notification. Either answers it, and the other follows: the
   * card goes, and a notification's answer after that is dropped (VS Code
   * cannot close a notification; the status bar and the Tasks view still
   * offer what waits).
   */
  notifyProposal(p: Pending): void {
    if (this.conversationVisible()) {
      return;
    }
    const files = p.files ?? [];
    const what = files.length > 1 ? `${files.length} files: ${files.map((f) => f.path).join(', ')}` : p.text;
    void vscode.window.showInformationMessage(`agentls proposes a change: ${oneLine(what, 200)}`, reviewAction, 'Accept', 'Reject').then((pick) => {
      if (pick === undefined || this.pending.get(p.id) === undefined) {
        return; // closed, or answered elsewhere meanwhile
      }
      if (pick === reviewAction) {
        this.review(p.id);
      } else {
        this.answer(p.id, pick);
      }
    });
  }

  /** prompt asks for the answer of one item with a quick pick (or an input box). */
  async prompt(id: string): Promise<void> {
    const p = this.pending.get(id);
    if (p === undefined) {
      void vscode.window.showInformationMessage(outcomeMessage('gone') ?? '');
      return;
    }
    if (p.kind === 'question') {
      await promptQuestion(id, this.pending, this.ask);
      return;
    }
    if (p.kind === 'approval') {
      const pick = await vscode.window.showQuickPick(p.options, { title: `agentls: ${oneLine(p.text, 120)}`, placeHolder: p.text, ignoreFocusOut: true });
      if (pick !== undefined) {
        this.answer(id, pick);
      }
      return;
    }
    if (p.reviewing) {
      void vscode.window.showInformationMessage(outcomeMessage('reviewing') ?? '');
      return;
    }
    const items: (vscode.QuickPickItem & { run: () => unknown })[] = [
      { label: '$(check) Accept', description: 'apply the whole change', run: () => { this.answer(id, 'Accept'); } },
      { label: '$(close) Reject', description: 'tell the agent it was not applied', run: () => { this.answer(id, 'Reject'); } },
      { label: '$(preview) Review…', description: 'pick what lands in the Refactor Preview', run: () => { this.review(id); } },
      ...(p.files ?? []).filter((f) => f.diffId !== undefined).map((f) => ({
        label: `$(diff) ${f.path}`,
        description: `show the proposed ${f.operation}`,
        run: () => this.diff(f.diffId ?? ''),
      })),
    ];
    const pick = await vscode.window.showQuickPick(items, { title: `agentls proposes: ${oneLine(p.text, 120)}`, ignoreFocusOut: true });
    await pick?.run();
  }

  /** showPending is the status bar's click: what waits, then its answer. */
  async showPending(): Promise<boolean> {
    const all = this.pending.all();
    if (all.length === 0) {
      return false;
    }
    const only = all.length === 1 ? all.at(0) : undefined;
    if (only !== undefined) {
      await this.prompt(only.id);
      return true;
    }
    const pick = await vscode.window.showQuickPick(all.map((p) => ({
      label: oneLine(pendingTitle(p), 120),
      description: p.folderName,
      id: p.id,
    })), { title: `agentls: ${all.length} waiting for you`, placeHolder: 'Pick one to answer' });
    if (pick !== undefined) {
      await this.prompt(pick.id);
    }
    return true;
  }
}
