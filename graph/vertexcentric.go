package graph

import (
	"errors"

	"github.com/weirdata/weir/dataset"
)

// VertexCentric is a vertex-centric (Pregel) iteration, Gelly's
// VertexCentricIteration: in superstep 1 every vertex computes; after that
// the vertices that received messages (every vertex with
// Options.AllActive); the iteration ends when a superstep sends no message.
type VertexCentric[K comparable, VV, EV, M any] struct {
	// Compute is Gelly's ComputeFunction: it reads the vertex and the
	// messages sent to it in the last superstep (none in the first), sets its
	// value and sends messages for the next superstep.
	Compute func(c *Context[K, VV, EV, M], v Vertex[K, VV], msgs []M)
	// Combine, when set, is Gelly's MessageCombiner as a binary function: the
	// messages to a vertex are combined as they are sent into a dense array,
	// and Compute gets one. It must be associative and commutative. Without
	// it, Compute gets every message.
	Combine func(a, b M) M
}

// RunVertexCentric runs vc on g and returns every vertex with its value
// after the last superstep (Gelly's Graph.runVertexCentricIteration).
func RunVertexCentric[K comparable, VV, EV, M any](g *Graph[K, VV, EV], vc VertexCentric[K, VV, EV, M], o Options) *dataset.DataSet[Vertex[K, VV]] {
	return run(g, o, "vertex-centric iteration", &vertexCentric[K, VV, EV, M]{vc: vc})
}

type vertexCentric[K comparable, VV, EV, M any] struct {
	vc      VertexCentric[K, VV, EV, M]
	in, out *mailbox[M]
}

func (m *vertexCentric[K, VV, EV, M]) validate() error {
	if m.vc.Compute == nil {
		return errors.New("no Compute function")
	}
	return nil
}

func (m *vertexCentric[K, VV, EV, M]) combiner() func(a, b M) M { return m.vc.Combine }

func (m *vertexCentric[K, VV, EV, M]) pulls() bool { return m.vc.Combine != nil }

func (m *vertexCentric[K, VV, EV, M]) superstep(e *engine[K, VV, EV, M]) (bool, error) {
	if m.in == nil {
		m.in, m.out = e.newMailbox(m.vc.Combine), e.newMailbox(m.vc.Combine)
	}
	first, all, in := e.step == 1, e.o.AllActive, m.in
	err := e.sweepEdges(m.out, func(c *Context[K, VV, EV, M], v uint32) {
		var msgs []M
		if !first {
			msgs = in.get(v, e.scratch[c.w])
		}
		if first || all || msgs != nil {
			c.active++
			m.vc.Compute(c, e.vertex(v), msgs)
		}
	})
	if err != nil {
		return false, err
	}
	m.out.deliver()
	if err := e.settle(m.out); err != nil {
		return false, err
	}
	e.resetAll(m.in)
	m.in, m.out = m.out, m.in
	sent := int64(0)
	for _, c := range e.ctxs {
		sent += c.sent
	}
	return sent > 0 || all, nil
}
