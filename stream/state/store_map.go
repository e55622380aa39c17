package state

import (
	"fmt"
	"iter"
)

// MapState on a disk backend: one store entry per map entry, its key the
// state's prefix, the key and namespace, then the user key (memory.Codec
// forms), its value the user key's length (uvarint, so that a snapshot
// splits the key without decoding it), the TTL timestamp (varint) and the
// user value's memory.Codec form. A key's map is the store's range of its
// prefix, read in key order.

// ukey sets s.kbuf to the store key of uk in the current key's map.
func (s *Map[K, N, UK, UV]) ukey(uk *UK) bool {
	if !s.curKey(s.ns) {
		return false
	}
	s.kbuf = s.ks.codec.Append(s.kbuf, uk)
	return true
}

// dvalue decodes a stored map value; a corrupt one is kept in Err.
func (s *Map[K, N, UK, UV]) dvalue(val []byte) (elem[UV], bool) {
	var it elem[UV]
	d := newDec(val)
	d.Uvarint()
	it.ts = d.Varint()
	decodeInto(&d, s.vs.codec, &it.v)
	if err := d.done(s.what); err != nil {
		s.b.storeErr(err)
		return it, false
	}
	return it, true
}

// dstore writes uv with timestamp ts under s.kbuf, whose last ukLen bytes
// are the user key.
func (s *Map[K, N, UK, UV]) dstore(ukLen int, uv *UV, ts int64) {
	s.vbuf = appendUvarint(s.vbuf[:0], uint64(ukLen))
	s.vbuf = appendVarint(s.vbuf, ts)
	s.vbuf = s.vs.codec.Append(s.vbuf, uv)
	s.b.storeErr(s.b.store.Set(s.kbuf, s.vbuf))
}

// dcheck applies TTL to a stored entry under s.kbuf as check does.
func (s *Map[K, N, UK, UV]) dcheck(it elem[UV], ukLen int) (elem[UV], bool) {
	if !s.ttl.on {
		return it, true
	}
	now := s.b.now()
	if s.ttl.expired(it.ts, now) {
		s.b.storeErr(s.b.store.Delete(s.kbuf))
		return it, s.ttl.returnExpired
	}
	if s.ttl.onRead {
		it.ts = now
		s.dstore(ukLen, &it.v, now)
	}
	return it, true
}

func (s *Map[K, N, UK, UV]) dget(uk UK) (elem[UV], bool) {
	if !s.curKey(s.ns) {
		return elem[UV]{}, false
	}
	n := len(s.kbuf)
	s.kbuf = s.ks.codec.Append(s.kbuf, &uk)
	val, ok := s.b.sget(s.kbuf, &s.vbuf)
	if !ok {
		return elem[UV]{}, false
	}
	it, ok := s.dvalue(val)
	if !ok {
		return it, false
	}
	return s.dcheck(it, len(s.kbuf)-n)
}

func (s *Map[K, N, UK, UV]) dput(uk UK, uv UV) {
	if !s.curKey(s.ns) {
		return
	}
	n := len(s.kbuf)
	s.kbuf = s.ks.codec.Append(s.kbuf, &uk)
	s.dstore(len(s.kbuf)-n, &uv, s.ttl.stamp(s.b.clock))
}

// dall iterates over the current key's map: its entries are read first, so
// that the loop body may change the map.
func (s *Map[K, N, UK, UV]) dall() iter.Seq2[UK, UV] {
	return func(yield func(UK, UV) bool) {
		if !s.curKey(s.ns) {
			return
		}
		type entry struct {
			key []byte
			uk  UK
			it  elem[UV]
		}
		var all []entry
		prefix := append([]byte(nil), s.kbuf...)
		err := s.b.store.Scan(prefix, prefixEnd(prefix), func(key, val []byte) bool {
			var e entry
			d := newDec(key[len(prefix):])
			decodeInto(&d, s.ks.codec, &e.uk)
			if err := d.done(s.what); err != nil {
				s.b.storeErr(err)
				return false
			}
			var ok bool
			if e.it, ok = s.dvalue(val); !ok {
				return false
			}
			e.key = append([]byte(nil), key...)
			all = append(all, e)
			return true
		})
		s.b.storeErr(err)
		for _, e := range all {
			s.kbuf = append(s.kbuf[:0], e.key...)
			it, ok := s.dcheck(e.it, len(e.key)-len(prefix))
			if ok && !yield(e.uk, it.v) {
				return
			}
		}
	}
}

// dread writes n snapshot entries of group index idx into the store.
func (s *Map[K, N, UK, UV]) dread(src []byte, idx, n int) error {
	d := newDec(src)
	g := s.b.groups.Start + idx
	for i := 0; i < n && d.Err == nil; i++ {
		var k nsKey[K, N]
		at := d.B
		s.readKey(&d, &k, idx)
		kns := at[:len(at)-len(d.B)]
		cnt := d.Count()
		for j := 0; j < cnt && d.Err == nil; j++ {
			tsAt := d.B
			d.Varint()
			ts := tsAt[:len(tsAt)-len(d.B)]
			ukAt := d.B
			var uk UK
			decodeInto(&d, s.ks.codec, &uk)
			ukb := ukAt[:len(ukAt)-len(d.B)]
			uvAt := d.B
			var uv UV
			decodeValue(&d, &s.vs, &uv)
			if d.Err != nil {
				break
			}
			s.kbuf = append(append(appendPrefix(s.kbuf[:0], s.id, g), kns...), ukb...)
			s.vbuf = appendUvarint(s.vbuf[:0], uint64(len(ukb)))
			s.vbuf = append(s.vbuf, ts...)
			if s.vs.migrating() { // stored in the state's schema
				s.vbuf = s.vs.codec.Append(s.vbuf, &uv)
			} else {
				s.vbuf = append(s.vbuf, uvAt[:len(uvAt)-len(d.B)]...)
			}
			if err := s.b.store.Set(s.kbuf, s.vbuf); err != nil {
				return fmt.Errorf("state: %s: disk store: %w", s.b.name, err)
			}
		}
	}
	return d.done(s.what)
}
