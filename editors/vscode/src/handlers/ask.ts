// What agentls asks the person: agent/ask (a question, with options or
// free text) and window/showMessageRequest (an approval: Run / Always allow
// / Deny). Each waits in the PendingStore until answered, wherever the
// person answers it. A question opens a quick pick (or an input box) at
// once; an approval shows a notification. Closing either, or a notification
// timing out, answers nothing: the question stays in the Tasks view, the
// status bar and the conversation view until it is answered, dismissed
// there, or withdrawn by agentls.
import * as vscode from 'vscode';
import { attributePending } from '../attribute';
import { PendingStore } from '../pending';
import { AskParams, AskResult, MessageActionItem, ShowMessageRequestParams } from '../protocol';
import { FolderName, plainText, relativePaths } from '../text';
import { TaskStore } from '../views/taskModel';

/** The item of a question's quick pick that dismisses it without an answer. */
export const dismissItem = '$(circle-slash) Dismiss without answering';

/** The folder whose agentls asks, and the stores its questions go to. */
export interface InboxDeps {
  folder: { key: string; name: string; fsPath: string };
  pending: PendingStore;
  tasks: TaskStore;
  /** Every workspace folder, to write paths relative in messages. */
  folders(): FolderName[];
}

export interface AskDeps {
  showQuickPick(items: string[], options: vscode.QuickPickOptions, token: vscode.CancellationToken): Thenable<string | undefined>;
  showInputBox(options: vscode.InputBoxOptions, token: vscode.CancellationToken): Thenable<string | undefined>;
}

export interface ApproveDeps {
  /** A notification with actions: the one picked, undefined when it is closed. */
  notify(type: number, message: string, actions: string[]): Thenable<string | undefined>;
}

export function defaultAskDeps(): AskDeps {
  return {
    showQuickPick: (items, options, token) => vscode.window.showQuickPick(items, options, token),
    showInputBox: (options, token) => vscode.window.showInputBox(options, token),
  };
}

export function defaultApproveDeps(): ApproveDeps {
  return {
    notify: (type, message, actions) => {
      const show = type === 1 ? vscode.window.showErrorMessage : type === 2 ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
      return show(message, ...actions);
    },
  };
}

/**
 * promptQuestion opens the quick pick (or input box) of a question; its
 * answer goes to the store. Closing it leaves the question waiting. The
 * prompt closes itself when the question is answered elsewhere or withdrawn.
 */
export async function promptQuestion(id: string, pending: PendingStore, deps: AskDeps, token?: vscode.CancellationToken): Promise<void> {
  const p = pending.get(id);
  if (p === undefined) {
    return;
  }
  const cts = new vscode.CancellationTokenSource();
  const subs = [pending.onDidChange(() => {
    if (pending.get(id) === undefined) {
      cts.cancel();
    }
  })];
  if (token !== undefined) {
    subs.push(token.onCancellationRequested(() => {
      cts.cancel();
    }));
  }
  try {
    const title = p.taskId !== undefined ? 'agentls asks' : `agentls asks (${p.folderName})`;
    if (p.options.length > 0) {
      const answer = await deps.showQuickPick([...p.options, dismissItem], { title, placeHolder: p.text, ignoreFocusOut: true }, cts.token);
      if (answer !== undefined) {
        pending.answer(id, answer === dismissItem ? null : answer);
      }
    } else {
      const answer = await deps.showInputBox({
        title,
        prompt: `${p.text} (Escape leaves the question waiting in the agentls views)`,
        ignoreFocusOut: true,
      }, cts.token);
      if (answer !== undefined) {
        pending.answer(id, answer);
      }
    }
  } finally {
    for (const s of subs) {
      s.dispose();
    }
    cts.dispose();
  }
}

/** ask answers agent/ask: the question waits, and its quick pick opens at once. */
export function ask(params: AskParams, deps: AskDeps & InboxDeps, token: vscode.CancellationToken): Promise<AskResult> {
  const raw = typeof params.question === 'string' && params.question !== '' ? params.question : 'The agent asks';
  const options = (params.options ?? []).filter((o) => typeof o === 'string' && o !== '');
  return new Promise<AskResult>((resolve) => {
    const p = deps.pending.add({
      kind: 'question',
      folder: deps.folder.key,
      folderName: deps.folder.name,
      text: plainText(raw, deps.folders()),
      markdown: relativePaths(raw, deps.folders()),
      options,
      asked: raw,
    }, (answer) => {
      sub.dispose();
      resolve({ answer });
    });
    const sub = token.onCancellationRequested(() => {
      deps.pending.withdraw(p.id);
      resolve({ answer: null });
    });
    attributePending(deps.pending, deps.tasks, deps.folder.key);
    void promptQuestion(p.id, deps.pending, deps, token);
  });
}

/**
 * showMessageRequest answers window/showMessageRequest. With actions (an
 * approval) it waits for one of them; without, it is a message: shown, and
 * answered null at once.
 */
export function showMessageRequest(params: ShowMessageRequestParams, deps: ApproveDeps & InboxDeps, token: vscode.CancellationToken): Promise<MessageActionItem | null> {
  const titles = (params.actions ?? []).map((a) => a.title).filter((t) => typeof t === 'string' && t !== '');
  const text = plainText(params.message, deps.folders());
  if (titles.length === 0) {
    void deps.notify(params.type, text, []);
    return Promise.resolve(null);
  }
  return new Promise<MessageActionItem | null>((resolve) => {
    const p = deps.pending.add({
      kind: 'approval',
      folder: deps.folder.key,
      folderName: deps.folder.name,
      text,
      markdown: relativePaths(params.message, deps.folders()),
      options: titles,
    }, (answer) => {
      sub.dispose();
      resolve(answer === null ? null : { title: answer });
    });
    const sub = token.onCancellationRequested(() => {
      deps.pending.withdraw(p.id);
      resolve(null);
    });
    attributePending(deps.pending, deps.tasks, deps.folder.key);
    void Promise.resolve(deps.notify(params.type, text, titles)).then((picked) => {
      if (picked !== undefined) {
        deps.pending.answer(p.id, picked);
      }
    });
  });
}
