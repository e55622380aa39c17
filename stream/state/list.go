package state

import "unsafe"

// elem is a list element or map value with its TTL timestamp.
type elem[V any] struct {
	v  V
	ts int64
}

// listEntry is one key's list and its estimated bytes.
type listEntry[V any] struct {
	items []elem[V]
	sz    int64
}

// ListState is Flink's ListState: a list of values per key.
type ListState[V any] interface {
	// Get returns a copy of the current key's list, nil when it is empty.
	Get() []V
	// Add appends v to the current key's list.
	Add(v V)
	// AddAll appends vs.
	AddAll(vs []V)
	// Update replaces the list by vs (an empty vs clears it).
	Update(vs []V)
	// Clear removes the current key's list.
	Clear()
}

// ListDescriptor names a ListState.
type ListDescriptor[V any] struct {
	Name string
	TTL  TTLConfig
}

// List is a ListState in namespaces N. TTL applies per element.
type List[K, N comparable, V any] struct {
	base[K, N]
	t  table[K, N, listEntry[V]]
	vs sizer[V]
}

// NewList returns the backend's list state of that name, registering it on
// first use.
func NewList[K, N comparable, V any](b *Backend[K], d ListDescriptor[V]) (*List[K, N, V], error) {
	if s, ok, err := lookup[*List[K, N, V]](b, d.Name); ok || err != nil {
		return s, err
	}
	bs, err := newBase[K, N](b, d.Name, KindList, d.TTL, int64(unsafe.Sizeof(listEntry[V]{})))
	if err != nil {
		return nil, err
	}
	s := &List[K, N, V]{base: bs, t: newTable[K, N, listEntry[V]](b.groups.Len())}
	if s.vs, err = newSizer[V]("element of " + s.what); err != nil {
		return nil, err
	}
	return s, b.register(s, false)
}

