package stream

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/weirdata/weir/clock"
	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
)

// TestOperatorMetricsBounded: every operator of a chain is counted, not only
// the task: a bounded job of 100 records through a chained Filter (keeps
// the 50 even ones) and Map into a keyed Sum and a Collect sink reports,
// per operator, the records each received and emitted, and every task ends
// at the maximal watermark.
func TestOperatorMetricsBounded(t *testing.T) {
	for _, mode := range []Mode{Streaming, Batch} {
		t.Run(map[Mode]string{Streaming: "streaming", Batch: "batch"}[mode], func(t *testing.T) { operatorMetricsBounded(t, mode) })
	}
}

// operatorMetricsBounded runs TestOperatorMetricsBounded's job in mode: in
// BATCH the Sum emits only the final value of each of its 2 keys.
func operatorMetricsBounded(t *testing.T, mode Mode) {
	env := New(Options{Parallelism: 1, Mode: mode})
	in := make([]int, 100)
	for i := range in {
		in[i] = i
	}
	even := FromSlice(env, in).Filter(func(v int) bool { return v%2 == 0 })
	pairs := Map(even, func(v int) tuple3 { return tuple3{v % 4, 1, 0} })
	Collect(Sum(KeyBy(pairs, func(v tuple3) int { return v.F0 }), f1, setF1))
	j, err := env.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	res, err := j.Wait()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]flow.OperatorMetrics{
		{{Name: "FromSlice", RecordsOut: 100}, {Name: "Filter", RecordsIn: 100, RecordsOut: 50}, {Name: "Map", RecordsIn: 50, RecordsOut: 50}},
		{{Name: "Sum", RecordsIn: 50, RecordsOut: 50}, {Name: "Collect", RecordsIn: 50}},
	}
	if mode == Batch {
		want[1] = []flow.OperatorMetrics{{Name: "Sum", RecordsIn: 50, RecordsOut: 2}, {Name: "Collect", RecordsIn: 2}}
	}
	if len(res.Vertices) != len(want) {
		t.Fatalf("%d tasks, want %d", len(res.Vertices), len(want))
	}
	for vi, w := range want {
		tot := res.Vertices[vi].Total()
		if len(tot.Operators) != len(w) {
			t.Fatalf("task %s: operators %+v, want %+v", res.Vertices[vi].Name, tot.Operators, w)
		}
		for i := range w {
			if tot.Operators[i] != w[i] {
				t.Errorf("task %s operator %d: %+v, want %+v", res.Vertices[vi].Name, i, tot.Operators[i], w[i])
			}
		}
		if tot.Watermark != watermark.Max || tot.OutWatermark != watermark.Max {
			t.Errorf("task %s ended at watermark %d, output watermark %d, want the maximal one", res.Vertices[vi].Name, tot.Watermark, tot.OutWatermark)
		}
	}
	// the task's own count agrees with its head operator
	if got := res.Vertices[1].Total().RecordsIn; got != 50 {
		t.Errorf("keyed task read %d records, want 50", got)
	}
	s := j.Overview()
	if got := s.Vertices[1].Operators[0]; got.Name != "Sum" || got.RecordsIn != 50 || s.Vertices[1].WatermarkLag != 0 {
		t.Errorf("snapshot of the keyed task: %+v, lag %v", got, s.Vertices[1].WatermarkLag)
	}
}

// stalled is an unbounded source of one split: n events with timestamps
// base, base+1, ..., then nothing until it is cancelled.
type stalled struct{ n, base int64 }

func (stalled) Boundedness() source.Boundedness { return source.Unbounded }

func (stalled) Enumerator(int, *source.EnumeratorState) (source.Enumerator, error) {
	return &stalledEnum{}, nil
}

func (s stalled) Reader(rc source.ReaderContext) (source.Reader[event], error) {
	return &stalledReader{s: s, rc: rc}, nil
}

type stalledEnum struct{ given bool }

func (e *stalledEnum) Request(int) (source.Grant, error) {
	if e.given {
		return source.Grant{Status: source.NoMore}, nil
	}
	e.given = true
	return source.Grant{Status: source.Assigned, Split: source.Split{ID: "s", Len: -1}}, nil
}
func (e *stalledEnum) AddSplitsBack([]source.Split)     {}
func (e *stalledEnum) Snapshot() source.EnumeratorState { return source.EnumeratorState{} }

type stalledReader struct {
	s     stalled
	rc    source.ReaderContext
	split *source.Split
	buf   []event
}

