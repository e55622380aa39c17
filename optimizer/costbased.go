package optimizer

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// CostBased is the cost-based planner, on the design of Flink's batch
// optimizer (from Stratosphere's PACT compiler), with statistics:
//
//   - Estimates: every node's output rows and bytes, from source statistics,
//     the user's size hints and selectivities, and defaults otherwise
//     (estimate.go).
//   - Enumeration: bottom-up over the DAG, each operator's strategies are
//     enumerated against each of its inputs' candidate sub-plans: ship
//     strategies (forward, hash, range, broadcast, rebalance), driver
//     strategies (broadcast or repartition hybrid hash join with either build
//     side, sort-merge join; for a Reduce, hash aggregation or sorted
//     grouping, each with or without a combiner before a hash shuffle (the
//     combiner wins when its groups ship fewer bytes than the input, and
//     costs a pass when they would not); broadcast either side of a cross). A sort-merge join, a sorted grouping or a sort whose input
//     arrives forwarded and already sorted on its key does not sort it again
//     (InputLocal NONE): the join merges it, the grouping streams it, one
//     group at a time, and the sort passes it through; an order may be
//     declared (Node.Sorted), and one subtask is range-partitioned on any
//     key, so a total sort at parallelism 1 of an input declared sorted on
//     its key sorts nothing. A hash aggregation costs two units of CPU per row
//     (hash and probe, as a hash join's build), a streaming grouping one, a
//     sort n·log2(n/p).
//   - Interesting properties: a candidate carries the partitioning and order
//     its output has (props.go); an input already partitioned as the operator
//     needs it is forwarded, not shuffled again. Properties survive an operator
//     through the fields it declares forwarded (Node.Forwards), or all of them
//     when it passes its records through (Node.PreservesAll). A partitioning on
//     a subset of a grouping's fields satisfies the grouping; a join needs both
//     inputs hashed the same way (same fields, key type and parallelism).
//   - Costs: network bytes, then disk bytes, then CPU, compared in that order.
//     Pruning keeps, per operator, the cheapest candidate for each distinct
//     output property and at most maxCandidates overall; an operator with
//     several consumers keeps only its cheapest, so that it is computed once.
//   - Iterations: an operator of an iteration's step (Node.Iterations > 1)
//     costs its cost per superstep times the supersteps, except the work on
//     its static (loop-invariant) inputs, which is paid once: shipping them,
//     and a join's build on the static input it keeps as a hash index. Such
//     a join is only planned to build on its static input, hashed with the
//     other input, broadcast, or with the other input broadcast to its
//     partitions; so a step that joins a small dynamic input with a large
//     static one broadcasts the dynamic side when it runs a few times, and
//     hashes the static side once when it runs many. Notes give the cost per
//     superstep and what is paid once.
//   - Hints: join hints, cross size hints and forced ship strategies are
//     honoured exactly (a join with a static input keeps the hint's ship
//     strategies and builds on the static input).
//   - Exchanges are pipelined; the rules Optimize runs after the planner make
//     blocking those that must be (rules.go).
type CostBased struct{}

// maxCandidates bounds the sub-plans kept per operator.
const maxCandidates = 4

// cand is one candidate physical sub-plan ending at a node.
type cand struct {
	out     props
	cost    Costs // cumulative
	own     Costs
	ship    []Ship
	inLocal []InputLocal
	local   Local
	combine bool
	inputs  []*cand
	notes   []string
}

