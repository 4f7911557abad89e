// The packaging test: each platform .vsix that scripts/package.sh wrote
// holds the bundled extension and the agentls binary for its platform, and
// nothing else; the binary is the right executable for the platform,
// static, stripped and stamped with the version.
//
// Environment: VSIX_DIR (where scripts/package.sh wrote the packages;
// default dist/vscode of the repository), TARGETS (the targets it built,
// as scripts/package.sh takes them; default all five), VERSION (the version the binaries
// must carry; default: git describe --tags --always --dirty, as
// scripts/package.sh stamps them).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { builtinModules } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { executable, goBuildInfo, readZip } from './formats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const extDir = path.resolve(here, '../..');
const dir = process.env.VSIX_DIR || path.resolve(extDir, '../../dist/vscode');
const { version: extVersion } = JSON.parse(fs.readFileSync(path.join(extDir, 'package.json'), 'utf8'));

const allTargets = [
  { target: 'linux-x64', goos: 'linux', goarch: 'amd64', format: 'elf', arch: 'x86-64', exe: 'agentls' },
  { target: 'linux-arm64', goos: 'linux', goarch: 'arm64', format: 'elf', arch: 'arm64', exe: 'agentls' },
  { target: 'darwin-x64', goos: 'darwin', goarch: 'amd64', format: 'macho', arch: 'x86-64', exe: 'agentls' },
  { target: 'darwin-arm64', goos: 'darwin', goarch: 'arm64', format: 'macho', arch: 'arm64', exe: 'agentls' },
  { target: 'win32-x64', goos: 'windows', goarch: 'amd64', format: 'pe', arch: 'x86-64', exe: 'agentls.exe' },
];
const wanted = (process.env.TARGETS || '').split(/\s+/).filter(Boolean);
for (const w of wanted) {
  assert.ok(allTargets.some((t) => t.target === w), `TARGETS names ${w}, which is not a platform of the extension`);
}
const targets = wanted.length > 0 ? allTargets.filter((t) => wanted.includes(t.target)) : allTargets;

const packages = new Map();

/** open reads a target's package once: its entries by name and its binary. */
function open(t) {
  if (!packages.has(t.target)) {
    const file = path.join(dir, `agentls-${t.target}-${extVersion}.vsix`);
    assert.ok(fs.existsSync(file), `${file} is missing: run scripts/package.sh`);
    const entries = new Map(readZip(fs.readFileSync(file)).map((e) => [e.name, e]));
    const bin = entries.get(`extension/bin/${t.target}/${t.exe}`);
    packages.set(t.target, { file, entries, bin, binary: bin?.read() });
  }
  return packages.get(t.target);
}

