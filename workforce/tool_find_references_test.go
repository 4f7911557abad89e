package workforce

import (
	"strings"
	"testing"
)

func TestFindReferences(t *testing.T) {
	res := graphTools(t, shopFiles,
		call("find_references", map[string]any{"name": "Cart.Add"}),
		call("find_references", map[string]any{"name": "Cart"}),
		call("find_references", map[string]any{"name": "Order"}),
		call("find_references", map[string]any{"name": "Nothing"}),
	)
	for _, tc := range []struct {
		name  string
		isErr bool
		says  []string
		not   []string
	}{
		{"lists a method's calls with the function they are in", false, []string{"order.go:5:4: call in Order: c.Add(1)"}, []string{"stock.go"}},
		{"lists a type's references", false, []string{"cart.go:5:10: ref in Cart.Add", "order.go:4:8: ref in Order: c := &Cart{}"}, nil},
		{"says when nothing refers to a definition", false, []string{"No references to Order"}, nil},
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