// Plan implements Planner.
func (CostBased) Plan(p *Plan) error {
	consumers := map[*Node]int{}
	for _, n := range p.Nodes {
		for _, in := range n.Inputs {
			consumers[in]++
		}
	}
	share := memoryShare(p)
	cands := map[*Node][]*cand{}
	for _, n := range p.Nodes {
		est := estimate(n)
		cs, err := enumerate(n, est, cands, share)
		if err != nil {
			return err
		}
		if len(cs) == 0 {
			return fmt.Errorf("optimizer: %s %q: no plan", n.Kind, n.Name)
		}
		cs = prune(cs, maxCandidates)
		if consumers[n] > 1 {
			cs = cs[:1] // computed once for all its consumers
		}
		cands[n] = cs
	}
	// choose top-down from the sinks (nodes no one consumes)
	chosen := map[*Node]*cand{}
	var choose func(n *Node, c *cand)
	choose = func(n *Node, c *cand) {
		if chosen[n] != nil {
			return
		}
		chosen[n] = c
		for i, in := range n.Inputs {
			choose(in, c.inputs[i])
		}
	}
	for i := len(p.Nodes) - 1; i >= 0; i-- {
		if n := p.Nodes[i]; consumers[n] == 0 {
			choose(n, cands[n][0])
		}
	}
	for _, n := range p.Nodes {
		c := chosen[n]
		if c == nil {
			c = cands[n][0]
		}
		d := Decision{
			Ship:       c.ship,
			Exchange:   make([]Exchange, len(n.Inputs)),
			InputLocal: c.inLocal,
			Local:      c.local,
			Combine:    c.combine,
			Estimate:   n.Decision.Estimate,
			Cost:       c.own,
			Cumulative: c.cost,
			Notes:      c.notes,
		}
		n.Decision = d
	}
	return nil
}

// prune keeps the cheapest candidate per output property, cheapest first, at
// most limit of them.
func prune(cs []*cand, limit int) []*cand {
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].cost.Compare(cs[j].cost) < 0 })
	seen := map[string]bool{}
	out := cs[:0:0]
	for _, c := range cs {
		k := c.out.key()
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, c)
		if len(out) == limit {
			break
		}
	}
	return out
}

// requirement is what an operator needs of one input's distribution.
type requirement struct {
	kind    reqKind
	fields  []string
	keyType string
	desc    []bool
	ship    Ship // reqForced
}

type reqKind uint8

const (
	reqAny       reqKind = iota // forwarded, or rebalanced to another parallelism
	reqGroup                    // equal keys together (grouping)
	reqCoHash                   // hash-partitioned exactly as the other input
	reqRange                    // range-partitioned on fields in order
	reqBroadcast                // replicated to every subtask
	reqForced                   // the user's Rebalance or Custom ship strategy
)

// satisfy returns how input i must be shipped to meet r, the properties it
// then has, and a note when an existing property is reused.
func (r requirement) satisfy(n *Node, i int, in *cand) (Ship, props, string) {
	par := n.Parallelism
	src := n.Inputs[i]
	keyed := func() props {
		return props{g: global{kind: hashPart, fields: r.fields, keyType: r.keyType, par: par}}
	}
	reuse := func(what string) string { return fmt.Sprintf("input %d: reuses %s of #%d", i, what, src.ID) }
	switch r.kind {
	case reqGroup:
		if in.out.g.groups(r.fields, par) {
			return Forward, in.out, reuse(in.out.g.String())
		}
		return Hash, keyed(), ""
	case reqCoHash:
		if in.out.g.hashedAs(r.fields, r.keyType, par) {
			return Forward, in.out, reuse(in.out.g.String())
		}
		return Hash, keyed(), ""
	case reqRange:
		if in.out.g.rangedAs(r.fields, r.desc, par) {
			if in.out.g.kind != rangePart {
				return Forward, in.out, reuse("the one subtask") // every key in key order
			}
			return Forward, in.out, reuse(in.out.g.String())
		}
		return Range, props{g: global{kind: rangePart, fields: r.fields, desc: r.desc, par: par}}, ""
	case reqBroadcast:
		return Broadcast, props{g: global{kind: replicatedPart, par: par}}, ""
	case reqForced: // Rebalance or Custom; see forcedRequirement for the others
		return r.ship, props{g: global{kind: forcedKinds[r.ship], par: par}}, ""
	}
	if src.Parallelism == par {
		return Forward, in.out, ""
	}
	return Rebalance, props{g: global{kind: rebalancedPart, par: par}}, ""
}

// strategy is one way to run an operator: what it needs of each input and
// how it runs.
type strategy struct {
	req     []requirement
	local   Local
	inLocal []InputLocal
	note    string
	// noCombine: a combinable Reduce shuffles its input as it is, without a
	// combiner (cheaper when the combiner would not shrink it)
	noCombine bool
}

