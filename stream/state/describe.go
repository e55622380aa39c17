package state

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"
)

// SnapshotInfo describes a state snapshot without restoring it: what
// `weir savepoint inspect` shows of a subtask's state.
type SnapshotInfo struct {
	// Operator says the snapshot is an operator state snapshot
	// (OperatorStore.Snapshot), not a keyed one (Backend.Snapshot).
	Operator bool
	// MaxParallelism is a keyed snapshot's number of key groups.
	MaxParallelism int
	// Sections are a keyed snapshot's (state, key group) sections in the
	// snapshot's order (by key group, then state name, timers last), or an
	// operator snapshot's states by name.
	Sections []SectionInfo
	// Incremental says the snapshot is an incremental one of a disk
	// backend (SnapshotIncremental): Sections are then its restored
	// sections' (and, before version 3, its timers'), Stored the states and
	// timer services in its store (KeyGroup -1, entries not counted) and
	// Files the store's files.
	Incremental bool
	Stored      []SectionInfo
	Files       []FileInfo
	// Schemas are the schemas the snapshot records of its states (of a
	// keyed snapshot's states and timer services, of an incremental
	// snapshot's stored states too, of an operator snapshot's states), in
	// the snapshot's order; states without one are left out.
	Schemas []SchemaInfo
}

// FileInfo is a store file of an incremental snapshot: its name in the
// store, the shared file holding it or, inline, its bytes.
type FileInfo struct {
	Name   string
	Shared string
	Bytes  int
}

// SectionInfo is one section of a snapshot.
type SectionInfo struct {
	// Name is the state's or timer service's name.
	Name string
	// Kind is a keyed state's kind ("ValueState", ..., "timers") or an
	// operator state's distribution ("union list state", ...).
	Kind string
	// KeyGroup is the key group of a keyed section; -1 for operator state.
	KeyGroup int
	// Entries is the number of entries: keys (and namespaces) of a keyed
	// state, timers, list elements or broadcast entries.
	Entries int
	// Bytes is the size of the entries as serialized.
	Bytes int
}

// DescribeSnapshot parses a keyed or an operator state snapshot, checking
// its frames as a restore does, and lists its sections. Empty input is a
// subtask without state.
func DescribeSnapshot(b []byte) (*SnapshotInfo, error) {
	if len(b) == 0 {
		return &SnapshotInfo{}, nil
	}
	if IsOperatorSnapshot(b) {
		secs, err := readOpSnapshot(b)
		if err != nil {
			return nil, fmt.Errorf("state: describe snapshot: %w", err)
		}
		info := &SnapshotInfo{Operator: true}
		for _, sec := range secs {
			n := 0
			for _, e := range sec.entries {
				n += len(e)
			}
			info.Sections = append(info.Sections, SectionInfo{Name: sec.name, Kind: sec.mode.String(),
				KeyGroup: -1, Entries: len(sec.entries), Bytes: n})
			if sec.schema != nil {
				info.Schemas = append(info.Schemas, schemaInfo(sec.schema, sec.mode.String()))
			}
		}
		return info, nil
	}
	if IsIncremental(b) {
		info, err := describeIncremental(b)
		if err != nil {
			return nil, fmt.Errorf("state: describe snapshot: %w", err)
		}
		return info, nil
	}
	info, err := describeKeyed(bufio.NewReader(bytes.NewReader(b)))
	if err != nil {
		return nil, fmt.Errorf("state: describe snapshot: %w", err)
	}
	return info, nil
}

// describeKeyed reads a keyed snapshot's frames as Backend.Restore does.
func describeKeyed(r *bufio.Reader) (*SnapshotInfo, error) {
	typ, payload, err := readFrame(r)
	if err != nil {
		return nil, err
	}
	if typ != frameHeader || len(payload) < len(snapshotMagic) || string(payload[:len(snapshotMagic)]) != snapshotMagic {
		return nil, fmt.Errorf("%w: not a weir state snapshot", ErrCorruptSnapshot)
	}
	d := newDec(payload[len(snapshotMagic):])
	version, maxP := d.Uvarint(), d.Uvarint()
	if d.Err != nil || len(d.B) != 0 || maxP > 1<<31-1 {
		return nil, fmt.Errorf("%w: bad header", ErrCorruptSnapshot)
	}
	if version != snapshotVersion && version != 1 {
		return nil, fmt.Errorf("snapshot version %d, this weir reads versions 1 and %d", version, snapshotVersion)
	}
	info := &SnapshotInfo{MaxParallelism: int(maxP)}
	schemas := map[string]*stateSchema{}
	for {
		typ, payload, err := readFrame(r)
		if err != nil {
			return nil, err
		}
		switch typ {
		case frameSchema:
			if err := addSchema(schemas, payload, version, uint64(len(info.Sections))); err != nil {
				return nil, err
			}
			s, _ := parseSchemaFrame(payload)
			info.Schemas = append(info.Schemas, schemaInfo(s, s.kind.String()))
		case frameSection:
			sec, err := parseSection(payload, int(maxP))
			if err != nil {
				return nil, err
			}
			if _, err := schemaFor(schemas, &sec); err != nil {
				return nil, err
			}
			info.Sections = append(info.Sections, SectionInfo{Name: sec.name, Kind: sec.kind.String(),
				KeyGroup: sec.group, Entries: sec.count, Bytes: len(sec.data)})
		case frameEnd:
			d := newDec(payload)
			n := d.Uvarint()
			if d.Err != nil || len(d.B) != 0 || n != uint64(len(info.Sections)) {
				return nil, fmt.Errorf("%w: end frame counts %d sections, read %d", ErrCorruptSnapshot, n, len(info.Sections))
			}
			if _, err := r.ReadByte(); err != io.EOF {
				return nil, fmt.Errorf("%w: data after the end frame", ErrCorruptSnapshot)
			}
			return info, nil
		default:
			return nil, fmt.Errorf("%w: frame type %d", ErrCorruptSnapshot, typ)
		}
	}
}

// describeIncremental describes an incremental snapshot: its states, files
// and the sections of its heap part.
func describeIncremental(b []byte) (*SnapshotInfo, error) {
	r := bufio.NewReader(bytes.NewReader(b))
	_, payload, err := readFrame(r)
	if err != nil {
		return nil, err
	}
	inc, err := parseIncremental(r, payload[len(incrementalMagic):])
	if err != nil {
		return nil, err
	}
	info, err := describeKeyed(bufio.NewReader(bytes.NewReader(inc.heap)))
	if err != nil {
		return nil, err
	}
	info.Incremental = true
	for _, ms := range []map[string]storeMeta{inc.states, inc.timers} {
		for _, name := range slices.Sorted(maps.Keys(ms)) {
			info.Stored = append(info.Stored, SectionInfo{Name: name, Kind: ms[name].kind.String(), KeyGroup: -1})
			if s := ms[name].schema; s != nil {
				info.Schemas = append(info.Schemas, schemaInfo(s, s.kind.String()))
			}
		}
	}
	for _, f := range inc.files {
		info.Files = append(info.Files, FileInfo{Name: f.Name, Shared: f.Shared, Bytes: len(f.Data)})
	}
	return info, nil
}
