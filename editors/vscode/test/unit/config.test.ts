import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import * as fs from 'node:fs';
import { allSettings, changeAction, initOptions, mergeLayers, packagedBinary, resolveBinary, restartSettings, serveArgs, SettingLayers, settingsSource, shownOptions } from '../../src/config';

function source(values: Record<string, unknown>): { get(k: string): unknown } {
  return { get: (k) => values[k] };
}

describe('initOptions', () => {
  it('sends thinking with the budget asked for, and a bad budget as the default one', () => {
    assert.deepEqual(initOptions(source({ thinking: { enabled: true } }), true).options.thinking, { enabled: true });
    const { options, problems } = initOptions(source({ thinking: { enabled: true, budgetTokens: 999999 } }), true);
    assert.deepEqual(options.thinking, { enabled: true, budgetTokens: 4096 });
    assert.equal(problems[0]?.key, 'agentls.thinking');
  });

  it('keeps the good prices and engines beside a bad one', () => {
    const { options, problems } = initOptions(source({
      prices: { 'openai:gpt-4.1': { input: 2, output: 8 }, bad: { input: 1 } },
      engines: { codex: { disabled: true }, broken: {} },
    }), true);
    assert.deepEqual(options.prices, { 'openai:gpt-4.1': { input: 2, output: 8 } });
    assert.deepEqual(options.engines, { codex: { disabled: true } });
    assert.deepEqual(problems.map((p) => p.key), ['agentls.prices', 'agentls.engines']);
  });

  it('sends the contract defaults when nothing is set', () => {
    const { options, problems } = initOptions(source({}), true);
    assert.deepEqual(problems, []);
    assert.deepEqual(options, {
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
    });
    assert.equal('model' in options, false, 'an unset model lets the server pick from the environment');
  });

  it('passes every valid setting through', () => {
    const { options, problems } = initOptions(source({
      model: ' script:/tmp/s.json ',
      editMode: 'apply',
      maxWorkers: 5,
      commands: 'allow',
      allowCommands: ['go test', '  ', 'npm test '],
      zones: { allow: ['src/**'], deny: ['secrets/**'] },
      commandTimeoutMs: 5000,
      commandEnv: { pass: ['GITHUB_TOKEN'] },
      thinking: { enabled: true, budgetTokens: 2048 },
      prices: { 'script:/tmp/s.json': { input: 3, output: 15, contextWindow: 200000 } },
      engines: { claude: { env: { HOME: '/tmp/h' } }, fake: { command: ['/bin/fake', 'acp'], isolate: false } },
      diagnostics: { waitMs: 500, commands: { go: 'go vet ./...', python: ' ' } },
    }), true);
    assert.deepEqual(problems, []);
    assert.deepEqual(options, {
      model: 'script:/tmp/s.json',
      editMode: 'apply',
      maxWorkers: 5,
      commands: 'allow',
      allowCommands: ['go test', 'npm test'],
      zones: { allow: ['src/**'], deny: ['secrets/**'] },
      timeouts: { commandMs: 5000 },
      commandEnv: { pass: ['GITHUB_TOKEN'] },
      thinking: { enabled: true, budgetTokens: 2048 },
      prices: { 'script:/tmp/s.json': { input: 3, output: 15, contextWindow: 200000 } },
      engines: { claude: { env: { HOME: '/tmp/h' } }, fake: { command: ['/bin/fake', 'acp'], isolate: false } },
      diagnostics: { waitMs: 500, commands: { go: 'go vet ./...' } },
      workspaceTrust: 'trusted',
    });
  });

  const bad: [string, Record<string, unknown>, string][] = [
    ['a model without a provider is reported and left unset', { model: 'gpt-4' }, 'agentls.model'],
    ['an unknown edit mode falls back to propose', { editMode: 'yolo' }, 'agentls.editMode'],
    ['a diagnostics wait past five minutes keeps the default', { diagnostics: { waitMs: 300001 } }, 'agentls.diagnostics'],
    ['a diagnostics command for a language agentls does not know is left out', { diagnostics: { commands: { golang: 'go vet' } } }, 'agentls.diagnostics'],
    ['zero workers fall back to 3', { maxWorkers: 0 }, 'agentls.maxWorkers'],
    ['fractional workers fall back to 3', { maxWorkers: 2.5 }, 'agentls.maxWorkers'],
    ['too many workers fall back to 3', { maxWorkers: 65 }, 'agentls.maxWorkers'],
    ['an unknown command policy falls back to ask', { commands: 'sometimes' }, 'agentls.commands'],
    ['allowCommands that is not a list is dropped', { allowCommands: 'go test' }, 'agentls.allowCommands'],
    ['zones that are a list fall back to the defaults', { zones: ['**'] }, 'agentls.zones'],
    ['zones.deny that is not a list of globs keeps the default', { zones: { deny: [1] } }, 'agentls.zones'],
    ['a command timeout under a second is refused', { commandTimeoutMs: 10 }, 'agentls.commandTimeoutMs'],
    ['thinking that is not an object leaves thinking off', { thinking: true }, 'agentls.thinking'],
    ['a thinking budget under 1024 leaves disabled thinking off', { thinking: { enabled: false, budgetTokens: 10 } }, 'agentls.thinking'],
    ['a price for a model without a provider is left out', { prices: { 'gpt-4': { input: 1 } } }, 'agentls.prices'],
    ['a negative price is left out', { prices: { 'openai:gpt-4.1': { input: -1 } } }, 'agentls.prices'],
    ['a price with an unknown key is left out', { prices: { 'openai:gpt-4.1': { inputs: 1 } } }, 'agentls.prices'],
    ['prices that are a list are left out', { prices: [] }, 'agentls.prices'],
    ['an engine of no built-in name needs a command', { engines: { goose: { env: {} } } }, 'agentls.engines'],
    ['an engine whose command is a string is left out', { engines: { claude: { command: 'claude-agent-acp' } } }, 'agentls.engines'],
    ['the built-in worker is not an engine to configure', { engines: { agentls: { command: ['x'] } } }, 'agentls.engines'],
    ['engines that are a list are left out', { engines: ['claude'] }, 'agentls.engines'],
    ['commandEnv that is a list passes no secret', { commandEnv: ['GITHUB_TOKEN'] }, 'agentls.commandEnv'],
    ['commandEnv with an unknown key passes no secret', { commandEnv: { pass: [], allow: ['X'] } }, 'agentls.commandEnv'],
    ['commandEnv.pass with no variable name passes no secret', { commandEnv: { pass: ['A=B'] } }, 'agentls.commandEnv'],
  ];
  for (const [name, values, key] of bad) {
    it(name, () => {
      const { options, problems } = initOptions(source(values), true);
      assert.equal(problems.length, 1);
      assert.equal(problems[0]?.key, key);
      const defaults = initOptions(source({}), true).options;
      assert.deepEqual(options, defaults, 'the bad value is replaced by its default');
    });
  }
});

