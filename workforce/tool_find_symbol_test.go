package workforce

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/testkit"
)

// graphTools runs one worker turn of calls against a workspace with a
// code graph and returns the results in order.
func graphTools(t *testing.T, files map[string]string, calls ...clients.ToolCall) []clients.ToolResult {
	t.Helper()
	root := t.TempDir()
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	testkit.WriteFiles(t, root, files)
	for i := range calls {
		calls[i].ID = calls[i].Name + string(rune('a'+i))
	}
	var results []clients.ToolResult
	m := &funcModel{fn: func(_ context.Context, req *clients.Request) (*clients.Response, error) {
		switch {
		case req.Agent == clients.AgentCoordinator:
			return &clients.Response{Text: "one step"}, nil
		case len(req.Messages) == 1:
			return &clients.Response{ToolCalls: calls}, nil
		}
		results = req.Messages[len(req.Messages)-1].ToolResults
		return finish("done"), nil
	}}
	e, _ := graphEngine(t, m, root)
	if _, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "find things"}, settings()); err != nil {
		t.Fatal(err)
	}
	if len(results) != len(calls) {
		t.Fatalf("%d results for %d calls", len(results), len(calls))
	}
	return results
}

var shopFiles = map[string]string{
	"cart.go":  "package shop\n\ntype Cart struct{ items []int }\n\nfunc (c *Cart) Add(n int) { c.items = append(c.items, n) }\n\nfunc (c *Cart) Sum() int { return len(c.items) }\n",
	"order.go": "package shop\n\nfunc Order() int {\n\tc := &Cart{}\n\tc.Add(1)\n\treturn c.Sum()\n}\n",
	"stock.go": "package shop\n\ntype Stock struct{}\n\nfunc (s *Stock) Add(n int) {}\n",
}

func TestFindSymbol(t *testing.T) {
	res := graphTools(t, shopFiles,
		call("find_symbol", map[string]any{"name": "Cart"}),
		call("find_symbol", map[string]any{"name": "Add"}),
		call("find_symbol", map[string]any{"name": "Cart.Add"}),
		call("find_symbol", map[string]any{"name": "Add", "path": "stock.go"}),
		call("find_symbol", map[string]any{"name": "Add", "path": "order.go"}),
		call("find_symbol", map[string]any{"name": "Nothing"}),
		call("find_symbol", map[string]any{"name": "Cart", "path": "README.md"}),
		call("find_symbol", map[string]any{}),
	)
	for _, tc := range []struct {
		name  string
		isErr bool
		says  []string
		not   []string
	}{
		{"finds a type with its lines, kind and first line", false, []string{"cart.go:3-3: struct Cart: type Cart struct{ items []int }"}, nil},
		{"finds every method of a name", false, []string{"cart.go:5-5: method Cart.Add", "stock.go:5-5: method Stock.Add"}, nil},
		{"finds a method by its type", false, []string{"cart.go:5-5: method Cart.Add"}, []string{"Stock"}},
		{"finds in one file only", false, []string{"stock.go:5-5: method Stock.Add"}, []string{"cart.go", "[resolved]"}},
		{"finds what a file that uses the name means by it", false, []string{"cart.go:5-5: method Cart.Add [resolved]: func (c *Cart) Add", "What Add means in order.go ([resolved] resolved by the code graph)"}, []string{"Stock"}},
		{"says when there is none", false, []string{"No definition of Nothing", "search_files"}, nil},
		{"refuses a path that is not a source file", true, []string{"README.md is not a source file"}, nil},
		{"needs a name", true, []string{"find_symbol needs name"}, nil},
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
