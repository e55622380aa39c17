package state

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
)

// The operator state snapshot format, version 2, in the frames of the keyed
// snapshots (snapshot.go): a header frame (payload: the magic "weiropst",
// uvarint version), one section frame per state in name order (payload:
// uvarint name length, name, distribution byte, the schemas, uvarint entry
// count, then per entry its uvarint length and its bytes: a list element's
// Codec form, or a broadcast entry's key and value), and an end frame
// (payload: uvarint number of sections), after which the input must end.
// Entries carry their length so that a repartition splits lists without
// knowing their types. The schemas are a byte, 0 when the section has none,
// else 1 followed by the key's schema (a broadcast state's; empty for a
// list) and the value's (memory.SchemaOf bytes, each with its uvarint
// length). Version 1 has no schemas: its values are read as the program's
// types.
const (
	opSnapshotMagic   = "weiropst"
	opSnapshotVersion = 2
)

// opSection is one operator state of a snapshot.
type opSection struct {
	name    string
	mode    Distribution
	entries [][]byte
	schema  *stateSchema // key and value; nil: the state's own
}

// bytes estimates what a kept section holds.
func (s opSection) bytes() int64 {
	n := int64(len(s.name))
	for _, e := range s.entries {
		n += int64(len(e)) + 24
	}
	return n
}

// Snapshot writes every operator state of the store to w, and again the
// restored sections of states not registered since.
func (s *OperatorStore) Snapshot(w io.Writer) error {
	if s.disposed {
		return fmt.Errorf("state: %s: snapshot of a disposed operator state store", s.name)
	}
	secs := make([]opSection, 0, len(s.states)+len(s.pending))
	var scratch []byte
	for _, st := range s.states {
		var entries [][]byte
		entries, scratch = st.write(nil, scratch)
		secs = append(secs, opSection{name: st.stateName(), mode: st.mode(), entries: entries, schema: s.schemas[st.stateName()]})
	}
	for _, p := range s.pending {
		secs = append(secs, p)
	}
	if err := writeOpSnapshot(w, secs); err != nil {
		return fmt.Errorf("state: %s: snapshot: %w", s.name, err)
	}
	return nil
}

// writeOpSnapshot writes sections in name order.
func writeOpSnapshot(w io.Writer, secs []opSection) error {
	slices.SortFunc(secs, func(a, b opSection) int { return cmpString(a.name, b.name) })
	bw := bufio.NewWriter(w)
	payload := append([]byte(nil), opSnapshotMagic...)
	payload = appendUvarint(payload, opSnapshotVersion)
	if err := writeFrame(bw, frameHeader, payload); err != nil {
		return err
	}
	for _, sec := range secs {
		payload = appendUvarint(payload[:0], uint64(len(sec.name)))
		payload = append(payload, sec.name...)
		payload = append(payload, byte(sec.mode))
		payload = appendOpSchema(payload, sec.schema)
		payload = appendUvarint(payload, uint64(len(sec.entries)))
		for _, e := range sec.entries {
			payload = appendUvarint(payload, uint64(len(e)))
			payload = append(payload, e...)
		}
		if err := writeFrame(bw, frameSection, payload); err != nil {
			return err
		}
	}
	if err := writeFrame(bw, frameEnd, appendUvarint(payload[:0], uint64(len(secs)))); err != nil {
		return err
	}
	return bw.Flush()
}

// readOpSnapshot parses a snapshot; empty input is a subtask without
// operator state.
func readOpSnapshot(b []byte) ([]opSection, error) {
	if len(b) == 0 {
		return nil, nil
	}
	r := bufio.NewReader(bytes.NewReader(b))
	typ, payload, err := readFrame(r)
	if err != nil {
		return nil, err
	}
	if typ != frameHeader || len(payload) < len(opSnapshotMagic) || string(payload[:len(opSnapshotMagic)]) != opSnapshotMagic {
		return nil, fmt.Errorf("%w: not a weir operator state snapshot", ErrCorruptSnapshot)
	}
	d := newDec(payload[len(opSnapshotMagic):])
	version := d.Uvarint()
	if d.Err != nil || len(d.B) != 0 {
		return nil, fmt.Errorf("%w: bad header", ErrCorruptSnapshot)
	}
	if version != opSnapshotVersion && version != 1 {
		return nil, fmt.Errorf("operator state snapshot version %d, this weir reads versions 1 and %d", version, opSnapshotVersion)
	}
	var secs []opSection
	seen := map[string]bool{}
	for {
		typ, payload, err := readFrame(r)
		if err != nil {
			return nil, err
		}
		switch typ {
		case frameSection:
			sec, err := parseOpSection(payload, version)
			if err != nil {
				return nil, err
			}
			if seen[sec.name] {
				return nil, fmt.Errorf("%w: operator state %q twice", ErrCorruptSnapshot, sec.name)
			}
			seen[sec.name] = true
			secs = append(secs, sec)
		case frameEnd:
			d := newDec(payload)
			n := d.Uvarint()
			if d.Err != nil || len(d.B) != 0 || n != uint64(len(secs)) {
				return nil, fmt.Errorf("%w: end frame counts %d sections, read %d", ErrCorruptSnapshot, n, len(secs))
			}
			if _, err := r.ReadByte(); err != io.EOF {
				return nil, fmt.Errorf("%w: data after the end frame", ErrCorruptSnapshot)
			}
			return secs, nil
		default:
			return nil, fmt.Errorf("%w: frame type %d", ErrCorruptSnapshot, typ)
		}
	}
}

