package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestSessionWindowingFlinkData follows Flink's SessionWindowingITCase: the
// default input prints SessionWindowingData.EXPECTED as a multiset, at
// parallelism 1 and 2.
func TestSessionWindowingFlinkData(t *testing.T) {
	want := []string{"(a,1,1)", "(c,6,1)", "(c,11,1)", "(b,1,3)", "(a,10,1)"}
	slices.Sort(want)
	for _, p := range []int{1, 2} {
		code, stdout, stderr := runWeir(context.Background(), "run", "session-windowing", "--parallelism", fmt.Sprint(p))
		if code != 0 || stderr != "" {
			t.Fatalf("p%d: exit %d, stderr %q", p, code, stderr)
		}
		if got := printedLines(t, stdout, p); !slices.Equal(got, want) {
			t.Errorf("p%d: %q, want %q", p, got, want)
		}
	}
}

type sessionEvent struct {
	key   string
	ts    int64
	count int
}

// naiveSessions groups the events of every key into sessions of gap: sorted
// by time, an event within gap of the session's latest event joins it
// (windows [ts, ts+gap) that overlap or touch merge). Each session prints as
// its earliest event with the summed count. Events are in ascending time, as
// the example's watermark assumes.
func naiveSessions(events []sessionEvent, gap int64) []string {
	byKey := map[string][]sessionEvent{}
	for _, e := range events {
		byKey[e.key] = append(byKey[e.key], e)
	}
	var out []string
	for k, es := range byKey {
		sort.SliceStable(es, func(i, j int) bool { return es[i].ts < es[j].ts })
		first, end, sum := es[0], es[0].ts+gap, 0
		for _, e := range es {
			if e.ts > end {
				out = append(out, fmt.Sprintf("(%s,%d,%d)", k, first.ts, sum))
				first, sum = e, 0
			}
			sum += e.count
			end = max(end, e.ts+gap)
		}
		out = append(out, fmt.Sprintf("(%s,%d,%d)", k, first.ts, sum))
	}
	slices.Sort(out)
	return out
}

// TestSessionWindowingInput runs a generated CSV (ascending timestamps,
// several keys, gaps around the session gap) against naiveSessions.
func TestSessionWindowingInput(t *testing.T) {
	var events []sessionEvent
	var b strings.Builder
	b.WriteString("key,timestamp,count\n")
	ts := int64(0)
	for i := range 400 {
		ts += int64(i*7919%5) + int64(i%3)
		e := sessionEvent{key: string(rune('a' + i*31%5)), ts: ts, count: 1 + i%4}
		events = append(events, e)
		fmt.Fprintf(&b, "%s,%d,%d\n", e.key, e.ts, e.count)
	}
	in := filepath.Join(t.TempDir(), "events.csv")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, gap := range []int64{3, 10} {
		want := naiveSessions(events, gap)
		for _, p := range []int{1, 2} {
			code, stdout, stderr := runWeir(context.Background(), "run", "session-windowing", "--input", in,
				"--gap", fmt.Sprintf("%dms", gap), "--parallelism", fmt.Sprint(p))
			if code != 0 || stderr != "" {
				t.Fatalf("gap %d p%d: exit %d, stderr %q", gap, p, code, stderr)
			}
			if got := printedLines(t, stdout, p); !slices.Equal(got, want) {
				t.Errorf("gap %d p%d: %d sessions, want %d", gap, p, len(got), len(want))
			}
		}
	}
}

// TestSessionWindowingBadInput names the file, the line and the column.
func TestSessionWindowingBadInput(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct{ data, want string }{
		"notime.csv": {"key,count\na,1\n", `notime.csv has no column for field(s) Timestamp (column "Timestamp")`},
		"badts.csv":  {"key,timestamp,count\na,1,1\nb,x,1\n", `badts.csv line 3, column timestamp: parsing "x": invalid syntax`},
		"short.csv":  {"key,timestamp,count\na,1\n", `short.csv line 2: 2 fields, want 3`},
		"edge.csv":   {"key,timestamp,count\na,1,1\na,9223372036854775805,1\n", `edge.csv line 3, column timestamp: the time 9223372036854775805 has no session:3ms window`},
		"bom.csv":    {"\ufeffkey,timestamp,count\na,1,1\na,\"x\",1\n", `bom.csv line 3, column timestamp: parsing "x"`},
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(c.data), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runWeir(context.Background(), "run", "session-windowing", "--input", path)
		if code != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", name, code, stderr, c.want)
		}
	}
	if code, _, stderr := runWeir(context.Background(), "run", "session-windowing", "--gap", "0s"); code != 1 || stderr == "" {
		t.Errorf("--gap 0s: exit %d, stderr %q", code, stderr)
	}
}
