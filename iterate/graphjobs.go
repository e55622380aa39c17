package iterate

import (
	"math"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/graph"
)

// PageRankGraph is PageRank as a scatter-gather iteration of the graph
// package over the links' adjacency arrays: every page starts at rank 1/N,
// N the number of pages (taken by the iteration itself, with no pass over
// the pages before it); in every superstep every page scatters
// rank/outdegree along its links and gathers rank' = (1-d)/N + d*sum, as
// PageRank computes it. It differs from PageRank in one precondition: links
// to or from an id that is no page are left out (PageRank gives such an id
// a rank). The result comes out of one subtask sorted by page id, declared
// on the logical field "id" (dataset's SortedOn), so a Sort by id named
// "id" at parallelism 1 sorts nothing. stats, when set, receives the
// iteration's figures.
func PageRankGraph(pages *dataset.DataSet[int64], links *dataset.DataSet[Edge], p PageRankParams, stats *graph.Stats) *dataset.DataSet[Page] {
	// a page's rank in superstep 1 is 1/N, which only the iteration knows
	initial := dataset.Map(pages, func(id int64) graph.Vertex[int64, float64] { return graph.Vertex[int64, float64]{ID: id} })
	rank := func(c *graph.Context[int64, float64, struct{}, float64], r float64) float64 {
		if c.Superstep() == 1 {
			return 1 / float64(c.NumVertices())
		}
		return r
	}
	edges := dataset.Map(links, func(l Edge) graph.Edge[int64, struct{}] { return graph.Edge[int64, struct{}]{Src: l.Src, Dst: l.Dst} })
	o := graph.Options{MaxIterations: p.Iterations, AllActive: true, Stats: stats}
	if eps := p.Epsilon; eps >= 0 {
		o.Converged = func(_ int, change float64) bool { return change <= eps }
	}
	type ctx = graph.Context[int64, float64, struct{}, float64]
	ranks := graph.RunScatterGather(graph.FromDataSet(initial, edges), graph.ScatterGather[int64, float64, struct{}, float64]{
		Scatter: func(c *ctx, v graph.Vertex[int64, float64]) {
			if d := c.Degree(); d > 0 {
				c.SendToAllNeighbors(rank(c, v.Value) / float64(d))
			}
		},
		Gather: func(c *ctx, v graph.Vertex[int64, float64], msgs []float64) {
			sum := 0.0
			for _, m := range msgs {
				sum += m
			}
			r := (1-Damping)/float64(c.NumVertices()) + Damping*sum
			c.Aggregate(math.Abs(r - rank(c, v.Value)))
			c.SetNewVertexValue(r)
		},
		Combine: graph.SumCombiner[float64](),
	}, o).SortedOn(dataset.Ascending, "id") // int64 keys: in key order
	return dataset.Map(ranks, func(v graph.Vertex[int64, float64]) Page { return Page{ID: v.ID, Rank: v.Value} }).Forwards("id")
}

// ConnectedComponentsGraph is ConnectedComponents as a scatter-gather
// iteration of the graph package (Gelly's ConnectedComponents) over the edges
// taken both ways: a vertex whose component fell sends it to its neighbours,
// each keeps the least one it receives when it is below its own (messages
// combined by their minimum). It ends when no component changes, or after
// maxIterations supersteps. Edge endpoints missing from vertices are ignored.
// As PageRankGraph's, the result comes out of one subtask sorted by vertex,
// declared on the logical field "id".
func ConnectedComponentsGraph(vertices *dataset.DataSet[int64], edges *dataset.DataSet[Edge], maxIterations int, stats *graph.Stats) *dataset.DataSet[VertexComponent] {
	vs := dataset.Map(vertices, func(v int64) graph.Vertex[int64, int64] { return graph.Vertex[int64, int64]{ID: v, Value: v} })
	es := dataset.Map(edges, func(e Edge) graph.Edge[int64, struct{}] { return graph.Edge[int64, struct{}]{Src: e.Src, Dst: e.Dst} })
	type ctx = graph.Context[int64, int64, struct{}, int64]
	cc := graph.RunScatterGather(graph.FromDataSet(vs, es), graph.ScatterGather[int64, int64, struct{}, int64]{
		Scatter: func(c *ctx, v graph.Vertex[int64, int64]) { c.SendToAllNeighbors(v.Value) },
		Gather: func(c *ctx, v graph.Vertex[int64, int64], least []int64) {
			if least[0] < v.Value {
				c.SetNewVertexValue(least[0])
			}
		},
		Combine: graph.MinCombiner[int64](),
	}, graph.Options{MaxIterations: maxIterations, Direction: graph.All, Stats: stats}).SortedOn(dataset.Ascending, "id") // int64 keys: in key order
	return dataset.Map(cc, func(v graph.Vertex[int64, int64]) VertexComponent { return VertexComponent{v.ID, v.Value} }).Forwards("id")
}

