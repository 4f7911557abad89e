// agent/ask: a question for the person, with a quick pick when the agent
// offers options and an input box otherwise. Dismissing answers null.
import * as vscode from 'vscode';
import { AskParams, AskResult } from '../protocol';

export interface AskDeps {
  showQuickPick(items: string[], options: vscode.QuickPickOptions, token: vscode.CancellationToken): Thenable<string | undefined>;
  showInputBox(options: vscode.InputBoxOptions, token: vscode.CancellationToken): Thenable<string | undefined>;
}

export function defaultAskDeps(): AskDeps {
  return {
    showQuickPick: (items, options, token) => vscode.window.showQuickPick(items, options, token),
    showInputBox: (options, token) => vscode.window.showInputBox(options, token),
  };
}

export async function ask(params: AskParams, deps: AskDeps, token: vscode.CancellationToken): Promise<AskResult> {
  const question = typeof params.question === 'string' && params.question !== '' ? params.question : 'The agent asks';
  const options = (params.options ?? []).filter((o) => typeof o === 'string' && o !== '');
  let answer: string | undefined;
  if (options.length > 0) {
    answer = await deps.showQuickPick(
      options,
      { title: 'agentls asks', placeHolder: question, ignoreFocusOut: true },
      token,
    );
  } else {
    answer = await deps.showInputBox(
      { title: 'agentls asks', prompt: question, ignoreFocusOut: true },
      token,
    );
  }
  return { answer: answer ?? null };
}
