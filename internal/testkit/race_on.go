//go:build race

package testkit

// Race reports whether the race detector is on: tests that start child
// processes trim their size under it, as its children run several times
// slower.
const Race = true
