package codegraph

import "strings"

// A reference's qualifier is what its parser saw on the name's left side,
// which decides what the name may mean (resolve.go):
//
//	""                  a bare name: f, T
//	"."                 a member (a method, a field) of a value whose type
//	                    the parser does not know: x.f, f().g
//	"@"                 a member of the enclosing class's own instance:
//	                    self.f, this.f
//	"p" path            a Go name qualified by an import: fmt.Errorf is
//	                    Errorf with "pfmt"
//	"t" path " " Type   a Go member of a value whose type the parser knows
//	                    (a receiver, a parameter, a variable declared with
//	                    its type or made from a composite literal): Type
//	                    defined in the package of the import path, "" for
//	                    the file's own package
//
// An import path holds no space, so the last form splits at its last one.
const (
	qualBare   = ""
	qualMember = "."
	qualSelf   = "@"
)

// qualPkg is the qualifier of a name reached through the Go import path.
func qualPkg(path string) string { return "p" + path }

// qualType is the qualifier of a member of a value of type typ, defined in
// the package of the import path ("" for the file's own package).
func qualType(path, typ string) string { return "t" + path + " " + typ }

// splitQual returns the kind of a qualifier (0 for a bare name, '.', '@',
// 'p' or 't') and what it holds: the import path, and the type of a 't'.
func splitQual(q string) (kind byte, path, typ string) {
	if q == "" {
		return 0, "", ""
	}
	switch q[0] {
	case 'p':
		return 'p', q[1:], ""
	case 't':
		i := strings.LastIndexByte(q, ' ')
		if i < 1 {
			return '.', "", ""
		}
		return 't', q[1:i], q[i+1:]
	case '@':
		return '@', "", ""
	}
	return '.', "", ""
}

// nameQual is a distinct name a file refers to: the name and its qualifier.
type nameQual struct{ name, qual string }
