package cli

import (
	"os"
	"strconv"
	"strings"
)

// MinDefaultMemory is the least budget of a job without --memory.
const MinDefaultMemory = 256 << 20

// cgroupLimits are the files of the process's cgroup memory limit: v2's
// memory.max and v1's memory.limit_in_bytes.
var cgroupLimits = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// DefaultMemory returns the memory budget of a job without --memory: a
// quarter of the memory the process may use, the least of the machine's
// memory and its cgroup's limit (cgroupLimits), in whole MiB, and at least
// MinDefaultMemory. DuckDB takes 80% of the memory by default and Flink
// gives its managed memory 40% of a task manager's; the budget counts only
// what operators reserve (sort buffers, hash tables, join indexes), while
// records in Go form and the garbage collector's headroom come on top, hence
// the smaller share. Without a reading (another system) it is
// MinDefaultMemory.
func DefaultMemory() int64 {
	avail := totalMemory()
	for _, f := range cgroupLimits {
		if limit := readLimit(f); limit > 0 && (avail == 0 || limit < avail) {
			avail = limit
		}
	}
	return max(avail/4&^(1<<20-1), MinDefaultMemory) // whole MiB, to read well in --help
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