func parseOpSection(payload []byte, version uint64) (opSection, error) {
	d := newDec(payload)
	var s opSection
	s.name = string(d.Bytes(d.Uvarint()))
	s.mode = Distribution(d.Byte())
	if version >= 2 {
		s.schema = readOpSchema(&d, s.name, s.mode)
	}
	n := d.Count()
	for i := 0; i < n && d.Err == nil; i++ {
		e := d.Bytes(d.Uvarint())
		if d.Err == nil {
			s.entries = append(s.entries, e)
		}
	}
	if d.Err == nil && len(d.B) != 0 {
		d.Fail("%d bytes after the entries", len(d.B))
	}
	if d.Err != nil {
		return s, fmt.Errorf("%w: operator state %q: %v", ErrCorruptSnapshot, s.name, d.Err)
	}
	if s.name == "" || s.mode < SplitDistribute || s.mode > Broadcast {
		return s, fmt.Errorf("%w: operator state %q of distribution %d", ErrCorruptSnapshot, s.name, s.mode)
	}
	if s.schema != nil {
		return s, s.schema.checkOp()
	}
	return s, nil
}

// Restore reads a snapshot into the store: a subtask's own snapshot, or its
// share of the snapshots of every old subtask as RepartitionOperatorState
// computes it. Sections of registered states go into them at once; the
// others are kept (and counted) until their state is registered, and
// written again by the next snapshot. On error (ErrCorruptSnapshot for bad
// input) the store may hold part of the snapshot.
func (s *OperatorStore) Restore(r io.Reader) error {
	if s.disposed {
		return fmt.Errorf("state: %s: restore into a disposed operator state store", s.name)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("state: %s: restore: %w", s.name, err)
	}
	secs, err := readOpSnapshot(b)
	if err != nil {
		return fmt.Errorf("state: %s: restore: %w", s.name, err)
	}
	for _, sec := range secs {
		if st, ok := s.states[sec.name]; ok {
			if st.mode() != sec.mode {
				return fmt.Errorf("state: %s: operator state %q was snapshotted as a %s and is registered as a %s", s.name, sec.name, sec.mode, st.mode())
			}
			if err := s.migrateFor(st, &sec); err != nil {
				return fmt.Errorf("state: %s: restore: %w", s.name, err)
			}
			if err := st.read(sec.entries); err != nil {
				return fmt.Errorf("state: %s: restore operator state %q: %w", s.name, sec.name, err)
			}
			continue
		}
		if p, ok := s.pending[sec.name]; ok {
			if p.mode != sec.mode {
				return fmt.Errorf("state: %s: restore: %w: operator state %q is a %s and a %s", s.name, ErrCorruptSnapshot, sec.name, p.mode, sec.mode)
			}
			if !sameOpSchema(p.schema, sec.schema) {
				return fmt.Errorf("state: %s: restore: operator state %q: restored sections of two schemas; the program must register the state to restore both: %w", s.name, sec.name, ErrMigration)
			}
			s.shrink(p.bytes())
			sec.entries = append(p.entries, sec.entries...)
		}
		for i := range sec.entries {
			sec.entries[i] = slices.Clone(sec.entries[i])
		}
		s.pending[sec.name] = sec
		s.grow(sec.bytes(), "restored operator state "+sec.name)
	}
	return nil
}

