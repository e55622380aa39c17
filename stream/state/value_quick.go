package state

// The quick path of a single-value state in the Void namespace on a heap
// backend without TTL: the keyed operators' per-record read and write. It
// reads the current key's cell through the cache of the last cell found or
// one probe of the key group's slots, and writes a flat value in place,
// with none of the checks the general path makes for a disk store, TTL, a
// namespace or a pending capture. Anything else (no current key, a key
// without a cell, a capture to copy from) takes the general path.

// quickable reports whether s may take the quick path at all.
func (s *cells[K, N, V]) quickable() bool {
	return s.void && s.b.store == nil && !s.ttl.on
}

// quick returns the current key's cell, or nil when the general path must
// answer: no current key, or no cell for it.
func (s *cells[K, N, V]) quick() *cell[V] {
	b := s.b
	if s.hitEpoch == b.epoch && s.hit != nil {
		return s.hit
	}
	if b.idx < 0 {
		return nil
	}
	c := s.slots[b.idx].find(nsKey[K, N]{k: b.key}, b.keyCode())
	if c != nil {
		s.hit, s.hitEpoch = c, b.epoch
	}
	return c
}

// Ref returns a pointer to the current key's value for a change in place,
// or nil when the value must be read with Value and written with Update:
// the key has no value, the state has TTL, a namespace or a disk store, the
// value holds pointers, or a snapshot's capture still shares the value. The
// pointer is valid until the next state access. The keyed operators'
// rolling aggregations use it.
func (s *Value[K, N, V]) Ref() *V {
	if !s.quickOK || !s.vs.flat || s.b.cow.need != 0 {
		return nil
	}
	if c := s.quick(); c != nil {
		return &c.v
	}
	return nil
}

// resize counts the change of c's estimated bytes when its value, which
// holds pointers, becomes v.
func (s *cells[K, N, V]) resize(c *cell[V], v *V) {
	old := int64(c.sz)
	sz := old - s.vs.extra(&c.v, &s.b.scratch) + s.vs.extra(v, &s.b.scratch)
	c.sz = int32(sz)
	if sz != old {
		s.b.resize(old, sz, s.what)
	}
}
