package optimizer

import "fmt"

// loopBuild makes every join of an iteration's step that has a static
// (loop-invariant) input build on it: the join keeps that input as a hash
// index across supersteps instead of replaying it. CostBased plans so
// already; other planners may not know Node.Static.
func loopBuild(p *Plan) error {
	for _, n := range p.Nodes {
		if n.Loop == 0 || n.LoopRole.source() {
			continue
		}
		st := staticSide(n)
		if st < 0 {
			continue
		}
		d := &n.Decision
		if want := buildOn(st); d.Local != want {
			d.Local = want
			d.InputLocal = nil
			d.Notes = append(d.Notes, fmt.Sprintf("loop-invariant input %d: read once, kept as a hash index across supersteps", st))
		}
	}
	return nil
}