/** The version the binaries carry: VERSION, else what git describe says. */
function expectedVersion() {
  if (process.env.VERSION) {
    return process.env.VERSION;
  }
  const r = spawnSync('git', ['describe', '--tags', '--always', '--dirty'], { cwd: extDir, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : '';
}

/**
 * stamped tells whether s is in the binary outside its Go build
 * information, where a commit hash may be as the vcs.revision setting.
 */
function stamped(binary, s) {
  const info = goBuildInfo(binary);
  const needle = Buffer.from(s);
  for (let at = binary.indexOf(needle); at >= 0; at = binary.indexOf(needle, at + 1)) {
    if (at < info.start || at >= info.end) {
      return true;
    }
  }
  return false;
}

describe('the platform packages', () => {
  const version = expectedVersion();

  it(`are stamped with a real version (${version})`, () => {
    assert.notEqual(version, 'dev');
    assert.notEqual(version, '');
  });

  for (const t of targets) {
    describe(t.target, () => {
      let pkg;
      before(() => {
        pkg = open(t);
      });

      it('holds the manifest, package.json, README, CHANGELOG, the icons, the bundles, the view\'s style sheet and its binary, and nothing else', () => {
        assert.deepEqual([...pkg.entries.keys()].sort(), [
          '[Content_Types].xml',
          'extension.vsixmanifest',
          `extension/bin/${t.target}/${t.exe}`,
          'extension/changelog.md',
          'extension/dist/extension.js',
          'extension/dist/webview.js',
          'extension/media/agentls.svg',
          'extension/media/conversation.css',
          'extension/package.json',
          'extension/readme.md',
        ]);
      });

      it('is named by the install instructions of both READMEs', () => {
        const name = path.basename(pkg.file);
        assert.ok(fs.readFileSync(path.join(extDir, 'README.md'), 'utf8').includes(`\`${name}\``), `editors/vscode/README.md does not name ${name}`);
        if (t.target === 'linux-x64') {
          const readme = fs.readFileSync(path.join(extDir, '../../README.md'), 'utf8');
          assert.ok(readme.includes(`code --install-extension dist/vscode/${name}`), `README.md does not install ${name}`);
        }
      });

      it('weighs what the README says a package and its binary weigh', () => {
        // The README states both as ranges of MB (10^6 bytes): what make
        // vsix produces, held to every package built, so the figure cannot drift.
        const readme = fs.readFileSync(path.join(extDir, 'README.md'), 'utf8').replace(/\s+/g, ' ');
        const stated = /(\d+(?:\.\d+)?) to (\d+(?:\.\d+)?) MB a package, its binary (\d+(?:\.\d+)?) to (\d+(?:\.\d+)?) MB/.exec(readme);
        assert.ok(stated, 'editors/vscode/README.md states "N to M MB a package, its binary N to M MB"');
        const [pkgLow, pkgHigh, binLow, binHigh] = stated.slice(1).map(Number);
        const mb = (n) => Math.round(n / 1e4) / 100;
        const size = mb(fs.statSync(pkg.file).size);
        const binary = mb(pkg.binary.length);
        assert.ok(size >= pkgLow && size <= pkgHigh, `${path.basename(pkg.file)} is ${size} MB; the README says ${pkgLow} to ${pkgHigh} MB`);
        assert.ok(binary >= binLow && binary <= binHigh, `its binary is ${binary} MB; the README says ${binLow} to ${binHigh} MB`);
      });

      it(`is marked for ${t.target} in its manifest`, () => {
        const manifest = pkg.entries.get('extension.vsixmanifest').read().toString('utf8');
        assert.match(manifest, new RegExp(`TargetPlatform="${t.target}"`));
      });

      it('starts from the bundle, which needs only vscode and Node\'s own modules', () => {
        const manifest = JSON.parse(pkg.entries.get('extension/package.json').read().toString('utf8'));
        assert.equal(manifest.main, './dist/extension.js');
        const bundle = pkg.entries.get('extension/dist/extension.js').read().toString('utf8');
        const required = new Set([...bundle.matchAll(/\brequire\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1]));
        const foreign = [...required].filter((m) => m !== 'vscode' && !builtinModules.includes(m.replace(/^node:/, '')));
        assert.deepEqual(foreign, [], 'every npm package is inside the bundle');
        assert.ok(required.has('vscode'));
        assert.doesNotMatch(bundle, /sourceMappingURL/, 'no source map is referred to, none is packaged');
      });

      it('gives the conversation view a script and a style sheet that load nothing from elsewhere', () => {
        const script = pkg.entries.get('extension/dist/webview.js').read().toString('utf8');
        const style = pkg.entries.get('extension/media/conversation.css').read().toString('utf8');
        assert.doesNotMatch(script, /\brequire\(|\bimport\(|https?:\/\//, 'the view\'s script is one self-contained bundle');
        assert.doesNotMatch(style, /url\(|@import|https?:\/\//, 'the style sheet loads no font, image or other sheet');
        assert.match(script, /acquireVsCodeApi/);
      });

      it(`carries an executable ${t.format} ${t.arch} binary`, () => {
        assert.ok(pkg.binary, `no bin/${t.target}/${t.exe}`);
        const x = executable(pkg.binary);
        assert.equal(x.format, t.format);
        assert.equal(x.arch, t.arch);
        assert.equal(x.image, true, 'an executable image');
        assert.equal(pkg.bin.mode, 0o755, 'installed executable: VS Code keeps the zip\'s mode');
        if (t.target === 'darwin-arm64') {
          assert.equal(x.signed, true, 'macOS on arm64 runs only signed code: the Go linker signs it ad hoc');
        }
      });

      it('is stripped: no symbol table, no debug information', () => {
        const x = executable(pkg.binary);
        assert.equal(x.symbols, 0, 'symbols defined in the symbol table');
        assert.deepEqual(x.debug, []);
      });

      it(`was built for ${t.goos}/${t.goarch}, static and -trimpath, and stamped with the version`, () => {
        const { settings } = goBuildInfo(pkg.binary);
        assert.equal(settings.GOOS, t.goos);
        assert.equal(settings.GOARCH, t.goarch);
        assert.equal(settings.CGO_ENABLED, '0');
        assert.equal(settings['-trimpath'], 'true');
        assert.ok(stamped(pkg.binary, version), `${version} is not in the binary (-X main.version)`);
      });

      const host = `${process.platform}-${process.arch}`;
      if (t.target === host) {
        it('runs here and reports its version', () => {
          const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agentls-package-'));
          try {
            const exe = path.join(tmp, t.exe);
            fs.writeFileSync(exe, pkg.binary, { mode: 0o755 });
            const r = spawnSync(exe, ['version'], { encoding: 'utf8', timeout: 10000 });
            assert.equal(r.status, 0, r.stderr);
            assert.equal(r.stdout, `agentls ${version}\n`);
          } finally {
            fs.rmSync(tmp, { recursive: true, force: true });
          }
        });
      }
    });
  }
});
