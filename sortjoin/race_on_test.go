//go:build race

package sortjoin

// raceEnabled skips allocation measurements, which the race detector
// distorts and slows by an order of magnitude.
const raceEnabled = true
