package state

import (
	"fmt"
	"io"
)

// Store is the ordered key-value store of a disk backend (Options.Store):
// the state of every keyed state lives there, serialized, in the layout the
// package doc describes. stream/state/disk implements it on Pebble. A Store
// is used by the backend's goroutine only; the backend closes it on Dispose.
type Store interface {
	// Get appends the value of key to dst and reports whether key is there.
	Get(dst, key []byte) ([]byte, bool, error)
	// Set stores value under key.
	Set(key, value []byte) error
	// Merge appends value to the value under key (a missing key holds
	// nothing): a list element is added without reading the list.
	Merge(key, value []byte) error
	// Delete removes key.
	Delete(key []byte) error
	// DeleteRange removes every key within [start, end).
	DeleteRange(start, end []byte) error
	// Scan calls f with every key within [start, end) and its value, in key
	// order, until f returns false. The slices are valid during the call
	// only. Writes made while scanning are not seen by the scan.
	Scan(start, end []byte, f func(key, value []byte) bool) error
	// Checkpoint writes the store's files for an incremental snapshot: the
	// immutable data files go to shared (once: a file written for an
	// earlier checkpoint is named again, not written again), the rest
	// inline. The store must hold everything written before the call.
	Checkpoint(shared SharedFiles) ([]StoreFile, error)
	// Restore replaces the store's content by the store files of an
	// incremental snapshot, reading shared files from shared.
	Restore(files []StoreFile, shared SharedFiles) error
	// Open opens the store files of an incremental snapshot read-only, in
	// a place of its own, for a restore that takes part of their keys.
	Open(files []StoreFile, shared SharedFiles) (StoreReader, error)
	// Close releases the store and removes its files.
	Close() error
}

// StoreReader reads a store an incremental snapshot held.
type StoreReader interface {
	// Scan is Store.Scan.
	Scan(start, end []byte, f func(key, value []byte) bool) error
	// Close releases the reader and removes its files.
	Close() error
}

// StoreFile is one file of a store in an incremental snapshot: its name in
// the store's directory and either its bytes (Data) or the name of the
// shared file holding them (Shared).
type StoreFile struct {
	Name   string
	Shared string
	Data   []byte
}

// SharedFiles are the shared files of a checkpoint storage, which
// incremental snapshots name (checkpoint.Dir has these methods): a file is
// created once and read by the restores of every snapshot naming it.
type SharedFiles interface {
	CreateShared(name string) (io.WriteCloser, error)
	OpenShared(name string) (io.ReadCloser, error)
}

// storeMeta is a state registered in a disk backend's store: its id, the
// two bytes every key of it starts with, and its kind.
type storeMeta struct {
	id     uint16
	kind   Kind
	schema *stateSchema // the schema of its entries, when an incremental restore brought them
}

// storeID returns the id of state name in the store, assigning the next one
// on first use; asking for it as another kind is an error.
func (b *Backend[K]) storeID(name string, k Kind) (uint16, error) {
	if m, ok := b.ids[name]; ok {
		if m.kind != k {
			return 0, fmt.Errorf("state: %s: state %q was restored as a %s and is registered as a %s", b.name, name, m.kind, k)
		}
		return m.id, nil
	}
	if b.nextID == 0xffff {
		return 0, fmt.Errorf("state: %s: more than %d states", b.name, 0xfffe)
	}
	b.nextID++
	b.ids[name] = storeMeta{id: b.nextID, kind: k}
	return b.nextID, nil
}

// timerID returns the store id of timer service name, assigning the next
// one on first use.
func (b *Backend[K]) timerID(name string) (uint16, error) {
	if m, ok := b.tids[name]; ok {
		return m.id, nil
	}
	if b.nextID == 0xffff {
		return 0, fmt.Errorf("state: %s: more than %d states and timer services", b.name, 0xfffe)
	}
	b.nextID++
	b.tids[name] = storeMeta{id: b.nextID, kind: kindTimers}
	return b.nextID, nil
}

