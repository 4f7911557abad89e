package engines

import (
	"crypto/sha512"
	"encoding/hex"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// launch is a command that runs an npm package through a launcher (npx,
// npm exec, pnpm dlx, bunx, …) rather than naming its program: what it
// runs is the package, never the launcher's own package.json.
type launch struct {
	// tool is the launcher: "npx" (npx, npm exec, npm x), "pnpm" (pnpm
	// dlx, pnpm exec, pnpx), "bun" (bunx, bun x) or "yarn" (yarn dlx).
	tool string
	// bin is the program it runs: a bin name or a package spec
	// (name@version) whose bin is meant.
	bin string
	// binAt is bin's index in the command's arguments (after the program).
	binAt int
	// dashes: a "--" ends the launcher's own options before bin.
	dashes bool
	// packages are the specs of --package/-p (none: bin is the spec).
	packages []string
	// prefix is npm's --prefix (the project whose node_modules/.bin and
	// tree npx looks in first), "" when not given.
	prefix string
}

// launcherSwitches are the launchers' options that take no value; any
// other option takes the next argument as its value unless it is given
// with "=" or the next argument is an option (npx's own rule).
var launcherSwitches = map[string]bool{
	"y": true, "yes": true, "no": true, "no-install": true, "offline": true, "prefer-offline": true,
	"prefer-online": true, "q": true, "quiet": true, "s": true, "silent": true, "verbose": true,
	"ignore-scripts": true, "legacy-peer-deps": true, "force": true, "f": true, "g": true, "global": true,
	"d": true, "dd": true, "ddd": true, "workspaces": true, "ws": true, "include-workspace-root": true,
	"foreground-scripts": true, "no-audit": true, "no-fund": true, "no-update-notifier": true,
	"bun": true, "silent-install": true, "shell-mode": true,
}

// launcherValues are options that always take a value.
var launcherValues = map[string]bool{
	"p": true, "package": true, "prefix": true, "cache": true, "userconfig": true, "call": true, "c": true,
	"shell": true, "script-shell": true, "registry": true, "loglevel": true, "C": true, "dir": true, "w": true,
	"workspace": true, "filter": true,
}

// launcherOf recognizes a command that runs a package through a launcher:
// prog is the program as resolved on PATH, args its arguments. ok is
// false for any other command.
func launcherOf(prog string, args []string) (launch, bool) {
	names := []string{programName(prog)}
	if real, err := filepath.EvalSymlinks(prog); err == nil {
		names = append(names, programName(real))
	}
	tool, skip := "", 0
	for _, n := range names {
		switch n {
		case "npx", "npx-cli.js":
			tool = "npx"
		case "npm", "npm-cli.js":
			if len(args) > 0 && (args[0] == "exec" || args[0] == "x") {
				tool, skip = "npx", 1
			}
		case "pnpx":
			tool = "pnpm"
		case "pnpm", "pnpm.cjs", "pnpm.js":
			if len(args) > 0 && (args[0] == "dlx" || args[0] == "exec") {
				tool, skip = "pnpm", 1
			}
		case "bunx":
			tool = "bun"
		case "bun":
			if len(args) > 0 && args[0] == "x" {
				tool, skip = "bun", 1
			}
		case "yarn", "yarn.js", "yarn.cjs":
			if len(args) > 0 && args[0] == "dlx" {
				tool, skip = "yarn", 1
			}
		}
		if tool != "" {
			break
		}
	}
	if tool == "" {
		return launch{}, false
	}
	l := launch{tool: tool, binAt: -1}
	for i := skip; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			l.dashes = true
			if i+1 < len(args) {
				l.bin, l.binAt = args[i+1], i+1
			}
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			l.bin, l.binAt = a, i
			break
		}
		key, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !hasValue && !launcherSwitches[key] && i+1 < len(args) &&
			(launcherValues[key] || !strings.HasPrefix(args[i+1], "-")) {
			i++
			value, hasValue = args[i], true
		}
		if !hasValue {
			continue
		}
		switch key {
		case "p", "package":
			l.packages = append(l.packages, value)
		case "prefix":
			l.prefix = value
		case "C", "dir":
			if tool == "pnpm" {
				l.prefix = value
			}
		}
	}
	if l.bin == "" && len(l.packages) == 0 {
		return launch{}, false
	}
	return l, true
}

// programName is a program's name without the extensions Windows adds.
func programName(p string) string {
	n := strings.ToLower(filepath.Base(p))
	for _, ext := range []string{".cmd", ".exe", ".ps1", ".bat"} {
		n = strings.TrimSuffix(n, ext)
	}
	return n
}

