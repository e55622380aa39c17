package stream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirdata/weir/metrics"
	"github.com/weirdata/weir/stream/sink"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/watermark"
	"github.com/weirdata/weir/stream/window"
)

// seenContext is what one function's Open saw of its RuntimeContext.
type seenContext struct {
	op, task, withSubtasks, job string
	index, par, maxPar, attempt int
	scope                       []string
}

// contexts gathers what the functions of a job saw, from every subtask.
type contexts struct {
	mu   sync.Mutex
	seen []seenContext
}

func (c *contexts) add(rc *RuntimeContext) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen = append(c.seen, seenContext{op: rc.OperatorName(), task: rc.TaskName(), withSubtasks: rc.TaskNameWithSubtasks(),
		job: rc.JobID(), index: rc.IndexOfThisSubtask(), par: rc.NumberOfParallelSubtasks(),
		maxPar: rc.MaxNumberOfParallelSubtasks(), attempt: rc.AttemptNumber(), scope: rc.MetricGroup().Scope()})
	return nil
}

// writerSink records what its writers open with.
type writerSink struct{ c *contexts }

func (s writerSink) CreateWriter(ctx sink.InitContext) (sink.Writer[int], error) {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	s.c.seen = append(s.c.seen, seenContext{op: "sink", index: ctx.Subtask, par: ctx.Parallelism,
		scope: ctx.MetricGroup.Scope()})
	return nopWriter{}, nil
}

type nopWriter struct{}

func (nopWriter) Write(int, sink.Context) error { return nil }
func (nopWriter) Flush(bool) error              { return nil }
func (nopWriter) Close() error                  { return nil }

