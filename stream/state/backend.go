package state

import (
	"errors"
	"fmt"
	"time"

	"github.com/weirdata/weir/memory"
)

// Options configure a Backend.
type Options struct {
	// Name names the operator in errors and in the memory reservation's owner.
	Name string
	// MaxParallelism is the number of key groups, 1..32768 (see
	// DefaultMaxParallelism). It cannot change across a restore.
	MaxParallelism int
	// Groups are the key groups this backend owns: a non-empty range within
	// [0, MaxParallelism), RangeForOperatorIndex's for an operator instance.
	Groups KeyGroupRange
	// Memory is the job's memory manager; the backend's estimated bytes are
	// counted against a reservation on it. Nil gives an unlimited manager of
	// the backend's own.
	Memory *memory.Manager
	// Clock returns the time in milliseconds that TTL stamps and checks state
	// by (Flink's TTL is processing time). Nil is the wall clock.
	Clock func() int64
	// Store, when set, makes the backend a disk backend: the keyed states
	// and the timers live in the store. The backend closes it on Dispose.
	// Nil is the heap backend.
	Store Store
	// TimerCache is the number of timers a disk backend's timer service
	// keeps in memory per queue (event time, processing time), spread over
	// the key groups with at least one per group; zero is
	// DefaultTimerCache.
	TimerCache int
	// Shared are the shared files of the checkpoint storage a disk backend
	// writes incremental snapshots to (SnapshotIncremental) and restores
	// them from.
	Shared SharedFiles
}

// ErrNoKey is kept in Err when state is used without a current key of the
// backend's key groups.
var ErrNoKey = errors.New("state: no current key")

// chunk is the step in which the backend grows and shrinks its reservation, so
// that a write touches the shared manager once per chunk, not per entry.
const chunk = 16 << 10

// Backend is the heap keyed state backend of one operator instance: the keyed
// states it registered by name, its timer services, and the current key every
// state access and timer registration refers to. See the package doc for the
// contracts; a Backend is used by one goroutine.
type Backend[K comparable] struct {
	name    string
	maxP    int
	groups  KeyGroupRange
	hash    HashFunc[K]
	clock   func() int64
	key     K
	code    int32 // the current key's hash code, when coded
	coded   bool
	group   int
	idx     int    // group - groups.Start, or -1 without a current key
	epoch   uint64 // counts SetCurrentKey calls: states cache per current key
	states  map[string]registered
	timers  map[string]registered
	slotted []prefetcher         // the states whose entries are in slotTables
	sink    uint8                // what Prefetch read, kept so that its loads stay
	pending map[string][]section // restored sections of states not yet registered
	err     error
	cow     cow // the copy-on-write versions of the heap's captures

	mem      *memory.Manager
	ownMem   bool
	res      *memory.Reservation
	used     int64
	reserved int64
	scratch  []byte
	disposed bool

	store  Store                // nil on the heap
	shared SharedFiles          // for incremental snapshots
	ids    map[string]storeMeta // the states in the store, registered or restored
	tids   map[string]storeMeta // the timer services in the store, registered or restored
	nextID uint16               // the highest id in ids and tids

	timerCache int // Options.TimerCache

	// the registered states' and timer services' schemas, by pendingKey
	schemas map[string]*stateSchema
}

// NewBackend returns an empty backend for keys of type K.
func NewBackend[K comparable](o Options) (*Backend[K], error) {
	if o.MaxParallelism <= 0 || o.MaxParallelism > UpperBoundMaxParallelism {
		return nil, fmt.Errorf("state: %s: %w: max parallelism %d not within 1..%d", o.Name, ErrParallelism, o.MaxParallelism, UpperBoundMaxParallelism)
	}
	if o.Groups.Len() == 0 || o.Groups.Start < 0 || o.Groups.End >= o.MaxParallelism {
		return nil, fmt.Errorf("state: %s: key groups %v not a non-empty range within [0, %d)", o.Name, o.Groups, o.MaxParallelism)
	}
	h, err := NewHashFunc[K]()
	if err != nil {
		return nil, err
	}
	b := &Backend[K]{
		name: o.Name, maxP: o.MaxParallelism, groups: o.Groups, hash: h, clock: o.Clock, idx: -1,
		states: map[string]registered{}, timers: map[string]registered{}, pending: map[string][]section{},
		mem: o.Memory, store: o.Store, shared: o.Shared, ids: map[string]storeMeta{}, tids: map[string]storeMeta{},
		timerCache: o.TimerCache,
	}
	if b.clock == nil {
		b.clock = func() int64 { return time.Now().UnixMilli() }
	}
	if b.mem == nil {
		b.mem, b.ownMem = memory.MustNewManager(memory.Options{}), true
	}
	b.res = b.mem.NewReservation("state: " + o.Name)
	return b, nil
}

