// Proposed edits and the changes a task made: Accept Change, Reject Change,
// Review in the Refactor Preview…, Show Proposed Diff on a proposal's row,
// and Show Change on a change's row (the diff recorded in this window, else
// the unified diff agentls reported).
import * as vscode from 'vscode';
import { EditLog } from '../edits';
import { TaskStore } from '../views/taskModel';
import { answerWith, AnswerDeps } from './approvals';
import { nodeOf, pendingId } from './args';

export interface ProposalDeps extends AnswerDeps {
  tasks: TaskStore;
  edits: EditLog;
}

/** register adds the commands of proposals and changes. */
export function register(d: ProposalDeps): { dispose(): void }[] {
  return [
    vscode.commands.registerCommand('agentls.proposal.accept', answerWith(d, 'Accept')),
    vscode.commands.registerCommand('agentls.proposal.reject', answerWith(d, 'Reject')),
    vscode.commands.registerCommand('agentls.proposal.review', (arg?: unknown) => {
      const id = pendingId(d.pending, arg);
      if (id !== undefined) {
        d.inbox.review(id);
      }
    }),
    vscode.commands.registerCommand('agentls.proposal.diff', async (arg?: unknown) => {
      const id = pendingId(d.pending, arg);
      const files = (id !== undefined ? d.pending.get(id)?.files : undefined) ?? [];
      const f = files.length <= 1 ? files[0] : (await vscode.window.showQuickPick(files.map((x) => ({ label: x.path, description: x.operation, f: x })), { title: 'agentls: which file?' }))?.f;
      if (f?.diffId !== undefined) {
        await d.inbox.diff(f.diffId);
      }
    }),
    vscode.commands.registerCommand('agentls.showChange', async (arg?: unknown) => {
      const n = nodeOf(arg);
      if (n?.kind !== 'change') {
        return;
      }
      const t = d.tasks.get(n.taskId);
      const c = t?.changes[n.index];
      if (t === undefined || c === undefined) {
        return;
      }
      const id = d.edits.latest(t.folder, c.path)?.id;
      if (id !== undefined) {
        await d.inbox.diff(id);
        return;
      }
      // Not kept in this window: the unified diff agentls reported.
      const doc = await vscode.workspace.openTextDocument({ language: 'diff', content: c.diff ?? '' });
      await vscode.window.showTextDocument(doc, { preview: true });
    }),
  ];
}
