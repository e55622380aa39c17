package state

import "fmt"

// The single-value states (Value, Reducing, Aggregating) on a disk backend:
// one store entry per key and namespace, the value being the TTL timestamp
// (varint) and the value's memory.Codec form.

// dvalue decodes a stored cell; a corrupt one is kept in Err.
func (s *cells[K, N, V]) dvalue(val []byte) (cell[V], bool) {
	var c cell[V]
	d := newDec(val)
	c.ts = d.Varint()
	decodeInto(&d, s.vs.codec, &c.v)
	if err := d.done(s.what); err != nil {
		s.b.storeErr(err)
		return c, false
	}
	return c, true
}

// dstore writes cell v with timestamp ts under s.kbuf.
func (s *cells[K, N, V]) dstore(v *V, ts int64) {
	s.vbuf = appendVarint(s.vbuf[:0], ts)
	s.vbuf = s.vs.codec.Append(s.vbuf, v)
	s.b.storeErr(s.b.store.Set(s.kbuf, s.vbuf))
}

// dfind reads the current key's cell in ns, leaving its key in s.kbuf.
func (s *cells[K, N, V]) dfind(ns N) (cell[V], bool) {
	if !s.curKey(ns) {
		return cell[V]{}, false
	}
	val, ok := s.b.sget(s.kbuf, &s.vbuf)
	if !ok {
		return cell[V]{}, false
	}
	return s.dvalue(val)
}

func (s *cells[K, N, V]) dget(ns N) (V, bool) {
	var zero V
	c, ok := s.dfind(ns)
	if !ok {
		return zero, false
	}
	if s.ttl.on {
		now := s.b.now()
		if s.ttl.expired(c.ts, now) {
			s.b.storeErr(s.b.store.Delete(s.kbuf))
			if s.ttl.returnExpired {
				return c.v, true
			}
			return zero, false
		}
		if s.ttl.onRead {
			s.dstore(&c.v, now)
		}
	}
	return c.v, true
}

func (s *cells[K, N, V]) dput(ns N, v V) {
	if !s.curKey(ns) {
		return
	}
	s.dstore(&v, s.ttl.stamp(s.b.clock))
}

func (s *cells[K, N, V]) dremove(ns N) (cell[V], bool) {
	c, ok := s.dfind(ns)
	if !ok {
		return c, false
	}
	s.b.storeErr(s.b.store.Delete(s.kbuf))
	return c, true
}

func (s *cells[K, N, V]) dlive(ns N) (cell[V], bool) {
	c, ok := s.dfind(ns)
	if !ok {
		return c, false
	}
	if s.ttl.on && s.ttl.expired(c.ts, s.b.now()) {
		s.b.storeErr(s.b.store.Delete(s.kbuf))
		return cell[V]{}, false
	}
	return c, true
}

// dread writes n snapshot entries of group index idx into the store: the
// entry's key and namespace bytes follow the prefix, its timestamp and value
// are the stored value.
func (s *cells[K, N, V]) dread(src []byte, idx, n int) error {
	d := newDec(src)
	g := s.b.groups.Start + idx
	for i := 0; i < n && d.Err == nil; i++ {
		var k nsKey[K, N]
		at := d.B
		s.readKey(&d, &k, idx)
		kns := at[:len(at)-len(d.B)]
		at = d.B
		ts := d.Varint()
		var v V
		decodeValue(&d, &s.vs, &v)
		if d.Err != nil {
			break
		}
		val := at[:len(at)-len(d.B)]
		if s.vs.migrating() { // values of an older schema are stored in the state's
			s.vbuf = s.vs.codec.Append(appendVarint(s.vbuf[:0], ts), &v)
			val = s.vbuf
		}
		s.kbuf = append(appendPrefix(s.kbuf[:0], s.id, g), kns...)
		if err := s.b.store.Set(s.kbuf, val); err != nil {
			return fmt.Errorf("state: %s: disk store: %w", s.b.name, err)
		}
	}
	return d.done(s.what)
}
