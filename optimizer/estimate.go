package optimizer

import "math"

// Defaults the estimates fall back on, like Flink's optimizer does for what it
// cannot know.
const (
	// DefaultSourceRows is assumed for a source whose size is unknown.
	DefaultSourceRows = 1_000_000
	// DefaultFilterSelectivity is the share of records a filter keeps.
	DefaultFilterSelectivity = 0.5
	// DefaultGroupRatio is the number of groups per input record of a grouping.
	DefaultGroupRatio = 0.1
	// DefaultAntiSelectivity is the share of its left input an anti join keeps.
	DefaultAntiSelectivity = 0.5
	// DefaultIterations is the number of supersteps planners expect of an
	// iteration that may end before its maximum (a delta iteration, whose
	// workset may empty; a termination or convergence criterion).
	DefaultIterations = 10
)

// estimate fills n.Decision.Estimate from its inputs' estimates, the user's
// hints and the source statistics, and returns it.
//
// Joins are estimated as many-to-one (foreign key) joins, without key
// statistics: the input whose base relation is larger holds the foreign
// keys, each of its records finds one partner unless the other input was
// filtered, so the output has its rows times the share of its base relation
// the other input kept. A semi join keeps its left input's records times the
// share the right input kept; an anti join keeps DefaultAntiSelectivity of
// them. Outer joins keep at least their preserved inputs' records.
//
// Iterations: a step's operators are estimated per superstep from their
// inputs; the head of a bulk iteration (the partial solution) is as large
// as its initial input, and an iteration's result (a source with SizeOf) as
// large as the initial partial solution or the solution set's input.
func estimate(n *Node) Estimate {
	rowBytes := n.RowBytes
	if rowBytes <= 0 {
		rowBytes = DefaultRowBytes
	}
	in := func(i int) float64 {
		if i >= len(n.Inputs) {
			return 0
		}
		return float64(n.Inputs[i].Decision.Estimate.Rows)
	}
	frac := func(i int) float64 {
		if i >= len(n.Inputs) {
			return 1
		}
		return n.Inputs[i].Decision.Estimate.frac
	}
	base := func(i int) float64 {
		if i >= len(n.Inputs) {
			return 0
		}
		return n.Inputs[i].Decision.Estimate.base
	}
	var rows float64
	var f, b float64 // the output's frac and base, when not derived below
	derived := false
	switch {
	case n.EstimatedRows >= 0 && (n.Kind != Source || n.EstimatedRows > 0 || n.EstimatedBytes <= 0):
		rows = float64(n.EstimatedRows) // a source's statistics or the user's hint
		if n.Kind == Source && float64(n.SourceRows) > rows && rows > 0 {
			f, b, derived = rows/float64(n.SourceRows), float64(n.SourceRows), true // filtered in the scan
		}
	case n.Kind == Source && n.SizeOf != nil && n.SizeOf.Decision.Estimate.Rows >= 0:
		// an iteration's result: as large as the partial solution or solution set
		rows = float64(n.SizeOf.Decision.Estimate.Rows)
		f, b, derived = n.SizeOf.Decision.Estimate.frac, n.SizeOf.Decision.Estimate.base, true
	case n.Kind == Source && n.EstimatedBytes > 0:
		rows = math.Ceil(float64(n.EstimatedBytes) / float64(rowBytes))
	case n.Kind == Source:
		rows = DefaultSourceRows
	case n.Selectivity > 0:
		rows = in(0) * n.Selectivity
		f, b, derived = frac(0)*n.Selectivity, base(0), true
	default:
		switch n.Kind {
		case Map:
			rows = in(0)
			f, b, derived = frac(0), base(0), true
			if n.PreservesAll { // a filter
				rows *= DefaultFilterSelectivity
				f *= DefaultFilterSelectivity
			}
		case Reduce, GroupReduce:
			rows = max(1, math.Ceil(in(0)*DefaultGroupRatio))
		case Join:
			rows, f, b = joinRows(n.JoinKind, in(0), in(1), frac(0), frac(1), base(0), base(1))
			derived = true
		case CoGroup:
			rows = max(in(0), in(1))
		case Cross:
			rows = in(0) * in(1)
		case MapPartition:
			for i := range n.Inputs {
				rows += in(i) // a union adds its inputs; others keep their size
			}
			if len(n.Inputs) > 1 && n.Forced != nil {
				rows = in(0) // with a broadcast set: the main input
			}
		default: // Partition, Sort, Sink
			rows = in(0)
			f, b, derived = frac(0), base(0), true
		}
	}
	if !derived || b <= 0 || f <= 0 {
		f, b = 1, rows // a relation of its own
	}
	e := Estimate{Rows: int64(rows), Bytes: int64(rows * float64(rowBytes)), frac: min(f, 1), base: b}
	n.Decision.Estimate = e
	return e
}

// joinRows estimates a join's output rows, frac and base from its inputs'
// (see estimate).
func joinRows(kind JoinKind, r0, r1, f0, f1, b0, b1 float64) (rows, frac, base float64) {
	switch kind {
	case SemiJoin:
		return r0 * f1, f0 * f1, b0
	case AntiJoin:
		return r0 * DefaultAntiSelectivity, f0 * DefaultAntiSelectivity, b0
	}
	// the foreign-key side: the larger base relation (then the larger input)
	fk := b0 > b1 || (b0 == b1 && r0 >= r1)
	if fk {
		rows, frac, base = r0*f1, f0*f1, b0
	} else {
		rows, frac, base = r1*f0, f0*f1, b1
	}
	switch kind {
	case LeftOuterJoin:
		rows = max(rows, r0)
	case RightOuterJoin:
		rows = max(rows, r1)
	case FullOuterJoin:
		rows = max(rows, r0, r1)
	}
	return rows, frac, base
}
