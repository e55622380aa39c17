package sink

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"
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
	clk.advance(5 * time.Second)
	check(t, w.Write([]string{"t5"}))
	check(t, w.Tick())
	clk.advance(4 * time.Second)
	check(t, w.Write([]string{"t9"}))
	check(t, w.Tick()) // open 9 s: stays
	clk.advance(time.Second)
	check(t, w.Tick()) // open 10 s: rolls
	check(t, w.Tick()) // no part open
	check(t, w.Write([]string{"t10"}))
	clk.advance(9 * time.Second)
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
			clk.advance(2 * time.Second)
		}
		check(t, w.Write([]string{s}))
		check(t, w.Tick())
	}
	clk.advance(2 * time.Second)
	check(t, w.Tick()) // idle 2 s
	clk.advance(time.Second)
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
			clk.advance(time.Hour)
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
