package iterate

import (
	"context"
	"fmt"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/graph"
)

// VertexComponent is a vertex with the id of its component: the smallest
// vertex id in it. The tags name its Parquet columns.
type VertexComponent struct {
	Vertex    int64 `weir:"vertex"`
	Component int64 `weir:"component"`
}

// GraphInputs name the vertex and edge files of a graph job; "" means the
// default data (or, for Vertices alone, the edges' endpoints).
type GraphInputs struct {
	Vertices string // vertex ids, one a line, or a Parquet column id
	Edges    string // "src dst" lines, or Parquet columns src and dst
}

// ConnectedComponents is Flink's ConnectedComponents example: a delta
// iteration whose solution set holds every vertex's component, starting as
// the vertex itself, and whose workset holds the vertices whose component
// changed in the last superstep. Every superstep sends the workset's
// components along the edges (in both directions: the graph is undirected),
// keeps the smallest candidate per vertex and, joined with the solution set,
// emits those smaller than the vertex's component: they are the delta and the
// next workset. The iteration ends when the workset is empty or after
// maxIterations supersteps. Edge endpoints missing from vertices are ignored.
//
//	vertices ─► (v, v) ─► solution set and workset
//	workset ─► join edges (both directions) on v ─► min per target ─► join solution set:
//	           smaller than its component? ─► delta = next workset
func ConnectedComponents(vertices *dataset.DataSet[int64], edges *dataset.DataSet[Edge], maxIterations int) *dataset.DataSet[VertexComponent] {
	vs := dataset.Map(vertices, func(v int64) VertexComponent { return VertexComponent{v, v} })
	both := dataset.FlatMap(edges, func(e Edge, emit func(Edge)) {
		emit(e)
		emit(Edge{Src: e.Dst, Dst: e.Src})
	})
	return dataset.IterateDelta(vs, vs, vertexOf, maxIterations,
		func(it *dataset.DeltaIteration[VertexComponent, int64], ws *dataset.DataSet[VertexComponent]) (*dataset.DataSet[VertexComponent], *dataset.DataSet[VertexComponent]) {
			cands := dataset.Join(ws, both, vertexOf, func(e Edge) int64 { return e.Src },
				func(x *VertexComponent, e *Edge) VertexComponent { return VertexComponent{e.Dst, x.Component} })
			mins := dataset.GroupBy(cands, vertexOf).Reduce(func(a, b VertexComponent) VertexComponent {
				return VertexComponent{a.Vertex, min(a.Component, b.Component)}
			})
			delta := dataset.JoinSolution(mins, it, vertexOf, func(w *VertexComponent, sol *VertexComponent, emit func(VertexComponent)) {
				if sol != nil && w.Component < sol.Component {
					emit(*w)
				}
			})
			return delta, delta
		})
}

func vertexOf(x VertexComponent) int64 { return x.Vertex }

// endpoints returns the distinct endpoints of edges.
func endpoints(edges *dataset.DataSet[Edge]) *dataset.DataSet[int64] {
	ends := dataset.FlatMap(edges, func(e Edge, emit func(int64)) {
		emit(e.Src)
		emit(e.Dst)
	})
	return dataset.Distinct(ends, dataset.Self[int64]())
}

// RunConnectedComponents runs ConnectedComponentsGraph, connected
// components over the edges' adjacency arrays, on in (default: Flink's
// ConnectedComponentsData; with edges but no vertices, the edges' endpoints
// are the vertices) and writes "vertex component" lines sorted by vertex, or
// to a Parquet o.Output the rows in that order with INT64 columns vertex and
// component. o.Executed sees the iteration's supersteps in
// Result.Iterations, each with the vertices whose component fell as its
// records.
func RunConnectedComponents(ctx context.Context, o Options, in GraphInputs, maxIterations int) error {
	env := dataset.New(o.Dataset)
	var vertices *dataset.DataSet[int64]
	var edges *dataset.DataSet[Edge]
	var err error
	if in.Edges == "" {
		edges = dataset.FromSlice(env, ComponentEdges)
	} else if edges, err = readEdges(env, "edges", in.Edges); err != nil {
		return fmt.Errorf("iterate: connected-components: edges file: %w", err)
	}
	switch {
	case in.Vertices != "":
		if vertices, err = readVertices(env, "vertices", in.Vertices); err != nil {
			return fmt.Errorf("iterate: connected-components: vertices file: %w", err)
		}
	case in.Edges == "":
		vertices = dataset.FromSlice(env, ComponentVertices)
	default:
		vertices = endpoints(edges)
	}
	var stats graph.Stats
	o.Executed = withGraphStats(o.Executed, "Connected components scatter-gather iteration", &stats)
	// declared sorted by vertex: the sort passes it through (graphjobs.go)
	cc := dataset.Sort(ConnectedComponentsGraph(vertices, edges, maxIterations, &stats), vertexOf, dataset.Ascending).On("id").WithParallelism(1)
	if isParquet(o.Output) {
		err = emitParquet(ctx, env, cc, o)
	} else {
		err = emit(ctx, env, dataset.Map(cc, func(x VertexComponent) string { return fmt.Sprintf("%d %d", x.Vertex, x.Component) }), o)
	}
	if err != nil {
		return fmt.Errorf("iterate: connected-components: %w", err)
	}
	return nil
}
