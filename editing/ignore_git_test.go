package editing

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/editors/headless/headlesstest"
	"github.com/agentls/agentls/internal/testkit"
)

// The ignore rules are held to git itself: each fixture is a repository
// whose every path is asked of `git check-ignore`, and whose listing is
// compared with `git ls-files --others --exclude-standard`.

// needGit returns the path of git, or skips the test when it is not
// installed (outside CI, which must have it).
func needGit(t testing.TB) string {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("git is needed as the oracle of the ignore rules: %v", err)
		}
		t.Skip("git is not installed")
	}
	return git
}

// runGit runs git in dir with none of the user's configuration (no global
// or system config, no global excludes: HOME and XDG_CONFIG_HOME are an
// empty directory of the test) and no GIT_* variable of the caller's.
func runGit(t testing.TB, dir string, stdin []byte, args ...string) []byte {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(needGit(t), args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "HOME="+home, "XDG_CONFIG_HOME="+home, "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1")
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 && args[0] == "check-ignore" {
		err = nil // none of the paths is ignored
	}
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

// ignoreFixture is a repository: its files (".git/info/exclude" and
// ".git/config" lines included) and the directories that hold none.
type ignoreFixture struct {
	name   string
	files  map[string]string
	config string // appended to the .git/config git init wrote
}

// gitIgnoreVerdicts asks git check-ignore about every path of root but
// .git, and returns path -> ignored, and whether each is a directory.
func gitIgnoreVerdicts(t *testing.T, root string) (map[string]bool, map[string]bool) {
	t.Helper()
	isDir := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		switch {
		case rel == ".":
			return nil
		case rel == ".git":
			return filepath.SkipDir
		}
		isDir[rel] = d.IsDir()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var in bytes.Buffer
	for p := range isDir {
		in.WriteString(p)
		in.WriteByte(0)
	}
	out := runGit(t, root, in.Bytes(), "check-ignore", "-z", "-v", "-n", "--stdin")
	fields := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(fields)%4 != 0 {
		t.Fatalf("check-ignore gave %d fields", len(fields))
	}
	verdict := map[string]bool{}
	for i := 0; i < len(fields); i += 4 {
		pattern, p := fields[i+2], fields[i+3]
		verdict[p] = pattern != "" && !strings.HasPrefix(pattern, "!")
	}
	if len(verdict) != len(isDir) {
		t.Fatalf("check-ignore answered for %d paths of %d", len(verdict), len(isDir))
	}
	return verdict, isDir
}

// compareWithGit builds fx, and returns how many paths it compared, how
// many of them git ignores, and a sentence for each that the ignorer or the
// walk judges otherwise than git.
func compareWithGit(t *testing.T, fx ignoreFixture) (int, int, []string) {
	t.Helper()
	root := t.TempDir()
	runGit(t, root, nil, "init", "-q")
	testkit.WriteFiles(t, root, fx.files)
	if fx.config != "" {
		f, err := os.OpenFile(filepath.Join(root, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.WriteString(fx.config)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	verdict, isDir := gitIgnoreVerdicts(t, root)
	ws, err := New(Config{Root: root, Editor: headlesstest.New(root, headlesstest.AllCaps())})
	if err != nil {
		t.Fatal(err)
	}
	var diffs []string
	ignored := 0
	ig := newWalkFS(ws).ig
	for p, want := range verdict {
		if want {
			ignored++
		}
		if got := ig.ignored(p, isDir[p]); got != want {
			diffs = append(diffs, fmt.Sprintf("%s: %s (dir: %v) ignored by git: %v, by agentls: %v", fx.name, p, isDir[p], want, got))
		}
	}
	// The walk lists what git sees as untracked and not ignored.
	var listed []string
	if err := ws.walk(t.Context(), "**", func(rel string, _ Path) error {
		listed = append(listed, rel)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	out := runGit(t, root, nil, "ls-files", "-z", "--others", "--exclude-standard")
	gitListed := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(out) == 0 {
		gitListed = nil
	}
	slices.Sort(listed)
	slices.Sort(gitListed)
	if !slices.Equal(listed, gitListed) {
		diffs = append(diffs, fmt.Sprintf("%s: the walk lists %q, git ls-files %q", fx.name, listed, gitListed))
	}
	return len(verdict), ignored, diffs
}

// featureFixture has a line for each rule of gitignore(5) and a path for
// each line to match or miss.
var featureFixture = ignoreFixture{
	name: "features",
	files: map[string]string{
		".gitignore": strings.Join([]string{
			"# a comment",
			`\#hash`,
			`\!bang`,
			`trail\ `,
			"spaces   ",
			"*.log",
			"!keep.log",
			"build/",
			"!build/keep.txt", // under an excluded directory: stays ignored
			"out/*",
			"!out/keep.txt", // out itself is not excluded: re-included
			"a/**",
			"!a/x.txt",
			"**/b",
			"c/**/d/e",
			"[!x]y.txt",
			"doc/[[:digit:]]*.md",
			"lit{a,b}.txt",
			"only-dir/",
			"/anchored.txt",
			"x/y/",
			"mid/**/end",
			"tab\t",
			"star**s",
			"",
			"/",
			"!",
		}, "\n") + "\n",
		"#hash": "", "!bang": "", "trail ": "", "trail": "", "spaces": "", "spaces   ": "",
		"debug.log": "", "sub/deep/debug.log": "", "keep.log": "", "sub/keep.log": "",
		"build/keep.txt": "", "build/other.txt": "", "src/build/x.go": "",
		"out/keep.txt": "", "out/drop.txt": "", "out/in/z.txt": "",
		"a/x.txt": "", "a/y.txt": "", "a/deep/z.txt": "", "sub/a/y.txt": "",
		"b": "", "sub/b/inner.txt": "", "sub/bb": "",
		"c/d/e": "", "c/1/2/d/e": "", "c/d/e2": "", "sub/c/d/e": "",
		"ay.txt": "", "xy.txt": "", "sub/zy.txt": "",
		"doc/1.md": "", "doc/x.md": "", "doc/sub/2.md": "",
		"lit{a,b}.txt": "", "lita.txt": "",
		"only-dir/f": "", "sub/only-dir": "",
		"anchored.txt": "", "sub/anchored.txt": "",
		"x/y/f": "", "x/y2": "", "sub/x/y/f": "",
		"mid/end": "", "mid/1/2/end": "", "mid/1/end2": "",
		"tab\t": "", "tab": "",
		"starXYs": "", "star/s": "",
		"nested/.gitignore":    "*.tmp\n!important.tmp\n/local.txt\n../escape.txt\n!/re.log\n",
		"nested/a.tmp":         "",
		"nested/important.tmp": "",
		"nested/local.txt":     "",
		"nested/in/local.txt":  "",
		"nested/re.log":        "",
		"escape.txt":           "",
		"nested/in/.gitignore": "!*.tmp\n",
		"nested/in/b.tmp":      "",
		".git/info/exclude":    "from-info.txt\n!keep-info.log\n",
		"from-info.txt":        "", "keep-info.log": "",
		".git/myexcludes":   "from-excludes.txt\nfrom-info2.txt\n!from-info.txt\n",
		"from-excludes.txt": "", "sub/from-excludes.txt": "",
		"crlf/.gitignore": "one.txt\r\ntwo.txt \r\n",
		"crlf/one.txt":    "", "crlf/two.txt": "",
		"bom/.gitignore": "\xef\xbb\xbfbom.txt\n",
		"bom/bom.txt":    "",
	},
	config: "[core]\n\texcludesFile = .git/myexcludes\n",
}

func TestIgnoreRulesAgreeWithGit(t *testing.T) {
	needGit(t)
	t.Run("on a line for every rule of gitignore(5)", func(t *testing.T) {
		n, ignored, diffs := compareWithGit(t, featureFixture)
		if len(diffs) > 0 {
			t.Errorf("%d of %d paths differ from git:\n%s", len(diffs), n, strings.Join(diffs, "\n"))
		}
		t.Logf("%d paths (%d ignored by git) compared with git check-ignore, %d differ", n, ignored, len(diffs))
	})
	t.Run("on random trees and patterns", func(t *testing.T) {
		total, ignored, differ := 0, 0, 0
		seeds := 100
		if testing.Short() {
			seeds = 10
		}
		for seed := 0; seed < seeds; seed++ {
			n, ig, diffs := compareWithGit(t, randomIgnoreFixture(uint64(seed)))
			total += n
			ignored += ig
			differ += len(diffs)
			for _, d := range diffs[:min(len(diffs), 5)] {
				t.Error(d)
			}
		}
		t.Logf("%d paths (%d ignored by git) of %d random repositories compared with git check-ignore, %d differ", total, ignored, seeds, differ)
	})
}

// randomIgnoreFixture builds a tree from a few names and ignore files from
// patterns made of the same names and of every special form.
func randomIgnoreFixture(seed uint64) ignoreFixture {
	r := rand.New(rand.NewPCG(seed, 0x1f))
	names := []string{"a", "b", "c", "ab", "x.go", "y.txt", "#h", "!n", "t ", "k", "d", "[a]", "{a,b}", "A", ".hid", "a b", "-", "e", "*"}
	segments := []string{"a", "b", "c", "ab", "*", "?", "**", "a*", "*b", "[!a]*", "[a-b]", "[^b]", `\#h`, `\!n`, `t\ `,
		"k", "*.go", "***", "[[:alpha:]]", "x.go", "d", "[]a]", "{a,b}", `\[a]`, "[a-]", "*.*", "?b", "[[:digit:][:alpha:]]*",
		"A", ".h*", "a b", "*/", "**/", "a\\", "[", "[a", "[!]", "[]]", "[z-a]", "[[:foo:]]", "[[:alpha:]", `[\]]`, `[a\-c]`, `\*`,
		"[a-c-e]", "[!-/]*", "[[:punct:]]*", "[[:space:]]*", "*[[:upper:]]", "[--0]", "[[]"}
	fx := ignoreFixture{name: fmt.Sprintf("seed %d", seed), files: map[string]string{}}
	line := func() string {
		switch r.IntN(12) {
		case 0:
			return "# " + names[r.IntN(len(names))]
		case 1:
			return ""
		}
		n := 1 + r.IntN(3)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = segments[r.IntN(len(segments))]
		}
		p := strings.Join(parts, "/")
		if r.IntN(5) == 0 {
			p = "/" + p
		}
		if r.IntN(4) == 0 {
			p += "/"
		}
		if r.IntN(4) == 0 {
			p = "!" + p
		}
		if r.IntN(6) == 0 {
			p += "  "
		}
		return p
	}
	lines := func() string {
		var sb strings.Builder
		nl := "\n"
		if r.IntN(5) == 0 {
			nl = "\r\n"
		}
		for i := 1 + r.IntN(6); i > 0; i-- {
			sb.WriteString(line() + nl)
		}
		return sb.String()
	}
	var grow func(dir string, depth int)
	grow = func(dir string, depth int) {
		used := map[string]bool{}
		for i := 2 + r.IntN(4); i > 0; i-- {
			name := names[r.IntN(len(names))]
			if used[name] {
				continue
			}
			used[name] = true
			p := joinRel(dir, name)
			if depth < 3 && r.IntN(2) == 0 {
				grow(p, depth+1)
			} else {
				fx.files[p] = ""
			}
		}
		if r.IntN(2) == 0 {
			fx.files[joinRel(dir, ".gitignore")] = lines()
		}
	}
	grow(".", 0)
	if r.IntN(2) == 0 {
		fx.files[".git/info/exclude"] = lines()
	}
	if r.IntN(2) == 0 {
		fx.files["global-excludes"] = lines()
		fx.config = []string{
			"[core]\n\texcludesFile = global-excludes\n",
			"[Core]\n  ExcludesFile=\"global-excludes\" ; a comment\n",
			"[core \"sub\"]\n\texcludesFile = nothing\n[core]\n\texcludesfile = glob\\\nal-excludes\n",
			"[core]\n\texcludesFile = nothing\n\texcludesFile = " + "global-excludes # last wins\n",
		}[r.IntN(4)]
	}
	return fx
}

func TestExcludesFileIsReadAsGitReadsIt(t *testing.T) {
	needGit(t)
	cases := []struct{ name, config string }{
		{"reads a plain value", "[core]\n\texcludesFile = ex\n"},
		{"reads section and key in any case", "[CORE]\nEXCLUDESFILE = ex\n"},
		{"reads a quoted value with blanks and escapes", "[core]\n\texcludesFile = \"e x\\\\\\\"q\\\"\" \n"},
		{"keeps inner blanks outside quotes as one space each", "[core]\n\texcludesFile = e \t x\n"},
		{"drops a comment after the value", "[core]\n\texcludesFile = ex # comment\n\t; excludesFile = other\n"},
		{"continues a line ending in a backslash", "[core]\n\texcludesFile = e\\\nx\n"},
		{"takes the last value", "[core]\n\texcludesFile = one\n[core]\n\texcludesFile = two\n"},
		{"ignores a subsection", "[core \"x\"]\n\texcludesFile = one\n"},
		{"reads a variable on the section's line", "[core] excludesFile = ex\n"},
		{"reads CRLF lines", "[core]\r\n\texcludesFile = ex\r\n"},
		{"reads a bare name as no file", "[core]\n\texcludesFile = ex\n\texcludesFile\n"},
		{"reads a tab escape", "[core]\n\texcludesFile = a\\tb\n"},
		{"ignores a comment line ending in a backslash", "# note \\\n[core]\n\texcludesFile = ex\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "config")
			if err := os.WriteFile(cfg, []byte(c.config), 0o644); err != nil {
				t.Fatal(err)
			}
			want := ""
			home := t.TempDir()
			cmd := exec.Command(needGit(t), "config", "--file", cfg, "--get", "core.excludesFile")
			cmd.Env = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home, "GIT_CONFIG_GLOBAL=" + os.DevNull, "GIT_CONFIG_NOSYSTEM=1", "PATH=" + os.Getenv("PATH")}
			if out, err := cmd.Output(); err == nil {
				want = strings.TrimSuffix(string(out), "\n")
			}
			if got := excludesFile([]byte(c.config)); got != want {
				t.Errorf("excludesFile = %q, git config says %q", got, want)
			}
		})
	}
	t.Run("reads no file in a home directory", func(t *testing.T) {
		if got := excludesFile([]byte("[core]\n\texcludesFile = ~/.gitignore_global\n")); got != "" {
			t.Errorf("excludesFile = %q, want none", got)
		}
	})
}

// TestIgnoreRules states, by example, the cases the old matcher got wrong.
func TestIgnoreRules(t *testing.T) {
	cases := []struct {
		name     string
		patterns string
		path     string
		dir      bool
		want     bool
	}{
		{"keeps an escaped trailing space", "f\\ \n", "f ", false, true},
		{"drops unescaped trailing spaces", "f  \n", "f", false, true},
		{"keeps a trailing tab", "f\t\n", "f", false, false},
		{"reads a/** as inside a, not a", "a/**\n", "a", true, false},
		{"reads a/** as inside a", "a/**\n", "a/b/c", false, true},
		{"lets a/** leave a open to re-inclusion", "a/**\n!a/keep\n", "a/keep", false, false},
		{"matches **/b at the top", "**/b\n", "b", false, true},
		{"matches a/**/b/c with nothing between", "a/**/b/c\n", "a/b/c", false, true},
		{"reads [!a] as a negated class", "[!a]x\n", "bx", false, true},
		{"keeps a negated class off /", "d/[!a]x\n", "d/ax", false, false},
		{"reads \\# as a name", "\\#x\n", "#x", false, true},
		{"reads \\! as a name", "\\!x\n", "!x", false, true},
		{"reads a trailing / as directories only", "d/\n", "d", false, false},
		{"keeps braces literal", "{a,b}\n", "a", false, false},
		{"does not re-include below an excluded directory", "d/\n!d/f\n", "d/f", false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ig := newIgnorer(func(rel string) []byte {
				if rel == ".gitignore" {
					return []byte(c.patterns)
				}
				return nil
			}, func(string) []byte { return nil })
			if got := ig.ignored(c.path, c.dir); got != c.want {
				t.Errorf("%q ignores %q: %v, want %v", c.patterns, c.path, got, c.want)
			}
		})
	}
}
