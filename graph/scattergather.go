package graph

import (
	"errors"

	"github.com/weirdata/weir/dataset"
)

// ScatterGather is a scatter-gather iteration, Gelly's
// ScatterGatherIteration. Every superstep has two phases: the vertices whose
// value changed in the last superstep (every vertex in superstep 1, and with
// Options.AllActive) scatter messages along their edges; then every vertex
// that received messages (every vertex with AllActive) gathers them and may
// set its value. The iteration ends when a superstep sets no value.
type ScatterGather[K comparable, VV, EV, M any] struct {
	// Scatter is Gelly's ScatterFunction: it sends messages (it may read the
	// edges, and must not set the value).
	Scatter func(c *Context[K, VV, EV, M], v Vertex[K, VV])
	// Gather is Gelly's GatherFunction: it reads the messages and may set
	// the value (it has no edges and sends nothing).
	Gather func(c *Context[K, VV, EV, M], v Vertex[K, VV], msgs []M)
	// Combine, when set, combines the messages to a vertex as they are sent
	// (see VertexCentric.Combine); Gather then gets one.
	Combine func(a, b M) M
}

// RunScatterGather runs sg on g and returns every vertex with its value
// after the last superstep (Gelly's Graph.runScatterGatherIteration).
func RunScatterGather[K comparable, VV, EV, M any](g *Graph[K, VV, EV], sg ScatterGather[K, VV, EV, M], o Options) *dataset.DataSet[Vertex[K, VV]] {
	return run(g, o, "scatter-gather iteration", &scatterGather[K, VV, EV, M]{sg: sg})
}

type scatterGather[K comparable, VV, EV, M any] struct {
	sg     ScatterGather[K, VV, EV, M]
	box    *mailbox[M]
	active []bool
}

func (m *scatterGather[K, VV, EV, M]) validate() error {
	if m.sg.Scatter == nil || m.sg.Gather == nil {
		return errors.New("want both Scatter and Gather functions")
	}
	return nil
}

func (m *scatterGather[K, VV, EV, M]) combiner() func(a, b M) M { return m.sg.Combine }

func (m *scatterGather[K, VV, EV, M]) pulls() bool { return m.sg.Combine != nil }

func (m *scatterGather[K, VV, EV, M]) superstep(e *engine[K, VV, EV, M]) (bool, error) {
	if m.box == nil {
		m.box = e.newMailbox(m.sg.Combine)
		m.active = make([]bool, len(e.g.ids))
	}
	all, active := e.step == 1 || e.o.AllActive, m.active
	err := e.sweepEdges(m.box, func(c *Context[K, VV, EV, M], v uint32) {
		if all || active[v] {
			c.active++
			m.sg.Scatter(c, e.vertex(v))
		}
	})
	if err != nil {
		return false, err
	}
	m.box.deliver()
	if err := e.settle(m.box); err != nil {
		return false, err
	}
	clear(e.updated)
	box, every := m.box, e.o.AllActive
	err = e.sweepVertices(func(c *Context[K, VV, EV, M], v uint32) {
		msgs := box.get(v, e.scratch[c.w])
		if msgs != nil || every {
			m.sg.Gather(c, e.vertex(v), msgs)
		}
	})
	if err != nil {
		return false, err
	}
	e.resetAll(m.box)
	m.active, e.updated = e.updated, m.active
	updated := int64(0)
	for _, c := range e.ctxs {
		updated += c.updated
	}
	return updated > 0 || every, nil
}
