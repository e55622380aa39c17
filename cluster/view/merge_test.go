package view

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/weirdata/weir/cluster"
	"github.com/weirdata/weir/stream"
)

// shareOverview is a share's Overview of a vertex of three subtasks, the
// ones it runs (mine) with their metrics, the others zero, as flow leaves
// the subtasks of other processes.
func shareOverview(at time.Time, mine map[int]stream.SubtaskMetrics, busy float64, in int64, mem int64) stream.Overview {
	v := stream.VertexOverview{Name: "window", Parallelism: 3, Busy: busy, Idle: 1 - busy, Watermark: math.MinInt64,
		Operators: []stream.OperatorOverview{{Name: "window", RecordsIn: in, RecordsInPerSecond: float64(in)}}}
	for s := range 3 {
		m, ok := mine[s]
		if !ok {
			m = stream.SubtaskMetrics{Watermark: math.MinInt64}
		}
		m.Subtask = s
		v.Subtasks = append(v.Subtasks, m)
	}
	return stream.Overview{At: at, Vertices: []stream.VertexOverview{v}, Memory: stream.MemoryOverview{Budget: mem, Used: mem / 2, Peak: mem / 2}}
}

// The view of a spread attempt merges its shares' reports: each subtask's
// metrics from the share that runs it, the records and memory summed, the
// busy share averaged over the subtasks, the watermark the lowest of the
// subtasks' (each share alone knows none: the others' subtasks have none).
// The checkpoints are the first share's.
func TestMergeShares(t *testing.T) {
	at := time.UnixMilli(10_000)
	first := Report{Overview: shareOverview(at, map[int]stream.SubtaskMetrics{
		0: {Wall: 2 * time.Second, RecordsIn: 10, Watermark: 9_100},
		1: {Wall: 2 * time.Second, RecordsIn: 20, Watermark: 9_200},
	}, 0.5, 30, 100), Checkpoints: stream.CheckpointHistory{Completed: []stream.CheckpointStats{{ID: 4}}}}
	second := Report{Overview: shareOverview(at, map[int]stream.SubtaskMetrics{
		2: {Wall: 2 * time.Second, RecordsIn: 7, Watermark: 9_050},
	}, 0.8, 7, 50)}
	enc := func(r Report) []byte {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	got, err := latest(cluster.AttemptReport{Attempt: "1-1", Data: enc(first), Shares: [][]byte{enc(first), enc(second)}})
	if err != nil {
		t.Fatal(err)
	}
	v := got.Overview.Vertices[0]
	for s, want := range []int64{10, 20, 7} {
		if v.Subtasks[s].RecordsIn != want || v.Subtasks[s].Subtask != s {
			t.Errorf("subtask %d: %+v, want %d records in", s, v.Subtasks[s], want)
		}
	}
	if v.Operators[0].RecordsIn != 37 || v.Operators[0].RecordsInPerSecond != 37 {
		t.Errorf("operator %+v, want 37 records in", v.Operators[0])
	}
	if math.Abs(v.Busy-0.6) > 1e-9 || math.Abs(v.Idle-0.4) > 1e-9 {
		t.Errorf("busy %v idle %v, want 0.6 and 0.4 ((0.5*2 + 0.8)/3)", v.Busy, v.Idle)
	}
	if v.Watermark != 9_050 || v.WatermarkLag != 950*time.Millisecond {
		t.Errorf("watermark %d lag %v, want 9050 and 950ms", v.Watermark, v.WatermarkLag)
	}
	if m := got.Overview.Memory; m.Budget != 150 || m.Used != 75 || m.Peak != 75 {
		t.Errorf("memory %+v, want the sums", m)
	}
	if len(got.Checkpoints.Completed) != 1 || got.Checkpoints.Completed[0].ID != 4 {
		t.Errorf("checkpoints %+v, want the first share's", got.Checkpoints)
	}
	// a share that sent nothing yet: the first's alone
	got, err = latest(cluster.AttemptReport{Attempt: "1-1", Data: enc(first), Shares: [][]byte{enc(first), nil}})
	if err != nil || got.Overview.Vertices[0].Operators[0].RecordsIn != 30 || got.Overview.Vertices[0].Subtasks[2].RecordsIn != 0 {
		t.Fatalf("with one share reported: %+v, %v", got.Overview.Vertices[0], err)
	}
}
