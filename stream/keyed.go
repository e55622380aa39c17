package stream

import (
	"bytes"
	"fmt"
	"io"

	"github.com/weirdata/weir/stream/state"
)

// KeyedStream is a DataStream partitioned by a key: every record of a key
// goes to the subtask owning the key's key group, as Flink's keyBy.
type KeyedStream[T any, K comparable] struct {
	ds   DataStream[T]
	key  func(T) K
	hash state.HashFunc[K]
}

// KeyBy partitions ds by key: the key group of a key is Flink's
// (murmur hash of the key's Java hash code modulo max parallelism) and the
// subtask the one owning the group.
func KeyBy[T any, K comparable](ds DataStream[T], key func(T) K) KeyedStream[T, K] {
	h, err := sharedHash[K]()
	if err != nil {
		ds.n.env.fail(caller(1), fmt.Errorf("KeyBy: %w", err))
	}
	return KeyedStream[T, K]{ds: ds, key: key, hash: h}
}

// addKeyed adds a keyed node reading ks, with a main port of type O.
func addKeyed[O, T any, K comparable](ks KeyedStream[T, K], name string) *node {
	e := ks.ds.edge()
	e.part = partitioning{kind: partKeyed}
	n := addNode[O](ks.ds.n.env, name, e)
	n.keyed = true
	e.part.custom = keyGroups(ks.key, ks.hash, n)
	return n
}

// keyedBase is the keyed state backend of a keyed operator instance.
type keyedBase[K comparable] struct {
	base
	node    *node
	backend *state.Backend[K]
	// incremental is the coordinator incremental snapshots name their
	// shared files to, nil for full snapshots
	incremental *coordinator
	subtask     int
}

// openBackend makes the backend of the subtask's key groups and restores
// the operator's snapshot, if any.
func (k *keyedBase[K]) openBackend(rt *taskRuntime) error {
	groups, err := state.RangeForOperatorIndex(k.node.maxP, rt.parallelism, rt.subtask)
	if err != nil {
		return err
	}
	clock := rt.clock
	o := state.Options{
		Name: k.node.name, MaxParallelism: k.node.maxP, Groups: groups, Memory: rt.mem,
		Clock: func() int64 { return clock.Now().UnixMilli() },
	}
	if err := k.diskStore(rt, &o); err != nil {
		return err
	}
	b, err := state.NewBackend[K](o)
	if err != nil {
		if o.Store != nil {
			_ = o.Store.Close()
		}
		return err
	}
	k.backend = b
	for _, snap := range rt.restoredAll(k.node) {
		if err := b.Restore(bytes.NewReader(snap)); err != nil {
			return err
		}
	}
	return nil
}

func (k *keyedBase[K]) snapshot(id int64, w io.Writer) error {
	if k.incremental != nil && !k.incremental.isSavepoint(id) {
		names, err := k.backend.SnapshotIncremental(w)
		if err != nil {
			return err
		}
		k.incremental.addShared(id, k.node, k.subtask, names)
		return nil
	}
	return k.backend.Snapshot(w, k.backend.Groups())
}

func (k *keyedBase[K]) close() error {
	if k.backend == nil {
		return nil
	}
	err := k.backend.Dispose()
	k.backend = nil
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
func loadKeys[T any, K comparable](r *runKeys[K], be *state.Backend[K], key func(T) K, b []Record[T]) {
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
