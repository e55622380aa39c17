//go:build !race

package spill

// raceEnabled skips allocation measurements, which the race detector distorts
// (sync.Pool drops items at random, s2 falls back to Go code).
const raceEnabled = false
