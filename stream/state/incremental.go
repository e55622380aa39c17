package state

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"
)

// An incremental snapshot of a disk backend (SnapshotIncremental) is, in the
// framing of full snapshots,
//
//	header  "weirincr", uvarint version, uvarint max parallelism, uvarint
//	        first and last key group of the backend
//	meta    uvarint count, then per state and (version 3) timer service in
//	        the store: uvarint name length, name, kind byte, uvarint id,
//	        and (version 2) a byte, 1 when the schemas of a schema frame
//	        (schema.go) follow, else 0
//	heap    a full snapshot of the restored sections of states and timer
//	        services not registered (the heap part); before version 3, of
//	        the timers too
//	file    per store file: uvarint name length, name, uvarint shared name
//	        length, shared name, the file's bytes when not shared
//	end     uvarint number of file frames
//
// The store files name shared files for the store's data files; the rest
// (Pebble's manifest and options) is inline.
const (
	incrementalMagic   = "weirincr"
	incrementalVersion = 3
	frameMeta          = 4
	frameHeap          = 5
	frameFile          = 6
)

// incremental is a parsed incremental snapshot.
type incremental struct {
	maxP   int
	groups KeyGroupRange
	states map[string]storeMeta
	timers map[string]storeMeta
	heap   []byte
	files  []StoreFile
}

// IsIncremental reports whether snap is an incremental snapshot of a disk
// backend, which restores only into a disk backend with the shared files
// it names.
func IsIncremental(snap []byte) bool {
	r := bufio.NewReader(bytes.NewReader(snap))
	typ, payload, err := readFrame(r)
	return err == nil && typ == frameHeader && bytes.HasPrefix(payload, []byte(incrementalMagic))
}

// SharedFilesOf returns the shared files an incremental snapshot names.
func SharedFilesOf(snap []byte) ([]string, error) {
	r := bufio.NewReader(bytes.NewReader(snap))
	typ, payload, err := readFrame(r)
	if err != nil {
		return nil, err
	}
	if typ != frameHeader || !bytes.HasPrefix(payload, []byte(incrementalMagic)) {
		return nil, fmt.Errorf("%w: not an incremental snapshot", ErrCorruptSnapshot)
	}
	inc, err := parseIncremental(r, payload[len(incrementalMagic):])
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range inc.files {
		if f.Shared != "" {
			out = append(out, f.Shared)
		}
	}
	return out, nil
}

// SnapshotIncremental writes an incremental snapshot of a disk backend to w
// and returns the shared files it names: the store's data files go to the
// backend's Options.Shared, each once across the backend's snapshots, the
// rest and the timers into w. It is Flink's incremental checkpoint of the
// RocksDB backend; a full Snapshot of a disk backend is in the heap
// backend's format instead, as Flink's savepoints are.
func (b *Backend[K]) SnapshotIncremental(w io.Writer) ([]string, error) {
	if b.disposed {
		return nil, fmt.Errorf("state: %s: snapshot of a disposed backend", b.name)
	}
	if b.store == nil || b.shared == nil {
		return nil, fmt.Errorf("state: %s: an incremental snapshot needs a disk backend with shared files", b.name)
	}
	for _, r := range b.timers {
		if t, ok := r.(storedTimers); ok {
			if err := t.writeMeta(); err != nil {
				return nil, fmt.Errorf("state: %s: incremental snapshot: %w", b.name, err)
			}
		}
	}
	files, err := b.store.Checkpoint(b.shared)
	if err != nil {
		return nil, fmt.Errorf("state: %s: incremental snapshot: %w", b.name, err)
	}
	var heap bytes.Buffer
	if err := b.snapshot(&heap, b.groups, false); err != nil {
		return nil, err
	}
	bw := bufio.NewWriter(w)
	p := append([]byte(nil), incrementalMagic...)
	p = appendUvarint(p, incrementalVersion)
	p = appendUvarint(p, uint64(b.maxP))
	p = appendUvarint(p, uint64(b.groups.Start))
	p = appendUvarint(p, uint64(b.groups.End))
	err = writeFrame(bw, frameHeader, p)
	p = appendUvarint(p[:0], uint64(len(b.ids)+len(b.tids)))
	for _, timers := range []bool{false, true} {
		ids := b.ids
		if timers {
			ids = b.tids
		}
		for _, name := range slices.Sorted(maps.Keys(ids)) {
			m := ids[name]
			p = appendUvarint(p, uint64(len(name)))
			p = append(p, name...)
			p = append(p, byte(m.kind))
			p = appendUvarint(p, uint64(m.id))
			s := m.schema
			if timers {
				if _, ok := b.timers[name]; ok {
					s = b.schemas[pendingKey(name, true)]
				}
			} else if _, ok := b.states[name]; ok {
				s = b.schemas[pendingKey(name, false)]
			}
			if s == nil {
				p = append(p, 0)
			} else {
				p = appendSchemas(append(p, 1), s)
			}
		}
	}
	if err == nil {
		err = writeFrame(bw, frameMeta, p)
	}
	if err == nil {
		err = writeFrame(bw, frameHeap, heap.Bytes())
	}
	var shared []string
	for _, f := range files {
		p = appendUvarint(p[:0], uint64(len(f.Name)))
		p = append(p, f.Name...)
		p = appendUvarint(p, uint64(len(f.Shared)))
		p = append(p, f.Shared...)
		p = append(p, f.Data...)
		if err == nil {
			err = writeFrame(bw, frameFile, p)
		}
		if f.Shared != "" {
			shared = append(shared, f.Shared)
		}
	}
	if err == nil {
		err = writeFrame(bw, frameEnd, appendUvarint(p[:0], uint64(len(files))))
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return nil, fmt.Errorf("state: %s: incremental snapshot: %w", b.name, err)
	}
	return shared, nil
}