// MaxParallelism returns the number of key groups.
func (b *Backend[K]) MaxParallelism() int { return b.maxP }

// Groups returns the key groups the backend owns.
func (b *Backend[K]) Groups() KeyGroupRange { return b.groups }

// KeyGroup returns the key group of k.
func (b *Backend[K]) KeyGroup(k K) int { return KeyGroupForHash(b.hash(k), b.maxP) }

// SetCurrentKey makes k the key that state accesses and timer registrations
// refer to, computing its key group once. A key outside the backend's groups
// (a routing bug) is kept in Err and makes state accesses no-ops.
func (b *Backend[K]) SetCurrentKey(k K) {
	code := b.hash(k)
	b.SetCurrentKeyCode(k, code, KeyGroupForHash(code, b.maxP))
}

// KeyCode returns k's hash code, the one its key group is computed from.
func (b *Backend[K]) KeyCode(k K) int32 { return b.hash(k) }

// SetCurrentKeyCode is SetCurrentKey with k's hash code (KeyCode) and its
// key group (KeyGroupForHash of the code) computed by the caller.
func (b *Backend[K]) SetCurrentKeyCode(k K, code int32, group int) {
	b.key, b.code, b.coded, b.group = k, code, true, group
	b.epoch++
	if idx := group - b.groups.Start; idx >= 0 && group <= b.groups.End {
		b.idx = idx
		return
	}
	b.outside(group)
}

// Prefetch reads where the entries of keys with the given hash codes, in
// the given key groups, start in the single-value states of the Void
// namespace, without changing anything: an operator that calls it for a run
// of records before processing them lets the memory loads of their keys
// overlap instead of waiting for each in turn.
func (b *Backend[K]) Prefetch(codes []int32, groups []int32) {
	for _, p := range b.slotted {
		b.sink += p.prefetch(codes, groups, b.groups.Start)
	}
}

// SetCurrentKeyInGroup is SetCurrentKey with k's key group computed by the
// caller (the exchange that routed the record computed it already).
func (b *Backend[K]) SetCurrentKeyInGroup(k K, group int) {
	b.key, b.coded, b.group = k, false, group
	b.epoch++
	if idx := group - b.groups.Start; idx >= 0 && group <= b.groups.End {
		b.idx = idx
		return
	}
	b.outside(group)
}

// outside records a current key outside the backend's groups.
func (b *Backend[K]) outside(group int) {
	b.idx = -1
	b.fail(fmt.Errorf("state: %s: key group %d is not one of the backend's key groups %v: %w", b.name, group, b.groups, ErrNoKey))
}

// ClearCurrentKey leaves the backend without a current key: state accesses
// are no-ops that keep ErrNoKey in Err until the next SetCurrentKey (the
// broadcast side of a keyed broadcast operator has no key).
func (b *Backend[K]) ClearCurrentKey() {
	var zero K
	b.key, b.coded, b.group, b.idx = zero, false, 0, -1
	b.epoch++ // no cell found for the last key is current any more
}

// keyCode returns the current key's hash code, computing it once per key.
func (b *Backend[K]) keyCode() int32 {
	if !b.coded {
		b.code, b.coded = b.hash(b.key), true
	}
	return b.code
}

// CurrentKey returns the current key.
func (b *Backend[K]) CurrentKey() K { return b.key }

// CurrentKeyGroup returns the current key's group.
func (b *Backend[K]) CurrentKeyGroup() int { return b.group }

// Err returns the first error a state access met (a budget exceeded, a key
// outside the backend's groups), or nil. The operator runtime checks it once
// per batch and fails the task with it.
func (b *Backend[K]) Err() error { return b.err }

