package stream

import (
	"fmt"

	"github.com/weirdata/weir/stream/internal/graph"
	"github.com/weirdata/weir/stream/state"
)

// KeyedStream is a DataStream partitioned by a key: every record of a key
// goes to the subtask owning the key's key group, as Flink's keyBy. Its
// operations: Reduce, Sum, Min, Max, MinBy, MaxBy (rolling aggregations),
// KeyedProcess, Window and CountWindow, IntervalJoin, ConnectKeyed and
// ConnectKeyedBroadcast.
type KeyedStream[T any, K comparable] struct {
	ds   DataStream[T]
	key  func(T) K
	hash state.HashFunc[K]
}

// KeyBy partitions ds by key: the key group of a key is Flink's
// (murmur hash of the key's Java hash code modulo max parallelism) and the
// subtask the one owning the group.
func KeyBy[T any, K comparable](ds DataStream[T], key func(T) K) KeyedStream[T, K] {
	if key == nil {
		ds.env.fail(caller(1), fmt.Errorf("KeyBy: nil key selector"))
		key = func(T) K { var k K; return k }
	}
	h, err := graph.SharedHash[K]()
	if err != nil {
		ds.env.fail(caller(1), fmt.Errorf("KeyBy: %w", err))
	}
	return KeyedStream[T, K]{ds: ds, key: key, hash: h}
}

// addKeyed adds a keyed node reading ks, with a main port of type O.
func addKeyed[O, T any, K comparable](ks KeyedStream[T, K], name, kind string) *graph.Node {
	e := ks.ds.edge()
	e.Part = graph.Partitioning{Kind: graph.PartKeyed, Custom: graph.KeyGroups(ks.key, ks.hash)}
	n := addNode[O](ks.ds.env, name, kind, e)
	n.Keyed = true
	return n
}
