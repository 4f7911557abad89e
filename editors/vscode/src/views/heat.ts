// Heat in the explorer: a badge and a colour on every file the agent works
// on, from agent/heatSnapshot and the agent/heatUpdate notifications of the
// workspace view (those without a taskId).
import * as vscode from 'vscode';
import { HeatNode, HeatSnapshot, HeatUpdateParams } from '../protocol';

/**
 * HeatStore is the workspace heat map as the client knows it. Updates that
 * arrive before the snapshot are held and applied over it, those at or below
 * the snapshot's seq dropped, so the map converges whatever the order.
 */
export class HeatStore {
  private readonly nodes = new Map<string, HeatNode>();
  private seq = 0;
  private loaded = false;
  private held: HeatUpdateParams[] = [];
  private writeCount = 0;

  /**
   * writes counts the changes that may have moved the code graph: fresh
   * writes (a file newly written, or written again), snapshots and resets.
   * A view that keeps a file's neighbours asks again when it has grown.
   */
  get writes(): number {
    return this.writeCount;
  }

  /** snapshot replaces the map; it returns every path whose heat changed. */
  snapshot(s: HeatSnapshot): string[] {
    const changed = new Set(this.nodes.keys());
    this.nodes.clear();
    for (const n of s.nodes ?? []) {
      this.nodes.set(n.path, n);
      changed.add(n.path);
    }
    this.seq = s.seq;
    this.loaded = true;
    this.writeCount++;
    const held = this.held;
    this.held = [];
    for (const u of held) {
      for (const p of this.update(u)) {
        changed.add(p);
      }
    }
    return [...changed];
  }

  /** update applies one workspace heat update; it returns the paths it changed. */
  update(u: HeatUpdateParams): string[] {
    if (u.taskId !== undefined && u.taskId !== '') {
      return []; // a task's own view: the explorer shows the workspace
    }
    if (!this.loaded) {
      this.held.push(u);
      return [];
    }
    if (u.seq <= this.seq) {
      return [];
    }
    this.seq = u.seq;
    const changed: string[] = [];
    for (const n of u.updates ?? []) {
      const prev = this.nodes.get(n.path);
      if (n.lastAction === 'write' && (prev === undefined || prev.lastAction !== 'write' || prev.turn !== n.turn || n.heat > prev.heat)) {
        this.writeCount++;
      }
      this.nodes.set(n.path, n);
      changed.push(n.path);
    }
    for (const p of u.removed ?? []) {
      if (this.nodes.delete(p)) {
        changed.push(p);
      }
    }
    return changed;
  }

  /** reset forgets everything, e.g. when the server restarts. */
  reset(): string[] {
    const paths = [...this.nodes.keys()];
    this.nodes.clear();
    this.seq = 0;
    this.loaded = false;
    this.held = [];
    this.writeCount++;
    return paths;
  }

  get(path: string): HeatNode | undefined {
    return this.nodes.get(path);
  }

  all(): HeatNode[] {
    return [...this.nodes.values()];
  }
}

/** The colour band of a heat value. */
export function heatBand(heat: number): 'hot' | 'warm' | 'cool' {
  if (heat > 0.66) {
    return 'hot';
  }
  if (heat >= 0.33) {
    return 'warm';
  }
  return 'cool';
}

/** actionWords say what last happened to a file, for the tooltips (docs/PROTOCOL.md §3, the heat map). */
export const actionWords: Record<HeatNode['lastAction'], string> = {
  userProvided: 'given by you',
  userReferenced: 'named in your prompt',
  read: 'read',
  write: 'written',
  search: 'searched',
  blocked: 'blocked',
  mcp: 'named by an MCP tool',
};

/**
 * decorationFor renders a heat node: the badge is the heat in tenths (1-9),
 * or "!" for an access the zones or the gatekeeper blocked; the colour is
 * its band. Digits keep clear of the letters source control puts there.
 */
export function decorationFor(n: HeatNode): vscode.FileDecoration {
  const tenths = Math.min(9, Math.max(1, Math.round(n.heat * 10)));
  const badge = n.lastAction === 'blocked' ? '!' : String(tenths);
  const tooltip = `agentls: heat ${n.heat.toFixed(2)}, ${actionWords[n.lastAction]}` +
    `${n.inContext ? ', in the model\'s context' : ''} (turn ${n.turn})`;
  const d = new vscode.FileDecoration(badge, tooltip, new vscode.ThemeColor(`agentls.heat.${heatBand(n.heat)}`));
  d.propagate = false;
  return d;
}

/** HeatDecorations is the FileDecorationProvider over a HeatStore. */
export class HeatDecorations implements vscode.FileDecorationProvider, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<vscode.Uri[]>();
  readonly onDidChangeFileDecorations = this.emitter.event;
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires when the heat of some file changed (the Heat view lists them). */
  readonly onDidChange = this.changed.event;

  constructor(
    readonly store: HeatStore,
    private readonly root: () => vscode.Uri | undefined,
  ) {}

  /** relative is the workspace-relative path of uri, or undefined outside it. */
  relative(uri: vscode.Uri): string | undefined {
    const root = this.root();
    if (root === undefined || uri.scheme !== root.scheme || uri.authority !== root.authority) {
      return undefined;
    }
    const base = root.path.endsWith('/') ? root.path : `${root.path}/`;
    return uri.path.startsWith(base) ? uri.path.slice(base.length) : undefined;
  }

  provideFileDecoration(uri: vscode.Uri): vscode.FileDecoration | undefined {
    const rel = this.relative(uri);
    if (rel === undefined) {
      return undefined;
    }
    const n = this.store.get(rel);
    return n !== undefined ? decorationFor(n) : undefined;
  }

  /** refresh tells VS Code which paths to decorate again. */
  refresh(paths: string[]): void {
    if (paths.length > 0) {
      this.changed.fire();
    }
    const root = this.root();
    if (root === undefined || paths.length === 0) {
      return;
    }
    this.emitter.fire(paths.map((p) => vscode.Uri.joinPath(root, ...p.split('/'))));
  }

  applySnapshot(s: HeatSnapshot): void {
    this.refresh(this.store.snapshot(s));
  }

  applyUpdate(u: HeatUpdateParams): void {
    this.refresh(this.store.update(u));
  }

  reset(): void {
    this.refresh(this.store.reset());
  }

  dispose(): void {
    this.emitter.dispose();
    this.changed.dispose();
  }
}
