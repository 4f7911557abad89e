package enginestest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Versions the tests run, as engines/testdata/npm pins them.
const (
	ClaudeOld     = "0.17.1" // claude-agent-acp that routes Read/Write/Edit through ACP's fs methods
	ClaudeCurrent = "0.23.1" // claude-agent-acp that writes the disk and runs Bash itself
	Codex         = "0.16.0"
	GeminiCLI     = "0.61.0"
)

// NPM returns the directory holding the installed agents
// (scripts/engines-npm.sh, passed as AGENTLS_ENGINES_NPM), or skips the
// test with the reason; with CI=true it fails instead: CI runs everything.
func NPM(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("AGENTLS_ENGINES_NPM")
	if dir == "" {
		msg := "AGENTLS_ENGINES_NPM is not set: the real agents are not installed " +
			"(AGENTLS_ENGINES_NPM=$(bash scripts/engines-npm.sh) installs them; make test does)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); err != nil {
		t.Fatalf("AGENTLS_ENGINES_NPM=%s has no node_modules: %v", dir, err)
	}
	return dir
}

// Bin returns the path of an installed agent's entry point under npm (the
// directory NPM returns): "claude-0.17", "claude", "codex" or "gemini".
func Bin(t testing.TB, npm, agent string) string {
	t.Helper()
	rel := map[string]string{
		"claude-0.17": "node_modules/claude-agent-acp-0.17/dist/index.js",
		"claude":      "node_modules/@zed-industries/claude-agent-acp/dist/index.js",
		"codex":       "node_modules/@zed-industries/codex-acp/bin/codex-acp.js",
		"gemini":      "node_modules/@google/gemini-cli/bundle/gemini.js",
	}[agent]
	if rel == "" {
		t.Fatalf("enginestest.Bin: no agent %q", agent)
	}
	p := filepath.Join(npm, rel)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is not installed: %v", agent, err)
	}
	return p
}

// ClaudeEnv is the environment that points Claude Code (claude-agent-acp)
// at the fake model at url, offline, in a fresh home under dir. IS_SANDBOX
// lets it run as root, as tests and CI here do.
func ClaudeEnv(t testing.TB, dir, url string) map[string]string {
	t.Helper()
	home := filepath.Join(dir, "claude-home")
	mkdir(t, filepath.Join(home, ".claude"))
	return map[string]string{
		"HOME":               home,
		"CLAUDE_CONFIG_DIR":  filepath.Join(home, ".claude"),
		"ANTHROPIC_BASE_URL": url,
		"ANTHROPIC_API_KEY":  "sk-ant-test-0000",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
		"DISABLE_TELEMETRY":                        "1",
		"DISABLE_AUTOUPDATER":                      "1",
		"DISABLE_ERROR_REPORTING":                  "1",
		"IS_SANDBOX":                               "1",
	}
}

// CodexEnv is the environment that points codex-acp at the fake OpenAI
// Responses server at url: a provider in a fresh CODEX_HOME's config.toml.
func CodexEnv(t testing.TB, dir, url string) map[string]string {
	t.Helper()
	home := filepath.Join(dir, "codex-home")
	mkdir(t, home)
	config := fmt.Sprintf(`model = "gpt-5-codex"
model_provider = "fake"
approval_policy = "untrusted"
sandbox_mode = "danger-full-access"

[model_providers.fake]
name = "fake"
base_url = %q
wire_api = "responses"
env_key = "FAKE_OPENAI_KEY"
request_max_retries = 0
stream_max_retries = 0
`, url)
	write(t, filepath.Join(home, "config.toml"), config)
	return map[string]string{
		"HOME":            filepath.Join(dir, "codex-user"),
		"CODEX_HOME":      home,
		"FAKE_OPENAI_KEY": "sk-test-0000",
		"RUST_LOG":        "error",
	}
}

// GeminiEnv is the environment that points Gemini CLI at the fake Gemini
// API at url, with an API key in a fresh home's settings.
func GeminiEnv(t testing.TB, dir, url string) map[string]string {
	t.Helper()
	home := filepath.Join(dir, "gemini-home")
	mkdir(t, filepath.Join(home, ".gemini"))
	write(t, filepath.Join(home, ".gemini", "settings.json"),
		`{"security":{"auth":{"selectedType":"gemini-api-key"}},"selectedAuthType":"gemini-api-key",`+
			`"general":{"disableAutoUpdate":true,"disableUpdateNag":true},"privacy":{"usageStatisticsEnabled":false},`+
			`"telemetry":{"enabled":false},"usageStatisticsEnabled":false}`)
	return map[string]string{
		"HOME":                   home,
		"GEMINI_API_KEY":         "test-gemini-key",
		"GOOGLE_GEMINI_BASE_URL": url,
		"GEMINI_CLI_NO_RELAUNCH": "true",
		"NO_BROWSER":             "true",
	}
}

func mkdir(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func write(t testing.TB, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
