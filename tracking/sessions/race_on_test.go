//go:build race

package sessions

// raceEnabled trims the multi-process tests under the race detector, whose
// children run several times slower; the plain run keeps their full size.
const raceEnabled = true
