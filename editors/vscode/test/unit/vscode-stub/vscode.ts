// A small stand-in for the `vscode` module: the classes the extension builds
// (Uri, EventEmitter, TreeItem, ThemeIcon, FileDecoration...) behave as in VS
// Code; the window and workspace functions are settable so a test decides
// what the person answers and what the workspace holds.

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly authority: string,
    readonly path: string,
    readonly query: string,
    readonly fragment: string,
  ) {}

  static parse(value: string, strict = false): Uri {
    const m = /^(([^:/?#]+?):)?(\/\/([^/?#]*))?([^?#]*)(\?([^#]*))?(#(.*))?/.exec(value);
    const scheme = m?.[2] ?? '';
    if (strict && scheme === '') {
      throw new Error(`[UriError]: Scheme is missing: {scheme: "", path: "${value}"}`);
    }
    return new Uri(scheme || 'file', m?.[4] ?? '', decodeURIComponent(m?.[5] ?? ''), m?.[7] ?? '', m?.[9] ?? '');
  }

  static file(p: string): Uri {
    return new Uri('file', '', p.startsWith('/') ? p : `/${p}`, '', '');
  }

  static joinPath(base: Uri, ...segments: string[]): Uri {
    const parts = [base.path.replace(/\/+$/, ''), ...segments.filter((s) => s !== '')];
    return new Uri(base.scheme, base.authority, parts.join('/'), '', '');
  }

  get fsPath(): string {
    return this.path;
  }

  with(change: { path?: string }): Uri {
    return new Uri(this.scheme, this.authority, change.path ?? this.path, this.query, this.fragment);
  }

  toString(): string {
    const p = this.path.split('/').map((s) => encodeURIComponent(s)).join('/');
    return `${this.scheme}://${this.authority}${p}${this.query !== '' ? `?${this.query}` : ''}${this.fragment !== '' ? `#${this.fragment}` : ''}`;
  }
}

export interface Disposable {
  dispose(): unknown;
}

export type Event<T> = (listener: (e: T) => unknown) => Disposable;

export class EventEmitter<T> {
  private listeners = new Set<(e: T) => unknown>();
  readonly event: Event<T> = (listener) => {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) {
      l(e);
    }
  }
  dispose(): void {
    this.listeners.clear();
  }
}

export class CancellationTokenSource {
  private readonly emitter = new EventEmitter<undefined>();
  private cancelled = false;
  readonly token = {
    isCancellationRequested: false,
    onCancellationRequested: this.emitter.event,
  };
  cancel(): void {
    if (!this.cancelled) {
      this.cancelled = true;
      this.token.isCancellationRequested = true;
      this.emitter.fire(undefined);
    }
  }
  dispose(): void {
    this.emitter.dispose();
  }
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export class ThemeIcon {
  constructor(readonly id: string, readonly color?: ThemeColor) {}
}

export class MarkdownString {
  isTrusted?: boolean | { enabledCommands: string[] };
  supportThemeIcons?: boolean;
  constructor(public value = '') {}
  /** As VS Code: the text with Markdown's characters escaped, its newlines paragraphs. */
  appendText(text: string): this {
    this.value += text.replace(/[\\`*_{}[\]()#+\-.!<>|~]/g, '\\$&').replace(/\n/g, '\n\n');
    return this;
  }
  appendMarkdown(md: string): this {
    this.value += md;
    return this;
  }
}

export enum TreeItemCollapsibleState {
  None = 0,
  Collapsed = 1,
  Expanded = 2,
}

export class TreeItem {
  id?: string;
  description?: string | boolean;
  tooltip?: string | MarkdownString;
  iconPath?: ThemeIcon;
  contextValue?: string;
  resourceUri?: Uri;
  command?: { command: string; title: string; arguments?: unknown[] };
  constructor(public label: string, public collapsibleState: TreeItemCollapsibleState = TreeItemCollapsibleState.None) {}
}

export class FileDecoration {
  propagate?: boolean;
  constructor(readonly badge?: string, readonly tooltip?: string, readonly color?: ThemeColor) {}
}

export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}

export class StatusBarItem {
  text = '';
  tooltip: string | undefined;
  command: string | undefined;
  name: string | undefined;
  backgroundColor: ThemeColor | undefined;
  visible = false;
  constructor(readonly id: string, readonly alignment: StatusBarAlignment, readonly priority: number) {}
  show(): void {
    this.visible = true;
  }
  hide(): void {
    this.visible = false;
  }
  dispose(): void {
    this.visible = false;
  }
}

export enum ProgressLocation {
  SourceControl = 1,
  Window = 10,
  Notification = 15,
}

export enum QuickPickItemKind {
  Separator = -1,
  Default = 0,
}

export class RelativePattern {
  constructor(readonly base: unknown, readonly pattern: string) {}
}

/** A tree view as the extension sets it: its badge and its message. */
export class TreeView {
  badge: { value: number; tooltip: string } | undefined;
  message: string | undefined;
  constructor(readonly id: string, readonly options: unknown) {}
  dispose(): void {
    // Nothing held.
  }
}

type Answer = (...args: unknown[]) => Promise<unknown>;

/** Fires window.onDidChangeActiveTextEditor. */
export const activeEditorChanged = new EventEmitter<unknown>();

/** The window functions; tests replace the answers. */
export const window = {
  statusBarItems: [] as StatusBarItem[],
  createStatusBarItem(id: string, alignment: StatusBarAlignment, priority: number): StatusBarItem {
    const item = new StatusBarItem(id, alignment, priority);
    window.statusBarItems.push(item);
    return item;
  },
  treeViews: [] as TreeView[],
  createTreeView(id: string, options: unknown): TreeView {
    const view = new TreeView(id, options);
    window.treeViews.push(view);
    return view;
  },
  activeTextEditor: undefined as unknown,
  onDidChangeActiveTextEditor: activeEditorChanged.event,
  showQuickPick: (() => Promise.resolve(undefined)) as Answer,
  showInputBox: (() => Promise.resolve(undefined)) as Answer,
  showInformationMessage: (() => Promise.resolve(undefined)) as Answer,
  showWarningMessage: (() => Promise.resolve(undefined)) as Answer,
  showErrorMessage: (() => Promise.resolve(undefined)) as Answer,
  showTextDocument: (() => Promise.resolve(undefined)) as Answer,
  setStatusBarMessage: (): Disposable => ({ dispose: () => undefined }),
  withProgress: <T>(_options: unknown, task: (progress: { report(v: unknown): void }) => Promise<T>): Promise<T> =>
    task({ report: () => undefined }),
};

type Command = (...args: unknown[]) => unknown;

/** The commands: registered as VS Code does (an id twice is an error), run by executeCommand. */
export const commands = {
  registered: new Map<string, Command>(),
  /** Every executeCommand, with its arguments. */
  executed: [] as unknown[][],
  registerCommand(id: string, run: Command): Disposable {
    if (commands.registered.has(id)) {
      throw new Error(`command '${id}' already exists`);
    }
    commands.registered.set(id, run);
    return { dispose: () => commands.registered.delete(id) };
  },
  executeCommand(id: string, ...args: unknown[]): Promise<unknown> {
    commands.executed.push([id, ...args]);
    const run = commands.registered.get(id);
    return Promise.resolve(run?.(...args));
  },
};

/** Fires workspace.onDidChangeConfiguration. */
export const configurationChanged = new EventEmitter<{ affectsConfiguration(section: string, scope?: unknown): boolean }>();

/** Fires workspace.onDidGrantWorkspaceTrust. */
export const trustGranted = new EventEmitter<void>();

/** The workspace; tests replace what it holds. */
export const workspace = {
  /** Whether the person trusts the workspace: a test sets it, then fires trustGranted. */
  isTrusted: true,
  onDidGrantWorkspaceTrust: trustGranted.event,
  textDocuments: [] as unknown[],
  workspaceFolders: undefined as { uri: Uri; name: string; index: number }[] | undefined,
  fs: {
    readFile: (() => Promise.reject(new Error('no file system in the stub'))) as (uri: Uri) => Promise<Uint8Array>,
  },
  /** Every setting at its default. */
  getConfiguration: () => ({ get: <T>(_section: string, defaultValue?: T): T | undefined => defaultValue }),
  onDidChangeConfiguration: configurationChanged.event,
  /** The documents opened, as they were asked for. */
  opened: [] as unknown[],
  openTextDocument: (options: unknown): Promise<unknown> => {
    workspace.opened.push(options);
    return Promise.resolve(options);
  },
  findFiles: (): Promise<Uri[]> => Promise.resolve([]),
};
