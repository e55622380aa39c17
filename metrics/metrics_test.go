package metrics

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirdata/weir/clock"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// TestCounterPublish: a counter's updates are the updater's until a
// Publish, which makes them what Samples reads.
func TestCounterPublish(t *testing.T) {
	g := NewGroup(nil, "op", "0")
	c := g.Counter("c")
	for range 10 {
		c.Inc()
	}
	c.IncBy(7)
	c.Dec()
	c.DecBy(2)
	if c.Count() != 14 {
		t.Fatalf("count %d, want 14", c.Count())
	}
	if s := g.Samples(); s[0].Count != 0 {
		t.Fatalf("read %d before a publish, want 0", s[0].Count)
	}
	g.Publish()
	if s := g.Samples(); s[0].Count != 14 {
		t.Fatalf("read %d after a publish, want 14", s[0].Count)
	}
	c.Inc()
	if s := g.Samples(); s[0].Count != 14 {
		t.Fatalf("read %d after an update not published, want 14", s[0].Count)
	}
}

// legacyQuantile is the oracle of Quantile: Commons Math's legacy
// percentile written from its definition on a sorted copy, with the rank
// kept as a fraction num/den to avoid sharing the implementation's
// arithmetic.
func legacyQuantile(values []int64, q float64) float64 {
	s := slices.Clone(values)
	slices.Sort(s)
	n := len(s)
	if q == 1 {
		return float64(s[n-1])
	}
	pos := q * float64(n+1)
	k := int(pos) // rank below pos, 1-based
	switch {
	case k < 1:
		return float64(s[0])
	case k >= n:
		return float64(s[n-1])
	}
	frac := pos - float64(k)
	return float64(s[k-1])*(1-frac) + float64(s[k])*frac
}

// TestHistogramQuantilesClosedForm: for the values 1..n in any order the
// legacy quantile q is q*(n+1) clamped to [1, n].
func TestHistogramQuantilesClosedForm(t *testing.T) {
	for _, n := range []int{1, 2, 7, 100, 1000} {
		h := NewHistogram(n)
		rng := rand.New(rand.NewPCG(uint64(n), 1))
		for _, v := range rng.Perm(n) {
			h.Update(int64(v + 1))
		}
		st := h.Statistics()
		for _, q := range []float64{0, 0.001, 0.25, 0.5, 0.75, 0.95, 0.99, 0.999, 1} {
			want := min(max(q*float64(n+1), 1), float64(n))
			if q == 1 {
				want = float64(n)
			}
			if got := st.Quantile(q); math.Abs(got-want) > 1e-9 {
				t.Errorf("n=%d q=%v: %v, want %v", n, q, got, want)
			}
		}
		if st.Min != 1 || st.Max != int64(n) || st.Size != n || h.Count() != int64(n) {
			t.Errorf("n=%d: min %d max %d size %d count %d", n, st.Min, st.Max, st.Size, h.Count())
		}
		if want := float64(n+1) / 2; math.Abs(st.Mean-want) > 1e-9 {
			t.Errorf("n=%d: mean %v, want %v", n, st.Mean, want)
		}
		// the sample variance of 1..n is n(n+1)/12
		if want := math.Sqrt(float64(n) * float64(n+1) / 12); n > 1 && math.Abs(st.StdDev-want) > 1e-9 {
			t.Errorf("n=%d: stddev %v, want %v", n, st.StdDev, want)
		}
	}
}

// TestHistogramReservoir: after more values than the reservoir holds, the
// statistics are those of the last size values (a sorted-slice oracle),
// and Count counts all of them.
func TestHistogramReservoir(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, tc := range []struct{ size, n int }{{16, 5}, {16, 16}, {16, 17}, {100, 1234}, {0, 5000}} {
		g := NewGroup(nil, "op", "0")
		h := g.Histogram("h", tc.size)
		size := tc.size
		if size <= 0 {
			size = DefaultReservoir
		}
		all := make([]int64, tc.n)
		for i := range all {
			all[i] = rng.Int64N(1e6) - 5e5
			h.Update(all[i])
			if rng.IntN(10) == 0 { // publish after runs of any length
				g.Publish()
			}
		}
		g.Publish()
		pub := g.Samples()[0]
		last := all[max(0, tc.n-size):]
		st := h.Statistics()
		if h.Count() != int64(tc.n) || st.Size != len(last) || pub.Count != int64(tc.n) {
			t.Fatalf("%+v: count %d (published %d) size %d", tc, h.Count(), pub.Count, st.Size)
		}
		sorted := slices.Sorted(slices.Values(last))
		if !slices.Equal(st.Values(), sorted) || !slices.Equal(pub.Histogram.Values(), sorted) {
			t.Fatalf("%+v: values (or the published ones) differ from the last %d", tc, len(last))
		}
		if st.Min != sorted[0] || st.Max != sorted[len(sorted)-1] {
			t.Errorf("%+v: min %d max %d", tc, st.Min, st.Max)
		}
		var sum float64
		for _, v := range last {
			sum += float64(v)
		}
		if mean := sum / float64(len(last)); math.Abs(st.Mean-mean) > 1e-6 {
			t.Errorf("%+v: mean %v, want %v", tc, st.Mean, mean)
		}
		for i, q := range Quantiles {
			want := legacyQuantile(last, q)
			if math.Abs(st.Quantile(q)-want) > 1e-6 || math.Abs(st.Quantiles[i]-want) > 1e-6 {
				t.Errorf("%+v q=%v: %v (listed %v), want %v", tc, q, st.Quantile(q), st.Quantiles[i], want)
			}
		}
	}
}

