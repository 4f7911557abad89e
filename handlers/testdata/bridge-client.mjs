// The TypeScript SDK's MCP client, as an external agent would use it: it
// starts the entry agentls handed out (`agentls mcp` with its environment)
// over stdio, lists the tools and calls read, edit and run-command. It
// prints what it got as one JSON line.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const entry = JSON.parse(readFileSync(process.argv[2], "utf8"));
const transport = new StdioClientTransport({
  command: entry.command,
  args: entry.args,
  env: { PATH: process.env.PATH, ...entry.env },
  stderr: "inherit",
});
const client = new Client({ name: "agentls-bridge-test", version: "1.0.0" });
await client.connect(transport);
const text = (r) => ({ isError: !!r.isError, text: r.content.map((c) => c.text).join("\n") });
const out = {};
out.tools = (await client.listTools()).tools.map((t) => t.name).sort();
out.read = text(await client.callTool({ name: "read_file", arguments: { path: "notes.txt" } }));
out.readMain = text(await client.callTool({ name: "read_file", arguments: { path: "main.go" } }));
out.edit = text(await client.callTool({
  name: "edit_file",
  arguments: { path: "main.go", old_string: "func main() {}", new_string: 'func main() { println("bridged") }' },
}));
out.run = text(await client.callTool({ name: "run_command", arguments: { command: "echo bridged-command" } }));
out.outside = text(await client.callTool({ name: "read_file", arguments: { path: "../../etc/passwd" } }));
console.log(JSON.stringify(out));
await client.close();
