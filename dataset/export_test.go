package dataset

import "github.com/weirdata/weir/optimizer"

// ModelOf returns the optimizer's model of env's program as planning starts
// from it: a copy of every node's model, with nothing planned.
func ModelOf(env *Env) *optimizer.Plan { return env.modelOf(env.nodes, nil) }

// VertexOf returns, per node of env's program (plan order), the index of the
// flow vertex (Result.Metrics.Vertices) its last execution ran it in.
func VertexOf(env *Env) []int {
	out := make([]int, len(env.nodes))
	for i, n := range env.nodes {
		out[i] = n.vertex
	}
	return out
}
