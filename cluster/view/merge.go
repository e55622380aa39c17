package view

import (
	"math"
	"time"

	"github.com/weirdata/weir/cluster"
	"github.com/weirdata/weir/stream"
)

// latest decodes the Report of attempt r: of a spread attempt, the first
// share's with every share's metrics merged in (merge).
func latest(r cluster.AttemptReport) (Report, error) {
	first, err := Decode(r.Data)
	if err != nil || len(r.Shares) < 2 {
		return first, err
	}
	shares := make([]*Report, len(r.Shares))
	for k, b := range r.Shares {
		if b == nil {
			continue
		}
		if d, err := Decode(b); err == nil && len(d.Overview.Vertices) == len(first.Overview.Vertices) {
			shares[k] = &d
		}
	}
	shares[0] = &first
	first.Overview = merge(first.Overview, shares)
	return first, nil
}

// merge is the Overview of a spread attempt from its shares' (nil: none
// yet): each subtask's metrics from the share that runs it (a share's
// metrics of the subtasks it does not run are zero: the one whose subtask
// ran longest), the operators' records and rates, the ended subtasks and
// the memory summed, the shares of time averaged over the subtasks, the
// watermark the lowest of the subtasks'. first is share 0's.
func merge(first stream.Overview, shares []*Report) stream.Overview {
	out := first
	out.Vertices = make([]stream.VertexOverview, len(first.Vertices))
	out.Memory = stream.MemoryOverview{}
	for _, r := range shares {
		if r != nil {
			out.Memory.Budget += r.Overview.Memory.Budget
			out.Memory.Used += r.Overview.Memory.Used
			out.Memory.Peak += r.Overview.Memory.Peak
		}
	}
	for i, fv := range first.Vertices {
		v := fv
		v.Operators = append([]stream.OperatorOverview(nil), fv.Operators...)
		for k := range v.Operators {
			v.Operators[k].RecordsIn, v.Operators[k].RecordsOut = 0, 0
			v.Operators[k].RecordsInPerSecond, v.Operators[k].RecordsOutPerSecond = 0, 0
		}
		v.Subtasks = append([]stream.SubtaskMetrics(nil), fv.Subtasks...)
		v.Ended, v.Busy, v.Idle, v.Backpressured = 0, 0, 0, 0
		runs := make([]int, len(v.Subtasks)) // the share that runs each subtask
		for p, r := range shares {
			if r == nil {
				continue
			}
			sv := r.Overview.Vertices[i]
			for s := range v.Subtasks {
				if s < len(sv.Subtasks) && sv.Subtasks[s].Wall > v.Subtasks[s].Wall {
					v.Subtasks[s], runs[s] = sv.Subtasks[s], p
				}
			}
		}
		weight := 0
		for p, r := range shares {
			if r == nil {
				continue
			}
			sv := r.Overview.Vertices[i]
			n := 0 // the share's subtasks of the vertex
			for _, q := range runs {
				if q == p {
					n++
				}
			}
			for k := range v.Operators {
				if k < len(sv.Operators) {
					v.Operators[k].RecordsIn += sv.Operators[k].RecordsIn
					v.Operators[k].RecordsOut += sv.Operators[k].RecordsOut
					v.Operators[k].RecordsInPerSecond += sv.Operators[k].RecordsInPerSecond
					v.Operators[k].RecordsOutPerSecond += sv.Operators[k].RecordsOutPerSecond
				}
			}
			v.Ended += sv.Ended
			v.Busy += sv.Busy * float64(n)
			v.Idle += sv.Idle * float64(n)
			v.Backpressured += sv.Backpressured * float64(n)
			weight += n
		}
		if weight > 0 {
			v.Busy, v.Idle, v.Backpressured = v.Busy/float64(weight), v.Idle/float64(weight), v.Backpressured/float64(weight)
		}
		v.Watermark = math.MaxInt64
		for _, s := range v.Subtasks {
			v.Watermark = min(v.Watermark, s.Watermark)
		}
		if len(v.Subtasks) == 0 {
			v.Watermark = math.MinInt64
		}
		v.WatermarkLag = 0
		if v.Watermark != math.MinInt64 && v.Watermark != math.MaxInt64 {
			v.WatermarkLag = out.At.Sub(time.UnixMilli(v.Watermark))
		}
		out.Vertices[i] = v
	}
	return out
}
