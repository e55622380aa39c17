package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/weirdata/weir/internal/typed"
	"github.com/weirdata/weir/optimizer"
	"github.com/weirdata/weir/sortjoin"
)

// KeyColumns declares, for the join that made ds, the column of each input's
// source whose value is that input's join key: left for the first input,
// right for the second, "" for an input without one. A declared input must
// be read straight from a source that filters by integer keys (a Parquet
// source, formats.KeyFilterer) and the key must be an integer type equal to
// the column's value; anything else is a build error that Execute returns.
//
// When the planner builds the hash table of a join on the other input and
// the declared one is its probe side, the join publishes its build side's
// keys as a runtime filter: the probe side's source waits for it, then
// tests the key column of every row before it decodes the rest, and drops
// the rows no build key matches (as DuckDB's and Spark's dynamic filters).
// EXPLAIN ANALYZE shows the rows a filter removed on the source. The probe
// side may be either input of an inner or semi join, the inner side of an
// outer join, and the right input of an anti join (whose records only strike
// out left ones). A join whose probe side keeps its unmatched rows (an outer
// side, the left input of an anti join), a join in an iteration or spread
// over processes, a probe source read by other operators too, and a build
// side with more than a million keys run without the filter; the results are
// the same either way.
func (ds *DataSet[T]) KeyColumns(left, right string) *DataSet[T] {
	ds.env.keyColumns(ds.n, left, right, "KeyColumns at "+caller(1))
	return ds
}

// keyColumns is KeyColumns' body, untyped.
func (env *Env) keyColumns(n *node, left, right, where string) {
	j, ok := n.op.impl().(keyJoin)
	if !ok || n.opt.Kind != optimizer.Join {
		env.fail(where, fmt.Errorf("%s is not a join", n.name()))
		return
	}
	if !j.intKey() {
		env.fail(where, fmt.Errorf("%s: the join key is not an integer type", n.name()))
		return
	}
	cols := [2]string{left, right}
	for i, col := range cols {
		if col == "" {
			continue
		}
		src, ok := n.inputs[i].op.impl().(keySource)
		if !ok {
			env.fail(where, fmt.Errorf("%s: input %d (%s) is not read straight from a source", n.name(), i, n.inputs[i].name()))
			return
		}
		if err := src.keyColumn(col); err != nil {
			env.fail(where, fmt.Errorf("%s: input %d (%s): %w", n.name(), i, n.inputs[i].name(), err))
			return
		}
	}
	j.setKeyColumns(cols)
}

// maxFilterKeys is the most keys a runtime filter holds: a larger build side
// runs its join without one.
var maxFilterKeys = 1 << 20

// keyJoin is a join that can publish a runtime filter (joinOp).
type keyJoin interface {
	intKey() bool
	setKeyColumns([2]string)
	keyColumns() [2]string
	joinKind() sortjoin.JoinKind
	// setFilter gives the join the filter its build input publishes (nil: none).
	setFilter(f *keyFilter, build int)
	filterOf() *keyFilter
	buildSide() int
}

// keySource is a source that can apply a runtime filter (formatSource).
type keySource interface {
	keyColumn(col string) error
	setFilter(f *keyFilter)
	filter() *keyFilter
}

// keyFilter is one execution's runtime filter from a join's build side to
// its probe side's source: the build subtasks add their keys; once parts of
// them have (one when the build side is broadcast, every subtask's share
// otherwise), the set is published and the source's subtasks, waiting in
// wait, read with it.
type keyFilter struct {
	column string
	parts  int

	mu     sync.Mutex
	keys   []int64
	got    int
	over   bool // more than maxFilterKeys keys: published without a set
	closed bool
	ready  chan struct{}
	set    *keySet // nil: read unfiltered

	removed atomic.Int64
}

func newKeyFilter(column string, parts int) *keyFilter {
	return &keyFilter{column: column, parts: parts, ready: make(chan struct{})}
}

// add adds one build subtask's keys; over says it had too many to keep.
// The part that completes the set builds and publishes it.
func (f *keyFilter) add(keys []int64, over bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	f.got++
	f.over = f.over || over || len(f.keys)+len(keys) > maxFilterKeys
	if !f.over {
		f.keys = append(f.keys, keys...)
	}
	if f.got < f.parts {
		return
	}
	if !f.over {
		f.set = newKeySet(f.keys)
	}
	f.keys = nil
	f.closed = true
	close(f.ready)
}

// abandon publishes no set, if none is published yet: a build subtask that
// ends without its keys (an error) never leaves the source waiting.
func (f *keyFilter) abandon() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		f.closed, f.keys = true, nil
		close(f.ready)
	}
}

