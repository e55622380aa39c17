package state

import (
	"reflect"
	"slices"
	"unsafe"
)

// cell is a stored value with its TTL timestamp, its estimated bytes (an
// entry's estimate fits in 31 bits) and, in a slot table, its slot's code.
type cell[V any] struct {
	v    V
	ts   int64
	sz   int32
	code int32 // slotTable's: set by its insert, kept by the cell's owner
}

// cells is the storage of the single-value kinds (Value, Reducing and
// Aggregating): one cell per (key, namespace), inline in a slotTable per key
// group, so that an update writes the cell in place and finding it reads one
// slot. An entry's code is the key's hash code mixed with the namespace's
// hash (nsHasher); in the Void namespace it is the key's. hit is the cell
// the last access found, valid while the backend's current key is the one
// of epoch hitEpoch and the namespace hitNS: a read followed by a write of
// the same key and namespace looks the table up once.
type cells[K, N comparable, V any] struct {
	base[K, N]
	void  bool // N is Void
	slots []slotTable[nsKey[K, N], V]
	nsh   nsHasher[N]
	mix   []int32 // the batch path's slot codes (value_batch.go)
	vs    sizer[V]

	hit      *cell[V]
	hitEpoch uint64
	hitNS    N
	// quickOK: the state takes the quick path (value_quick.go)
	quickOK bool
}

func newCells[K, N comparable, V any](b *Backend[K], name string, k Kind, cfg TTLConfig) (cells[K, N, V], error) {
	var s cells[K, N, V]
	var err error
	entry := int64(unsafe.Sizeof(cell[V]{}) + 16) // the cell, its slot's code and flag, the table's spare slots
	if s.base, err = newBase[K, N](b, name, k, cfg, entry); err != nil {
		return s, err
	}
	if s.vs, err = newSizer[V]("value of " + s.what); err != nil {
		return s, err
	}
	s.void = reflect.TypeFor[N]() == reflect.TypeFor[Void]()
	s.nsh = newNSHasher[N]()
	s.slots = make([]slotTable[nsKey[K, N], V], b.groups.Len())
	s.quickOK = s.quickable()
	return s, nil
}

// code returns the slot code of key code kc in namespace ns.
func (s *cells[K, N, V]) code(kc int32, ns *N) int32 { return kc ^ s.nsh.hash(ns) }

// find returns the current key's cell in namespace ns of group index idx, or
// nil, through the cache of the last cell found.
func (s *cells[K, N, V]) find(ns N, idx int) *cell[V] {
	if s.hit != nil && s.hitEpoch == s.b.epoch && s.hitNS == ns {
		return s.hit
	}
	c := s.slots[idx].find(nsKey[K, N]{k: s.b.key, n: ns}, s.code(s.b.keyCode(), &ns))
	if c != nil {
		s.hit, s.hitEpoch, s.hitNS = c, s.b.epoch, ns
	}
	return c
}

// evict deletes the current key's cell c in namespace ns of group index idx.
func (s *cells[K, N, V]) evict(ns N, idx int, c *cell[V]) {
	s.b.shrink(int64(c.sz))
	s.hit = nil
	s.slots[idx].remove(nsKey[K, N]{k: s.b.key, n: ns}, s.code(s.b.keyCode(), &ns))
}

// inPlace returns the current key's cell in namespace ns when an update may
// write its value in place and nothing else: a heap backend without TTL and
// without a live capture, a value without pointers (its byte estimate does
// not change), the cell present. Otherwise it returns nil.
func (s *cells[K, N, V]) inPlace(ns N) *cell[V] {
	if s.b.store != nil || s.ttl.on || s.b.cow.need != 0 || !s.vs.flat {
		return nil
	}
	idx := s.b.at()
	if idx < 0 {
		return nil
	}
	return s.find(ns, idx)
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
		s.own(idx)
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
		s.own(idx)
	}
	if c := s.find(ns, idx); c != nil {
		if !s.vs.flat {
			s.resize(c, &v)
		}
		c.v, c.ts = v, s.ttl.stamp(s.b.clock)
		return
	}
	k := nsKey[K, N]{k: s.b.key, n: ns}
	c := s.slots[idx].insert(k, s.code(s.b.keyCode(), &ns))
	c.v, c.ts = v, s.ttl.stamp(s.b.clock)
	c.sz = int32(s.keyBytes(&k) + s.vs.extra(&v, &s.b.scratch))
	s.hit, s.hitEpoch, s.hitNS = c, s.b.epoch, ns
	s.b.grow(int64(c.sz), s.what)
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
		s.own(idx)
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
		s.own(idx)
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
			sum += uint8(t.slots[t.home(code)].c.code)
		}
	}
	return sum
}

