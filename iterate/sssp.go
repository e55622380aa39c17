package iterate

import (
	"context"
	"fmt"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/graph"
)

// WeightedEdge is a directed edge with a weight.
type WeightedEdge struct {
	Src, Dst int64
	Weight   float64
}

// Distance is a vertex with the length of its shortest path from the source.
// The tags name its Parquet columns.
type Distance struct {
	Vertex   int64   `weir:"vertex"`
	Distance float64 `weir:"distance"`
}

// ShortestPaths computes the length of the shortest directed path from source
// to every vertex it reaches, as a delta iteration (Bellman-Ford, relaxing
// only from the vertices whose distance changed): the solution set holds the
// distances found so far, starting with the source at 0, and the workset the
// vertices whose distance fell in the last superstep. Every superstep sends
// the workset's distances along the out-edges, keeps the smallest candidate
// per vertex and, joined with the solution set, emits those shorter than the
// known distance (or the first one): the delta and the next workset.
// Vertices the source does not reach are not in the result. Weights may be
// negative, but a negative cycle reachable from the source runs to
// maxIterations.
func ShortestPaths(edges *dataset.DataSet[WeightedEdge], source int64, maxIterations int) *dataset.DataSet[Distance] {
	start := dataset.FromSlice(edges.Env(), []Distance{{Vertex: source}})
	return dataset.IterateDelta(start, start, distVertex, maxIterations,
		func(it *dataset.DeltaIteration[Distance, int64], ws *dataset.DataSet[Distance]) (*dataset.DataSet[Distance], *dataset.DataSet[Distance]) {
			cands := dataset.Join(ws, edges, distVertex, func(e WeightedEdge) int64 { return e.Src },
				func(d *Distance, e *WeightedEdge) Distance { return Distance{e.Dst, d.Distance + e.Weight} })
			mins := dataset.GroupBy(cands, distVertex).Reduce(func(a, b Distance) Distance {
				return Distance{a.Vertex, min(a.Distance, b.Distance)}
			})
			delta := dataset.JoinSolution(mins, it, distVertex, func(w *Distance, sol *Distance, emit func(Distance)) {
				if sol == nil || w.Distance < sol.Distance {
					emit(*w)
				}
			})
			return delta, delta
		})
}

func distVertex(d Distance) int64 { return d.Vertex }

// parseWeightedEdge reads "src dst weight".
func parseWeightedEdge(line []byte) (WeightedEdge, error) {
	a, rest, okA := nextField(line)
	b, rest, okB := nextField(rest)
	w, _, okW := nextField(rest)
	if !okA || !okB || !okW {
		return WeightedEdge{}, fmt.Errorf("%q: want src, dst and weight separated by spaces", line)
	}
	va, err := atoi64(a)
	if err != nil {
		return WeightedEdge{}, fmt.Errorf("vertex %q: %w", a, err)
	}
	vb, err := atoi64(b)
	if err != nil {
		return WeightedEdge{}, fmt.Errorf("vertex %q: %w", b, err)
	}
	xs, err := parseFloats(w)
	if err != nil {
		return WeightedEdge{}, fmt.Errorf("weight %w", err)
	}
	return WeightedEdge{Src: va, Dst: vb, Weight: xs[0]}, nil
}

// RunShortestPaths runs ShortestPathsGraph from source on edges ("src dst weight"
// lines; "" for PathEdges) and writes "vertex distance" lines sorted by
// vertex, or to a Parquet o.Output the rows in that order with columns vertex
// (INT64) and distance (DOUBLE).
func RunShortestPaths(ctx context.Context, o Options, edges string, source int64, maxIterations int) error {
	env := dataset.New(o.Dataset)
	var in *dataset.DataSet[WeightedEdge]
	var err error
	if edges == "" {
		in = dataset.FromSlice(env, PathEdges)
	} else if in, err = readLines(env, "edges", edges, parseWeightedEdge); err != nil {
		return fmt.Errorf("iterate: sssp: edges file: %w", err)
	}
	var stats graph.Stats
	o.Executed = withGraphStats(o.Executed, "Shortest paths vertex-centric iteration", &stats)
	// declared sorted by vertex: the sort passes it through (graphjobs.go)
	ds := dataset.Sort(ShortestPathsGraph(in, source, maxIterations, &stats), distVertex, dataset.Ascending).On("id").WithParallelism(1)
	if isParquet(o.Output) {
		err = emitParquet(ctx, env, ds, o)
	} else {
		err = emit(ctx, env, dataset.Map(ds, func(d Distance) string { return fmt.Sprintf("%d %s", d.Vertex, formatFloat(d.Distance)) }), o)
	}
	if err != nil {
		return fmt.Errorf("iterate: sssp: %w", err)
	}
	return nil
}