// TestHistogramEmpty: an empty histogram's statistics are zero.
func TestHistogramEmpty(t *testing.T) {
	st := NewHistogram(4).Statistics()
	if st.Size != 0 || st.Min != 0 || st.Max != 0 || st.Mean != 0 || st.StdDev != 0 || st.Quantile(0.5) != 0 || len(st.Quantiles) != len(Quantiles) {
		t.Fatalf("%+v", st)
	}
}

// TestMeterRate: under a manual clock, events at rate r1 for 60 s, then
// r2, read every second. The rate is the events since the newest sample
// at least 60 s old (samples every 5 s) over the time since it: r1 while
// the span holds only r1, then the closed form of the mix, then r2.
func TestMeterRate(t *testing.T) {
	c := clock.NewManual(epoch)
	m := NewMeter(c, 0)
	if m.Span() != DefaultSpan || m.Rate() != 0 {
		t.Fatalf("span %v rate %v at start", m.Span(), m.Rate())
	}
	const r1, r2 = 10, 40
	events := func(s int) int64 { // events marked by second s
		if s <= 60 {
			return int64(r1 * s)
		}
		return r1*60 + int64(r2*(s-60))
	}
	for s := 1; s <= 180; s++ {
		c.Advance(time.Second)
		if s <= 60 {
			m.MarkEventN(r1)
		} else {
			for range r2 {
				m.MarkEvent()
			}
		}
		m.publish()
		// the base sample: taken at the newest multiple of 5 at least 60
		// s before s, or the start
		base := 0
		if s >= 60 {
			base = (s - 60) / 5 * 5
		}
		want := float64(events(s)-events(base)) / float64(s-base)
		if got := m.Rate(); math.Abs(got-want) > 1e-9 {
			t.Fatalf("second %d: rate %v, want %v", s, got, want)
		}
		if m.Count() != events(s) {
			t.Fatalf("second %d: count %d, want %d", s, m.Count(), events(s))
		}
	}
	if len(m.samples) > int(DefaultSpan/UpdateInterval)+2 {
		t.Fatalf("%d samples kept", len(m.samples))
	}
}

// TestMeterSparseReads: read less often than the span, the rate is over
// the time since the sample before the span.
func TestMeterSparseReads(t *testing.T) {
	c := clock.NewManual(epoch)
	m := NewMeter(c, 10*time.Second)
	m.MarkEventN(300)
	m.publish()
	c.Advance(30 * time.Second)
	if got := m.Rate(); got != 10 {
		t.Fatalf("rate %v after 300 events in 30 s, want 10", got)
	}
	m.MarkEventN(100)
	m.publish()
	c.Advance(50 * time.Second)
	if got := m.Rate(); got != 2 {
		t.Fatalf("rate %v after 100 events in 50 s, want 2", got)
	}
}

