package state

import (
	"iter"
	"maps"
	"unsafe"
)

// mapEntry is one key's map and its estimated bytes.
type mapEntry[UK comparable, UV any] struct {
	m   map[UK]elem[UV]
	sz  int64
	ver uint64 // the copy-on-write version (cow)
}

// MapState is Flink's MapState: a map per key.
type MapState[UK comparable, UV any] interface {
	// Get returns the value of uk in the current key's map.
	Get(uk UK) (UV, bool)
	// Put sets the value of uk.
	Put(uk UK, uv UV)
	// PutAll sets the values of all of m's keys.
	PutAll(m map[UK]UV)
	// Remove removes uk.
	Remove(uk UK)
	// Contains reports whether uk has a value.
	Contains(uk UK) bool
	// All iterates over the entries, in no order. The loop body may Remove
	// the entry it is given.
	All() iter.Seq2[UK, UV]
	// Keys iterates over the keys.
	Keys() iter.Seq[UK]
	// Values iterates over the values.
	Values() iter.Seq[UV]
	// IsEmpty reports whether the current key's map has no entries.
	IsEmpty() bool
	// Clear removes the current key's map.
	Clear()
}

// MapDescriptor names a MapState.
type MapDescriptor[UK comparable, UV any] struct {
	Name string
	TTL  TTLConfig
}

// Map is a MapState in namespaces N. TTL applies per entry.
type Map[K, N comparable, UK comparable, UV any] struct {
	base[K, N]
	t  table[K, N, *mapEntry[UK, UV]]
	ks sizer[UK]
	vs sizer[UV]
}

// NewMap returns the backend's map state of that name, registering it on
// first use.
func NewMap[K, N comparable, UK comparable, UV any](b *Backend[K], d MapDescriptor[UK, UV]) (*Map[K, N, UK, UV], error) {
	if s, ok, err := lookup[*Map[K, N, UK, UV]](b, d.Name); ok || err != nil {
		return s, err
	}
	bs, err := newBase[K, N](b, d.Name, KindMap, d.TTL, int64(unsafe.Sizeof(mapEntry[UK, UV]{})))
	if err != nil {
		return nil, err
	}
	s := &Map[K, N, UK, UV]{base: bs, t: newTable[K, N, *mapEntry[UK, UV]](b.groups.Len())}
	if s.ks, err = newSizer[UK]("user key of " + s.what); err != nil {
		return nil, err
	}
	if s.vs, err = newSizer[UV]("user value of " + s.what); err != nil {
		return nil, err
	}
	return s, b.register(s, false)
}

// GetMapState returns the map state of that name in the Void namespace.
func GetMapState[K comparable, UK comparable, UV any](b *Backend[K], d MapDescriptor[UK, UV]) (MapState[UK, UV], error) {
	s, err := NewMap[K, Void, UK, UV](b, d)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Map[K, N, UK, UV]) kind() Kind { return KindMap }

// KeysIn returns the keys that have an entry in namespace ns (expired or not),
// as Flink's getKeys; the caller may set each as the current key and change
// the state.
func (s *Map[K, N, UK, UV]) KeysIn(ns N) []K {
	if s.b.store != nil {
		return s.storeKeysIn(ns)
	}
	return keysIn(&s.t, ns)
}

func (s *Map[K, N, UK, UV]) pairBytes(uk *UK, e *elem[UV]) int64 {
	return entryOverhead + int64(unsafe.Sizeof(*uk)) + int64(unsafe.Sizeof(*e)) +
		s.ks.extra(uk, &s.b.scratch) + s.vs.extra(&e.v, &s.b.scratch)
}

// cur returns the current key's map entry (nil map when none) and its place.
func (s *Map[K, N, UK, UV]) cur() (*mapEntry[UK, UV], nsKey[K, N], int) {
	k, idx := nsKey[K, N]{k: s.b.key, n: s.ns}, s.b.at()
	if idx < 0 || s.t.groups[idx] == nil {
		return nil, k, idx
	}
	return s.t.groups[idx][k], k, idx
}

