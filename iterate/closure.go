package iterate

import (
	"context"
	"fmt"

	"github.com/weirdata/weir/dataset"
)

// TransitiveClosure returns every pair (src, dst) such that a directed path of
// one or more edges leads from src to dst, once each. It is a delta iteration
// keyed by the pair: the solution set holds the paths found so far, starting
// with the distinct edges, and the workset the paths new in the last
// superstep. Every superstep extends the new paths by one edge, and keeps
// those (distinct) the solution set does not hold yet: the delta and the next
// workset. The iteration ends when a superstep finds no new path, or after
// maxIterations supersteps (paths of up to maxIterations+1 edges). Flink's
// TransitiveClosureNaive gives the same pairs with a bulk iteration that
// joins all the paths with the edges every superstep.
func TransitiveClosure(edges *dataset.DataSet[Edge], maxIterations int) *dataset.DataSet[Edge] {
	paths := dataset.Distinct(edges, dataset.Self[Edge]())
	return dataset.IterateDelta(paths, paths, dataset.Self[Edge](), maxIterations,
		func(it *dataset.DeltaIteration[Edge, Edge], ws *dataset.DataSet[Edge]) (*dataset.DataSet[Edge], *dataset.DataSet[Edge]) {
			longer := dataset.Join(ws, edges, func(p Edge) int64 { return p.Dst }, func(e Edge) int64 { return e.Src },
				func(p *Edge, e *Edge) Edge { return Edge{Src: p.Src, Dst: e.Dst} })
			cands := dataset.Distinct(longer, dataset.Self[Edge]())
			delta := dataset.JoinSolution(cands, it, dataset.Self[Edge](), func(w *Edge, sol *Edge, emit func(Edge)) {
				if sol == nil {
					emit(*w)
				}
			})
			return delta, delta
		})
}

// RunTransitiveClosure runs TransitiveClosure on edges ("src dst" lines or
// Parquet columns src and dst; "" for ComponentEdges, as Flink's example)
// and writes "src dst" lines sorted, or to a Parquet o.Output the pairs in
// that order with INT64 columns src and dst.
func RunTransitiveClosure(ctx context.Context, o Options, edges string, maxIterations int) error {
	env := dataset.New(o.Dataset)
	var in *dataset.DataSet[Edge]
	var err error
	if edges == "" {
		in = dataset.FromSlice(env, ComponentEdges)
	} else if in, err = readEdges(env, "edges", edges); err != nil {
		return fmt.Errorf("iterate: transitive-closure: edges file: %w", err)
	}
	pairs := dataset.Sort(TransitiveClosure(in, maxIterations), dataset.Self[Edge](), dataset.Ascending)
	if isParquet(o.Output) {
		err = emitParquet(ctx, env, pairs, o)
	} else {
		err = emit(ctx, env, dataset.Map(pairs, func(e Edge) string { return fmt.Sprintf("%d %d", e.Src, e.Dst) }), o)
	}
	if err != nil {
		return fmt.Errorf("iterate: transitive-closure: %w", err)
	}
	return nil
}