// TestGroup: scopes and identifiers, sub-groups made once, names
// registered once per group (a colliding kind is not registered), and
// the samples' order and values.
func TestGroup(t *testing.T) {
	c := clock.NewManual(epoch)
	g := NewGroup(c, "Map", "2")
	cnt := g.Counter("records")
	if g.Counter("records") != cnt {
		t.Fatal("a second Counter of the name is not the registered one")
	}
	if g.Histogram("records", 4) == nil {
		t.Fatal("a colliding histogram is nil")
	}
	var gv int64 = 5
	g.GaugeInt("queue", func() int64 { return gv })
	g.Gauge("queue", func() float64 { return -1 }) // kept: the first
	sub := g.AddGroup("io")
	if g.AddGroup("io") != sub {
		t.Fatal("AddGroup made the group twice")
	}
	h := sub.Histogram("latency", 8)
	m := sub.AddGroup("out").Meter("bytes", 10*time.Second)
	g.Gauge("ratio", func() float64 { return 0.25 })
	cnt.IncBy(3)
	h.Update(7)
	h.Update(9)
	m.MarkEventN(50)
	c.Advance(5 * time.Second)
	g.Publish()

	got := g.Samples()
	want := []struct {
		id    string
		kind  Kind
		count int64
		value float64
	}{
		{"Map.2.records", KindCounter, 3, 0},
		{"Map.2.queue", KindGauge, 5, 5},
		{"Map.2.ratio", KindGauge, 0, 0.25},
		{"Map.2.io.latency", KindHistogram, 2, 0},
		{"Map.2.io.out.bytes", KindMeter, 50, 10},
	}
	if len(got) != len(want) {
		t.Fatalf("%d samples, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		s := got[i]
		if s.Identifier() != w.id || s.Kind != w.kind || s.Count != w.count || s.Value != w.value {
			t.Errorf("sample %d: %s %v %d %v, want %+v", i, s.Identifier(), s.Kind, s.Count, s.Value, w)
		}
	}
	if st := got[3].Histogram; st == nil || st.Min != 7 || st.Max != 9 || st.Mean != 8 {
		t.Errorf("histogram statistics %+v", got[3].Histogram)
	}
	lines := []string{"Map.2.records counter 3", "Map.2.queue gauge 5", "Map.2.ratio gauge 0.25",
		"Map.2.io.latency histogram 2 values min=7 p50=8 p95=9 p99=9 max=9 mean=8", "Map.2.io.out.bytes meter 50 events 10/s"}
	for i, l := range lines {
		if got[i].String() != l {
			t.Errorf("sample %d prints %q, want %q", i, got[i].String(), l)
		}
	}
	if s := sub.Scope(); !slices.Equal(s, []string{"Map", "2", "io"}) {
		t.Errorf("scope %v", s)
	}
}

// TestNoAllocs: Counter.Inc, Histogram.Update and Meter.MarkEvent
// allocate nothing.
func TestNoAllocs(t *testing.T) {
	g := NewGroup(nil, "op", "0")
	c, h, m := g.Counter("c"), g.Histogram("h", 64), g.Meter("m", 0)
	v := int64(0)
	for name, f := range map[string]func(){
		"Counter.Inc":      func() { c.Inc() },
		"Histogram.Update": func() { v++; h.Update(v) },
		"Meter.MarkEvent":  func() { m.MarkEvent() },
		"Group.Publish":    func() { c.Inc(); v++; h.Update(v); m.MarkEvent(); g.Publish() },
	} {
		if n := testing.AllocsPerRun(1000, f); n != 0 {
			t.Errorf("%s: %v allocations per call", name, n)
		}
	}
}

// TestConcurrentReadWrite: a writer updates every kind and publishes
// every 100 updates while a reader reads the samples (for the race
// detector): the reader sees counts that never go back, and after the
// last publish the exact counts.
func TestConcurrentReadWrite(t *testing.T) {
	g := NewGroup(nil, "op", "0")
	c, h, m := g.Counter("c"), g.Histogram("h", 16), g.Meter("m", 0)
	var gauge atomic.Int64
	g.GaugeInt("g", gauge.Load)
	done := make(chan struct{})
	var wg sync.WaitGroup
	var back atomic.Bool
	wg.Go(func() {
		var last int64
		for {
			select {
			case <-done:
				return
			default:
				s := g.Samples()
				if s[0].Count < last || s[1].Count != s[0].Count {
					back.Store(true)
				}
				last = s[0].Count
			}
		}
	})
	for i := range 5000 {
		c.Inc()
		h.Update(int64(i))
		m.MarkEvent()
		gauge.Add(1)
		if i%100 == 99 {
			g.Publish()
		}
	}
	close(done)
	wg.Wait()
	if back.Load() {
		t.Fatal("a reader saw a count go back, or counter and histogram of different publishes")
	}
	s := g.Samples()
	if s[0].Count != 5000 || s[1].Count != 5000 || s[2].Count != 5000 || s[3].Count != 5000 {
		t.Fatalf("%+v", s)
	}
}

// TestPublishIdle: a group without counters, histograms or meters
// publishes with one atomic load and no allocation.
func TestPublishIdle(t *testing.T) {
	g := NewGroup(nil, "op", "0")
	g.AddGroup("sub").Gauge("x", func() float64 { return 1 })
	if n := testing.AllocsPerRun(100, g.Publish); n != 0 || g.live.Load() {
		t.Fatalf("%v allocations, live %v", n, g.live.Load())
	}
	g.AddGroup("sub").Counter("c").Inc()
	g.Publish()
	if s := g.Samples(); len(s) != 2 || s[1].Count != 1 {
		t.Fatalf("%+v", s)
	}
}

func BenchmarkCounterInc(b *testing.B) {
	var c Counter
	for b.Loop() {
		c.Inc()
	}
}

func BenchmarkHistogramUpdate(b *testing.B) {
	h := NewHistogram(1024)
	var v int64
	for b.Loop() {
		v++
		h.Update(v)
	}
}

// A Sample of each kind reads back from its JSON as it was.
func TestSampleJSON(t *testing.T) {
	for _, k := range []Kind{KindCounter, KindGauge, KindHistogram, KindMeter} {
		in := Sample{Scope: []string{"op", "0"}, Name: "m", Kind: k, Count: 3, Value: 1.5}
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		var out Sample
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if !reflect.DeepEqual(in, out) {
			t.Errorf("%s read back as %+v", b, out)
		}
	}
	var k Kind
	if err := json.Unmarshal([]byte(`"bogus"`), &k); err == nil {
		t.Error("an unknown kind was read")
	}
}
