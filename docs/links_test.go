package docs_test

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"unicode"
)

// TestLinksResolve follows every relative link and anchor of every markdown
// file of the repository, every repository path a markdown file names (and
// the heading it quotes: docs/MODELS.md, "The scripted model"), and every
// reference to a section of docs/PROTOCOL.md ("PROTOCOL.md §4", "contract
// §2", "§4" within PROTOCOL.md itself) in the markdown and the sources, and
// fails on a dead one. It also fails on a `go install` of the module from
// the module proxy: agentls has no release yet, and the README says how to
// build it from a checkout.
func TestLinksResolve(t *testing.T) {
	fsys := os.DirFS("..")
	files, err := repositoryFiles(fsys)
	if err != nil {
		t.Fatal(err)
	}
	var md int
	for _, f := range files {
		if strings.HasSuffix(f, ".md") {
			md++
		}
	}
	if md < 10 {
		t.Fatalf("found only %d markdown files: the walk is broken", md)
	}
	res := checkLinks(fsys, files)
	for _, p := range res.problems {
		t.Error(p)
	}
	t.Logf("%d markdown files: %d links (%d with an anchor), %d repository paths and %d headings named; %d references to sections of %s in %d files",
		md, res.links, res.anchors, res.paths, res.headings, res.sections, protocolFile, len(files))
}

// TestLinkCheckCatchesDeadLinks plants dead links of every kind, so the
// check above is known to be able to fail.
func TestLinkCheckCatchesDeadLinks(t *testing.T) {
	fsys := fstest.MapFS{
		"README.md": {Data: []byte("# Top\n\n" +
			"[ok](docs/MODELS.md#the-scripted-model-offline-demos-tests-replays), [dir](editors/nvim), [self](#top)\n" +
			"[gone](docs/NOPE.md), [bad anchor](docs/MODELS.md#scripted-model), [bad self](#bottom)\n" +
			"`[in code](nowhere.md)` and docs/PROTOCOL.md, section 9, docs/PROTOCOL.md §2\n" +
			"```\n[in a block](nowhere.md)\n```\n" +
			"Named in the text: docs/MODELS.md and docs/GONE.md, editors/<name>/README.md.\n" +
			"As docs/MODELS.md, \"The scripted model\" and docs/MODELS.md, \"Secrets\" say, and\n" +
			"docs/MODELS.md, \"The\nscripted model\" and docs/PROTOCOL.md, \"The\nscripted model\".\n" +
			"[site](https://example.com) [ref]: docs/ALSO-GONE.md\n" +
			"  ```` ```exchange ```` is inline code, not a fence, so what follows is checked:\n" +
			"[after](docs/STILL-GONE.md)\n")},
		"docs/MODELS.md":   {Data: []byte("# Choosing a model\n\n## The scripted model: offline demos, tests, replays\n")},
		"docs/PROTOCOL.md": {Data: []byte("# P\n\n## 1. Transport\n\n## 2. Lifecycle\n\nsee §1 and §3\n")},
		"editors/nvim/README.md": {Data: []byte("[script format](../../docs/PROTOCOL.md#the-scripted-model)\n" +
			"[up](../../README.md#top)\n")},
		"handlers/server.go":      {Data: []byte("// the lifecycle of docs/PROTOCOL.md §2 and §8 of docs/PROTOCOL.md §8\n")},
		"editors/vscode/src/a.ts": {Data: []byte("/** contract §7 */\n")},
		"editors/emacs/README.md": {Data: []byte("Install: `go install github.com/agentls/agentls/cmd/agentls@latest`\n")},
	}
	files, err := repositoryFiles(fsys)
	if err != nil {
		t.Fatal(err)
	}
	got := checkLinks(fsys, files).problems
	want := []string{
		`README.md:4: link to docs/NOPE.md: no such file`,
		`README.md:4: link to docs/MODELS.md#scripted-model: docs/MODELS.md has no heading with the anchor "scripted-model"`,
		`README.md:4: link to #bottom: README.md has no heading with the anchor "bottom"`,
		`README.md:5: docs/PROTOCOL.md has no section 9`,
		`README.md:9: names docs/GONE.md, which does not exist`,
		`README.md:10: docs/MODELS.md has no heading "Secrets"`,
		`README.md:12: docs/PROTOCOL.md has no heading "The scripted model"`,
		`README.md:14: link to docs/ALSO-GONE.md: no such file`,
		`README.md:16: link to docs/STILL-GONE.md: no such file`,
		`docs/PROTOCOL.md:7: docs/PROTOCOL.md has no section 3`,
		`editors/emacs/README.md:1: installs agentls from the module proxy, which has no release of it: build it from a checkout (README.md, "Install")`,
		`editors/nvim/README.md:1: link to ../../docs/PROTOCOL.md#the-scripted-model: docs/PROTOCOL.md has no heading with the anchor "the-scripted-model"`,
		`editors/vscode/src/a.ts:1: docs/PROTOCOL.md has no section 7`,
		`handlers/server.go:1: docs/PROTOCOL.md has no section 8`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("checkLinks found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// sourceExts are the files whose section references are checked, beside
// the markdown.
var sourceExts = []string{".md", ".go", ".ts", ".lua", ".el", ".txt", ".sh"}

// selfFile is this file.
const selfFile = "docs/links_test.go"

// repositoryFiles lists the markdown and source files of the repository,
// leaving out hidden directories, dependencies and test fixtures.
func repositoryFiles(fsys fs.FS) ([]string, error) {
	var files []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != "." && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata" || name == "bin" || name == "out") {
				return fs.SkipDir
			}
			return nil
		}
		if p == selfFile {
			return nil // it names dead links on purpose
		}
		if slices.Contains(sourceExts, path.Ext(name)) {
			files = append(files, p)
		}
		return nil
	})
	return files, err
}

