package state

import (
	"reflect"
	"slices"
	"unsafe"
)

// cell is a stored value with its TTL timestamp and its estimated bytes.
type cell[V any] struct {
	v  V
	ts int64
	sz int64
}

// vcell is a cell held by pointer, with its copy-on-write version (cow).
type vcell[V any] struct {
	cell[V]
	ver uint64
}

// cells is the storage of the single-value kinds (Value, Reducing and
// Aggregating): one cell per (key, namespace). In the Void namespace the
// cells live inline in a slotTable per key group; in other namespaces
// (windows) in a map per key group, by pointer, so that an update writes
// the cell in place. hit is the cell the last access found, valid while the
// backend's current key is the one of epoch hitEpoch and the namespace
// hitNS: a read followed by a write of the same key and namespace looks the
// table up once.
type cells[K, N comparable, V any] struct {
	base[K, N]
	void  bool // N is Void: the entries are in slots
	t     table[K, N, *vcell[V]]
	slots []slotTable[nsKey[K, N], V]
	vs    sizer[V]

	hit      *cell[V]
	hitEpoch uint64
	hitNS    N
}

func newCells[K, N comparable, V any](b *Backend[K], name string, k Kind, cfg TTLConfig) (cells[K, N, V], error) {
	var s cells[K, N, V]
	var err error
	entry := int64(unsafe.Sizeof(vcell[V]{}) + unsafe.Sizeof(uintptr(0))) // the cell and the map's pointer to it
	if s.base, err = newBase[K, N](b, name, k, cfg, entry); err != nil {
		return s, err
	}
	if s.vs, err = newSizer[V]("value of " + s.what); err != nil {
		return s, err
	}
	if s.void = reflect.TypeFor[N]() == reflect.TypeFor[Void](); s.void {
		s.slots = make([]slotTable[nsKey[K, N], V], b.groups.Len())
	} else {
		s.t = newTable[K, N, *vcell[V]](b.groups.Len())
	}
	return s, nil
}

// find returns the current key's cell in namespace ns of group index idx, or
// nil, through the cache of the last cell found.
func (s *cells[K, N, V]) find(ns N, idx int) *cell[V] {
	if s.hit != nil && s.hitEpoch == s.b.epoch && s.hitNS == ns {
		return s.hit
	}
	var c *cell[V]
	if s.void {
		c = s.slots[idx].find(nsKey[K, N]{k: s.b.key, n: ns}, s.b.keyCode())
	} else if m := s.t.groups[idx]; m != nil {
		if vc := m[nsKey[K, N]{k: s.b.key, n: ns}]; vc != nil {
			c = &vc.cell
		}
	}
	if c != nil {
		s.hit, s.hitEpoch, s.hitNS = c, s.b.epoch, ns
	}
	return c
}

// evict deletes the current key's cell c in namespace ns of group index idx.
func (s *cells[K, N, V]) evict(ns N, idx int, c *cell[V]) {
	s.b.shrink(c.sz)
	s.hit = nil
	k := nsKey[K, N]{k: s.b.key, n: ns}
	if s.void {
		s.slots[idx].remove(k, s.b.keyCode())
		return
	}
	delete(s.t.w(&s.b.cow, idx), k)
}

// get returns the current key's value in namespace ns, applying TTL.
func (s *cells[K, N, V]) get(ns N) (V, bool) {
	if s.b.store != nil {
		return s.dget(ns)
	}
	var zero V
	idx := s.b.at()
	if idx < 0 {
		return zero, false
	}
	if s.ttl.on && s.b.cow.need != 0 {
		s.own(ns, idx)
	}
	c := s.find(ns, idx)
	if c == nil {
		return zero, false
	}
	if s.ttl.on {
		now := s.b.now()
		if s.ttl.expired(c.ts, now) {
			v := c.v
			s.evict(ns, idx, c)
			if s.ttl.returnExpired {
				return v, true
			}
			return zero, false
		}
		if s.ttl.onRead {
			c.ts = now
		}
	}
	return c.v, true
}

// put stores v for the current key in namespace ns, in place when the key
// has a cell.
func (s *cells[K, N, V]) put(ns N, v V) {
	if s.b.store != nil {
		s.dput(ns, v)
		return
	}
	idx := s.b.at()
	if idx < 0 {
		return
	}
	if s.b.cow.need != 0 {
		s.own(ns, idx)
	}
	if c := s.find(ns, idx); c != nil {
		old := c.sz
		if !s.vs.flat {
			c.sz = old - s.vs.extra(&c.v, &s.b.scratch) + s.vs.extra(&v, &s.b.scratch)
		}
		c.v, c.ts = v, s.ttl.stamp(s.b.clock)
		if c.sz != old {
			s.b.resize(old, c.sz, s.what)
		}
		return
	}
	k := nsKey[K, N]{k: s.b.key, n: ns}
	var c *cell[V]
	if s.void {
		c = s.slots[idx].insert(k, s.b.keyCode())
	} else {
		vc := &vcell[V]{ver: s.b.cow.ver}
		s.t.w(&s.b.cow, idx)[k] = vc
		c = &vc.cell
	}
	c.v, c.ts = v, s.ttl.stamp(s.b.clock)
	c.sz = s.keyBytes(&k) + s.vs.extra(&v, &s.b.scratch)
	s.hit, s.hitEpoch, s.hitNS = c, s.b.epoch, ns
	s.b.grow(c.sz, s.what)
}

