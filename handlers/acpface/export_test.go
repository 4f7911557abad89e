package acpface

import (
	"context"
	"testing"
)

// OnTerminalCreating has f called with a command's context as its
// terminal is asked for, for the rest of the test t.
func OnTerminalCreating(t testing.TB, f func(context.Context)) {
	was := terminalCreating
	terminalCreating = f
	t.Cleanup(func() { terminalCreating = was })
}
