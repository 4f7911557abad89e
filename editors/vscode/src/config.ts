// Settings → the agentls process: which binary, which arguments, which
// initializationOptions (contract §2), and which settings need a restart.
import * as path from 'node:path';
import { CommandEnv, CommandPolicy, EditMode, EngineConfig, Price, WorkspaceTrust } from './protocol';

/** The part of vscode.WorkspaceConfiguration this module reads. */
export interface ConfigSource {
  get(section: string): unknown;
}

/** initializationOptions of contract §2, as the extension sends them. */
export interface InitOptions {
  model?: string;
  editMode: EditMode;
  maxWorkers: number;
  commands: CommandPolicy;
  allowCommands: string[];
  zones: { allow: string[]; deny: string[] };
  timeouts: { commandMs: number };
  /** The secret variables commands may inherit (agentls.commandEnv; its default passes none). */
  commandEnv?: CommandEnv;
  /** MCP servers by name: {command, args?, env?} or {url, headers?}. */
  mcpServers?: Record<string, MCPServerEntry>;
  allowMcpTools?: string[];
  /**
   * Ask the models that can think for their thinking, streamed as thinking
   * events. The next three are always sent, so that a reconfiguration that
   * turns one off or empties it reaches agentls (what is left out is kept).
   */
  thinking: { enabled: boolean; budgetTokens?: number };
  /** Prices per million tokens and context windows, by provider:model, over the built-in ones. */
  prices: Record<string, PriceEntry>;
  /** External agents subtasks may run on, by name, over the built-in ones. */
  engines: Record<string, EngineEntry>;
  /**
   * How long an edit waits for VS Code's language servers to check it, and
   * the commands that check each language where none does (contract §2).
   */
  diagnostics: { waitMs: number; commands: Record<string, string> };
  /**
   * Whether the person trusts the workspace (vscode.workspace.isTrusted):
   * untrusted, agentls asks before every command, MCP server and engine run
   * (docs/SECURITY.md, "Workspace trust"). Always sent, so that the grant
   * reaches a running agentls.
   */
  workspaceTrust: WorkspaceTrust;
}

/** One entry of agentls.prices: US dollars per million tokens, the context window in tokens (api's Price). */
export type PriceEntry = Price;

/** One entry of agentls.engines (docs/ENGINES.md; api's EngineConfig). */
export type EngineEntry = EngineConfig;

/** The engines agentls knows without a command (docs/ENGINES.md). */
export const builtinEngines = ['claude', 'codex', 'gemini'] as const;

/** priceEntryProblem says what is wrong with an entry of agentls.prices, or undefined. */
export function priceEntryProblem(e: unknown): string | undefined {
  if (typeof e !== 'object' || e === null || Array.isArray(e)) {
    return 'must be {"input", "output", "cacheRead", "cacheWrite", "contextWindow"}';
  }
  for (const [k, v] of Object.entries(e as Record<string, unknown>)) {
    if (!['input', 'output', 'cacheRead', 'cacheWrite', 'contextWindow'].includes(k)) {
      return `unknown key "${k}" (keys are input, output, cacheRead, cacheWrite, contextWindow)`;
    }
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
      return `"${k}" must be a number, 0 or more`;
    }
    if (k === 'contextWindow' && !Number.isInteger(v)) {
      return '"contextWindow" must be a whole number of tokens';
    }
  }
  return undefined;
}

/** engineEntryProblem says what is wrong with an entry of agentls.engines, or undefined. */
export function engineEntryProblem(name: string, e: unknown): string | undefined {
  if (name.trim() === '' || name === 'agentls') {
    return '"agentls" is the built-in worker, not an engine to configure';
  }
  if (typeof e !== 'object' || e === null || Array.isArray(e)) {
    return 'must be {"command": [program, args…], "env", "isolate", "disabled"}';
  }
  const x = e as Record<string, unknown>;
  if (x.command !== undefined && x.command !== null && (!isStringArray(x.command) || x.command.length === 0 || x.command[0]?.trim() === '')) {
    return '"command" must be a list: the program, then its arguments';
  }
  if ((x.command === undefined || x.command === null) && !(builtinEngines as readonly string[]).includes(name) && x.disabled !== true) {
    return `needs "command" (only ${builtinEngines.join(', ')} have a default)`;
  }
  if (x.env !== undefined && x.env !== null && !isStringMap(x.env)) {
    return '"env" must be an object of names to strings';
  }
  for (const k of ['isolate', 'disabled']) {
    if (x[k] !== undefined && x[k] !== null && typeof x[k] !== 'boolean') {
      return `"${k}" must be true or false`;
    }
  }
  return undefined;
}

