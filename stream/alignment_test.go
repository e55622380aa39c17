package stream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirdata/weir/clock"
	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
)

// The end-to-end tests of watermark alignment run a generator of two
// splits paced on a clock.Manual, one record per split every 10 ms of the
// clock: the slow split's event time moves 1 ms per record, the fast
// split's 10 ms. The test moves the clock one record at a time and waits
// for the slow split's record each time (the slow split is never paused:
// it holds the group's least watermark). Each record carries the order in
// which the generator made it (Seq) and the clock's time then (At), so the
// oracle reads, from the input alone, what the slow split had produced
// when each fast record was read.

const (
	alignEvery    = 10 * time.Millisecond // between two records of a split
	alignInterval = 50 * time.Millisecond // the update interval
	alignDrift    = 100                   // ms of event time
	slowStep      = 1                     // event-time ms per record of the slow split
	fastStep      = 10                    // and of the fast one
)

// skewed is a record of the generator: its split, index in the split and
// timestamp; the order and the clock time of its making.
type skewed struct {
	Split int
	I     int64
	TS    int64
	Seq   int64
	At    int64 // ms of the clock since the start
}

// skewedGen generates the two splits. The fast split starts at index base.
type skewedGen struct {
	clk      *clock.Manual
	start    time.Time
	base     int64
	seq      atomic.Int64
	produced [2]atomic.Int64
}

func newSkewedGen(clk *clock.Manual, base int64) *skewedGen {
	return &skewedGen{clk: clk, start: clk.Now(), base: base}
}

func (g *skewedGen) gen(index int64) skewed {
	split, i, step := 0, index, int64(slowStep)
	if index >= g.base {
		split, i, step = 1, index-g.base, fastStep
	}
	g.produced[split].Add(1)
	return skewed{Split: split, I: i, TS: i * step, Seq: g.seq.Add(1), At: g.clk.Now().Sub(g.start).Milliseconds()}
}

// skewedJob reads count records of g (0: unbounded) at perSecond over the
// source's subtasks, with watermarks from each record's timestamp, aligned
// within alignDrift when align.
func skewedJob(env *Env, g *skewedGen, count int64, perSecond float64, align bool) *Collected[skewed] {
	strategy := watermark.ForGenerator(func(watermark.Context) watermark.Generator[skewed] {
		return watermark.Punctuated(func(_ skewed, ts int64) (int64, bool) { return ts, true })
	}).WithTimestampAssigner(func(s skewed, _ int64) int64 { return s.TS })
	if align {
		strategy = strategy.WithWatermarkAlignment("skew", alignDrift*time.Millisecond, alignInterval)
	}
	src := source.Generator(g.gen, count, perSecond, source.WithClock(g.clk), source.BatchSize(1))
	return Collect(FromSource(env, src, strategy, "skewed"))
}

// stepSlow moves the clock one record on and waits until the slow split
// made its record due by then (want in all).
func stepSlow(t *testing.T, g *skewedGen, want int64) {
	t.Helper()
	g.clk.Advance(alignEvery)
	waitUntil(t, fmt.Sprintf("slow record %d", want), func() bool { return g.produced[0].Load() >= want })
}

// alignmentViolations is the oracle: in the order the generator made the
// records, each fast record read at At >= from while the slow split had
// not ended (total slow records, 0: unbounded) must be within the drift,
// plus two fast records, of the largest slow timestamp made before it
// (one record reads past the bound before the pause; one more may be read
// as the clock moves). It starts from slowMax, the slow split's largest
// timestamp before recs (math.MinInt64: none). It returns the fast
// records checked and those past the bound.
func alignmentViolations(recs []skewed, from, slowTotal, slowMax int64) (checked int, bad []skewed) {
	recs = slices.Clone(recs)
	slices.SortFunc(recs, func(a, b skewed) int { return int(a.Seq - b.Seq) })
	slowSeen := int64(0)
	for _, r := range recs {
		if r.Split == 0 {
			slowMax = max(slowMax, r.TS)
			slowSeen++
			continue
		}
		if r.At < from || slowTotal > 0 && slowSeen >= slowTotal {
			continue
		}
		checked++
		if r.TS > slowMax+alignDrift+2*fastStep {
			bad = append(bad, r)
		}
	}
	return checked, bad
}

