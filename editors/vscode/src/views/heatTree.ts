// The "Heat" tree view: the files the agent works on, hottest first, each
// unfolding to its neighbours in the code graph: the files it references and
// the files that reference it, with the number of references and how they
// were found (the language server, the graph's resolution, a guess). A file's
// neighbours are asked of agentls (agent/codeGraph {path}) when the person
// unfolds it, never on a heat tick, and kept until a write may have moved
// them, the server restarts, or the person refreshes the view.
import * as vscode from 'vscode';
import { CodeGraphResult, Provenance } from '../protocol';
import { actionWords, HeatStore } from './heat';

/** One workspace folder as the Heat view shows it. */
export interface HeatFolder {
  key: string;
  name: string;
  uri: vscode.Uri;
  store: HeatStore;
  /** graph asks the folder's agentls for a file's code graph (agent/codeGraph {path}). */
  graph(path: string): Promise<CodeGraphResult>;
}

/** A file next to another in the graph, how many references join them, and how they were found. */
export interface Neighbour {
  path: string;
  count: number;
  provenance?: Provenance;
}

/** How an edge's references were found, surest first (contract §3, agent/codeGraph). */
const sureness: Provenance[] = ['lsp', 'resolved', 'name'];

/** provenanceWords say how references were found. */
export const provenanceWords: Record<Provenance, string> = {
  lsp: 'language server',
  resolved: 'resolved by the graph',
  name: 'by name: a guess',
};

/** leastSure is the less sure of two provenances (undefined: not said). */
function leastSure(a: Provenance | undefined, b: Provenance | undefined): Provenance | undefined {
  if (a === undefined || b === undefined) {
    return a ?? b;
  }
  return sureness.indexOf(a) > sureness.indexOf(b) ? a : b;
}

export interface Neighbours {
  /** The files path references. */
  references: Neighbour[];
  /** The files that reference path. */
  referencedBy: Neighbour[];
  truncated: boolean;
}

function byCount(a: Neighbour, b: Neighbour): number {
  return b.count - a.count || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
}

/**
 * neighbours reads the files path references and those that reference it
 * from an agent/codeGraph answer: the `references` edges between path and
 * another file (a deeper answer's edges between two neighbours are not
 * path's).
 */
export function neighbours(res: CodeGraphResult, path: string): Neighbours {
  const files = new Set((res.nodes ?? []).filter((n) => n.kind === 'file').map((n) => n.id));
  const out = new Map<string, Neighbour>();
  const inc = new Map<string, Neighbour>();
  const add = (m: Map<string, Neighbour>, p: string, n: number, how: Provenance | undefined): void => {
    const had = m.get(p);
    m.set(p, { path: p, count: (had?.count ?? 0) + n, provenance: had === undefined ? how : leastSure(had.provenance, how) });
  };
  for (const e of res.edges ?? []) {
    if (e.kind !== 'references' || e.from === e.to || !files.has(e.from) || !files.has(e.to)) {
      continue;
    }
    const n = e.count ?? 1;
    if (e.from === path) {
      add(out, e.to, n, e.provenance);
    } else if (e.to === path) {
      add(inc, e.from, n, e.provenance);
    }
  }
  const list = (m: Map<string, Neighbour>): Neighbour[] => [...m.values()].map((n) => (n.provenance === undefined ? { path: n.path, count: n.count } : n)).sort(byCount);
  return { references: list(out), referencedBy: list(inc), truncated: res.truncated === true };
}

/** The JSON-RPC code of invalid params: agent/codeGraph's "not a file of the graph". */
const invalidParams = -32602;

/** graphError words a failed agent/codeGraph for the view. */
export function graphError(e: unknown): { label: string; detail: string } {
  const message = (e instanceof Error ? e.message : String(e)).replace(/^invalid params: (path: )?/, '');
  const code = typeof e === 'object' && e !== null && 'code' in e ? e.code : undefined;
  if (code === invalidParams) {
    return { label: 'No neighbours: not in the code graph', detail: message.replace(/^not in the code graph: /, '') };
  }
  return { label: 'The code graph is unavailable', detail: message };
}

