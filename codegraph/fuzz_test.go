package codegraph

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParsers feeds every parser arbitrary text: none may panic (the graph
// would survive it, losing the file), and every span must be ordered and
// inside the text.
func FuzzParsers(f *testing.F) {
	for _, seed := range []string{
		"package p\nfunc f() { g() }\n", "def f():\n    return g(\n", "class A { m() { return `${x}` } }",
		"fn f<'a>(x: &'a str) { r#\"s\"#; }", "struct S { int x; }; int f(int (*g)(int)) { return g(1); }",
		"public class A { void m() {} }", "namespace n { class C : B<T> { C() : x{1} {} }; }", "#define X(a) (a)\n",
		"namespace N; [A] class C<T> : B where T : new() { int P { get; } = @\"x\"\"\"; void M() => $\"{x}\"; }",
		"<p>'</p><?php namespace A\\B; use C\\{D, E as F}; # c\nclass G { public $h, $i = <<<X\nx\nX; function j() {} } ?>",
		"module M; class A::B < C; def self.f(x) = x; def ==(o) o end; def g?; x = <<~E if y\n#{z}\nE\n%w[a] =~ /b/; end end end\n=begin\n=end\n__END__\n",
		"x = %{#{a.sub(%r[\\A#{b}(?=/)]) {'$(c)'}}}\ny.map(&:%) { :<=> }\ndef z; end\nalias / +\nwhen :$/, :$;",
		"f() { g \"$(h '${x}')\" <<-'E'\n\tx\n\tE\n}\nfunction k ( case $1 in a) f;; esac )\n. ./l.sh # c",
		"package p\nimport a.b as c\nclass A<T>(val x: T) : B(), C {\n companion object { fun f() = 1 }\n fun <R> T?.g(): R? = null\n}\ntypealias D = List<A<Int>>\nfun interface E { fun h() }",
		"import struct A.B\nextension C.D: E { func `is`<T>(_ x: T) -> Bool { #\"x\"# == \"\"\"\ny\n\"\"\" } }\nenum F { case g, h(Int) }\nclass I { class func j() {} }",
		"local M = require 'm' --[==[ c ]==]\nfunction M.a:b(x) if x then return [[s]] end end\nM.c = function() end\nt = { d = function() end, [\"e\"] = 1 }\n",
	} {
		f.Add(seed)
	}
	for _, in := range hostileInputs {
		f.Add(strings.Repeat(in.piece, 64))
	}
	langs := []struct {
		lang Lang
		name string
	}{{LangGo, "x.go"}, {LangPython, "x.py"}, {LangJavaScript, "x.js"}, {LangTypeScript, "x.ts"},
		{LangRust, "x.rs"}, {LangJava, "X.java"}, {LangC, "x.c"}, {LangCPP, "x.cpp"},
		{LangCSharp, "x.cs"}, {LangPHP, "x.php"}, {LangRuby, "x.rb"}, {LangShell, "x.sh"}, {LangKotlin, "x.kt"}, {LangSwift, "x.swift"}, {LangLua, "x.lua"}}
	f.Fuzz(func(t *testing.T, text string) {
		src := []byte(text)
		end := newBuilder(src).pos(len(src))
		for _, l := range langs {
			file, _ := parse(l.lang, l.name, src)
			for _, s := range file.Symbols() {
				if before(s.End, s.Start) || before(end, s.End) || before(end, s.Sel) {
					t.Fatalf("%s: %s spans %+v-%+v (name at %+v) in a text ending at %+v", l.lang, s.Name, s.Start, s.End, s.Sel, end)
				}
			}
			for _, r := range file.Refs() {
				if before(end, r.Pos) {
					t.Fatalf("%s: reference %s at %+v past the end %+v", l.lang, r.Name, r.Pos, end)
				}
			}
		}
	})
}

// FuzzStoredGraph feeds the stored graph's reader arbitrary bytes: it
// refuses them or reads them, and every lookup and detail it then gives
// is within what it read: it never panics, nor asks for more memory than
// the bytes could hold.
func FuzzStoredGraph(f *testing.F) {
	root := f.TempDir()
	for rel, text := range map[string]string{
		"go.mod": "module m\n", "a.go": "package a\n\nfunc F() { G() }\n\ntype T struct{ X int }\n\nfunc (T) M() {}\n",
		"b/b.go": "package b\n\nimport \"m\"\n\nfunc G() { a.F() }\n", "c.py": "class C:\n    def m(self): return F()\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			f.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	state := filepath.Join(f.TempDir(), "codegraph.bin")
	g, err := New(Config{Root: root, StateFile: state})
	if err != nil {
		f.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	if err := g.Current(ctx); err != nil {
		f.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		f.Fatal(err)
	}
	data, err := os.ReadFile(state)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(imageMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		im, err := parseImage(data, nil)
		if err != nil {
			return
		}
		for _, name := range []string{"F", "G", "T", "M", "X", "C", "m", "zz"} {
			if id := im.lookup(name); id >= 0 {
				im.eachDef(id, func(f *File, i int32, _ Kind, _ string) { _ = f.detail() })
				im.eachReferrer(id, func(f *File) { _ = f.Refs() })
			}
		}
		for _, f := range im.files {
			d := f.detail()
			for _, s := range d.syms {
				_ = s.Qualified()
			}
			_ = d.enclosing(Pos{Line: 1})
		}
	})
}
