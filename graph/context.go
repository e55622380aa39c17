package graph

import "iter"

// Context is what a compute, scatter or gather function is called with: the
// superstep, the vertex's edges (in the iteration's direction) and the
// messages it sends, the value it sets and what it reports to the
// convergence criterion. One Context serves one worker goroutine; it is
// valid only during the call.
//
// Edges, Degree and the Send methods are for Compute (vertex-centric) and
// Scatter (scatter-gather); a Gather function (scatter-gather) has no edges,
// sends nothing, and calling them there panics.
type Context[K comparable, VV, EV, M any] struct {
	e       *engine[K, VV, EV, M]
	w       int
	v       uint32
	c       *chunk[EV] // nil in a gather phase
	out     *mailbox[M]
	sent    int64
	updated int64
	active  int64
	agg     float64
	// the workers write their Contexts per vertex: the padding keeps
	// another's off the cache lines of this one's fields
	_ [64]byte
}

// Superstep returns the superstep's number, from 1.
func (c *Context[K, VV, EV, M]) Superstep() int { return c.e.step }

// NumVertices returns the number of vertices of the graph.
func (c *Context[K, VV, EV, M]) NumVertices() int64 { return int64(len(c.e.g.ids)) }

func (c *Context[K, VV, EV, M]) edgesRange() (int64, int64) {
	if c.c == nil {
		panic("graph: Edges, Degree and Send are for compute and scatter functions, not gather")
	}
	i := c.v - c.c.lo
	return c.c.offsets[i], c.c.offsets[i+1]
}

// Degree returns the number of the vertex's edges in the iteration's
// direction.
func (c *Context[K, VV, EV, M]) Degree() int {
	a, b := c.edgesRange()
	return int(b - a)
}

// Edges returns the vertex's neighbours in the iteration's direction with
// the edges' values.
func (c *Context[K, VV, EV, M]) Edges() iter.Seq2[K, EV] {
	a, b := c.edgesRange()
	ch, ids := c.c, c.e.g.ids
	return func(yield func(K, EV) bool) {
		targets := ch.tgts()
		for i := a; i < b; i++ {
			if !yield(ids[targets[i]], ch.values[i]) {
				return
			}
		}
	}
}

// SendToAllNeighbors sends m along each of the vertex's edges.
func (c *Context[K, VV, EV, M]) SendToAllNeighbors(m M) {
	a, b := c.edgesRange()
	if !c.out.broadcast(c.w, c.v, b-a, m) {
		c.out.sendAll(c.w, c.c.tgts()[a:b], m)
	}
	c.sent += b - a
}

// SendAlongEdges sends msg(edge value) along each of the vertex's edges
// (Gelly's loop of sendMessageTo over getEdges, without looking the targets
// up by key).
func (c *Context[K, VV, EV, M]) SendAlongEdges(msg func(edge EV) M) {
	a, b := c.edgesRange()
	sendEach(c.out, c.w, c.c.tgts()[a:b], c.c.values[a:b], msg)
	c.sent += b - a
}

// SendTo sends m to the vertex of key target; a key that is no vertex gets
// nothing.
func (c *Context[K, VV, EV, M]) SendTo(target K, m M) {
	c.edgesRange()
	if t := c.e.g.index.lookup(target); t != absent {
		c.out.send(c.w, t, m)
		c.sent++
	}
}

// SetNewVertexValue sets the vertex's value; in scatter-gather it makes the
// vertex scatter in the next superstep.
func (c *Context[K, VV, EV, M]) SetNewVertexValue(v VV) {
	c.e.g.values[c.v] = v
	c.e.updated[c.v] = true
	c.updated++
}

// Aggregate reports x to Options.Converged, which sees the superstep's
// greatest report.
func (c *Context[K, VV, EV, M]) Aggregate(x float64) { c.agg = max(c.agg, x) }
