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

// managed returns the budget of what a job's operators reserve: --memory
// bounds the process, and memory.Managed keeps the Go runtime's part of it.
func (g *globalOptions) managed() int64 { return memory.Managed(int64(g.memory)) }

// limitRuntime sets the Go runtime's soft memory limit from --memory for
// every command: the operators' budget plus memory.RuntimeOverhead, which is
// --memory itself from 64 MiB up, so that the garbage collector keeps the
// process near --memory. Execute restores the limit the process had when the
// command ends. A job's own memory.LimitRuntime (in dataset's Execute) then
// keeps this limit.
func (g *globalOptions) limitRuntime() {
	if g.memory > 0 {
		debug.SetMemoryLimit(g.managed() + memory.RuntimeOverhead)
	}
}