// specRE splits a package spec: a name (scoped or not) and what follows
// its "@" (a version, a range or a tag).
var specRE = regexp.MustCompile(`^((?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*)(?:@(.+))?$`)

// exactVersionRE is a version npm would install as it is written.
var exactVersionRE = regexp.MustCompile(`^v?\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]+)?$`)

// splitSpec splits an npm package spec into its name and version part
// ("" when it names none); ok is false when s is not a registry spec (a
// path, a URL, a git spec).
func splitSpec(s string) (name, version string, ok bool) {
	if strings.ContainsAny(s, ":\\") || strings.HasPrefix(s, ".") || strings.HasPrefix(s, "/") {
		return "", "", false
	}
	m := specRE.FindStringSubmatch(s)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// npxDir is the directory of npm's cache npx installs a list of package
// specs in: <cache>/_npx/<the first 16 hex digits of the sha512 of the
// specs, sorted, one a line>.
func npxDir(cache string, specs []string) string {
	sorted := slices.Clone(specs)
	slices.Sort(sorted)
	sum := sha512.Sum512([]byte(strings.Join(sorted, "\n")))
	return filepath.Join(cache, "_npx", hex.EncodeToString(sum[:])[:16])
}

// launched is the package a launched command runs: its name (when it can
// be told) and its version ("" when it cannot be known without running
// it).
func (l Lookup) launched(ln launch) (name, version string) {
	specs := ln.packages
	binName := ln.bin
	if len(specs) == 0 {
		// npx looks for a bin of that name in the prefix's tree first.
		if ln.tool == "npx" && ln.prefix != "" && ln.bin != "" && !strings.Contains(ln.bin, "@") {
			if n, v := packageOf(filepath.Join(ln.prefix, "node_modules", ".bin", ln.bin), nil); n != "" {
				return n, v
			}
		}
		if ln.bin == "" {
			return "", ""
		}
		specs = []string{ln.bin}
		binName = ""
	}
	// The package of the command: the one whose bin it names, else the
	// first.
	type cand struct{ spec, name, want string }
	var cands []cand
	for _, s := range specs {
		n, v, ok := splitSpec(s)
		if !ok {
			continue
		}
		cands = append(cands, cand{s, n, v})
	}
	if len(cands) == 0 {
		return "", ""
	}
	dirs := []string{}
	if ln.prefix != "" {
		dirs = append(dirs, filepath.Join(ln.prefix, "node_modules"))
	}
	if ln.tool == "npx" {
		if cache := l.npmCache(); cache != "" {
			dirs = append(dirs, filepath.Join(npxDir(cache, specs), "node_modules"))
		}
	}
	pick := cands[0]
	if binName != "" && len(cands) > 1 {
		for _, c := range cands {
			for _, d := range dirs {
				if hasBin(filepath.Join(d, filepath.FromSlash(c.name)), binName) {
					pick = c
				}
			}
		}
	}
	for _, d := range dirs {
		n, v := readPackage(filepath.Join(d, filepath.FromSlash(pick.name), "package.json"))
		if n == pick.name && v != "" && (pick.want == "" || !exactVersionRE.MatchString(pick.want) || strings.TrimPrefix(pick.want, "v") == v) {
			return n, v
		}
	}
	if exactVersionRE.MatchString(pick.want) {
		// What is not installed yet is installed at that version.
		return pick.name, strings.TrimPrefix(pick.want, "v")
	}
	return pick.name, ""
}

// hasBin reports whether the package in dir installs a bin named bin.
func hasBin(dir, bin string) bool {
	entry, err := packageBins(dir)
	return err == nil && entry[bin] != ""
}

// withArgs is the command with extra arguments for the program it runs:
// after it, and for a launcher that would read them as its own (npm exec
// without "--") after a "--" put before the program.
func withArgs(command []string, extra []string) []string {
	if len(extra) == 0 {
		return command
	}
	out := slices.Clone(command)
	if len(out) > 0 {
		if ln, ok := launcherOf(out[0], out[1:]); ok && ln.tool == "npx" && !ln.dashes && ln.binAt >= 0 &&
			programName(out[0]) != "npx" && !strings.HasSuffix(programName(realPath(out[0])), "npx-cli.js") {
			out = slices.Insert(out, 1+ln.binAt, "--")
		}
	}
	return append(out, extra...)
}

func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}
