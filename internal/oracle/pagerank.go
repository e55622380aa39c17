package oracle

import (
	"fmt"
	"math"
)

// PageRank returns the ranks of the vertices 0..n-1 after iterations steps of
// power iteration from rank 1/n, as Flink's PageRank example computes them:
//
//	rank'(v) = (1-d)/n + d * Σ_{u→v} rank(u)/outdeg(u)
//
// with d the damping factor. Edges are directed, u→v is edges[i] = {u, v};
// duplicate edges count as many times as they appear (outdeg counts them too),
// as Flink's adjacency lists keep them.
//
// Dangling vertices (no out-edges) pass their rank to no one: it leaks, and
// the ranks sum to less than 1, as in Flink's example, which joins ranks with
// adjacency lists and so drops a dangling vertex's rank. A vertex with no
// in-edges keeps rank (1-d)/n. (Flink's example differs here: it sums
// contributions grouped by target, so such a vertex disappears from the
// ranks after the first step and contributes nothing afterwards; a job that
// wants this oracle's answer adds a zero contribution to every vertex.)
func PageRank(n int, edges [][2]int64, damping float64, iterations int) []float64 {
	ranks, _ := pageRank(n, edges, damping, iterations, -1)
	return ranks
}

// PageRankConverged runs PageRank's steps until no rank changes by more than
// eps in one step (Flink's example's termination criterion: it stops after
// the first step whose result no vertex's change exceeds eps), or after
// maxIterations steps. It returns the ranks and the number of steps run.
func PageRankConverged(n int, edges [][2]int64, damping, eps float64, maxIterations int) ([]float64, int) {
	return pageRank(n, edges, damping, maxIterations, eps)
}

// pageRank runs at most iterations steps, stopping after a step in which no
// rank changed by more than eps if eps >= 0.
func pageRank(n int, edges [][2]int64, damping float64, iterations int, eps float64) ([]float64, int) {
	outdeg := make([]int, n)
	for _, e := range edges {
		checkVertex(n, e[0])
		checkVertex(n, e[1])
		outdeg[e[0]]++
	}
	rank := make([]float64, n)
	for v := range rank {
		rank[v] = 1 / float64(n)
	}
	next := make([]float64, n)
	steps := 0
	for steps < iterations {
		sum := make([]float64, n)
		for _, e := range edges {
			sum[e[1]] += rank[e[0]] / float64(outdeg[e[0]])
		}
		change := 0.0
		for v := range next {
			next[v] = (1-damping)/float64(n) + damping*sum[v]
			change = max(change, math.Abs(next[v]-rank[v]))
		}
		rank, next = next, rank
		steps++
		if eps >= 0 && change <= eps {
			break
		}
	}
	return rank, steps
}

func checkVertex(n int, v int64) {
	if v < 0 || v >= int64(n) {
		panic(fmt.Sprintf("oracle: vertex %d out of [0, %d)", v, n))
	}
}