export type HeatTreeNode =
  | { kind: 'folder'; folder: string }
  | { kind: 'file'; folder: string; path: string; id: string; count?: number; provenance?: Provenance; dir?: 'out' | 'in' }
  | { kind: 'group'; folder: string; path: string; id: string; dir: 'out' | 'in' }
  | { kind: 'note'; id: string; label: string; detail?: string; icon: string };

type Entry = {
  /** The store's writes when the answer was asked for. */
  writes: number;
  state: 'loading' | { result: Neighbours } | { error: { label: string; detail: string } };
};

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** HeatTreeProvider is the Heat view's data. */
export class HeatTreeProvider implements vscode.TreeDataProvider<HeatTreeNode>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<HeatTreeNode | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly cache = new Map<string, Entry>();

  constructor(private readonly folders: () => HeatFolder[]) {}

  /** refresh redraws the view (the heat changed); neighbours already known are kept. */
  refresh(): void {
    this.emitter.fire(undefined);
  }

  /** forget drops the neighbours known, of one folder or all, and redraws. */
  forget(folder?: string): void {
    for (const k of [...this.cache.keys()]) {
      if (folder === undefined || k.startsWith(`${folder}\n`)) {
        this.cache.delete(k);
      }
    }
    this.refresh();
  }

  private folder(key: string): HeatFolder | undefined {
    return this.folders().find((f) => f.key === key);
  }

  getChildren(node?: HeatTreeNode): HeatTreeNode[] {
    if (node === undefined) {
      const folders = this.folders();
      if (folders.length === 1) {
        return this.hotFiles(folders[0]);
      }
      return folders.filter((f) => f.store.all().length > 0).map((f) => ({ kind: 'folder', folder: f.key }));
    }
    switch (node.kind) {
      case 'folder': {
        const f = this.folder(node.folder);
        return f !== undefined ? this.hotFiles(f) : [];
      }
      case 'file':
        return this.neighbourGroups(node);
      case 'group': {
        const entry = this.cache.get(`${node.folder}\n${node.path}`);
        if (entry === undefined || typeof entry.state !== 'object' || !('result' in entry.state)) {
          return [];
        }
        const list = node.dir === 'out' ? entry.state.result.references : entry.state.result.referencedBy;
        return list.map((n) => ({
          kind: 'file', folder: node.folder, path: n.path, id: `${node.id}/${n.path}`, count: n.count, provenance: n.provenance, dir: node.dir,
        }));
      }
      case 'note':
        return [];
    }
  }

  private hotFiles(f: HeatFolder): HeatTreeNode[] {
    return f.store.all()
      .sort((a, b) => b.heat - a.heat || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
      .map((n) => ({ kind: 'file', folder: f.key, path: n.path, id: `${f.key}\n${n.path}` }));
  }

  /** neighbourGroups are a file's two groups once agentls answered, asking it when needed. */
  private neighbourGroups(node: HeatTreeNode & { kind: 'file' }): HeatTreeNode[] {
    const f = this.folder(node.folder);
    if (f === undefined) {
      return [];
    }
    const key = `${node.folder}\n${node.path}`;
    let entry = this.cache.get(key);
    if (entry === undefined || (entry.state !== 'loading' && entry.writes < f.store.writes)) {
      entry = this.load(f, node.path, key);
    }
    const state = entry.state;
    if (state === 'loading') {
      return [{
        kind: 'note', id: `${node.id}/loading`, icon: 'loading~spin',
        label: 'Asking agentls for the neighbours…',
        detail: 'agentls answers once its code graph is built; the first build of a large workspace takes a while',
      }];
    }
    if ('error' in state) {
      return [{ kind: 'note', id: `${node.id}/error`, icon: 'info', label: state.error.label, detail: state.error.detail }];
    }
    const groups: HeatTreeNode[] = [
      { kind: 'group', folder: node.folder, path: node.path, id: `${node.id}/out`, dir: 'out' },
      { kind: 'group', folder: node.folder, path: node.path, id: `${node.id}/in`, dir: 'in' },
    ];
    if (state.result.truncated) {
      groups.push({
        kind: 'note', id: `${node.id}/truncated`, icon: 'warning',
        label: 'Cut at the code graph\'s limits', detail: 'agent/codeGraph answers at most 500 nodes and 2000 edges',
      });
    }
    return groups;
  }

  private load(f: HeatFolder, path: string, key: string): Entry {
    const entry: Entry = { writes: f.store.writes, state: 'loading' };
    this.cache.set(key, entry);
    const settle = (state: Entry['state']): void => {
      // An answer to a question forgotten meanwhile (refresh, restart) is dropped.
      if (this.cache.get(key) === entry) {
        entry.state = state;
        this.refresh();
      }
    };
    f.graph(path).then(
      (res) => {
        settle({ result: neighbours(res, path) });
      },
      (e: unknown) => {
        settle({ error: graphError(e) });
      },
    );
    return entry;
  }

  getTreeItem(node: HeatTreeNode): vscode.TreeItem {
    switch (node.kind) {
      case 'folder': {
        const f = this.folder(node.folder);
        const item = new vscode.TreeItem(f?.name ?? node.folder, vscode.TreeItemCollapsibleState.Expanded);
        item.id = node.folder;
        item.iconPath = new vscode.ThemeIcon('root-folder');
        return item;
      }
      case 'file': {
        const f = this.folder(node.folder);
        const item = new vscode.TreeItem(node.path, vscode.TreeItemCollapsibleState.Collapsed);
        item.id = node.id;
        item.contextValue = 'agentls.heatFile';
        const heat = f?.store.get(node.path);
        if (node.count !== undefined) {
          item.description = plural(node.count, 'reference', 'references') +
            (node.provenance !== undefined ? ` · ${provenanceWords[node.provenance]}` : '');
        } else if (heat !== undefined) {
          item.description = `heat ${heat.heat.toFixed(2)}, ${actionWords[heat.lastAction]}`;
        }
        item.tooltip = `${node.path}: open it; unfold it for the files it references and the files that reference it` +
          (node.provenance !== undefined ? ` (these references: ${provenanceWords[node.provenance]})` : '');
        if (f !== undefined) {
          const uri = vscode.Uri.joinPath(f.uri, ...node.path.split('/'));
          item.resourceUri = uri;
          item.command = { command: 'vscode.open', title: 'Open', arguments: [uri] };
        }
        return item;
      }
      case 'group': {
        const entry = this.cache.get(`${node.folder}\n${node.path}`);
        const result = entry !== undefined && typeof entry.state === 'object' && 'result' in entry.state ? entry.state.result : undefined;
        const list = result === undefined ? [] : node.dir === 'out' ? result.references : result.referencedBy;
        const item = new vscode.TreeItem(node.dir === 'out' ? 'References' : 'Referenced by',
          list.length > 0 ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None);
        item.id = node.id;
        item.description = list.length > 0 ? plural(list.length, 'file', 'files') : 'no file';
        item.tooltip = node.dir === 'out' ? `The files ${node.path} references` : `The files that reference ${node.path}`;
        item.iconPath = new vscode.ThemeIcon(node.dir === 'out' ? 'arrow-right' : 'arrow-left');
        return item;
      }
      case 'note': {
        const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
        item.id = node.id;
        item.description = node.detail;
        item.tooltip = node.detail !== undefined ? `${node.label}: ${node.detail}` : node.label;
        item.iconPath = new vscode.ThemeIcon(node.icon);
        return item;
      }
    }
  }

  dispose(): void {
    this.emitter.dispose();
  }
}
