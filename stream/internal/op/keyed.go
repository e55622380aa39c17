package op

import (
	"bytes"
	"io"

	"github.com/weirdata/weir/spill"
	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/task"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/state/disk"
)

// KeyedBase is the keyed state backend of a keyed operator instance.
type KeyedBase[K comparable] struct {
	task.Base
	// MaxP is the operator's number of key groups.
	MaxP    int
	Backend *state.Backend[K]
	setup   *task.Setup
	// incremental: snapshots of the disk backend name their shared files
	incremental bool
}

// OpenBackend makes the backend of the subtask's key groups and restores
// the operator's snapshots, if any.
func (k *KeyedBase[K]) OpenBackend(s *task.Setup) error {
	k.setup = s
	groups, err := state.RangeForOperatorIndex(k.MaxP, s.Parallelism(), s.Subtask())
	if err != nil {
		return err
	}
	o := state.Options{Name: s.Name, MaxParallelism: k.MaxP, Groups: groups, Memory: s.Memory(), Clock: s.Now}
	if err := k.diskStore(s, &o); err != nil {
		return err
	}
	b, err := state.NewBackend[K](o)
	if err != nil {
		if o.Store != nil {
			_ = o.Store.Close()
		}
		return err
	}
	k.Backend = b
	for _, snap := range s.Restored() {
		if err := b.Restore(bytes.NewReader(snap)); err != nil {
			return err
		}
	}
	return nil
}

// diskStore opens the disk store of the backend into o when the job keeps
// keyed state on disk, and decides whether its checkpoints are
// incremental: when the checkpoint storage keeps shared files and the job
// asked for them.
func (k *KeyedBase[K]) diskStore(s *task.Setup, o *state.Options) error {
	cfg := s.Config()
	if cfg.Batch || cfg.StateBackend != task.DiskBackend {
		return nil
	}
	dir := cfg.TmpDir
	if fs, ok := s.Env().FS.(*spill.DiskFS); ok {
		dir = fs.Dir()
	}
	st, err := disk.Open(disk.Options{Name: o.Name, Dir: dir, Memory: s.Memory()})
	if err != nil {
		return err
	}
	o.Store = st
	if c := cfg.Checkpoints; c != nil {
		o.Shared = c.Shared
		k.incremental = c.Incremental && c.Shared != nil
	}
	return nil
}

// Snapshot writes the backend's key groups, or an incremental snapshot
// naming its shared files.
func (k *KeyedBase[K]) Snapshot(id int64, w io.Writer) error {
	if k.incremental && !k.setup.IsSavepoint(id) {
		names, err := k.Backend.SnapshotIncremental(w)
		if err != nil {
			return err
		}
		k.setup.AddShared(id, names)
		return nil
	}
	return k.Backend.Snapshot(w, k.Backend.Groups())
}

// SnapshotAsync captures the heap backend's state copy-on-write; an
// incremental snapshot of a disk backend is synchronous.
func (k *KeyedBase[K]) SnapshotAsync(id int64) (task.AsyncPart, error) {
	if k.incremental && !k.setup.IsSavepoint(id) {
		return nil, nil
	}
	c, err := k.Backend.Capture(k.Backend.Groups())
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Close disposes of the backend.
func (k *KeyedBase[K]) Close() error {
	if k.Backend == nil {
		return nil
	}
	err := k.Backend.Dispose()
	k.Backend = nil
	return err
}

// keyRun is the number of records whose keys a keyed operator hashes and
// whose state it prefetches before processing them (state.Backend.Prefetch):
// few enough that the entries read stay in the first-level cache.
const keyRun = 64

// runKeys are the keys, hash codes and key groups of a run of up to keyRun
// records.
type runKeys[K comparable] struct {
	keys   [keyRun]K
	codes  [keyRun]int32
	groups [keyRun]int32
}

// loadKeys computes the keys, hash codes and key groups of b (at most
// keyRun records) and prefetches their state entries.
func loadKeys[T any, K comparable](r *runKeys[K], be *state.Backend[K], key func(T) K, b []core.Record[T]) {
	maxP := be.MaxParallelism()
	if mask := int32(maxP - 1); maxP&(maxP-1) == 0 { // the key group as a mask: KeyGroupForHash inline
		for i := range b {
			k := key(b[i].Value)
			c := be.KeyCode(k)
			r.keys[i], r.codes[i], r.groups[i] = k, c, state.MurmurHash(c)&mask
		}
	} else {
		for i := range b {
			k := key(b[i].Value)
			c := be.KeyCode(k)
			r.keys[i], r.codes[i], r.groups[i] = k, c, int32(state.KeyGroupForHash(c, maxP))
		}
	}
	be.Prefetch(r.codes[:len(b)], r.groups[:len(b)])
}

// setKey makes record i of the run loaded last the backend's current key.
func (r *runKeys[K]) setKey(be *state.Backend[K], i int) {
	be.SetCurrentKeyCode(r.keys[i], r.codes[i], int(r.groups[i]))
}

// NumKeyedStateEntries returns the backend's entries (a test harness's).
func (k *KeyedBase[K]) NumKeyedStateEntries() int {
	if k.Backend == nil {
		return 0
	}
	return k.Backend.NumKeyedStateEntries()
}

// NumEventTimeTimers returns the backend's event-time timers.
func (k *KeyedBase[K]) NumEventTimeTimers() int {
	if k.Backend == nil {
		return 0
	}
	return k.Backend.NumEventTimeTimers()
}

// NumProcessingTimeTimers returns the backend's processing-time timers.
func (k *KeyedBase[K]) NumProcessingTimeTimers() int {
	if k.Backend == nil {
		return 0
	}
	return k.Backend.NumProcessingTimeTimers()
}
