package state

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/weirdata/weir/memory"
)

// ErrMigration is wrapped by the errors of restores whose state cannot be
// read by the program's types: a key, namespace or map user key whose
// schema changed, a value whose schema changed incompatibly, a value whose
// schema changed in an incremental snapshot (Flink's
// StateMigrationException).
var ErrMigration = errors.New("state: state migration failed")

// schemed is a state or timer service whose types a snapshot records.
type schemed interface {
	// schema returns the schema of the state's types as they are now.
	schema() (*stateSchema, error)
	// migrateFrom makes the next reads of snapshot entries decode values
	// written under schema old (nil: the state's own) into the state's type.
	migrateFrom(old []byte) error
}

// migration reads values of an older schema into T while a restore
// ingests them; the zero migration reads T's own.
type migration[T any] struct {
	from []byte
	m    *memory.Migration[T]
}

// migrateFrom sets up the reading of values written under schema old.
func (s *sizer[T]) migrateFrom(old []byte) error {
	if old == nil {
		s.mig = migration[T]{}
		return nil
	}
	if s.mig.from != nil && bytes.Equal(s.mig.from, old) {
		return nil
	}
	m, err := memory.NewMigration[T](old)
	if err != nil {
		return err
	}
	s.mig = migration[T]{from: old, m: m}
	return nil
}

// decodeValue decodes a snapshot's value through the sizer's migration.
func decodeValue[T any](d *dec, s *sizer[T], v *T) {
	if s.mig.m == nil {
		decodeInto(d, s.codec, v)
		return
	}
	if d.Err != nil {
		return
	}
	n, err := s.mig.m.Decode(d.B, v)
	if err != nil {
		d.Err = err
		return
	}
	d.B = d.B[n:]
}

// migrating reports whether values are read through a migration: a disk
// backend then encodes them again instead of copying their bytes.
func (s *sizer[T]) migrating() bool { return s.mig.m != nil }

func (s *cells[K, N, V]) migrateFrom(old []byte) error { return s.vs.migrateFrom(old) }
func (s *List[K, N, V]) migrateFrom(old []byte) error  { return s.vs.migrateFrom(old) }
func (s *Map[K, N, UK, UV]) migrateFrom(old []byte) error {
	return s.vs.migrateFrom(old)
}
func (t *Timers[K, N]) migrateFrom([]byte) error { return nil }

func (s *Value[K, N, V]) schema() (*stateSchema, error) {
	return schemaOf[K, N, V, Void](s.name, KindValue)
}
func (s *Reducing[K, N, V]) schema() (*stateSchema, error) {
	return schemaOf[K, N, V, Void](s.name, KindReducing)
}
func (s *Aggregating[K, N, IN, ACC, OUT]) schema() (*stateSchema, error) {
	return schemaOf[K, N, ACC, Void](s.name, KindAggregating)
}
func (s *List[K, N, V]) schema() (*stateSchema, error) {
	return schemaOf[K, N, V, Void](s.name, KindList)
}
func (s *Map[K, N, UK, UV]) schema() (*stateSchema, error) {
	return schemaOf[K, N, UV, UK](s.name, KindMap)
}
func (t *Timers[K, N]) schema() (*stateSchema, error) {
	return schemaOf[K, N, Void, Void](t.name, kindTimers)
}

// registerSchema records the schema of a state or timer service being
// registered; a state the store holds from an incremental restore must
// have kept its schema.
func (b *Backend[K]) registerSchema(r registered, timers bool) error {
	sc, ok := r.(schemed)
	if !ok {
		return nil
	}
	cur, err := sc.schema()
	if err != nil {
		return fmt.Errorf("state: %s: %w", b.name, err)
	}
	if b.schemas == nil {
		b.schemas = map[string]*stateSchema{}
	}
	b.schemas[pendingKey(r.stateName(), timers)] = cur
	if m, ok := b.ids[r.stateName()]; ok && !timers && m.schema != nil {
		if err := b.checkStored(m.schema, cur); err != nil {
			return fmt.Errorf("state: %s: %w", b.name, err)
		}
	}
	if m, ok := b.tids[r.stateName()]; ok && timers && m.schema != nil {
		if err := b.checkKeys(m.schema, cur); err != nil {
			return fmt.Errorf("state: %s: %w", b.name, err)
		}
	}
	return nil
}

