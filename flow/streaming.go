package flow

import "fmt"

// checkStreaming refuses, in a streaming job (Options.Streaming), the edges
// whose consumers read only after every producer ended: a producer that runs
// until the job is cancelled would hold them back forever. Those are Blocking
// edges and Range edges without Bounds (sampled ranges buffer the producer's
// whole output to choose their bounds).
func checkStreaming(g *Graph) error {
	for _, e := range g.edges {
		b := e.base()
		if b.mode == Blocking {
			return fmt.Errorf("flow: edge %s: a streaming job has no BLOCKING edges", b.name)
		}
		if b.sampled {
			return fmt.Errorf("flow: edge %s: a streaming job has no RANGE edges without Bounds (sampled ranges)", b.name)
		}
	}
	return nil
}
