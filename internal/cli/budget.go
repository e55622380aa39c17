package cli

import (
	"runtime/debug"

	"github.com/weirdata/weir/memory"
)

// MinDefaultMemory is the least budget of a job without --memory.
const MinDefaultMemory = memory.MinDefaultBudget

// DefaultMemory returns the memory budget of a job without --memory: the
// library's default, memory.DefaultBudget (a quarter of the machine's or the
// cgroup's memory, in whole MiB, at least MinDefaultMemory).
func DefaultMemory() int64 { return memory.DefaultBudget() }

// limitRuntime sets the Go runtime's soft memory limit from --memory for
// every command: the budget plus memory.RuntimeOverhead, so that the garbage
// collector keeps the process near the budget. Execute restores the limit the
// process had when the command ends. A jobs's own memory.LimitRuntime (in
// dataset's Execute) then keeps this limit.
func (g *globalOptions) limitRuntime() {
	if g.memory > 0 {
		debug.SetMemoryLimit(int64(g.memory) + memory.RuntimeOverhead)
	}
}
