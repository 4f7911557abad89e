// The wire types of the agentls contract (version 1) as the extension uses
// them. Every method name and every params, result and event type is
// package api's, written as TypeScript into protocol.gen.ts (go test
// ./api/internal/tsgen -update rewrites it after a change of api); this file
// re-exports them beside what is the extension's own: the shape of the
// attachments it sends, and the capabilities it reads and declares.
import type { AgentClientCapabilities, AgentServerCapabilities } from './protocol.gen';

export * from './protocol.gen';

/**
 * A file that goes along with a prompt, whole or some of its lines
 * (docs/PROTOCOL.md §3, Attachments). Sent on agent/run only to an agentls
 * that declares capabilities.experimental.agent.attachments. Narrower than
 * api's one Attachment type, which takes every kind in one shape: each is
 * one, and RunParams.attachments holds it, so the build fails when api
 * stops taking what the extension sends.
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
export const Features = { attachments: 'attachments' } as const satisfies Record<string, keyof AgentServerCapabilities>;

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

/**
 * experimental.agent of the client capabilities (contract §2): references
 * and definition are answered by VS Code's providers (handlers/locate.ts),
 * diagnostics by languages.getDiagnostics (handlers/diagnostics.ts).
 */
export const agentClientCapabilities = {
  readFile: true, runCommand: true, ask: true, references: true, definition: true, diagnostics: true,
} as const satisfies AgentClientCapabilities;

/** fillAgentCapabilities adds experimental.agent to client capabilities. */
export function fillAgentCapabilities(capabilities: { experimental?: unknown }): void {
  const e = capabilities.experimental;
  const experimental: Record<string, unknown> = typeof e === 'object' && e !== null ? { ...(e as Record<string, unknown>) } : {};
  experimental.agent = { ...agentClientCapabilities };
  capabilities.experimental = experimental;
}

/** The engine name that runs a task on the built-in worker (api.EngineBuiltin). */
export const builtinEngine = 'agentls';
