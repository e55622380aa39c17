package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/watermark"
)

// weir's keyed stream operators on the hand loops' events (stream_test.go):
// a bounded generator source of WEIR_STREAM_EVENTS events at parallelism
// streamWorkers, keyed by Key, in STREAMING mode, into a counting sink
// chained after the keyed operator. Run next to the hand loops:
//
//	go test ./bench -run '^$' -bench 'Stream|Hand(RollingSum|KeyedProcess)' -count 5
//
// BenchmarkKeyedSumLatency runs an unbounded, rate-limited generator
// through KeyBy and a rolling sum with a 10 ms buffer timeout and reports
// the latency quantiles from an event's creation to the sink:
//
//	WEIR_STREAM_RATE=200000 WEIR_STREAM_SECONDS=6 go test ./bench -run '^$' -bench KeyedSumLatency -benchtime 1x

// streamSource adds the benchmarks' source: n events of gen, or unbounded
// at perSecond events per second when n is 0.
func streamSource[T any](env *stream.Env, gen func(int64) T, n int64, perSecond float64) stream.DataStream[T] {
	return stream.FromSource(env, source.Generator(gen, n, perSecond), watermark.NoWatermarks[T](), "events")
}

// countSink adds a sink counting its records into n (each subtask counts
// locally and adds its count at the end) and xoring value(v) into x, so
// that the records are read.
func countSink[T any](ds stream.DataStream[T], value func(T) int64, n, x *atomic.Int64) {
	stream.Discard(stream.Process(ds, func() stream.ProcessFunction[T, struct{}] {
		var c, xor int64
		return stream.ProcessFunction[T, struct{}]{
			ProcessElement: func(v T, _ *stream.Context, _ stream.Collector[struct{}]) error {
				c++
				xor ^= value(v)
				return nil
			},
			Close: func() error {
				n.Add(c)
				x.Add(xor)
				return nil
			},
		}
	}))
}

// rollingSum is KeyBy(Key) and Sum(Value).
func rollingSum(ds stream.DataStream[kv]) stream.DataStream[kv] {
	return stream.Sum(stream.KeyBy(ds, func(e kv) int64 { return e.Key }),
		func(e kv) int64 { return e.Value }, func(e *kv, v int64) { e.Value = v })
}

// countPerKey is KeyBy(Key) and a KeyedProcess counting the events per key
// in a ValueState, emitting (key, count) when the count is a multiple of
// countEvery.
func countPerKey(ds stream.DataStream[kv]) stream.DataStream[keyCount] {
	ks := stream.KeyBy(ds, func(e kv) int64 { return e.Key })
	return stream.KeyedProcess(ks, func() stream.KeyedProcessFunction[int64, kv, keyCount] {
		var count state.ValueState[int64]
		return stream.KeyedProcessFunction[int64, kv, keyCount]{
			Open: func(rc *stream.KeyedRuntimeContext[int64]) (err error) {
				count, err = stream.GetState(rc, state.ValueDescriptor[int64]{Name: "count"})
				return err
			},
			ProcessElement: func(e kv, _ *stream.KeyedContext[int64], out stream.Collector[keyCount]) error {
				c, _ := count.Value()
				c++
				count.Update(c)
				if c%countEvery == 0 {
					out.Collect(keyCount{e.Key, c})
				}
				return nil
			},
		}
	})
}

func streamEnv() *stream.Env {
	return stream.New(stream.Options{Parallelism: streamWorkers, Mode: stream.Streaming})
}

// TestWeirStreamMatchesOracle runs both jobs on fewer events and checks
// them against the sequential oracles: the last running sum of each key is
// its total, every event gives one running result and a key's running
// sums rise; the keyed process emits exactly the oracle's (key, count)
// records, over few keys so that each key emits several times.
func TestWeirStreamMatchesOracle(t *testing.T) {
	const n = 300_000
	gen := streamEvent(streamKeys)
	env := streamEnv()
	sums := stream.Collect(rollingSum(streamSource(env, gen, n, 0)))
	if _, err := env.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := map[int64]int64{}
	events := map[int64]int64{}
	rs := sums.Values()
	if len(rs) != n {
		t.Fatalf("%d running sums, want %d", len(rs), n)
	}
	for _, r := range rs {
		if r.Value <= got[r.Key] {
			t.Fatalf("key %d: running sum %d after %d", r.Key, r.Value, got[r.Key])
		}
		got[r.Key] = r.Value
		events[r.Key]++
	}
	equalMaps(t, "weir rolling sum", got, oracleSums(n, gen))
	want := map[int64]int64{}
	for i := range int64(n) {
		want[gen(i).Key]++
	}
	equalMaps(t, "weir running results per key", events, want)

	few := streamEvent(37)
	env = streamEnv()
	counts := stream.Collect(countPerKey(streamSource(env, few, n, 0)))
	if _, err := env.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	emitted := counts.Values()
	sortKeyCounts(emitted)
	equalKeyCounts(t, "weir keyed process", emitted, oracleCounts(n, few))
}

// The weir benchmarks run each job into two sinks: a Filter that drops
// every record (sink=filter; the records reaching the keyed operator are
// checked in the job's metrics) and countSink, a Process function that
// counts (sink=process).

func BenchmarkStreamRollingSum(b *testing.B) {
	benchStream(b, "Sum", func(ds stream.DataStream[kv], n, x *atomic.Int64) {
		sums := rollingSum(ds)
		if n == nil {
			stream.Discard(sums.Filter(func(kv) bool { return false }))
			return
		}
		countSink(sums, func(e kv) int64 { return e.Value }, n, x)
	}, true)
}