/** One entry of agentls.mcpServers, as Claude Code, Zed and VS Code write it. */
export interface MCPServerEntry {
  type?: string;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  url?: string;
  headers?: Record<string, string>;
  disabled?: boolean;
}

function isStringMap(v: unknown): v is Record<string, string> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');
}

/** mcpEntryProblem says what is wrong with an entry the server would refuse, or undefined. */
export function mcpEntryProblem(e: unknown): string | undefined {
  if (typeof e !== 'object' || e === null || Array.isArray(e)) {
    return 'must be {"command", "args", "env"} or {"url", "headers"}';
  }
  const x = e as Record<string, unknown>;
  const hasCommand = typeof x.command === 'string' && x.command.trim() !== '';
  const hasURL = typeof x.url === 'string' && /^https?:\/\/[^/]/.test(x.url);
  if (hasCommand === hasURL) {
    return 'needs "command" (a stdio server) or an http(s) "url" (a streamable HTTP server), not both';
  }
  if (x.args !== undefined && x.args !== null && !isStringArray(x.args)) {
    return '"args" must be a list of strings';
  }
  for (const k of ['env', 'headers']) {
    if (x[k] !== undefined && x[k] !== null && !isStringMap(x[k])) {
      return `"${k}" must be an object of names to strings`;
    }
  }
  if (x.type === 'sse') {
    return '"sse" is not supported: give the streamable HTTP endpoint as "url"';
  }
  return undefined;
}