// store writes e back, removing the key's entry when its map is empty.
func (s *Map[K, N, UK, UV]) store(e *mapEntry[UK, UV], k nsKey[K, N], idx int, old int64) {
	m := s.t.w(&s.b.cow, idx)
	if len(e.m) == 0 {
		delete(m, k)
		s.b.shrink(old)
		return
	}
	m[k] = e
	s.b.resize(old, e.sz, s.what)
}

// check applies TTL to the element of uk: it returns the element, whether it
// is to be returned, and removes it when expired.
func (s *Map[K, N, UK, UV]) check(e *mapEntry[UK, UV], k nsKey[K, N], idx int, uk UK, read bool) (elem[UV], bool) {
	it, ok := e.m[uk]
	if !ok || !s.ttl.on {
		return it, ok
	}
	now := s.b.now()
	if s.ttl.expired(it.ts, now) {
		old := e.sz
		e.sz -= s.pairBytes(&uk, &it)
		delete(e.m, uk)
		s.store(e, k, idx, old)
		return it, read && s.ttl.returnExpired
	}
	if read && s.ttl.onRead {
		it.ts = now
		e.m[uk] = it
	}
	return it, true
}

// Get returns the value of uk in the current key's map.
func (s *Map[K, N, UK, UV]) Get(uk UK) (UV, bool) {
	if s.b.store != nil {
		it, ok := s.dget(uk)
		return it.v, ok
	}
	e, k, idx := s.curTTL()
	if e == nil {
		var zero UV
		return zero, false
	}
	it, ok := s.check(e, k, idx, uk, true)
	return it.v, ok
}

// Contains reports whether uk has a value in the current key's map.
func (s *Map[K, N, UK, UV]) Contains(uk UK) bool {
	if s.b.store != nil {
		_, ok := s.dget(uk)
		return ok
	}
	e, k, idx := s.curTTL()
	if e == nil {
		return false
	}
	_, ok := s.check(e, k, idx, uk, true)
	return ok
}

// Put sets the value of uk in the current key's map.
func (s *Map[K, N, UK, UV]) Put(uk UK, uv UV) {
	if s.b.store != nil {
		s.dput(uk, uv)
		return
	}
	e, k, idx := s.curW()
	if idx < 0 {
		return
	}
	old := int64(0)
	if e == nil {
		e = &mapEntry[UK, UV]{m: map[UK]elem[UV]{}, sz: s.keyBytes(&k), ver: s.b.cow.ver}
	} else {
		old = e.sz
	}
	if prev, ok := e.m[uk]; ok {
		e.sz -= s.pairBytes(&uk, &prev)
	}
	it := elem[UV]{v: uv, ts: s.ttl.stamp(s.b.clock)}
	e.m[uk] = it
	e.sz += s.pairBytes(&uk, &it)
	s.store(e, k, idx, old)
}

// PutAll sets the values of all of m's keys.
func (s *Map[K, N, UK, UV]) PutAll(m map[UK]UV) {
	for uk, uv := range m {
		s.Put(uk, uv)
	}
}

// Remove removes uk from the current key's map.
func (s *Map[K, N, UK, UV]) Remove(uk UK) {
	if s.b.store != nil {
		if s.ukey(&uk) {
			s.b.storeErr(s.b.store.Delete(s.kbuf))
		}
		return
	}
	e, k, idx := s.curW()
	if e == nil {
		return
	}
	if it, ok := e.m[uk]; ok {
		old := e.sz
		e.sz -= s.pairBytes(&uk, &it)
		delete(e.m, uk)
		s.store(e, k, idx, old)
	}
}

// All iterates over the current key's entries, removing expired ones.
func (s *Map[K, N, UK, UV]) All() iter.Seq2[UK, UV] {
	if s.b.store != nil {
		return s.dall()
	}
	return func(yield func(UK, UV) bool) {
		e, k, idx := s.curTTL()
		if e == nil {
			return
		}
		for uk := range e.m {
			it, ok := s.check(e, k, idx, uk, true)
			if ok && !yield(uk, it.v) {
				return
			}
		}
	}
}

