// The ACP SDK's client, as an editor would use it: it starts
// `<agentls> acp` over stdio, initializes with fs (no terminal), opens a
// session on the workspace, sends one prompt, writes the files it is asked
// to write, approves every change it is asked about, and records every
// update. It prints what it saw as one JSON line.
//
//   node client.mjs <agentls binary> <workspace root> <prompt> [sessions]
//
// With sessions (1 by default), it authenticates first, opens that many
// sessions on the root, one after the other, and prompts each:
// stopReasons has each prompt's stop reason (or its error's message), and
// models each session's older model selection.
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [bin, root, prompt, sessionsArg] = process.argv.slice(2);
const sessions = Number(sessionsArg ?? "1");
const agentProcess = spawn(bin, ["acp"], { stdio: ["pipe", "pipe", "inherit"], env: process.env });
const exited = new Promise((resolve) => agentProcess.on("exit", (code) => resolve(code)));

const out = { updates: [], reads: [], writes: [], permissions: [] };
const app = acp
  .client()
  .onRequest("fs/read_text_file", ({ params }) => {
    out.reads.push(params.path);
    return { content: readFileSync(params.path, "utf8") };
  })
  .onRequest("fs/write_text_file", ({ params }) => {
    out.writes.push({ path: params.path, content: params.content });
    writeFileSync(params.path, params.content);
    return {};
  })
  .onRequest("session/request_permission", ({ params }) => {
    const diffs = (params.toolCall.content ?? []).filter((c) => c.type === "diff");
    out.permissions.push({
      toolCallId: params.toolCall.toolCallId,
      title: params.toolCall.title,
      diffs: diffs.map((d) => ({ path: d.path, oldText: d.oldText ?? null, newText: d.newText })),
      options: params.options.map((o) => `${o.name}:${o.kind}`),
    });
    const allow = params.options.find((o) => o.kind === "allow_once");
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  })
  .onNotification("session/update", ({ params }) => {
    const u = params.update;
    const entry = { kind: u.sessionUpdate };
    switch (u.sessionUpdate) {
      case "tool_call":
      case "tool_call_update":
        entry.toolCallId = u.toolCallId;
        if (u.title) entry.title = u.title;
        if (u.status) entry.status = u.status;
        if (u.content) entry.content = u.content.map((c) => c.type);
        break;
      case "plan":
        entry.entries = u.entries.map((e) => `${e.content}:${e.status}`);
        break;
      case "agent_message_chunk":
      case "agent_thought_chunk":
        entry.text = u.content.text;
        break;
    }
    out.updates.push(entry);
  });

const stream = acp.ndJsonStream(Writable.toWeb(agentProcess.stdin), Readable.toWeb(agentProcess.stdout));
await app.connectWith(stream, async (agent) => {
  const init = await agent.request("initialize", {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
    clientInfo: { name: "acp-sdk-test-client", version: "1.0.0" },
  });
  out.protocolVersion = init.protocolVersion;
  out.agent = init.agentInfo?.name;
  await agent.request("authenticate", { methodId: init.authMethods[0].id });
  out.authenticated = true;
  out.stopReasons = [];
  out.models = [];
  for (let i = 0; i < sessions; i++) {
    const session = await agent.request("session/new", { cwd: root, mcpServers: [] });
    out.mode ??= session.modes?.currentModeId;
    out.models.push(session.models?.currentModelId ?? null);
    try {
      const res = await agent.request("session/prompt", {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: prompt }],
      });
      out.stopReasons.push(res.stopReason);
      out.stopReason ??= res.stopReason;
      out.meta ??= res._meta?.agentls ?? null;
    } catch (e) {
      out.stopReasons.push(`error: ${e.message}`);
    }
  }
});
agentProcess.stdin.end();
out.exitCode = await exited;
console.log(JSON.stringify(out));
