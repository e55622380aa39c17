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

// keyGroups returns the partitioner of a keyed edge into to: the subtask
// owning the key group of the record's key, as Flink's
// KeyGroupStreamPartitioner. The hash is chosen once per key type.
func keyGroups[T any, K comparable](key func(T) K, hash state.HashFunc[K], to *node) func(*Record[T], int) int {
	return func(r *Record[T], n int) int {
		g := state.KeyGroupForHash(hash(key(r.Value)), to.maxP)
		return state.OperatorIndexForKeyGroup(to.maxP, n, g)
	}
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
