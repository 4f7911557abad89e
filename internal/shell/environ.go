package shell

import (
	"maps"
	"slices"
	"strings"

	"github.com/agentls/agentls/internal/redact"
)

// Environ is the environment of a child process: base without the
// variables named in unset (the secrets, redact.Redactor.Unset), then
// extra, whose values take ${NAME} from base (Expand) and which may name
// any variable again, a secret included: an MCP server's or an engine's
// own key is given to it and to nothing else. A variable of base that
// extra names is replaced, not repeated. The result is the same for the
// same inputs (extra in the order of its names).
func Environ(base, unset []string, extra map[string]string) []string {
	env := redact.Environ(base, unset)
	if len(extra) == 0 {
		return env
	}
	out := make([]string, 0, len(env)+len(extra))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if _, over := extra[name]; !over {
			out = append(out, kv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		out = append(out, k+"="+Expand(extra[k], base))
	}
	return out
}
