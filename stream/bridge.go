package stream

import "github.com/weirdata/weir/stream/internal/graph"

// The harness of package streamtest runs the nodes of an Env's program.
func init() {
	graph.Bridge.Program = func(env any) *graph.Program { return env.(*Env).p }
	graph.Bridge.Stream = func(ds any) (*graph.Node, string) {
		return ds.(interface{ node() (*graph.Node, string) }).node()
	}
}

func (ds DataStream[T]) node() (*graph.Node, string) { return ds.n, ds.port }