// keysOf returns input i's logical key fields and key type.
func keysOf(n *Node, i int) ([]string, string) {
	var f []string
	var t string
	if i < len(n.Keys) {
		f = n.Keys[i]
	}
	if i < len(n.KeyTypes) {
		t = n.KeyTypes[i]
	}
	return f, t
}

// strategies lists the ways to run n, honouring its hints.
func strategies(n *Node) ([]strategy, error) {
	req := make([]requirement, len(n.Inputs))
	for i := range n.Inputs {
		f, t := keysOf(n, i)
		switch {
		case n.Forced != nil && hasForced(n, i):
			req[i] = forcedRequirement(n.Forced[i], f, t, n.Descending)
		case i < len(n.Ordered) && n.Ordered[i]:
			req[i] = requirement{kind: reqRange, fields: f, desc: n.Descending}
		case i < len(n.Keyed) && n.Keyed[i]:
			req[i] = requirement{kind: reqGroup, fields: f, keyType: t}
		}
	}
	sorts := func(k ...int) []InputLocal {
		l := make([]InputLocal, len(n.Inputs))
		for _, i := range k {
			l[i] = LocalSort
		}
		return l
	}
	switch n.Kind {
	case Reduce:
		// a hash aggregation, or sorted grouping, which streams an input
		// already sorted on the key (see build)
		out := []strategy{{req: req, local: HashAggregate}, {req: req, local: SortGroup, inLocal: sorts(0)}}
		if n.Combinable {
			out = append(out, strategy{req: req, local: HashAggregate, noCombine: true},
				strategy{req: req, local: SortGroup, inLocal: sorts(0), noCombine: true})
		}
		return out, nil
	case GroupReduce:
		return []strategy{{req: req, local: SortGroup, inLocal: sorts(0)}}, nil
	case Sort:
		return []strategy{{req: req, local: SortLocal, inLocal: sorts(0)}}, nil
	case CoGroup:
		co := coHash(n, req)
		return []strategy{{req: co, local: SortCoGroup, inLocal: sorts(0, 1)}}, nil
	case Join:
		return joinStrategies(n, req, sorts(0, 1))
	case Cross:
		return crossStrategies(n), nil
	}
	return []strategy{{req: req}}, nil
}

func hasForced(n *Node, i int) bool { _, ok := n.Forced[i]; return ok }

// forcedRequirement is the requirement of a ship strategy the user forced: a
// hash or range partitioning an input already has is reused, as Flink drops
// a partitionByHash of data partitioned so.
func forcedRequirement(ship Ship, fields []string, keyType string, desc []bool) requirement {
	switch ship {
	case Hash:
		return requirement{kind: reqCoHash, fields: fields, keyType: keyType}
	case Range:
		return requirement{kind: reqRange, fields: fields, desc: desc}
	case Broadcast:
		return requirement{kind: reqBroadcast}
	case Forward:
		return requirement{kind: reqAny}
	}
	return requirement{kind: reqForced, ship: ship}
}

// forcedKinds is the partitioning a forced Rebalance or Custom ship leaves.
var forcedKinds = map[Ship]partKind{Rebalance: rebalancedPart, Custom: customPart}

// coHash turns grouping requirements of a two-input operator into
// co-partitioning ones: both inputs hashed by keys of the same type.
func coHash(n *Node, req []requirement) []requirement {
	out := slices.Clone(req)
	for i := range out {
		if out[i].kind == reqGroup {
			out[i].kind = reqCoHash
		}
	}
	// without declared fields an input cannot prove a partitioning: it is shipped
	return out
}

