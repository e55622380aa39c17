package stream

import (
	"fmt"
	"iter"

	"github.com/weirdata/weir/stream/internal/op"

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
	broadcastStates() *op.BroadcastStates
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

func lookupBroadcast[K comparable, V any](bs *op.BroadcastStates, d MapStateDescriptor[K, V]) (*state.Map[int, state.Void, K, V], error) {
	st, ok := bs.Lookup(d.Name)
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

// broadcastStates returns the operator's broadcast states of descs.
func broadcastStates(descs []BroadcastDescriptor) []op.BroadcastState {
	out := make([]op.BroadcastState, len(descs))
	for i, d := range descs {
		out[i] = op.BroadcastState{Name: d.stateName(), Register: d.register}
	}
	return out
}
