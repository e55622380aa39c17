package state

import (
	"fmt"
	"iter"
)

// BroadcastState is Flink's BroadcastState: a map that every parallel
// instance of an operator holds alike, because every instance sees the same
// broadcast elements and changes it the same way. A restore gives every new
// subtask a copy of one old subtask's map.
type BroadcastState[K comparable, V any] struct {
	s       *OperatorStore
	name    string
	what    string
	m       map[K]V
	sz      int64
	ks      sizer[K]
	vs      sizer[V]
	scratch []byte
}

// GetBroadcastState returns the operator's broadcast state of that name,
// registering it on first use. TTL does not apply.
func GetBroadcastState[K comparable, V any](s *OperatorStore, d MapDescriptor[K, V]) (*BroadcastState[K, V], error) {
	if b, ok, err := lookupOp[*BroadcastState[K, V]](s, d.Name, Broadcast); ok || err != nil {
		return b, err
	}
	if d.TTL.TTL != 0 {
		return nil, fmt.Errorf("state: %s: %s %q: TTL applies to keyed state only", s.name, Broadcast, d.Name)
	}
	b := &BroadcastState[K, V]{s: s, name: d.Name, what: fmt.Sprintf("%s %q", Broadcast, d.Name), m: map[K]V{}}
	var err error
	if b.ks, err = newSizer[K]("key of " + b.what); err != nil {
		return nil, err
	}
	if b.vs, err = newSizer[V]("value of " + b.what); err != nil {
		return nil, err
	}
	return b, s.register(b)
}

func (b *BroadcastState[K, V]) bytes(k *K, v *V) int64 {
	return b.ks.fixed + b.vs.fixed + entryOverhead + b.ks.extra(k, &b.scratch) + b.vs.extra(v, &b.scratch)
}

// Get returns the value of k.
func (b *BroadcastState[K, V]) Get(k K) (V, bool) {
	v, ok := b.m[k]
	return v, ok
}

// Contains reports whether k has a value.
func (b *BroadcastState[K, V]) Contains(k K) bool {
	_, ok := b.m[k]
	return ok
}

// Put sets the value of k.
func (b *BroadcastState[K, V]) Put(k K, v V) {
	if old, ok := b.m[k]; ok {
		n := b.bytes(&k, &old)
		b.sz -= n
		b.s.shrink(n)
	}
	n := b.bytes(&k, &v)
	b.m[k] = v
	b.sz += n
	b.s.grow(n, b.what)
}

// PutAll sets the values of all of m's keys.
func (b *BroadcastState[K, V]) PutAll(m map[K]V) {
	for k, v := range m {
		b.Put(k, v)
	}
}

// Remove removes k.
func (b *BroadcastState[K, V]) Remove(k K) {
	old, ok := b.m[k]
	if !ok {
		return
	}
	n := b.bytes(&k, &old)
	delete(b.m, k)
	b.sz -= n
	b.s.shrink(n)
}

// All iterates over the entries, in no order; the loop body may Remove the
// entry it is given.
func (b *BroadcastState[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		for k, v := range b.m {
			if !yield(k, v) {
				return
			}
		}
	}
}

// Len returns the number of entries.
func (b *BroadcastState[K, V]) Len() int { return len(b.m) }

// Clear removes every entry.
func (b *BroadcastState[K, V]) Clear() {
	clear(b.m)
	b.s.shrink(b.sz)
	b.sz = 0
}

func (b *BroadcastState[K, V]) stateName() string  { return b.name }
func (b *BroadcastState[K, V]) mode() Distribution { return Broadcast }
func (b *BroadcastState[K, V]) drop()              { b.m, b.sz = map[K]V{}, 0 }

func (b *BroadcastState[K, V]) write(dst [][]byte, scratch []byte) ([][]byte, []byte) {
	for k, v := range b.m {
		start := len(scratch)
		scratch = b.ks.codec.Append(scratch, &k)
		scratch = b.vs.codec.Append(scratch, &v)
		dst = append(dst, scratch[start:len(scratch):len(scratch)])
	}
	return dst, scratch
}

func (b *BroadcastState[K, V]) read(entries [][]byte) error {
	for i, e := range entries {
		var k K
		var v V
		d := newDec(e)
		decodeInto(&d, b.ks.codec, &k)
		decodeValue(&d, &b.vs, &v)
		err := d.Err
		if err == nil && len(d.B) != 0 {
			err = fmt.Errorf("%d bytes after the entry", len(d.B))
		}
		if err != nil {
			return fmt.Errorf("%w: entry %d: %v", ErrCorruptSnapshot, i, err)
		}
		b.Put(k, v)
	}
	return nil
}