func joinStrategies(n *Node, req []requirement, sortBoth []InputLocal) ([]strategy, error) {
	co := coHash(n, req)
	bcast := func(b int) strategy {
		r := make([]requirement, 2)
		r[b] = requirement{kind: reqBroadcast}
		r[1-b] = requirement{kind: reqAny}
		l := HybridHashBuildFirst
		if b == 1 {
			l = HybridHashBuildSecond
		}
		return strategy{req: r, local: l}
	}
	all := map[JoinHint]strategy{
		BroadcastHashFirst:    bcast(0),
		BroadcastHashSecond:   bcast(1),
		RepartitionHashFirst:  {req: co, local: HybridHashBuildFirst},
		RepartitionHashSecond: {req: co, local: HybridHashBuildSecond},
		RepartitionSortMerge:  {req: co, local: SortMerge, inLocal: sortBoth},
	}
	st := staticSide(n)
	if n.JoinHint != OptimizerChooses {
		s, ok := all[n.JoinHint]
		if !ok {
			return nil, fmt.Errorf("optimizer: join %q: unknown hint %d", n.Name, n.JoinHint)
		}
		if b := broadcastSide(n.JoinHint); b >= 0 && n.Outer[b] {
			return nil, fmt.Errorf("optimizer: join %q: %s cannot keep the unmatched records of the broadcast input", n.Name, n.JoinHint)
		}
		s.note = "hint " + n.JoinHint.String()
		if st >= 0 && s.local != buildOn(st) {
			// the ship strategies are the hint's; the table is the kept static input
			s.local = buildOn(st)
			s.inLocal = nil
			s.note += fmt.Sprintf(", built on static input %d", st)
		}
		return []strategy{s}, nil
	}
	if st >= 0 {
		// the static input is kept as the hash table across supersteps: build
		// on it, hashed with the other input or broadcast, or broadcast the
		// other input to its partitions
		out := []strategy{{req: co, local: buildOn(st)}, bcast(st)}
		if d := 1 - st; !n.Outer[d] {
			r := make([]requirement, 2)
			r[d] = requirement{kind: reqBroadcast}
			r[st] = requirement{kind: reqAny}
			out = append(out, strategy{req: r, local: buildOn(st)})
		}
		return out, nil
	}
	var out []strategy
	for _, h := range []JoinHint{RepartitionHashFirst, RepartitionHashSecond, BroadcastHashFirst, BroadcastHashSecond, RepartitionSortMerge} {
		if b := broadcastSide(h); b >= 0 && n.Outer[b] {
			continue
		}
		out = append(out, all[h])
	}
	return out, nil
}

// staticSide returns the static input of a Join (see Node.Static), or -1.
func staticSide(n *Node) int {
	if n.Kind != Join {
		return -1
	}
	for i, st := range n.Static {
		if st && i < 2 {
			return i
		}
	}
	return -1
}

// buildOn is the hybrid hash strategy that builds on input b.
func buildOn(b int) Local {
	if b == 1 {
		return HybridHashBuildSecond
	}
	return HybridHashBuildFirst
}

func broadcastSide(h JoinHint) int {
	switch h {
	case BroadcastHashFirst:
		return 0
	case BroadcastHashSecond:
		return 1
	}
	return -1
}

func crossStrategies(n *Node) []strategy {
	mk := func(b int) strategy {
		r := make([]requirement, 2)
		r[b] = requirement{kind: reqBroadcast}
		r[1-b] = requirement{kind: reqAny}
		l := NestedLoopsBlockFirst
		if b == 0 {
			l = NestedLoopsBlockSecond
		}
		return strategy{req: r, local: l}
	}
	switch n.CrossHint {
	case SecondIsTiny:
		s := mk(1)
		s.note = "hint: the second input is tiny"
		return []strategy{s}
	case SecondIsHuge:
		s := mk(0)
		s.note = "hint: the second input is huge"
		return []strategy{s}
	}
	return []strategy{mk(1), mk(0)}
}

// enumerate returns n's candidates: every strategy against every combination
// of its inputs' candidates.
func enumerate(n *Node, est Estimate, cands map[*Node][]*cand, share float64) ([]*cand, error) {
	if len(n.Inputs) == 0 {
		out := props{g: global{kind: anyPart, par: n.Parallelism}}
		if len(n.Sorted) > 0 {
			out.l = local{order: n.Sorted, desc: n.SortedDesc}
		}
		return []*cand{{out: out, ship: []Ship{}}}, nil
	}
	strats, err := strategies(n)
	if err != nil {
		return nil, err
	}
	var out []*cand
	for _, s := range strats {
		combos := [][]*cand{{}}
		for _, in := range n.Inputs {
			var next [][]*cand
			for _, c := range combos {
				for _, ic := range cands[in] {
					next = append(next, append(slices.Clip(c), ic))
				}
			}
			combos = next
		}
		for _, ins := range combos {
			out = append(out, build(n, est, s, ins, share))
		}
	}
	return out, nil
}

