package core_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/core"
	"github.com/agentls/agentls/internal/redact"
)

func TestSecureKeepsTheCustomHeadersSecret(t *testing.T) {
	const token = "gw-token-5f8a2c9d1e7b"
	env := map[string]string{clients.CustomHeadersVar: "X-Gateway-Token: " + token + "\nX-Team: platform-team-one"}
	_, r := core.Secure(nil, redact.New(), func(k string) string { return env[k] })
	for _, v := range []string{token, "platform-team-one"} {
		if got := r.String("the gateway said " + v); strings.Contains(got, v) {
			t.Errorf("%q is not redacted: %q", v, got)
		}
	}
	if !slices.Contains(r.Unset(nil), clients.CustomHeadersVar) {
		t.Errorf("commands inherit %s: the unset names are %v", clients.CustomHeadersVar, r.Unset(nil))
	}
}
