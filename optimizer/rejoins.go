package optimizer

import "fmt"

// breakRejoins makes blocking the exchange of every input that an operator
// reads after another one fully, when the two inputs share an ancestor: the
// shared producer would otherwise block on the later input's full channel
// while the operator waits for the end of the first.
func breakRejoins(p *Plan) error {
	anc := map[*Node]map[*Node]bool{}
	for _, n := range p.Nodes {
		a := map[*Node]bool{n: true}
		for _, in := range n.Inputs {
			for x := range anc[in] {
				a[x] = true
			}
		}
		anc[n] = a
	}
	for _, n := range p.Nodes {
		if len(n.Inputs) < 2 {
			continue
		}
		first := firstRead(n)
		if first < 0 {
			continue
		}
		for i, in := range n.Inputs {
			if i == first {
				continue
			}
			for _, x := range p.Nodes { // in plan order, for a stable note
				if anc[in][x] && anc[n.Inputs[first]][x] {
					n.Decision.Exchange[i] = Blocking
					n.Decision.Notes = append(n.Decision.Notes,
						fmt.Sprintf("input %d: blocking, it shares #%d with input %d, read first", i, x.ID, first))
					break
				}
			}
		}
	}
	return nil
}

// firstRead returns the input an operator reads to the end before the
// others, or -1 when it reads them all at once (a union).
func firstRead(n *Node) int {
	switch n.Decision.Local {
	case SortMerge:
		if il := n.Decision.InputLocal; len(il) == 2 && il[0] == LocalNone && il[1] != LocalNone {
			return 1 // input 0 is merged as it comes, after input 1 is sorted
		}
		return 0
	case HybridHashBuildFirst, SortCoGroup:
		return 0
	case HybridHashBuildSecond:
		return 1
	case NestedLoopsBlockFirst: // input 1 is broadcast and materialized first
		return 1
	case NestedLoopsBlockSecond:
		return 0
	}
	if n.Kind == MapPartition && n.Forced != nil {
		for i := range n.Inputs {
			if s, ok := n.Forced[i]; ok && s == Broadcast {
				return i // a broadcast set is read before the main input
			}
		}
	}
	return -1
}