describe('changeAction', () => {
  const affects = (...keys: string[]) => (s: string): boolean => keys.includes(s);
  it('restarts the process when the binary changes', () => {
    assert.equal(changeAction(affects('agentls.path')), 'restart');
  });
  it('restarts the process when the log level changes', () => {
    assert.equal(changeAction(affects('agentls.logLevel', 'agentls.model')), 'restart');
  });
  it('reconfigures the running process when a task setting changes', () => {
    assert.equal(changeAction(affects('agentls.editMode')), 'reconfigure');
    assert.equal(changeAction(affects('agentls.zones')), 'reconfigure');
  });
  it('ignores changes to other extensions\' settings', () => {
    assert.equal(changeAction(affects('editor.fontSize')), 'none');
  });
});

describe('the settings in package.json', () => {
  // out/test/unit/config.test.js → the extension's folder.
  const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '../../../package.json'), 'utf8')) as {
    contributes: { configuration: { properties: Record<string, { scope?: string }> } };
  };
  const props = manifest.contributes.configuration.properties;
  it('are the settings agentls takes, and the extension\'s own saveBeforeCommand', () => {
    assert.deepEqual(Object.keys(props).sort(), [...allSettings, 'agentls.saveBeforeCommand'].sort());
  });
  it('let a folder of a multi-root workspace set what its own agentls does, but the process and the shared command runner', () => {
    const perProcess: readonly string[] = [...restartSettings, 'agentls.saveBeforeCommand'];
    for (const [key, p] of Object.entries(props)) {
      if (perProcess.includes(key)) {
        assert.notEqual(p.scope, 'resource', `${key} is the same for every folder`);
      } else {
        assert.equal(p.scope, 'resource', `${key} is read per folder`);
      }
    }
  });
});

