package main

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

func TestHelpAndUsage(t *testing.T) {
	run := func(t *testing.T, args ...string) (int, string, string) {
		t.Helper()
		cmd := exec.Command(binary, args...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			return ee.ExitCode(), out.String(), errb.String()
		case err != nil:
			t.Fatal(err)
		}
		return 0, out.String(), errb.String()
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"prints agentls --help on stdout", []string{"--help"}, "Usage:"},
		{"prints agentls help on stdout", []string{"help"}, "Usage:"},
		{"prints agentls serve --help on stdout", []string{"serve", "--help"}, "-log-level"},
		{"prints agentls run --help on stdout, with the exit codes", []string{"run", "--help"}, "Exit codes:"},
		{"prints agentls run -h on stdout", []string{"run", "-h"}, "Usage: agentls run"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := run(t, c.args...)
			if code != 0 || !strings.Contains(out, c.want) || errs != "" {
				t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
			}
		})
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"prints a bad flag of run and the usage on stderr", []string{"run", "--bogus"}, "flag provided but not defined: -bogus"},
		{"prints a bad flag of serve and the usage on stderr", []string{"serve", "--bogus"}, "flag provided but not defined: -bogus"},
		{"prints a missing prompt and the usage on stderr", []string{"run"}, "a prompt is required"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := run(t, c.args...)
			if code != 2 || out != "" || !strings.Contains(errs, c.want) || !strings.Contains(errs, "Usage") {
				t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
			}
		})
	}
}
