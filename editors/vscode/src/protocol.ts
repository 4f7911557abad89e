// The wire types of the agentls contract (version 1) that the extension
// sends, receives or answers. Names and shapes follow the contract exactly.

export const Methods = {
  run: 'agent/run',
  stop: 'agent/stop',
  sessions: 'agent/sessions',
  session: 'agent/session',
  deleteSession: 'agent/deleteSession',
  heatSnapshot: 'agent/heatSnapshot',
  codeGraph: 'agent/codeGraph',
  trace: 'agent/trace',
  ping: 'agent/ping',
  mcpServers: 'agent/mcpServers',
  addSubtask: 'agent/addSubtask',
  removeSubtask: 'agent/removeSubtask',
  skipSubtask: 'agent/skipSubtask',
  intents: 'agent/intents',
  models: 'agent/models',
  checkModel: 'agent/checkModel',
  undo: 'agent/undo',
  engines: 'agent/engines',
  showMessageRequest: 'window/showMessageRequest',
  applyEdit: 'workspace/applyEdit',
  readFile: 'agent/readFile',
  runCommand: 'agent/runCommand',
  ask: 'agent/ask',
  taskUpdate: 'agent/taskUpdate',
  heatUpdate: 'agent/heatUpdate',
  didChangeConfiguration: 'workspace/didChangeConfiguration',
} as const;

export interface ReadFileParams {
  path: string;
  uri: string;
}
export interface ReadFileResult {
  content: string;
}

export interface RunCommandParams {
  command: string;
  cwd: string;
  timeoutMs: number;
  /** Variables the command must not inherit: the secrets agentls knows of. */
  unsetEnv?: string[];
}
export interface RunCommandResult {
  exitCode: number;
  output: string;
  timedOut?: boolean;
}

export interface AskParams {
  question: string;
  options?: string[];
}
export interface AskResult {
  answer: string | null;
}

export type TaskState = 'planning' | 'running' | 'waiting' | 'done' | 'failed' | 'stopped' | 'interrupted';
export type SubtaskState = 'pending' | 'running' | 'done' | 'failed' | 'skipped' | 'blocked';

/**
 * What model calls used (docs/PROTOCOL.md §3, Usage and cost): cost only
 * where every call counted has a known price, the context only on a
 * subtask's usage and on a usage event.
 */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  /** US dollars; absent when a call counted has no known price. */
  cost?: number;
  /** The input tokens of the agent's last call: the context it used. */
  contextTokens?: number;
  /** The model's context window, when the price table gives one. */
  contextWindow?: number;
}

/** One step of the checklist a worker keeps with its todo tool. */
export interface Todo {
  content: string;
  /** pending, in_progress or done. */
  status: string;
}

/** One step of the plan an engine reports (ACP's plan entries). */
export interface PlanStep {
  content: string;
  status: string;
  priority?: string;
}

export interface Subtask {
  id: string;
  content: string;
  state: SubtaskState;
  dependsOn?: string[] | null;
  role?: string;
  /** The external agent it runs on; absent: the built-in worker. */
  engine?: string;
  /** The engine's own plan, as it reports it. */
  steps?: PlanStep[] | null;
  result?: string;
  error?: string;
  /** The worker's checklist, as it last set it. */
  todos?: Todo[] | null;
  /** What its model calls used so far; absent before its first call. */
  usage?: Usage;
}

export interface TaskEvent {
  kind: string;
  subtaskId?: string;
  text?: string;
  tool?: string;
  arguments?: unknown;
  ok?: boolean;
  summary?: string;
  path?: string;
  reason?: string;
  question?: string;
  options?: string[];
  answer?: string | null;
  callId?: string;
  /** A todos event's checklist; absent when the worker cleared it. */
  todos?: Todo[] | null;
  inputTokens?: number;
  outputTokens?: number;
  /** A usage event: the task's cost so far, and the context of the call it reports. */
  cost?: number;
  contextTokens?: number;
  contextWindow?: number;
  state?: string;
  /** On the stateChanged event that ends a task: its changes applied and not. */
  applied?: number;
  rejected?: number;
}

export interface TaskUpdateParams {
  taskId: string;
  sessionId: string;
  seq: number;
  state: TaskState;
  subtasks: Subtask[] | null;
  event: TaskEvent;
}