// Keys iterates over the current key's map keys.
func (s *Map[K, N, UK, UV]) Keys() iter.Seq[UK] {
	return func(yield func(UK) bool) {
		for uk := range s.All() {
			if !yield(uk) {
				return
			}
		}
	}
}

// Values iterates over the current key's map values.
func (s *Map[K, N, UK, UV]) Values() iter.Seq[UV] {
	return func(yield func(UV) bool) {
		for _, uv := range s.All() {
			if !yield(uv) {
				return
			}
		}
	}
}

// IsEmpty reports whether the current key's map has no live entries.
func (s *Map[K, N, UK, UV]) IsEmpty() bool {
	for range s.All() {
		return false
	}
	return true
}

// Clear removes the current key's map in the current namespace.
func (s *Map[K, N, UK, UV]) Clear() {
	if s.b.store != nil {
		if s.curKey(s.ns) {
			s.b.storeErr(s.b.store.DeleteRange(s.kbuf, prefixEnd(s.kbuf)))
		}
		return
	}
	e, k, idx := s.cur()
	if e == nil {
		return
	}
	delete(s.t.w(&s.b.cow, idx), k)
	s.b.shrink(e.sz)
}

func (s *Map[K, N, UK, UV]) write(dst []byte, idx int, now int64) ([]byte, int) {
	if s.b.store != nil {
		return s.b.storeSection(dst, s.id, KindMap, s.b.groups.Start+idx, &s.ttl, now)
	}
	return s.writeFrom(dst, s.t.groups[idx], now)
}

// writeFrom is write on a group's map (the live one or a capture's).
func (s *Map[K, N, UK, UV]) writeFrom(dst []byte, m map[nsKey[K, N]]*mapEntry[UK, UV], now int64) ([]byte, int) {
	n := 0
	for k, e := range m {
		live := 0
		for _, it := range e.m {
			if !s.ttl.expired(it.ts, now) {
				live++
			}
		}
		if live == 0 {
			continue
		}
		dst = s.appendKey(dst, &k)
		dst = appendUvarint(dst, uint64(live))
		for uk, it := range e.m {
			if !s.ttl.expired(it.ts, now) {
				dst = appendVarint(dst, it.ts)
				dst = s.ks.codec.Append(dst, &uk)
				dst = s.vs.codec.Append(dst, &it.v)
			}
		}
		n++
	}
	return dst, n
}

func (s *Map[K, N, UK, UV]) read(src []byte, idx, n int) error {
	if s.b.store != nil {
		return s.dread(src, idx, n)
	}
	d := newDec(src)
	m := s.t.w(&s.b.cow, idx)
	for i := 0; i < n && d.Err == nil; i++ {
		var k nsKey[K, N]
		s.readKey(&d, &k, idx)
		cnt := d.Count()
		e, ok := m[k]
		old := int64(0)
		if ok {
			old = e.sz
			if s.b.cow.shared(e.ver) {
				e = &mapEntry[UK, UV]{m: maps.Clone(e.m), sz: e.sz, ver: s.b.cow.ver}
			}
		} else {
			e = &mapEntry[UK, UV]{m: map[UK]elem[UV]{}, sz: s.keyBytes(&k), ver: s.b.cow.ver}
		}
		for j := 0; j < cnt && d.Err == nil; j++ {
			var uk UK
			var it elem[UV]
			it.ts = d.Varint()
			decodeInto(&d, s.ks.codec, &uk)
			decodeValue(&d, &s.vs, &it.v)
			if d.Err != nil {
				break
			}
			if prev, ok := e.m[uk]; ok {
				e.sz -= s.pairBytes(&uk, &prev)
			}
			e.m[uk] = it
			e.sz += s.pairBytes(&uk, &it)
		}
		s.store(e, k, idx, old)
	}
	return d.done(s.what)
}

func (s *Map[K, N, UK, UV]) drop() {
	if s.b.store != nil {
		s.b.storeDrop(s.id)
		return
	}
	for i, m := range s.t.groups {
		for _, e := range m {
			s.b.shrink(e.sz)
		}
		s.t.groups[i] = nil
	}
}
