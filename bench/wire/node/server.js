// Echo server written with vscode-jsonrpc, the Node library under most
// language servers: the baseline of the agentls transport benchmark
// (bench/wire/driver). It answers the same four methods as agentls and the
// stock jsonrpc2 server, over stdin/stdout with the LSP base protocol framing.
'use strict';

const {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  ResponseError,
} = require('vscode-jsonrpc/node');

const connection = createMessageConnection(
  new StreamMessageReader(process.stdin),
  new StreamMessageWriter(process.stdout),
);

let initialized = false;
let shutdown = false;

function requireInitialized() {
  if (!initialized) {
    throw new ResponseError(-32002, 'server not initialized');
  }
}

connection.onRequest('initialize', () => {
  initialized = true;
  return { capabilities: {}, serverInfo: { name: 'vscode-jsonrpc-echo' } };
});

connection.onNotification('initialized', () => {});

connection.onRequest('agent/ping', (params) => {
  requireInitialized();
  return { data: params === undefined || params.data === undefined ? null : params.data };
});

connection.onRequest('shutdown', () => {
  requireInitialized();
  shutdown = true;
  return null;
});

connection.onNotification('exit', () => {
  process.exit(shutdown ? 0 : 1);
});

connection.onClose(() => {
  process.exit(shutdown ? 0 : 1);
});

connection.listen();
