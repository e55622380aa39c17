package stream

import "github.com/weirdata/weir/stream/internal/task"

// StateBackend is where keyed operators keep their keyed state and timers,
// as Flink's state.backend.type (with the RocksDB backend's default of
// timers in the database). Broadcast state stays on the heap with either,
// as in Flink, and BATCH execution keeps one key's state on the heap
// whatever the choice, as Flink's batch state backend does.
type StateBackend uint8

const (
	// HeapBackend keeps keyed state as objects in memory, counted against
	// the job's memory budget (Flink's HashMapStateBackend).
	HeapBackend StateBackend = iota
	// DiskBackend keeps keyed state and timers serialized in an embedded
	// Pebble database per keyed operator subtask under the job's temporary
	// directory (Flink's EmbeddedRocksDBStateBackend); its block cache and
	// memtables, and a bounded cache of the first timers of each key group,
	// are counted against the memory budget. See stream/state/disk.
	DiskBackend
)

func (b StateBackend) String() string {
	if b == DiskBackend {
		return "disk"
	}
	return "heap"
}

func (b StateBackend) task() task.StateBackend {
	if b == DiskBackend {
		return task.DiskBackend
	}
	return task.HeapBackend
}