/**
 * A file that goes along with a prompt, whole or some of its lines
 * (docs/PROTOCOL.md §3, Attachments). Sent on agent/run only to an agentls
 * that declares capabilities.experimental.agent.attachments.
 */
export type RunAttachment = FileAttachment | ImageAttachment;

export interface FileAttachment {
  type: 'file';
  /** Workspace-relative, / separators. */
  path: string;
  /** The lines it covers, whole: an end at character 0 leaves its line out. Absent: the whole file. */
  range?: { start: { line: number; character: number }; end: { line: number; character: number } };
}

/** An image: a file of the workspace (path), or its bytes (data, base64, with mimeType). */
export type ImageAttachment =
  | { type: 'image'; path: string; name?: string }
  | { type: 'image'; data: string; mimeType: string; name?: string };

/** The optional features an agentls may declare in capabilities.experimental.agent. */
export const Features = { attachments: 'attachments' } as const;

/** advertised reads capabilities.experimental.agent.<feature> === true of an initialize result. */
export function advertised(result: unknown, feature: string): boolean {
  let v: unknown = result;
  for (const k of ['capabilities', 'experimental', 'agent', feature]) {
    if (typeof v !== 'object' || v === null) {
      return false;
    }
    v = (v as Record<string, unknown>)[k];
  }
  return v === true;
}

export interface RunParams {
  prompt: string;
  taskId?: string;
  sessionId?: string;
  editMode?: string;
  intentId?: string;
  /** Runs this task with another model than the setting's ("provider:name"). */
  model?: string;
  /** Runs every subtask on this engine ("agentls": the built-in worker). */
  engine?: string;
  attachments?: RunAttachment[];
}

export interface Change {
  path: string;
  operation: 'create' | 'update' | 'delete';
  applied: boolean;
  diff: string;
}

export interface RunResult {
  taskId: string;
  sessionId: string;
  state: 'done' | 'failed' | 'stopped';
  summary: string;
  subtasks: Subtask[] | null;
  changes: Change[] | null;
  /** The entries of changes applied, and not applied (refused, conflicted, failed). */
  applied?: number;
  rejected?: number;
  usage: Usage;
}

export interface AddSubtaskParams {
  taskId: string;
  content: string;
  dependsOn?: string[];
}
export interface AddSubtaskResult {
  subtaskId: string;
}
export interface SubtaskParams {
  taskId: string;
  subtaskId: string;
}

export interface IntentInfo {
  id: string;
  name: string;
  status: string;
  ownedScope: string[] | null;
  constraints: string[] | null;
  acceptanceCriteria: string[] | null;
  /** False for a COMPLETED intent: agent/run refuses it. */
  selectable: boolean;
}
export interface IntentsResult {
  intents: IntentInfo[] | null;
  /** Why the intents file cannot be used, when it is broken. */
  error?: string;
}

export interface ModelInfo {
  id: string;
  provider: string;
  name: string;
  displayName?: string;
  current?: boolean;
}
export interface ProviderInfo {
  provider: string;
  url?: string;
  configured: boolean;
  hint?: string;
  models: number;
  problem?: string;
  error?: string;
}
export interface ModelsResult {
  current: string;
  source?: string;
  currentError?: string;
  models: ModelInfo[] | null;
  providers: ProviderInfo[] | null;
}
export interface CheckModelResult {
  model: string;
  source?: string;
  ok: boolean;
  checked?: string;
  problem?: string;
  message: string;
  closest?: string[];
}

export interface UndoParams {
  taskId: string;
  subtaskId?: string;
  sessionId?: string;
  partial?: boolean;
}
export interface UndoFile {
  path: string;
  operation?: string;
  undone: boolean;
  reason?: string;
  lines?: { startLine: number; endLine: number }[];
  diff?: string;
}
export interface UndoResult {
  taskId: string;
  sessionId: string;
  undone: boolean;
  files: UndoFile[] | null;
}

/** window/showMessageRequest (LSP). */
export interface MessageActionItem {
  title: string;
}
export interface ShowMessageRequestParams {
  type: number;
  message: string;
  actions?: MessageActionItem[];
}