// fastBeforeSlowEnd is the largest fast timestamp made before the slow
// split's last record (slowTotal in all).
func fastBeforeSlowEnd(recs []skewed, slowTotal int64) int64 {
	recs = slices.Clone(recs)
	slices.SortFunc(recs, func(a, b skewed) int { return int(a.Seq - b.Seq) })
	largest, slow := int64(watermark.Min), int64(0)
	for _, r := range recs {
		if r.Split == 0 {
			if slow++; slow == slowTotal {
				break
			}
		} else {
			largest = max(largest, r.TS)
		}
	}
	return largest
}

// values returns the collected values.
func values(c *Collected[skewed]) []skewed {
	var out []skewed
	for _, r := range c.Records() {
		out = append(out, r.Value)
	}
	return out
}

// checkSplits checks that recs hold, per split, the indexes from first[s]
// on without gap or duplicate, and returns the next index of each.
func checkSplits(t *testing.T, recs []skewed, first [2]int64) [2]int64 {
	t.Helper()
	var idx [2][]int64
	for _, r := range recs {
		idx[r.Split] = append(idx[r.Split], r.I)
	}
	var next [2]int64
	for s := range 2 {
		slices.Sort(idx[s])
		for k, i := range idx[s] {
			if i != first[s]+int64(k) {
				t.Fatalf("split %d: index %d at place %d, want %d (a gap or a duplicate)", s, i, k, first[s]+int64(k))
			}
		}
		next[s] = first[s] + int64(len(idx[s]))
	}
	return next
}