type linkCheck struct {
	problems                                  []string
	links, anchors, paths, headings, sections int
}

var (
	// inlineLink is [text](target) and ![alt](target), with an optional title.
	inlineLink = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// refLink is a reference definition, [label]: target.
	refLink = regexp.MustCompile(`\[[^\]]+\]:\s+(\S+)`)
	// codeSpan is inline code, left out of links and paths.
	codeSpan = regexp.MustCompile("`[^`]*`")
	// repoPath is a path from the repository's root named in the text.
	repoPath = regexp.MustCompile(`(?:^|[\s(,;"'])((?:docs|editors|examples|scripts|cmd|api|bench|clients|editing|handlers|internal|rpc|tracking|workforce)/[A-Za-z0-9_.\-/]*[A-Za-z0-9_\-/])`)
	// quotedHeading is a repository path and the heading it names:
	// docs/MODELS.md, "The scripted model".
	quotedHeading = regexp.MustCompile(`([A-Za-z0-9_./-]+\.md),? "([^"]+)"`)
	// proxyInstall is an install of agentls that needs a published release.
	proxyInstall = regexp.MustCompile(`go (?:install|run) github\.com/agentls/agentls\S*@`)
	// protocolSection is a reference to a section of PROTOCOL.md from
	// elsewhere: "PROTOCOL.md §4", "PROTOCOL.md, section 2", "contract §2".
	protocolSection = regexp.MustCompile(`(?:PROTOCOL\.md,? (?:§ ?|section )|contract §)([0-9]+)`)
	// ownSection is a reference within PROTOCOL.md: "§4", "section 4".
	ownSection = regexp.MustCompile(`(?:§ ?|section )([0-9]+)`)
	// numberedHeading is a section of PROTOCOL.md, "## 4. Title".
	numberedHeading = regexp.MustCompile(`^## ([0-9]+)\. `)
)

const protocolFile = "docs/PROTOCOL.md"

