package stream

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/stream/checkpoint"
)

// sideProgram is a source of parallelism 1 rebalanced into a Process of
// parallelism 2 that emits every record and, for odd ones, a side output;
// the main output is keyed into a Sum, the side output broadcast into a
// Collect. It returns the two sinks.
func sideProgram(env *Env) (*Collected[tuple3], *Collected[int]) {
	odd := NewOutputTag[int]("odd")
	in := make([]int, 10)
	for i := range in {
		in[i] = i
	}
	src := FromSlice(env, in).SetParallelism(1)
	proc := Process(src, func() ProcessFunction[int, tuple3] {
		return ProcessFunction[int, tuple3]{ProcessElement: func(v int, ctx *Context, out Collector[tuple3]) error {
			out.Collect(tuple3{v % 2, v, 0})
			if v%2 == 1 {
				Output(ctx, odd, v)
			}
			return nil
		}}
	})
	sums := Collect(Sum(KeyBy(proc, func(v tuple3) int { return v.F0 }), f1, setF1))
	odds := Collect(GetSideOutput(proc, odd).Broadcast())
	return sums, odds
}

// TestPlanText: the stream graph of a program with a rebalance, a keyBy, a
// side output and a broadcast, as Env.Plan prints it.
func TestPlanText(t *testing.T) {
	env := New(Options{Parallelism: 2})
	sideProgram(env)
	p, err := env.Plan()
	if err != nil {
		t.Fatal(err)
	}
	want := `STREAMING, 4 tasks
task 0 "FromSlice" p=1
  #0 FromSlice source bounded
task 1 "Process" p=2
  #1 Process <- #0 REBALANCE from task 0
task 2 "Sum" p=2
  #2 Sum keyed maxp=128 <- #1 HASH from task 1
  #3 Collect <- #2 FORWARD chained
task 3 "Collect" p=2
  #4 Collect <- #1[odd] BROADCAST from task 1
`
	if got := p.Text(); got != want {
		t.Errorf("plan:\n%s\nwant:\n%s", got, want)
	}
}

// TestOperatorMetricsSideOutput: an operator's records out count its side
// outputs too (Flink's numRecordsOut), each record once whatever the
// number of consumers: 10 main records and 5 odd ones, broadcast to two
// subtasks that receive 5 each.
func TestOperatorMetricsSideOutput(t *testing.T) {
	env := New(Options{Parallelism: 2})
	_, odds := sideProgram(env)
	res, err := env.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]flow.OperatorMetrics{
		"FromSlice": {Name: "FromSlice", RecordsOut: 10},
		"Process":   {Name: "Process", RecordsIn: 10, RecordsOut: 15},
		"Sum":       {Name: "Sum", RecordsIn: 10, RecordsOut: 10},
	}
	for _, v := range res.Vertices {
		op := v.Total().Operators[0]
		if w, ok := want[op.Name]; ok && op != w {
			t.Errorf("%+v, want %+v", op, w)
		}
	}
	if got := res.Vertices[3].Total().Operators[0]; got.Name != "Collect" || got.RecordsIn != 10 || len(odds.Values()) != 10 {
		t.Errorf("broadcast Collect: %+v, %d values; want 10 records in (5 per subtask)", got, len(odds.Values()))
	}
}

// TestPlanCheckpointing: a plan names its checkpoint configuration, with
// Flink's defaults filled in, in text, JSON and DOT; BATCH mode and a job
// without checkpoints name none.
func TestPlanCheckpointing(t *testing.T) {
	dir := t.TempDir()
	d, err := checkpoint.OpenDir(dir, checkpoint.DirOptions{})
	if err != nil {
		t.Fatal(err)
	}
	env := New(Options{Parallelism: 2, StateBackend: DiskBackend, Incremental: true})
	cfg := env.EnableCheckpointing(500 * time.Millisecond)
	cfg.Storage, cfg.Unaligned, cfg.AlignedCheckpointTimeout = d, true, 30*time.Millisecond
	sideProgram(env)
	p, err := env.Plan()
	if err != nil {
		t.Fatal(err)
	}
	line := "checkpoints every 500ms EXACTLY_ONCE unaligned (after 30ms aligned), timeout 10m0s, min pause 0s, max concurrent 1; state disk incremental; storage " + dir
	if got := strings.Split(p.Text(), "\n")[1]; got != line {
		t.Errorf("text line %q, want %q", got, line)
	}
	js, err := p.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var back Plan
	if err := json.Unmarshal(js, &back); err != nil || !reflect.DeepEqual(back.Checkpointing, p.Checkpointing) {
		t.Errorf("JSON %s read back as %+v, %v", js, back.Checkpointing, err)
	}
	if !strings.Contains(p.DOT(), "label=\""+line+"\"") {
		t.Errorf("DOT without the checkpoint label:\n%s", p.DOT())
	}

	env = New(Options{Parallelism: 2})
	env.EnableCheckpointing(time.Second).Mode = AtLeastOnce
	sideProgram(env)
	if p, err = env.Plan(); err != nil {
		t.Fatal(err)
	}
	line = "checkpoints every 1s AT_LEAST_ONCE, timeout 10m0s, min pause 0s, max concurrent 1; state heap; storage memory"
	if got := strings.Split(p.Text(), "\n")[1]; got != line {
		t.Errorf("text line %q, want %q", got, line)
	}

	env = New(Options{Parallelism: 2, Mode: Batch})
	env.EnableCheckpointing(time.Second)
	sideProgram(env)
	if p, err = env.Plan(); err != nil || p.Checkpointing != nil {
		t.Errorf("BATCH plan checkpointing %+v, %v; want none", p.Checkpointing, err)
	}
}
