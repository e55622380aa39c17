package view

import (
	"fmt"

	"github.com/weirdata/weir/cluster/rest"
	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/watermark"
)

// VertexMetrics are vertex v's figures as the REST API shows them: records
// and bytes summed over the subtasks, the rates of the chain's head
// (read) and tail (written), the shares of time and the low watermark.
func VertexMetrics(v stream.VertexOverview) *rest.VertexMetrics {
	m := &rest.VertexMetrics{Busy: v.Busy, Idle: v.Idle, Backpressured: v.Backpressured}
	for _, s := range v.Subtasks {
		m.ReadRecords += s.RecordsIn
		m.WriteRecords += s.RecordsOut
		m.ReadBytes += s.BytesIn
		m.WriteBytes += s.BytesOut
	}
	if n := len(v.Operators); n > 0 {
		m.ReadRecordsPerSec = v.Operators[0].RecordsInPerSecond
		m.WriteRecordsPerSec = v.Operators[n-1].RecordsOutPerSecond
	}
	if wm := v.Watermark; wm != watermark.Min && wm != watermark.Max {
		m.Watermark = &wm
	}
	return m
}

// Plan is p's tasks as Flink's plan nodes, named by ids (ids[i] is task
// i's vertex id), with the edges that are not chained as their inputs;
// nil when p is nil or ids do not name its tasks.
func Plan(jid, name string, p *stream.Plan, ids []string) *rest.Plan {
	if p == nil || len(p.Tasks) != len(ids) {
		return nil
	}
	out := &rest.Plan{JID: jid, Name: name, Type: p.Mode}
	task := map[int]int{} // operator id: task position
	for ti, t := range p.Tasks {
		desc := ""
		for oi, o := range t.Operators {
			task[o.ID] = ti
			if oi > 0 {
				desc += " -> "
			}
			desc += o.Name
		}
		out.Nodes = append(out.Nodes, rest.PlanNode{ID: ids[ti], Parallelism: t.Parallelism, Operator: t.Name, Description: desc})
	}
	for _, e := range p.Edges {
		if e.Chained {
			continue
		}
		n := &out.Nodes[task[e.To]]
		n.Inputs = append(n.Inputs, rest.PlanInput{Num: len(n.Inputs), ID: ids[task[e.From]], ShipStrategy: e.Partitioning, Exchange: "pipelined_bounded"})
	}
	return out
}

// Memory is a job's managed memory as the REST API shows it; nil when
// the Overview was taken before the job ran.
func Memory(o stream.Overview) *rest.JobMemory {
	if o.At.IsZero() {
		return nil
	}
	return &rest.JobMemory{Budget: o.Memory.Budget, Used: o.Memory.Used, Peak: o.Memory.Peak}
}

// History is h's completed checkpoints as Flink's checkpoint statistics,
// newest first.
func History(h stream.CheckpointHistory) []rest.CheckpointStats {
	n := len(h.Completed)
	out := make([]rest.CheckpointStats, 0, n)
	for i := n - 1; i >= 0; i-- {
		s := h.Completed[i]
		trig := s.Triggered.UnixMilli()
		out = append(out, rest.CheckpointStats{ID: s.ID, Status: "COMPLETED",
			TriggerTimestamp: trig, LatestAckTimestamp: trig + s.Duration.Milliseconds(),
			EndToEndDuration: s.Duration.Milliseconds(), CheckpointedSize: s.Size, StateSize: s.FullSize,
			Alignment: s.Alignment.Milliseconds(), PersistedData: s.InFlight, ExternalPath: s.Path})
	}
	return out
}

// Exceptions are the failures ex (oldest first, older ones dropped when
// truncated) as Flink's exception history, each located at the
// TaskManager named location ("" for none).
func Exceptions(ex []stream.Exception, truncated bool, location string) rest.Exceptions {
	out := make([]rest.Exception, len(ex))
	for i, e := range ex {
		out[i] = rest.Exception{Name: fmt.Sprintf("attempt %d failed", e.Attempt), Stacktrace: e.Err,
			Timestamp: e.Time.UnixMilli(), Location: location}
	}
	return rest.NewExceptions(out, truncated)
}
