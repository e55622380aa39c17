package stream

import (
	"math/rand/v2"
	"reflect"
	"sync"

	"github.com/weirdata/weir/stream/state"
)

// shuffle returns the partitioner of Shuffle.
func shuffle[T any]() func(*Record[T], int) int {
	return func(_ *Record[T], n int) int { return rand.IntN(n) }
}

// keyGroups returns the maker of the partitioner of a keyed edge into to,
// called when the edge is connected (parallelism and key groups resolved):
// the subtask owning the key group of the record's key, as Flink's
// KeyGroupStreamPartitioner, from a table of the owner of every key group.
// The hash is chosen once per key type.
func keyGroups[T any, K comparable](key func(T) K, hash state.HashFunc[K], to *node) func() customPart[T] {
	return func() customPart[T] {
		maxP, p := to.maxP, to.parallelism
		owner := make([]int32, maxP)
		for g := range owner {
			owner[g] = int32(state.OperatorIndexForKeyGroup(maxP, p, g))
		}
		one := func(r *Record[T], n int) int {
			g := state.KeyGroupForHash(hash(key(r.Value)), maxP)
			if n != p {
				return state.OperatorIndexForKeyGroup(maxP, n, g)
			}
			return int(owner[g])
		}
		batch := func(vs []Record[T], n int, dst []int32) {
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
		return customPart[T]{one: one, batch: batch}
	}
}

// customPart is a custom partitioning of an edge: the consumer of a record
// and, for a whole batch, of each of its records (flow.Partitioner's Custom
// and CustomBatch).
type customPart[T any] struct {
	one   func(*Record[T], int) int
	batch func([]Record[T], int, []int32)
}

// sharedHash returns K's hash code for use by several goroutines: the hash
// of types hashed through their codec bytes keeps a scratch buffer, so it
// is serialized.
func sharedHash[K comparable]() (state.HashFunc[K], error) {
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
