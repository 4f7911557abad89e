// Provider keys live in VS Code's SecretStorage (the OS keychain where there
// is one), never in settings, and reach the agentls process only through its
// environment.
import type * as vscode from 'vscode';

export interface Provider {
  /** The environment variable agentls reads (contract §6). */
  env: string;
  label: string;
  detail: string;
}

export const providers: readonly Provider[] = [
  { env: 'ANTHROPIC_API_KEY', label: 'Anthropic', detail: 'ANTHROPIC_API_KEY, for anthropic:<model>' },
  { env: 'OPENAI_API_KEY', label: 'OpenAI or an OpenAI-compatible server', detail: 'OPENAI_API_KEY, for openai:<model>' },
];

const prefix = 'agentls.providerKey.';

/** ProviderKeys stores the keys and builds the process environment from them. */
export class ProviderKeys {
  constructor(private readonly secrets: Pick<vscode.SecretStorage, 'get' | 'store' | 'delete' | 'onDidChange'>) {}

  set(env: string, key: string): Thenable<void> {
    return this.secrets.store(prefix + env, key.trim());
  }

  clear(env: string): Thenable<void> {
    return this.secrets.delete(prefix + env);
  }

  async has(env: string): Promise<boolean> {
    const v = await this.secrets.get(prefix + env);
    return v !== undefined && v !== '';
  }

  /** environment maps each stored key to its variable. */
  async environment(): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const p of providers) {
      const v = await this.secrets.get(prefix + p.env);
      if (v !== undefined && v !== '') {
        out[p.env] = v;
      }
    }
    return out;
  }

  /** onDidChange fires when a provider key is stored or removed. */
  onDidChange(listener: () => void): { dispose(): void } {
    return this.secrets.onDidChange((e) => {
      if (e.key.startsWith(prefix)) {
        listener();
      }
    });
  }
}
