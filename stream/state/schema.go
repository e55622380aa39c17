package state

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"

	"github.com/weirdata/weir/memory"
)

// Snapshot format version 2 adds a schema frame per state and timer service
// after the header, before the sections (frame type frameSchema):
//
//	uvarint name length | name | kind byte | key | namespace | value | user key
//
// each of the four a uvarint length and the type's memory.SchemaOf bytes; a
// timer service has no value and only a map state a user key (length 0). A
// state without a schema frame (every state of a version 1 snapshot) is read
// as the program's types are.
const frameSchema = 7

// stateSchema is what a snapshot records of a state's types: the schemas of
// its key, namespace, value and, for map state, user key. Operator states
// use key (broadcast state) and value, and kind holds their Distribution.
type stateSchema struct {
	name                    string
	kind                    Kind
	key, ns, value, userKey []byte
}

// equal reports whether s and o describe the same types.
func (s *stateSchema) equal(o *stateSchema) bool {
	return bytes.Equal(s.key, o.key) && bytes.Equal(s.ns, o.ns) && bytes.Equal(s.value, o.value) && bytes.Equal(s.userKey, o.userKey)
}

// schemaOf returns the schemas of a keyed state of key K, namespace N, value
// V and, unless UK is Void, user key UK.
func schemaOf[K, N, V, UK any](name string, k Kind) (*stateSchema, error) {
	s := &stateSchema{name: name, kind: k}
	var err error
	if s.key, err = memory.SchemaOf[K](); err != nil {
		return nil, err
	}
	if s.ns, err = memory.SchemaOf[N](); err != nil {
		return nil, err
	}
	if k != kindTimers {
		if s.value, err = memory.SchemaOf[V](); err != nil {
			return nil, err
		}
	}
	if k == KindMap {
		if s.userKey, err = memory.SchemaOf[UK](); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// appendSchemas appends the four schemas, each with its length.
func appendSchemas(dst []byte, s *stateSchema) []byte {
	for _, b := range [][]byte{s.key, s.ns, s.value, s.userKey} {
		dst = appendUvarint(dst, uint64(len(b)))
		dst = append(dst, b...)
	}
	return dst
}

// readSchemas reads what appendSchemas wrote into s.
func readSchemas(d *dec, s *stateSchema) {
	for _, p := range []*[]byte{&s.key, &s.ns, &s.value, &s.userKey} {
		*p = bytes.Clone(d.Bytes(d.Uvarint()))
	}
}

// check reports a schema frame SchemaOf could not have written.
func (s *stateSchema) check() error {
	if s.kind < KindValue || s.kind > kindTimers {
		return fmt.Errorf("%w: schema of state %q of kind %d", ErrCorruptSnapshot, s.name, s.kind)
	}
	for _, f := range []struct {
		what string
		b    []byte
		want bool
	}{{"key", s.key, true}, {"namespace", s.ns, true}, {"value", s.value, s.kind != kindTimers}, {"user key", s.userKey, s.kind == KindMap}} {
		if len(f.b) == 0 && !f.want {
			continue
		}
		if len(f.b) == 0 || !f.want {
			return fmt.Errorf("%w: schema of %s %q: %s schema of %d bytes", ErrCorruptSnapshot, s.kind, s.name, f.what, len(f.b))
		}
		if _, err := memory.ParseSchema(f.b); err != nil {
			return fmt.Errorf("%w: schema of %s %q: %s: %v", ErrCorruptSnapshot, s.kind, s.name, f.what, err)
		}
	}
	return nil
}

// parseSchemaFrame parses a schema frame's payload.
func parseSchemaFrame(payload []byte) (*stateSchema, error) {
	d := newDec(payload)
	s := &stateSchema{}
	s.name = string(d.Bytes(d.Uvarint()))
	s.kind = Kind(d.Byte())
	readSchemas(&d, s)
	if d.Err == nil && len(d.B) != 0 {
		d.Fail("%d bytes after the schemas", len(d.B))
	}
	if d.Err != nil {
		return nil, fmt.Errorf("%w: schema frame: %v", ErrCorruptSnapshot, d.Err)
	}
	return s, s.check()
}

// schemaText is a schema's text form for messages.
func schemaText(b []byte) string {
	if len(b) == 0 {
		return "none"
	}
	t, err := memory.ParseSchema(b)
	if err != nil {
		return "a bad schema"
	}
	return t
}

// schemaFrames returns the schemas of what a snapshot writes sections of,
// in the order of their frames: the registered states (withStates), the
// states in the store not registered since an incremental restore
// (withStates), the timer services and the restored sections not
// registered yet, which keep the schema they were written with. A schema
// does not change once made: a capture may keep them for a later write.
func (b *Backend[K]) schemaFrames(withStates bool) []*stateSchema {
	var all []*stateSchema
	if withStates {
		for name := range b.states {
			all = append(all, b.schemas[pendingKey(name, false)])
		}
		for name, m := range b.ids {
			if _, ok := b.states[name]; !ok {
				all = append(all, m.schema)
			}
		}
	}
	if withStates || b.store == nil { // else the store's timers are in its files
		for name := range b.timers {
			all = append(all, b.schemas[pendingKey(name, true)])
		}
		for name, m := range b.tids {
			if _, ok := b.timers[name]; !ok {
				all = append(all, m.schema)
			}
		}
	}
	for _, secs := range b.pending {
		all = append(all, secs[0].schema)
	}
	all = slices.DeleteFunc(all, func(s *stateSchema) bool { return s == nil })
	slices.SortFunc(all, func(x, y *stateSchema) int {
		if (x.kind == kindTimers) != (y.kind == kindTimers) {
			if x.kind == kindTimers {
				return 1
			}
			return -1
		}
		return cmpString(x.name, y.name)
	})
	return all
}

// writeSchemaFrames writes a schema frame of each of schemas.
func writeSchemaFrames(bw *bufio.Writer, schemas []*stateSchema) error {
	var p []byte
	for _, s := range schemas {
		p = appendUvarint(p[:0], uint64(len(s.name)))
		p = append(p, s.name...)
		p = append(p, byte(s.kind))
		p = appendSchemas(p, s)
		if err := writeFrame(bw, frameSchema, p); err != nil {
			return err
		}
	}
	return nil
}

// SchemaInfo is the schema a snapshot records of a state: the text forms
// of its types' memory schemas ("struct { A int64; B string }"), empty where
// the state has none (a timer service's value, a user key of other than a
// map state).
type SchemaInfo struct {
	Name, Kind                     string
	Key, Namespace, Value, UserKey string
}

func schemaInfo(s *stateSchema, kind string) SchemaInfo {
	text := func(b []byte) string {
		if len(b) == 0 {
			return ""
		}
		return schemaText(b)
	}
	return SchemaInfo{Name: s.name, Kind: kind, Key: text(s.key), Namespace: text(s.ns), Value: text(s.value), UserKey: text(s.userKey)}
}

// addSchema parses a schema frame into schemas: version 2 only, before the
// sections, once per state.
func addSchema(schemas map[string]*stateSchema, payload []byte, version, sections uint64) error {
	if version < 2 || sections > 0 {
		return fmt.Errorf("%w: a schema frame in a version %d snapshot after %d sections", ErrCorruptSnapshot, version, sections)
	}
	s, err := parseSchemaFrame(payload)
	if err != nil {
		return err
	}
	key := pendingKey(s.name, s.kind == kindTimers)
	if schemas[key] != nil {
		return fmt.Errorf("%w: two schemas of state %q", ErrCorruptSnapshot, s.name)
	}
	schemas[key] = s
	return nil
}

// schemaFor returns the schema a section's entries were written with, nil
// when the snapshot has none for its state.
func schemaFor(schemas map[string]*stateSchema, sec *section) (*stateSchema, error) {
	s := schemas[pendingKey(sec.name, sec.kind == kindTimers)]
	if s != nil && s.kind != sec.kind {
		return nil, fmt.Errorf("%w: state %q has the schema of a %s and a section of a %s", ErrCorruptSnapshot, sec.name, s.kind, sec.kind)
	}
	return s, nil
}

// String prints the schemas for messages and tests.
func (s *stateSchema) String() string {
	return fmt.Sprintf("%s %q {key %s; namespace %s; value %s; user key %s}",
		s.kind, s.name, schemaText(s.key), schemaText(s.ns), schemaText(s.value), schemaText(s.userKey))
}
