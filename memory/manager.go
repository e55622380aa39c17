package memory

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
)

// DefaultSegmentSize is the size of a segment when Options.SegmentSize is zero.
const DefaultSegmentSize = 32 << 10

// Unlimited is a budget that is never exceeded.
const Unlimited = math.MaxInt64

var (
	// ErrBudgetExceeded is returned when a reservation asks for more memory than the
	// manager's budget has left. Operators react to it by spilling, never by failing.
	ErrBudgetExceeded = errors.New("memory: budget exceeded")
	// ErrReleased is returned when a reservation is used or released after Release.
	ErrReleased = errors.New("memory: reservation already released")
)

// Options configures a Manager. The zero value is usable: 32 KiB segments, no budget.
type Options struct {
	// SegmentSize is the size in bytes of every segment. It must be at least 4 KiB and
	// a power of two; zero means DefaultSegmentSize.
	SegmentSize int
	// Budget is the number of bytes all reservations together may hold. Zero or
	// negative means Unlimited.
	Budget int64
}

// EnsureDefaults fills zero fields with their defaults and returns o.
func (o Options) EnsureDefaults() Options {
	if o.SegmentSize == 0 {
		o.SegmentSize = DefaultSegmentSize
	}
	if o.Budget <= 0 {
		o.Budget = Unlimited
	}
	return o
}

// Manager hands out memory to operators through reservations and keeps the sum of
// all reservations within a budget. Freed segments are kept in a pool and reused,
// so a job that runs at its budget allocates no new segments in its steady state.
//
// A Manager is safe for concurrent use. Reservations are not: each belongs to one
// operator instance (one goroutine at a time).
type Manager struct {
	segSize int
	budget  int64

	mu     sync.Mutex
	used   int64
	peak   int64
	pool   [][]byte
	live   map[*Reservation]struct{}
	closed bool
}

// NewManager returns a Manager with the given options.
func NewManager(opts Options) (*Manager, error) {
	opts = opts.EnsureDefaults()
	if opts.SegmentSize < 4<<10 || opts.SegmentSize&(opts.SegmentSize-1) != 0 {
		return nil, fmt.Errorf("memory: segment size %d is not a power of two of at least 4096", opts.SegmentSize)
	}
	return &Manager{segSize: opts.SegmentSize, budget: opts.Budget, live: map[*Reservation]struct{}{}}, nil
}

// MustNewManager is NewManager for options known to be valid; it panics otherwise.
// It is meant for tests and package-level defaults.
func MustNewManager(opts Options) *Manager {
	m, err := NewManager(opts)
	if err != nil {
		panic(err)
	}
	return m
}

// SegmentSize returns the size of every segment in bytes.
func (m *Manager) SegmentSize() int { return m.segSize }

// Budget returns the budget in bytes (Unlimited if none).
func (m *Manager) Budget() int64 { return m.budget }

// Used returns the bytes currently held by all reservations.
func (m *Manager) Used() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.used
}

// Peak returns the largest value Used has had.
func (m *Manager) Peak() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.peak
}

// Floor returns the floor a spilling operator sets on its reservation
// (Reservation.SetFloor): a 32nd of the budget, between MinFloor and MaxFloor,
// and at most an eighth of the budget; 0 without a budget.
func (m *Manager) Floor() int64 {
	if m.budget == Unlimited {
		return 0
	}
	return min(max(m.budget/32, MinFloor), MaxFloor, m.budget/8)
}

// MinFloor and MaxFloor bound Manager.Floor.
const (
	MinFloor = 256 << 10
	MaxFloor = 4 << 20
)

// Available returns the bytes that can still be reserved without exceeding the budget.
func (m *Manager) Available() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.used >= m.budget {
		return 0
	}
	return m.budget - m.used
}

// NewReservation returns an empty reservation owned by owner (an operator name used
// in error messages and leak reports).
func (m *Manager) NewReservation(owner string) *Reservation {
	r := &Reservation{m: m, owner: owner}
	m.mu.Lock()
	m.live[r] = struct{}{}
	m.mu.Unlock()
	return r
}

// Close checks that every reservation was released and drops the segment pool. It
// returns an error naming the owners of leaked reservations.
func (m *Manager) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pool = nil
	m.closed = true
	if len(m.live) == 0 {
		return nil
	}
	owners := make([]string, 0, len(m.live))
	for r := range m.live {
		owners = append(owners, fmt.Sprintf("%s (%d bytes)", r.owner, r.bytes))
	}
	sort.Strings(owners)
	return fmt.Errorf("memory: %d reservation(s) not released: %s", len(owners), strings.Join(owners, ", "))
}

func (m *Manager) grow(n int64, force bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !force && (m.used+n > m.budget || m.used+n < m.used) {
		return ErrBudgetExceeded
	}
	m.used += n
	if m.used > m.peak {
		m.peak = m.used
	}
	return nil
}

func (m *Manager) shrink(n int64) {
	m.mu.Lock()
	m.used -= n
	m.mu.Unlock()
}

