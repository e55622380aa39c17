package graph

import (
	"cmp"
	"fmt"
	"iter"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/spill"
)

// engine runs one iteration's supersteps over its graph data with a number
// of worker goroutines, each owning a range of vertices.
type engine[K comparable, VV, EV, M any] struct {
	g       *graphData[K, VV, EV]
	o       Options
	workers int
	step    int
	updated []bool // vertices whose value was set in this superstep
	ctxs    []*Context[K, VV, EV, M]
	scratch [][]M
	parts   []uint32 // the in-memory chunk's ranges per worker
	stats   Superstep
}

// model is one iteration model's supersteps: superstep runs superstep
// e.step and returns whether the iteration goes on (before Options'
// criteria and MaxIterations).
type model[K comparable, VV, EV, M any] interface {
	combiner() func(a, b M) M
	// pulls says whether messages sent to all neighbours may be pulled over
	// the reverse adjacency (a combiner is set and such messages exist).
	pulls() bool
	// validate returns an error when a required function is missing.
	validate() error
	superstep(e *engine[K, VV, EV, M]) (bool, error)
}

// run adds the iteration of m over g to g's program: one task gathers the
// vertices and then the edges, builds the dense ids and the adjacency as
// they come, runs the supersteps and emits every vertex with its final
// value.
func run[K comparable, VV, EV, M any](g *Graph[K, VV, EV], o Options, name string, m model[K, VV, EV, M]) *dataset.DataSet[Vertex[K, VV]] {
	return dataset.GatherPair(g.vertices, g.edges, func(r dataset.Resources, vs iter.Seq[[]Vertex[K, VV]], es iter.Seq[[]Edge[K, EV]], emit func(Vertex[K, VV])) error {
		if err := execute(r, o, m, vs, es, emit); err != nil {
			return fmt.Errorf("graph: %s: %w", name, err)
		}
		return nil
	})
}

func execute[K comparable, VV, EV, M any](r dataset.Resources, o Options, m model[K, VV, EV, M], vs iter.Seq[[]Vertex[K, VV]], es iter.Seq[[]Edge[K, EV]], emit func(Vertex[K, VV])) (err error) {
	if o.MaxIterations < 1 {
		return fmt.Errorf("MaxIterations %d: want at least 1", o.MaxIterations)
	}
	if err := m.validate(); err != nil {
		return err
	}
	res := r.Memory.NewReservation("graph iteration")
	space := spill.NewSpace(r.FS, "graph", r.Spill)
	stats := &Stats{}
	defer func() {
		stats.Reserved = max(stats.Reserved, res.Bytes())
		if rerr := res.Release(); err == nil {
			err = rerr
		}
		if cerr := space.Close(); err == nil {
			err = cerr
		}
		if o.Stats != nil {
			*o.Stats = *stats
		}
	}()
	b := &builder[K, VV, EV]{res: res, space: space, dir: o.Direction, reverse: m.pulls(), workers: r.Workers}
	for batch := range vs {
		b.addVertices(batch)
	}
	if err := b.index(); err != nil {
		return err
	}
	for batch := range es {
		if err := b.addEdges(batch); err != nil {
			b.abort()
			return err
		}
	}
	n, workers := len(b.ids), max(r.Workers, 1)
	after := int64(n) + 2*mailboxBytes[M](n, workers, m.combiner() != nil)
	b.after = after
	g, err := b.finish()
	if err != nil {
		b.abort()
		return err
	}
	stats.Build = b.took
	stats.Vertices, stats.Edges = int64(len(g.ids)), g.entries
	stats.EdgesSpilled = g.adj.mem == nil || b.held
	if g.adj.mem == nil {
		stats.Spilled = g.adj.chunks()
	}
	res.Force(after)
	e := &engine[K, VV, EV, M]{g: g, o: o, workers: workers, updated: make([]bool, n)}
	for w := range workers {
		e.ctxs = append(e.ctxs, &Context[K, VV, EV, M]{e: e, w: w})
		e.scratch = append(e.scratch, padded[M]())
	}
	if g.adj.mem != nil {
		e.parts = split(g.adj.mem, workers)
	}
	for e.step = 1; e.step <= o.MaxIterations; e.step++ {
		t := time.Now()
		e.stats = Superstep{}
		for _, c := range e.ctxs {
			c.sent, c.updated, c.active, c.agg = 0, 0, 0, 0
		}
		more, err := m.superstep(e)
		if err != nil {
			return err
		}
		agg := 0.0
		for _, c := range e.ctxs {
			e.stats.Messages += c.sent
			e.stats.Active += c.active
			e.stats.Updated += c.updated
			agg = max(agg, c.agg)
		}
		e.stats.Time = time.Since(t)
		stats.Supersteps = append(stats.Supersteps, e.stats)
		stats.Reserved = max(stats.Reserved, res.Bytes())
		if !more || (o.Converged != nil && o.Converged(e.step, agg)) {
			break
		}
	}
	if order := keyOrder(g.ids); order != nil {
		res.Force(4 * int64(len(order)))
		for _, v := range order {
			emit(Vertex[K, VV]{ID: g.ids[v], Value: g.values[v]})
		}
		return nil
	}
	for v, id := range g.ids {
		emit(Vertex[K, VV]{ID: id, Value: g.values[v]})
	}
	return nil
}

