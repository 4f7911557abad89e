// The model, the intent and the engine the person chose for the next tasks
// of a folder (agent/run's model, intentId and engine), kept in the workspace's state so a
// reload keeps them. The agentls.model setting is left as it is.
import {
  builtinEngine,
  CheckModelResult,
  EngineInfo,
  EnginesResult,
  IntentInfo,
  IntentsResult,
  ModelsResult,
  UndoFile,
  UndoResult,
} from './protocol';
import { settingWords } from './text';

export interface Choice {
  model?: string;
  intentId?: string;
  /** The intent's name, for the views. */
  intentName?: string;
  /** The engine every subtask of the next tasks runs on (agent/run's engine). */
  engine?: string;
}

/** The part of vscode.Memento the choices use. */
export interface StateStore {
  get(key: string): unknown;
  update(key: string, value: unknown): Thenable<void>;
}

const key = 'agentls.choices';

export class Choices {
  private readonly listeners = new Set<() => void>();

  constructor(private readonly state: StateStore) {}

  onDidChange(l: () => void): { dispose(): void } {
    this.listeners.add(l);
    return { dispose: () => this.listeners.delete(l) };
  }

  private all(): Record<string, Choice> {
    return { ...(this.state.get(key) as Record<string, Choice> | undefined) };
  }

  get(folder: string): Choice {
    return { ...(this.all()[folder] ?? {}) };
  }

  async set(folder: string, change: Partial<Choice>): Promise<void> {
    const all = this.all();
    // Unset (undefined or '') values are dropped, not stored.
    const merged: Record<string, string | undefined> = { ...all[folder], ...change };
    all[folder] = Object.fromEntries(Object.entries(merged).filter(([, v]) => v !== undefined && v !== ''));
    await this.state.update(key, all);
    for (const l of [...this.listeners]) {
      l();
    }
  }
}

/** A quick pick item of the model picker. */
export interface ModelItem {
  label: string;
  description?: string;
  detail?: string;
  kind?: 'separator';
  /** What picking it does. */
  action?: { type: 'model'; id: string } | { type: 'default' } | { type: 'test' } | { type: 'problem'; message: string };
}

/**
 * modelItems lists agent/models for a quick pick: a test of the connection,
 * the setting's model, then each provider's models under its name, the
 * current one and the chosen one marked; a provider that failed or is not
 * set up says why.
 */
export function modelItems(res: ModelsResult, chosen: string | undefined): ModelItem[] {
  const items: ModelItem[] = [];
  const next = chosen ?? res.current;
  items.push({
    label: '$(plug) Test connection',
    description: next !== '' ? next : 'no model is configured',
    detail: 'Ask the provider whether the model of the next task works (agent/checkModel)',
    action: { type: 'test' },
  });
  items.push({
    label: `${chosen === undefined ? '$(check) ' : ''}Use the configured model`,
    description: res.current !== '' ? `${res.current}${res.source !== undefined && res.source !== '' ? ` (from ${settingWords(res.source)})` : ''}` : 'none configured',
    detail: res.currentError !== undefined ? settingWords(res.currentError) : undefined,
    action: { type: 'default' },
  });
  const byProvider = new Map<string, typeof res.models>();
  for (const m of res.models ?? []) {
    const list = byProvider.get(m.provider) ?? [];
    list.push(m);
    byProvider.set(m.provider, list);
  }
  const providers = res.providers ?? [];
  const names = [...new Set([...providers.map((p) => p.provider), ...byProvider.keys()])];
  for (const name of names) {
    const p = providers.find((x) => x.provider === name);
    items.push({ label: name, kind: 'separator' });
    for (const m of byProvider.get(name) ?? []) {
      const marks = [m.current === true ? 'current' : '', m.id === chosen ? 'chosen for the next tasks' : ''].filter((x) => x !== '');
      items.push({
        label: `${m.id === next ? '$(check) ' : ''}${m.displayName ?? m.name}`,
        description: [m.id, ...marks].join(' · '),
        action: { type: 'model', id: m.id },
      });
    }
    if (p !== undefined && !p.configured) {
      items.push({ label: `$(info) ${name} is not set up`, detail: p.hint, action: { type: 'problem', message: `${name}: ${p.hint ?? 'not set up'}` } });
    } else if (p?.error !== undefined && p.error !== '') {
      items.push({ label: `$(warning) ${name} listed no model`, detail: p.error, action: { type: 'problem', message: p.error } });
    }
  }
  return items;
}

/** checkMessage is what the person reads of agent/checkModel. */
export function checkMessage(r: CheckModelResult): string {
  return `agentls: ${settingWords(r.message)}`;
}

