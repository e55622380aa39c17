//go:build !unix

package spill

import "os"

// Without flock no directory can be told stale: RemoveStale removes none.
const canLock = false

func flockExclusive(*os.File) error { return nil }