func (m *Manager) segment(force bool) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := int64(m.segSize)
	if !force && m.used+n > m.budget {
		return nil, ErrBudgetExceeded
	}
	m.used += n
	if m.used > m.peak {
		m.peak = m.used
	}
	if k := len(m.pool); k > 0 {
		s := m.pool[k-1]
		m.pool[k-1] = nil
		m.pool = m.pool[:k-1]
		return s, nil
	}
	return make([]byte, m.segSize), nil
}

func (m *Manager) putSegment(s []byte) {
	m.mu.Lock()
	m.used -= int64(m.segSize)
	if !m.closed && cap(s) == m.segSize {
		m.pool = append(m.pool, s[:m.segSize])
	}
	m.mu.Unlock()
}

// Reservation is one operator's share of a Manager's budget: plain bytes (for index
// arrays, hash tables, I/O buffers) and whole segments (for serialized records).
// It is not safe for concurrent use.
//
// Contract: every reservation is released exactly once, on every exit path of its
// operator (success, error, cancellation). Releasing twice returns ErrReleased, and
// Manager.Close reports reservations never released.
type Reservation struct {
	m        *Manager
	owner    string
	bytes    int64
	floor    int64 // Grow and Segment succeed past the budget up to this
	segments int
	released bool
}

// SetFloor makes Grow and Segment succeed, past the budget if need be, while
// the reservation holds at most n bytes with the memory asked for. An operator
// that spills sets it to Manager.Floor so that what it writes at a time (a
// sorted run, a partition's records) is never tiny when other operators hold
// the budget: a tight budget then costs passes over the data, not a file per
// few records. The overshoot is bounded by the floors of the reservations
// that are alive at once.
func (r *Reservation) SetFloor(n int64) { r.floor = n }

// Owner returns the name given to NewReservation.
func (r *Reservation) Owner() string { return r.owner }

// Manager returns the manager the reservation draws from.
func (r *Reservation) Manager() *Manager { return r.m }

// Bytes returns the bytes held, segments included.
func (r *Reservation) Bytes() int64 { return r.bytes }

// Segments returns the number of segments held.
func (r *Reservation) Segments() int { return r.segments }

// Grow reserves n more bytes, or returns ErrBudgetExceeded and reserves nothing.
func (r *Reservation) Grow(n int64) error {
	if r.released {
		return fmt.Errorf("%s: %w", r.owner, ErrReleased)
	}
	if n <= 0 {
		return nil
	}
	if err := r.m.grow(n, r.bytes+n <= r.floor); err != nil {
		return err
	}
	r.bytes += n
	return nil
}

// Force reserves n more bytes even past the budget. Operators use it only for the
// fixed minimum they need to make progress at all (two merge inputs, one record
// larger than a segment), which their documentation states; everything above that
// minimum goes through Grow.
func (r *Reservation) Force(n int64) {
	if r.released || n <= 0 {
		return
	}
	_ = r.m.grow(n, true)
	r.bytes += n
}

// Shrink returns n bytes to the manager. It panics if n exceeds the plain bytes held,
// which is always a bug in the operator.
func (r *Reservation) Shrink(n int64) {
	if r.released || n <= 0 {
		return
	}
	if n > r.bytes-int64(r.segments)*int64(r.m.segSize) {
		panic(fmt.Sprintf("memory: %s shrinks %d bytes but holds only %d outside segments", r.owner, n, r.bytes-int64(r.segments)*int64(r.m.segSize)))
	}
	r.bytes -= n
	r.m.shrink(n)
}

// Segment returns a segment of Manager.SegmentSize bytes (its contents are
// undefined), or ErrBudgetExceeded.
func (r *Reservation) Segment() ([]byte, error) {
	return r.segment(false)
}

// ForceSegment returns a segment even past the budget; see Force.
func (r *Reservation) ForceSegment() []byte {
	s, _ := r.segment(true)
	return s
}

func (r *Reservation) segment(force bool) ([]byte, error) {
	if r.released {
		return nil, fmt.Errorf("%s: %w", r.owner, ErrReleased)
	}
	s, err := r.m.segment(force || r.bytes+int64(r.m.segSize) <= r.floor)
	if err != nil {
		return nil, err
	}
	r.segments++
	r.bytes += int64(r.m.segSize)
	return s, nil
}

// FreeSegment returns a segment obtained from this reservation to the manager's pool.
// The caller must not use it afterwards.
func (r *Reservation) FreeSegment(s []byte) {
	if r.released || s == nil {
		return
	}
	r.segments--
	r.bytes -= int64(r.m.segSize)
	r.m.putSegment(s)
}

// Release returns everything the reservation holds. Segments still referenced by the
// operator must not be used afterwards. A second Release returns ErrReleased.
func (r *Reservation) Release() error {
	if r.released {
		return fmt.Errorf("%s: %w", r.owner, ErrReleased)
	}
	r.released = true
	m := r.m
	m.mu.Lock()
	m.used -= r.bytes
	delete(m.live, r)
	m.mu.Unlock()
	r.bytes, r.segments = 0, 0
	return nil
}
