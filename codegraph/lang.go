package codegraph

import (
	"path"
	"strings"
)

// Lang is a language the graph parses.
type Lang uint8

// The languages of the graph.
const (
	LangNone Lang = iota
	LangGo
	LangPython
	LangJavaScript
	LangTypeScript
	LangRust
	LangJava
	LangC
	LangCPP
	LangCSharp
	LangPHP
	LangRuby
	LangShell
	LangKotlin
	LangSwift
	LangLua
)

var langNames = [...]string{
	LangGo:         "go",
	LangPython:     "python",
	LangJavaScript: "javascript",
	LangTypeScript: "typescript",
	LangRust:       "rust",
	LangJava:       "java",
	LangC:          "c",
	LangCPP:        "cpp",
	LangCSharp:     "csharp",
	LangPHP:        "php",
	LangRuby:       "ruby",
	LangShell:      "shell",
	LangKotlin:     "kotlin",
	LangSwift:      "swift",
	LangLua:        "lua",
}

func (l Lang) String() string {
	if int(l) < len(langNames) {
		return langNames[l]
	}
	return ""
}

var extLangs = map[string]Lang{
	".go":    LangGo,
	".py":    LangPython,
	".pyi":   LangPython,
	".js":    LangJavaScript,
	".jsx":   LangJavaScript,
	".mjs":   LangJavaScript,
	".cjs":   LangJavaScript,
	".ts":    LangTypeScript,
	".tsx":   LangTypeScript,
	".mts":   LangTypeScript,
	".cts":   LangTypeScript,
	".rs":    LangRust,
	".java":  LangJava,
	".c":     LangC,
	".h":     LangC,
	".cc":    LangCPP,
	".cpp":   LangCPP,
	".cxx":   LangCPP,
	".c++":   LangCPP,
	".hh":    LangCPP,
	".hpp":   LangCPP,
	".hxx":   LangCPP,
	".h++":   LangCPP,
	".ipp":   LangCPP,
	".cs":    LangCSharp,
	".php":   LangPHP,
	".rb":    LangRuby,
	".rake":  LangRuby,
	".sh":    LangShell,
	".bash":  LangShell,
	".kt":    LangKotlin,
	".kts":   LangKotlin,
	".swift": LangSwift,
	".lua":   LangLua,
}

// langsRead names the languages the graph reads, for messages.
const langsRead = "Go, Python, JavaScript, TypeScript, Rust, Java, C, C++, C#, PHP, Ruby, shell (.sh, .bash), Kotlin, Swift, Lua"

// LangOf is the language of a file by its name, LangNone when the graph
// does not parse it.
func LangOf(name string) Lang {
	ext := strings.ToLower(path.Ext(name))
	return extLangs[ext]
}

// Parse parses one file by its name's language (LangOf): its definitions,
// imports and references, as the graph holds them. A file of no language
// the graph reads gives an empty record. It never fails: a file the
// parser cannot read whole has Err set and keeps what was read.
func Parse(name string, src []byte) *File {
	f := parseSafely(LangOf(name), name, src)
	f.Path = name
	return f
}

// parse runs the parser of lang over src.
func parse(lang Lang, name string, src []byte) (*File, error) {
	switch lang {
	case LangGo:
		return parseGo(name, src)
	case LangPython:
		return parsePython(src), nil
	case LangJavaScript, LangTypeScript:
		return parseJS(lang, src), nil
	case LangRust:
		return parseRust(src), nil
	case LangJava:
		return parseJava(src), nil
	case LangC, LangCPP:
		return parseC(lang, src), nil
	case LangCSharp:
		return parseCSharp(src), nil
	case LangPHP:
		return parsePHP(src), nil
	case LangRuby:
		return parseRuby(src), nil
	case LangShell:
		return parseShell(src), nil
	case LangKotlin:
		return parseKotlin(src), nil
	case LangSwift:
		return parseSwift(src), nil
	case LangLua:
		return parseLua(src), nil
	}
	return &File{}, nil
}
