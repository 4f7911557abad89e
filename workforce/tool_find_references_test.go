package workforce

import (
	"strings"
	"testing"
)

func TestFindReferences(t *testing.T) {
	files := map[string]string{
		// a value of a type the code graph does not know: its Add is a guess
		"restock.go": "package shop\n\nfunc Restock(s interface{ Add(int) }) {\n\ts.Add(2)\n}\n",
		// more calls than one answer lists
		"busy.go": "package shop\n\nfunc Busy() {\n" + strings.Repeat("\tOrder()\n", 130) + "}\n",
	}
	for k, v := range shopFiles {
		files[k] = v
	}
	res := graphTools(t, files,
		call("find_references", map[string]any{"name": "Cart.Add"}),
		call("find_references", map[string]any{"name": "Cart"}),
		call("find_references", map[string]any{"name": "Sum"}),
		call("find_references", map[string]any{"name": "Order"}),
		call("find_references", map[string]any{"name": "Busy"}),
		call("find_references", map[string]any{"name": "Nothing"}),
	)
	for _, tc := range []struct {
		name  string
		isErr bool
		says  []string
		not   []string
	}{
		{"lists a method's calls with the function they are in and how each was found, a guess marked so", false, []string{
			"order.go:5:4: call in Order [resolved]: c.Add(1)",
			"restock.go:4:4: call in Restock [name]: s.Add(2)",
			"[resolved] resolved by the code graph; [name] a guess by the name alone",
		}, []string{"[lsp]"}},
		{"lists a type's references", false, []string{"cart.go:5:10: ref in Cart.Add [resolved]", "order.go:4:8: ref in Order [resolved]: c := &Cart{}"}, []string{"[name]"}},
		{"lists the calls of a method of a known type as resolved", false, []string{"order.go:6:11: call in Order [resolved]: return c.Sum()"}, nil},
		{"says how many references it left out", false, []string{"busy.go:4:2: call in Busy [resolved]: Order()", "… and 30 more references not shown (the first 100 of 130 are)"}, nil},
		{"says when nothing refers to a definition", false, []string{"No references to Busy"}, nil},
		{"refuses a name with no definition", true, []string{"no definition of Nothing"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := res[0]
			res = res[1:]
			if r.IsError != tc.isErr {
				t.Errorf("isError = %v: %s", r.IsError, r.Content)
			}
			for _, s := range tc.says {
				if !strings.Contains(r.Content, s) {
					t.Errorf("%q missing from:\n%s", s, r.Content)
				}
			}
			for _, s := range tc.not {
				if strings.Contains(r.Content, s) {
					t.Errorf("%q in:\n%s", s, r.Content)
				}
			}
		})
	}
}