// MemoryUsed returns the estimated bytes of the backend's state and timers.
func (b *Backend[K]) MemoryUsed() int64 { return b.used }

// Dispose drops all state and timers and releases the backend's memory. It
// returns the error of releasing; the backend must not be used afterwards.
func (b *Backend[K]) Dispose() error {
	if b.disposed {
		return fmt.Errorf("state: %s: disposed twice", b.name)
	}
	b.disposed = true
	for _, s := range b.states {
		if b.store == nil { // a store's entries go with it
			s.drop()
		}
	}
	for _, s := range b.timers {
		s.drop()
	}
	b.states, b.timers, b.pending, b.slotted = nil, nil, nil, nil
	b.used, b.reserved = 0, 0
	err := b.res.Release()
	if b.store != nil {
		if cerr := b.store.Close(); err == nil {
			err = cerr
		}
		b.store = nil
	}
	if b.ownMem {
		if cerr := b.mem.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("state: %s: %w", b.name, err)
	}
	return nil
}

// Clear drops every entry of every state and every timer, returning their
// bytes, and keeps the states and timer services registered: Flink's BATCH
// execution holds one key's state at a time and drops it when the key ends.
func (b *Backend[K]) Clear() {
	for _, s := range b.states {
		s.drop()
	}
	for name, m := range b.ids {
		if _, ok := b.states[name]; !ok {
			b.storeDrop(m.id)
		}
	}
	for name, m := range b.tids {
		if _, ok := b.timers[name]; !ok {
			b.storeDrop(m.id)
		}
	}
	for _, s := range b.timers {
		s.drop()
	}
}

func (b *Backend[K]) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// at returns the current key's group index, or -1 after recording ErrNoKey.
func (b *Backend[K]) at() int {
	if b.idx < 0 && b.err == nil {
		b.err = fmt.Errorf("state: %s: state accessed before SetCurrentKey: %w", b.name, ErrNoKey)
	}
	return b.idx
}

func (b *Backend[K]) now() int64 { return b.clock() }

// grow counts n more bytes for the state named what, growing the reservation
// a chunk at a time; past the budget it keeps the error (the write is kept, so
// the state stays consistent until the runtime fails the task).
func (b *Backend[K]) grow(n int64, what string) {
	b.used += n
	if b.used <= b.reserved || b.disposed {
		return
	}
	need, err := reserve(b.res, b.mem, b.reserved, b.used, n, b.name, what, "keyed")
	if err != nil {
		b.fail(err)
	}
	b.reserved += need
}

// shrink uncounts n bytes and returns whole chunks once two are unused, and
// all of them when the state is empty.
func (b *Backend[K]) shrink(n int64) {
	b.used -= n
	if b.disposed || (b.reserved-b.used < 2*chunk && (b.used != 0 || b.reserved == 0)) {
		return
	}
	target := (b.used + chunk - 1) / chunk * chunk
	b.res.Shrink(b.reserved - target)
	b.reserved = target
}

// resize counts a change from old to new bytes.
func (b *Backend[K]) resize(old, new int64, what string) {
	if new > old {
		b.grow(new-old, what)
	} else if new < old {
		b.shrink(old - new)
	}
}

// register adds a state or timer service under its name, after checking that
// the name is free, and ingests the sections restored for it.
func (b *Backend[K]) register(r registered, timers bool) error {
	if b.disposed {
		return fmt.Errorf("state: %s: register %q on a disposed backend", b.name, r.stateName())
	}
	if err := b.registerSchema(r, timers); err != nil {
		return err
	}
	if timers {
		b.timers[r.stateName()] = r
	} else {
		b.states[r.stateName()] = r
		if p, ok := r.(prefetcher); ok && p.slotted() {
			b.slotted = append(b.slotted, p)
		}
	}
	key := pendingKey(r.stateName(), timers)
	secs := b.pending[key]
	delete(b.pending, key)
	for _, s := range secs {
		b.shrink(int64(len(s.data)))
		if err := b.ingest(r, s); err != nil {
			return fmt.Errorf("state: %s: restore: %w", b.name, err)
		}
	}
	return nil
}

func pendingKey(name string, timers bool) string {
	if timers {
		return "t:" + name
	}
	return "s:" + name
}
