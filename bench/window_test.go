package bench

import (
	"os"
	"strconv"
	"sync"
	"testing"
)

// The window benchmarks (window_weir_test.go) compare weir's event-time
// window operator with the hand-written loops below on the same generated
// events: 10,000 keys, event i of n at an event time that rises through
// each half of the indexes (one half per source subtask, as weir's
// generator cuts the indexes into one range per reader), perWindow events
// per second of event time. The hand loops route events by key over
// channels as handRoute does, each batch tagged with its producer; a worker
// keeps a map of key to sum per open window, its watermark is the smaller
// of its producers' latest timestamps minus 1, and it emits and drops the
// windows whose end - 1 is at or below it. Run
//
//	go test ./bench -run '^$' -bench 'Window' -count 3

// windowEventsPerSecond is WEIR_WINDOW_RATE, the events per second of event
// time (per 1 s tumbling window), 200,000 by default.
func windowEventsPerSecond(tb testing.TB, def int64) int64 {
	if s := os.Getenv("WEIR_WINDOW_RATE"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 2 {
			tb.Fatalf("WEIR_WINDOW_RATE=%q is not a count of at least 2", s)
		}
		return v
	}
	return def
}

// tev is an event of the window benchmarks: a key, a value and an event
// time in milliseconds.
type tev struct{ Key, Value, TS int64 }

// windowEvent returns the generator of event i of n (n even): the key and
// value of streamEvent, at event time j * 1000 / (perSecond / 2) ms, j
// the index within i's half.
func windowEvent(n, perSecond int64) func(i int64) tev {
	gen := streamEvent(streamKeys)
	half, perHalf := n/2, perSecond/2
	return func(i int64) tev {
		e := gen(i)
		return tev{Key: e.Key, Value: e.Value, TS: (i % half) * 1000 / perHalf}
	}
}

// slidingStarts calls f with the start of every window of size and slide
// (milliseconds, offset 0) holding ts, as Flink's SlidingEventTimeWindows.
func slidingStarts(ts, size, slide int64, f func(start int64)) {
	last := ts - ts%slide
	for s := last; s > ts-size; s -= slide {
		f(s)
	}
}

// winKey is a key's window, by its start.
type winKey struct{ Key, Start int64 }

// oracleWindowSums is the sum per key and window of n events, sequentially.
func oracleWindowSums(n int64, gen func(int64) tev, size, slide int64) map[winKey]int64 {
	m := map[winKey]int64{}
	for i := range n {
		e := gen(i)
		slidingStarts(e.TS, size, slide, func(s int64) { m[winKey{e.Key, s}] += e.Value })
	}
	return m
}

// tevBatch is a batch of one producer's events.
type tevBatch struct {
	p   int
	evs []tev
}

// handWindowSums runs the hand loop: sliding windows of size and slide ms
// (tumbling when equal), sums per key, emit(w, key, start, sum) per fired
// window.
func handWindowSums(n int64, gen func(int64) tev, size, slide int64, emit func(w int, k winKey, sum int64)) {
	const producers, inFlight = 2, 8
	chans := make([]chan tevBatch, streamWorkers)
	free := make([]chan []tev, streamWorkers)
	for w := range chans {
		chans[w] = make(chan tevBatch, inFlight)
		pool := inFlight + producers + 2
		free[w] = make(chan []tev, pool)
		for range pool {
			free[w] <- make([]tev, 0, streamBatch)
		}
	}
	var workers sync.WaitGroup
	for w := range chans {
		workers.Go(func() {
			open := map[int64]map[int64]int64{} // window start -> key -> sum
			var first, next int64               // the smallest open start and the start after the last, when any
			have := false
			wms := [producers]int64{-1 << 62, -1 << 62}
			fire := func(wm int64) {
				for have && first+size-1 <= wm {
					for k, s := range open[first] {
						emit(w, winKey{k, first}, s)
					}
					delete(open, first)
					first += slide
					have = first < next
				}
			}
			for b := range chans[w] {
				for _, e := range b.evs {
					slidingStarts(e.TS, size, slide, func(s int64) {
						m := open[s]
						if m == nil {
							m = map[int64]int64{}
							open[s] = m
							if !have {
								first, next, have = s, s+slide, true
							}
							first, next = min(first, s), max(next, s+slide)
						}
						m[e.Key] += e.Value
					})
				}
				if len(b.evs) > 0 {
					wms[b.p] = b.evs[len(b.evs)-1].TS
					fire(min(wms[0], wms[1]) - 1)
				}
				free[w] <- b.evs[:0]
			}
			fire(1 << 62)
		})
	}
	var prods sync.WaitGroup
	for p := range producers {
		lo, hi := n*int64(p)/producers, n*int64(p+1)/producers
		prods.Go(func() {
			bufs := make([][]tev, streamWorkers)
			for w := range bufs {
				bufs[w] = <-free[w]
			}
			for i := lo; i < hi; i++ {
				e := gen(i)
				w := handPart(e.Key)
				bufs[w] = append(bufs[w], e)
				if len(bufs[w]) == streamBatch {
					chans[w] <- tevBatch{p, bufs[w]}
					bufs[w] = <-free[w]
				}
			}
			for w, b := range bufs {
				chans[w] <- tevBatch{p, b}
			}
		})
	}
	prods.Wait()
	for _, c := range chans {
		close(c)
	}
	workers.Wait()
}

// TestHandWindowLoopsMatchOracle checks the hand loops against the
// sequential oracle, tumbling and sliding.
func TestHandWindowLoopsMatchOracle(t *testing.T) {
	for _, c := range []struct{ n, size, slide, rate int64 }{{200_000, 1000, 1000, 50_000}, {40_000, 60_000, 1000, 2_000}} {
		n := c.n
		gen := windowEvent(n, c.rate)
		got := make([]map[winKey]int64, streamWorkers)
		for w := range got {
			got[w] = map[winKey]int64{}
		}
		handWindowSums(n, gen, c.size, c.slide, func(w int, k winKey, s int64) { got[w][k] += s })
		merged := map[winKey]int64{}
		for _, m := range got {
			for k, v := range m {
				merged[k] += v
			}
		}
		equalWindowSums(t, "hand", merged, oracleWindowSums(n, gen, c.size, c.slide))
	}
}

func equalWindowSums(tb testing.TB, what string, got, want map[winKey]int64) {
	tb.Helper()
	if len(got) != len(want) {
		tb.Fatalf("%s: %d windows, want %d", what, len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			tb.Fatalf("%s: key %d window %d: sum %d, want %d", what, k.Key, k.Start, got[k], v)
		}
	}
}

func BenchmarkHandWindowTumbling(b *testing.B) {
	n := streamEvents(b) &^ 1
	gen := windowEvent(n, windowEventsPerSecond(b, 200_000))
	benchHandWindow(b, n, gen, 1000, 1000)
}

func BenchmarkHandWindowSliding(b *testing.B) {
	n := streamEvents(b) &^ 1
	gen := windowEvent(n, windowEventsPerSecond(b, 20_000))
	benchHandWindow(b, n, gen, 60_000, 1000)
}

func benchHandWindow(b *testing.B, n int64, gen func(int64) tev, size, slide int64) {
	var sinks [streamWorkers]handSink
	for b.Loop() {
		sinks = [streamWorkers]handSink{}
		handWindowSums(n, gen, size, slide, func(w int, _ winKey, s int64) { sinks[w].n++; sinks[w].xor ^= s })
	}
	b.ReportMetric(float64(sinks[0].n+sinks[1].n), "windows")
	reportEvents(b, n)
}