export interface HeatNode {
  path: string;
  heat: number;
  inContext: boolean;
  lastAction: 'userProvided' | 'read' | 'write' | 'search' | 'blocked';
  turn: number;
}

export interface HeatSnapshot {
  seq: number;
  nodes: HeatNode[] | null;
}

export interface HeatUpdateParams {
  taskId?: string;
  seq: number;
  updates: HeatNode[] | null;
  removed: string[] | null;
}

/** agent/codeGraph: a file's graph (path), a definition's (symbol), or both. */
export interface CodeGraphParams {
  path?: string;
  symbol?: string;
  depth?: number;
}

export interface CodeGraphNode {
  /** The path for a file, path#Container.Name for a definition, module:… for a module. */
  id: string;
  kind: string;
  path?: string;
  name?: string;
  container?: string;
  language?: string;
}

export interface CodeGraphEdge {
  from: string;
  to: string;
  /** defines, imports, references or calls. */
  kind: string;
  /** How many references a file-to-file edge stands for. */
  count?: number;
}

export interface CodeGraphResult {
  nodes: CodeGraphNode[] | null;
  edges: CodeGraphEdge[] | null;
  truncated?: boolean;
}

export interface SessionTask {
  taskId: string;
  prompt: string;
  state: string;
  usage?: Usage;
}
export interface SessionInfo {
  sessionId: string;
  title: string;
  createdAt: string;
  updatedAt: string;
  /** Its tasks' usage summed. */
  usage?: Usage;
  tasks: SessionTask[] | null;
}
export interface SessionsResult {
  sessions: SessionInfo[] | null;
}
export interface SessionMessage {
  role: string;
  text: string;
  taskId: string;
  subtaskId?: string;
  time: string;
}
export interface SessionResult {
  sessionId: string;
  title: string;
  messages: SessionMessage[] | null;
  tasks: SessionTask[] | null;
}

export interface TraceRange {
  startLine: number;
  endLine: number;
  contentHash: string;
}
export interface TraceEntry {
  id: string;
  time: string;
  intentId: string | null;
  sessionId: string;
  taskId: string;
  subtaskId: string;
  model: string;
  path: string;
  operation: string;
  ranges: TraceRange[] | null;
  fileHash: string;
  /** The MCP tool of an "mcp" entry. */
  tool?: string;
}
export interface TraceResult {
  entries: TraceEntry[] | null;
}

/** experimental.agent of the client capabilities (contract §2). */
export const agentClientCapabilities = { readFile: true, runCommand: true, ask: true } as const;

/** fillAgentCapabilities adds experimental.agent to client capabilities. */
export function fillAgentCapabilities(capabilities: { experimental?: unknown }): void {
  const e = capabilities.experimental;
  const experimental: Record<string, unknown> = typeof e === 'object' && e !== null ? { ...(e as Record<string, unknown>) } : {};
  experimental.agent = { ...agentClientCapabilities };
  capabilities.experimental = experimental;
}

export type MCPServerState = 'notStarted' | 'starting' | 'ready' | 'failed' | 'restarted';

/** One tool of an MCP server, as agent/mcpServers lists it. */
export interface MCPTool {
  /** The name the model calls: mcp__<server>__<tool>. */
  name: string;
  server: string;
  tool: string;
  description?: string;
  readOnly?: boolean;
}

/** One server of agent/mcpServers. */
export interface MCPServerStatus {
  name: string;
  transport: 'stdio' | 'http';
  command?: string;
  args?: string[];
  url?: string;
  state: MCPServerState;
  error?: string;
  restarts: number;
  toolCount: number;
  tools: MCPTool[] | null;
}

export interface MCPServersResult {
  servers: MCPServerStatus[] | null;
}

/** One engine of agent/engines (docs/ENGINES.md). */
export interface EngineInfo {
  name: string;
  builtin: boolean;
  command: string[] | null;
  /** Where the command came from: settings, path, npm-cache. */
  source?: string;
  version?: string;
  isolated: boolean;
  usable: boolean;
  /** Why it cannot be used, when it cannot. */
  reason?: string;
}

export interface EnginesResult {
  engines: EngineInfo[] | null;
}

/** The engine name that runs a task on the built-in worker. */
export const builtinEngine = 'agentls';