// checkLinks returns a sentence for every dead link, anchor, path and
// section reference, in file order.
func checkLinks(fsys fs.FS, files []string) linkCheck {
	var res linkCheck
	anchors := map[string]map[string]bool{} // markdown file → its anchors
	titles := map[string][]string{}         // markdown file → its headings, lower case
	anchorsOf := func(file string) map[string]bool {
		if a, ok := anchors[file]; ok {
			return a
		}
		data, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil
		}
		anchors[file], titles[file] = headingAnchors(string(data))
		return anchors[file]
	}
	sections := map[int]bool{}
	if data, err := fs.ReadFile(fsys, protocolFile); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if m := numberedHeading.FindStringSubmatch(l); m != nil {
				n, _ := strconv.Atoi(m[1])
				sections[n] = true
			}
		}
	}
	exists := func(p string) bool {
		_, err := fs.Stat(fsys, p)
		return err == nil
	}
	for _, file := range files {
		data, err := fs.ReadFile(fsys, file)
		if err != nil {
			res.problems = append(res.problems, fmt.Sprintf("%s: %v", file, err))
			continue
		}
		isMD := strings.HasSuffix(file, ".md")
		fence := ""
		lines := strings.Split(string(data), "\n")
		for i, line := range lines {
			where := fmt.Sprintf("%s:%d", file, i+1)
			section := protocolSection
			if file == protocolFile {
				section = ownSection
			}
			for _, m := range section.FindAllStringSubmatch(line, -1) {
				res.sections++
				if n, _ := strconv.Atoi(m[1]); !sections[n] {
					res.problems = append(res.problems, fmt.Sprintf("%s: %s has no section %d", where, protocolFile, n))
				}
			}
			if proxyInstall.MatchString(line) {
				res.problems = append(res.problems, fmt.Sprintf("%s: installs agentls from the module proxy, which has no release of it: build it from a checkout (README.md, \"Install\")", where))
			}
			if !isMD {
				continue
			}
			var isFence bool
			if fence, isFence = nextFence(fence, line); isFence || fence != "" {
				continue
			}
			text := codeSpan.ReplaceAllString(line, "")
			// A quoted heading may go on over the next line.
			joined := text
			if i+1 < len(lines) {
				joined += " " + codeSpan.ReplaceAllString(strings.TrimSpace(lines[i+1]), "")
			}
			for _, loc := range quotedHeading.FindAllStringSubmatchIndex(joined, -1) {
				if loc[0] >= len(text) {
					continue // it starts on the next line
				}
				file, heading := joined[loc[2]:loc[3]], joined[loc[4]:loc[5]]
				if !exists(file) {
					continue // reported as a path below
				}
				res.headings++
				anchorsOf(file)
				want := strings.ToLower(heading)
				if !slices.ContainsFunc(titles[file], func(h string) bool { return strings.HasPrefix(h, want) }) {
					res.problems = append(res.problems, fmt.Sprintf("%s: %s has no heading %q", where, file, heading))
				}
			}
			var targets []string
			for _, m := range inlineLink.FindAllStringSubmatch(text, -1) {
				targets = append(targets, m[1])
			}
			for _, m := range refLink.FindAllStringSubmatch(text, -1) {
				targets = append(targets, m[1])
			}
			for _, target := range targets {
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				res.links++
				ref, anchor, hasAnchor := strings.Cut(target, "#")
				dest := file
				if ref != "" {
					dest = path.Join(path.Dir(file), ref)
					if !exists(dest) {
						res.problems = append(res.problems, fmt.Sprintf("%s: link to %s: no such file", where, target))
						continue
					}
				}
				if !hasAnchor {
					continue
				}
				res.anchors++
				if a := anchorsOf(dest); !a[anchor] {
					res.problems = append(res.problems, fmt.Sprintf("%s: link to %s: %s has no heading with the anchor %q", where, target, dest, anchor))
				}
			}
			// Paths are looked for in code spans too (`handlers/run.go`).
			prose := inlineLink.ReplaceAllString(refLink.ReplaceAllString(strings.ReplaceAll(line, "`", " "), ""), "")
			for _, m := range repoPath.FindAllStringSubmatch(prose, -1) {
				p := strings.TrimRight(m[1], "/")
				if strings.Contains(p, "node_modules") {
					continue // made by npm, not kept
				}
				res.paths++
				if !exists(p) {
					res.problems = append(res.problems, fmt.Sprintf("%s: names %s, which does not exist", where, p))
				}
			}
		}
	}
	return res
}

// nextFence follows markdown's code fences: given the fence open before
// line ("" for none), it returns the fence open after it and whether line
// opens or closes one. A run of backticks followed by text that holds a
// backtick opens none (CommonMark): it is inline code, as in
// ```` ```exchange ````.
func nextFence(open, line string) (string, bool) {
	t := strings.TrimSpace(line)
	if !strings.HasPrefix(t, "```") && !strings.HasPrefix(t, "~~~") {
		return open, false
	}
	switch {
	case open == "":
		if t[0] == '`' && strings.Contains(strings.TrimLeft(t, "`"), "`") {
			return "", false
		}
		return t[:3], true
	case strings.HasPrefix(t, open):
		return "", true
	}
	return open, true
}

// headingAnchors returns the anchors GitHub gives a markdown file's
// headings (and those of <a id> / <a name> tags), and the headings' text
// in lower case, without backquotes.
func headingAnchors(md string) (map[string]bool, []string) {
	out := map[string]bool{}
	var titles []string
	seen := map[string]int{}
	fence := ""
	for _, line := range strings.Split(md, "\n") {
		var isFence bool
		if fence, isFence = nextFence(fence, line); isFence || fence != "" {
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			out[m[1]] = true
		}
		level := len(line) - len(strings.TrimLeft(line, "#"))
		if level == 0 || level > 6 || !strings.HasPrefix(line[level:], " ") {
			continue
		}
		title := strings.TrimRight(strings.TrimSpace(line[level:]), "# ")
		titles = append(titles, strings.ToLower(strings.ReplaceAll(title, "`", "")))
		s := slug(title)
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out, titles
}

var htmlAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)

// slug is GitHub's anchor of a heading: the text of its links, lower case,
// letters, digits, '-' and '_' kept, spaces made '-', the rest dropped.
func slug(heading string) string {
	heading = inlineLink.ReplaceAllStringFunc(heading, func(l string) string {
		return l[1:strings.Index(l, "](")]
	})
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}