// Prefetch reads where the entries of keys with the given hash codes, in
// the given key groups, start in the namespaces ns (one each), without
// changing anything: Backend.Prefetch for a namespaced state. An operator
// that calls it for a run of records before processing them lets the
// memory loads of their entries overlap.
func (s *cells[K, N, V]) Prefetch(codes, groups []int32, ns []N) {
	if s.b.store != nil {
		return
	}
	var sum uint8
	start := s.b.groups.Start
	codes, groups = codes[:len(ns)], groups[:len(ns)]
	for i := range ns {
		idx := uint(int(groups[i]) - start)
		if idx >= uint(len(s.slots)) {
			continue
		}
		if t := &s.slots[idx]; t.n > 0 {
			// the slot's first and last bytes: both lines when it
			// straddles two
			sl := &t.slots[t.home(s.code(codes[i], &ns[i]))]
			sum += touch(unsafe.Pointer(sl), unsafe.Sizeof(*sl))
		}
	}
	s.b.sink += sum
}

// each calls f with every entry of group index idx.
func (s *cells[K, N, V]) each(idx int, f func(k *nsKey[K, N], c *cell[V])) {
	eachCell(&s.slots[idx], f)
}

// eachCell calls f with every entry of a slot table.
func eachCell[K, N comparable, V any](st *slotTable[nsKey[K, N], V], f func(k *nsKey[K, N], c *cell[V])) {
	for i := range st.slots {
		if st.slots[i].used() {
			f(&st.slots[i].k, &st.slots[i].c)
		}
	}
}

func (s *cells[K, N, V]) write(dst []byte, idx int, now int64) ([]byte, int) {
	if s.b.store != nil {
		return s.b.storeSection(dst, s.id, KindValue, s.b.groups.Start+idx, &s.ttl, now)
	}
	return s.writeFrom(dst, &s.slots[idx], now)
}

// writeFrom is write on a group's slot table (the live one or a capture's).
func (s *cells[K, N, V]) writeFrom(dst []byte, st *slotTable[nsKey[K, N], V], now int64) ([]byte, int) {
	n := 0
	eachCell(st, func(k *nsKey[K, N], c *cell[V]) {
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
	d := newDec(src)
	s.hit = nil
	for i := 0; i < n && d.Err == nil; i++ {
		var k nsKey[K, N]
		var c cell[V]
		s.readKey(&d, &k, idx)
		c.ts = d.Varint()
		decodeValue(&d, &s.vs, &c.v)
		if d.Err != nil {
			break
		}
		c.sz = int32(s.keyBytes(&k) + s.vs.extra(&c.v, &s.b.scratch))
		code := s.code(s.b.hash(k.k), &k.n)
		t := &s.slots[idx]
		if s.b.cow.shared(t.ver) {
			t.slots, t.ver = slices.Clone(t.slots), s.b.cow.ver
		}
		p := t.find(k, code)
		if p != nil {
			s.b.shrink(int64(p.sz))
		} else {
			p = t.insert(k, code)
		}
		c.code = p.code
		*p = c
		s.b.grow(int64(c.sz), s.what)
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
		s.each(i, func(_ *nsKey[K, N], c *cell[V]) { s.b.shrink(int64(c.sz)) })
		s.slots[i] = slotTable[nsKey[K, N], V]{}
	}
}

// keysIn returns the keys with an entry in namespace ns, in key-group order.
func (s *cells[K, N, V]) keysIn(ns N) []K {
	if s.b.store != nil {
		return s.storeKeysIn(ns)
	}
	var out []K
	for i := range s.slots {
		s.each(i, func(k *nsKey[K, N], _ *cell[V]) {
			if k.n == ns {
				out = append(out, k.k)
			}
		})
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
func (s *Value[K, N, V]) Value() (V, bool) {
	if s.quickOK {
		if c := s.quick(); c != nil {
			return c.v, true
		}
	}
	return s.get(s.ns)
}

// Update sets the current key's value in the current namespace.
func (s *Value[K, N, V]) Update(v V) {
	if s.quickOK && s.b.cow.need == 0 {
		if c := s.quick(); c != nil {
			if !s.vs.flat {
				s.resize(c, &v)
			}
			c.v = v
			return
		}
	}
	s.put(s.ns, v)
}

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
