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
		{"prints agentls undo --help on stdout, with the exit codes", []string{"undo", "--help"}, "Exit codes:"},
		{"prints how to steer a run in agentls run --help", []string{"run", "--help"}, "s ID                    skip subtask ID"},
		{"prints agentls models --help on stdout", []string{"models", "--help"}, "Usage: agentls models"},
		{"prints agentls check-model --help on stdout, with the exit codes", []string{"check-model", "--help"}, "Exit codes:"},
		{"prints agentls intents --help on stdout", []string{"intents", "--help"}, "Usage: agentls intents"},
		{"prints agentls engines --help on stdout", []string{"engines", "--help"}, "Usage: agentls engines"},
		{"names the commands in agentls --help", []string{"--help"}, "agentls check-model [flags]"},
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
		{"prints a bad flag of undo and the usage on stderr", []string{"undo", "--bogus"}, "flag provided but not defined: -bogus"},
		{"prints a missing prompt and the usage on stderr", []string{"run"}, "a prompt is required"},
		{"prints an argument agentls models does not take and the usage on stderr", []string{"models", "gpt"}, `unexpected argument "gpt"`},
		{"prints a bad flag of intents and the usage on stderr", []string{"intents", "--model", "x"}, "flag provided but not defined: -model"},
		{"prints a bad flag of engines and the usage on stderr", []string{"engines", "--model", "x"}, "flag provided but not defined: -model"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := run(t, c.args...)
			if code != 2 || out != "" || !strings.Contains(errs, c.want) || !strings.Contains(errs, "Usage") {
				t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
			}
		})
	}
}
