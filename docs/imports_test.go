package docs_test

import (
	"bufio"
	"errors"
	"fmt"
	"go/build"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/agentls/agentls"

// TestImportsFollowArchitecture holds every package of the module to the
// import table of docs/ARCHITECTURE.md: a package may import only the
// project's packages its row names, and every package has a row.
func TestImportsFollowArchitecture(t *testing.T) {
	rules, err := readImportRules("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	pkgs, err := modulePackages("..")
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 10 {
		t.Fatalf("found only %d packages under the module's root: the walk is broken", len(pkgs))
	}
	for _, problem := range checkImports(rules, pkgs) {
		t.Error(problem)
	}
}

// TestImportCheckCatchesAViolation plants edges the table forbids, so the
// check above is known to be able to fail.
func TestImportCheckCatchesAViolation(t *testing.T) {
	rules := map[string][]string{
		"api":       nil,
		"rpc":       {"api"},
		"tracking":  {"api", "tracking/*"},
		"clients":   {"api"},
		"workforce": {"api", "clients", "tracking", "tracking/*"},
	}
	pkgs := map[string][]string{
		"api":           nil,
		"rpc":           {"api"},
		"tracking":      {"api", "tracking/heat"},
		"tracking/heat": {"api"},
		"clients":       {"api", "rpc"},                    // forbidden: clients must not know the wire
		"workforce":     {"api", "tracking/heat", "other"}, // "other" has no row
	}
	got := checkImports(rules, pkgs)
	want := []string{
		`clients imports rpc, which docs/ARCHITECTURE.md does not allow (allowed: api)`,
		`tracking/heat has no row in the import table of docs/ARCHITECTURE.md`,
		`workforce imports other, which docs/ARCHITECTURE.md does not allow (allowed: api, clients, tracking, tracking/*)`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("checkImports found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// checkImports returns a sentence for every package without a row, every
// row without a package, and every import a row does not allow, sorted.
func checkImports(rules, pkgs map[string][]string) []string {
	var problems []string
	for pkg, imports := range pkgs {
		allowed, ok := rules[pkg]
		if !ok {
			problems = append(problems, pkg+" has no row in the import table of docs/ARCHITECTURE.md")
			continue
		}
		for _, imp := range imports {
			if !allows(allowed, imp) {
				list := "nothing of the project"
				if len(allowed) > 0 {
					list = strings.Join(allowed, ", ")
				}
				problems = append(problems, fmt.Sprintf("%s imports %s, which docs/ARCHITECTURE.md does not allow (allowed: %s)", pkg, imp, list))
			}
		}
	}
	for pkg := range rules {
		if _, ok := pkgs[pkg]; !ok {
			problems = append(problems, pkg+" has a row in the import table of docs/ARCHITECTURE.md but is not a package")
		}
	}
	slices.Sort(problems)
	return problems
}

func allows(allowed []string, imp string) bool {
	for _, a := range allowed {
		if a == imp {
			return true
		}
		if dir, ok := strings.CutSuffix(a, "/*"); ok && strings.HasPrefix(imp, dir+"/") {
			return true
		}
	}
	return false
}

// readImportRules parses the "| package | may import |" table.
func readImportRules(file string) (map[string][]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rules := map[string][]string{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "| package | may import |":
			in = true
			continue
		case !in:
			continue
		case !strings.HasPrefix(line, "|"):
			in = false
			continue
		case strings.HasPrefix(line, "|---"):
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 2 {
			return nil, fmt.Errorf("%s: import table row %q has %d cells, want 2", file, line, len(cells))
		}
		pkg := strings.Trim(strings.TrimSpace(cells[0]), "`")
		if _, dup := rules[pkg]; dup {
			return nil, fmt.Errorf("%s: %s has two rows in the import table", file, pkg)
		}
		var allowed []string
		if c := strings.TrimSpace(cells[1]); c != "nothing of the project" {
			for _, a := range strings.Split(c, ",") {
				allowed = append(allowed, strings.Trim(strings.TrimSpace(a), "`"))
			}
		}
		rules[pkg] = allowed
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("%s has no import table", file)
	}
	return rules, nil
}

// modulePackages maps every package of the module under root (relative
// path) to the project packages its non-test files import.
func modulePackages(root string) (map[string][]string, error) {
	pkgs := map[string][]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		if p != root {
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // another module (the Node projects keep go vet out this way)
			}
		}
		bp, err := build.ImportDir(p, 0)
		if err != nil {
			var none *build.NoGoError
			if errors.As(err, &none) {
				return nil
			}
			return fmt.Errorf("%s: %w", p, err)
		}
		if len(bp.GoFiles) == 0 {
			return nil // tests only, like this one
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		var imports []string
		for _, imp := range bp.Imports {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				imports = append(imports, strings.TrimPrefix(strings.TrimPrefix(imp, module), "/"))
			}
		}
		pkgs[path.Clean(rel)] = imports
		return nil
	})
	return pkgs, err
}
