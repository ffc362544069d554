//go:build !race

package rpca_test

// raceEnabled: the race detector is off.
const raceEnabled = false