// remove deletes the current key's entry in namespace ns and returns it.
func (s *cells[K, N, V]) remove(ns N) (cell[V], bool) {
	if s.b.store != nil {
		return s.dremove(ns)
	}
	idx := s.b.at()
	if idx < 0 {
		return cell[V]{}, false
	}
	if s.b.cow.need != 0 {
		s.own(ns, idx)
	}
	c := s.find(ns, idx)
	if c == nil {
		return cell[V]{}, false
	}
	out := *c
	s.evict(ns, idx, c)
	return out, true
}

// live removes the entry of ns when expired and reports whether one is left.
func (s *cells[K, N, V]) live(ns N) (cell[V], bool) {
	if s.b.store != nil {
		return s.dlive(ns)
	}
	idx := s.b.at()
	if idx < 0 {
		return cell[V]{}, false
	}
	if s.ttl.on && s.b.cow.need != 0 {
		s.own(ns, idx)
	}
	c := s.find(ns, idx)
	if c == nil {
		return cell[V]{}, false
	}
	if s.ttl.on && s.ttl.expired(c.ts, s.b.now()) {
		s.evict(ns, idx, c)
		return cell[V]{}, false
	}
	return *c, true
}

func (s *cells[K, N, V]) slotted() bool { return s.void && s.b.store == nil }

func (s *cells[K, N, V]) prefetch(codes, groups []int32, start int) uint8 {
	var sum uint8
	groups = groups[:len(codes)]
	for i, code := range codes {
		idx := uint(int(groups[i]) - start)
		if idx >= uint(len(s.slots)) {
			continue
		}
		if t := &s.slots[idx]; t.n > 0 {
			sum += uint8(t.slots[t.home(code)].code)
		}
	}
	return sum
}

// each calls f with every entry of group index idx.
func (s *cells[K, N, V]) each(idx int, f func(k *nsKey[K, N], c *cell[V])) {
	eachCell(s.void, s.slots, s.t.groups, idx, f)
}

// eachCell calls f with every entry of group index idx of the slots (void)
// or the maps.
func eachCell[K, N comparable, V any](void bool, slots []slotTable[nsKey[K, N], V], groups []map[nsKey[K, N]]*vcell[V], idx int, f func(k *nsKey[K, N], c *cell[V])) {
	if void {
		st := &slots[idx]
		for i := range st.slots {
			if st.slots[i].used {
				f(&st.slots[i].k, &st.slots[i].c)
			}
		}
		return
	}
	for k, c := range groups[idx] {
		f(&k, &c.cell)
	}
}

func (s *cells[K, N, V]) write(dst []byte, idx int, now int64) ([]byte, int) {
	if s.b.store != nil {
		return s.b.storeSection(dst, s.id, KindValue, s.b.groups.Start+idx, &s.ttl, now)
	}
	return s.writeFrom(dst, s.slots, s.t.groups, idx, now)
}

// writeFrom is write on the given containers (the live ones or a capture's).
func (s *cells[K, N, V]) writeFrom(dst []byte, slots []slotTable[nsKey[K, N], V], groups []map[nsKey[K, N]]*vcell[V], idx int, now int64) ([]byte, int) {
	n := 0
	eachCell(s.void, slots, groups, idx, func(k *nsKey[K, N], c *cell[V]) {
		if s.ttl.expired(c.ts, now) {
			return
		}
		dst = s.appendKey(dst, k)
		dst = appendVarint(dst, c.ts)
		dst = s.vs.codec.Append(dst, &c.v)
		n++
	})
	return dst, n
}

func (s *cells[K, N, V]) read(src []byte, idx, n int) error {
	if s.b.store != nil {
		return s.dread(src, idx, n)
	}
	d := dec{b: src}
	s.hit = nil
	for i := 0; i < n && d.err == nil; i++ {
		var k nsKey[K, N]
		var c cell[V]
		s.readKey(&d, &k, idx)
		c.ts = d.varint()
		decodeValue(&d, &s.vs, &c.v)
		if d.err != nil {
			break
		}
		c.sz = s.keyBytes(&k) + s.vs.extra(&c.v, &s.b.scratch)
		if s.void {
			code := s.b.hash(k.k)
			if t := &s.slots[idx]; s.b.cow.shared(t.ver) {
				t.slots, t.ver = slices.Clone(t.slots), s.b.cow.ver
			}
			p := s.slots[idx].find(k, code)
			if p != nil {
				s.b.shrink(p.sz)
			} else {
				p = s.slots[idx].insert(k, code)
			}
			*p = c
		} else {
			m := s.t.w(&s.b.cow, idx)
			if old, ok := m[k]; ok {
				s.b.shrink(old.sz)
			}
			m[k] = &vcell[V]{cell: c, ver: s.b.cow.ver}
		}
		s.b.grow(c.sz, s.what)
	}
	return d.done(s.what)
}

func (s *cells[K, N, V]) drop() {
	if s.b.store != nil {
		s.b.storeDrop(s.id)
		return
	}
	s.hit = nil
	for i := range s.slots {
		s.each(i, func(_ *nsKey[K, N], c *cell[V]) { s.b.shrink(c.sz) })
		s.slots[i] = slotTable[nsKey[K, N], V]{}
	}
	for i, m := range s.t.groups {
		for _, c := range m {
			s.b.shrink(c.sz)
		}
		s.t.groups[i] = nil
	}
}

// keysIn returns the keys with an entry in namespace ns, in key-group order.
func (s *cells[K, N, V]) keysIn(ns N) []K {
	if s.b.store != nil {
		return s.storeKeysIn(ns)
	}
	if !s.void {
		return keysIn(&s.t, ns)
	}
	var out []K
	for i := range s.slots {
		s.each(i, func(k *nsKey[K, N], _ *cell[V]) { out = append(out, k.k) })
	}
	return out
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
func (s *Value[K, N, V]) KeysIn(ns N) []K { return s.keysIn(ns) }

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
