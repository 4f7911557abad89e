package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInputEndingInsideAFrame: the end of stdin inside a frame is not a
// clean end: it is logged with what was missing and the exit code is 1,
// even after shutdown; at a frame boundary after shutdown it is 0.
func TestInputEndingInsideAFrame(t *testing.T) {
	frame := func(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }
	lifecycle := frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`) +
		frame(`{"jsonrpc":"2.0","method":"initialized","params":{}}`) +
		frame(`{"jsonrpc":"2.0","id":2,"method":"shutdown"}`)
	cases := []struct {
		name  string
		input string
		code  int
		log   string
	}{
		{"exits 0 when the input ends at a frame boundary after shutdown", lifecycle, 0, "input ended"},
		{"exits 1 and says all the body is missing after a Content-Length of 2 GiB",
			lifecycle + "Content-Length: 2147483648\r\n\r\n", 1,
			"the input ended inside a frame: 2147483648 of the 2147483648 body bytes announced are missing"},
		{"exits 1 and says how many bytes a body cut short misses",
			lifecycle + "Content-Length: 100\r\n\r\n" + `{"jsonrpc":"2.0"`, 1,
			"the input ended inside a frame: 84 of the 100 body bytes announced are missing"},
		{"exits 1 when the input ends inside a header", lifecycle + "Content-Length: 10\r\n", 1,
			"the input ended inside the header of a frame announcing 10 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.CommandContext(ctxT(t), binary, "serve")
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), "AGENTLS_STATE_DIR="+filepath.Join(t.TempDir(), "state"))
			cmd.Stdin = strings.NewReader(c.input)
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = new(bytes.Buffer), &stderr
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != c.code || !strings.Contains(stderr.String(), c.log) {
				t.Fatalf("exit %d, want %d, with a log saying %q:\n%s", code, c.code, c.log, stderr.String())
			}
		})
	}
}