// keyOrder returns the dense ids of the vertices in ascending order of their
// keys when the keys are int64 and the ids are not in that order already
// (ids given in the order the vertices arrived, through the index's table or
// map), else nil: the result is emitted in key order.
func keyOrder[K comparable](ids []K) []uint32 {
	ks, ok := any(ids).([]int64)
	if !ok || slices.IsSorted(ks) {
		return nil
	}
	order := make([]uint32, len(ks))
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(a, b uint32) int { return cmp.Compare(ks[a], ks[b]) })
	return order
}

// split cuts c's vertices into one range per worker of about equal entries
// and vertices.
func split[EV any](c *chunk[EV], workers int) []uint32 {
	n := int64(c.hi - c.lo)
	total := c.offsets[n] + n
	parts := make([]uint32, workers+1)
	parts[0] = c.lo
	v := int64(0)
	for w := 1; w < workers; w++ {
		for v < n && (c.offsets[v]+v)*int64(workers) < total*int64(w) {
			v++
		}
		parts[w] = c.lo + uint32(v)
	}
	parts[workers] = c.hi
	return parts
}

// parallel runs fn(w) on every worker at once and returns the first panic
// of a user function as an error.
func (e *engine[K, VV, EV, M]) parallel(fn func(w int)) error {
	errs := make([]error, e.workers)
	var wg sync.WaitGroup
	for w := range e.workers {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					errs[w] = fmt.Errorf("superstep %d: %v", e.step, p)
				}
			}()
			fn(w)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// sweepEdges calls fn for every vertex with its edges at hand, chunk by
// chunk (one in memory, or each read back from its run), the workers
// splitting each chunk; what fn sends goes to out.
func (e *engine[K, VV, EV, M]) sweepEdges(out *mailbox[M], fn func(c *Context[K, VV, EV, M], v uint32)) error {
	for i := range e.g.adj.chunks() {
		ch, err := e.g.adj.chunk(i)
		if err != nil {
			return err
		}
		parts := e.parts
		if e.g.adj.mem == nil {
			parts = split(ch, e.workers)
		}
		err = e.parallel(func(w int) {
			c := e.ctxs[w]
			c.c, c.out = ch, out
			for v := parts[w]; v < parts[w+1]; v++ {
				c.v = v
				fn(c, v)
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// sweepVertices calls fn for every vertex, without its edges, the workers
// splitting the vertices evenly.
func (e *engine[K, VV, EV, M]) sweepVertices(fn func(c *Context[K, VV, EV, M], v uint32)) error {
	n := uint32(len(e.g.ids))
	return e.parallel(func(w int) {
		c := e.ctxs[w]
		c.c, c.out = nil, nil
		lo, hi := uint32(uint64(n)*uint64(w)/uint64(e.workers)), uint32(uint64(n)*uint64(w+1)/uint64(e.workers))
		for v := lo; v < hi; v++ {
			c.v = v
			fn(c, v)
		}
	})
}

// resetAll empties every worker's part of b, in parallel.
func (e *engine[K, VV, EV, M]) resetAll(b *mailbox[M]) {
	n := uint64(len(e.g.ids))
	_ = e.parallel(func(w int) {
		b.reset(w, uint32(n*uint64(w)/uint64(e.workers)), uint32(n*uint64(w+1)/uint64(e.workers)))
	})
}

// newMailbox returns a mailbox of the graph's vertices that pulls broadcasts
// when it combines and the build kept the reverse adjacency.
func (e *engine[K, VV, EV, M]) newMailbox(combine func(a, b M) M) *mailbox[M] {
	b := newMailbox(len(e.g.ids), e.workers, combine)
	if combine != nil && e.g.rev != nil {
		offs, senders := e.g.adj.mem.offsets, int64(0)
		for v := range len(offs) - 1 {
			if offs[v+1] > offs[v] {
				senders++
			}
		}
		b.pullable(e.g.rev.offsets, e.g.rev.targets, e.workers, senders)
	}
	return b
}

// padded returns a slice of one M followed by at least 64 bytes it does not
// use: a worker writes its scratch message per vertex, and another worker's
// must not share its cache line.
func padded[M any]() []M {
	size := max(int(unsafe.Sizeof(*new(M))), 1)
	return make([]M, 1, 1+(64+size-1)/size)
}

// vertex returns vertex v.
func (e *engine[K, VV, EV, M]) vertex(v uint32) Vertex[K, VV] {
	return Vertex[K, VV]{ID: e.g.ids[v], Value: e.g.values[v]}
}
