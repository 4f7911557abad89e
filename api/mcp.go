package api

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// MCPServer is one entry of the mcpServers setting (docs/PROTOCOL.md §2), in
// the shape Claude Code, Zed and VS Code users already write: a stdio server
// has Command (with Args, Env and Cwd), a streamable HTTP server has URL
// (with Headers). Exactly one of Command and URL is set.
type MCPServer struct {
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// Cwd is the directory a stdio server runs in: an absolute path, or
	// one that begins with a ${NAME} its expansion makes absolute. Empty:
	// a directory of agentls's own, never the workspace (docs/MCP.md).
	Cwd     string            `json:"cwd,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// MCPTransport is how agentls reaches an MCP server, as agent/mcpServers
// reports it: MCPStdio or MCPHTTP.
type MCPTransport = string

// The MCP transports.
const (
	MCPStdio MCPTransport = "stdio"
	MCPHTTP  MCPTransport = "http"
)

// Transport is MCPStdio or MCPHTTP.
func (s MCPServer) Transport() MCPTransport {
	if s.URL != "" {
		return MCPHTTP
	}
	return MCPStdio
}

// Equal reports whether two entries start the same server.
func (s MCPServer) Equal(o MCPServer) bool {
	return s.Command == o.Command && slices.Equal(s.Args, o.Args) && maps.Equal(s.Env, o.Env) && s.Cwd == o.Cwd &&
		s.URL == o.URL && maps.Equal(s.Headers, o.Headers)
}

// MCPToolPrefix begins the name of every MCP tool offered to a model:
// mcp__<server>__<tool> (docs/MCP.md).
const MCPToolPrefix = "mcp__"

// MCPNameMax is the longest tool name every model API accepts (OpenAI's
// ^[a-zA-Z0-9_-]{1,64}$; Anthropic's limit is the same or longer).
const MCPNameMax = 64

// SanitizeMCPName maps a server or tool name to the characters model APIs
// accept in tool names: every character but ASCII letters, digits, '_' and
// '-' becomes '_'. Several names may map to one; the callers keep the names
// they offer unique.
func SanitizeMCPName(s string) string {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			out = append(out, byte(r))
		default:
			out = append(out, '_')
		}
	}
	return string(out)
}

// mcpServerKeys are the keys of an mcpServers entry agentls reads; "type"
// is accepted for the shapes of VS Code and Claude Code, "disabled" for
// Cline's.
var mcpServerKeys = []string{"command", "args", "env", "cwd", "url", "headers", "type", "disabled"}

// DecodeMCPServers decodes and validates the mcpServers setting: an object
// of server name → entry. Entries with "disabled": true are left out. Keys
// of an entry that agentls does not read (other tools' options such as
// "alwaysAllow") are returned, dotted from key, for the caller to log. The
// error is a *SettingsError naming the key, under key (e.g. "mcpServers").
func DecodeMCPServers(key string, raw json.RawMessage) (map[string]MCPServer, []string, error) {
	if isNull(raw) {
		return map[string]MCPServer{}, nil, nil
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, nil, &SettingsError{Key: key, Reason: `must be an object of server name → {"command", "args", "env"} or {"url", "headers"}, got ` + jsonKind(raw)}
	}
	names := make([]string, 0, len(entries))
	for name := range entries {
		names = append(names, name)
	}
	sort.Strings(names)
	out := map[string]MCPServer{}
	var unknown []string
	bySanitized := map[string]string{}
	for _, name := range names {
		k := key + "." + name
		if strings.TrimSpace(name) == "" {
			return nil, nil, &SettingsError{Key: key, Reason: "a server name is empty"}
		}
		if len(name) > 48 {
			return nil, nil, &SettingsError{Key: k, Reason: "the server name is longer than 48 characters (tool names, mcp__<server>__<tool>, must stay within 64)"}
		}
		s, skip, unk, err := decodeMCPServer(k, entries[name])
		if err != nil {
			return nil, nil, err
		}
		unknown = append(unknown, unk...)
		if skip {
			continue
		}
		san := SanitizeMCPName(name)
		if other, ok := bySanitized[san]; ok {
			return nil, nil, &SettingsError{Key: k, Reason: fmt.Sprintf("the name gives the same tool names as %q (both become mcp__%s__…); rename one", other, san)}
		}
		bySanitized[san] = name
		out[name] = s
	}
	return out, unknown, nil
}

func decodeMCPServer(key string, raw json.RawMessage) (s MCPServer, disabled bool, unknown []string, err error) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return s, false, nil, &SettingsError{Key: key, Reason: `must be an object: {"command": "…", "args": […], "env": {…}} (stdio) or {"url": "…", "headers": {…}} (streamable HTTP), got ` + jsonKind(raw)}
	}
	kind := ""
	for k, v := range fields {
		if isNull(v) {
			continue
		}
		fk := key + "." + k
		switch k {
		case "command":
			err = decodeString(fk, v, &s.Command)
			if err == nil && strings.TrimSpace(s.Command) == "" {
				err = &SettingsError{Key: fk, Reason: "is empty"}
			}
		case "args":
			err = decodeStrings(fk, v, &s.Args)
		case "env":
			s.Env, err = decodeStringMap(fk, v, validEnvName)
		case "cwd":
			err = decodeString(fk, v, &s.Cwd)
			if err == nil {
				err = checkMCPCwd(fk, s.Cwd)
			}
		case "url":
			err = decodeString(fk, v, &s.URL)
			if err == nil {
				err = checkMCPURL(fk, s.URL)
			}
		case "headers":
			s.Headers, err = decodeStringMap(fk, v, validHeaderName)
		case "type":
			err = decodeString(fk, v, &kind)
			if err == nil {
				switch kind {
				case "stdio", "http", "streamable-http", "streamableHttp":
				case "sse":
					err = &SettingsError{Key: fk, Reason: `"sse" (the older HTTP+SSE transport) is not supported; agentls speaks streamable HTTP: give the server's streamable HTTP endpoint as "url"`}
				default:
					err = &SettingsError{Key: fk, Reason: fmt.Sprintf("%q is not one of stdio, http", kind)}
				}
			}
		case "disabled":
			err = decodeBool(fk, v, &disabled)
		default:
			unknown = append(unknown, fk)
		}
		if err != nil {
			return MCPServer{}, false, nil, err
		}
	}
	switch {
	case s.Command != "" && s.URL != "":
		return MCPServer{}, false, nil, &SettingsError{Key: key, Reason: `has both "command" (stdio) and "url" (streamable HTTP); give one`}
	case s.Command == "" && s.URL == "":
		return MCPServer{}, false, nil, &SettingsError{Key: key, Reason: `needs "command" (a stdio server) or "url" (a streamable HTTP server)`}
	case s.URL != "" && (len(s.Args) > 0 || len(s.Env) > 0 || s.Cwd != ""):
		return MCPServer{}, false, nil, &SettingsError{Key: key, Reason: `"args", "env" and "cwd" belong to a stdio server ("command"), not to one reached by "url"`}
	case s.Command != "" && len(s.Headers) > 0:
		return MCPServer{}, false, nil, &SettingsError{Key: key, Reason: `"headers" belong to a streamable HTTP server ("url"), not to one started by "command"`}
	case kind == "stdio" && s.Command == "", (kind == "http" || kind == "streamable-http" || kind == "streamableHttp") && s.URL == "":
		return MCPServer{}, false, nil, &SettingsError{Key: key + ".type", Reason: fmt.Sprintf("%q does not fit the entry: stdio needs \"command\", http needs \"url\"", kind)}
	}
	sort.Strings(unknown)
	return s, disabled, unknown, nil
}