/** The layers of a setting, as vscode.WorkspaceConfiguration.inspect gives them. */
export interface SettingLayers {
  defaultValue?: unknown;
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/** The part of vscode.WorkspaceConfiguration settingsSource reads. */
export interface InspectableConfig extends ConfigSource {
  inspect(section: string): SettingLayers | undefined;
}

/**
 * The settings that are objects keyed by names the person chooses: a model
 * (`openai:gpt-4.1-mini`), a server, an engine. VS Code's get() drops the
 * entries whose key has a dot, so they are read from their layers.
 */
export const namedSettings = ['prices', 'engines', 'mcpServers'] as const;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * mergeLayers is a named setting's value: the entries of its default, the
 * user's, the workspace's and the folder's settings, a later one replacing
 * an entry of the same name. A layer that is not an object stands alone.
 */
export function mergeLayers(l: SettingLayers | undefined): unknown {
  if (l === undefined) {
    return undefined;
  }
  let out: unknown;
  for (const v of [l.defaultValue, l.globalValue, l.workspaceValue, l.workspaceFolderValue]) {
    if (v === undefined) {
      continue;
    }
    out = isPlainObject(v) && isPlainObject(out) ? { ...out, ...v } : isPlainObject(v) ? { ...v } : v;
  }
  return out;
}

/** settingsSource reads the named settings from their layers, the others as VS Code gives them. */
export function settingsSource(cfg: InspectableConfig): ConfigSource {
  return {
    get: (section) => ((namedSettings as readonly string[]).includes(section) ? mergeLayers(cfg.inspect(section)) : cfg.get(section)),
  };
}

/** A setting that cannot be sent as it is, and what was kept instead. */
export interface SettingProblem {
  key: string;
  message: string;
}

export const editModes = ['apply', 'propose', 'branch', 'review'] as const satisfies readonly EditMode[];
export const commandPolicies = ['ask', 'allow', 'deny'] as const satisfies readonly CommandPolicy[];

const defaults: InitOptions = {
  editMode: 'propose',
  maxWorkers: 3,
  commands: 'ask',
  allowCommands: [],
  zones: { allow: ['**'], deny: ['**/.git/**'] },
  timeouts: { commandMs: 600000 },
  thinking: { enabled: false },
  prices: {},
  engines: {},
  diagnostics: { waitMs: 2000, commands: {} },
  workspaceTrust: 'trusted',
};

/** The languages agentls.diagnostics.commands takes (api's DiagnosticsLanguages). */
export const diagnosticsLanguages = ['go', 'python', 'javascript', 'typescript', 'rust', 'java', 'c', 'cpp'] as const;

function isStringArray(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((s) => typeof s === 'string');
}

function oneOf<T extends string>(v: unknown, allowed: readonly T[]): v is T {
  return typeof v === 'string' && (allowed as readonly string[]).includes(v);
}

/** The variable names commandEnv.pass takes, as agentls checks them. */
const variableName = /^[^=\s\0]+$/;

/**
 * initOptions reads the agentls.* settings into initializationOptions, with
 * the workspace's trust (vscode.workspace.isTrusted) as workspaceTrust.
 * A value the server would refuse is replaced by its default and reported,
 * so one typo in settings.json never keeps the agent from starting.
 */
export function initOptions(cfg: ConfigSource, trusted: boolean): { options: InitOptions; problems: SettingProblem[] } {
  const problems: SettingProblem[] = [];
  const bad = (key: string, message: string): void => {
    problems.push({ key: `agentls.${key}`, message });
  };
  const o: InitOptions = structuredClone(defaults);
  o.workspaceTrust = trusted ? 'trusted' : 'untrusted';

  const model = cfg.get('model');
  if (typeof model === 'string' && model.trim() !== '') {
    const m = model.trim();
    if (!m.includes(':')) {
      bad('model', `"${m}" is not provider:model (e.g. openai:gpt-4.1-mini, script:/abs/path.json); using the default`);
    } else {
      o.model = m;
    }
  }

  const editMode = cfg.get('editMode');
  if (editMode !== undefined && editMode !== null && editMode !== '') {
    if (oneOf(editMode, editModes)) {
      o.editMode = editMode;
    } else {
      bad('editMode', `must be one of ${editModes.join(', ')}; using ${o.editMode}`);
    }
  }

  const maxWorkers = cfg.get('maxWorkers');
  if (maxWorkers !== undefined && maxWorkers !== null) {
    if (typeof maxWorkers === 'number' && Number.isInteger(maxWorkers) && maxWorkers >= 1 && maxWorkers <= 64) {
      o.maxWorkers = maxWorkers;
    } else {
      bad('maxWorkers', `must be a whole number from 1 to 64; using ${o.maxWorkers}`);
    }
  }

  const commands = cfg.get('commands');
  if (commands !== undefined && commands !== null && commands !== '') {
    if (oneOf(commands, commandPolicies)) {
      o.commands = commands;
    } else {
      bad('commands', `must be one of ${commandPolicies.join(', ')}; using ${o.commands}`);
    }
  }

  const allowCommands = cfg.get('allowCommands');
  if (allowCommands !== undefined && allowCommands !== null) {
    if (isStringArray(allowCommands)) {
      o.allowCommands = allowCommands.map((s) => s.trim()).filter((s) => s !== '');
    } else {
      bad('allowCommands', 'must be a list of command prefixes; using none');
    }
  }

  const zones = cfg.get('zones');
  if (zones !== undefined && zones !== null) {
    const z = zones as { allow?: unknown; deny?: unknown };
    if (typeof zones !== 'object' || Array.isArray(zones)) {
      bad('zones', 'must be {"allow": [globs], "deny": [globs]}; using the defaults');
    } else {
      if (z.allow !== undefined) {
        if (isStringArray(z.allow)) {
          o.zones.allow = z.allow;
        } else {
          bad('zones', 'zones.allow must be a list of globs; using ["**"]');
        }
      }
      if (z.deny !== undefined) {
        if (isStringArray(z.deny)) {
          o.zones.deny = z.deny;
        } else {
          bad('zones', 'zones.deny must be a list of globs; using ["**/.git/**"]');
        }
      }
    }
  }

  const commandEnv = cfg.get('commandEnv');
  if (commandEnv !== undefined && commandEnv !== null) {
    const pass = (commandEnv as { pass?: unknown }).pass;
    if (typeof commandEnv !== 'object' || Array.isArray(commandEnv) || Object.keys(commandEnv).some((k) => k !== 'pass') ||
      (pass !== undefined && (!isStringArray(pass) || !pass.every((n) => variableName.test(n))))) {
      bad('commandEnv', 'must be {"pass": [variable names]}; commands inherit no secret variable');
    } else {
      // Sent even when empty: a settings change replaces only the keys it sends.
      o.commandEnv = { pass: pass ?? [] };
    }
  }

  const mcpServers = cfg.get('mcpServers');
  if (mcpServers !== undefined && mcpServers !== null) {
    if (typeof mcpServers !== 'object' || Array.isArray(mcpServers)) {
      bad('mcpServers', 'must be an object of server name to {"command", "args", "env"} or {"url", "headers"}; using none');
    } else {
      const kept: Record<string, MCPServerEntry> = {};
      for (const [name, entry] of Object.entries(mcpServers as Record<string, unknown>)) {
        const problem = mcpEntryProblem(entry);
        if (problem !== undefined) {
          bad('mcpServers', `${name}: ${problem}; this server is left out`);
        } else {
          kept[name] = entry as MCPServerEntry;
        }
      }
      // Sent even when empty: a settings change replaces only the keys it
      // sends, so removing the last server must say so.
      o.mcpServers = kept;
    }
  }

  const allowMcpTools = cfg.get('allowMcpTools');
  if (allowMcpTools !== undefined && allowMcpTools !== null) {
    if (isStringArray(allowMcpTools) && allowMcpTools.every((t) => /^mcp__[^_]/.test(t))) {
      if (allowMcpTools.length > 0) {
        o.allowMcpTools = allowMcpTools;
      }
    } else {
      bad('allowMcpTools', 'must be a list of mcp__<server> or mcp__<server>__<tool>; using none');
    }
  }

  const thinking = cfg.get('thinking');
  if (thinking !== undefined && thinking !== null) {
    const t = thinking as { enabled?: unknown; budgetTokens?: unknown };
    if (typeof thinking !== 'object' || Array.isArray(thinking) || (t.enabled !== undefined && typeof t.enabled !== 'boolean')) {
      bad('thinking', 'must be {"enabled": true or false, "budgetTokens": 1024 to 128000}; thinking is off');
    } else if (t.budgetTokens !== undefined && (typeof t.budgetTokens !== 'number' || !Number.isInteger(t.budgetTokens) || t.budgetTokens < 1024 || t.budgetTokens > 128000)) {
      bad('thinking', `thinking.budgetTokens must be a whole number from 1024 to 128000; ${t.enabled === true ? 'using 4096' : 'thinking is off'}`);
      if (t.enabled === true) {
        o.thinking = { enabled: true, budgetTokens: 4096 };
      }
    } else if (t.enabled === true) {
      o.thinking = { enabled: true, ...(typeof t.budgetTokens === 'number' ? { budgetTokens: t.budgetTokens } : {}) };
    }
  }

  const prices = cfg.get('prices');
  if (prices !== undefined && prices !== null) {
    if (typeof prices !== 'object' || Array.isArray(prices)) {
      bad('prices', 'must be an object of "provider:model" to {"input", "output", "cacheRead", "cacheWrite", "contextWindow"}; using the built-in prices');
    } else {
      const kept: Record<string, PriceEntry> = {};
      for (const [model, entry] of Object.entries(prices as Record<string, unknown>)) {
        const problem = !model.includes(':') ? 'is not provider:model' : priceEntryProblem(entry);
        if (problem !== undefined) {
          bad('prices', `${model}: ${problem}; this price is left out`);
        } else {
          kept[model] = entry as PriceEntry;
        }
      }
      o.prices = kept;
    }
  }

  const engines = cfg.get('engines');
  if (engines !== undefined && engines !== null) {
    if (typeof engines !== 'object' || Array.isArray(engines)) {
      bad('engines', 'must be an object of engine name to {"command", "env", "isolate", "disabled"}; using the built-in engines');
    } else {
      const kept: Record<string, EngineEntry> = {};
      for (const [name, entry] of Object.entries(engines as Record<string, unknown>)) {
        const problem = engineEntryProblem(name, entry);
        if (problem !== undefined) {
          bad('engines', `${name}: ${problem}; this engine is left out`);
        } else {
          kept[name] = entry as EngineEntry;
        }
      }
      o.engines = kept;
    }
  }

  const diagnostics = cfg.get('diagnostics');
  if (diagnostics !== undefined && diagnostics !== null) {
    const d = diagnostics as { waitMs?: unknown; commands?: unknown };
    if (typeof diagnostics !== 'object' || Array.isArray(diagnostics)) {
      bad('diagnostics', 'must be {"waitMs": milliseconds, "commands": {"<language>": "<command>"}}; using the defaults');
    } else {
      if (d.waitMs !== undefined) {
        if (typeof d.waitMs === 'number' && Number.isInteger(d.waitMs) && d.waitMs >= 0 && d.waitMs <= 300000) {
          o.diagnostics.waitMs = d.waitMs;
        } else {
          bad('diagnostics', `diagnostics.waitMs must be a whole number of milliseconds from 0 to 300000; using ${o.diagnostics.waitMs}`);
        }
      }
      if (d.commands !== undefined && d.commands !== null) {
        if (typeof d.commands !== 'object' || Array.isArray(d.commands)) {
          bad('diagnostics', 'diagnostics.commands must be an object of language to command; using none');
        } else {
          for (const [lang, cmd] of Object.entries(d.commands as Record<string, unknown>)) {
            if (!(diagnosticsLanguages as readonly string[]).includes(lang)) {
              bad('diagnostics', `diagnostics.commands: ${lang} is no language agentls knows (${diagnosticsLanguages.join(', ')}); left out`);
            } else if (typeof cmd !== 'string') {
              bad('diagnostics', `diagnostics.commands.${lang} must be a command line; left out`);
            } else if (cmd.trim() !== '') {
              o.diagnostics.commands[lang] = cmd;
            }
          }
        }
      }
    }
  }

  const commandMs = cfg.get('commandTimeoutMs');
  if (commandMs !== undefined && commandMs !== null) {
    if (typeof commandMs === 'number' && Number.isInteger(commandMs) && commandMs >= 1000) {
      o.timeouts.commandMs = commandMs;
    } else {
      bad('commandTimeoutMs', `must be a whole number of milliseconds, at least 1000; using ${o.timeouts.commandMs}`);
    }
  }
  return { options: o, problems };
}

/** The settings whose change needs a new process rather than a reconfiguration. */
export const restartSettings = ['agentls.path', 'agentls.logLevel'] as const;

/** Every setting the extension reads. */
export const allSettings = [
  'agentls.path',
  'agentls.model',
  'agentls.editMode',
  'agentls.maxWorkers',
  'agentls.commands',
  'agentls.allowCommands',
  'agentls.zones',
  'agentls.commandTimeoutMs',
  'agentls.commandEnv',
  'agentls.mcpServers',
  'agentls.allowMcpTools',
  'agentls.thinking',
  'agentls.prices',
  'agentls.engines',
  'agentls.diagnostics',
  'agentls.logLevel',
] as const;

/** What a configuration change asks for. */
export function changeAction(affects: (section: string) => boolean): 'restart' | 'reconfigure' | 'none' {
  if (restartSettings.some((s) => affects(s))) {
    return 'restart';
  }
  if (allSettings.some((s) => affects(s))) {
    return 'reconfigure';
  }
  return 'none';
}

/** Where the .vsix keeps the binary for a platform, relative to the extension. */
export function packagedBinary(extensionPath: string, platform: string, arch: string): string {
  const exe = platform === 'win32' ? 'agentls.exe' : 'agentls';
  return path.join(extensionPath, 'bin', `${platform}-${arch}`, exe);
}

/** The binary to run and where the choice came from. */
export interface BinaryChoice {
  command: string;
  source: 'setting' | 'packaged' | 'path';
}

/**
 * resolveBinary picks agentls.path when set (a leading ~ is the home
 * directory), else the binary packaged for this platform when it is there,
 * else `agentls` from PATH.
 */
export function resolveBinary(
  setting: string | undefined,
  extensionPath: string,
  env: { platform: string; arch: string; home: string },
  isExecutable: (p: string) => boolean,
): BinaryChoice {
  const s = (setting ?? '').trim();
  if (s !== '') {
    const expanded = s === '~' || s.startsWith('~/') ? path.join(env.home, s.slice(1)) : s;
    return { command: expanded, source: 'setting' };
  }
  const packaged = packagedBinary(extensionPath, env.platform, env.arch);
  if (isExecutable(packaged)) {
    return { command: packaged, source: 'packaged' };
  }
  return { command: env.platform === 'win32' ? 'agentls.exe' : 'agentls', source: 'path' };
}

/** The arguments of `agentls serve`. */
export function serveArgs(logLevel: unknown): string[] {
  const args = ['serve'];
  if (oneOf(logLevel, ['debug', 'info', 'warn', 'error'] as const)) {
    args.push('--log-level', logLevel);
  }
  return args;
}

/**
 * shownOptions is initializationOptions as the output channel may show
 * them: the values of every MCP server's and engine's env and headers,
 * which may be keys, are left out (only their names are shown).
 */
export function shownOptions(o: InitOptions): string {
  const names = (m: Record<string, string> | undefined): Record<string, string> | undefined =>
    m === undefined ? undefined : Object.fromEntries(Object.keys(m).map((k) => [k, '…']));
  const shown = structuredClone(o);
  for (const s of Object.values(shown.mcpServers ?? {})) {
    s.env = names(s.env);
    s.headers = names(s.headers);
  }
  for (const e of Object.values(shown.engines)) {
    e.env = names(e.env);
  }
  return JSON.stringify(shown);
}
