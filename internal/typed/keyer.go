package typed

import (
	"sync"

	"github.com/weirdata/weir/memory"
)

// PartitionSeed seeds the hash that routes records to subtasks; the
// kernels' own hash tables use other seeds, so a subtask's keys still spread
// over them.
const PartitionSeed = 0x5ca1ab1e0ddba11

// Keyer encodes the key a selector picks from records of T, in the memory
// package's order-preserving encoding. It is chosen once, when a program is
// built; its functions are safe for concurrent use unless said otherwise.
type Keyer[T any] struct {
	Append func(dst []byte, v *T) []byte
	Hash   func(v *T) uint64
	Custom func(v *T, n int) int // a custom partitioner's function
	Bounds [][]byte              // a range partitioning's encoded bounds (nil: sampled)
	// Raw and FromRaw are set when the key is the record's own bytes (a
	// string sorted by itself): Raw views them; FromRaw makes a record from
	// a key, copied into the Arena, or pointing into the key when the Arena
	// is nil.
	Raw     func(v *T) []byte
	FromRaw func(b []byte, a *memory.Arena) T
	// Size is the length of every encoded key when it is fixed (8 for int64
	// keys), 0 when keys vary.
	Size int
	// Local, when set, returns an append function with scratch of its own,
	// for one goroutine (no pool); keyers without scratch leave it nil.
	Local func() func(dst []byte, v *T) []byte
	// Word, for the scalar keys of 8 bytes (int64, int, uint64), returns the
	// encoded key as a big-endian word without encoding it; nil otherwise.
	Word func(v *T) uint64
	// Words writes the words of a batch's keys into w (len(b) at least);
	// set with Word: one call a batch, not one a record.
	Words func(b []T, w []uint64)
}

// Appender returns the append function of k for one goroutine: Local's when
// k has one, else Append.
func (k *Keyer[T]) Appender() func(dst []byte, v *T) []byte {
	if k.Local != nil {
		return k.Local()
	}
	return k.Append
}

// NewKeyer builds the keyer of sel, choosing K's encoding once.
//
// The selector's result is held in a pooled scratch value while it is encoded:
// memory.Key takes a pointer, and a pointer to a local would make every key
// escape to the heap (one allocation per record). The keyer is shared by the
// subtasks of a job, so the scratch cannot be a single captured variable.
func NewKeyer[T, K any](sel func(T) K) (*Keyer[T], error) {
	kk, err := memory.ValueKey[K]()
	if err != nil {
		return nil, err
	}
	if k := scalarKeyer(sel); k != nil {
		return k, nil
	}
	scratch := sync.Pool{New: func() any { return new(K) }}
	var zero K
	return &Keyer[T]{
		Append: func(dst []byte, v *T) []byte {
			k := scratch.Get().(*K)
			*k = sel(*v)
			dst = kk.Append(dst, k)
			*k = zero // drop references the key holds
			scratch.Put(k)
			return dst
		},
		Hash: func(v *T) uint64 {
			k := scratch.Get().(*K)
			*k = sel(*v)
			h := kk.Hash(k, PartitionSeed)
			*k = zero
			scratch.Put(k)
			return h
		},
		Local: func() func(dst []byte, v *T) []byte {
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
// other key types. An 8-byte key hashes its word (memory.HashUint64), equal
// to the hash of its encoding.
func scalarKeyer[T, K any](sel func(T) K) *Keyer[T] {
	switch f := any(sel).(type) {
	case func(T) int64:
		return &Keyer[T]{Size: 8,
			Append: func(dst []byte, v *T) []byte { return memory.AppendInt64(dst, f(*v)) },
			Word:   func(v *T) uint64 { return uint64(f(*v)) ^ (1 << 63) },
			Words: func(b []T, w []uint64) {
				for i := range b {
					w[i] = uint64(f(b[i])) ^ (1 << 63)
				}
			},
			Hash: func(v *T) uint64 { return memory.HashUint64(uint64(f(*v))^(1<<63), PartitionSeed) },
		}
	case func(T) int32:
		return &Keyer[T]{Size: 4,
			Append: func(dst []byte, v *T) []byte { return memory.AppendInt32(dst, f(*v)) },
			Hash: func(v *T) uint64 {
				var buf [4]byte
				return memory.Hash(memory.AppendInt32(buf[:0], f(*v)), PartitionSeed)
			},
		}
	case func(T) int:
		return &Keyer[T]{Size: 8,
			Append: func(dst []byte, v *T) []byte { return memory.AppendInt64(dst, int64(f(*v))) },
			Word:   func(v *T) uint64 { return uint64(int64(f(*v))) ^ (1 << 63) },
			Words: func(b []T, w []uint64) {
				for i := range b {
					w[i] = uint64(int64(f(b[i]))) ^ (1 << 63)
				}
			},
			Hash: func(v *T) uint64 { return memory.HashUint64(uint64(int64(f(*v)))^(1<<63), PartitionSeed) },
		}
	case func(T) uint64:
		return &Keyer[T]{Size: 8,
			Append: func(dst []byte, v *T) []byte { return memory.AppendUint64(dst, f(*v)) },
			Word:   func(v *T) uint64 { return f(*v) },
			Words: func(b []T, w []uint64) {
				for i := range b {
					w[i] = f(b[i])
				}
			},
			Hash: func(v *T) uint64 { return memory.HashUint64(f(*v), PartitionSeed) },
		}
	case func(T) string:
		return &Keyer[T]{
			Append: func(dst []byte, v *T) []byte { return memory.AppendString(dst, f(*v)) },
			Hash: func(v *T) uint64 {
				var buf [128]byte
				return memory.Hash(memory.AppendString(buf[:0], f(*v)), PartitionSeed)
			},
		}
	}
	return nil
}

// CodecOrNil returns T's serializer, or nil when T has none (edges that stay
// pipelined need none; a blocking edge then fails with a clear error).
func CodecOrNil[T any]() *memory.Codec[T] {
	c, err := memory.NewCodec[T]()
	if err != nil {
		return nil
	}
	return c
}

// NewOrderedKeyer is NewKeyer whose encoding sorts in the given direction.
func NewOrderedKeyer[T, K any](sel func(T) K, o memory.Order) (*Keyer[T], error) {
	k, err := NewKeyer[T, K](sel)
	if err != nil || o == memory.Ascending {
		return k, err
	}
	asc := k.Append
	k.Append = func(dst []byte, v *T) []byte {
		n := len(dst)
		dst = asc(dst, v)
		memory.Invert(dst[n:])
		return dst
	}
	return k, nil
}