// GetListState returns the list state of that name in the Void namespace.
func GetListState[K comparable, V any](b *Backend[K], d ListDescriptor[V]) (ListState[V], error) {
	s, err := NewList[K, Void, V](b, d)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (s *List[K, N, V]) kind() Kind { return KindList }

// KeysIn returns the keys that have an entry in namespace ns (expired or not),
// as Flink's getKeys; the caller may set each as the current key and change
// the state.
func (s *List[K, N, V]) KeysIn(ns N) []K {
	if s.b.store != nil {
		return s.storeKeysIn(ns)
	}
	return keysIn(&s.t, ns)
}

func (s *List[K, N, V]) elemBytes(e *elem[V]) int64 {
	return int64(unsafe.Sizeof(*e)) + s.vs.extra(&e.v, &s.b.scratch)
}

// entry returns the current key's list in namespace ns with its expired
// elements removed (all of them returned when visible), and the table key.
func (s *List[K, N, V]) entry(ns N, read bool) (listEntry[V], nsKey[K, N], int, []elem[V]) {
	k, idx := nsKey[K, N]{k: s.b.key, n: ns}, s.b.at()
	if idx < 0 || s.t.groups[idx] == nil {
		return listEntry[V]{}, k, idx, nil
	}
	m := s.t.groups[idx]
	e := m[k]
	if !s.ttl.on || len(e.items) == 0 {
		return e, k, idx, e.items
	}
	now := s.b.now()
	seen := e.items
	kept := e.items[:0:0]
	drop := int64(0)
	for _, it := range e.items {
		if s.ttl.expired(it.ts, now) {
			drop += s.elemBytes(&it)
			continue
		}
		if read && s.ttl.onRead {
			it.ts = now
		}
		kept = append(kept, it)
	}
	if !s.ttl.returnExpired || !read {
		seen = kept
	}
	if drop > 0 || (read && s.ttl.onRead) {
		m = s.t.w(&s.b.cow, idx)
		s.set(m, k, listEntry[V]{items: kept, sz: e.sz - drop}, e.sz)
		e = m[k]
	}
	return e, k, idx, seen
}

// set stores e under k (or removes k when e is empty), accounting from old bytes.
func (s *List[K, N, V]) set(m map[nsKey[K, N]]listEntry[V], k nsKey[K, N], e listEntry[V], old int64) {
	if len(e.items) == 0 {
		delete(m, k)
		s.b.shrink(old)
		return
	}
	m[k] = e
	s.b.resize(old, e.sz, s.what)
}

// Get returns a copy of the current key's list in the current namespace.
func (s *List[K, N, V]) Get() []V {
	if s.b.store != nil {
		return s.dget()
	}
	_, _, _, items := s.entry(s.ns, true)
	if len(items) == 0 {
		return nil
	}
	out := make([]V, len(items))
	for i := range items {
		out[i] = items[i].v
	}
	return out
}

// Add appends v to the current key's list in the current namespace.
func (s *List[K, N, V]) Add(v V) { s.addAll(s.ns, []V{v}) }

// AddAll appends vs to the current key's list in the current namespace.
func (s *List[K, N, V]) AddAll(vs []V) { s.addAll(s.ns, vs) }

func (s *List[K, N, V]) addAll(ns N, vs []V) {
	if len(vs) == 0 {
		return
	}
	if s.b.store != nil {
		s.dadd(ns, vs)
		return
	}
	e, k, idx, _ := s.entry(ns, false)
	if idx < 0 {
		return
	}
	old := e.sz
	if len(e.items) == 0 {
		e.sz = s.keyBytes(&k)
		old = 0
		if cur, ok := s.t.groups[idx][k]; ok { // only expired elements remained
			old = cur.sz
		}
	}
	ts := s.ttl.stamp(s.b.clock)
	for _, v := range vs {
		it := elem[V]{v: v, ts: ts}
		e.items = append(e.items, it)
		e.sz += s.elemBytes(&it)
	}
	s.set(s.t.w(&s.b.cow, idx), k, e, old)
}

// Update replaces the current key's list in the current namespace by vs.
func (s *List[K, N, V]) Update(vs []V) {
	s.Clear()
	s.addAll(s.ns, vs)
}

// Clear removes the current key's list in the current namespace.
func (s *List[K, N, V]) Clear() { s.clear(s.ns) }

func (s *List[K, N, V]) clear(ns N) {
	if s.b.store != nil {
		if s.curKey(ns) {
			s.b.storeErr(s.b.store.Delete(s.kbuf))
		}
		return
	}
	k, idx := nsKey[K, N]{k: s.b.key, n: ns}, s.b.at()
	if idx < 0 || s.t.groups[idx] == nil {
		return
	}
	if e, ok := s.t.groups[idx][k]; ok {
		delete(s.t.w(&s.b.cow, idx), k)
		s.b.shrink(e.sz)
	}
}

// MergeNamespaces appends the current key's lists in the sources, in order,
// to the list in target and removes the sources (Flink's mergeNamespaces).
// Elements keep their TTL timestamps; expired ones take no part.
func (s *List[K, N, V]) MergeNamespaces(target N, sources []N) {
	if s.b.store != nil {
		s.dmerge(target, sources)
		return
	}
	e, k, idx, _ := s.entry(target, false)
	if idx < 0 {
		return
	}
	old := e.sz
	if len(e.items) == 0 {
		e.sz, old = s.keyBytes(&k), 0
	}
	moved := false
	for _, ns := range sources {
		if ns == target {
			continue
		}
		src, _, _, _ := s.entry(ns, false)
		if len(src.items) == 0 {
			continue
		}
		for i := range src.items {
			e.items = append(e.items, src.items[i])
			e.sz += s.elemBytes(&src.items[i])
		}
		s.clear(ns)
		moved = true
	}
	if moved {
		s.set(s.t.w(&s.b.cow, idx), k, e, old)
	}
}

func (s *List[K, N, V]) write(dst []byte, idx int, now int64) ([]byte, int) {
	if s.b.store != nil {
		return s.b.storeSection(dst, s.id, KindList, s.b.groups.Start+idx, &s.ttl, now)
	}
	return s.writeFrom(dst, s.t.groups[idx], now)
}

// writeFrom is write on a group's map (the live one or a capture's). A
// list's elements are only appended to in place, beyond the lengths a
// capture holds, so a capture needs no copy of them.
func (s *List[K, N, V]) writeFrom(dst []byte, m map[nsKey[K, N]]listEntry[V], now int64) ([]byte, int) {
	n := 0
	for k, e := range m {
		live := 0
		for i := range e.items {
			if !s.ttl.expired(e.items[i].ts, now) {
				live++
			}
		}
		if live == 0 {
			continue
		}
		dst = s.appendKey(dst, &k)
		dst = appendUvarint(dst, uint64(live))
		for i := range e.items {
			if !s.ttl.expired(e.items[i].ts, now) {
				dst = appendVarint(dst, e.items[i].ts)
				dst = s.vs.codec.Append(dst, &e.items[i].v)
			}
		}
		n++
	}
	return dst, n
}

func (s *List[K, N, V]) read(src []byte, idx, n int) error {
	if s.b.store != nil {
		return s.dread(src, idx, n)
	}
	d := newDec(src)
	m := s.t.w(&s.b.cow, idx)
	for i := 0; i < n && d.Err == nil; i++ {
		var k nsKey[K, N]
		s.readKey(&d, &k, idx)
		cnt := d.Count()
		e := m[k]
		old := e.sz
		if len(e.items) == 0 {
			e.sz = s.keyBytes(&k)
		}
		for j := 0; j < cnt && d.Err == nil; j++ {
			var it elem[V]
			it.ts = d.Varint()
			decodeValue(&d, &s.vs, &it.v)
			e.items = append(e.items, it)
			e.sz += s.elemBytes(&it)
		}
		if d.Err == nil {
			s.set(m, k, e, old)
		}
	}
	return d.done(s.what)
}

func (s *List[K, N, V]) drop() {
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
