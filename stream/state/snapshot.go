package state

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"

	"github.com/weirdata/weir/internal/wire"
	"github.com/weirdata/weir/memory"
)

// ErrCorruptSnapshot is wrapped by Restore's errors for input that Snapshot
// could not have written: a bad checksum, truncation, undecodable entries.
var ErrCorruptSnapshot = errors.New("state: corrupt snapshot")

// The snapshot format, version 2. A snapshot is a sequence of frames, each
//
//	type byte | uvarint payload length | payload | CRC-32C of type and payload (4 bytes, little-endian)
//
// A header frame (payload: the magic "weirstat", uvarint version, uvarint
// max parallelism) comes first; then a schema frame per state and timer
// service (schema.go; version 1 has none); then one section frame per (state
// or timer service, key group) with entries (payload: uvarint name length, name,
// kind byte, uvarint key group, uvarint entry count, the entries as the kind
// writes them with memory.Codec); then an end frame (payload: uvarint number
// of sections), after which the input must end. Frames of groups are in
// group order, states in name order, so equal state gives equal bytes up to
// the order of entries within a group.
const (
	snapshotMagic   = "weirstat"
	snapshotVersion = 2
	frameHeader     = 1
	frameSection    = 2
	frameEnd        = 3
	maxFrame        = 1 << 30
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// section is one (state, key group) of a snapshot, kept raw while its state
// is not registered.
type section struct {
	name   string
	kind   Kind
	group  int
	count  int
	data   []byte
	schema *stateSchema // what the entries were written with; nil: the state's own
}

// Snapshot writes the state and timers of the backend's key groups within
// groups to w. Entries expired by TTL are left out. Restored sections of
// states not registered since are written again as they were read.
func (b *Backend[K]) Snapshot(w io.Writer, groups KeyGroupRange) error {
	if b.disposed {
		return fmt.Errorf("state: %s: snapshot of a disposed backend", b.name)
	}
	return b.snapshot(w, groups, true)
}

// snapshot writes the snapshot, with the keyed states or (an incremental
// snapshot's heap part) only the timers and the pending sections.
func (b *Backend[K]) snapshot(w io.Writer, groups KeyGroupRange, withStates bool) error {
	bw := bufio.NewWriter(w)
	var payload []byte
	payload = append(payload, snapshotMagic...)
	payload = appendUvarint(payload, snapshotVersion)
	payload = appendUvarint(payload, uint64(b.maxP))
	if err := writeFrame(bw, frameHeader, payload); err != nil {
		return fmt.Errorf("state: %s: snapshot: %w", b.name, err)
	}
	if err := writeSchemaFrames(bw, b.schemaFrames(withStates)); err != nil {
		return fmt.Errorf("state: %s: snapshot: %w", b.name, err)
	}
	type named struct {
		r      registered
		timers bool
	}
	var all []named
	for _, r := range b.states {
		if !withStates {
			break
		}
		all = append(all, named{r, false})
	}
	for name, m := range b.ids {
		if _, ok := b.states[name]; !ok && withStates {
			all = append(all, named{&storeRaw[K]{b: b, name: name, m: m}, false})
		}
	}
	for _, r := range b.timers {
		if withStates || b.store == nil { // a store's timers are in its files
			all = append(all, named{r, true})
		}
	}
	for name, m := range b.tids {
		if _, ok := b.timers[name]; !ok && withStates {
			all = append(all, named{&storeRawTimers[K]{b: b, name: name, m: m}, true})
		}
	}
	slices.SortFunc(all, func(x, y named) int {
		if x.timers != y.timers {
			if x.timers {
				return 1
			}
			return -1
		}
		return cmpString(x.r.stateName(), y.r.stateName())
	})
	pendingKeys := make([]string, 0, len(b.pending))
	for k := range b.pending {
		pendingKeys = append(pendingKeys, k)
	}
	slices.Sort(pendingKeys)
	now := b.now()
	sections := 0
	rng := b.groups.Intersect(groups)
	var entries []byte
	for g := rng.Start; g <= rng.End; g++ {
		idx := g - b.groups.Start
		for _, s := range all {
			var n int
			entries, n = s.r.write(entries[:0], idx, now)
			if n == 0 {
				continue
			}
			payload = appendSection(payload[:0], s.r.stateName(), s.r.kind(), g, n, entries)
			if err := writeFrame(bw, frameSection, payload); err != nil {
				return fmt.Errorf("state: %s: snapshot: %w", b.name, err)
			}
			sections++
		}
		for _, k := range pendingKeys {
			for _, sec := range b.pending[k] {
				if sec.group != g {
					continue
				}
				payload = appendSection(payload[:0], sec.name, sec.kind, g, sec.count, sec.data)
				if err := writeFrame(bw, frameSection, payload); err != nil {
					return fmt.Errorf("state: %s: snapshot: %w", b.name, err)
				}
				sections++
			}
		}
	}
	if err := writeFrame(bw, frameEnd, appendUvarint(payload[:0], uint64(sections))); err != nil {
		return fmt.Errorf("state: %s: snapshot: %w", b.name, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("state: %s: snapshot: %w", b.name, err)
	}
	return nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func appendSection(dst []byte, name string, k Kind, group, n int, entries []byte) []byte {
	dst = appendUvarint(dst, uint64(len(name)))
	dst = append(dst, name...)
	dst = append(dst, byte(k))
	dst = appendUvarint(dst, uint64(group))
	dst = appendUvarint(dst, uint64(n))
	return append(dst, entries...)
}

func writeFrame(w *bufio.Writer, typ byte, payload []byte) error {
	var hdr [1 + binary.MaxVarintLen64]byte
	hdr[0] = typ
	n := binary.PutUvarint(hdr[1:], uint64(len(payload)))
	crc := crc32.Update(0, castagnoli, hdr[:1])
	crc = crc32.Update(crc, castagnoli, payload)
	if _, err := w.Write(hdr[:1+n]); err != nil {
		return err
	}
	if _, err := w.Write(payload); err != nil {
		return err
	}
	var sum [4]byte
	binary.LittleEndian.PutUint32(sum[:], crc)
	_, err := w.Write(sum[:])
	return err
}

// Restore reads a snapshot from r and keeps the sections of the backend's
// key groups, skipping the others: a backend restoring at another
// parallelism reads every old snapshot whose groups overlap its own.
// Restore is meant for a backend that holds nothing yet: restored entries are
// added to what is there (a value replaces the current one, a list is
// appended to). Sections of registered states and timer services go into them
// at once; the others are kept until their state is registered. The max
// parallelism must be the backend's.
//
// On error (ErrCorruptSnapshot for bad input) the backend may hold part of
// the snapshot; the task fails and the backend is disposed.
func (b *Backend[K]) Restore(r io.Reader) error {
	if b.disposed {
		return fmt.Errorf("state: %s: restore into a disposed backend", b.name)
	}
	if err := b.restore(bufio.NewReader(r)); err != nil {
		return fmt.Errorf("state: %s: restore: %w", b.name, err)
	}
	return nil
}

func (b *Backend[K]) restore(r *bufio.Reader) error {
	typ, payload, err := readFrame(r)
	if err != nil {
		return err
	}
	if typ == frameHeader && len(payload) >= len(incrementalMagic) && string(payload[:len(incrementalMagic)]) == incrementalMagic {
		return b.restoreIncremental(r, payload[len(incrementalMagic):])
	}
	if typ != frameHeader || len(payload) < len(snapshotMagic) || string(payload[:len(snapshotMagic)]) != snapshotMagic {
		return fmt.Errorf("%w: not a weir state snapshot", ErrCorruptSnapshot)
	}
	d := newDec(payload[len(snapshotMagic):])
	version, maxP := d.Uvarint(), d.Uvarint()
	if d.Err != nil || len(d.B) != 0 {
		return fmt.Errorf("%w: bad header", ErrCorruptSnapshot)
	}
	if version != snapshotVersion && version != 1 {
		return fmt.Errorf("snapshot version %d, this weir reads versions 1 and %d", version, snapshotVersion)
	}
	if maxP != uint64(b.maxP) {
		return mismatch(fmt.Errorf("snapshot of max parallelism %d, the backend's is %d: the max parallelism cannot change across a restore", maxP, b.maxP))
	}
	sections := uint64(0)
	schemas := map[string]*stateSchema{}
	for {
		typ, payload, err := readFrame(r)
		if err != nil {
			return err
		}
		switch typ {
		case frameSchema:
			if err := addSchema(schemas, payload, version, sections); err != nil {
				return err
			}
		case frameSection:
			sec, err := parseSection(payload, b.maxP)
			if err != nil {
				return err
			}
			sections++
			if sec.schema, err = schemaFor(schemas, &sec); err != nil {
				return err
			}
			if !b.groups.Contains(sec.group) {
				continue
			}
			if err := b.place(sec); err != nil {
				return err
			}
		case frameEnd:
			d := newDec(payload)
			n := d.Uvarint()
			if d.Err != nil || len(d.B) != 0 || n != sections {
				return fmt.Errorf("%w: end frame counts %d sections, read %d", ErrCorruptSnapshot, n, sections)
			}
			if _, err := r.ReadByte(); err != io.EOF {
				return fmt.Errorf("%w: data after the end frame", ErrCorruptSnapshot)
			}
			return nil
		default:
			return fmt.Errorf("%w: frame type %d", ErrCorruptSnapshot, typ)
		}
	}
}

// place ingests a section into its registered state, or keeps it pending.
func (b *Backend[K]) place(sec section) error {
	var r registered
	if sec.kind == kindTimers {
		r = b.timers[sec.name]
	} else {
		r = b.states[sec.name]
	}
	if r == nil {
		key := pendingKey(sec.name, sec.kind == kindTimers)
		if p := b.pending[key]; len(p) > 0 && p[0].kind != sec.kind {
			return fmt.Errorf("%w: state %q is a %s and a %s", ErrCorruptSnapshot, sec.name, p[0].kind, sec.kind)
		}
		if err := placePending(b.pending[key], &sec); err != nil {
			return err
		}
		sec.data = slices.Clone(sec.data)
		b.pending[key] = append(b.pending[key], sec)
		b.grow(int64(len(sec.data)), "restored state "+sec.name)
		return nil
	}
	return b.ingest(r, sec)
}

// ingest adds a section's entries to its state.
func (b *Backend[K]) ingest(r registered, sec section) error {
	if r.kind() != sec.kind {
		return fmt.Errorf("state %q was snapshotted as a %s and is registered as a %s", sec.name, sec.kind, r.kind())
	}
	if err := b.migrateFor(r, &sec); err != nil {
		return err
	}
	if err := r.read(sec.data, sec.group-b.groups.Start, sec.count); err != nil {
		return fmt.Errorf("key group %d: %w", sec.group, err)
	}
	return nil
}

func parseSection(payload []byte, maxP int) (section, error) {
	d := newDec(payload)
	var s section
	s.name = string(d.Bytes(d.Uvarint()))
	s.kind = Kind(d.Byte())
	g := d.Uvarint()
	s.count = d.Count()
	if d.Err != nil {
		return s, fmt.Errorf("%w: section header: %v", ErrCorruptSnapshot, d.Err)
	}
	if s.kind < KindValue || s.kind > kindTimers {
		return s, fmt.Errorf("%w: state %q of kind %d", ErrCorruptSnapshot, s.name, s.kind)
	}
	if g >= uint64(maxP) {
		return s, fmt.Errorf("%w: state %q: key group %d of max parallelism %d", ErrCorruptSnapshot, s.name, g, maxP)
	}
	s.group = int(g)
	s.data = d.B
	return s, nil
}

// readFrame reads one frame, checking its checksum; the payload buffer grows
// with the bytes read, so a corrupt length cannot allocate much more than the
// input.
func readFrame(r *bufio.Reader) (byte, []byte, error) {
	typ, err := r.ReadByte()
	if err != nil {
		return 0, nil, fmt.Errorf("%w: truncated: %v", ErrCorruptSnapshot, err)
	}
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: frame length: %v", ErrCorruptSnapshot, err)
	}
	if n > maxFrame {
		return 0, nil, fmt.Errorf("%w: frame of %d bytes", ErrCorruptSnapshot, n)
	}
	var payload []byte
	for uint64(len(payload)) < n {
		step := min(n-uint64(len(payload)), max(uint64(len(payload)), 64<<10))
		payload = slices.Grow(payload, int(step))
		got, err := io.ReadFull(r, payload[len(payload):len(payload)+int(step)])
		payload = payload[:len(payload)+got]
		if err != nil {
			return 0, nil, fmt.Errorf("%w: truncated frame: %v", ErrCorruptSnapshot, err)
		}
	}
	var sum [4]byte
	if _, err := io.ReadFull(r, sum[:]); err != nil {
		return 0, nil, fmt.Errorf("%w: truncated checksum: %v", ErrCorruptSnapshot, err)
	}
	crc := crc32.Update(0, castagnoli, []byte{typ})
	crc = crc32.Update(crc, castagnoli, payload)
	if crc != binary.LittleEndian.Uint32(sum[:]) {
		return 0, nil, fmt.Errorf("%w: checksum mismatch in a frame of %d bytes", ErrCorruptSnapshot, n)
	}
	return typ, payload, nil
}

func appendUvarint(dst []byte, v uint64) []byte { return binary.AppendUvarint(dst, v) }
func appendVarint(dst []byte, v int64) []byte   { return binary.AppendVarint(dst, v) }

// dec reads a section's fields, keeping the first error.
type dec struct{ wire.Decoder }

func newDec(b []byte) dec { return dec{wire.Decoder{B: b}} }

// done returns the decoding error, or one for bytes left over.
func (d *dec) done(what string) error {
	if d.Err == nil && len(d.B) != 0 {
		d.Err = fmt.Errorf("%d bytes after the entries", len(d.B))
	}
	if d.Err != nil {
		return fmt.Errorf("%w: %s: %v", ErrCorruptSnapshot, what, d.Err)
	}
	return nil
}

func decodeInto[T any](d *dec, c *memory.Codec[T], v *T) {
	if d.Err != nil {
		return
	}
	n, err := c.Decode(d.B, v)
	if err != nil {
		d.Err = err
		return
	}
	d.B = d.B[n:]
}