// checkMCPCwd refuses a cwd that is not absolute and does not begin with a
// variable (which may make it absolute when the server starts): a relative
// one would be taken against a directory nobody chose, the workspace's
// or agentls's own.
func checkMCPCwd(key, dir string) error {
	switch {
	case strings.TrimSpace(dir) == "":
		return &SettingsError{Key: key, Reason: "is empty; leave it out to run the server in agentls's own directory"}
	case !filepath.IsAbs(dir) && !strings.HasPrefix(dir, "$"):
		return &SettingsError{Key: key, Reason: fmt.Sprintf("%q is not an absolute path: agentls takes a server's directory only whole (a relative one would be the workspace's or its own); write it absolute, or from a variable (${HOME}/…)", dir)}
	}
	return nil
}

func checkMCPURL(key, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &SettingsError{Key: key, Reason: fmt.Sprintf("%q is not an http:// or https:// URL", raw)}
	}
	return nil
}

func decodeStringMap(key string, v json.RawMessage, valid func(string) bool) (map[string]string, error) {
	var m map[string]string
	if err := json.Unmarshal(v, &m); err != nil {
		return nil, &SettingsError{Key: key, Reason: "must be an object of names → strings, got " + jsonKind(v)}
	}
	for name := range m {
		if !valid(name) {
			return nil, &SettingsError{Key: key + "." + name, Reason: fmt.Sprintf("%q is not a valid name here", name)}
		}
	}
	return m, nil
}

func validEnvName(name string) bool {
	return name != "" && !strings.ContainsAny(name, "= \t\r\n\x00")
}

// validHeaderName: an HTTP token (RFC 9110).
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if r > 0x7e || r <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	return true
}

