package sink

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/clock"
)

// committedParts commits cs and returns each part's lines, in counter order.
func committedParts(t *testing.T, cs []Committable) [][]string {
	t.Helper()
	check(t, Commit(cs))
	var out [][]string
	for _, c := range cs {
		b, err := os.ReadFile(c.Final)
		check(t, err)
		out = append(out, strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"))
	}
	return out
}

// DefaultRollingPolicy rolls before a record once the part holds more than
// PartSize bytes (Flink's shouldRollOnEvent: size > partSize), so a part of
// 5-byte lines with PartSize 10 holds three lines: 5, 10, then 15 > 10.
func TestRollOnSize(t *testing.T) {
	dir := t.TempDir()
	w := must[*FileWriter[string]](t)(Text(dir, WithRollingPolicy(DefaultRollingPolicy{PartSize: 10})).Writer(0, 1))
	check(t, w.Write([]string{"a000", "a001", "a002", "a003"}))
	check(t, w.Write([]string{"a004", "a005", "a006"}))
	got := committedParts(t, must[[]Committable](t)(w.PrepareCommit(1)))
	want := [][]string{{"a000", "a001", "a002"}, {"a003", "a004", "a005"}, {"a006"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("parts %q, want %q", got, want)
	}
}

// A Tick rolls the part once it has been open for RolloverInterval (Flink's
// shouldRollOnProcessingTime: now - creation >= rolloverInterval), however
// busy it is.
func TestRollOnRolloverInterval(t *testing.T) {
	dir := t.TempDir()
	clk := newClock()
	w := must[*FileWriter[string]](t)(Text(dir, WithClock(clk), WithRollingPolicy(DefaultRollingPolicy{
		RolloverInterval: 10 * time.Second, InactivityInterval: time.Hour})).Writer(0, 1))
	check(t, w.Write([]string{"t0"}))
	clk.Advance(5 * time.Second)
	check(t, w.Write([]string{"t5"}))
	check(t, w.Tick())
	clk.Advance(4 * time.Second)
	check(t, w.Write([]string{"t9"}))
	check(t, w.Tick()) // open 9 s: stays
	clk.Advance(time.Second)
	check(t, w.Tick()) // open 10 s: rolls
	check(t, w.Tick()) // no part open
	check(t, w.Write([]string{"t10"}))
	clk.Advance(9 * time.Second)
	check(t, w.Tick())
	check(t, w.Write([]string{"t19"}))
	got := committedParts(t, must[[]Committable](t)(w.PrepareCommit(1)))
	want := [][]string{{"t0", "t5", "t9"}, {"t10", "t19"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("parts %q, want %q", got, want)
	}
}

// A Tick rolls the part once no record came for InactivityInterval (now -
// lastUpdate >= inactivityInterval).
func TestRollOnInactivity(t *testing.T) {
	dir := t.TempDir()
	clk := newClock()
	w := must[*FileWriter[string]](t)(Text(dir, WithClock(clk), WithRollingPolicy(DefaultRollingPolicy{
		RolloverInterval: time.Hour, InactivityInterval: 3 * time.Second})).Writer(0, 1))
	for i, s := range []string{"a", "b", "c"} {
		if i > 0 {
			clk.Advance(2 * time.Second)
		}
		check(t, w.Write([]string{s}))
		check(t, w.Tick())
	}
	clk.Advance(2 * time.Second)
	check(t, w.Tick()) // idle 2 s
	clk.Advance(time.Second)
	check(t, w.Tick()) // idle 3 s: rolls
	check(t, w.Write([]string{"d"}))
	got := committedParts(t, must[[]Committable](t)(w.PrepareCommit(1)))
	want := [][]string{{"a", "b", "c"}, {"d"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("parts %q, want %q", got, want)
	}
}

// OnCheckpointRollingPolicy rolls on checkpoints only: neither size nor
// time closes a part, every PrepareCommit does, and a checkpoint without
// records makes no part.
func TestRollOnCheckpoint(t *testing.T) {
	dir := t.TempDir()
	clk := newClock()
	w := must[*FileWriter[string]](t)(Text(dir, WithClock(clk), WithRollingPolicy(OnCheckpointRollingPolicy{})).Writer(0, 1))
	var want [][]string
	for cp := range int64(3) {
		var part []string
		for i := range 1000 {
			s := strings.Repeat("x", 100) + string(rune('a'+cp)) + string(rune('0'+i%10))
			part = append(part, s)
			check(t, w.Write([]string{s}))
			clk.Advance(time.Hour)
			check(t, w.Tick())
		}
		want = append(want, part)
		cs := must[[]Committable](t)(w.PrepareCommit(cp))
		if len(cs) != 1 {
			t.Fatalf("checkpoint %d: %d parts, want 1", cp, len(cs))
		}
		if got := committedParts(t, cs); !slices.Equal(got[0], part) {
			t.Errorf("checkpoint %d: part of %d lines, want %d", cp, len(got[0]), len(part))
		}
	}
	if cs := must[[]Committable](t)(w.PrepareCommit(9)); len(cs) != 0 {
		t.Errorf("a checkpoint without records: %d parts", len(cs))
	}
}

// Bulk formats roll on checkpoints only, as Flink's forBulkFormat takes a
// CheckpointRollingPolicy.
func TestBulkRejectsDefaultPolicy(t *testing.T) {
	for _, f := range fileFormats[1:] {
		_, err := f.sink(t.TempDir(), WithRollingPolicy(DefaultRollingPolicy{})).Writer(0, 1)
		if err == nil || !strings.HasPrefix(err.Error(), "stream/sink:") {
			t.Errorf("%s with DefaultRollingPolicy: %v", f.name, err)
		}
	}
}

// countingPolicy counts a policy's calls and its decisions to roll, as
// MethodCallCountingPolicyWrapper in Flink's RollingPolicyTest.
type countingPolicy struct {
	RollingPolicy
	eventCalls, eventRolls, timeCalls, timeRolls int
}

func (c *countingPolicy) ShouldRollOnEvent(p PartInfo) bool {
	roll := c.RollingPolicy.ShouldRollOnEvent(p)
	c.eventCalls++
	if roll {
		c.eventRolls++
	}
	return roll
}

func (c *countingPolicy) ShouldRollOnProcessingTime(p PartInfo, now time.Time) bool {
	roll := c.RollingPolicy.ShouldRollOnProcessingTime(p, now)
	c.timeCalls++
	if roll {
		c.timeRolls++
	}
	return roll
}

func (c *countingPolicy) verify(t *testing.T, step string, eventCalls, eventRolls, timeCalls, timeRolls int) {
	t.Helper()
	if got, want := [4]int{c.eventCalls, c.eventRolls, c.timeCalls, c.timeRolls}, [4]int{eventCalls, eventRolls, timeCalls, timeRolls}; got != want {
		t.Errorf("%s: event calls, event rolls, time calls, time rolls = %v, want %v", step, got, want)
	}
}

// flinkHarness drives a text writer at processing times in milliseconds,
// as Flink's Buckets.onElement(MockSinkContext(..., processingTime)) and
// onProcessingTime do.
type flinkHarness struct {
	t     *testing.T
	clk   *clock.Manual
	w     *FileWriter[string]
	start time.Time
}

func newFlinkHarness(t *testing.T, policy RollingPolicy) *flinkHarness {
	clk := newClock()
	w := must[*FileWriter[string]](t)(Text(t.TempDir(), WithClock(clk), WithRollingPolicy(policy)).Writer(0, 1))
	return &flinkHarness{t: t, clk: clk, w: w, start: clk.Now()}
}

func (h *flinkHarness) at(ms int64) { h.clk.Set(h.start.Add(time.Duration(ms) * time.Millisecond)) }

func (h *flinkHarness) onElement(s string, ms int64) {
	h.at(ms)
	check(h.t, h.w.Write([]string{s}))
}

func (h *flinkHarness) onProcessingTime(ms int64) {
	h.at(ms)
	check(h.t, h.w.Tick())
}

// RollingPolicyTest.testDefaultRollingPolicy of Flink: max part size 10,
// inactivity 4 ms, rollover 11 ms; "test1\n" is 6 bytes.
func TestFlinkDefaultRollingPolicy(t *testing.T) {
	p := &countingPolicy{RollingPolicy: DefaultRollingPolicy{PartSize: 10, InactivityInterval: 4 * time.Millisecond, RolloverInterval: 11 * time.Millisecond}}
	h := newFlinkHarness(t, p)
	p.verify(t, "start", 0, 0, 0, 0)
	// these two fill up the first in-progress file and at the third it rolls
	h.onElement("test1", 1)
	h.onElement("test1", 2)
	p.verify(t, "two elements", 1, 0, 0, 0)
	h.onElement("test1", 3)
	p.verify(t, "roll on size", 2, 1, 0, 0)
	h.onProcessingTime(5) // still no time to roll
	p.verify(t, "at 5", 2, 1, 1, 0)
	h.onProcessingTime(7) // roll due to inactivity
	p.verify(t, "at 7", 2, 1, 2, 1)
	h.onElement("test1", 3)
	h.onProcessingTime(20) // roll due to rollover interval
	p.verify(t, "at 20", 2, 1, 3, 2)
	cs := must[[]Committable](t)(h.w.PrepareCommit(1))
	if len(cs) != 3 {
		t.Errorf("%d parts, want 3", len(cs))
	}
	check(t, Commit(cs))
}

// RollingPolicyTest.testCustomRollingPolicy of Flink: roll on event above
// 9 bytes, on processing time after 10 ms without a record.
func TestFlinkCustomRollingPolicy(t *testing.T) {
	p := &countingPolicy{RollingPolicy: customPolicy{}}
	h := newFlinkHarness(t, p)
	h.onElement("test1", 2)
	h.onElement("test1", 2)
	// one call: the first element found no part and opened one unasked
	p.verify(t, "two elements", 1, 0, 0, 0)
	h.onElement("test1", 2)
	p.verify(t, "third element", 2, 1, 0, 0)
	cs := must[[]Committable](t)(h.w.PrepareCommit(1)) // a checkpoint rolls
	if len(cs) != 2 {
		t.Errorf("checkpoint 1: %d parts, want 2", len(cs))
	}
	h.onElement("test1", 5)
	h.onProcessingTime(12) // last update at 5: no roll, but a check
	p.verify(t, "at 12", 2, 1, 1, 0)
	h.onProcessingTime(16)
	p.verify(t, "at 16", 2, 1, 2, 1)
	check(t, Commit(append(cs, must[[]Committable](t)(h.w.PrepareCommit(2))...)))
}

type customPolicy struct{}

func (customPolicy) ShouldRollOnEvent(p PartInfo) bool { return p.Size > 9 }
func (customPolicy) ShouldRollOnProcessingTime(p PartInfo, now time.Time) bool {
	return now.Sub(p.LastUpdate) >= 10*time.Millisecond
}
