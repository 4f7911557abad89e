// Command treesitter measures the code graph's parsers against tree-sitter
// (through the cgo bindings of github.com/smacker/go-tree-sitter, which
// bundle every grammar the graph covers) on corpora of real code: the
// definitions each finds (functions and methods, types), compared by name
// and line, and the CPU time each takes on one core. It is a module of its
// own so that agentls itself never depends on cgo. docs/ARCHITECTURE.md
// ("Choices made") and docs/BENCHMARKS.md report its figures.
//
//	go run . -lang go -dir "$(go env GOROOT)/src"
package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/bash"
	"github.com/smacker/go-tree-sitter/c"
	"github.com/smacker/go-tree-sitter/cpp"
	"github.com/smacker/go-tree-sitter/csharp"
	"github.com/smacker/go-tree-sitter/golang"
	"github.com/smacker/go-tree-sitter/java"
	"github.com/smacker/go-tree-sitter/javascript"
	"github.com/smacker/go-tree-sitter/kotlin"
	"github.com/smacker/go-tree-sitter/lua"
	"github.com/smacker/go-tree-sitter/php"
	"github.com/smacker/go-tree-sitter/python"
	"github.com/smacker/go-tree-sitter/ruby"
	"github.com/smacker/go-tree-sitter/rust"
	"github.com/smacker/go-tree-sitter/swift"
	"github.com/smacker/go-tree-sitter/typescript/typescript"

	"github.com/agentls/agentls/codegraph"
)

// spec is a language: its grammar, its files, and the tags-style queries
// of its definitions by category.
type spec struct {
	lang  *sitter.Language
	exts  []string
	funcs []string
	types []string
}

