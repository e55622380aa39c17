package examples

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"sync"

	"github.com/weirdata/weir/dataset"
)

// Edge is an undirected edge between vertices A and B.
type Edge struct {
	A, B int64
}

// Triangle is three vertices connected with each other, A < B < C.
type Triangle struct {
	A, B, C int64
}

// triad is two edges sharing the vertex Apex: Apex-Lo and Apex-Hi, Lo < Hi.
type triad struct {
	Apex, Lo, Hi int64
}

// degreeEdge is an edge A < B with its vertices' degrees.
type degreeEdge struct {
	A, B   int64
	DA, DB int64
}

// RunTriangles is Flink's EnumTrianglesOpt: it reads edges ("a b" lines of
// integer vertex ids; "" for TriangleEdges) and writes every triangle as an
// "a b c" line, a < b < c, the lines sorted.
func RunTriangles(ctx context.Context, o Options, edges string) error {
	env := dataset.New(o.Dataset)
	var in *dataset.DataSet[Edge]
	if edges == "" {
		in = dataset.FromSlice(env, TriangleEdges)
	} else {
		src, err := openLines(edges, parseEdge)
		if err != nil {
			return fmt.Errorf("examples: enum-triangles: edges file: %w", err)
		}
		in = dataset.FromSource(env, "edges "+edges, src)
	}
	tris := TrianglesProgram(in)
	sorted := dataset.Sort(tris, func(t Triangle) Triangle { return t }, dataset.Ascending)
	out := dataset.Map(sorted, func(t Triangle) string {
		return strconv.FormatInt(t.A, 10) + " " + strconv.FormatInt(t.B, 10) + " " + strconv.FormatInt(t.C, 10)
	})
	if err := emit(ctx, env, out, o); err != nil {
		return fmt.Errorf("examples: enum-triangles: %w", err)
	}
	return nil
}

// TrianglesProgram enumerates the triangles of the undirected graph edges, in
// no particular order, as Flink's EnumTrianglesOpt does:
//
//	edges ─► drop self-loops, A < B, distinct ─┬─► degree of every vertex
//	                                           │      │ join on A, then on B
//	                                           ├──────┴─► edge by degree: the
//	                                           │          vertex of smaller (degree, id) first
//	                                           │            │ group by it: every pair of its
//	                                           │            ▼ neighbours is a triad
//	                                           └─────────► join triad (Lo, Hi) with edge (A, B):
//	                                                       a closed triad is a triangle
//
// Grouping on the smaller-degree vertex builds fewer triads than grouping on the
// smaller id, and each triangle comes from exactly one triad.
func TrianglesProgram(edges *dataset.DataSet[Edge]) *dataset.DataSet[Triangle] {
	byID := dataset.Distinct(dataset.Map(edges.Filter(func(e Edge) bool { return e.A != e.B }), orderByID),
		func(e Edge) Edge { return e })

	ends := dataset.FlatMap(byID, func(e Edge, emit func(dataset.KV[int64, int64])) {
		emit(dataset.KV[int64, int64]{Key: e.A, Value: 1})
		emit(dataset.KV[int64, int64]{Key: e.B, Value: 1})
	})
	degrees := dataset.GroupBy(ends, func(kv dataset.KV[int64, int64]) int64 { return kv.Key }).
		Reduce(func(a, b dataset.KV[int64, int64]) dataset.KV[int64, int64] {
			return dataset.KV[int64, int64]{Key: a.Key, Value: a.Value + b.Value}
		})
	withA := dataset.Join(byID, degrees, func(e Edge) int64 { return e.A }, kvKey,
		func(e *Edge, d *dataset.KV[int64, int64]) degreeEdge {
			return degreeEdge{A: e.A, B: e.B, DA: d.Value}
		})
	withBoth := dataset.Join(withA, degrees, func(e degreeEdge) int64 { return e.B }, kvKey,
		func(e *degreeEdge, d *dataset.KV[int64, int64]) degreeEdge {
			out := *e
			out.DB = d.Value
			return out
		})
	byDegree := dataset.Map(withBoth, func(e degreeEdge) Edge {
		if e.DA > e.DB { // ties keep the smaller id first
			return Edge{A: e.B, B: e.A}
		}
		return Edge{A: e.A, B: e.B}
	})
	triads := dataset.ReduceGroup(dataset.GroupBy(byDegree, func(e Edge) int64 { return e.A }), buildTriads)
	return dataset.Join(triads, byID, func(t triad) Edge { return Edge{A: t.Lo, B: t.Hi} }, func(e Edge) Edge { return e },
		func(t *triad, _ *Edge) Triangle { return sortedTriangle(t.Apex, t.Lo, t.Hi) })
}

func kvKey(kv dataset.KV[int64, int64]) int64 { return kv.Key }

func orderByID(e Edge) Edge {
	if e.A > e.B {
		return Edge{A: e.B, B: e.A}
	}
	return e
}

func sortedTriangle(a, b, c int64) Triangle {
	if a > b {
		a, b = b, a
	}
	if b > c {
		b, c = c, b
	}
	if a > b {
		a, b = b, a
	}
	return Triangle{A: a, B: b, C: c}
}

// neighbourLists hold the scratch slices of buildTriads, which ReduceGroup calls
// from every subtask at once.
var neighbourLists = sync.Pool{New: func() any { return new([]int64) }}

// buildTriads is Flink's TriadBuilder: the neighbours of apex, ascending, taken
// two at a time.
func buildTriads(apex int64, edges iter.Seq[Edge], emit func(triad)) {
	p := neighbourLists.Get().(*[]int64)
	vs := (*p)[:0]
	for e := range edges {
		vs = append(vs, e.B)
	}
	slices.Sort(vs)
	for j := 1; j < len(vs); j++ {
		for i := range j {
			emit(triad{Apex: apex, Lo: vs[i], Hi: vs[j]})
		}
	}
	*p = vs
	neighbourLists.Put(p)
}

// parseEdge reads "a b": two integer vertex ids separated by spaces or tabs;
// fields after them are ignored, as Flink's includeFields(true, true) does.
func parseEdge(line []byte, _ *slab) (Edge, error) {
	a, rest, okA := nextField(line)
	b, _, okB := nextField(rest)
	if !okA || !okB {
		return Edge{}, fmt.Errorf("%q: want two vertex ids separated by a space", line)
	}
	va, err := atoi64(a)
	if err != nil {
		return Edge{}, fmt.Errorf("vertex %q: %w", a, err)
	}
	vb, err := atoi64(b)
	if err != nil {
		return Edge{}, fmt.Errorf("vertex %q: %w", b, err)
	}
	return Edge{A: va, B: vb}, nil
}

// nextField returns the first run of bytes other than spaces and tabs in b and
// what follows it.
func nextField(b []byte) (field, rest []byte, ok bool) {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	j := i
	for j < len(b) && b[j] != ' ' && b[j] != '\t' {
		j++
	}
	return b[i:j], b[j:], j > i
}

// atoi64 parses a decimal int64 without allocating.
func atoi64(b []byte) (int64, error) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, errNoInt
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, errNoInt
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}