// appendPrefix appends a state's key prefix: its id and a key group, both
// two bytes big-endian.
func appendPrefix(dst []byte, id uint16, group int) []byte {
	return append(dst, byte(id>>8), byte(id), byte(group>>8), byte(group))
}

// prefixEnd returns the least key above every key starting with p, or nil
// when there is none.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// storeErr keeps the first error of a store access in Err.
func (b *Backend[K]) storeErr(err error) {
	if err != nil {
		b.fail(fmt.Errorf("state: %s: disk store: %w", b.name, err))
	}
}

// sget reads key into *buf; false when absent or on error (kept in Err).
func (b *Backend[K]) sget(key []byte, buf *[]byte) ([]byte, bool) {
	v, ok, err := b.store.Get((*buf)[:0], key)
	if err != nil {
		b.storeErr(err)
		return nil, false
	}
	*buf = v
	return v, ok
}

// storeSection appends the snapshot entries of state id (of kind k) in
// group g, read from the store, to dst and returns it with their count:
// the heap backend's section format, built from the stored bytes without
// decoding them. Entries expired at now by t (nil: none) are left out.
func (b *Backend[K]) storeSection(dst []byte, id uint16, k Kind, g int, t *ttl, now int64) ([]byte, int) {
	start := appendPrefix(nil, id, g)
	n := 0
	var kns, elems []byte // a map's key and namespace, and its live entries
	live := 0
	flushMap := func() {
		if live > 0 {
			dst = append(dst, kns...)
			dst = appendUvarint(dst, uint64(live))
			dst = append(dst, elems...)
			n++
		}
		kns, elems, live = kns[:0], elems[:0], 0
	}
	expired := func(ts int64) bool { return t != nil && t.expired(ts, now) }
	var bad error
	err := b.store.Scan(start, prefixEnd(start), func(key, val []byte) bool {
		d := newDec(val)
		switch k {
		case KindList:
			cnt := 0
			for len(d.B) > 0 && d.Err == nil {
				e := d.Bytes(d.Uvarint())
				ed := newDec(e)
				if !expired(ed.Varint()) {
					cnt++
				}
			}
			if d.Err != nil || cnt == 0 {
				break
			}
			dst = append(dst, key[4:]...)
			dst = appendUvarint(dst, uint64(cnt))
			d = newDec(val)
			for len(d.B) > 0 {
				e := d.Bytes(d.Uvarint())
				ed := newDec(e)
				if !expired(ed.Varint()) {
					dst = append(dst, e...)
				}
			}
			n++
		case KindMap:
			ukLen := d.Uvarint()
			if d.Err == nil && ukLen > uint64(len(key)-4) {
				d.Fail("user key of %d bytes in a key of %d", ukLen, len(key))
			}
			if d.Err != nil {
				break
			}
			at := d.B
			ts := d.Varint()
			if d.Err != nil {
				break
			}
			this := key[4 : len(key)-int(ukLen)]
			if string(this) != string(kns) {
				flushMap()
				kns = append(kns, this...)
			}
			if !expired(ts) {
				elems = append(elems, at[:len(at)-len(d.B)]...)
				elems = append(elems, key[len(key)-int(ukLen):]...)
				elems = append(elems, d.B...)
				live++
			}
		default:
			if expired(d.Varint()) || d.Err != nil {
				break
			}
			dst = append(dst, key[4:]...)
			dst = append(dst, val...)
			n++
		}
		if d.Err != nil {
			bad = fmt.Errorf("%w: state %d in key group %d: %v", ErrCorruptSnapshot, id, g, d.Err)
			return false
		}
		return true
	})
	if k == KindMap {
		flushMap()
	}
	if err == nil {
		err = bad
	}
	b.storeErr(err)
	return dst, n
}

// storeDrop removes every entry of state id from the store.
func (b *Backend[K]) storeDrop(id uint16) {
	start := appendPrefix(nil, id, 0)
	b.storeErr(b.store.DeleteRange(start, appendPrefix(nil, id+1, 0)))
}
