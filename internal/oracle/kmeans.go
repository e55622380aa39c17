package oracle

import (
	"cmp"
	"fmt"
	"slices"
)

// Centroid is a cluster centre with its id.
type Centroid struct {
	ID int64
	X  []float64
}

// KMeans runs iterations steps of Lloyd's algorithm from the given centroids,
// as Flink's KMeans example does, and returns the final centroids and, for
// each point, the id of its nearest final centroid.
//
// A step assigns every point to its nearest centroid by Euclidean distance
// (compared squared), ties going to the lowest centroid id, and moves every
// centroid to the mean of its points. A centroid that no point chose is
// dropped, as in Flink's example, whose new centroids are the groups of the
// assigned points. The result is sorted by id. Every point and centroid must
// have the same number of coordinates.
func KMeans(points [][]float64, centroids []Centroid, iterations int) ([]Centroid, []int64) {
	cs := sortedCopy(centroids)
	for _, c := range cs {
		if len(points) > 0 && len(c.X) != len(points[0]) {
			panic(fmt.Sprintf("oracle: centroid %d has %d coordinates, the points %d", c.ID, len(c.X), len(points[0])))
		}
	}
	for range iterations {
		assign := nearest(points, cs)
		sums := make([][]float64, len(cs))
		counts := make([]int, len(cs))
		for i, p := range points {
			k := assign[i]
			if sums[k] == nil {
				sums[k] = make([]float64, len(p))
			}
			for j, x := range p {
				sums[k][j] += x
			}
			counts[k]++
		}
		var next []Centroid
		for k, c := range cs {
			if counts[k] == 0 {
				continue
			}
			x := make([]float64, len(sums[k]))
			for j := range x {
				x[j] = sums[k][j] / float64(counts[k])
			}
			next = append(next, Centroid{ID: c.ID, X: x})
		}
		cs = next
	}
	idx := nearest(points, cs)
	ids := make([]int64, len(points))
	for i, k := range idx {
		ids[i] = cs[k].ID
	}
	return cs, ids
}

// nearest returns, per point, the index in cs (sorted by id) of its nearest
// centroid, the first one on ties.
func nearest(points [][]float64, cs []Centroid) []int {
	out := make([]int, len(points))
	if len(points) > 0 && len(cs) == 0 {
		panic("oracle: k-means without centroids")
	}
	for i, p := range points {
		if len(p) != len(cs[0].X) {
			panic(fmt.Sprintf("oracle: point %d has %d coordinates, the centroids %d", i, len(p), len(cs[0].X)))
		}
		best, bd := 0, -1.0
		for k, c := range cs {
			d := 0.0
			for j, x := range p {
				d += (x - c.X[j]) * (x - c.X[j])
			}
			if bd < 0 || d < bd {
				best, bd = k, d
			}
		}
		out[i] = best
	}
	return out
}

func sortedCopy(cs []Centroid) []Centroid {
	out := slices.Clone(cs)
	slices.SortStableFunc(out, func(a, b Centroid) int { return cmp.Compare(a.ID, b.ID) })
	return out
}
