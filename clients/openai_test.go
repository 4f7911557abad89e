package clients

import "testing"

func TestToolResultTextSaysAFailureOnce(t *testing.T) {
	for _, c := range []struct {
		in   ToolResult
		want string
	}{
		{ToolResult{Content: "Error: no such file", IsError: true}, "Error: no such file"},
		{ToolResult{Content: "error: exit 2", IsError: true}, "error: exit 2"},
		{ToolResult{Content: "Not applied: the person rejected it", IsError: true}, "Error: Not applied: the person rejected it"},
		{ToolResult{Content: "Errors are listed below", IsError: false}, "Errors are listed below"},
	} {
		if got := toolResultText(c.in); got != c.want {
			t.Errorf("toolResultText(%+v) = %q, want %q", c.in, got, c.want)
		}
	}
}
