package state

import "unsafe"

// cell is a stored value with its TTL timestamp and its estimated bytes.
type cell[V any] struct {
	v  V
	ts int64
	sz int64
}

// cells is the storage of the single-value kinds (Value, Reducing and
// Aggregating): one cell per (key, namespace).
type cells[K, N comparable, V any] struct {
	base[K, N]
	t  table[K, N, cell[V]]
	vs sizer[V]
}

func newCells[K, N comparable, V any](b *Backend[K], name string, k Kind, cfg TTLConfig) (cells[K, N, V], error) {
	var s cells[K, N, V]
	var err error
	if s.base, err = newBase[K, N](b, name, k, cfg, int64(unsafe.Sizeof(cell[V]{}))); err != nil {
		return s, err
	}
	if s.vs, err = newSizer[V]("value of " + s.what); err != nil {
		return s, err
	}
	s.t = newTable[K, N, cell[V]](b.groups.Len())
	return s, nil
}

// get returns the current key's value in namespace ns, applying TTL.
func (s *cells[K, N, V]) get(ns N) (V, bool) {
	var zero V
	idx := s.b.at()
	if idx < 0 {
		return zero, false
	}
	m := s.t.groups[idx]
	if m == nil {
		return zero, false
	}
	k := nsKey[K, N]{s.b.key, ns}
	c, ok := m[k]
	if !ok {
		return zero, false
	}
	if s.ttl.on {
		now := s.b.now()
		if s.ttl.expired(c.ts, now) {
			delete(m, k)
			s.b.shrink(c.sz)
			if s.ttl.returnExpired {
				return c.v, true
			}
			return zero, false
		}
		if s.ttl.onRead {
			c.ts = now
			m[k] = c
		}
	}
	return c.v, true
}

// put stores v for the current key in namespace ns.
func (s *cells[K, N, V]) put(ns N, v V) {
	idx := s.b.at()
	if idx < 0 {
		return
	}
	m := s.t.of(idx)
	k := nsKey[K, N]{s.b.key, ns}
	old, ok := m[k]
	c := cell[V]{v: v, ts: s.ttl.stamp(s.b.clock)}
	if ok {
		c.sz = old.sz - s.vs.extra(&old.v, &s.b.scratch) + s.vs.extra(&v, &s.b.scratch)
	} else {
		c.sz = s.keyBytes(&k) + s.vs.extra(&v, &s.b.scratch)
	}
	m[k] = c
	if ok {
		s.b.resize(old.sz, c.sz, s.what)
	} else {
		s.b.grow(c.sz, s.what)
	}
}

// remove deletes the current key's entry in namespace ns and returns it.
func (s *cells[K, N, V]) remove(ns N) (cell[V], bool) {
	idx := s.b.at()
	if idx < 0 {
		return cell[V]{}, false
	}
	m := s.t.groups[idx]
	k := nsKey[K, N]{s.b.key, ns}
	c, ok := m[k]
	if ok {
		delete(m, k)
		s.b.shrink(c.sz)
	}
	return c, ok
}

// live removes the entry of ns when expired and reports whether one is left.
func (s *cells[K, N, V]) live(ns N) (cell[V], bool) {
	idx := s.b.at()
	if idx < 0 || s.t.groups[idx] == nil {
		return cell[V]{}, false
	}
	k := nsKey[K, N]{s.b.key, ns}
	c, ok := s.t.groups[idx][k]
	if ok && s.ttl.expired(c.ts, s.b.now()) {
		delete(s.t.groups[idx], k)
		s.b.shrink(c.sz)
		return cell[V]{}, false
	}
	return c, ok
}

func (s *cells[K, N, V]) write(dst []byte, idx int, now int64) ([]byte, int) {
	n := 0
	for k, c := range s.t.groups[idx] {
		if s.ttl.expired(c.ts, now) {
			continue
		}
		dst = s.appendKey(dst, &k)
		dst = appendVarint(dst, c.ts)
		dst = s.vs.codec.Append(dst, &c.v)
		n++
	}
	return dst, n
}

func (s *cells[K, N, V]) read(src []byte, idx, n int) error {
	d := dec{b: src}
	m := s.t.of(idx)
	for i := 0; i < n && d.err == nil; i++ {
		var k nsKey[K, N]
		var c cell[V]
		s.readKey(&d, &k, idx)
		c.ts = d.varint()
		decodeInto(&d, s.vs.codec, &c.v)
		if d.err != nil {
			break
		}
		c.sz = s.keyBytes(&k) + s.vs.extra(&c.v, &s.b.scratch)
		if old, ok := m[k]; ok {
			s.b.shrink(old.sz)
		}
		m[k] = c
		s.b.grow(c.sz, s.what)
	}
	return d.done(s.what)
}

func (s *cells[K, N, V]) drop() {
	for i, m := range s.t.groups {
		for _, c := range m {
			s.b.shrink(c.sz)
		}
		s.t.groups[i] = nil
	}
}

// ValueState is Flink's ValueState: one value per key.
type ValueState[V any] interface {
	// Value returns the current key's value, false when it has none.
	Value() (V, bool)
	// Update sets the current key's value.
	Update(v V)
	// Clear removes the current key's value.
	Clear()
}

// ValueDescriptor names a ValueState.
type ValueDescriptor[V any] struct {
	Name string
	TTL  TTLConfig
}

// Value is a ValueState in namespaces N.
type Value[K, N comparable, V any] struct {
	cells[K, N, V]
}

// NewValue returns the backend's value state of that name, registering it on
// first use and ingesting what a restore read for it.
func NewValue[K, N comparable, V any](b *Backend[K], d ValueDescriptor[V]) (*Value[K, N, V], error) {
	if s, ok, err := lookup[*Value[K, N, V]](b, d.Name); ok || err != nil {
		return s, err
	}
	c, err := newCells[K, N, V](b, d.Name, KindValue, d.TTL)
	if err != nil {
		return nil, err
	}
	s := &Value[K, N, V]{c}
	return s, b.register(s, false)
}

// GetValueState returns the value state of that name in the Void namespace.
func GetValueState[K comparable, V any](b *Backend[K], d ValueDescriptor[V]) (ValueState[V], error) {
	s, err := NewValue[K, Void, V](b, d)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Value[K, N, V]) kind() Kind { return KindValue }

// KeysIn returns the keys that have an entry in namespace ns (expired or not),
// as Flink's getKeys; the caller may set each as the current key and change
// the state.
func (s *Value[K, N, V]) KeysIn(ns N) []K { return keysIn(&s.t, ns) }

// Value returns the current key's value in the current namespace.
func (s *Value[K, N, V]) Value() (V, bool) { return s.get(s.ns) }

// Update sets the current key's value in the current namespace.
func (s *Value[K, N, V]) Update(v V) { s.put(s.ns, v) }

// Clear removes the current key's value in the current namespace.
func (s *Value[K, N, V]) Clear() { s.remove(s.ns) }

// mergeInto merges the current key's live values in sources (other than
// target) into the one in target with merge, and removes the sources: the
// namespace merging of the merging states.
func (s *cells[K, N, V]) mergeInto(target N, sources []N, merge func(a, b V) V) {
	var acc V
	have := false
	for _, ns := range sources {
		if ns == target {
			continue
		}
		if _, ok := s.live(ns); !ok {
			continue
		}
		c, _ := s.remove(ns)
		if have {
			acc = merge(acc, c.v)
		} else {
			acc, have = c.v, true
		}
	}
	if !have {
		return
	}
	if c, ok := s.live(target); ok {
		acc = merge(c.v, acc)
	}
	s.put(target, acc)
}