// RepartitionOperatorState computes, from the operator state snapshots of
// every subtask of an old parallelism (in subtask order; nil for a subtask
// without state), the snapshot of each of n new subtasks, by Flink's
// RoundRobinOperatorStateRepartitioner:
//
//   - split-distribute list state: at the same parallelism each subtask keeps
//     its own list; at another, the elements of every old subtask, in
//     subtask order, are cut into n runs of len/n elements, the first len%n
//     runs one longer, and the states are taken in name order, each starting
//     its longer runs at the subtask where the state before ran out of them;
//   - union list state: every new subtask gets every old subtask's elements,
//     in subtask order;
//   - broadcast state: new subtask i gets a copy of the state of the
//     (i mod h)-th of the h old subtasks that hold it.
func RepartitionOperatorState(old [][]byte, n int) ([][]byte, error) {
	if n < 1 {
		return nil, fmt.Errorf("state: repartition operator state: %w: new parallelism %d", ErrParallelism, n)
	}
	type holder struct {
		subtask int
		sec     opSection
	}
	byName := map[string][]holder{}
	for i, b := range old {
		secs, err := readOpSnapshot(b)
		if err != nil {
			return nil, fmt.Errorf("state: repartition operator state of subtask %d: %w", i, err)
		}
		for _, sec := range secs {
			if hs := byName[sec.name]; len(hs) > 0 && hs[0].sec.mode != sec.mode {
				return nil, fmt.Errorf("state: repartition operator state: %w: %q is a %s in subtask %d and a %s in subtask %d",
					ErrCorruptSnapshot, sec.name, hs[0].sec.mode, hs[0].subtask, sec.mode, i)
			}
			if hs := byName[sec.name]; len(hs) > 0 && !sameOpSchema(hs[0].sec.schema, sec.schema) {
				return nil, fmt.Errorf("state: repartition operator state: %q has other schemas in subtask %d than in subtask %d: %w",
					sec.name, hs[0].subtask, i, ErrMigration)
			}
			byName[sec.name] = append(byName[sec.name], holder{i, sec})
		}
	}
	names := make([]string, 0, len(byName))
	for name := range byName {
		names = append(names, name)
	}
	slices.Sort(names)
	out := make([][]opSection, n)
	start := 0 // where the next split state begins its longer runs
	for _, name := range names {
		hs := byName[name]
		mode := hs[0].sec.mode
		switch {
		case mode == SplitDistribute && n == len(old):
			for _, h := range hs {
				out[h.subtask] = append(out[h.subtask], h.sec)
			}
		case mode == SplitDistribute:
			var all [][]byte
			for _, h := range hs {
				all = append(all, h.sec.entries...)
			}
			counts, next := splitCounts(len(all), n, start)
			at := 0
			for k, c := range counts {
				if c == 0 {
					continue
				}
				op := (k + start) % n
				out[op] = append(out[op], opSection{name: name, mode: mode, entries: all[at : at+c], schema: hs[0].sec.schema})
				at += c
			}
			start = next
		case mode == Union:
			var all [][]byte
			for _, h := range hs {
				all = append(all, h.sec.entries...)
			}
			for i := range n {
				out[i] = append(out[i], opSection{name: name, mode: mode, entries: all, schema: hs[0].sec.schema})
			}
		default:
			for i := range n {
				out[i] = append(out[i], hs[i%len(hs)].sec)
			}
		}
	}
	res := make([][]byte, n)
	for i, secs := range out {
		if len(secs) == 0 {
			continue
		}
		var buf bytes.Buffer
		if err := writeOpSnapshot(&buf, secs); err != nil {
			return nil, fmt.Errorf("state: repartition operator state: %w", err)
		}
		res[i] = buf.Bytes()
	}
	return res, nil
}

// splitCounts is Flink's round-robin split of total elements over n
// subtasks: the k-th run goes to subtask (k+start) mod n and holds
// counts[k] elements, total/n each and the first total%n runs one more.
// next is where the following state starts: the subtask that got the first
// run without an extra element (start when there is none).
func splitCounts(total, n, start int) (counts []int, next int) {
	base, rem := total/n, total%n
	counts = make([]int, n)
	next = start
	for k := range n {
		c := base
		if rem > 0 {
			c++
			rem--
		} else if rem == 0 {
			next = (k + start) % n
			rem--
		}
		counts[k] = c
	}
	return counts, next
}

// IsOperatorSnapshot reports whether b starts as an operator state snapshot
// (OperatorStore.Snapshot), not a keyed one (Backend.Snapshot).
func IsOperatorSnapshot(b []byte) bool {
	_, k := binary.Uvarint(b[min(1, len(b)):])
	if len(b) == 0 || b[0] != frameHeader || k <= 0 {
		return false
	}
	return bytes.HasPrefix(b[1+k:], []byte(opSnapshotMagic))
}
