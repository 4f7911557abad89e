// A Go language client for agentls's end-to-end test (e2e.test.mjs): gopls
// (AGENTLS_GOPLS) serves the Go files under refs/, as the Go extension
// would, so that VS Code's reference and definition providers answer the
// questions agentls asks through the agentls extension
// (agent/references, agent/definition). The test bundles this file with
// vscode-languageclient (esbuild) into a package of its own and installs
// it beside agentls's; once gopls answers for refs/ it writes GOPLS_READY.
const fs = require('node:fs');
const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

let client;

exports.activate = async function activate() {
  const gopls = process.env.AGENTLS_GOPLS;
  if (!gopls) {
    return;
  }
  // gopls runs the go command: the test's PATH for it (the extension host
  // gets the PATH of a login shell, which may not have go).
  const env = { ...process.env, PATH: process.env.AGENTLS_GOPLS_PATH || process.env.PATH };
  // GOPLS_LOG: gopls's own log with the RPC trace, for a run kept with KEEP.
  const args = process.env.GOPLS_LOG ? ['-rpc.trace', '-logfile', `${process.env.GOPLS_LOG}.${process.pid}`] : [];
  client = new LanguageClient('gopls-for-tests', 'gopls (test)', { command: gopls, args, options: { env } }, {
    documentSelector: [{ scheme: 'file', language: 'go', pattern: '**/refs/**/*.go' }],
  });
  await client.start();
  // Ready once gopls has loaded the module under refs/: its first load, on
  // the suite's cold caches, may take longer than agentls waits for one
  // answer (5 s), after which agentls answers from its graph instead.
  const ready = process.env.GOPLS_READY;
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (ready && folder) {
    const probe = vscode.Uri.joinPath(folder.uri, 'refs', 'one', 'reader.go');
    for (let i = 0; i < 120; i++) {
      const found = await vscode.commands.executeCommand('vscode.executeReferenceProvider', probe, new vscode.Position(2, 5));
      if (Array.isArray(found) && found.length > 0) {
        fs.writeFileSync(ready, 'ready\n');
        return;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }
};

exports.deactivate = function deactivate() {
  return client === undefined ? undefined : client.stop();
};
