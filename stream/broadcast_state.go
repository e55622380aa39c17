package stream

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"iter"

	"github.com/weirdata/weir/stream/state"
)

// MapStateDescriptor names a broadcast state of keys K and values V, as
// Flink's MapStateDescriptor: give it to Broadcast, then get the state in
// a broadcast process function with GetBroadcastState or
// GetReadOnlyBroadcastState.
type MapStateDescriptor[K comparable, V any] struct {
	Name string
}

// BroadcastDescriptor is a MapStateDescriptor of any types, for Broadcast.
type BroadcastDescriptor interface {
	stateName() string
	register(b *state.Backend[int]) (any, error)
}

func (d MapStateDescriptor[K, V]) stateName() string { return d.Name }

func (d MapStateDescriptor[K, V]) register(b *state.Backend[int]) (any, error) {
	return state.NewMap[int, state.Void, K, V](b, state.MapDescriptor[K, V]{Name: d.Name})
}

// ReadOnlyBroadcastState is what the non-broadcast side sees of a
// broadcast state (Flink's ReadOnlyBroadcastState).
type ReadOnlyBroadcastState[K comparable, V any] interface {
	Get(k K) (V, bool)
	Contains(k K) bool
	// All iterates the entries, in no particular order.
	All() iter.Seq2[K, V]
	IsEmpty() bool
}

// BroadcastState is a broadcast state as the broadcast side sees it
// (Flink's BroadcastState): every parallel instance holds its own copy,
// and stays identical to the others only if it changes it the same way
// for the same broadcast records.
type BroadcastState[K comparable, V any] interface {
	ReadOnlyBroadcastState[K, V]
	Put(k K, v V)
	PutAll(m map[K]V)
	Remove(k K)
	Clear()
}

// BroadcastStateContext is a context of a broadcast process function:
// GetReadOnlyBroadcastState reads its broadcast states.
type BroadcastStateContext interface {
	broadcastStates() *broadcastStates
}

// WritableBroadcastStateContext is the context of ProcessBroadcastElement:
// GetBroadcastState reads and writes its broadcast states.
type WritableBroadcastStateContext interface {
	BroadcastStateContext
	writable()
}

// GetBroadcastState returns the broadcast state d names, read-write; d
// must be one of the descriptors given to Broadcast.
func GetBroadcastState[K comparable, V any](ctx WritableBroadcastStateContext, d MapStateDescriptor[K, V]) (BroadcastState[K, V], error) {
	return lookupBroadcast(ctx.broadcastStates(), d)
}

// GetReadOnlyBroadcastState returns the broadcast state d names, read
// only; d must be one of the descriptors given to Broadcast.
func GetReadOnlyBroadcastState[K comparable, V any](ctx BroadcastStateContext, d MapStateDescriptor[K, V]) (ReadOnlyBroadcastState[K, V], error) {
	s, err := lookupBroadcast(ctx.broadcastStates(), d)
	if err != nil {
		return nil, err
	}
	return readOnly[K, V]{s}, nil
}

func lookupBroadcast[K comparable, V any](bs *broadcastStates, d MapStateDescriptor[K, V]) (*state.Map[int, state.Void, K, V], error) {
	st, ok := bs.states[d.Name]
	if !ok {
		return nil, fmt.Errorf("stream: broadcast state %q does not exist: give its descriptor to Broadcast", d.Name)
	}
	s, ok := st.(*state.Map[int, state.Void, K, V])
	if !ok {
		return nil, fmt.Errorf("stream: broadcast state %q has other key or value types", d.Name)
	}
	return s, nil
}

// readOnly hides the writing methods of a broadcast state.
type readOnly[K comparable, V any] struct {
	m *state.Map[int, state.Void, K, V]
}

func (r readOnly[K, V]) Get(k K) (V, bool)    { return r.m.Get(k) }
func (r readOnly[K, V]) Contains(k K) bool    { return r.m.Contains(k) }
func (r readOnly[K, V]) All() iter.Seq2[K, V] { return r.m.All() }
func (r readOnly[K, V]) IsEmpty() bool        { return r.m.IsEmpty() }

// broadcastStates are an operator instance's broadcast states: map states
// in a backend of one key group and one key, so that every instance holds
// the whole state and its snapshot restores into any instance (Flink's
// rule on rescaling: each new instance gets a copy).
type broadcastStates struct {
	descs   []BroadcastDescriptor
	backend *state.Backend[int]
	states  map[string]any
}

func (s *broadcastStates) broadcastStates() *broadcastStates { return s }

// open makes the backend, restores snap (may be nil) and registers the
// descriptors.
func (s *broadcastStates) open(rt *taskRuntime, name string, snap []byte) error {
	clock := rt.clock
	b, err := state.NewBackend[int](state.Options{
		Name: name + " (broadcast state)", MaxParallelism: 1, Groups: state.KeyGroupRange{Start: 0, End: 0}, Memory: rt.mem,
		Clock: func() int64 { return clock.Now().UnixMilli() },
	})
	if err != nil {
		return err
	}
	s.backend = b
	if snap != nil {
		if err := b.Restore(bytes.NewReader(snap)); err != nil {
			return err
		}
	}
	b.SetCurrentKeyInGroup(0, 0)
	s.states = map[string]any{}
	for _, d := range s.descs {
		st, err := d.register(b)
		if err != nil {
			return err
		}
		s.states[d.stateName()] = st
	}
	return nil
}

func (s *broadcastStates) err() error { return s.backend.Err() }

func (s *broadcastStates) snapshot(w io.Writer) error {
	return s.backend.Snapshot(w, s.backend.Groups())
}

func (s *broadcastStates) close() error {
	if s.backend == nil {
		return nil
	}
	err := s.backend.Dispose()
	s.backend = nil
	return err
}

// writeParts writes snapshot parts, each length-prefixed.
func writeParts(w io.Writer, parts ...func(io.Writer) error) error {
	var buf bytes.Buffer
	var n [binary.MaxVarintLen64]byte
	for _, p := range parts {
		buf.Reset()
		if err := p(&buf); err != nil {
			return err
		}
		if _, err := w.Write(n[:binary.PutUvarint(n[:], uint64(buf.Len()))]); err != nil {
			return err
		}
		if _, err := w.Write(buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// readParts splits a snapshot writeParts wrote into want parts; a nil
// snapshot gives nil parts.
func readParts(snap []byte, want int) ([][]byte, error) {
	parts := make([][]byte, want)
	if snap == nil {
		return parts, nil
	}
	for i := range parts {
		n, k := binary.Uvarint(snap)
		if k <= 0 || uint64(len(snap)-k) < n {
			return nil, fmt.Errorf("stream: broadcast operator: %w", state.ErrCorruptSnapshot)
		}
		if n > 0 {
			parts[i] = snap[k : k+int(n)]
		}
		snap = snap[k+int(n):]
	}
	return parts, nil
}
