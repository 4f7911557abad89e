// The provider keys the agentls processes get in their environment: Set
// Provider Key… (into VS Code's secret storage, never the settings) and
// Clear Provider Key…. A change restarts the idle processes (lifecycle.ts).
import * as vscode from 'vscode';
import { providers, ProviderKeys } from '../secrets';

/** The part of ProviderKeys the commands use. */
export type Keys = Pick<ProviderKeys, 'set' | 'clear' | 'has'>;

export async function setProviderKey(keys: Keys): Promise<void> {
  const p = await vscode.window.showQuickPick(providers.map((x) => ({ label: x.label, detail: x.detail, env: x.env })), {
    title: 'agentls: Set Provider Key',
  });
  if (p === undefined) {
    return;
  }
  const key = await vscode.window.showInputBox({
    title: `agentls: ${p.env}`,
    prompt: `Stored in VS Code's secret storage and given to agentls as ${p.env}; never written to settings.`,
    password: true,
    ignoreFocusOut: true,
  });
  if (key === undefined || key.trim() === '') {
    return;
  }
  await keys.set(p.env, key);
  void vscode.window.showInformationMessage(`agentls: ${p.env} stored`);
}

export async function clearProviderKey(keys: Keys): Promise<void> {
  const stored = [];
  for (const p of providers) {
    if (await keys.has(p.env)) {
      stored.push({ label: p.label, detail: p.detail, env: p.env });
    }
  }
  if (stored.length === 0) {
    void vscode.window.showInformationMessage('agentls: no provider key is stored');
    return;
  }
  const p = await vscode.window.showQuickPick(stored, { title: 'agentls: Clear Provider Key' });
  if (p !== undefined) {
    await keys.clear(p.env);
  }
}

/** register adds Set Provider Key… and Clear Provider Key…. */
export function register(keys: Keys): { dispose(): void }[] {
  return [
    vscode.commands.registerCommand('agentls.setProviderKey', () => setProviderKey(keys)),
    vscode.commands.registerCommand('agentls.clearProviderKey', () => clearProviderKey(keys)),
  ];
}