// build costs strategy s of n over the input candidates ins.
func build(n *Node, est Estimate, s strategy, ins []*cand, share float64) *cand {
	c := &cand{inputs: ins, ship: make([]Ship, len(ins)), local: s.local, inLocal: s.inLocal}
	if c.inLocal == nil {
		c.inLocal = make([]InputLocal, len(ins))
	}
	if s.note != "" {
		c.notes = append(c.notes, s.note)
	}
	shipped := make([]props, len(ins))
	for i, in := range ins {
		var note string
		c.ship[i], shipped[i], note = s.req[i].satisfy(n, i, in)
		if note != "" {
			c.notes = append(c.notes, note)
		}
		c.cost = c.cost.Add(in.cost)
	}
	rows := func(i int) float64 { return float64(max(n.Inputs[i].Decision.Estimate.Rows, 0)) }
	bytes := func(i int) float64 { return float64(max(n.Inputs[i].Decision.Estimate.Bytes, 0)) }
	par := float64(max(n.Parallelism, 1))
	k := float64(max(n.Iterations, 1)) // supersteps
	// per is the cost of one superstep (of the only run outside iterations);
	// once the work on static inputs, paid in the first superstep only
	var per, once Costs
	at := func(i int) *Costs {
		if isStatic(n, i) {
			return &once
		}
		return &per
	}
	for i := range ins {
		b := bytes(i)
		switch c.ship[i] {
		case Forward:
		case Broadcast:
			at(i).Network += b * par
		default:
			if n.Kind == Reduce && n.Combinable && s.noCombine && c.ship[i] == Hash {
				c.notes = append(c.notes, "no combiner: it would not shrink the input")
			}
			if n.Kind == Reduce && n.Combinable && !s.noCombine && c.ship[i] == Hash {
				// a combiner before the shuffle ships at most the groups of each producer subtask
				c.combine = true
				at(i).CPU += rows(i)
				b = min(b, float64(max(est.Bytes, 0))*float64(max(n.Inputs[i].Parallelism, 1)))
			}
			at(i).Network += b
		}
	}
	// an input already sorted on the key is merged, or grouped, as it comes
	if s.local == SortMerge || (n.Kind == Reduce && s.local == SortGroup) {
		c.inLocal = slices.Clone(c.inLocal)
		for i := range ins {
			f, t := keysOf(n, i)
			if c.ship[i] == Forward && shipped[i].l.sortedAs(f, t) {
				c.inLocal[i] = LocalNone
				c.notes = append(c.notes, fmt.Sprintf("input %d: reuses %s of #%d", i, shipped[i].l, n.Inputs[i].ID))
			}
		}
	}
	// a total or partition sort whose input arrives sorted on its key, in
	// its directions, sorts nothing: its records pass through
	if s.local == SortLocal && c.ship[0] == Forward {
		f, t := keysOf(n, 0)
		if shipped[0].l.orderedAs(f, n.Descending, t) {
			c.inLocal = []InputLocal{LocalNone}
			c.notes = append(c.notes, fmt.Sprintf("input 0: reuses %s of #%d", shipped[0].l, n.Inputs[0].ID))
		}
	}
	sortCost := func(i int) Costs {
		if c.inLocal[i] == LocalNone {
			return Costs{}
		}
		r, b := rows(i), bytes(i)
		cost := Costs{CPU: r * math.Log2(max(2, r/par))}
		if b/par > share {
			cost.Disk = 2 * b
		}
		return cost
	}
	switch s.local {
	case HashAggregate: // every row hashed, probed and folded into its group
		per.CPU += 2 * rows(0)
		if float64(est.Bytes)/par > share {
			per.Disk += 2 * bytes(0)
		}
	case SortGroup, SortLocal:
		*at(0) = at(0).Add(sortCost(0))
		if n.Kind == Reduce { // the walk over the sorted groups: one pass, one group held
			per.CPU += rows(0)
		}
	case SortMerge, SortCoGroup:
		*at(0) = at(0).Add(sortCost(0))
		*at(1) = at(1).Add(sortCost(1))
		per.CPU += rows(0) + rows(1)
	case HybridHashBuildFirst, HybridHashBuildSecond:
		b := 0
		if s.local == HybridHashBuildSecond {
			b = 1
		}
		buildRows, buildBytes := rows(b), bytes(b)
		perSubtask := buildBytes / par
		if c.ship[b] == Broadcast {
			perSubtask = buildBytes
			buildRows *= par // every subtask builds the whole table
		}
		// a static build side is built once and probed every superstep
		at(b).CPU += 2 * buildRows
		at(1 - b).CPU += rows(1 - b)
		if perSubtask > share {
			spilled := 1 - share/perSubtask
			at(b).Disk += 2 * spilled * bytes(b)
			at(1 - b).Disk += 2 * spilled * bytes(1-b)
		}
		if isStatic(n, b) {
			note := fmt.Sprintf("static input %d cached: shipped and built once", b)
			if k > 1 {
				note += fmt.Sprintf(", probed ×%d supersteps", int(k))
			}
			c.notes = append(c.notes, note)
		}
	case NestedLoopsBlockFirst, NestedLoopsBlockSecond:
		per.CPU += rows(0) * rows(1)
	}
	own := per
	if k > 1 && (per != Costs{} || once != Costs{}) {
		own = Costs{Network: per.Network * k, Disk: per.Disk * k, CPU: per.CPU * k}
		note := fmt.Sprintf("×%d supersteps: %s per superstep", int(k), costsText(per))
		if once != (Costs{}) {
			note += fmt.Sprintf(", %s once", costsText(once))
		}
		c.notes = append(c.notes, note)
	}
	own = own.Add(once)
	c.own = own
	c.cost = c.cost.Add(own)
	c.out = outputProps(n, s, c.ship, shipped)
	return c
}

