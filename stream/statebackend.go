package stream

import (
	"github.com/weirdata/weir/spill"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/state/disk"
)

// StateBackend is where keyed operators keep their keyed state, as Flink's
// state.backend.type. Timers and broadcast state stay on the heap with
// either (Flink's heap timers option; broadcast state is always on the
// heap), and BATCH execution keeps one key's state on the heap whatever the
// choice, as Flink's batch state backend does.
type StateBackend uint8

const (
	// HeapBackend keeps keyed state as objects in memory, counted against
	// the job's memory budget (Flink's HashMapStateBackend).
	HeapBackend StateBackend = iota
	// DiskBackend keeps keyed state serialized in an embedded Pebble
	// database per keyed operator subtask under the job's temporary
	// directory (Flink's EmbeddedRocksDBStateBackend); its block cache and
	// memtables are counted against the memory budget. See
	// stream/state/disk.
	DiskBackend
)

func (b StateBackend) String() string {
	if b == DiskBackend {
		return "disk"
	}
	return "heap"
}

// diskStore opens the disk store of a keyed operator's backend into o when
// the job keeps keyed state on disk, and decides whether its checkpoints
// are incremental: with Options.Incremental and a checkpoint storage of
// shared files.
func (k *keyedBase[K]) diskStore(rt *taskRuntime, o *state.Options) error {
	if rt.p == nil || rt.batch() || rt.p.env.opts.StateBackend != DiskBackend {
		return nil
	}
	opts := rt.p.env.opts
	dir := opts.TmpDir
	if fs, ok := rt.env.FS.(*spill.DiskFS); ok {
		dir = fs.Dir()
	}
	st, err := disk.Open(disk.Options{Name: o.Name, Dir: dir, Memory: rt.mem})
	if err != nil {
		return err
	}
	o.Store = st
	if ck := rt.p.env.ck; ck != nil {
		o.Shared, _ = ck.Storage.(state.SharedFiles)
	}
	if opts.Incremental && o.Shared != nil && rt.p.coord != nil {
		k.incremental, k.subtask = rt.p.coord, rt.subtask
	}
	return nil
}
