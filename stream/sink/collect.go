package sink

import (
	"fmt"
	"slices"
	"sync"
)

// Collect gathers the records of every subtask in memory, for tests and for
// the API's Collect. Its writers may run at once; Records and Subtask may be
// called at any time and return copies.
type Collect[T any] struct {
	mu    sync.Mutex
	parts [][]T // per subtask, in arrival order
}

// NewCollect returns an empty Collect.
func NewCollect[T any]() *Collect[T] { return &Collect[T]{} }

// Writer returns the writer of subtask i of n.
func (c *Collect[T]) Writer(i, n int) (*CollectWriter[T], error) {
	if n < 1 || i < 0 || i >= n {
		return nil, fmt.Errorf("stream/sink: collect: subtask %d of %d out of range", i, n)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.parts) < n {
		c.parts = append(c.parts, make([][]T, n-len(c.parts))...)
	}
	return &CollectWriter[T]{c: c, i: i}, nil
}

// Records returns every record: subtask 0's in the order they arrived, then
// subtask 1's, and so on.
func (c *Collect[T]) Records() []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []T
	for _, p := range c.parts {
		out = append(out, p...)
	}
	return out
}

// Subtask returns subtask i's records in the order they arrived.
func (c *Collect[T]) Subtask(i int) []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	if i < 0 || i >= len(c.parts) {
		return nil
	}
	return slices.Clone(c.parts[i])
}

// CollectWriter appends one subtask's records. It is used by one goroutine.
type CollectWriter[T any] struct {
	c *Collect[T]
	i int
}

// Write copies the records of batch (the slice, not what its records point
// to: strings and slices inside records must stay unchanged, as the formats'
// sources guarantee).
func (w *CollectWriter[T]) Write(batch []T) error {
	w.c.mu.Lock()
	w.c.parts[w.i] = append(w.c.parts[w.i], batch...)
	w.c.mu.Unlock()
	return nil
}