// isStatic reports whether input i of n is static (see Node.Static).
func isStatic(n *Node, i int) bool { return i < len(n.Static) && n.Static[i] }

// outputProps returns the properties of n's output: those its strategy
// gives it, with the order it declares (Node.Sorted).
func outputProps(n *Node, s strategy, ship []Ship, in []props) props {
	out := strategyProps(n, s, ship, in)
	if len(n.Sorted) > 0 {
		out.l = local{order: n.Sorted, desc: n.SortedDesc}
	}
	return out
}

// strategyProps returns the properties of n's output under strategy s.
func strategyProps(n *Node, s strategy, ship []Ship, in []props) props {
	switch n.Kind {
	case Sort:
		out := in[0]
		f, t := keysOf(n, 0)
		out.l = local{order: f, desc: n.Descending, keyType: t}
		return out
	case Partition:
		return in[0]
	case Reduce:
		if s.local == SortGroup { // the groups come out in key order
			f, t := keysOf(n, 0)
			return through(n, 0, props{g: in[0].g, l: local{order: f, keyType: t}})
		}
		out := through(n, 0, in[0])
		out.l = local{}
		return out
	case GroupReduce:
		f, t := keysOf(n, 0)
		return through(n, 0, props{g: in[0].g, l: local{order: f, keyType: t}})
	case Join, CoGroup:
		if s.local == SortMerge || s.local == SortCoGroup {
			for i := range in {
				f, t := keysOf(n, i)
				in[i].l = local{order: f, keyType: t}
			}
		}
		for i := range in { // the first input whose partitioning survives
			if ship[i] == Broadcast {
				continue
			}
			if out := through(n, i, in[i]); out.g.kind != anyPart {
				return out
			}
		}
		return props{g: global{kind: anyPart, par: n.Parallelism}}
	case Cross:
		for i := range in {
			if ship[i] != Broadcast {
				out := through(n, i, in[i])
				out.l = local{}
				return out
			}
		}
	case MapPartition:
		if len(in) > 1 && n.Forced == nil { // a union keeps what all inputs share
			for i := 1; i < len(in); i++ {
				if in[i].g.String() != in[0].g.String() || in[i].g.keyType != in[0].g.keyType || in[i].g.par != in[0].g.par {
					return props{g: global{kind: anyPart, par: n.Parallelism}}
				}
			}
			return props{g: in[0].g}
		}
		return through(n, 0, in[0])
	}
	if len(in) == 0 {
		return props{g: global{kind: anyPart, par: n.Parallelism}}
	}
	return through(n, 0, in[0])
}