// migrateFor prepares state r to read section sec: its key, namespace and
// user key must not have changed, and its values are migrated from the
// schema they were written with.
func (b *Backend[K]) migrateFor(r registered, sec *section) error {
	sc, ok := r.(schemed)
	if !ok {
		return nil
	}
	cur := b.schemas[pendingKey(r.stateName(), r.kind() == kindTimers)]
	old := sec.schema
	if old == nil || cur == nil {
		return sc.migrateFrom(nil)
	}
	if err := b.checkKeys(old, cur); err != nil {
		return err
	}
	if err := sc.migrateFrom(old.value); err != nil {
		heap := "for heap backends, the new"
		if b.store != nil {
			heap = "the new"
		}
		return fmt.Errorf("%s %q: %s state serializer (%s) must not be incompatible with the old state serializer (%s): %w: %w",
			cur.kind, cur.name, heap, schemaText(cur.value), schemaText(old.value), err, ErrMigration)
	}
	return nil
}

// checkKeys refuses a change of a state's key, namespace or user key
// schema, in Flink's words: keys select the key group and the entry, and
// do not migrate.
func (b *Backend[K]) checkKeys(old, cur *stateSchema) error {
	heap := "for heap backends, the new"
	if b.store != nil {
		heap = "the new"
	}
	switch {
	case !bytes.Equal(old.key, cur.key):
		return fmt.Errorf("%s %q: the new key serializer (%s) must be compatible with the previous key serializer (%s): %w",
			cur.kind, cur.name, schemaText(cur.key), schemaText(old.key), ErrMigration)
	case !bytes.Equal(old.ns, cur.ns):
		return fmt.Errorf("%s %q: %s namespace serializer (%s) must be compatible with the old namespace serializer (%s): %w",
			cur.kind, cur.name, heap, schemaText(cur.ns), schemaText(old.ns), ErrMigration)
	case !bytes.Equal(old.userKey, cur.userKey):
		return fmt.Errorf("%s %q: the new serializer for a MapState requires state migration in order for the job to proceed, "+
			"since the key schema has changed (user key %s, previously %s); however, migration for MapState currently only allows value schema evolutions: %w",
			cur.kind, cur.name, schemaText(cur.userKey), schemaText(old.userKey), ErrMigration)
	}
	return nil
}

// checkStored checks a state of the store, restored from an incremental
// snapshot, against its registration: the store's files hold its entries
// as they were written and cannot be migrated in place.
func (b *Backend[K]) checkStored(old, cur *stateSchema) error {
	if err := b.checkKeys(old, cur); err != nil {
		return err
	}
	if !bytes.Equal(old.value, cur.value) {
		return fmt.Errorf("%s %q: the state's value schema changed (%s in the snapshot, %s now), and an incremental snapshot "+
			"holds the disk store's files, which cannot be migrated in place: restore from a savepoint, whose keyed state is a full, canonical snapshot: %w",
			cur.kind, cur.name, schemaText(old.value), schemaText(cur.value), ErrMigration)
	}
	return nil
}

// placePending checks that a section kept for a state not registered has
// the schema of the ones kept before it: until the state is registered,
// snapshots write its sections again under one schema frame.
func placePending(p []section, sec *section) error {
	if len(p) == 0 {
		return nil
	}
	a, b := p[0].schema, sec.schema
	if (a == nil) != (b == nil) || (a != nil && !a.equal(b)) {
		return fmt.Errorf("%s %q: restored sections of two schemas; the program must register the state to restore both: %w",
			sec.kind, sec.name, ErrMigration)
	}
	return nil
}

// Operator state: a list's elements and a broadcast state's values migrate
// as keyed values do; a broadcast state's keys do not.

func (l *OperatorList[V]) schema() (*stateSchema, error) {
	v, err := memory.SchemaOf[V]()
	return &stateSchema{name: l.name, value: v}, err
}

func (l *OperatorList[V]) migrateFrom(old []byte) error { return l.vs.migrateFrom(old) }

func (b *BroadcastState[K, V]) schema() (*stateSchema, error) {
	k, err := memory.SchemaOf[K]()
	if err != nil {
		return nil, err
	}
	v, err := memory.SchemaOf[V]()
	return &stateSchema{name: b.name, key: k, value: v}, err
}

func (b *BroadcastState[K, V]) migrateFrom(old []byte) error { return b.vs.migrateFrom(old) }

// appendOpSchema appends an operator section's schemas: 0 without, else 1,
// the key's and the value's.
func appendOpSchema(dst []byte, s *stateSchema) []byte {
	if s == nil {
		return append(dst, 0)
	}
	dst = append(dst, 1)
	dst = appendUvarint(dst, uint64(len(s.key)))
	dst = append(dst, s.key...)
	dst = appendUvarint(dst, uint64(len(s.value)))
	return append(dst, s.value...)
}