// ShortestPathsGraph is ShortestPaths as a vertex-centric iteration of the
// graph package (Gelly's SingleSourceShortestPaths): every vertex starts at
// +Inf but the source at 0; a vertex computes when distances reach it, keeps
// the least one if it is below its own and sends it plus each edge's weight
// along its out-edges; messages are combined by their minimum. The result
// holds the vertices the source reaches, as ShortestPaths'. maxIterations
// bounds the rounds of relaxation as ShortestPaths' does (the graph runs one
// superstep more: in its first only the source sends), so both find the
// same distances for any maxIterations. As PageRankGraph's, the result
// comes out of one subtask sorted by vertex, declared on the logical field
// "id".
func ShortestPathsGraph(edges *dataset.DataSet[WeightedEdge], source int64, maxIterations int, stats *graph.Stats) *dataset.DataSet[Distance] {
	ends := dataset.FlatMap(edges, func(e WeightedEdge, emit func(int64)) {
		emit(e.Src)
		emit(e.Dst)
	})
	ids := dataset.Distinct(dataset.Union(ends, dataset.FromSlice(edges.Env(), []int64{source})), dataset.Self[int64]())
	vs := dataset.Map(ids, func(v int64) graph.Vertex[int64, float64] {
		d := math.Inf(1)
		if v == source {
			d = 0
		}
		return graph.Vertex[int64, float64]{ID: v, Value: d}
	})
	es := dataset.Map(edges, func(e WeightedEdge) graph.Edge[int64, float64] {
		return graph.Edge[int64, float64]{Src: e.Src, Dst: e.Dst, Value: e.Weight}
	})
	type ctx = graph.Context[int64, float64, float64, float64]
	ds := graph.RunVertexCentric(graph.FromDataSet(vs, es), graph.VertexCentric[int64, float64, float64, float64]{
		Compute: func(c *ctx, v graph.Vertex[int64, float64], msgs []float64) {
			d := v.Value
			if len(msgs) == 0 {
				if d != 0 { // superstep 1: only the source sends
					return
				}
			} else if msgs[0] < d {
				d = msgs[0]
				c.SetNewVertexValue(d)
			} else {
				return
			}
			c.SendAlongEdges(func(w float64) float64 { return d + w })
		},
		Combine: graph.MinCombiner[float64](),
	}, graph.Options{MaxIterations: relaxations(maxIterations), Stats: stats}).SortedOn(dataset.Ascending, "id") // int64 keys: in key order
	reached := ds.Filter(func(v graph.Vertex[int64, float64]) bool { return !math.IsInf(v.Value, 1) })
	return dataset.Map(reached, func(v graph.Vertex[int64, float64]) Distance { return Distance{v.ID, v.Value} }).Forwards("id")
}

// relaxations returns the supersteps of the vertex-centric shortest paths
// that relax maxIterations times: its first superstep only starts the
// source, whose distances the next one receives.
func relaxations(maxIterations int) int {
	if maxIterations >= math.MaxInt-1 {
		return math.MaxInt
	}
	return maxIterations + 1
}
