package graph

import (
	"math/rand/v2"
	"reflect"
	"sync"

	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/state"
)

// Shuffle returns the partitioner of Shuffle: a subtask at random.
func Shuffle[T any]() func(*core.Record[T], int) int {
	return func(_ *core.Record[T], n int) int { return rand.IntN(n) }
}

// CustomPart is a custom partitioning of an edge: the consumer of a record
// and, for a whole batch, of each of its records (flow.Partitioner's Custom
// and CustomBatch).
type CustomPart[T any] struct {
	One   func(*core.Record[T], int) int
	Batch func([]core.Record[T], int, []int32)
}

// KeyGroups returns the maker of the partitioner of a keyed edge, called
// when the edge is connected with the consumer's max parallelism and
// parallelism: the subtask owning the key group of the record's key, as
// Flink's KeyGroupStreamPartitioner, from a table of the owner of every key
// group.
func KeyGroups[T any, K comparable](key func(T) K, hash state.HashFunc[K]) func(maxP, p int) CustomPart[T] {
	return func(maxP, p int) CustomPart[T] {
		owner := make([]int32, maxP)
		for g := range owner {
			owner[g] = int32(state.OperatorIndexForKeyGroup(maxP, p, g))
		}
		one := func(r *core.Record[T], n int) int {
			g := state.KeyGroupForHash(hash(key(r.Value)), maxP)
			if n != p {
				return state.OperatorIndexForKeyGroup(maxP, n, g)
			}
			return int(owner[g])
		}
		batch := func(vs []core.Record[T], n int, dst []int32) {
			dst = dst[:len(vs)]
			if n != p {
				for i := range vs {
					dst[i] = int32(state.OperatorIndexForKeyGroup(maxP, n, state.KeyGroupForHash(hash(key(vs[i].Value)), maxP)))
				}
				return
			}
			if mask := int32(maxP - 1); maxP&(maxP-1) == 0 { // KeyGroupForHash inline
				for i := range vs {
					dst[i] = owner[state.MurmurHash(hash(key(vs[i].Value)))&mask]
				}
				return
			}
			for i := range vs {
				dst[i] = owner[state.KeyGroupForHash(hash(key(vs[i].Value)), maxP)]
			}
		}
		return CustomPart[T]{One: one, Batch: batch}
	}
}

// SharedHash returns K's hash code for use by several goroutines: the hash
// of types hashed through their codec bytes keeps a scratch buffer, so it
// is serialized.
func SharedHash[K comparable]() (state.HashFunc[K], error) {
	h, err := state.NewHashFunc[K]()
	if err != nil {
		return nil, err
	}
	switch reflect.TypeFor[K]().Kind() {
	case reflect.String, reflect.Int, reflect.Int64, reflect.Int32, reflect.Int16, reflect.Int8,
		reflect.Uint16, reflect.Bool, reflect.Float64, reflect.Float32:
		return h, nil
	}
	var mu sync.Mutex
	return func(k K) int32 {
		mu.Lock()
		defer mu.Unlock()
		return h(k)
	}, nil
}