var specs = map[string]spec{
	"go": {golang.GetLanguage(), []string{".go"},
		[]string{`(function_declaration name: (identifier) @n)`, `(method_declaration name: (field_identifier) @n)`,
			`(method_elem name: (field_identifier) @n)`},
		[]string{`(type_spec name: (type_identifier) @n)`}},
	"python": {python.GetLanguage(), []string{".py"},
		[]string{`(function_definition name: (identifier) @n)`},
		[]string{`(class_definition name: (identifier) @n)`}},
	"javascript": {javascript.GetLanguage(), []string{".js", ".mjs", ".cjs"},
		[]string{`(function_declaration name: (identifier) @n)`, `(generator_function_declaration name: (identifier) @n)`,
			`(class_body (method_definition name: (property_identifier) @n))`,
			`(class_body (method_definition name: (private_property_identifier) @n))`,
			`(variable_declarator name: (identifier) @n value: (arrow_function))`,
			`(variable_declarator name: (identifier) @n value: (function_expression))`,
			`(variable_declarator name: (identifier) @n value: (generator_function))`,
			// tags.scm's named function expressions, and class fields
			// holding a function, which the graph counts as methods
			`(function_expression name: (identifier) @n)`, `(generator_function name: (identifier) @n)`,
			`(field_definition property: [(property_identifier) (private_property_identifier)] @n value: [(arrow_function) (function_expression)])`},
		[]string{`(class_declaration name: (identifier) @n)`, `(variable_declarator name: (identifier) @n value: (class))`,
			`(class name: (identifier) @n)`}}, // tags.scm's named class expressions
	"typescript": {typescript.GetLanguage(), []string{".ts"},
		[]string{`(function_declaration name: (identifier) @n)`, `(function_signature name: (identifier) @n)`,
			`(class_body (method_definition name: (property_identifier) @n))`,
			`(method_signature name: (property_identifier) @n)`, `(abstract_method_signature name: (property_identifier) @n)`,
			`(variable_declarator name: (identifier) @n value: (arrow_function))`,
			`(variable_declarator name: (identifier) @n value: (function_expression))`,
			`(variable_declarator name: (identifier) @n value: (generator_function))`,
			`(function_expression name: (identifier) @n)`, `(generator_function name: (identifier) @n)`,
			`(public_field_definition name: [(property_identifier) (private_property_identifier)] @n value: [(arrow_function) (function_expression)])`},
		[]string{`(class_declaration name: (type_identifier) @n)`, `(abstract_class_declaration name: (type_identifier) @n)`,
			`(variable_declarator name: (identifier) @n value: (class))`, `(class name: (type_identifier) @n)`,
			`(interface_declaration name: (type_identifier) @n)`, `(type_alias_declaration name: (type_identifier) @n)`,
			`(enum_declaration name: (identifier) @n)`}},
	"rust": {rust.GetLanguage(), []string{".rs"},
		[]string{`(function_item name: (identifier) @n)`, `(function_signature_item name: (identifier) @n)`},
		[]string{`(struct_item name: (type_identifier) @n)`, `(enum_item name: (type_identifier) @n)`,
			`(trait_item name: (type_identifier) @n)`, `(type_item name: (type_identifier) @n)`, `(union_item name: (type_identifier) @n)`}},
	"java": {java.GetLanguage(), []string{".java"},
		[]string{`(method_declaration name: (identifier) @n)`, `(constructor_declaration name: (identifier) @n)`},
		[]string{`(class_declaration name: (identifier) @n)`, `(interface_declaration name: (identifier) @n)`,
			`(enum_declaration name: (identifier) @n)`, `(record_declaration name: (identifier) @n)`,
			`(annotation_type_declaration name: (identifier) @n)`}},
	"c": {c.GetLanguage(), []string{".c", ".h"},
		[]string{`(function_definition declarator: (function_declarator declarator: (identifier) @n))`,
			`(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @n)))`,
			`(function_definition declarator: (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @n))))`},
		[]string{`(struct_specifier name: (type_identifier) @n body: (field_declaration_list))`,
			`(union_specifier name: (type_identifier) @n body: (field_declaration_list))`,
			`(enum_specifier name: (type_identifier) @n body: (enumerator_list))`,
			`(type_definition declarator: (type_identifier) @n)`}},
	"cpp": {cpp.GetLanguage(), []string{".cc", ".cpp", ".cxx", ".hpp", ".hh"},
		[]string{`(function_definition declarator: (function_declarator declarator: (identifier) @n))`,
			`(function_definition declarator: (function_declarator declarator: (field_identifier) @n))`,
			`(function_definition declarator: (function_declarator declarator: (qualified_identifier name: (identifier) @n)))`,
			`(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @n)))`,
			`(function_definition declarator: (reference_declarator (function_declarator declarator: (identifier) @n)))`,
			`(field_declaration declarator: (function_declarator declarator: (field_identifier) @n))`},
		[]string{`(class_specifier name: (type_identifier) @n body: (field_declaration_list))`,
			`(struct_specifier name: (type_identifier) @n body: (field_declaration_list))`,
			`(union_specifier name: (type_identifier) @n body: (field_declaration_list))`,
			`(enum_specifier name: (type_identifier) @n body: (enumerator_list))`,
			`(type_definition declarator: (type_identifier) @n)`, `(alias_declaration name: (type_identifier) @n)`}},
	"csharp": {csharp.GetLanguage(), []string{".cs"},
		[]string{`(method_declaration name: (identifier) @n)`, `(constructor_declaration name: (identifier) @n)`},
		[]string{`(class_declaration name: (identifier) @n)`, `(interface_declaration name: (identifier) @n)`,
			`(struct_declaration name: (identifier) @n)`, `(enum_declaration name: (identifier) @n)`,
			`(record_declaration name: (identifier) @n)`, `(delegate_declaration name: (identifier) @n)`}},
	"php": {php.GetLanguage(), []string{".php"},
		[]string{`(function_definition name: (name) @n)`, `(method_declaration name: (name) @n)`},
		[]string{`(class_declaration name: (name) @n)`, `(interface_declaration name: (name) @n)`,
			`(trait_declaration name: (name) @n)`, `(enum_declaration name: (name) @n)`}},
	"ruby": {ruby.GetLanguage(), []string{".rb"},
		[]string{`(method name: (_) @n)`, `(singleton_method name: (_) @n)`},
		[]string{`(class name: (constant) @n)`, `(class name: (scope_resolution name: (_) @n))`,
			`(module name: (constant) @n)`, `(module name: (scope_resolution name: (_) @n))`}},
	"shell": {bash.GetLanguage(), []string{".sh", ".bash"},
		[]string{`(function_definition name: (word) @n)`},
		nil},
	"kotlin": {kotlin.GetLanguage(), []string{".kt"},
		[]string{`(function_declaration (simple_identifier) @n)`},
		[]string{`(class_declaration (type_identifier) @n)`, `(object_declaration (type_identifier) @n)`,
			`(type_alias (type_identifier) @n)`}},
	"swift": {swift.GetLanguage(), []string{".swift"},
		[]string{`(function_declaration name: (simple_identifier) @n)`, `(protocol_function_declaration name: (simple_identifier) @n)`},
		[]string{`(class_declaration name: (type_identifier) @n)`, `(protocol_declaration name: (type_identifier) @n)`,
			`(typealias_declaration name: (type_identifier) @n)`}},
	"lua": {lua.GetLanguage(), []string{".lua"},
		[]string{`(function_statement name: (identifier) @n)`, `(function_statement name: (function_name (identifier) @n .))`,
			`(variable_declaration name: (variable_declarator (identifier) @n .) value: (function))`,
			`(field name: (identifier) @n value: (function))`},
		nil},
}

