package memory

import (
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
)

// MinDefaultBudget is the least budget DefaultBudget returns.
const MinDefaultBudget = 256 << 20

// RuntimeOverhead is what a process may hold beyond its jobs' budgets: the Go
// runtime's stacks and metadata, records in Go form in flight between
// operators, and the garbage collector's headroom. LimitRuntime sets the
// runtime's soft memory limit to the budgets plus this.
const RuntimeOverhead = 32 << 20

// Managed returns the part of a process's memory budget that its jobs'
// operators may reserve: the budget less the Go runtime's part, which is
// RuntimeOverhead or half the budget, whichever is less. Flink splits a task
// manager's process memory the same way, managed memory being one part.
// With the runtime's soft limit at Managed(b) plus RuntimeOverhead (which is b
// itself from 64 MiB up), the process's anonymous memory stays near b; its
// RSS adds the pages of the program's code and tables it has touched.
func Managed(process int64) int64 {
	if process <= 0 || process >= Unlimited {
		return process
	}
	return process - min(RuntimeOverhead, process/2)
}

// cgroupLimits are the files of the process's cgroup memory limit: v2's
// memory.max and v1's memory.limit_in_bytes.
var cgroupLimits = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// DefaultBudget returns the budget of a job that sets none: a quarter of the
// memory the process may use, the least of the machine's memory and its
// cgroup's limit, in whole MiB, and at least MinDefaultBudget. DuckDB takes
// 80% of the memory by default and Flink gives its managed memory 40% of a
// task manager's; a budget counts what operators reserve (sort buffers, hash
// tables, join indexes), while records in Go form and the garbage collector's
// headroom come on top, hence the smaller share. Without a reading (another
// system) it is MinDefaultBudget.
func DefaultBudget() int64 {
	avail := totalMemory()
	if limit := CgroupLimit(); limit > 0 && (avail == 0 || limit < avail) {
		avail = limit
	}
	return max(avail/4&^(1<<20-1), MinDefaultBudget) // whole MiB, to read well in --help
}

// CgroupLimit returns the memory limit of the process's cgroup in bytes, or 0
// without one.
func CgroupLimit() int64 {
	var least int64
	for _, f := range cgroupLimits {
		if limit := readLimit(f); limit > 0 && (least == 0 || limit < least) {
			least = limit
		}
	}
	return least
}

// readLimit returns the byte count in file f, or 0 without one ("max", no
// file, or a v1 cgroup's "no limit", which is near 2^63).
func readLimit(f string) int64 {
	b, err := os.ReadFile(f)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n <= 0 || n >= 1<<60 {
		return 0
	}
	return n
}

// runtimeLimit is the state of LimitRuntime: the budgets of the jobs running
// under it and the limit the process had before the first of them.
var runtimeLimit runtimeLimitState

type runtimeLimitState struct {
	mu     sync.Mutex
	jobs   int
	sum    int64
	off    int64 // reserved memory held outside the Go heap (OffHeap)
	before int64
	owned  bool // the limit is LimitRuntime's, not the user's
}

// setLimit sets the runtime's limit from the budgets and the memory held
// outside the Go heap; l.mu is held.
func (l *runtimeLimitState) setLimit() {
	debug.SetMemoryLimit(max(l.sum+RuntimeOverhead-l.off, RuntimeOverhead))
}

// LimitRuntime sets the Go runtime's soft memory limit (debug.SetMemoryLimit)
// to the budgets of the jobs running in the process plus RuntimeOverhead, so
// that the garbage collector keeps the heap near what the jobs may hold, and
// returns the function that ends the job's part (call it once, when the job
// ends; the last one restores the limit the process had). A limit the process
// already has (GOMEMLIMIT, or the program's own SetMemoryLimit) is kept: it is
// the user's. An Unlimited or non-positive budget changes nothing.
func LimitRuntime(budget int64) (end func()) {
	if budget <= 0 || budget >= Unlimited-RuntimeOverhead {
		return func() {}
	}
	l := &runtimeLimit
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.jobs == 0 {
		l.before = debug.SetMemoryLimit(-1)
		l.owned = l.before == math.MaxInt64
	}
	l.jobs++
	l.sum += budget
	if l.owned {
		l.setLimit()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.jobs--
			l.sum -= budget
			switch {
			case !l.owned:
			case l.jobs == 0:
				debug.SetMemoryLimit(l.before)
			default:
				l.setLimit()
			}
		})
	}
}

// OffHeap tells the runtime's limit that n bytes reserved on a job's
// budget are allocated outside the Go heap (a Pebble store's block cache
// and memtables, in C memory): while they are held, LimitRuntime's soft
// limit is lower by n, so that the Go heap and those bytes together stay
// within the budgets plus RuntimeOverhead. It returns the function that
// ends the hold (call it once). A limit that is the user's is not changed.
func OffHeap(n int64) (end func()) {
	if n <= 0 {
		return func() {}
	}
	l := &runtimeLimit
	l.mu.Lock()
	defer l.mu.Unlock()
	l.off += n
	if l.owned && l.jobs > 0 {
		l.setLimit()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.off -= n
			if l.owned && l.jobs > 0 {
				l.setLimit()
			}
		})
	}
}
