package dataset

import (
	"sync"

	"github.com/weirdata/weir/memory"
)

// partitionSeed seeds the hash that routes records to subtasks; the operators'
// own hash tables use other seeds, so a subtask's keys still spread over them.
const partitionSeed = 0x5ca1ab1e0ddba11

// keyer encodes the key a selector picks from records of T, in the memory
// package's order-preserving encoding.
type keyer[T any] struct {
	append func(dst []byte, v *T) []byte
	hash   func(v *T) uint64
	custom func(v *T, n int) int // PartitionCustom's function
	bounds [][]byte              // PartitionByRangeBounds' encoded bounds (nil: sampled)
	// raw and fromRaw are set when the key is the record's own bytes (see
	// newSortKeyer): raw views them; fromRaw makes a record from a key, copied
	// into the Arena, or pointing into the key when the Arena is nil.
	raw     func(v *T) []byte
	fromRaw func(b []byte, a *memory.Arena) T
	// size is the length of every encoded key when it is fixed (8 for int64
	// keys), 0 when keys vary.
	size int
	// local, when set, returns an append function with scratch of its own,
	// for one goroutine (no pool); keyers without scratch leave it nil.
	local func() func(dst []byte, v *T) []byte
	// word, for the scalar keys of 8 bytes (int64, int, uint64), returns the
	// encoded key as a big-endian word without encoding it; nil otherwise.
	word func(v *T) uint64
	// words writes the words of a batch's keys into w (len(b) at least);
	// set with word: one call a batch, not one a record.
	words func(b []T, w []uint64)
}

// appender returns the append function of k for one goroutine: local's when
// k has one, else append.
func (k *keyer[T]) appender() func(dst []byte, v *T) []byte {
	if k.local != nil {
		return k.local()
	}
	return k.append
}

// newKeyer builds the keyer of sel, choosing K's encoding once.
//
// The selector's result is held in a pooled scratch value while it is encoded:
// memory.Key takes a pointer, and a pointer to a local would make every key
// escape to the heap (one allocation per record). The keyer is shared by the
// subtasks of a job, so the scratch cannot be a single captured variable.
func newKeyer[T, K any](sel func(T) K) (*keyer[T], error) {
	kk, err := memory.ValueKey[K]()
	if err != nil {
		return nil, err
	}
	if k := scalarKeyer(sel); k != nil {
		return k, nil
	}
	scratch := sync.Pool{New: func() any { return new(K) }}
	var zero K
	return &keyer[T]{
		append: func(dst []byte, v *T) []byte {
			k := scratch.Get().(*K)
			*k = sel(*v)
			dst = kk.Append(dst, k)
			*k = zero // drop references the key holds
			scratch.Put(k)
			return dst
		},
		hash: func(v *T) uint64 {
			k := scratch.Get().(*K)
			*k = sel(*v)
			h := kk.Hash(k, partitionSeed)
			*k = zero
			scratch.Put(k)
			return h
		},
		local: func() func(dst []byte, v *T) []byte {
			k := new(K) // holds the last key until the next call
			return func(dst []byte, v *T) []byte {
				*k = sel(*v)
				return kk.Append(dst, k)
			}
		},
	}, nil
}

// scalarKeyer returns the keyer of a selector of an int64, int32, int, uint64
// or string key, which encodes the key straight from the selector's result
// (no scratch value, no pool), exactly as memory.ValueKey encodes it; nil for
// other key types.
func scalarKeyer[T, K any](sel func(T) K) *keyer[T] {
	switch f := any(sel).(type) {
	case func(T) int64:
		return &keyer[T]{size: 8,
			append: func(dst []byte, v *T) []byte { return memory.AppendInt64(dst, f(*v)) },
			word:   func(v *T) uint64 { return uint64(f(*v)) ^ (1 << 63) },
			words: func(b []T, w []uint64) {
				for i := range b {
					w[i] = uint64(f(b[i])) ^ (1 << 63)
				}
			},
			hash: func(v *T) uint64 {
				var buf [8]byte
				return memory.Hash(memory.AppendInt64(buf[:0], f(*v)), partitionSeed)
			},
		}
	case func(T) int32:
		return &keyer[T]{size: 4,
			append: func(dst []byte, v *T) []byte { return memory.AppendInt32(dst, f(*v)) },
			hash: func(v *T) uint64 {
				var buf [4]byte
				return memory.Hash(memory.AppendInt32(buf[:0], f(*v)), partitionSeed)
			},
		}
	case func(T) int:
		return &keyer[T]{size: 8,
			append: func(dst []byte, v *T) []byte { return memory.AppendInt64(dst, int64(f(*v))) },
			word:   func(v *T) uint64 { return uint64(int64(f(*v))) ^ (1 << 63) },
			words: func(b []T, w []uint64) {
				for i := range b {
					w[i] = uint64(int64(f(b[i]))) ^ (1 << 63)
				}
			},
			hash: func(v *T) uint64 {
				var buf [8]byte
				return memory.Hash(memory.AppendInt64(buf[:0], int64(f(*v))), partitionSeed)
			},
		}
	case func(T) uint64:
		return &keyer[T]{size: 8,
			append: func(dst []byte, v *T) []byte { return memory.AppendUint64(dst, f(*v)) },
			word:   func(v *T) uint64 { return f(*v) },
			words: func(b []T, w []uint64) {
				for i := range b {
					w[i] = f(b[i])
				}
			},
			hash: func(v *T) uint64 {
				var buf [8]byte
				return memory.Hash(memory.AppendUint64(buf[:0], f(*v)), partitionSeed)
			},
		}
	case func(T) string:
		return &keyer[T]{
			append: func(dst []byte, v *T) []byte { return memory.AppendString(dst, f(*v)) },
			hash: func(v *T) uint64 {
				var buf [128]byte
				return memory.Hash(memory.AppendString(buf[:0], f(*v)), partitionSeed)
			},
		}
	}
	return nil
}

// codecOrNil returns T's serializer, or nil when T has none (edges that stay
// pipelined need none; a blocking edge then fails with a clear error).
func codecOrNil[T any](*Env) *memory.Codec[T] {
	c, err := memory.NewCodec[T]()
	if err != nil {
		return nil
	}
	return c
}

// Order is a sort direction.
type Order = memory.Order

// The sort directions.
const (
	Ascending  = memory.Ascending
	Descending = memory.Descending
)

// newOrderedKeyer is newKeyer whose encoding sorts in the given direction.
func newOrderedKeyer[T, K any](sel func(T) K, o Order) (*keyer[T], error) {
	k, err := newKeyer[T, K](sel)
	if err != nil || o == Ascending {
		return k, err
	}
	asc := k.append
	k.append = func(dst []byte, v *T) []byte {
		n := len(dst)
		dst = asc(dst, v)
		memory.Invert(dst[n:])
		return dst
	}
	return k, nil
}
