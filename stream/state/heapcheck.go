package state

import (
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"runtime/metrics"
	"sync"

	"github.com/weirdata/weir/memory"
)

// heapCheckChunks is how many chunks a backend's reservation grows between two
// checks of the Go heap (1 MiB).
const heapCheckChunks = 64

// ErrHeapLimit is kept in Err when the Go heap's live bytes pass the runtime's
// soft memory limit while heap state grows.
var ErrHeapLimit = errors.New("the memory limit is exceeded")

// heapSeen is what the checks saw of the collector: the last cycle read, the
// manager's reservation when it was first read, and the live bytes that
// cycle found beyond the reservation when the cycle before it was first read
// (before its marking started, so that the growth during marking counts as
// beyond).
var heapSeen struct {
	sync.Mutex
	cycles uint64
	used   int64
	beyond int64
}

// heapCheck is the backstop behind the counted bytes: the counts are
// estimates, and a state of values the estimate misses would otherwise grow
// the process past its budget in silence. It applies when a soft memory limit
// is set (debug.SetMemoryLimit; the CLI sets it from --memory). The live
// bytes now are projected from the last collection's: what mem reserves now
// plus what that collection found live beyond mem's reservation before it
// began (as read when the collection before it was first seen). When
// the projection passes the part of the limit left to the program
// (memory.Managed: the rest is the runtime's stacks, metadata and free pages)
// less a sixteenth, the garbage made between two collections, heapCheck
// returns an error naming both, the state's own count and the remedy.
func heapCheck(mem *memory.Manager, name, what string, counted int64) error {
	limit := debug.SetMemoryLimit(-1)
	if limit <= 0 || limit == math.MaxInt64 {
		return nil
	}
	s := [2]metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(s[:])
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return nil
	}
	used := mem.Used()
	heapSeen.Lock()
	if c := s[0].Value.Uint64(); c != heapSeen.cycles {
		heapSeen.beyond = max(int64(s[1].Value.Uint64())-heapSeen.used, 0)
		heapSeen.cycles, heapSeen.used = c, used
	}
	live := used + heapSeen.beyond
	heapSeen.Unlock()
	most := memory.Managed(limit) / 16 * 15
	if live <= most {
		return nil
	}
	return fmt.Errorf("state: %s: %s: %w: the Go heap holds about %s of live data, more than the %s of the process's limit of %s that live data may take, and this operator's state counts %s of it; use the disk state backend or a larger memory budget",
		name, what, ErrHeapLimit, memory.FormatBytes(live), memory.FormatBytes(most), memory.FormatBytes(limit), memory.FormatBytes(counted))
}

// reserve grows res, which holds reserved bytes, to cover used bytes, n of
// them just added, a chunk at a time, and returns the bytes it added. Past
// the budget it adds none and returns an error in plain units naming the
// store, the state (what) and the kind of state ("keyed" or "operator"). Every
// heapCheckChunks chunks it also checks the Go heap (heapCheck).
func reserve(res *memory.Reservation, mem *memory.Manager, reserved, used, n int64, name, what, kind string) (int64, error) {
	need := (used - reserved + chunk - 1) / chunk * chunk
	if err := res.Grow(need); err != nil {
		return 0, fmt.Errorf("state: %s: %s: the %s state holds %s and needs %s more, but only %s of the memory budget of %s is free: %w",
			name, what, kind, memory.FormatBytes(used-n), memory.FormatBytes(need), memory.FormatBytes(max(mem.Budget()-mem.Used(), 0)), memory.FormatBytes(mem.Budget()), err)
	}
	if reserved/(heapCheckChunks*chunk) != (reserved+need)/(heapCheckChunks*chunk) {
		return need, heapCheck(mem, name, what, used)
	}
	return need, nil
}