// parseIncremental reads an incremental snapshot after its header frame,
// whose payload after the magic is hdr.
func parseIncremental(r *bufio.Reader, hdr []byte) (*incremental, error) {
	d := newDec(hdr)
	version, maxP, start, end := d.Uvarint(), d.Uvarint(), d.Uvarint(), d.Uvarint()
	if d.Err != nil || len(d.B) != 0 {
		return nil, fmt.Errorf("%w: bad incremental header", ErrCorruptSnapshot)
	}
	if version < 1 || version > incrementalVersion {
		return nil, fmt.Errorf("incremental snapshot version %d, this weir reads versions 1 to %d", version, incrementalVersion)
	}
	if maxP == 0 || maxP > UpperBoundMaxParallelism || start > end || end >= maxP {
		return nil, fmt.Errorf("%w: key groups %d..%d of max parallelism %d", ErrCorruptSnapshot, start, end, maxP)
	}
	inc := &incremental{maxP: int(maxP), groups: KeyGroupRange{Start: int(start), End: int(end)},
		states: map[string]storeMeta{}, timers: map[string]storeMeta{}}
	typ, p, err := readFrame(r)
	if err != nil {
		return nil, err
	}
	if typ != frameMeta {
		return nil, fmt.Errorf("%w: frame type %d where the states are", ErrCorruptSnapshot, typ)
	}
	d = newDec(p)
	n := d.Count()
	ids := map[uint16]bool{}
	for i := 0; i < n && d.Err == nil; i++ {
		name := string(d.Bytes(d.Uvarint()))
		k := Kind(d.Byte())
		id := d.Uvarint()
		var schema *stateSchema
		if version >= 2 {
			switch d.Byte() {
			case 0:
			case 1:
				schema = &stateSchema{name: name, kind: k}
				readSchemas(&d, schema)
			default:
				d.Fail("schema flag of state %q not 0 or 1", name)
			}
		}
		if d.Err != nil {
			break
		}
		into, timers := inc.states, k == kindTimers && version >= 3
		if timers {
			into = inc.timers
		}
		if schema != nil && (schema.kind != k || schema.check() != nil) {
			d.Fail("schema of state %q: %v", name, schema.check())
			break
		}
		if k < KindValue || k > KindAggregating && !timers || id == 0 || id >= 0xffff || ids[uint16(id)] || into[name] != (storeMeta{}) {
			d.Fail("state %q of kind %d and id %d", name, k, id)
			break
		}
		ids[uint16(id)] = true
		into[name] = storeMeta{id: uint16(id), kind: k, schema: schema}
	}
	if d.Err == nil && len(d.B) != 0 {
		d.Fail("%d bytes after the states", len(d.B))
	}
	if d.Err != nil {
		return nil, fmt.Errorf("%w: states: %v", ErrCorruptSnapshot, d.Err)
	}
	if typ, inc.heap, err = readFrame(r); err != nil {
		return nil, err
	}
	if typ != frameHeap {
		return nil, fmt.Errorf("%w: frame type %d where the timers are", ErrCorruptSnapshot, typ)
	}
	for {
		typ, p, err := readFrame(r)
		if err != nil {
			return nil, err
		}
		switch typ {
		case frameFile:
			d := newDec(p)
			var f StoreFile
			f.Name = string(d.Bytes(d.Uvarint()))
			f.Shared = string(d.Bytes(d.Uvarint()))
			if d.Err != nil || !plainName(f.Name) || (f.Shared != "" && !plainName(f.Shared)) {
				return nil, fmt.Errorf("%w: store file %q (shared %q)", ErrCorruptSnapshot, f.Name, f.Shared)
			}
			f.Data = d.B
			inc.files = append(inc.files, f)
		case frameEnd:
			d := newDec(p)
			n := d.Uvarint()
			if d.Err != nil || len(d.B) != 0 || n != uint64(len(inc.files)) {
				return nil, fmt.Errorf("%w: end frame counts %d files, read %d", ErrCorruptSnapshot, n, len(inc.files))
			}
			if _, err := r.ReadByte(); err != io.EOF {
				return nil, fmt.Errorf("%w: data after the end frame", ErrCorruptSnapshot)
			}
			return inc, nil
		default:
			return nil, fmt.Errorf("%w: frame type %d", ErrCorruptSnapshot, typ)
		}
	}
}

