//go:build !race

package tracking

const raceEnabled = false
