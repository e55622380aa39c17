package oracle

// Components returns the connected component of every vertex of an
// undirected graph: edges join their endpoints in both directions, and a
// component is named by its smallest vertex id (as Flink's ConnectedComponents
// example, which propagates the minimum id, names it). Every id in vertices
// is in the result, a vertex without edges in a component of its own; an
// edge endpoint missing from vertices is added as a vertex.
func Components(vertices []int64, edges [][2]int64) map[int64]int64 {
	parent := map[int64]int64{}
	find := func(v int64) int64 {
		if _, ok := parent[v]; !ok {
			parent[v] = v
			return v
		}
		for parent[v] != v {
			parent[v] = parent[parent[v]] // path halving
			v = parent[v]
		}
		return v
	}
	for _, v := range vertices {
		find(v)
	}
	for _, e := range edges {
		a, b := find(e[0]), find(e[1])
		// the root of a set is its smallest id: hang the larger root below
		switch {
		case a < b:
			parent[b] = a
		case b < a:
			parent[a] = b
		}
	}
	out := make(map[int64]int64, len(parent))
	for v := range parent {
		out[v] = find(v)
	}
	return out
}