// TestRuntimeContextSubtasks: at parallelism 1 and 3, with the default max
// parallelism and a set one, the Open of every kind of function sees its
// operator's name, its subtask's index (each index from 0 to p-1 once per
// operator), the parallelism p, the max parallelism (Flink's default for
// p, 128, or the one set), attempt 0, the job's id, Flink's task name with
// subtasks, and a metric group scoped <operator>.<subtask>; a sink
// writer's InitContext the same subtask and scope.
func TestRuntimeContextSubtasks(t *testing.T) {
	ops := []string{"rmap", "rfilter", "rflat", "process", "keyed", "window", "coprocess", "keyedco", "bcast", "keyedbcast", "sink"}
	for _, p := range []int{1, 3} {
		for _, setMax := range []int{0, 256} {
			t.Run(fmt.Sprintf("p%d-max%d", p, setMax), func(t *testing.T) {
				c := &contexts{}
				env := New(Options{Parallelism: p, MaxParallelism: setMax})
				src := FromSlice(env, ints(60))
				a := RichMap(src, func() RichMapFunction[int, int] {
					return RichMapFunction[int, int]{Open: c.add, Map: func(v int) (int, error) { return v, nil }}
				}).Name("rmap")
				b := a.RichFilter(func() RichFilterFunction[int] {
					return RichFilterFunction[int]{Open: c.add, Filter: func(int) (bool, error) { return true, nil }}
				}).Name("rfilter")
				d := RichFlatMap(b, func() RichFlatMapFunction[int, int] {
					return RichFlatMapFunction[int, int]{Open: c.add, FlatMap: func(v int, out Collector[int]) error {
						out.Collect(v)
						return nil
					}}
				}).Name("rflat")
				pr := Process(d, func() ProcessFunction[int, int] {
					return ProcessFunction[int, int]{Open: c.add, ProcessElement: func(v int, ctx *Context, out Collector[int]) error {
						if ctx.RuntimeContext().OperatorName() != "process" {
							return errors.New("the Context's RuntimeContext is another operator's")
						}
						out.Collect(v)
						return nil
					}}
				}).Name("process")
				key := func(v int) int { return v % 7 }
				keyedOpen := func(rc *KeyedRuntimeContext[int]) error { return c.add(&rc.RuntimeContext) }
				kp := KeyedProcess(KeyBy(pr, key), func() KeyedProcessFunction[int, int, int] {
					return KeyedProcessFunction[int, int, int]{Open: keyedOpen,
						ProcessElement: func(v int, ctx *KeyedContext[int], out Collector[int]) error {
							if ctx.RuntimeContext().Backend() == nil {
								return errors.New("no backend in the KeyedContext's RuntimeContext")
							}
							out.Collect(v)
							return nil
						}}
				}).Name("keyed")
				win := WindowProcess(CountWindow(KeyBy(kp, key), 1), func() ProcessWindowFunction[int, window.GlobalWindow, int, int] {
					return ProcessWindowFunction[int, window.GlobalWindow, int, int]{Open: keyedOpen,
						Process: func(_ int, _ *WindowContext[int, window.GlobalWindow], elems []int, out Collector[int]) error {
							for _, v := range elems {
								out.Collect(v)
							}
							return nil
						}}
				}).Name("window")
				co := CoProcess(Connect(win, pr), func() CoProcessFunction[int, int, int] {
					pass := func(v int, _ *Context, out Collector[int]) error { out.Collect(v); return nil }
					return CoProcessFunction[int, int, int]{Open: c.add, ProcessElement1: pass, ProcessElement2: pass}
				}).Name("coprocess")
				kco := KeyedCoProcess(ConnectKeyed(KeyBy(co, key), KeyBy(pr, key)), func() KeyedCoProcessFunction[int, int, int, int] {
					pass := func(v int, _ *KeyedContext[int], out Collector[int]) error { out.Collect(v); return nil }
					return KeyedCoProcessFunction[int, int, int, int]{Open: keyedOpen, ProcessElement1: pass, ProcessElement2: pass}
				}).Name("keyedco")
				bc := BroadcastProcess(ConnectBroadcast(kco, Broadcast(pr)), func() BroadcastProcessFunction[int, int, int] {
					return BroadcastProcessFunction[int, int, int]{Open: c.add,
						ProcessElement:          func(v int, _ *ReadOnlyBroadcastContext, out Collector[int]) error { out.Collect(v); return nil },
						ProcessBroadcastElement: func(int, *BroadcastContext, Collector[int]) error { return nil }}
				}).Name("bcast")
				kb := KeyedBroadcastProcess(ConnectKeyedBroadcast(KeyBy(bc, key), Broadcast(pr)), func() KeyedBroadcastProcessFunction[int, int, int, int] {
					return KeyedBroadcastProcessFunction[int, int, int, int]{Open: keyedOpen,
						ProcessElement: func(v int, _ *KeyedReadOnlyBroadcastContext[int], out Collector[int]) error {
							out.Collect(v)
							return nil
						},
						ProcessBroadcastElement: func(int, *KeyedBroadcastContext[int], Collector[int]) error { return nil }}
				}).Name("keyedbcast")
				SinkToWriter(kb, writerSink{c}).Name("sink")
				j, err := env.Start(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if _, err := j.Wait(); err != nil {
					t.Fatal(err)
				}
				maxPar := setMax
				if maxPar == 0 {
					maxPar = 128 // state.DefaultMaxParallelism of 1 and 3
				}
				for _, op := range ops {
					var idx []int
					for _, s := range c.seen {
						if s.op != op {
							continue
						}
						idx = append(idx, s.index)
						if s.par != p {
							t.Errorf("%s subtask %d: parallelism %d, want %d", op, s.index, s.par, p)
						}
						if want := []string{op, fmt.Sprint(s.index)}; !slices.Equal(s.scope, want) {
							t.Errorf("%s subtask %d: metric scope %v, want %v", op, s.index, s.scope, want)
						}
						if op == "sink" {
							continue
						}
						if s.maxPar != maxPar || s.attempt != 0 || s.job != j.ID() {
							t.Errorf("%s subtask %d: max parallelism %d, attempt %d, job %q; want %d, 0, %q", op, s.index, s.maxPar, s.attempt, s.job, maxPar, j.ID())
						}
						if want := fmt.Sprintf("%s (%d/%d)#0", s.task, s.index+1, p); s.withSubtasks != want || s.task == "" {
							t.Errorf("%s: task name with subtasks %q, want %q", op, s.withSubtasks, want)
						}
					}
					slices.Sort(idx)
					want := make([]int, p)
					for i := range want {
						want[i] = i
					}
					if !slices.Equal(idx, want) {
						t.Errorf("%s: subtask indexes %v, want %v", op, idx, want)
					}
				}
			})
		}
	}
}

// TestCounterPerRecord: a counter a RichMap increments per record equals,
// per subtask, the records the operator received (the runtime's own
// count), and over the subtasks the records of the input; a histogram of
// the values counts them too, an integer gauge reads its atomic, and the
// metrics are scoped <operator>.<subtask>.<group>.<name>.
func TestCounterPerRecord(t *testing.T) {
	const n = 1000
	env := New(Options{Parallelism: 3})
	ds := RichMap(FromSlice(env, ints(n)).Rebalance(), func() RichMapFunction[int, int] {
		var (
			records *metrics.Counter
			values  *metrics.Histogram
			last    atomic.Int64
		)
		return RichMapFunction[int, int]{
			Open: func(rc *RuntimeContext) error {
				records = rc.MetricGroup().Counter("records")
				g := rc.MetricGroup().AddGroup("values")
				values = g.Histogram("hist", 100)
				g.GaugeInt("last", last.Load)
				return nil
			},
			Map: func(v int) (int, error) {
				records.Inc()
				values.Update(int64(v))
				last.Store(int64(v))
				return v * 2, nil
			},
		}
	}).Name("double")
	Discard(ds)
	j, err := env.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	res, err := j.Wait()
	if err != nil {
		t.Fatal(err)
	}
	total := int64(0)
	found := 0
	for _, v := range res.Vertices {
		for _, s := range v.Subtasks {
			var in int64 = -1
			for _, o := range s.Operators {
				if o.Name == "double" {
					in = o.RecordsIn
				}
			}
			for _, m := range s.Metrics {
				prefix := fmt.Sprintf("double.%d.", s.Subtask)
				switch m.Identifier() {
				case prefix + "records":
					found++
					if m.Kind != metrics.KindCounter || m.Count != in {
						t.Errorf("%s = %d (%v), want the operator's %d records in", m.Identifier(), m.Count, m.Kind, in)
					}
					total += m.Count
				case prefix + "values.hist":
					if m.Count != in || m.Histogram == nil || int64(m.Histogram.Size) != min(in, 100) {
						t.Errorf("%s: count %d, statistics %+v; want %d values", m.Identifier(), m.Count, m.Histogram, in)
					}
				case prefix + "values.last":
					if m.Kind != metrics.KindGauge || m.Count < 0 || m.Count >= n {
						t.Errorf("%s = %d", m.Identifier(), m.Count)
					}
				default:
					t.Errorf("unexpected metric %s", m.Identifier())
				}
			}
		}
	}
	if found != 3 || total != n {
		t.Fatalf("%d counters summing to %d, want 3 summing to %d", found, total, n)
	}
}

// TestMetricsRestartAtZero: a job fails in its first attempt after a
// checkpoint that covers 60 of 200 records and restarts from it; the
// restarted attempt's functions open with attempt number 1, and their
// counter counts only what that attempt read (140 records: Flink's
// metrics start at zero after a restore), while the output is whole.
func TestMetricsRestartAtZero(t *testing.T) {
	const n, covered = 200, 60
	src := newGated(ints(n))
	env := New(Options{Parallelism: 1, Clock: manual(), Restart: FixedDelayRestart(1, 0)})
	env.EnableCheckpointing(time.Hour)
	var mu sync.Mutex
	var attempts []int
	var mapped atomic.Int64 // over the attempts
	ds := RichMap(FromSource(env, src, watermark.NoWatermarks[int](), "numbers").UID("numbers"), func() RichMapFunction[int, int] {
		var records *metrics.Counter
		var attempt int
		return RichMapFunction[int, int]{
			Open: func(rc *RuntimeContext) error {
				records = rc.MetricGroup().Counter("records")
				attempt = rc.AttemptNumber()
				mu.Lock()
				attempts = append(attempts, attempt)
				mu.Unlock()
				return nil
			},
			Map: func(v int) (int, error) {
				if attempt == 0 && v == 150 {
					return 0, errors.New("poison record")
				}
				records.Inc()
				mapped.Add(1)
				return v, nil
			},
		}
	}).Name("count").UID("count")
	out := Collect(ds)
	jobs := make(chan *Job, 1)
	env.opts.Started = func(j *Job) { jobs <- j }
	done := make(chan error, 1)
	var res *Result
	go func() {
		var err error
		res, err = env.Execute(context.Background())
		done <- err
	}()
	j := <-jobs
	src.release(covered)
	waitUntil(t, "the records before the checkpoint mapped", func() bool { return mapped.Load() == covered })
	if _, err := j.TriggerCheckpoint(context.Background()); err != nil {
		t.Fatal(err)
	}
	src.open()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(attempts, []int{0, 1}) {
		t.Fatalf("opened in attempts %v, want [0 1]", attempts)
	}
	var got []int64
	for _, v := range res.Vertices {
		for _, s := range v.Subtasks {
			for _, m := range s.Metrics {
				if m.Identifier() == "count.0.records" {
					got = append(got, m.Count)
				}
			}
		}
	}
	if !slices.Equal(got, []int64{n - covered}) {
		t.Fatalf("counter after the restart %v, want [%d]", got, n-covered)
	}
	if in := res.Vertices[0].Total().Operators[1]; in.Name != "count" || in.RecordsIn != n-covered {
		t.Fatalf("the restarted attempt's operator counts %+v, want %d records in", in, n-covered)
	}
	if vs := out.Values(); len(vs) < n {
		t.Fatalf("%d records collected, want at least %d", len(vs), n)
	}
}

// TestKeyedStateByDescriptor: GetState and its siblings through a
// KeyedRuntimeContext are the states of the operator's backend: each kind
// written through the facade reads back through state.GetXState on
// rc.Backend() under the same descriptor, per key; asked for with a
// descriptor of another type, the facade returns the state's error.
func TestKeyedStateByDescriptor(t *testing.T) {
	type row struct {
		key, n, sum, listLen, mapN, reduced, agg int
	}
	var mu sync.Mutex
	var rows []row
	env := New(Options{Parallelism: 2})
	// one source subtask, so that each key's records come in slice order
	ks := KeyBy(FromSlice(env, ints(100)).SetParallelism(1), func(v int) int { return v % 5 })
	Discard(KeyedProcess(ks, func() KeyedProcessFunction[int, int, int] {
		var (
			val  state.ValueState[int]
			list state.ListState[int]
			mp   state.MapState[int, int]
			red  state.ReducingState[int]
			agg  state.AggregatingState[int, int]
			// the same states from the backend
			bval  state.ValueState[int]
			blist state.ListState[int]
			bmp   state.MapState[int, int]
			bred  state.ReducingState[int]
			bagg  state.AggregatingState[int, int]
		)
		vd := state.ValueDescriptor[int]{Name: "v"}
		ld := state.ListDescriptor[int]{Name: "l"}
		md := state.MapDescriptor[int, int]{Name: "m"}
		rd := state.ReducingDescriptor[int]{Name: "r", Reduce: func(a, b int) int { return a + b }}
		ad := state.AggregatingDescriptor[int, int, int]{Name: "a", Func: intSum{}}
		return KeyedProcessFunction[int, int, int]{
			Open: func(rc *KeyedRuntimeContext[int]) (err error) {
				err = errors.Join(
					getInto(&val, func() (state.ValueState[int], error) { return GetState(rc, vd) }),
					getInto(&list, func() (state.ListState[int], error) { return GetListState(rc, ld) }),
					getInto(&mp, func() (state.MapState[int, int], error) { return GetMapState(rc, md) }),
					getInto(&red, func() (state.ReducingState[int], error) { return GetReducingState(rc, rd) }),
					getInto(&agg, func() (state.AggregatingState[int, int], error) { return GetAggregatingState(rc, ad) }),
					getInto(&bval, func() (state.ValueState[int], error) { return state.GetValueState(rc.Backend(), vd) }),
					getInto(&blist, func() (state.ListState[int], error) { return state.GetListState(rc.Backend(), ld) }),
					getInto(&bmp, func() (state.MapState[int, int], error) { return state.GetMapState(rc.Backend(), md) }),
					getInto(&bred, func() (state.ReducingState[int], error) { return state.GetReducingState(rc.Backend(), rd) }),
					getInto(&bagg, func() (state.AggregatingState[int, int], error) { return state.GetAggregatingState(rc.Backend(), ad) }))
				if _, serr := GetState(rc, state.ValueDescriptor[string]{Name: "v"}); serr == nil {
					err = errors.Join(err, errors.New("a value state of another type under the name v"))
				}
				return err
			},
			ProcessElement: func(v int, ctx *KeyedContext[int], _ Collector[int]) error {
				n, _ := val.Value()
				val.Update(n + 1)
				list.Add(v)
				mp.Put(v, v)
				red.Add(v)
				agg.Add(v)
				bn, _ := bval.Value()
				r, _ := bred.Get()
				a, _ := bagg.Get()
				m := 0
				for range bmp.All() {
					m++
				}
				mu.Lock()
				rows = append(rows, row{ctx.CurrentKey(), bn, v, len(blist.Get()), m, r, a})
				mu.Unlock()
				return nil
			},
		}
	}))
	if _, err := env.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	// the oracle: per key, the running count, list length, map size and
	// sums of the values so far (keys 0..4, values v with v%5 == key in
	// order)
	if len(rows) != 100 {
		t.Fatalf("%d rows, want 100", len(rows))
	}
	byKey := map[int][]row{}
	for _, r := range rows {
		byKey[r.key] = append(byKey[r.key], r)
	}
	for k, rs := range byKey {
		sum := 0
		for i, r := range rs {
			v := k + 5*i
			sum += v
			if r.sum != v || r.n != i+1 || r.listLen != i+1 || r.mapN != i+1 || r.reduced != sum || r.agg != sum {
				t.Fatalf("key %d, record %d: %+v, want n=%d list=%d map=%d sums=%d", k, i, r, i+1, i+1, i+1, sum)
			}
		}
	}
}

func getInto[S any](dst *S, get func() (S, error)) error {
	s, err := get()
	*dst = s
	return err
}

// intSum is an AggregateFunction summing ints.
type intSum struct{}

func (intSum) CreateAccumulator() int { return 0 }
func (intSum) Add(v, acc int) int     { return acc + v }
func (intSum) GetResult(acc int) int  { return acc }
func (intSum) Merge(a, b int) int     { return a + b }
