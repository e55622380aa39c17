package graph

import (
	"errors"

	"github.com/weirdata/weir/dataset"
)

// GatherSumApply is a gather-sum-apply iteration, Gelly's
// GatherSumApplyIteration. In every superstep each vertex u whose value
// changed in the last superstep (every vertex in superstep 1, and with
// Options.AllActive) offers Gather(u's value, the edge's value) along each of
// its edges (in Gelly's terms: the targets gather from their neighbour u);
// the offers to a vertex are summed with Sum into a dense array, and Apply
// turns a vertex's sum and value into its new value. The iteration ends when
// a superstep changes no value.
type GatherSumApply[K comparable, VV, EV, M any] struct {
	Gather func(neighbor VV, edge EV) M
	// Sum combines two offers; it must be associative and commutative.
	Sum func(a, b M) M
	// Apply returns the vertex's new value and true, or false to keep it.
	Apply func(sum M, value VV) (VV, bool)
}

// RunGatherSumApply runs gsa on g and returns every vertex with its value
// after the last superstep (Gelly's Graph.runGatherSumApplyIteration).
func RunGatherSumApply[K comparable, VV, EV, M any](g *Graph[K, VV, EV], gsa GatherSumApply[K, VV, EV, M], o Options) *dataset.DataSet[Vertex[K, VV]] {
	return run(g, o, "gather-sum-apply iteration", &gatherSumApply[K, VV, EV, M]{gsa: gsa})
}

type gatherSumApply[K comparable, VV, EV, M any] struct {
	gsa    GatherSumApply[K, VV, EV, M]
	box    *mailbox[M]
	active []bool
}

func (m *gatherSumApply[K, VV, EV, M]) validate() error {
	if m.gsa.Gather == nil || m.gsa.Sum == nil || m.gsa.Apply == nil {
		return errors.New("want Gather, Sum and Apply functions")
	}
	return nil
}

func (m *gatherSumApply[K, VV, EV, M]) combiner() func(a, b M) M { return m.gsa.Sum }

func (m *gatherSumApply[K, VV, EV, M]) pulls() bool { return false }

func (m *gatherSumApply[K, VV, EV, M]) superstep(e *engine[K, VV, EV, M]) (bool, error) {
	if m.box == nil {
		m.box = newMailbox(len(e.g.ids), e.workers, m.gsa.Sum) // offers are per edge: no broadcasts
		m.active = make([]bool, len(e.g.ids))
	}
	all, active, values, gather := e.step == 1 || e.o.AllActive, m.active, e.g.values, m.gsa.Gather
	err := e.sweepEdges(m.box, func(c *Context[K, VV, EV, M], v uint32) {
		if !all && !active[v] {
			return
		}
		c.active++
		ch := c.c
		a, b := ch.offsets[v-ch.lo], ch.offsets[v-ch.lo+1]
		sendGathered(c.out, c.w, ch.tgts()[a:b], ch.values[a:b], values[v], gather)
		c.sent += b - a
	})
	if err != nil {
		return false, err
	}
	clear(e.updated)
	box := m.box
	err = e.sweepVertices(func(c *Context[K, VV, EV, M], v uint32) {
		if msgs := box.get(v, e.scratch[c.w]); msgs != nil {
			if nv, ok := m.gsa.Apply(msgs[0], values[v]); ok {
				values[v] = nv
				e.updated[v] = true
				c.updated++
			}
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
	return updated > 0 || e.o.AllActive, nil
}
