package state

import (
	"errors"
	"fmt"
	"slices"

	"github.com/weirdata/weir/memory"
)

// Distribution is how a restore hands an operator state's entries to the
// subtasks of the new parallelism, as Flink's OperatorStateHandle.Mode.
type Distribution uint8

// The distributions of operator state.
const (
	// SplitDistribute is Flink's getListState: the entries of every old
	// subtask, in subtask order, split evenly over the new subtasks.
	SplitDistribute Distribution = iota + 1
	// Union is Flink's getUnionListState: every new subtask gets the entries
	// of every old subtask.
	Union
	// Broadcast is Flink's broadcast state: every subtask holds the same map,
	// and every new subtask gets a copy of one old subtask's.
	Broadcast
)

func (d Distribution) String() string {
	switch d {
	case SplitDistribute:
		return "split-distribute list state"
	case Union:
		return "union list state"
	case Broadcast:
		return "broadcast state"
	}
	return fmt.Sprintf("Distribution(%d)", uint8(d))
}

// OperatorOptions configure an OperatorStore.
type OperatorOptions struct {
	// Name names the operator in errors and in the memory reservation's owner.
	Name string
	// Memory is the job's memory manager; the store's estimated bytes are
	// counted against a reservation on it. Nil gives an unlimited manager of
	// the store's own.
	Memory *memory.Manager
}

// opState is an operator state registered by name.
type opState interface {
	stateName() string
	mode() Distribution
	// write appends the entries, each its Codec bytes, and their number.
	write(dst [][]byte, scratch []byte) ([][]byte, []byte)
	// read adds entries written by write.
	read(entries [][]byte) error
	drop()
}

// OperatorStore is Flink's OperatorStateStore (the heap
// DefaultOperatorStateBackend) of one operator instance: the non-keyed states
// it registered by name, list states that a restore splits or unions over
// the new subtasks, and broadcast states. See the package doc for the
// contracts; an OperatorStore is used by one goroutine.
type OperatorStore struct {
	name    string
	states  map[string]opState
	pending map[string]opSection    // restored sections of states not yet registered
	schemas map[string]*stateSchema // the registered states' schemas
	err     error

	mem      *memory.Manager
	ownMem   bool
	res      *memory.Reservation
	used     int64
	reserved int64
	disposed bool
}

// NewOperatorStore returns an empty operator state store.
func NewOperatorStore(o OperatorOptions) *OperatorStore {
	s := &OperatorStore{name: o.Name, states: map[string]opState{}, pending: map[string]opSection{}, schemas: map[string]*stateSchema{}, mem: o.Memory}
	if s.mem == nil {
		s.mem, s.ownMem = memory.MustNewManager(memory.Options{}), true
	}
	s.res = s.mem.NewReservation("operator state: " + o.Name)
	return s
}

// Err returns the first error a state access met (the memory budget
// exceeded), or nil; the operator runtime checks it once per batch.
func (s *OperatorStore) Err() error { return s.err }

// MemoryUsed returns the estimated bytes of the store's states.
func (s *OperatorStore) MemoryUsed() int64 { return s.used }

// Names returns the names of the registered states, sorted.
func (s *OperatorStore) Names() []string {
	out := make([]string, 0, len(s.states))
	for n := range s.states {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Dispose drops every state and releases the store's memory; the store must
// not be used afterwards.
func (s *OperatorStore) Dispose() error {
	if s.disposed {
		return fmt.Errorf("state: %s: operator state disposed twice", s.name)
	}
	s.disposed = true
	for _, st := range s.states {
		st.drop()
	}
	s.states, s.pending = nil, nil
	s.used, s.reserved = 0, 0
	err := s.res.Release()
	if s.ownMem {
		err = errors.Join(err, s.mem.Close())
	}
	if err != nil {
		return fmt.Errorf("state: %s: %w", s.name, err)
	}
	return nil
}

// lookupOp returns the state registered under name as a T, or reports that
// none is; a state of another kind or type under that name is an error.
func lookupOp[T opState](s *OperatorStore, name string, d Distribution) (T, bool, error) {
	var zero T
	if s.disposed {
		return zero, false, fmt.Errorf("state: %s: operator state %q asked of a disposed store", s.name, name)
	}
	if name == "" {
		return zero, false, fmt.Errorf("state: %s: a %s needs a name", s.name, d)
	}
	st, ok := s.states[name]
	if !ok {
		return zero, false, nil
	}
	t, ok := st.(T)
	if !ok || st.mode() != d {
		return zero, false, fmt.Errorf("state: %s: operator state %q is a %s of other types, asked as a %s", s.name, name, st.mode(), d)
	}
	return t, true, nil
}

// register adds a state under its name and ingests what a restore kept for it.
func (s *OperatorStore) register(st opState) error {
	if err := s.registerSchema(st); err != nil {
		return err
	}
	s.states[st.stateName()] = st
	sec, ok := s.pending[st.stateName()]
	if !ok {
		return nil
	}
	delete(s.pending, st.stateName())
	s.shrink(sec.bytes())
	if sec.mode != st.mode() {
		return fmt.Errorf("state: %s: operator state %q was snapshotted as a %s and is registered as a %s", s.name, sec.name, sec.mode, st.mode())
	}
	if err := s.migrateFor(st, &sec); err != nil {
		return fmt.Errorf("state: %s: restore: %w", s.name, err)
	}
	if err := st.read(sec.entries); err != nil {
		return fmt.Errorf("state: %s: restore operator state %q: %w", s.name, sec.name, err)
	}
	return nil
}

func (s *OperatorStore) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// grow counts n more bytes for the state named what, a chunk at a time; past
// the budget it keeps the error and the write.
func (s *OperatorStore) grow(n int64, what string) {
	s.used += n
	if s.used <= s.reserved || s.disposed {
		return
	}
	need, err := reserve(s.res, s.mem, s.reserved, s.used, n, s.name, what, "operator")
	if err != nil {
		s.fail(err)
	}
	s.reserved += need
}

// shrink uncounts n bytes and returns whole chunks once two are unused, and
// all of them when the store is empty.
func (s *OperatorStore) shrink(n int64) {
	s.used -= n
	if s.disposed || (s.reserved-s.used < 2*chunk && (s.used != 0 || s.reserved == 0)) {
		return
	}
	target := (s.used + chunk - 1) / chunk * chunk
	s.res.Shrink(s.reserved - target)
	s.reserved = target
}