func (r *stalledReader) Next(ctx context.Context) (source.Batch[event], error) {
	if r.split == nil {
		g, err := r.rc.Splits.Request(r.rc.Subtask)
		if err != nil {
			return source.Batch[event]{}, err
		}
		if g.Status != source.Assigned {
			return source.Batch[event]{}, io.EOF
		}
		r.split = &g.Split
	}
	if r.split.Offset >= r.s.n {
		<-ctx.Done()
		return source.Batch[event]{}, ctx.Err()
	}
	i := r.split.Offset
	r.buf = append(r.buf[:0], event{Key: [2]string{"a", "b"}[i%2], TS: r.s.base + i})
	r.split.Offset++
	return source.Batch[event]{Split: r.split.ID, First: i, Records: r.buf}, nil
}

func (r *stalledReader) AddSplits(s []source.Split) {}

func (r *stalledReader) Positions() []source.Split {
	if r.split == nil {
		return nil
	}
	return []source.Split{*r.split}
}

func (r *stalledReader) Close() error { return nil }

// TestWatermarkMetrics: under a ManualClock, the watermark a running job
// reports for its source and its keyed task is the last one the source
// emitted (monotonous timestamps: the largest timestamp minus 1, emitted
// when the job's clock reaches the next periodic interval), and its lag is
// the job's clock minus that watermark.
func TestWatermarkMetrics(t *testing.T) {
	const n, base = 40, int64(1_700_000_000_000)
	clock := clock.NewManual(time.UnixMilli(base + 60_000))
	env := New(Options{Parallelism: 1, AutoWatermarkInterval: time.Second, Clock: clock})
	strategy := watermark.ForMonotonousTimestamps[event]().WithTimestampAssigner(func(e event, _ int64) int64 { return e.TS })
	src := FromSource[event](env, stalled{n: n, base: base}, strategy, "stalled")
	Collect(KeyedProcess(KeyBy(src, func(e event) string { return e.Key }), func() KeyedProcessFunction[string, event, event] {
		return KeyedProcessFunction[string, event, event]{ProcessElement: func(e event, _ *KeyedContext[string], out Collector[event]) error {
			out.Collect(e)
			return nil
		}}
	}))
	j, err := env.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		j.Cancel()
		_, _ = j.Wait()
	}()
	await := func(what string, cond func(s Overview) bool) Overview {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			s := j.Overview()
			if cond(s) {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s: %+v", what, s.Vertices)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	s := await("every event at the keyed task", func(s Overview) bool { return s.Vertices[1].Operators[0].RecordsIn == n })
	for _, v := range s.Vertices {
		if v.Watermark != watermark.Min || v.WatermarkLag != 0 || v.Subtasks[0].OutWatermark != watermark.Min {
			t.Errorf("task %s before the first interval: watermark %d lag %v, output %d, want none", v.Name, v.Watermark, v.WatermarkLag, v.Subtasks[0].OutWatermark)
		}
	}
	clock.Advance(time.Second)
	wantWM := base + n - 2 // the largest timestamp, base+n-1, minus 1
	s = await("the periodic watermark downstream", func(s Overview) bool { return s.Vertices[1].Watermark == wantWM })
	wantLag := time.Duration(base+61_000-wantWM) * time.Millisecond
	for _, v := range s.Vertices {
		if v.Watermark != wantWM || v.WatermarkLag != wantLag {
			t.Errorf("task %s: watermark %d lag %v, want %d and %v", v.Name, v.Watermark, v.WatermarkLag, wantWM, wantLag)
		}
	}
	if out := s.Vertices[0].Subtasks[0].OutWatermark; out != wantWM {
		t.Errorf("the source's output watermark %d, want %d", out, wantWM)
	}
	if got := s.Vertices[1].Operators[0]; got.RecordsIn != n || got.RecordsOut != n {
		t.Errorf("process operator: %+v, want %d records in and out", got, n)
	}
	clock.Advance(time.Second)
	if lag := j.Overview().Vertices[1].WatermarkLag; lag != wantLag+time.Second {
		t.Errorf("lag %v after the clock advanced a second, want %v", lag, wantLag+time.Second)
	}
}

// TestSourceIdle: a source held back by its rate limit waits for records,
// and that wait is idle time, not busy (as Flink counts a source waiting
// for available data).
func TestSourceIdle(t *testing.T) {
	env := New(Options{Parallelism: 1})
	gen := FromSource(env, source.Generator(func(i int64) int64 { return i }, 0, 50), watermark.NoWatermarks[int64](), "generator")
	Collect(gen)
	j, err := env.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		j.Cancel()
		_, _ = j.Wait()
	}()
	time.Sleep(300 * time.Millisecond)
	v := j.Overview().Vertices[0]
	if v.Idle < 0.5 || v.Operators[0].RecordsOut == 0 {
		t.Errorf("rate-limited source: busy %.2f idle %.2f, %d records out; want mostly idle and some records",
			v.Busy, v.Idle, v.Operators[0].RecordsOut)
	}
}
