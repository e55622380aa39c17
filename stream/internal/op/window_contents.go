package op

import (
	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/window"
)

// Contents is what a window operator keeps per key and window, in keyed
// state with the window as namespace: an accumulator (reduce, aggregate)
// or the elements (process), read as the window function's input.
type Contents[W window.Window, T, IN any] interface {
	setWindow(w W)
	// add adds r, reporting whether the window held contents before (false
	// when the kind of contents cannot tell cheaply).
	add(r *core.Record[T]) bool
	// tells reports whether add's answer is exact.
	tells() bool
	// get returns the function's input, false when the window holds none.
	get() ([]IN, bool)
	clear()
	// merge folds the sources' contents into target's (merging windows).
	merge(target W, sources []W)
}

const contentsName = "window-contents"

// batchContents are contents that add a run of records at once, each to its
// key's contents in its window (state.Aggregating.AddEach): false when the
// state cannot, having added nothing.
type batchContents[K comparable, W window.Window, T any] interface {
	addEach(keys []K, codes, groups []int32, ws []W, vals []T, fresh []bool) bool
}

// prefetchContents are contents that can read ahead where the entries of
// keys (by hash code and key group) in windows are (state.Value's
// Prefetch), one window each.
type prefetchContents[W window.Window] interface {
	prefetch(codes, groups []int32, ws []W)
}

type reduceContents[K comparable, W window.Window, T any] struct {
	s   *state.Reducing[K, W, T]
	buf []T
}

// Reducing returns the contents of a reduce.
func Reducing[K comparable, W window.Window, T any](fn func(acc, v T) T) func(*state.Backend[K]) (Contents[W, T, T], error) {
	return func(b *state.Backend[K]) (Contents[W, T, T], error) {
		s, err := state.NewReducing[K, W, T](b, state.ReducingDescriptor[T]{Name: contentsName, Reduce: fn})
		return &reduceContents[K, W, T]{s: s, buf: make([]T, 1)}, err
	}
}

func (c *reduceContents[K, W, T]) setWindow(w W)              { c.s.SetNamespace(w) }
func (c *reduceContents[K, W, T]) add(r *core.Record[T]) bool { return c.s.AddPresent(r.Value) }
func (c *reduceContents[K, W, T]) tells() bool                { return true }
func (c *reduceContents[K, W, T]) addEach(keys []K, codes, groups []int32, ws []W, vals []T, fresh []bool) bool {
	return c.s.AddEach(keys, codes, groups, ws, vals, fresh)
}
func (c *reduceContents[K, W, T]) clear() { c.s.Clear() }
func (c *reduceContents[K, W, T]) prefetch(codes, groups []int32, ws []W) {
	c.s.Prefetch(codes, groups, ws)
}
func (c *reduceContents[K, W, T]) merge(t W, src []W) {
	c.s.MergeNamespaces(t, src)
}

func (c *reduceContents[K, W, T]) get() ([]T, bool) {
	v, ok := c.s.Get()
	c.buf[0] = v
	return c.buf, ok
}

type aggContents[K comparable, W window.Window, T, ACC, R any] struct {
	s   *state.Aggregating[K, W, T, ACC, R]
	buf []R
}

// Aggregating returns the contents of an aggregate.
func Aggregating[K comparable, W window.Window, T, ACC, R any](agg state.AggregateFunction[T, ACC, R]) func(*state.Backend[K]) (Contents[W, T, R], error) {
	return func(b *state.Backend[K]) (Contents[W, T, R], error) {
		s, err := state.NewAggregating[K, W, T, ACC, R](b, state.AggregatingDescriptor[T, ACC, R]{Name: contentsName, Func: agg})
		return &aggContents[K, W, T, ACC, R]{s: s, buf: make([]R, 1)}, err
	}
}

func (c *aggContents[K, W, T, ACC, R]) setWindow(w W)              { c.s.SetNamespace(w) }
func (c *aggContents[K, W, T, ACC, R]) add(r *core.Record[T]) bool { return c.s.AddPresent(r.Value) }
func (c *aggContents[K, W, T, ACC, R]) tells() bool                { return true }
func (c *aggContents[K, W, T, ACC, R]) addEach(keys []K, codes, groups []int32, ws []W, vals []T, fresh []bool) bool {
	return c.s.AddEach(keys, codes, groups, ws, vals, fresh)
}
func (c *aggContents[K, W, T, ACC, R]) clear() { c.s.Clear() }
func (c *aggContents[K, W, T, ACC, R]) prefetch(codes, groups []int32, ws []W) {
	c.s.Prefetch(codes, groups, ws)
}
func (c *aggContents[K, W, T, ACC, R]) merge(t W, src []W) {
	c.s.MergeNamespaces(t, src)
}

func (c *aggContents[K, W, T, ACC, R]) get() ([]R, bool) {
	v, ok := c.s.Get()
	c.buf[0] = v
	return c.buf, ok
}

// listContents keeps a window's elements with their timestamps (Flink's
// window list state; the evicting operator's TimestampedValues).
type listContents[K comparable, W window.Window, T any] struct {
	s    *state.List[K, W, core.Record[T]]
	vals []T
}

func newListState[K comparable, W window.Window, T any](b *state.Backend[K]) (*state.List[K, W, core.Record[T]], error) {
	return state.NewList[K, W, core.Record[T]](b, state.ListDescriptor[core.Record[T]]{Name: contentsName})
}

// Listing returns the contents of a process function: every element.
func Listing[K comparable, W window.Window, T any](b *state.Backend[K]) (Contents[W, T, T], error) {
	s, err := newListState[K, W, T](b)
	return &listContents[K, W, T]{s: s}, err
}

func (c *listContents[K, W, T]) setWindow(w W)              { c.s.SetNamespace(w) }
func (c *listContents[K, W, T]) add(r *core.Record[T]) bool { c.s.Add(*r); return false }
func (c *listContents[K, W, T]) tells() bool                { return false }
func (c *listContents[K, W, T]) clear()                     { c.s.Clear() }
func (c *listContents[K, W, T]) merge(t W, src []W) {
	c.s.MergeNamespaces(t, src)
}

func (c *listContents[K, W, T]) get() ([]T, bool) {
	rs := c.s.Get()
	if len(rs) == 0 {
		return nil, false
	}
	c.vals = c.vals[:0]
	for i := range rs {
		c.vals = append(c.vals, rs[i].Value)
	}
	return c.vals, true
}