describe('resolveBinary', () => {
  const env = { platform: 'linux', arch: 'x64', home: '/home/u' };
  const ext = '/ext/agentls';
  it('uses agentls.path when it is set', () => {
    assert.deepEqual(resolveBinary('/opt/agentls', ext, env, () => true), { command: '/opt/agentls', source: 'setting' });
  });
  it('expands a leading ~ in agentls.path', () => {
    assert.deepEqual(resolveBinary('~/bin/agentls', ext, env, () => false), { command: '/home/u/bin/agentls', source: 'setting' });
  });
  it('uses the packaged binary of the platform when there is one', () => {
    const want = path.join(ext, 'bin', 'linux-x64', 'agentls');
    assert.deepEqual(resolveBinary('', ext, env, (p) => p === want), { command: want, source: 'packaged' });
  });
  it('falls back to agentls on PATH when nothing is packaged for the platform', () => {
    assert.deepEqual(resolveBinary(undefined, ext, { ...env, arch: 'arm64' }, (p) => p === packagedBinary(ext, 'linux', 'x64')), {
      command: 'agentls',
      source: 'path',
    });
  });
  it('looks for agentls.exe on Windows', () => {
    assert.equal(packagedBinary('C:/ext', 'win32', 'x64').endsWith('agentls.exe'), true);
  });
});

describe('serveArgs', () => {
  it('passes a known log level', () => {
    assert.deepEqual(serveArgs('debug'), ['serve', '--log-level', 'debug']);
  });
  it('leaves an unknown log level to the server default', () => {
    assert.deepEqual(serveArgs('loud'), ['serve']);
  });
});

describe('settingsSource', () => {
  it('reads a price whose model has a dot from the setting\'s layers, the folder\'s entry over the user\'s', () => {
    const layers: Record<string, unknown> = {
      prices: {
        defaultValue: {},
        globalValue: { 'openai:gpt-4.1-mini': { input: 0.4, output: 1.6 }, 'anthropic:claude-sonnet-4-5': { input: 3, output: 15 } },
        workspaceFolderValue: { 'openai:gpt-4.1-mini': { input: 1, output: 2 } },
      },
      editMode: { defaultValue: 'propose' },
    };
    const cfg = {
      // As VS Code's get() gives an object whose keys have dots: without them.
      get: (k: string): unknown => (k === 'prices' ? {} : k === 'editMode' ? 'apply' : undefined),
      inspect: (k: string) => layers[k] as SettingLayers | undefined,
    };
    const { options } = initOptions(settingsSource(cfg), true);
    assert.deepEqual(options.prices, { 'openai:gpt-4.1-mini': { input: 1, output: 2 }, 'anthropic:claude-sonnet-4-5': { input: 3, output: 15 } });
    assert.equal(options.editMode, 'apply', 'the other settings as VS Code gives them');
  });

  it('lets a layer that is not an object stand alone, to be reported', () => {
    assert.deepEqual(mergeLayers({ defaultValue: {}, globalValue: ['x'] }), ['x']);
    assert.deepEqual(mergeLayers({ defaultValue: {}, globalValue: ['x'], workspaceValue: { a: 1 } }), { a: 1 });
    assert.equal(mergeLayers(undefined), undefined);
  });
});

describe('shownOptions', () => {
  it('shows the settings without the values of env and headers, which may be keys', () => {
    const { options } = initOptions({
      get: (k: string) =>
        ({
          mcpServers: { gh: { url: 'https://x/mcp', headers: { Authorization: 'Bearer sk-secret-1' } }, fs: { command: 'npx', env: { TOKEN: 'sk-secret-2' } } },
          engines: { claude: { env: { ANTHROPIC_API_KEY: 'sk-secret-3' } } },
        })[k],
    }, true);
    const shown = shownOptions(options);
    assert.doesNotMatch(shown, /sk-secret/);
    assert.match(shown, /"Authorization":"…"/);
    assert.match(shown, /"TOKEN":"…"/);
    assert.match(shown, /"ANTHROPIC_API_KEY":"…"/);
    assert.equal(options.mcpServers?.gh.headers?.Authorization, 'Bearer sk-secret-1', 'the options sent keep their values');
  });
});
