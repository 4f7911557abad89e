package codegraph

import (
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
			for _, s := range file.Symbols {
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

// FuzzStoredGraph feeds the store's decoder arbitrary bytes: it refuses
// them or decodes them, never panics or asks for more memory than the
// bytes could hold.
func FuzzStoredGraph(f *testing.F) {
	f.Add(encodeGraph(map[string]*File{"a.go": {Path: "a.go", Lang: LangGo, Symbols: []Symbol{{Name: "f", Kind: KindFunction, Parent: -1}}, Names: []string{"g"}, Counts: []uint32{1}}}, map[string]string{".": "m"}))
	f.Add([]byte(storeMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, _ = decodeGraph(data)
	})
}
