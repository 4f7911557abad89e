package codegraph

import (
	"strings"
	"testing"
)

// TestFilePackage holds what a file is known by to its namespace or
// package: the full name of the one its first definition is in.
func TestFilePackage(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"a.cs", "using System;\nnamespace X.Y {\n namespace Z { class C { } }\n}\n", "X.Y.Z"},
		{"b.cs", "namespace P.Q;\nclass R { }\n", "P.Q"},
		{"c.cs", "namespace Empty { }\n", "Empty"},
		{"d.cs", "class NoNamespace { }\n", ""},
		{"e.php", "<?php\nnamespace App\\Http;\nclass Kernel {}\n", `App\Http`},
		{"f.php", "<?php\nnamespace A { }\nnamespace B { class K {} }\n", "B"},
		{"g.kt", "package com.example.shop\n\nclass Item\n", "com.example.shop"},
		{"h.kt", "class NoPackage\n", ""},
		{"i.swift", "import Foundation\nstruct S {}\n", ""},
	} {
		if got := Parse(c.name, []byte(c.src)).Package; got != c.want {
			t.Errorf("%s: Package %q, want %q", c.name, got, c.want)
		}
	}
}

// TestNamespacesBounded: namespaces nested as deep as a hostile file
// nests them are known by a name of bounded length, so that what a file
// sees is not the square of its nesting.
func TestNamespacesBounded(t *testing.T) {
	const depth = 3000
	src := strings.Repeat("namespace Deep { ", depth) + "class C { }" + strings.Repeat(" }", depth)
	f := Parse("deep.cs", []byte(src))
	if n := len(f.Package); n == 0 || n > maxNamespace {
		t.Errorf("Package is %d bytes long, want 1 to %d", n, maxNamespace)
	}
	for i, ns := range namespaces(f.Symbols(), ".") {
		if len(ns) > maxNamespace {
			t.Fatalf("namespace %d is %d bytes long", i, len(ns))
		}
	}
}

// TestPHPIncludes: the requires and includes of a literal path are
// imports; those of an expression are not.
func TestPHPIncludes(t *testing.T) {
	src := "<?php\nrequire 'vendor/autoload.php';\nrequire_once __DIR__ . '/../lib/a.php';\n" +
		"include(dirname(__FILE__) . '/b.inc');\ninclude_once 'config.php';\nrequire $path;\n" +
		"require __DIR__ . '/' . $name . '.php';\nrequire \"$dir/x.php\";\n"
	var got []string
	for _, imp := range Parse("x.php", []byte(src)).Imports {
		got = append(got, imp.Path)
	}
	want := []string{"vendor/autoload.php", "../lib/a.php", "./b.inc", "config.php"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("imports %q, want %q", got, want)
	}
}
