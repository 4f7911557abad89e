package engines

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/agentls/agentls/api"
)

// builtin is how agentls finds and starts one of the built-in engines.
type builtin struct {
	name string
	// bins are the names the agent's npm package installs on PATH.
	bins []string
	// packages are its npm packages, the preferred first.
	packages []string
	// args follow the program (gemini's ACP mode).
	args []string
	// keys are the secret variables of agentls's environment the agent
	// needs (its provider's keys): it inherits these and no other secret.
	keys []string
	// install says how to get it.
	install string
	// agentNames are the names it gives itself at initialize (agentInfo).
	agentNames []string
	// isolate decides, from the package and its version, whether the agent
	// writes the disk or runs commands itself; known is false when that
	// cannot be told without its version.
	isolate func(pkg, version string) (isolated, known bool)
}

// is reports whether the npm package pkg is this agent's (its native
// builds, @zed-industries/codex-acp-linux-x64 and the like, included).
func (b builtin) is(pkg string) bool {
	for _, p := range b.packages {
		if pkg == p || strings.HasPrefix(pkg, p+"-") {
			return true
		}
	}
	return false
}

var builtins = map[string]builtin{
	api.EngineClaude: {
		name:       api.EngineClaude,
		bins:       []string{"claude-agent-acp", "claude-code-acp"},
		packages:   []string{"@agentclientprotocol/claude-agent-acp", "@zed-industries/claude-agent-acp", "@zed-industries/claude-code-acp"},
		keys:       []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"},
		install:    "npm install -g @zed-industries/claude-agent-acp",
		agentNames: []string{"@agentclientprotocol/claude-agent-acp", "@zed-industries/claude-agent-acp", "@zed-industries/claude-code-acp"},
		// Up to 0.17 its Read, Write and Edit go through ACP's fs methods;
		// from 0.18 it writes the disk and runs Bash itself (the package
		// @agentclientprotocol/claude-agent-acp began after 0.18).
		isolate: func(pkg, version string) (bool, bool) {
			switch {
			case pkg == "@agentclientprotocol/claude-agent-acp":
				return true, true
			case version == "":
				return true, false
			}
			return compareVersions(version, "0.18.0") >= 0, true
		},
	},
	api.EngineCodex: {
		name:       api.EngineCodex,
		bins:       []string{"codex-acp"},
		packages:   []string{"@agentclientprotocol/codex-acp", "@zed-industries/codex-acp"},
		keys:       []string{"OPENAI_API_KEY", "CODEX_API_KEY"},
		install:    "npm install -g @zed-industries/codex-acp",
		agentNames: []string{"codex-acp"},
		// It runs exec and apply_patch itself.
		isolate: func(string, string) (bool, bool) { return true, true },
	},
	api.EngineGemini: {
		name:       api.EngineGemini,
		bins:       []string{"gemini"},
		packages:   []string{"@google/gemini-cli"},
		args:       []string{"--experimental-acp"},
		keys:       []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"},
		install:    "npm install -g @google/gemini-cli",
		agentNames: []string{"gemini-cli"},
		// write_file and replace go through fs/write_text_file after a
		// permission; its shell asks for a permission too.
		isolate: func(string, string) (bool, bool) { return false, true },
	},
}

// Sources of a resolved command.
const (
	SourceSettings = "settings"
	SourcePath     = "path"
	SourceNPMCache = "npm-cache"
)

// Resolved is an engine as agentls would start it.
type Resolved struct {
	Name    string
	Builtin bool
	Command []string
	Source  string
	// Package and Version name the npm package the command runs, when
	// known (a launcher's, npx's or pnpm dlx's, is never its own): Version
	// is "" when it cannot be known without starting the agent.
	Package string
	Version string
	Env     map[string]string
	// Keys are the secret variables the engine may inherit.
	Keys []string
	// Agent is the built-in engine whose agent the command runs (claude,
	// codex, gemini), as its package, its program's name or its engine's
	// name tell; "" when none of them does.
	Agent string
	// Isolated says whether it runs in a worktree of its own. When
	// IsolateAtStart is set the version that decides it is unknown:
	// Isolated is the safe guess, and the agent's own initialize answer
	// (its name and version) decides when it starts.
	Isolated       bool
	IsolateAtStart bool
	// Err says why it cannot be started (nil: usable).
	Err error
}

// Info is the engine as agent/engines lists it.
func (r Resolved) Info() api.EngineInfo {
	info := api.EngineInfo{Name: r.Name, Builtin: r.Builtin, Command: r.Command, Source: r.Source,
		Version: r.Version, Isolated: r.Isolated, Usable: r.Err == nil}
	if info.Command == nil {
		info.Command = []string{}
	}
	if r.Err != nil {
		info.Reason = r.Err.Error()
	} else if r.Version == "" {
		info.Note = "version unknown: the package its command runs cannot be told without starting it"
		if r.IsolateAtStart {
			info.Note += "; whether it runs isolated is decided when it starts, from the version it gives"
		}
	}
	return info
}

