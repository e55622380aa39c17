package state

import "fmt"

// ListState on a disk backend: one store entry per key and namespace whose
// value is the list's elements, each a uvarint length, then the TTL
// timestamp (varint) and the element's memory.Codec form. Adding elements
// merges them onto the value (Pebble's concatenating merge operator, as
// Flink's RocksDB backend merges list elements), so an Add does not read
// the list; reads and TTL clean-up rewrite it.

// appendElem appends one stored list element.
func (s *List[K, N, V]) appendElem(dst, tmp []byte, v *V, ts int64) ([]byte, []byte) {
	tmp = appendVarint(tmp[:0], ts)
	tmp = s.vs.codec.Append(tmp, v)
	dst = appendUvarint(dst, uint64(len(tmp)))
	return append(dst, tmp...), tmp
}

// delems decodes the stored elements of val; a corrupt value is kept in Err.
func (s *List[K, N, V]) delems(val []byte) ([]elem[V], bool) {
	var out []elem[V]
	d := newDec(val)
	for len(d.B) > 0 && d.Err == nil {
		ed := newDec(d.Bytes(d.Uvarint()))
		var it elem[V]
		it.ts = ed.Varint()
		decodeInto(&ed, s.vs.codec, &it.v)
		if err := ed.done(s.what); err != nil {
			s.b.storeErr(err)
			return nil, false
		}
		out = append(out, it)
	}
	if err := d.done(s.what); err != nil {
		s.b.storeErr(err)
		return nil, false
	}
	return out, true
}

// dentry reads the current key's elements in ns, leaving the key in
// s.kbuf, and with TTL removes the expired ones from the store: it returns
// the elements kept, and those a read sees.
func (s *List[K, N, V]) dentry(ns N, read bool) (kept, seen []elem[V]) {
	if !s.curKey(ns) {
		return nil, nil
	}
	val, ok := s.b.sget(s.kbuf, &s.vbuf)
	if !ok {
		return nil, nil
	}
	items, ok := s.delems(val)
	if !ok || !s.ttl.on {
		return items, items
	}
	now := s.b.now()
	kept = items[:0:0]
	for _, it := range items {
		if s.ttl.expired(it.ts, now) {
			continue
		}
		if read && s.ttl.onRead {
			it.ts = now
		}
		kept = append(kept, it)
	}
	seen = kept
	if s.ttl.returnExpired && read {
		seen = items
	}
	if len(kept) != len(items) || (read && s.ttl.onRead) {
		s.dset(kept)
	}
	return kept, seen
}

// dset stores items under s.kbuf, deleting the key when there are none.
func (s *List[K, N, V]) dset(items []elem[V]) {
	if len(items) == 0 {
		s.b.storeErr(s.b.store.Delete(s.kbuf))
		return
	}
	var val, tmp []byte
	for i := range items {
		val, tmp = s.appendElem(val, tmp, &items[i].v, items[i].ts)
	}
	s.b.storeErr(s.b.store.Set(s.kbuf, val))
}

func (s *List[K, N, V]) dget() []V {
	_, items := s.dentry(s.ns, true)
	if len(items) == 0 {
		return nil
	}
	out := make([]V, len(items))
	for i := range items {
		out[i] = items[i].v
	}
	return out
}

func (s *List[K, N, V]) dadd(ns N, vs []V) {
	if !s.curKey(ns) {
		return
	}
	ts := s.ttl.stamp(s.b.clock)
	val := s.vbuf[:0]
	var tmp []byte
	for i := range vs {
		val, tmp = s.appendElem(val, tmp, &vs[i], ts)
	}
	s.vbuf = val
	s.b.storeErr(s.b.store.Merge(s.kbuf, val))
}

func (s *List[K, N, V]) dmerge(target N, sources []N) {
	var moved []elem[V]
	for _, ns := range sources {
		if ns == target {
			continue
		}
		items, _ := s.dentry(ns, false)
		if len(items) == 0 {
			continue
		}
		moved = append(moved, items...)
		s.b.storeErr(s.b.store.Delete(s.kbuf))
	}
	if len(moved) == 0 {
		return
	}
	s.dentry(target, false) // drops the target's expired elements
	var val, tmp []byte
	for i := range moved {
		val, tmp = s.appendElem(val, tmp, &moved[i].v, moved[i].ts)
	}
	s.b.storeErr(s.b.store.Merge(s.kbuf, val))
}

// dread merges n snapshot entries of group index idx into the store.
func (s *List[K, N, V]) dread(src []byte, idx, n int) error {
	d := newDec(src)
	g := s.b.groups.Start + idx
	var val []byte
	for i := 0; i < n && d.Err == nil; i++ {
		var k nsKey[K, N]
		at := d.B
		s.readKey(&d, &k, idx)
		s.kbuf = append(appendPrefix(s.kbuf[:0], s.id, g), at[:len(at)-len(d.B)]...)
		cnt := d.Count()
		val = val[:0]
		for j := 0; j < cnt && d.Err == nil; j++ {
			e := d.B
			ts := d.Varint()
			var v V
			decodeValue(&d, &s.vs, &v)
			e = e[:len(e)-len(d.B)]
			if s.vs.migrating() && d.Err == nil { // stored in the state's schema
				s.vbuf = s.vs.codec.Append(appendVarint(s.vbuf[:0], ts), &v)
				e = s.vbuf
			}
			val = appendUvarint(val, uint64(len(e)))
			val = append(val, e...)
		}
		if d.Err != nil {
			break
		}
		if err := s.b.store.Merge(s.kbuf, val); err != nil {
			return fmt.Errorf("state: %s: disk store: %w", s.b.name, err)
		}
	}
	return d.done(s.what)
}
