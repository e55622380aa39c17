package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/weirdata/weir/metrics"
	"github.com/weirdata/weir/stream"
)

// streamAnalyzed is a stream job's plan with what its run did (weir
// explain --analyze of a stream job): per task and chained operator the
// records in and out, per task and subtask the user metrics of its
// functions, and the job's checkpoints.
type streamAnalyzed struct {
	Plan        *stream.Plan              `json:"plan"`
	Tasks       []streamTaskActual        `json:"tasks"`
	Checkpoints *stream.CheckpointHistory `json:"checkpoints,omitempty"`
}

type streamTaskActual struct {
	Name      string           `json:"name"`
	Subtasks  int              `json:"subtasks"`
	Wall      time.Duration    `json:"wallNanos"`
	Operators []streamOpActual `json:"operators"`
	// Metrics are the user metrics of every subtask, subtask by subtask,
	// each scoped <operator>.<subtask>.
	Metrics []metrics.Sample `json:"metrics,omitempty"`
}

type streamOpActual struct {
	Name       string `json:"name"`
	RecordsIn  int64  `json:"recordsIn"`
	RecordsOut int64  `json:"recordsOut"`
}

func newStreamAnalyzed(p *stream.Plan, res *stream.Result, ck *stream.CheckpointHistory) *streamAnalyzed {
	a := &streamAnalyzed{Plan: p, Checkpoints: ck}
	if res == nil {
		return a
	}
	for _, v := range res.Vertices {
		t := v.Total()
		ta := streamTaskActual{Name: v.Name, Subtasks: len(v.Subtasks), Wall: t.Wall}
		for _, o := range t.Operators {
			ta.Operators = append(ta.Operators, streamOpActual{Name: o.Name, RecordsIn: o.RecordsIn, RecordsOut: o.RecordsOut})
		}
		for _, sub := range v.Subtasks {
			ta.Metrics = append(ta.Metrics, sub.Metrics...)
		}
		a.Tasks = append(a.Tasks, ta)
	}
	return a
}

// Text is the plan's text, then per task its operators' records in and
// out and its user metrics (a line each, metrics.Sample.String), then the
// checkpoints: a summary line and one line per checkpoint.
func (a *streamAnalyzed) Text() string {
	var b strings.Builder
	b.WriteString(a.Plan.Text())
	b.WriteString("actual:\n")
	for _, t := range a.Tasks {
		fmt.Fprintf(&b, "  task %q p=%d wall=%s\n", t.Name, t.Subtasks, t.Wall.Round(time.Millisecond))
		for _, o := range t.Operators {
			fmt.Fprintf(&b, "    %s in=%d out=%d\n", o.Name, o.RecordsIn, o.RecordsOut)
		}
		if len(t.Metrics) > 0 {
			b.WriteString("    metrics:\n")
			for _, m := range t.Metrics {
				fmt.Fprintf(&b, "      %s\n", m)
			}
		}
	}
	if h := a.Checkpoints; h != nil {
		b.WriteString(checkpointLine(*h) + "\n")
		for _, c := range h.Completed {
			fmt.Fprintf(&b, "  #%d %s size=%s full=%s aligned=%s", c.ID, c.Duration.Round(time.Millisecond),
				humanBytes(c.Size), humanBytes(c.FullSize), c.Alignment.Round(time.Millisecond))
			if c.InFlight > 0 {
				fmt.Fprintf(&b, " inflight=%s", humanBytes(c.InFlight))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// JSON is the plan, the tasks' actuals and the checkpoints as one object.
func (a *streamAnalyzed) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// DOT is the plan's graph with a note node "actual": the records out of
// each task's last operator and the checkpoint summary.
func (a *streamAnalyzed) DOT() string {
	d := a.Plan.DOT()
	var label []string
	for _, t := range a.Tasks {
		if n := len(t.Operators); n > 0 {
			label = append(label, fmt.Sprintf("%s: %d records out", t.Name, t.Operators[n-1].RecordsOut))
		}
	}
	if a.Checkpoints != nil {
		label = append(label, checkpointLine(*a.Checkpoints))
	}
	if len(label) == 0 {
		return d
	}
	i := strings.LastIndex(d, "}")
	return d[:i] + "  actual [shape=note, label=" + dotLabel(strings.Join(label, "\n")) + "];\n" + d[i:]
}

// dotLabel quotes s as a Graphviz string.
func dotLabel(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\l`)
	return `"` + r.Replace(s) + `\l"`
}