/** intentItems are the intents that can be chosen: a COMPLETED one is not offered. */
export function intentItems(res: IntentsResult, chosen: string | undefined): { label: string; description?: string; detail?: string; intent?: IntentInfo }[] {
  const items: { label: string; description?: string; detail?: string; intent?: IntentInfo }[] = [{
    label: `${chosen === undefined ? '$(check) ' : ''}No intent`,
    description: 'each worker selects the intent its subtask belongs to',
  }];
  for (const i of res.intents ?? []) {
    if (!i.selectable) {
      continue;
    }
    const scope = i.ownedScope ?? [];
    items.push({
      label: `${i.id === chosen ? '$(check) ' : ''}${i.id}: ${i.name}`,
      description: i.status,
      ...(scope.length > 0 ? { detail: `scope: ${scope.join(', ')}` } : {}),
      intent: i,
    });
  }
  return items;
}

/**
 * undoRefusals are the files an undo refused, each with its reason; the
 * others of an all-or-nothing undo were left only because of them (agentls
 * says "…the undo was not partial") and a partial undo takes them back.
 */
export function undoRefusals(r: UndoResult): { refused: UndoFile[]; rest: UndoFile[] } {
  const files = r.files ?? [];
  const notDone = files.filter((f) => !f.undone);
  const rest = notDone.filter((f) => f.reason !== undefined && /the undo was not partial$/.test(f.reason));
  const refused = notDone.filter((f) => !rest.includes(f));
  return { refused, rest };
}

/** undoSummary says what an undo did. */
export function undoSummary(r: UndoResult): string {
  const files = r.files ?? [];
  // A file already as it was has no operation (api leaves it out).
  const undone = files.filter((f) => f.undone && f.operation !== undefined);
  const already = files.filter((f) => f.undone && f.operation === undefined);
  const parts: string[] = [];
  if (undone.length > 0) {
    parts.push(`undid ${undone.map((f) => f.path).join(', ')}`);
  }
  if (already.length > 0) {
    parts.push(`${already.map((f) => f.path).join(', ')} already as before`);
  }
  const { refused } = undoRefusals(r);
  if (refused.length > 0) {
    parts.push(`left ${refused.map((f) => f.path).join(', ')}`);
  }
  return parts.length > 0 ? parts.join('; ') : 'nothing to undo';
}

/** engineLine is an engine as agent/engines gives it, in words: version, where it comes from, why not usable. */
export function engineItem(e: EngineInfo): { label: string; description: string; detail: string; engine: EngineInfo } {
  const command = (e.command ?? []).join(' ');
  return {
    label: `${e.usable ? '$(pass-filled)' : '$(circle-slash)'} ${e.name}`,
    description: [
      e.usable ? 'usable' : 'not usable',
      e.version !== undefined && e.version !== '' ? e.version : '',
      e.builtin ? 'built-in' : '',
      e.source !== undefined && e.source !== '' ? `from ${e.source}` : '',
      e.isolated ? 'isolated' : '',
    ].filter((x) => x !== '').join(' · '),
    detail: !e.usable && e.reason !== undefined && e.reason !== '' ? e.reason : command !== '' ? command : 'no command found',
    engine: e,
  };
}

/** An item of the engine picker: the plan's choice, the built-in worker, or an engine. */
export interface EngineItem {
  label: string;
  description?: string;
  detail?: string;
  /** The engine to choose ('' for the plan's choice); absent on one that cannot be used. */
  engine?: string;
  /** Why it cannot be chosen. */
  problem?: string;
}

/**
 * engineItems lists what the next tasks may run on: as the plan says (the
 * built-in worker, or the engine the coordinator gives a subtask), every
 * subtask on the built-in worker, or on one usable engine; the engines
 * that cannot be used come last with their reason, and cannot be chosen.
 */
export function engineItems(res: EnginesResult, chosen: string | undefined): EngineItem[] {
  const mark = (x: string | undefined): string => (x === chosen || (x === '' && chosen === undefined) ? '$(check) ' : '');
  const items: EngineItem[] = [
    { label: `${mark('')}As planned`, description: 'the built-in worker, or the engine the plan gives a subtask', engine: '' },
    { label: `${mark(builtinEngine)}${builtinEngine}`, description: 'every subtask on the built-in worker', engine: builtinEngine },
  ];
  const engines = res.engines ?? [];
  for (const e of engines.filter((x) => x.usable)) {
    const it = engineItem(e);
    items.push({ label: `${mark(e.name)}${e.name}`, description: it.description, detail: it.detail, engine: e.name });
  }
  for (const e of engines.filter((x) => !x.usable)) {
    items.push({ label: `$(circle-slash) ${e.name}`, description: 'not usable', detail: e.reason ?? '', problem: `${e.name} cannot be used: ${e.reason ?? 'agentls says it is not usable'}` });
  }
  return items;
}
