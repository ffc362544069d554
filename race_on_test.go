//go:build race

package rpca_test

// raceEnabled: the race detector is on; the long property suite, which
// runs no code of its own concurrently, skips.
const raceEnabled = true