// Lookup is where discovery looks: PATH, npm's cache and the process's
// environment. Tests replace it.
type Lookup struct {
	// LookPath finds a program on PATH (nil: exec.LookPath).
	LookPath func(string) (string, error)
	// Getenv reads the environment (nil: os.Getenv).
	Getenv func(string) string
	// NPMCache is npm's cache directory (""; $npm_config_cache, else
	// ~/.npm).
	NPMCache string
}

func (l Lookup) lookPath(name string) (string, error) {
	if l.LookPath != nil {
		return l.LookPath(name)
	}
	return exec.LookPath(name)
}

func (l Lookup) getenv(name string) string {
	if l.Getenv != nil {
		return l.Getenv(name)
	}
	return os.Getenv(name)
}

func (l Lookup) npmCache() string {
	if l.NPMCache != "" {
		return l.NPMCache
	}
	if c := l.getenv("npm_config_cache"); c != "" {
		return c
	}
	if h := l.getenv("HOME"); h != "" {
		return filepath.Join(h, ".npm")
	}
	return ""
}

// Names returns every engine the settings and the built-ins name, sorted,
// the disabled ones left out.
func Names(configs map[string]api.EngineConfig) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range api.BuiltinEngines {
		if !configs[n].Disabled {
			seen[n] = true
			out = append(out, n)
		}
	}
	for n, c := range configs {
		if !seen[n] && !c.Disabled {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Resolve finds how to start the engine name: its configured command, or
// for a built-in engine without one, its program on PATH, else its newest
// install in npm's cache (what npx left there). The result's Err says why
// it is not usable.
func (l Lookup) Resolve(name string, c api.EngineConfig) Resolved {
	b, isBuiltin := builtins[name]
	r := Resolved{Name: name, Builtin: isBuiltin, Env: c.Env}
	if isBuiltin {
		r.Keys = b.keys
	}
	switch {
	case c.Disabled:
		r.Err = fmt.Errorf("%s is disabled in the engines setting", name)
		return r
	case len(c.Command) > 0:
		r.Command, r.Source = append([]string(nil), c.Command...), SourceSettings
		prog, err := l.lookPath(c.Command[0])
		if err != nil {
			r.Err = fmt.Errorf("its command %q cannot be run: %w", c.Command[0], err)
			break
		}
		var bin string
		r.Package, r.Version, bin = l.commandPackage(prog, c.Command[1:])
		r.Agent = agentOf(r.Package, bin)
		if r.Agent == "" && isBuiltin && r.Package == "" {
			// A command of the engine's own name that says nothing else
			// (a wrapper script): taken as that agent.
			r.Agent = name
		}
	case !isBuiltin:
		r.Err = fmt.Errorf("%s is not a built-in engine and has no command in the engines setting", name)
		return r
	default:
		l.findBuiltin(b, &r)
		r.Agent = name
	}
	r.Isolated, r.IsolateAtStart = true, r.Package == ""
	if a, ok := builtins[r.Agent]; ok {
		isolated, known := a.isolate(r.Package, r.Version)
		r.Isolated, r.IsolateAtStart = isolated, !known
	}
	if c.Isolate != nil {
		r.Isolated, r.IsolateAtStart = *c.Isolate, false
	}
	return r
}

// agentOf is the built-in engine whose agent a package (or, without one,
// a program of that name) is: "" for none.
func agentOf(pkg, bin string) string {
	for _, n := range api.BuiltinEngines {
		b := builtins[n]
		if pkg != "" && b.is(pkg) {
			return n
		}
		if pkg == "" && bin != "" && slices.Contains(b.bins, programName(bin)) {
			return n
		}
	}
	return ""
}

// agentNamed is the built-in engine whose agent gives itself this name at
// initialize ("" for none).
func agentNamed(name string) string {
	for _, n := range api.BuiltinEngines {
		if slices.Contains(builtins[n].agentNames, name) || builtins[n].is(name) {
			return n
		}
	}
	return ""
}

// findBuiltin looks for a built-in engine on PATH, then in npm's cache.
func (l Lookup) findBuiltin(b builtin, r *Resolved) {
	for _, bin := range b.bins {
		if p, err := l.lookPath(bin); err == nil {
			r.Command, r.Source = append([]string{p}, b.args...), SourcePath
			r.Package, r.Version, _ = l.commandPackage(p, nil)
			return
		}
	}
	if dir, pkg, version := l.newestInCache(b.packages); dir != "" {
		entry, err := packageBin(dir)
		if err == nil {
			node, nerr := l.lookPath("node")
			if nerr != nil {
				r.Err = fmt.Errorf("%s %s is in npm's cache (%s) but node is not on PATH", pkg, version, dir)
				return
			}
			r.Command, r.Source = append([]string{node, entry}, b.args...), SourceNPMCache
			r.Package, r.Version = pkg, version
			return
		}
	}
	r.Err = fmt.Errorf("%s is not installed: none of %s is on PATH, and npm's cache has no %s (install it with `%s`, or set engines.%s.command)",
		b.name, strings.Join(b.bins, ", "), strings.Join(b.packages, " or "), b.install, b.name)
}

// newestInCache finds the newest install of one of pkgs in npx's part of
// npm's cache (<cache>/_npx/<hash>/node_modules/<pkg>).
func (l Lookup) newestInCache(pkgs []string) (dir, pkg, version string) {
	cache := l.npmCache()
	if cache == "" {
		return "", "", ""
	}
	for _, p := range pkgs {
		matches, _ := filepath.Glob(filepath.Join(cache, "_npx", "*", "node_modules", filepath.FromSlash(p), "package.json"))
		for _, m := range matches {
			name, v := readPackage(m)
			if name != p || v == "" {
				continue
			}
			if version == "" || compareVersions(v, version) > 0 {
				dir, pkg, version = filepath.Dir(m), p, v
			}
		}
		if dir != "" {
			return dir, pkg, version
		}
	}
	return "", "", ""
}

// packageBin is the entry point a package's "bin" names (its only one, or
// the first in name order).
func packageBin(dir string) (string, error) {
	bins, err := packageBins(dir)
	if err != nil {
		return "", err
	}
	names := make([]string, 0, len(bins))
	for n := range bins {
		names = append(names, n)
	}
	sort.Strings(names)
	return filepath.Join(dir, filepath.FromSlash(bins[names[0]])), nil
}

// packageBins are the bins a package's package.json names, by name (a
// single "bin" string is named after the package, as npm does).
func packageBins(dir string) (map[string]string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return nil, err
	}
	var p struct {
		Name string          `json:"name"`
		Bin  json.RawMessage `json:"bin"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("%s/package.json: %w", dir, err)
	}
	var one string
	if json.Unmarshal(p.Bin, &one) == nil && one != "" {
		n := p.Name
		if i := strings.LastIndexByte(n, '/'); i >= 0 {
			n = n[i+1:]
		}
		return map[string]string{n: one}, nil
	}
	var many map[string]string
	if json.Unmarshal(p.Bin, &many) == nil && len(many) > 0 {
		return many, nil
	}
	return nil, fmt.Errorf("%s/package.json names no bin", dir)
}

// commandPackage finds the npm package a command runs, and the program's
// name (the bin a launcher runs, or the program itself). A launcher (npx, npm
// exec, pnpm dlx, bunx) runs the package its arguments name (launched);
// any other command runs its program (a link into node_modules, as npm's
// global bin is) or the first argument that is a file (node's script):
// the package is the package.json above it that names one.
func (l Lookup) commandPackage(prog string, args []string) (name, version, bin string) {
	if ln, ok := launcherOf(prog, args); ok {
		name, version = l.launched(ln)
		bin = ln.bin
		if n, _, ok := splitSpec(bin); ok && strings.Contains(bin, "@") {
			bin = n
		}
		return name, version, bin
	}
	bin = prog
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			if _, err := os.Stat(a); err == nil {
				bin = a
			}
			break
		}
	}
	name, version = packageOf(prog, args)
	return name, version, bin
}

// packageOf finds the npm package a command runs: from its program (a
// link into node_modules, as npm's global bin is) or the first argument
// that is a file (node's script), walking up to the package.json that
// names a package.
func packageOf(prog string, args []string) (name, version string) {
	candidates := []string{prog}
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			candidates = append([]string{a}, candidates...)
			break
		}
	}
	for _, c := range candidates {
		real, err := filepath.EvalSymlinks(c)
		if err != nil {
			continue
		}
		dir := filepath.Dir(real)
		for i := 0; i < 6; i++ {
			if n, v := readPackage(filepath.Join(dir, "package.json")); n != "" {
				return n, v
			}
			parent := filepath.Dir(dir)
			if parent == dir || filepath.Base(dir) == "node_modules" {
				break
			}
			dir = parent
		}
	}
	return "", ""
}

func readPackage(path string) (name, version string) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", ""
	}
	var p struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if json.Unmarshal(data, &p) != nil {
		return "", ""
	}
	return p.Name, p.Version
}

// compareVersions compares two dotted versions by their numbers (a
// pre-release suffix is ignored): -1, 0 or 1.
func compareVersions(a, b string) int {
	pa, pb := versionParts(a), versionParts(b)
	for i := 0; i < 3; i++ {
		switch {
		case pa[i] < pb[i]:
			return -1
		case pa[i] > pb[i]:
			return 1
		}
	}
	return 0
}

func versionParts(v string) [3]int {
	v = strings.TrimPrefix(v, "v")
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		v = v[:i]
	}
	var out [3]int
	for i, p := range strings.SplitN(v, ".", 3) {
		out[i], _ = strconv.Atoi(p)
	}
	return out
}
