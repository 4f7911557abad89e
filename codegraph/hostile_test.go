package codegraph

import (
	"strings"
	"testing"
)

// hostileInputs are the repeated openers without their closers, the deep
// nestings and the unterminated literals a hostile repository may write,
// by the recognisers they are aimed at.
var hostileInputs = []struct {
	lang  Lang
	name  string
	piece string // repeated to make the file
}{
	{LangJava, "X.java", "class A "}, {LangJava, "X.java", "class A("}, {LangJava, "X.java", "enum E "},
	{LangJava, "X.java", "interface I "}, {LangJava, "X.java", "record R("}, {LangJava, "X.java", "\n  class A:\n"},
	{LangJava, "X.java", "import "}, {LangJava, "X.java", "{)"}, {LangJava, "X.java", "class A { int f("},
	{LangJavaScript, "x.js", "class A "}, {LangJavaScript, "x.js", "function f() "}, {LangJavaScript, "x.js", "class A("},
	{LangJavaScript, "x.js", "import "}, {LangJavaScript, "x.js", "a.b = function "}, {LangJavaScript, "x.js", "{)"},
	{LangJavaScript, "x.js", "/["}, {LangJavaScript, "x.js", "(/["}, {LangJavaScript, "x.js", "`${"},
	{LangJavaScript, "x.js", "const a = "}, {LangJavaScript, "x.js", "export "}, {LangJavaScript, "x.js", "class A { m() "},
	{LangTypeScript, "x.ts", "class A "}, {LangTypeScript, "x.ts", "function f() "}, {LangTypeScript, "x.ts", "interface I "},
	{LangTypeScript, "x.ts", "enum E "}, {LangTypeScript, "x.ts", "type T = "}, {LangTypeScript, "x.ts", "import "},
	{LangTypeScript, "x.ts", "let a: "}, {LangTypeScript, "x.ts", "namespace N "}, {LangTypeScript, "x.ts", "a<"},
	{LangRust, "x.rs", "fn f("}, {LangRust, "x.rs", "struct S "}, {LangRust, "x.rs", "enum E "}, {LangRust, "x.rs", "struct S : "},
	{LangRust, "x.rs", "impl A "}, {LangRust, "x.rs", "use a::"}, {LangRust, "x.rs", "const X: "}, {LangRust, "x.rs", "{)"},
	{LangRust, "x.rs", "macro_rules! m "}, {LangRust, "x.rs", "r#\""}, {LangRust, "x.rs", "trait T "}, {LangRust, "x.rs", "mod m "},
	{LangC, "x.c", "struct S "}, {LangC, "x.c", "int f("}, {LangC, "x.c", "typedef "}, {LangC, "x.c", "enum { A, "},
	{LangC, "x.c", "{)"}, {LangC, "x.c", "#define X \\\n"},
	{LangCPP, "x.cpp", "class A "}, {LangCPP, "x.cpp", "namespace N "}, {LangCPP, "x.cpp", "template<"},
	{LangCPP, "x.cpp", "A::B "}, {LangCPP, "x.cpp", "struct S : "}, {LangCPP, "x.cpp", "{)"},
	{LangPHP, "x.php", "<?php require (__DIR__ . "}, {LangPHP, "x.php", "<?php include dirname(__FILE__) . '/a' "},
	{LangKotlin, "x.kt", "package a."}, {LangCSharp, "x.cs", "namespace A { "},
	{LangTypeScript, "x.ts", "interface I extends B<{"}, {LangTypeScript, "x.ts", "type T = { m(): P<"},
}

// TestRecognisersLinear holds each recogniser to work in proportion to its
// file on hostile inputs: the steps it takes (looks at a token, steps of a
// look-ahead) on four times the input may be about four times as many,
// never the sixteen a search to the file's end from every opener costs.
func TestRecognisersLinear(t *testing.T) {
	steps := func(lang Lang, name, text string) int {
		var got *toks
		tracedToks = func(ts *toks) { got = ts }
		defer func() { tracedToks = nil }()
		if _, err := parse(lang, name, []byte(text)); err != nil {
			t.Fatal(err)
		}
		if got == nil {
			t.Fatalf("%s: no tokens traced", name)
		}
		return got.steps
	}
	const n = 1500
	for _, in := range hostileInputs {
		small := steps(in.lang, in.name, strings.Repeat(in.piece, n))
		large := steps(in.lang, in.name, strings.Repeat(in.piece, 4*n))
		if large > 5*small {
			t.Errorf("%s: %q repeated %d times takes %d steps, %d times %d (%.1f×)", in.lang, in.piece, n, small, 4*n, large, float64(large)/float64(small))
		}
	}
	// one statement of many declarators, each after a function's body
	for _, piece := range []string{"a=function(){},", "a=b=>c,d=class{},", "a=class{m(){}},"} {
		small := steps(LangJavaScript, "x.js", "var "+strings.Repeat(piece, n)+"z")
		large := steps(LangJavaScript, "x.js", "var "+strings.Repeat(piece, 4*n)+"z")
		if large > 5*small {
			t.Errorf("var %q repeated %d times takes %d steps, %d times %d (%.1f×)", piece, n, small, 4*n, large, float64(large)/float64(small))
		}
	}
}
