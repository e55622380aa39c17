package source

import (
	"slices"
	"sync"
	"time"

	"github.com/weirdata/weir/clock"
)

// enumerator is the one Enumerator of every source: a queue of pending
// splits, assigned on request or statically, fed at start and, for a
// monitored directory, by discover when a request finds nothing and the
// interval has passed since the last scan.
type enumerator struct {
	mu       sync.Mutex
	assign   Assignment
	n        int
	pending  []Split                 // OnRequest: the queue
	owned    [][]Split               // Static: the queue of each reader
	dealt    int                     // Static: splits dealt so far, for the next owner
	discover func() ([]Split, error) // nil when every split is known at start
	interval time.Duration
	clock    clock.Clock
	lastScan time.Time
	seen     map[string]bool
	order    []string // discovered files in discovery order
}

// newEnumerator creates an enumerator over splits (or, restoring, over the
// snapshot's pending splits). discover, when not nil, is called at start
// and then at most every interval; it returns every split it sees, and those
// seen before (restored ones included) are dropped.
func newEnumerator(splits []Split, n int, c config, restored *EnumeratorState, discover func() ([]Split, error), interval time.Duration) (*enumerator, error) {
	e := &enumerator{assign: c.assign, n: max(n, 1), discover: discover, interval: interval, clock: c.clock, seen: map[string]bool{}}
	if e.assign == Static {
		e.owned = make([][]Split, e.n)
	}
	if restored != nil {
		for _, f := range restored.Processed {
			e.seen[f] = true
			e.order = append(e.order, f)
		}
		e.add(restored.Pending)
	} else {
		e.add(splits)
	}
	if discover != nil {
		if err := e.scan(); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// add queues splits, dealing them round robin with Static assignment.
func (e *enumerator) add(splits []Split) {
	if e.assign == OnRequest {
		e.pending = append(e.pending, splits...)
		return
	}
	for _, s := range splits {
		i := e.dealt % e.n
		e.owned[i] = append(e.owned[i], s)
		e.dealt++
	}
}

// scan discovers new splits; mu is held (or e is not yet shared).
func (e *enumerator) scan() error {
	e.lastScan = e.clock.Now()
	found, err := e.discover()
	if err != nil {
		return err
	}
	var fresh []Split
	for _, s := range found {
		if !e.seen[s.ID] {
			e.seen[s.ID] = true
			e.order = append(e.order, s.ID)
			fresh = append(fresh, s)
		}
	}
	e.add(fresh)
	return nil
}

// Request hands the next split to subtask.
func (e *enumerator) Request(subtask int) (Grant, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if g, ok := e.take(subtask); ok {
		return g, nil
	}
	if e.discover == nil {
		return Grant{Status: NoMore}, nil
	}
	if wait := e.lastScan.Add(e.interval).Sub(e.clock.Now()); wait > 0 {
		return Grant{Status: Later, Retry: wait}, nil
	}
	if err := e.scan(); err != nil {
		return Grant{}, err
	}
	if g, ok := e.take(subtask); ok {
		return g, nil
	}
	return Grant{Status: Later, Retry: e.interval}, nil
}

func (e *enumerator) take(subtask int) (Grant, bool) {
	q := &e.pending
	if e.assign == Static {
		q = &e.owned[subtask%e.n]
	}
	if len(*q) == 0 {
		return Grant{}, false
	}
	s := (*q)[0]
	*q = (*q)[1:]
	return Grant{Split: s, Status: Assigned}, true
}

// AddSplitsBack queues the splits of a failed reader again.
func (e *enumerator) AddSplitsBack(splits []Split) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.add(splits)
}

// Snapshot returns the pending splits (Static: reader 0's first, then reader
// 1's, ...) and the files discovered.
func (e *enumerator) Snapshot() EnumeratorState {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := EnumeratorState{Pending: slices.Clone(e.pending), Processed: slices.Clone(e.order)}
	for _, q := range e.owned {
		st.Pending = append(st.Pending, q...)
	}
	return st
}