// plainName reports whether name is a file name without directories, not
// starting with a dot.
func plainName(name string) bool {
	if name == "" || name[0] == '.' {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c == '/' || c == '\\' || c == 0 {
			return false
		}
	}
	return true
}

// restoreIncremental restores an incremental snapshot: into the store as
// it is when the backend is new and owns the snapshot's key groups exactly,
// else by copying the keys of the backend's groups out of the snapshot's
// store (a rescale, Flink's clipping restore of the RocksDB backend).
func (b *Backend[K]) restoreIncremental(r *bufio.Reader, hdr []byte) error {
	inc, err := parseIncremental(r, hdr)
	if err != nil {
		return err
	}
	if b.store == nil || b.shared == nil {
		return mismatch(fmt.Errorf("an incremental snapshot of a disk backend restores into a disk backend with its checkpoint storage only"))
	}
	if inc.maxP != b.maxP {
		return mismatch(fmt.Errorf("snapshot of max parallelism %d, the backend's is %d: the max parallelism cannot change across a restore", inc.maxP, b.maxP))
	}
	if err := b.checkIncremental(inc); err != nil {
		return err
	}
	if rng := inc.groups.Intersect(b.groups); rng.Len() > 0 {
		if inc.groups == b.groups && len(b.ids) == 0 && len(b.tids) == 0 {
			if err := b.store.Restore(inc.files, b.shared); err != nil {
				return err
			}
			for name, m := range inc.states {
				b.ids[name] = m
				b.nextID = max(b.nextID, m.id)
			}
			for name, m := range inc.timers {
				b.tids[name] = m
				b.nextID = max(b.nextID, m.id)
			}
		} else if err := b.clip(inc, rng); err != nil {
			return err
		}
		for _, p := range []struct{ from, to map[string]storeMeta }{{inc.states, b.ids}, {inc.timers, b.tids}} {
			for name, m := range p.from {
				if cur, ok := p.to[name]; ok && cur.schema == nil {
					cur.schema = m.schema
					p.to[name] = cur
				}
			}
		}
		for name := range inc.timers {
			if t, ok := b.timers[name].(storedTimers); ok {
				t.attach() // registered before the restore: read the store again
			}
		}
	}
	return b.restore(bufio.NewReader(bytes.NewReader(inc.heap)))
}

