package codegraph

var swiftKeywords = set("associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func",
	"import", "init", "inout", "internal", "let", "open", "operator", "private", "precedencegroup",
	"protocol", "public", "rethrows", "static", "struct", "subscript", "typealias", "var", "break", "case",
	"catch", "continue", "default", "defer", "do", "else", "fallthrough", "for", "guard", "if", "in",
	"repeat", "return", "throw", "switch", "where", "while", "Any", "as", "await", "false", "is", "nil",
	"self", "Self", "super", "throws", "true", "try", "actor", "async", "convenience", "dynamic", "final",
	"indirect", "lazy", "mutating", "nonmutating", "optional", "override", "required", "some", "any",
	"unowned", "weak", "willSet", "didSet", "get", "set", "nonisolated", "isolated", "macro", "consuming",
	"borrowing", "package")

var swiftDecls = &declLang{
	lang:  LangSwift,
	funcs: set("func"),
	types: map[string]Kind{"class": KindClass, "struct": KindStruct, "enum": KindEnum, "protocol": KindInterface,
		"actor": KindClass, "typealias": KindType},
	props:     set("var", "let"),
	extension: "extension",
	mods: set("public", "private", "fileprivate", "internal", "open", "package", "final", "static", "class",
		"override", "mutating", "nonmutating", "lazy", "weak", "unowned", "dynamic", "optional", "required",
		"convenience", "indirect", "nonisolated", "prefix", "postfix", "infix", "async", "distributed"),
	hard: set("associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import",
		"init", "inout", "internal", "let", "operator", "private", "precedencegroup", "protocol", "public",
		"rethrows", "static", "struct", "subscript", "typealias", "var", "break", "case", "catch", "continue",
		"default", "defer", "do", "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return",
		"throw", "switch", "where", "while", "as", "false", "is", "nil", "self", "Self", "super", "throws",
		"true", "try"),
}

// parseSwift reads Swift: classes, structs, enums (and their cases),
// protocols, actors and type aliases; extensions, whose members belong to
// the type extended; functions at any depth (methods in a type's body),
// properties of types and files; imports.
func parseSwift(src []byte) *File {
	p := &declParser{tokParser: newTokParser(src, lexOptions{textBlocks: true, swiftRaw: true}, swiftKeywords), l: swiftDecls}
	p.run()
	p.refs(nil)
	return p.b.file(LangSwift)
}
