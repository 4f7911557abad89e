// What the commands' tests stand on: the person, scripted (the answers they
// give to quick picks, input boxes and notifications, in turn, and every
// message they were shown), installed on the vscode stub's window; and fake
// folder agents whose agentls answers each method as the test says and
// records every request.
import * as vscode from 'vscode';
import { Agent, AgentSet, FolderClient, Sender } from '../../src/commands/agents';
import { HeatStore } from '../../src/views/heat';
import { CodeGraphResult } from '../../src/protocol';
import * as stub from './vscode-stub/vscode';

/**
 * A reply of the person: the label of the item picked (or of the action
 * clicked, or the text typed), undefined to close without answering, or a
 * function that picks from the items offered.
 */
export type Reply = string | undefined | ((items: unknown[]) => unknown);

/** A notification shown, with the actions it offered. */
export interface Shown {
  kind: 'info' | 'warning' | 'error';
  text: string;
  actions: string[];
}

function label(item: unknown): string {
  if (typeof item === 'string') {
    return item;
  }
  if (typeof item === 'object' && item !== null && 'label' in item && typeof item.label === 'string') {
    return item.label;
  }
  return '';
}

/** Person answers what the commands ask, in the order the test gave, and records what they were told. */
export class Person {
  readonly shown: Shown[] = [];
  /** The titles (or prompts) of the quick picks and input boxes opened. */
  readonly asked: string[] = [];
  private readonly replies: Reply[] = [];

  constructor() {
    const w = stub.window;
    w.showQuickPick = (items: unknown, options: unknown) => Promise.resolve(items).then((list) => {
      this.asked.push(((options ?? {}) as { title?: string }).title ?? '');
      return this.pick(list as unknown[]);
    });
    w.showInputBox = (options: unknown) => {
      const o = (options ?? {}) as { title?: string; prompt?: string };
      this.asked.push(o.title ?? o.prompt ?? '');
      const r = this.next();
      return Promise.resolve(typeof r === 'function' ? r([]) : r);
    };
    const message = (kind: Shown['kind']) => (text: unknown, ...rest: unknown[]): Promise<unknown> => {
      const actions = rest.filter((x): x is string => typeof x === 'string');
      this.shown.push({ kind, text: String(text), actions });
      if (actions.length === 0) {
        return Promise.resolve(undefined);
      }
      return Promise.resolve(this.pick(actions));
    };
    w.showInformationMessage = message('info');
    w.showWarningMessage = message('warning');
    w.showErrorMessage = message('error');
  }

  /** will queues the person's next replies, in order. */
  will(...replies: Reply[]): this {
    this.replies.push(...replies);
    return this;
  }

  /** texts are the notifications shown, as "kind: text". */
  texts(): string[] {
    return this.shown.map((s) => `${s.kind}: ${s.text}`);
  }

  private next(): Reply {
    if (this.replies.length === 0) {
      throw new Error('the person was asked more than the test says they answer');
    }
    return this.replies.shift();
  }

  private pick(items: unknown[]): unknown {
    const r = this.next();
    if (r === undefined) {
      return undefined;
    }
    if (typeof r === 'function') {
      return r(items);
    }
    const found = items.find((i) => label(i) === r) ?? items.find((i) => label(i).endsWith(` ${r}`));
    if (found === undefined) {
      throw new Error(`the person picks "${r}", which is not among ${JSON.stringify(items.map(label))}`);
    }
    return found;
  }
}

/** An error as a language client rejects a request with: agentls's answer and its code. */
export class ResponseError extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

/** FakeAgent is a folder's agentls that answers each method as the test says. */
export class FakeAgent implements Agent {
  readonly key: string;
  readonly folder: vscode.WorkspaceFolder;
  /** Every request sent, in order. */
  readonly sent: { method: string; params: unknown }[] = [];
  /** The answer of each method: a value, or a function of the params (throwing to fail). */
  readonly answers = new Map<string, unknown>();
  /** The folder's settings. */
  readonly settings: Record<string, unknown> = {};
  readonly heat = { store: new HeatStore(), onDidChange: new stub.EventEmitter<void>().event as vscode.Event<void> };
  /** Whether its agentls takes attachments, runs, and fails to start (with this error). */
  attachments = true;
  isRunning = true;
  startError: Error | undefined;
  restarts = 0;
  reconfigures = 0;
  readonly client: FolderClient;

  constructor(readonly name: string, index = 0) {
    const uri = stub.Uri.file(`/ws/${name}`) as unknown as vscode.Uri;
    this.key = uri.toString();
    this.folder = { uri, name, index };
    const sender: Sender = {
      sendRequest: <R>(method: string, params: unknown): Promise<R> => {
        this.sent.push({ method, params });
        const a = this.answers.get(method);
        // A function's throw is the request's failure, as an answer's error is.
        return new Promise<R>((resolve) => {
          resolve((typeof a === 'function' ? (a as (p: unknown) => unknown)(params) : a) as R);
        });
      },
    };
    this.client = {
      get: () => (this.startError !== undefined ? Promise.reject(this.startError) : Promise.resolve(sender)),
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- VS Code's signature
      config: () => ({ get: <T>(section: string) => this.settings[section] as T | undefined }),
      advertises: (feature) => feature === 'attachments' && this.attachments && this.isRunning,
      running: () => this.isRunning,
      restart: () => {
        this.restarts++;
        return Promise.resolve();
      },
      reconfigure: () => {
        this.reconfigures++;
        return Promise.resolve();
      },
      log: () => undefined,
    };
  }

  graph(): Promise<CodeGraphResult> {
    return Promise.resolve({ nodes: [], edges: [] });
  }

  /** methods are the methods sent, in order. */
  methods(): string[] {
    return this.sent.map((s) => s.method);
  }
}

/** fakeAgents is the set of the given folders; the person picks among several by name. */
export function fakeAgents(...list: FakeAgent[]): AgentSet<FakeAgent> & { onDidChange: vscode.Event<void>; onDidChangeRunning: vscode.Event<void> } {
  return {
    all: () => [...list],
    get: (key) => list.find((a) => a.key === key),
    of: (uri) => list.find((a) => uri.path.startsWith(`${a.folder.uri.path}/`)),
    pick: (purpose) => {
      if (list.length <= 1) {
        return Promise.resolve(list[0]);
      }
      return Promise.resolve(vscode.window.showQuickPick(list.map((a) => ({ label: a.name, agent: a })), { title: `agentls: ${purpose}` })).then((p) => p?.agent);
    },
    onDidChange: new stub.EventEmitter<void>().event as vscode.Event<void>,
    onDidChangeRunning: new stub.EventEmitter<void>().event as vscode.Event<void>,
  };
}
