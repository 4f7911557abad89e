// Answering what waits on the person (approvals of commands and MCP tools,
// questions) from the Tasks view's rows, the status bar item and the
// palette: Show What Waits for You, Answer…, Run, Always Allow, Deny and
// Dismiss Without Answering. The answer itself goes through the inbox.
import * as vscode from 'vscode';
import { Inbox } from '../inbox';
import { Pending, PendingStore } from '../pending';
import { pendingId } from './args';

/** The inbox's ways of answering, as the commands use them. */
export type Answers = Pick<Inbox, 'answer' | 'review' | 'diff' | 'prompt' | 'showPending'>;

export interface AnswerDeps {
  pending: PendingStore;
  inbox: Answers;
}

/** The actions of an approval, in the place agentls offers them. */
const approvalActions = ['Run', 'Always allow', 'Deny'];

/**
 * answerValue is the answer a command's value gives an item: an approval's
 * action by its place when agentls words it otherwise, else the value.
 */
export function answerValue(p: Pending | undefined, value: string): string {
  return p !== undefined && !p.options.includes(value) && p.kind === 'approval'
    ? p.options[approvalActions.indexOf(value)] ?? value
    : value;
}

/** answerWith is a command that answers the item it names (else the first that waits) with value. */
export function answerWith(d: AnswerDeps, value: string): (arg: unknown) => void {
  return (arg) => {
    const id = pendingId(d.pending, arg);
    if (id !== undefined) {
      d.inbox.answer(id, answerValue(d.pending.get(id), value));
    }
  };
}

/** register adds the commands that answer approvals and questions. */
export function register(d: AnswerDeps): { dispose(): void }[] {
  return [
    vscode.commands.registerCommand('agentls.showPending', async () => {
      if (!await d.inbox.showPending()) {
        await vscode.commands.executeCommand('agentls.tasks.focus');
      }
    }),
    vscode.commands.registerCommand('agentls.answer', (arg?: unknown) => {
      const id = pendingId(d.pending, arg);
      return id !== undefined ? d.inbox.prompt(id) : d.inbox.showPending();
    }),
    vscode.commands.registerCommand('agentls.approve.run', answerWith(d, 'Run')),
    vscode.commands.registerCommand('agentls.approve.always', answerWith(d, 'Always allow')),
    vscode.commands.registerCommand('agentls.approve.deny', answerWith(d, 'Deny')),
    vscode.commands.registerCommand('agentls.question.dismiss', (arg?: unknown) => {
      const id = pendingId(d.pending, arg);
      if (id !== undefined) {
        d.inbox.answer(id, null);
      }
    }),
  ];
}
