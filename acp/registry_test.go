package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRegistryManifest holds registry/agentls/agent.json to the ACP
// registry's format (github.com/agentclientprotocol/registry,
// agent.schema.json): the required fields, the id and version patterns,
// the platforms it knows, and to what scripts/acp-registry.sh builds: one
// archive per platform at the release of the manifest's version, holding
// agentls, started as `agentls acp`.
func TestRegistryManifest(t *testing.T) {
	dir := filepath.Join("registry", "agentls")
	b, err := os.ReadFile(filepath.Join(dir, "agent.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		ID           string `json:"id"`
		Name         string `json:"name"`
		Version      string `json:"version"`
		Description  string `json:"description"`
		Repository   string `json:"repository"`
		Website      string `json:"website"`
		Distribution map[string]map[string]struct {
			Archive string   `json:"archive"`
			SHA256  string   `json:"sha256"`
			Cmd     string   `json:"cmd"`
			Args    []string `json:"args"`
		} `json:"distribution"`
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields() // the schema's additionalProperties: false
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("agent.json: %v", err)
	}
	if m.ID != filepath.Base(dir) || !regexp.MustCompile(`^[a-z][a-z0-9-]*$`).MatchString(m.ID) {
		t.Errorf("id %q: lower case, digits and dashes, and the name of its folder", m.ID)
	}
	if m.Name == "" || m.Description == "" {
		t.Error("name and description are required")
	}
	if !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(m.Version) {
		t.Errorf("version %q is not x.y.z", m.Version)
	}
	for _, u := range []string{m.Repository, m.Website} {
		if !strings.HasPrefix(u, "https://") {
			t.Errorf("%q is not an https URL", u)
		}
	}
	platforms := map[string]bool{"darwin-aarch64": true, "darwin-x86_64": true, "linux-aarch64": true, "linux-x86_64": true, "windows-aarch64": true, "windows-x86_64": true}
	exe := func(platform string) string {
		if strings.HasPrefix(platform, "windows-") {
			return "./agentls.exe"
		}
		return "./agentls"
	}
	if len(m.Distribution["binary"]) != len(platforms) {
		t.Errorf("%d platforms, want the registry's %d", len(m.Distribution["binary"]), len(platforms))
	}
	if len(m.Distribution) != 1 || len(m.Distribution["binary"]) == 0 {
		t.Fatalf("distribution %v: agentls ships binaries", m.Distribution)
	}
	for name, target := range m.Distribution["binary"] {
		want := "https://github.com/agentls/agentls/releases/download/v" + m.Version + "/agentls-" + m.Version + "-" + name + ".tar.gz"
		switch {
		case !platforms[name]:
			t.Errorf("platform %q is not one the registry knows", name)
		case target.Archive != want:
			t.Errorf("%s: archive %q, want %q (scripts/acp-registry.sh's name)", name, target.Archive, want)
		case target.Cmd != exe(name) || strings.Join(target.Args, " ") != "acp":
			t.Errorf("%s: starts %q %v, want %s acp", name, target.Cmd, target.Args, exe(name))
		case target.SHA256 != "" && !regexp.MustCompile(`^[a-fA-F0-9]{64}$`).MatchString(target.SHA256):
			t.Errorf("%s: sha256 %q", name, target.SHA256)
		}
	}
	icon, err := os.ReadFile(filepath.Join(dir, "icon.svg"))
	if err != nil || !strings.Contains(string(icon), "<svg") || !strings.Contains(string(icon), `viewBox="0 0 16 16"`) {
		t.Errorf("icon.svg (the registry wants a 16x16 SVG): %v", err)
	}
}
