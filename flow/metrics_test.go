package flow

import (
	"strconv"
	"testing"

	"github.com/weirdata/weir/metrics"
)

// TestUserMetrics: the user metric group each subtask sets on its operator
// is read into the result per subtask, scoped <operator>.<subtask>; the
// counter counts what the subtask counted, and Total leaves user metrics
// out.
func TestUserMetrics(t *testing.T) {
	env := newTestEnv(t, budgets[0].opts)
	const n = 100
	g := NewGraph()
	g.Vertex("gen", 3, func(tc *TaskContext) error {
		op := tc.Metrics.Operator("gen")
		grp := metrics.NewGroup(nil, "gen", strconv.Itoa(tc.Subtask))
		op.SetMetrics(grp)
		c := grp.Counter("records")
		grp.AddGroup("sub").GaugeInt("subtask", func() int64 { return int64(tc.Subtask) })
		for range n * (tc.Subtask + 1) {
			c.Inc()
		}
		grp.Publish()
		return nil
	})
	res, err := Execute(bg, g, env.options(Options{}))
	if err != nil {
		t.Fatal(err)
	}
	v := res.Vertices[0]
	for _, s := range v.Subtasks {
		ms := s.Metrics
		if len(ms) != 2 {
			t.Fatalf("subtask %d: %d metrics", s.Subtask, len(ms))
		}
		i := strconv.Itoa(s.Subtask)
		if ms[0].Identifier() != "gen."+i+".records" || ms[0].Count != int64(n*(s.Subtask+1)) {
			t.Errorf("subtask %d: %s = %d", s.Subtask, ms[0].Identifier(), ms[0].Count)
		}
		if ms[1].Identifier() != "gen."+i+".sub.subtask" || ms[1].Count != int64(s.Subtask) {
			t.Errorf("subtask %d: %s = %d", s.Subtask, ms[1].Identifier(), ms[1].Count)
		}
	}
	if m := v.Total().Metrics; m != nil {
		t.Errorf("Total kept user metrics: %v", m)
	}
}
