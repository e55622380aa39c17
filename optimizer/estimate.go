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
)

// estimate fills n.Decision.Estimate from its inputs' estimates, the user's
// hints and the source statistics, and returns it.
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
	var rows float64
	switch {
	case n.EstimatedRows >= 0 && (n.Kind != Source || n.EstimatedRows > 0 || n.EstimatedBytes <= 0):
		rows = float64(n.EstimatedRows) // a source's statistics or the user's hint
	case n.Kind == Source && n.EstimatedBytes > 0:
		rows = math.Ceil(float64(n.EstimatedBytes) / float64(rowBytes))
	case n.Kind == Source:
		rows = DefaultSourceRows
	case n.Selectivity > 0:
		rows = in(0) * n.Selectivity
	default:
		switch n.Kind {
		case Map:
			rows = in(0)
			if n.PreservesAll { // a filter
				rows *= DefaultFilterSelectivity
			}
		case Reduce, GroupReduce:
			rows = max(1, math.Ceil(in(0)*DefaultGroupRatio))
		case Join, CoGroup:
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
		}
	}
	e := Estimate{Rows: int64(rows), Bytes: int64(rows * float64(rowBytes))}
	n.Decision.Estimate = e
	return e
}