// readOpSchema reads what appendOpSchema wrote.
func readOpSchema(d *dec, name string, mode Distribution) *stateSchema {
	switch d.Byte() {
	case 0:
		return nil
	case 1:
		s := &stateSchema{name: name, kind: Kind(mode)}
		s.key = bytes.Clone(d.Bytes(d.Uvarint()))
		s.value = bytes.Clone(d.Bytes(d.Uvarint()))
		return s
	}
	d.Fail("schema flag not 0 or 1")
	return nil
}

// checkOp reports operator schemas SchemaOf could not have written: a
// value always, a key for broadcast state only.
func (s *stateSchema) checkOp() error {
	broadcast := Distribution(s.kind) == Broadcast
	if len(s.value) == 0 || (len(s.key) == 0) == broadcast {
		return fmt.Errorf("%w: operator state %q: schemas of %d and %d bytes", ErrCorruptSnapshot, s.name, len(s.key), len(s.value))
	}
	for _, b := range [][]byte{s.key, s.value} {
		if len(b) == 0 {
			continue
		}
		if _, err := memory.ParseSchema(b); err != nil {
			return fmt.Errorf("%w: operator state %q: %v", ErrCorruptSnapshot, s.name, err)
		}
	}
	return nil
}

// sameOpSchema reports whether two sections of an operator state were
// written under one schema (or both under none).
func sameOpSchema(a, b *stateSchema) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.equal(b)
}

// registerSchema records the schema of an operator state being registered.
func (s *OperatorStore) registerSchema(st opState) error {
	sc, ok := st.(schemed)
	if !ok {
		return nil
	}
	cur, err := sc.schema()
	if err != nil {
		return fmt.Errorf("state: %s: %w", s.name, err)
	}
	cur.kind = Kind(st.mode())
	s.schemas[st.stateName()] = cur
	return nil
}

// migrateFor prepares operator state st to read section sec, in Flink's
// words where it refuses.
func (s *OperatorStore) migrateFor(st opState, sec *opSection) error {
	sc, ok := st.(schemed)
	if !ok {
		return nil
	}
	cur, old := s.schemas[st.stateName()], sec.schema
	if old == nil || cur == nil {
		return sc.migrateFrom(nil)
	}
	if !bytes.Equal(old.key, cur.key) {
		return fmt.Errorf("%s %q: the new key serializer (%s) must be compatible with the previous key serializer (%s): "+
			"the new key typeSerializer for broadcast state must not be incompatible: %w",
			st.mode(), st.stateName(), schemaText(cur.key), schemaText(old.key), ErrMigration)
	}
	if err := sc.migrateFrom(old.value); err != nil {
		what := "the new state typeSerializer for operator state"
		if st.mode() == Broadcast {
			what = "the new value typeSerializer for broadcast state"
		}
		return fmt.Errorf("%s %q: %s (%s) must not be incompatible with the old one (%s): %w: %w",
			st.mode(), st.stateName(), what, schemaText(cur.value), schemaText(old.value), err, ErrMigration)
	}
	return nil
}

// checkIncremental checks the states of an incremental snapshot against
// the registered ones, and against the schemas of states an earlier
// incremental restore brought: the store's entries are copied as they are.
func (b *Backend[K]) checkIncremental(inc *incremental) error {
	for name, m := range inc.states {
		if m.schema == nil {
			continue
		}
		if _, ok := b.states[name]; ok {
			if cur := b.schemas[pendingKey(name, false)]; cur != nil {
				if err := b.checkStored(m.schema, cur); err != nil {
					return err
				}
			}
			continue
		}
		if have, ok := b.ids[name]; ok && have.schema != nil && !have.schema.equal(m.schema) {
			return fmt.Errorf("%s %q: incremental snapshots of two schemas: %w", m.kind, name, ErrMigration)
		}
	}
	for name, m := range inc.timers {
		if m.schema == nil {
			continue
		}
		if _, ok := b.timers[name]; ok {
			if cur := b.schemas[pendingKey(name, true)]; cur != nil {
				if err := b.checkKeys(m.schema, cur); err != nil {
					return err
				}
			}
			continue
		}
		if have, ok := b.tids[name]; ok && have.schema != nil && !have.schema.equal(m.schema) {
			return fmt.Errorf("%s %q: incremental snapshots of two schemas: %w", m.kind, name, ErrMigration)
		}
	}
	return nil
}