// wait returns the published set (nil: read unfiltered).
func (f *keyFilter) wait(ctx context.Context) (*keySet, error) {
	select {
	case <-f.ready:
		return f.set, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// intOf returns the conversion of an integer key type to the int64 a
// source's integer column holds, nil for other types.
func intOf[K any]() func(K) int64 {
	switch reflect.TypeFor[K]().Kind() {
	case reflect.Int64, reflect.Int, reflect.Uint64, reflect.Uint:
		return func(k K) int64 { return *(*int64)(unsafe.Pointer(&k)) }
	case reflect.Int32:
		return func(k K) int64 { return int64(*(*int32)(unsafe.Pointer(&k))) }
	case reflect.Uint32:
		return func(k K) int64 { return int64(*(*uint32)(unsafe.Pointer(&k))) }
	case reflect.Int16:
		return func(k K) int64 { return int64(*(*int16)(unsafe.Pointer(&k))) }
	case reflect.Uint16:
		return func(k K) int64 { return int64(*(*uint16)(unsafe.Pointer(&k))) }
	case reflect.Int8:
		return func(k K) int64 { return int64(*(*int8)(unsafe.Pointer(&k))) }
	case reflect.Uint8:
		return func(k K) int64 { return int64(*(*uint8)(unsafe.Pointer(&k))) }
	}
	return nil
}

// keyGather passes a build input's batches on and keeps their keys; at the
// input's end it adds them to the filter.
type keyGather[T any] struct {
	in    typed.Batches[T]
	key   func(*T) int64
	f     *keyFilter
	keys  []int64
	over  bool
	added bool
}

func (g *keyGather[T]) Next(ctx context.Context) ([]T, error) {
	b, err := g.in.Next(ctx)
	if err != nil {
		if errors.Is(err, io.EOF) {
			if !g.added {
				g.f.add(g.keys, g.over)
				g.keys, g.added = nil, true
			}
		}
		return b, err
	}
	if !g.over {
		for i := range b {
			g.keys = append(g.keys, g.key(&b[i]))
		}
		if len(g.keys) > maxFilterKeys {
			g.keys, g.over = nil, true
		}
	}
	return b, nil
}

// linkKeyFilters gives this stage's joins with declared key columns, and
// the sources of their probe sides, a runtime filter where one is safe and
// useful (see KeyColumns); every other join and source gets none.
func (e *Env) linkKeyFilters(nodes []*node, inputs [][]*node, consumers map[*node]int) {
	for _, n := range nodes {
		if j, ok := n.op.impl().(keyJoin); ok {
			j.setFilter(nil, 0)
		}
		if s, ok := n.op.impl().(keySource); ok {
			s.setFilter(nil)
		}
	}
	if e.opts.Spread != nil {
		return
	}
	for i, n := range nodes {
		j, ok := n.op.impl().(keyJoin)
		if !ok || n.lm != nil || len(inputs[i]) != 2 {
			continue
		}
		d := n.planned.Decision
		var build int
		switch d.Local {
		case optimizer.HybridHashBuildFirst:
			build = 0
		case optimizer.HybridHashBuildSecond:
			build = 1
		default:
			continue
		}
		probe := 1 - build
		col := j.keyColumns()[probe]
		switch kind := j.joinKind(); {
		case col == "":
			continue
		case kind == sortjoin.Inner || kind == sortjoin.Semi:
		case kind == sortjoin.LeftOuter && probe == 1, kind == sortjoin.RightOuter && probe == 0:
		case kind == sortjoin.Anti && probe == 1: // the right side: its records only strike left ones
		default:
			continue // the probe side keeps its unmatched records
		}
		srcNode := inputs[i][probe]
		src, ok := srcNode.op.impl().(keySource)
		if !ok || srcNode.lm != nil || consumers[srcNode] != 1 || src.filter() != nil {
			continue
		}
		if dependsOn(inputs[i][build], srcNode, nodes, inputs) {
			continue // the source would wait for keys that need it
		}
		parts := n.planned.Parallelism
		if d.Ship[build] == optimizer.Broadcast {
			parts = 1 // every subtask builds every key
		}
		f := newKeyFilter(col, parts)
		j.setFilter(f, build)
		src.setFilter(f)
	}
}

// dependsOn reports whether n reads target, directly or through other nodes
// of the stage, or through a source that waits for a runtime filter.
func dependsOn(n, target *node, nodes []*node, inputs [][]*node) bool {
	index := make(map[*node]int, len(nodes))
	for i, m := range nodes {
		index[m] = i
	}
	seen := map[*node]bool{}
	var visit func(m *node) bool
	visit = func(m *node) bool {
		if m == target {
			return true
		}
		if seen[m] {
			return false
		}
		seen[m] = true
		if i, ok := index[m]; ok {
			for _, in := range inputs[i] {
				if visit(in) {
					return true
				}
			}
		}
		if s, ok := m.op.impl().(keySource); ok && s.filter() != nil {
			// the source waits for its join's build input
			for k, jn := range nodes {
				if j, ok := jn.op.impl().(keyJoin); ok && j.filterOf() == s.filter() {
					if visit(inputs[k][j.buildSide()]) {
						return true
					}
				}
			}
		}
		return false
	}
	return visit(n)
}