func BenchmarkStreamKeyedProcessValueState(b *testing.B) {
	benchStream(b, "KeyedProcess", func(ds stream.DataStream[kv], n, x *atomic.Int64) {
		counts := countPerKey(ds)
		if n == nil {
			stream.Discard(counts.Filter(func(keyCount) bool { return false }))
			return
		}
		countSink(counts, func(c keyCount) int64 { return c.Count }, n, x)
	}, false)
}

// benchStream runs job on WEIR_STREAM_EVENTS events into both sinks (a nil
// counter asks for the Filter), checking that the keyed vertex named keyed
// read every event, and, when perRecord, that the counting sink got one
// record per event.
func benchStream(b *testing.B, keyed string, job func(ds stream.DataStream[kv], n, x *atomic.Int64), perRecord bool) {
	n := streamEvents(b)
	gen := streamEvent(streamKeys)
	for _, sink := range []string{"filter", "process"} {
		b.Run("sink="+sink, func(b *testing.B) {
			var count, xor atomic.Int64
			for b.Loop() {
				env := streamEnv()
				count.Store(0)
				if sink == "filter" {
					job(streamSource(env, gen, n, 0), nil, nil)
				} else {
					job(streamSource(env, gen, n, 0), &count, &xor)
				}
				r, err := env.Execute(context.Background())
				if err != nil {
					benchFatalf(b, "%v", err)
				}
				var in int64
				for _, v := range r.Vertices {
					if v.Name == keyed {
						in += v.Total().RecordsIn
					}
				}
				if in != n {
					benchFatalf(b, "%s read %d records, want %d", keyed, in, n)
				}
				if sink == "process" && perRecord && count.Load() != n {
					benchFatalf(b, "%d records reached the sink, want %d", count.Load(), n)
				}
			}
			if sink == "process" && !perRecord {
				b.ReportMetric(float64(count.Load()), "emitted")
			}
			reportEvents(b, n)
		})
	}
}

// benchFailures keeps the messages of benchStream's failures, which
// testing.Benchmark (TestStreamBenchmarksRun) does not show.
var benchFailures struct {
	sync.Mutex
	msgs []string
}

// benchFatalf fails b with the message, kept in benchFailures too.
func benchFatalf(b *testing.B, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	benchFailures.Lock()
	benchFailures.msgs = append(benchFailures.msgs, b.Name()+": "+msg)
	benchFailures.Unlock()
	b.Fatal(msg)
}

// timedKV is an event carrying its creation time.
type timedKV struct {
	Key, Value int64
	Created    int64 // time.Now().UnixNano() when generated
}

// envInt is the integer environment variable name, def when unset.
func envInt(tb testing.TB, name string, def int64) int64 {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 1 {
		tb.Fatalf("%s=%q is not a positive integer", name, s)
	}
	return v
}

// BenchmarkKeyedSumLatency measures the latency from an event's creation
// (in the generator) to the sink through KeyBy and a rolling sum, at
// WEIR_STREAM_RATE events per second (200,000 by default) for
// WEIR_STREAM_SECONDS (6 by default), with a 10 ms buffer timeout; the
// first second is warm-up and not counted. The rolling sum is a Reduce
// that carries the newest event's creation time: Sum keeps the key's first
// record's other fields (Flink's sum(field)), its creation time included.
// It reports the latency quantiles of the bucket holding each (10 µs
// buckets).
func BenchmarkKeyedSumLatency(b *testing.B) {
	rate := envInt(b, "WEIR_STREAM_RATE", 200_000)
	secs := envInt(b, "WEIR_STREAM_SECONDS", 6)
	const flush = 10 * time.Millisecond
	b.Run(fmt.Sprintf("rate=%d/flush=%v", rate, flush), func(b *testing.B) {
		var hist latencyHist
		for b.Loop() {
			hist = latencyHist{}
			events := streamEvent(streamKeys)
			gen := func(i int64) timedKV {
				e := events(i)
				return timedKV{Key: e.Key, Value: e.Value, Created: time.Now().UnixNano()}
			}
			env := stream.New(stream.Options{Parallelism: streamWorkers, BufferTimeout: flush})
			ks := stream.KeyBy(streamSource(env, gen, 0, float64(rate)), func(e timedKV) int64 { return e.Key })
			sums := ks.Reduce(func(acc, v timedKV) timedKV {
				return timedKV{Key: v.Key, Value: acc.Value + v.Value, Created: v.Created}
			})
			from := time.Now().Add(time.Second).UnixNano()
			var mu sync.Mutex
			stream.Process(sums, func() stream.ProcessFunction[timedKV, struct{}] {
				h := new(latencyHist)
				return stream.ProcessFunction[timedKV, struct{}]{
					ProcessElement: func(e timedKV, _ *stream.Context, _ stream.Collector[struct{}]) error {
						if e.Created >= from {
							h.add(time.Duration(time.Now().UnixNano() - e.Created))
						}
						return nil
					},
					Close: func() error {
						mu.Lock()
						hist.merge(h)
						mu.Unlock()
						return nil
					},
				}
			})
			j, err := env.Start(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			time.Sleep(time.Duration(secs) * time.Second)
			j.Cancel()
			if _, err := j.Wait(); !errors.Is(err, context.Canceled) {
				b.Fatalf("wait: %v", err)
			}
		}
		measured := float64(secs - 1)
		if hist.n < int64(float64(rate)*measured*0.9) {
			b.Errorf("%d events measured in %.0f s, the source's rate is %d/s", hist.n, measured, rate)
		}
		ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
		b.ReportMetric(float64(hist.n)/measured, "events/s")
		b.ReportMetric(ms(hist.quantile(0.5)), "p50-ms")
		b.ReportMetric(ms(hist.quantile(0.99)), "p99-ms")
		b.ReportMetric(ms(hist.quantile(0.999)), "p99.9-ms")
		b.ReportMetric(ms(hist.max), "max-ms")
	})
}
