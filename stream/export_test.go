package stream

import "github.com/weirdata/weir/stream/internal/graph"

// operatorIDs returns the stable ids of the program's operators.
func (e *Env) operatorIDs() map[*graph.Node]string { return graph.OperatorIDs(e.p) }

// nodes returns the program's nodes.
func (e *Env) nodes() []*graph.Node { return e.p.Nodes }
