package state

import "unsafe"

// The batch path of the namespaced single-value states: a window operator
// adds a run of records, each to its key's cell in its window, with the
// checks of the general path made once for the run. It applies on a heap
// backend without TTL and without a live capture, to flat values, for keys
// of the backend's key groups; anything else takes the general path.

// mixed returns the slot codes of the entries of a batch and prefetches
// their slots.
func (s *cells[K, N, V]) mixed(codes, groups []int32, ns []N) []int32 {
	s.mix = s.nsh.mix(s.mix, codes, ns)
	var sum uint8
	start := s.b.groups.Start
	for i, code := range s.mix {
		if t := &s.slots[int(groups[i])-start]; t.n > 0 {
			sl := &t.slots[t.home(code)]
			sum += touch(unsafe.Pointer(sl), unsafe.Sizeof(*sl))
		}
	}
	s.b.sink += sum
	return s.mix
}

// batchable reports whether entries in the key groups given may take the
// batch path.
func (s *cells[K, N, V]) batchable(groups []int32) bool {
	if s.b.store != nil || s.ttl.on || s.b.cow.need != 0 || !s.vs.flat {
		return false
	}
	start, n := int32(s.b.groups.Start), uint32(len(s.slots))
	for _, g := range groups {
		if uint32(g-start) >= n {
			return false
		}
	}
	return true
}

// insertNew inserts and counts a zero cell for key nk (slot code code)
// in table t, which does not hold it. The caller sets its value.
func (s *cells[K, N, V]) insertNew(t *slotTable[nsKey[K, N], V], nk *nsKey[K, N], code int32) *cell[V] {
	c := t.insert(*nk, code)
	c.ts = s.ttl.stamp(s.b.clock)
	c.sz = int32(s.keyBytes(nk))
	s.b.grow(int64(c.sz), s.what)
	return c
}

// AddEach adds vals[i] to the accumulator of key keys[i] (hash code
// codes[i], key group groups[i]) in namespace ns[i], for every i in order,
// as SetCurrentKeyCode, SetNamespace and AddPresent would, and sets fresh[i]
// when the key had no accumulator there before. It prefetches the entries'
// slots before it adds. It leaves the current key
// and namespace as they were. It returns false, having added nothing, when
// the batch path does not apply (a disk store, TTL, a live capture, an
// accumulator holding pointers, a key group not the backend's): the caller
// then adds one at a time.
func (s *Aggregating[K, N, IN, ACC, OUT]) AddEach(keys []K, codes, groups []int32, ns []N, vals []IN, fresh []bool) bool {
	if !s.batchable(groups[:len(vals)]) {
		return false
	}
	start := s.b.groups.Start
	keys, groups, ns, fresh = keys[:len(vals)], groups[:len(vals)], ns[:len(vals)], fresh[:len(vals)]
	codes = s.mixed(codes[:len(vals)], groups, ns)
	for i := range vals {
		nk := nsKey[K, N]{k: keys[i], n: ns[i]}
		code := codes[i]
		t := &s.slots[int(groups[i])-start]
		c := t.find(nk, code)
		if fresh[i] = c == nil; fresh[i] {
			c = s.insertNew(t, &nk, code)
			c.v = s.fn.CreateAccumulator()
		}
		c.v = s.fn.Add(vals[i], c.v)
	}
	s.hit = nil // inserts move cells
	return true
}

// AddEach reduces vals[i] into the value of key keys[i] (hash code
// codes[i], key group groups[i]) in namespace ns[i], for every i in order,
// as Aggregating.AddEach does.
func (s *Reducing[K, N, V]) AddEach(keys []K, codes, groups []int32, ns []N, vals []V, fresh []bool) bool {
	if !s.batchable(groups[:len(vals)]) {
		return false
	}
	start := s.b.groups.Start
	keys, groups, ns, fresh = keys[:len(vals)], groups[:len(vals)], ns[:len(vals)], fresh[:len(vals)]
	codes = s.mixed(codes[:len(vals)], groups, ns)
	for i := range vals {
		nk := nsKey[K, N]{k: keys[i], n: ns[i]}
		code := codes[i]
		t := &s.slots[int(groups[i])-start]
		if c := t.find(nk, code); c != nil {
			c.v, fresh[i] = s.reduce(c.v, vals[i]), false
		} else {
			s.insertNew(t, &nk, code).v, fresh[i] = vals[i], true
		}
	}
	s.hit = nil
	return true
}
