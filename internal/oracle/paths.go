package oracle

import (
	"cmp"
	"container/heap"
	"fmt"
	"slices"
)

// WeightedEdge is a directed edge with a weight.
type WeightedEdge struct {
	Src, Dst int64
	Weight   float64
}

// ShortestPaths returns the length of the shortest directed path from source
// to every vertex it reaches (source itself at 0), by Dijkstra's algorithm.
// Vertices it does not reach are not in the result. Weights must not be
// negative (or NaN).
func ShortestPaths(source int64, edges []WeightedEdge) map[int64]float64 {
	out := map[int64][]WeightedEdge{}
	for _, e := range edges {
		if !(e.Weight >= 0) {
			panic(fmt.Sprintf("oracle: edge %d->%d has weight %g; Dijkstra needs weights >= 0", e.Src, e.Dst, e.Weight))
		}
		out[e.Src] = append(out[e.Src], e)
	}
	dist := map[int64]float64{}
	q := &distQueue{{source, 0}}
	for q.Len() > 0 {
		it := heap.Pop(q).(distItem)
		if _, done := dist[it.v]; done {
			continue
		}
		dist[it.v] = it.d
		for _, e := range out[it.v] {
			if _, done := dist[e.Dst]; !done {
				heap.Push(q, distItem{e.Dst, it.d + e.Weight})
			}
		}
	}
	return dist
}

type distItem struct {
	v int64
	d float64
}

type distQueue []distItem

func (q distQueue) Len() int           { return len(q) }
func (q distQueue) Less(i, j int) bool { return q[i].d < q[j].d }
func (q distQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *distQueue) Push(x any)        { *q = append(*q, x.(distItem)) }
func (q *distQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// TransitiveClosure returns every pair (u, v) such that a directed path of one
// or more edges leads from u to v (so (u, u) only when u is on a cycle), once
// each, sorted by u then v. It computes the closure the naive way, as Flink's
// TransitiveClosureNaive example does: it joins the paths found so far with
// the edges, adds the new pairs, and repeats until a round adds none.
func TransitiveClosure(edges [][2]int64) [][2]int64 {
	succ := map[int64][]int64{}
	paths := map[[2]int64]bool{}
	var all [][2]int64
	for _, e := range edges {
		succ[e[0]] = append(succ[e[0]], e[1])
		if !paths[e] {
			paths[e] = true
			all = append(all, e)
		}
	}
	for {
		added := false
		for _, p := range all[:len(all):len(all)] {
			for _, w := range succ[p[1]] {
				if q := [2]int64{p[0], w}; !paths[q] {
					paths[q] = true
					all = append(all, q)
					added = true
				}
			}
		}
		if !added {
			break
		}
	}
	res := make([][2]int64, 0, len(paths))
	for p := range paths {
		res = append(res, p)
	}
	slices.SortFunc(res, func(a, b [2]int64) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	return res
}
