package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// parseFlags parses args with fs, the same way for every command: help
// asked for (-h, --help) is printed on stdout and the command ends with
// exit 0; a usage error is printed on stderr, with the usage, and the
// command ends with exit 2. ok reports that the command goes on.
func parseFlags(fs *flag.FlagSet, args []string, usage func(w io.Writer), stdout, stderr io.Writer) (code int, ok bool) {
	fs.SetOutput(stderr) // where flag prints the error itself
	fs.Usage = func() {} // printed below, on the right stream
	err := fs.Parse(args)
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		usage(stdout)
		return 0, false
	}
	usage(stderr)
	return 2, false
}

// enginesFlag reads --engines FILE: the engines setting as JSON
// (docs/ENGINES.md), an object of engine name to its entry. The server
// holds the entries to the setting's rules (initialize answers -32602
// naming the key).
func enginesFlag(path string) (json.RawMessage, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, fmt.Errorf("%s: not a JSON object of engine name to its entry ({\"goose\": {\"command\": [\"goose\", \"acp\"]}}): %w", path, err)
	}
	return json.RawMessage(data), nil
}

// diagnosticsFlag is a repeatable LANG=COMMAND flag: the diagnostics
// setting's commands (docs/PROTOCOL.md §2). The server holds the language
// names to the setting's (initialize answers -32602 naming the key).
type diagnosticsFlag map[string]string

func (d *diagnosticsFlag) String() string {
	if d == nil {
		return ""
	}
	var parts []string
	for lang, cmd := range *d {
		parts = append(parts, lang+"="+cmd)
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

func (d *diagnosticsFlag) Set(v string) error {
	lang, cmd, ok := strings.Cut(v, "=")
	lang, cmd = strings.TrimSpace(lang), strings.TrimSpace(cmd)
	if !ok || lang == "" || cmd == "" {
		return fmt.Errorf("%q is not LANG=COMMAND, e.g. go='go vet ./...'", v)
	}
	if *d == nil {
		*d = map[string]string{}
	}
	(*d)[lang] = cmd
	return nil
}