// TestWatermarkAlignmentEndToEnd: two source subtasks read two splits of
// skewed event time. With alignment, no fast record past the slow split's
// largest timestamp plus the drift (and one record) is read once the
// first announcements came (three update intervals), until the slow split
// ends; then the fast split reads on to its end. Without alignment the
// same oracle finds the fast split far ahead, so the oracle can fail.
func TestWatermarkAlignmentEndToEnd(t *testing.T) {
	const n = 150 // records per split
	for _, align := range []bool{true, false} {
		t.Run(fmt.Sprint("align=", align), func(t *testing.T) {
			clk := manual()
			g := newSkewedGen(clk, n)
			env := New(Options{Parallelism: 2, Clock: clk, AutoWatermarkInterval: alignEvery})
			got := skewedJob(env, g, 2*n, 2*float64(time.Second/alignEvery), align)
			j, err := env.Start(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer j.Cancel()
			// both readers open at the clock's start: their first records
			waitUntil(t, "the first records", func() bool { return g.produced[0].Load() >= 1 && g.produced[1].Load() >= 1 })
			for k := int64(2); k <= n; k++ {
				stepSlow(t, g, k)
			}
			for done := false; !done; { // the fast split reads on to its end
				select {
				case <-j.Done():
					done = true
				case <-time.After(time.Millisecond):
					clk.Advance(alignInterval)
				}
			}
			if _, err := j.Wait(); err != nil {
				t.Fatal(err)
			}
			recs := values(got)
			if next := checkSplits(t, recs, [2]int64{}); next != [2]int64{n, n} {
				t.Fatalf("read %v records of the splits, want %d each", next, n)
			}
			from := (3 * alignInterval).Milliseconds()
			checked, bad := alignmentViolations(recs, from, n, watermark.Min)
			t.Logf("%d fast records checked, %d past the bound", checked, len(bad))
			if align {
				if len(bad) > 0 {
					t.Fatalf("%d of %d fast records past the slow split's timestamp + %d ms, the first %+v", len(bad), checked, alignDrift, bad[0])
				}
				if checked < 10 {
					t.Fatalf("only %d fast records read while the slow split ran: the oracle checked nothing", checked)
				}
				// held at the bound, not stuck below it: the fast split
				// reached the slow split's end within two update
				// intervals of staleness of the drift
				fastBefore := fastBeforeSlowEnd(recs, n)
				if low := (n-1)*slowStep + alignDrift - 2*alignInterval.Milliseconds()/alignEvery.Milliseconds()*slowStep - fastStep; fastBefore < low {
					t.Fatalf("the fast split reached %d while the slow one ran, want at least %d", fastBefore, low)
				}
				return
			}
			if len(bad) < checked/2 {
				t.Fatalf("without alignment only %d of %d fast records ran ahead", len(bad), checked)
			}
		})
	}
}

// TestWatermarkAlignmentRestore stops a job at parallelism 2 with a
// savepoint while its fast split waits for alignment, and restores it at
// parallelism 1: one reader holding both splits (taking turns between
// them, the generator being unbounded). Both splits resume where the
// savepoint left them, without gap or duplicate; the restored reader
// pauses the fast split alone and reads the slow one on (FLIP-217), the
// same oracle holding from the first announcements on.
func TestWatermarkAlignmentRestore(t *testing.T) {
	const base = 1 << 62 // the fast split's first index: the second half of an unbounded generator
	// phase 1: parallelism 2, stopped mid-alignment
	clk := manual()
	g := newSkewedGen(clk, base)
	env := New(Options{Parallelism: 2, Clock: clk, AutoWatermarkInterval: alignEvery})
	env.EnableCheckpointing(time.Hour)
	got := skewedJob(env, g, 0, 2*float64(time.Second/alignEvery), true)
	j, err := env.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the first records", func() bool { return g.produced[0].Load() >= 1 && g.produced[1].Load() >= 1 })
	const steps = 60
	for k := int64(2); k <= steps; k++ {
		stepSlow(t, g, k)
	}
	path, err := j.StopWithSavepoint(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	first := values(got)
	next := checkSplits(t, first, [2]int64{})
	slowMax := (next[0] - 1) * slowStep
	fastMax := (next[1] - 1) * fastStep
	if _, bad := alignmentViolations(first, (3 * alignInterval).Milliseconds(), 0, watermark.Min); len(bad) > 0 {
		t.Fatalf("before the stop, fast records past the bound: %+v", bad[0])
	}
	if fastMax <= slowMax+alignDrift-2*fastStep {
		t.Fatalf("at the stop the fast split (%d) is not held at the bound (slow %d + %d): no alignment to restore", fastMax, slowMax, alignDrift)
	}

	// phase 2: parallelism 1 from the savepoint
	snap, err := checkpoint.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	clk2 := manual()
	g2 := newSkewedGen(clk2, base)
	env2 := New(Options{Parallelism: 1, Clock: clk2, AutoWatermarkInterval: alignEvery, Restore: snap})
	got2 := skewedJob(env2, g2, 0, float64(time.Second/alignEvery), true)
	j2, err := env2.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the first restored record", func() bool { return g2.produced[0].Load() >= 1 })
	const steps2 = 200
	for k := int64(2); k <= steps2; k++ {
		stepSlow(t, g2, k)
	}
	j2.Cancel()
	if _, err := j2.Wait(); !errors.Is(err, context.Canceled) {
		t.Fatalf("the restored job: %v", err)
	}
	second := values(got2)
	after := checkSplits(t, second, next)
	if after[0]-next[0] < steps2 {
		t.Fatalf("the slow split read %d records after the restore, want %d", after[0]-next[0], steps2)
	}
	checked, bad := alignmentViolations(second, (3 * alignInterval).Milliseconds(), 0, slowMax)
	if len(bad) > 0 {
		t.Fatalf("after the restore %d of %d fast records past the bound, the first %+v", len(bad), checked, bad[0])
	}
	if checked < 10 {
		t.Fatalf("only %d fast records read after the restore", checked)
	}

	// the reader paused the fast split alone: a run of slow records with
	// no fast one between them, longer than taking turns allows
	slices.SortFunc(second, func(a, b skewed) int { return int(a.Seq - b.Seq) })
	run, longest := 0, 0
	for _, r := range second {
		if r.Split == 0 {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	t.Logf("stopped at slow %d, fast %d; restored to slow %d, fast %d; %d checked; longest slow run %d",
		next[0], next[1], after[0], after[1], checked, longest)
	if longest < 5 {
		t.Fatalf("the longest run of slow records alone is %d: the fast split was never paused alone", longest)
	}
}