type key struct {
	file string
	name string
	line uint32
}

func cpu() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func main() {
	langName := flag.String("lang", "", "go, python, javascript, typescript, rust, java, c, cpp, csharp, php, ruby, shell, kotlin, swift, lua")
	dir := flag.String("dir", "", "the corpus")
	maxFiles := flag.Int("max", 0, "read at most this many files (0: all)")
	show := flag.Int("show", 0, "print this many definitions found by one side only")
	tree := flag.String("tree", "", "print tree-sitter's syntax tree of this file and the graph's definitions in it, and exit")
	flag.Parse()
	sp, ok := specs[*langName]
	if ok && *tree != "" {
		printTree(sp, *tree)
		return
	}
	if !ok || *dir == "" {
		fmt.Fprintln(os.Stderr, "usage: treesitter -lang LANG -dir DIR")
		os.Exit(2)
	}
	type file struct {
		name string
		src  []byte
	}
	var files []file
	_ = filepath.WalkDir(*dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || (*maxFiles > 0 && len(files) >= *maxFiles) {
			return nil
		}
		for _, e := range sp.exts {
			if strings.HasSuffix(p, e) && codegraph.LangOf(p) != codegraph.LangNone {
				if src, err := os.ReadFile(p); err == nil && len(src) < 4<<20 {
					files = append(files, file{p, src})
				}
				return nil
			}
		}
		return nil
	})
	size := 0
	for _, f := range files {
		size += len(f.src)
	}
	// ours
	oursFn, oursTy := map[key]bool{}, map[key]bool{}
	c0 := cpu()
	refs := 0
	for _, f := range files {
		g := codegraph.Parse(f.name, f.src)
		refs += len(g.Refs())
		for _, s := range g.Symbols() {
			k := key{f.name, s.Name, s.Sel.Line}
			switch s.Kind {
			case codegraph.KindFunction, codegraph.KindMethod:
				oursFn[k] = true
			case codegraph.KindClass, codegraph.KindStruct, codegraph.KindInterface, codegraph.KindTrait, codegraph.KindType, codegraph.KindEnum:
				oursTy[k] = true
			case codegraph.KindModule:
				if *langName == "ruby" { // a Ruby module is a type, as its query says
					oursTy[k] = true
				}
			}
		}
	}
	oursCPU := cpu() - c0
	// tree-sitter: parse, then the definition queries
	var fnQ, tyQ []*sitter.Query
	for _, p := range sp.funcs {
		q, err := sitter.NewQuery([]byte(p), sp.lang)
		if err != nil {
			fmt.Fprintf(os.Stderr, "treesitter: query %s: %v\n", p, err)
			os.Exit(1)
		}
		fnQ = append(fnQ, q)
	}
	for _, p := range sp.types {
		q, err := sitter.NewQuery([]byte(p), sp.lang)
		if err != nil {
			fmt.Fprintf(os.Stderr, "treesitter: query %s: %v\n", p, err)
			os.Exit(1)
		}
		tyQ = append(tyQ, q)
	}
	tsFn, tsTy := map[key]bool{}, map[key]bool{}
	parser := sitter.NewParser()
	parser.SetLanguage(sp.lang)
	var parseCPU, queryCPU time.Duration
	errs := 0
	errFiles := map[string]bool{}
	for _, f := range files {
		c0 := cpu()
		tree, err := parser.ParseCtx(context.Background(), nil, f.src)
		parseCPU += cpu() - c0
		if err != nil {
			continue
		}
		root := tree.RootNode()
		if root.HasError() {
			errs++
			errFiles[f.name] = true
		}
		c0 = cpu()
		run := func(qs []*sitter.Query, into map[key]bool) {
			for _, q := range qs {
				qc := sitter.NewQueryCursor()
				qc.Exec(q, root)
				for {
					m, ok := qc.NextMatch()
					if !ok {
						break
					}
					for _, cp := range m.Captures {
						// `is`, a keyword made a name (Kotlin, Swift), is is
						into[key{f.name, strings.Trim(cp.Node.Content(f.src), "`"), cp.Node.StartPoint().Row}] = true
					}
				}
				qc.Close()
			}
		}
		run(fnQ, tsFn)
		run(tyQ, tsTy)
		queryCPU += cpu() - c0
		tree.Close()
	}
	fmt.Printf("%s: %d files, %.1f MB, tree-sitter parse errors in %d files\n", *langName, len(files), float64(size)/(1<<20), errs)
	report := func(what string, ours, ts map[key]bool) {
		both := 0
		for k := range ours {
			if ts[k] {
				both++
			}
		}
		fmt.Printf("  %-10s tree-sitter %7d  ours %7d  both %7d  recall %5.1f%%  precision %5.1f%%\n", what, len(ts), len(ours), both,
			pct(both, len(ts)), pct(both, len(ours)))
		if errs > 0 {
			// the same, in the files tree-sitter parses without an error
			var nts, nours, nboth int
			for k := range ts {
				if !errFiles[k.file] {
					nts++
				}
			}
			for k := range ours {
				if !errFiles[k.file] {
					nours++
					if ts[k] {
						nboth++
					}
				}
			}
			fmt.Printf("  %-10s in the %d files tree-sitter parses whole: recall %5.1f%%  precision %5.1f%%\n", "", len(files)-errs,
				pct(nboth, nts), pct(nboth, nours))
		}
		if *show > 0 {
			var only []string
			for k := range ts {
				if !ours[k] {
					only = append(only, fmt.Sprintf("    only tree-sitter: %s:%d %s", k.file, k.line+1, k.name))
				}
			}
			for k := range ours {
				if !ts[k] {
					only = append(only, fmt.Sprintf("    only ours: %s:%d %s", k.file, k.line+1, k.name))
				}
			}
			sort.Strings(only)
			if len(only) > *show {
				only = only[:*show]
			}
			fmt.Println(strings.Join(only, "\n"))
		}
	}
	report("functions", oursFn, tsFn)
	report("types", oursTy, tsTy)
	mb := float64(size) / (1 << 20)
	fmt.Printf("  CPU, one core: ours %.2f s (%.0f MB/s, definitions and %d references); tree-sitter %.2f s to parse (%.0f MB/s) + %.2f s for the definition queries\n",
		oursCPU.Seconds(), mb/oursCPU.Seconds(), refs, parseCPU.Seconds(), mb/parseCPU.Seconds(), queryCPU.Seconds())
}

// printTree prints tree-sitter's syntax tree of one file and the
// definitions the graph finds in it, to write a language's queries and
// see where the two differ.
func printTree(sp spec, name string) {
	src, err := os.ReadFile(name)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	parser := sitter.NewParser()
	parser.SetLanguage(sp.lang)
	t, err := parser.ParseCtx(context.Background(), nil, src)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(t.RootNode().String())
	for _, s := range codegraph.Parse(name, src).Symbols() {
		fmt.Printf("%d:%d %s %s (in %q)\n", s.Sel.Line+1, s.Sel.Col+1, s.Kind, s.Name, s.Container)
	}
}

func pct(a, b int) float64 {
	if b == 0 {
		return 100
	}
	return 100 * float64(a) / float64(b)
}
