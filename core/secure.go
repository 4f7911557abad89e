package core

import (
	"os"

	"go.uber.org/zap"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/redact"
)

// Secure makes what keeps a face's secrets: the redactor (those of this
// process's environment when r is nil), taught the API keys and the custom
// headers the model clients read through getenv (nil: os.Getenv), so that no command, MCP
// server, log line, notification or file gets them; and the logger (a
// no-op when log is nil) wrapped with it. A face calls it once, before its
// first log line.
func Secure(log *zap.Logger, r *redact.Redactor, getenv func(string) string) (*zap.Logger, *redact.Redactor) {
	if r == nil {
		r = redact.FromEnviron(os.Environ())
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	for _, name := range clients.KeyVars {
		r.Add(name, getenv(name))
	}
	// The headers sent beside the OpenAI key: the variable is not inherited,
	// and each header's value is redacted on its own.
	if v := getenv(clients.CustomHeadersVar); v != "" {
		r.Add(clients.CustomHeadersVar, v)
	}
	for _, v := range clients.CustomHeaderValues(getenv) {
		r.AddValue(clients.CustomHeadersVar, v)
	}
	if log == nil {
		log = zap.NewNop()
	}
	return log.WithOptions(zap.WrapCore(r.Core)), r
}
