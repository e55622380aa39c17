package optimizer

import "fmt"

// loopExchanges fixes the exchanges around and inside iterations:
//
//   - A producer outside an iteration that feeds it (a replayed input, the
//     invariant side of a join, the initial input) and also operators after
//     it: the iteration reads its part to the end before its result exists,
//     while an operator after the iteration may wait for the result first (a
//     broadcast of it). Its edges to operators outside iterations block, so
//     that the producer never waits for them.
//   - Edges inside an iteration are pipelined: only pipelined edges carry
//     the end-of-superstep events. Branches of a step that rejoin are safe
//     when they part at a head or a replayer, which emit to each output on
//     their own, so no exchange waits for another. Where an earlier rule
//     made such an edge blocking and the branches part at an operator of the
//     step, a pipelined exchange could deadlock: such steps are refused.
func loopExchanges(p *Plan) error {
	feedsLoop := map[*Node]bool{}
	for _, n := range p.Nodes {
		if n.Loop == 0 {
			continue
		}
		for _, in := range n.Inputs {
			if in.Loop != n.Loop {
				feedsLoop[in] = true
			}
		}
	}
	for _, n := range p.Nodes {
		if n.Loop > 0 {
			continue
		}
		d := &n.Decision
		for i, in := range n.Inputs {
			if feedsLoop[in] && d.Exchange[i] != Blocking {
				d.Exchange[i] = Blocking
				d.Notes = append(d.Notes, fmt.Sprintf("input %d blocking: its producer also feeds an iteration", i))
			}
		}
	}
	for _, n := range p.Nodes {
		if n.Loop == 0 || n.LoopRole.source() {
			continue
		}
		d := &n.Decision
		blocking := false
		for i, in := range n.Inputs {
			if in.Loop == n.Loop && d.Exchange[i] == Blocking {
				d.Exchange[i] = Pipelined
				blocking = true
			}
		}
		if blocking && sharesStepAncestor(n) {
			return fmt.Errorf("%s: its inputs part at an operator inside the step function of iteration %d and meet again here, which needs a blocking exchange inside the iteration: compute the shared part from the partial solution in each branch, or union the branches", n.Name, n.Loop)
		}
	}
	return nil
}

// sharesStepAncestor reports whether two inputs of n (inside its iteration)
// both derive from one operator of the step (not a head or a replayer).
func sharesStepAncestor(n *Node) bool {
	seen := map[*Node]int{}
	for i, in := range n.Inputs {
		stack := []*Node{in}
		visited := map[*Node]bool{}
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if visited[x] || x.Loop != n.Loop || x.LoopRole != LoopStep {
				continue
			}
			visited[x] = true
			if j, ok := seen[x]; ok && j != i {
				return true
			}
			seen[x] = i
			stack = append(stack, x.Inputs...)
		}
	}
	return false
}