// clip copies the keys of groups rng of every state of inc into the store,
// under the backend's ids of the states.
func (b *Backend[K]) clip(inc *incremental, rng KeyGroupRange) error {
	src, err := b.store.Open(inc.files, b.shared)
	if err != nil {
		return err
	}
	type stored struct {
		name string
		old  storeMeta
	}
	var all []stored
	for _, name := range slices.Sorted(maps.Keys(inc.states)) {
		all = append(all, stored{name, inc.states[name]})
	}
	for _, name := range slices.Sorted(maps.Keys(inc.timers)) {
		all = append(all, stored{name, inc.timers[name]})
	}
	var key []byte
	for _, st := range all {
		name, old := st.name, st.old
		var id uint16
		var err error
		if old.kind == kindTimers {
			id, err = b.timerID(name)
			if err == nil {
				err = b.clipTimerMeta(src, old.id, id)
			}
		} else {
			id, err = b.storeID(name, old.kind)
		}
		if err != nil {
			_ = src.Close()
			return err
		}
		start, end := appendPrefix(nil, old.id, rng.Start), appendPrefix(nil, old.id, rng.End+1)
		var werr error
		err = src.Scan(start, end, func(k, v []byte) bool {
			key = append(appendPrefix(key[:0], id, 0)[:2], k[2:]...)
			werr = b.store.Set(key, v)
			return werr == nil
		})
		if err == nil {
			err = werr
		}
		if err != nil {
			_ = src.Close()
			return err
		}
	}
	return src.Close()
}

// clipTimerMeta keeps in the store the larger of the next sequence numbers
// of timer service id and of the old store's service oldID, so that the
// timers registered after the restore come after every restored one.
func (b *Backend[K]) clipTimerMeta(src StoreReader, oldID, id uint16) error {
	var next uint64
	var bad error
	read := func(_, v []byte) bool {
		d := newDec(v)
		if n := d.Uvarint(); d.Err == nil {
			next = max(next, n)
		} else {
			bad = fmt.Errorf("%w: timers %d: sequence: %v", ErrCorruptSnapshot, oldID, d.Err)
		}
		return false
	}
	k := []byte{byte(oldID >> 8), byte(oldID), storedMeta}
	if err := src.Scan(k, prefixEnd(k), read); err != nil {
		return err
	}
	k = []byte{byte(id >> 8), byte(id), storedMeta}
	if err := b.store.Scan(k, prefixEnd(k), read); err != nil {
		return err
	}
	if bad != nil {
		return bad
	}
	return b.store.Set(k, appendUvarint(nil, next))
}

// storedTimers is a timer service of a disk backend, seen through the
// registered interface.
type storedTimers interface {
	writeMeta() error
	attach()
}

func (t *Timers[K, N]) writeMeta() error { return t.d.writeMeta() }
func (t *Timers[K, N]) attach()          { t.d.attach() }

// storeRawTimers is a timer service in the store that no operator
// registered since the restore that brought it: snapshots write its timers
// as they are.
type storeRawTimers[K comparable] struct {
	b    *Backend[K]
	name string
	m    storeMeta
}

func (s *storeRawTimers[K]) stateName() string { return s.name }
func (s *storeRawTimers[K]) kind() Kind        { return kindTimers }
func (s *storeRawTimers[K]) write(dst []byte, idx int, _ int64) ([]byte, int) {
	return s.b.storeTimerSection(dst, s.m.id, s.b.groups.Start+idx)
}
func (s *storeRawTimers[K]) read([]byte, int, int) error { return nil }
func (s *storeRawTimers[K]) drop()                       { s.b.storeDrop(s.m.id) }
func (s *storeRawTimers[K]) freeze() frozen              { return nil }

// storeRaw is a state in the store that no descriptor registered since the
// restore that brought it: snapshots write its entries as they are.
type storeRaw[K comparable] struct {
	b    *Backend[K]
	name string
	m    storeMeta
}

func (s *storeRaw[K]) stateName() string { return s.name }
func (s *storeRaw[K]) kind() Kind        { return s.m.kind }
func (s *storeRaw[K]) write(dst []byte, idx int, now int64) ([]byte, int) {
	return s.b.storeSection(dst, s.m.id, s.m.kind, s.b.groups.Start+idx, nil, now)
}
func (s *storeRaw[K]) read([]byte, int, int) error { return nil }
func (s *storeRaw[K]) drop()                       { s.b.storeDrop(s.m.id) }

// mismatchError is a snapshot this backend cannot restore whatever the
// attempt: no restart of the job cures it (stream.IsUnrecoverable).
type mismatchError struct{ err error }

func mismatch(err error) error { return &mismatchError{err} }

func (e *mismatchError) Error() string       { return e.err.Error() }
func (e *mismatchError) Unwrap() error       { return e.err }
func (e *mismatchError) Unrecoverable() bool { return true }