// decodeAllowMCPTools validates allowMcpTools: each entry is mcp__<server>
// (every tool of that server) or mcp__<server>__<tool>, as the model sees
// the names.
func decodeAllowMCPTools(v json.RawMessage, dst *[]string) error {
	if err := decodeStrings("allowMcpTools", v, dst); err != nil {
		return err
	}
	for i, e := range *dst {
		rest, ok := strings.CutPrefix(e, MCPToolPrefix)
		if !ok || rest == "" || strings.HasPrefix(rest, "_") {
			return &SettingsError{Key: fmt.Sprintf("allowMcpTools[%d]", i), Reason: fmt.Sprintf("%q is not mcp__<server> or mcp__<server>__<tool>", e)}
		}
	}
	return nil
}

// MCPServersFromACP turns the mcpServers of an ACP session/new or
// session/load (a list of {name, command, args, env: [{name, value}]} or
// {type: "http", name, url, headers: [{name, value}]}) into the entries of the
// mcpServers setting, validated the same way. It is the seam an ACP front
// end hands its servers through.
func MCPServersFromACP(raw json.RawMessage) (map[string]MCPServer, error) {
	type pair struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	var list []struct {
		Type    string   `json:"type"`
		Name    string   `json:"name"`
		Command string   `json:"command"`
		Args    []string `json:"args"`
		Env     []pair   `json:"env"`
		URL     string   `json:"url"`
		Headers []pair   `json:"headers"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, &SettingsError{Key: "mcpServers", Reason: "must be a list of ACP McpServer objects: " + err.Error()}
	}
	obj := map[string]any{}
	for i, s := range list {
		if s.Name == "" {
			return nil, &SettingsError{Key: fmt.Sprintf("mcpServers[%d].name", i), Reason: "is empty"}
		}
		if _, dup := obj[s.Name]; dup {
			return nil, &SettingsError{Key: fmt.Sprintf("mcpServers[%d].name", i), Reason: fmt.Sprintf("%q is listed twice", s.Name)}
		}
		e := map[string]any{}
		if s.Type != "" {
			e["type"] = s.Type
		}
		if s.Command != "" {
			e["command"], e["args"] = s.Command, s.Args
			env := map[string]string{}
			for _, p := range s.Env {
				env[p.Name] = p.Value
			}
			e["env"] = env
		}
		if s.URL != "" {
			e["url"] = s.URL
			h := map[string]string{}
			for _, p := range s.Headers {
				h[p.Name] = p.Value
			}
			e["headers"] = h
		}
		obj[s.Name] = e
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	servers, _, err := DecodeMCPServers("mcpServers", b)
	return servers, err
}

// ---- agent/mcpServers (docs/PROTOCOL.md §3) ----

// MCPState is where an MCP server stands, as agent/mcpServers reports it:
// MCPNotStarted, MCPStarting, MCPReady, MCPFailed or MCPRestarted.
type MCPState = string

// The MCP server states.
const (
	MCPNotStarted MCPState = "notStarted"
	MCPStarting   MCPState = "starting"
	MCPReady      MCPState = "ready"
	MCPFailed     MCPState = "failed"
	MCPRestarted  MCPState = "restarted" // ready again after a crash and its one restart
)

// MCPServersParams are the params of agent/mcpServers.
type MCPServersParams struct {
	// Start starts the servers not started yet (and not failed) and waits
	// for them, each bounded by timeouts.mcpMs.
	Start bool `json:"start,omitempty"`
}

// MCPTool is one tool of an MCP server as it is offered to the model.
type MCPTool struct {
	// Name is the name the model calls: mcp__<server>__<tool>, sanitized.
	Name string `json:"name"`
	// Server and Tool are the names as configured and as the server has it.
	Server      string `json:"server"`
	Tool        string `json:"tool"`
	Description string `json:"description,omitempty"`
	// InputSchema is the tool's JSON Schema (an object schema).
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	// ReadOnly is the server's readOnlyHint: the tool says it changes
	// nothing.
	ReadOnly bool `json:"readOnly,omitempty"`
}

// MCPServerStatus is one server of agent/mcpServers.
type MCPServerStatus struct {
	Name      string       `json:"name"`
	Transport MCPTransport `json:"transport"`
	Command   string       `json:"command,omitempty"`
	Args      []string     `json:"args,omitempty"`
	URL       string       `json:"url,omitempty"`
	State     MCPState     `json:"state"`
	Error     string       `json:"error,omitempty"`
	// Restarts counts the restarts after a crash (at most 1).
	Restarts  int       `json:"restarts"`
	ToolCount int       `json:"toolCount"`
	Tools     []MCPTool `json:"tools"`
}

// MCPServersResult is the reply to agent/mcpServers, sorted by name.
type MCPServersResult struct {
	Servers []MCPServerStatus `json:"servers"`
}
