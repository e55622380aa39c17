//go:build !unix

package cli

import "time"

// cpuTime returns false: without getrusage the process's CPU time is not
// known.
func cpuTime() (time.Duration, bool) { return 0, false }
