package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/examples/streaming"
)

// naiveWindowJoin joins n grades from seed with n salaries from seed + 1
// (Flink's WindowJoinSampleData drawn from java.util.Random) by a nested
// loop per tumbling window: element i of a stream has timestamp
// i * 1000 / rate ms and window floor(timestamp / size); a grade and a
// salary of one name in one window give "(name,grade,salary)", Flink's
// Tuple3 toString. Returns the lines sorted.
func naiveWindowJoin(seed int64, n int, rate float64, size int64) []string {
	type el struct {
		name string
		v    int32
		win  int64
	}
	gen := func(seed int64, maxValue int32) []el {
		g := streaming.WindowJoinSample(seed, maxValue)
		out := make([]el, n)
		for i := range out {
			v := g(int64(i))
			ts := int64(float64(i) * 1000 / rate)
			out[i] = el{v.Name, v.Value, ts / size}
		}
		return out
	}
	grades, salaries := gen(seed, 5), gen(seed+1, 10000)
	var out []string
	for _, g := range grades {
		if g.v < 1 || g.v > 5 {
			panic(fmt.Sprintf("grade %d", g.v))
		}
		for _, s := range salaries {
			if g.name == s.name && g.win == s.win {
				out = append(out, fmt.Sprintf("(%s,%d,%d)", g.name, g.v, s.v))
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestWindowJoinOracle runs weir run window-join with fixed seeds,
// bounded, at parallelism 1 and 2 in STREAMING, BATCH and AUTOMATIC mode,
// and compares the printed lines with the nested-loop join.
func TestWindowJoinOracle(t *testing.T) {
	const events, rate, size = 300, 10000, 3
	for _, seed := range []int64{1, 7} {
		want := naiveWindowJoin(seed, events, rate, size)
		if len(want) < 500 {
			t.Fatalf("seed %d: the oracle joined only %d pairs", seed, len(want))
		}
		for _, mode := range []string{"streaming", "batch", "automatic"} {
			for _, p := range []int{1, 2} {
				code, stdout, stderr := runWeir(context.Background(), "run", "window-join", "--parallelism", fmt.Sprint(p),
					"--windowSize", fmt.Sprint(size), "--rate", fmt.Sprint(rate), "--events", fmt.Sprint(events),
					"--seed", fmt.Sprint(seed), "--execution-mode", mode)
				if code != 0 || stderr != "" {
					t.Fatalf("seed %d %s p%d: exit %d, stderr %q", seed, mode, p, code, stderr)
				}
				if got := printedLines(t, stdout, p); !slices.Equal(got, want) {
					t.Errorf("seed %d %s p%d: %d lines, want %d", seed, mode, p, len(got), len(want))
				}
			}
		}
	}
}

// TestWindowJoinOutput writes the joined lines to part files under
// --output: together they hold the oracle's lines.
func TestWindowJoinOutput(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runWeir(context.Background(), "run", "window-join", "--parallelism", "2",
		"--windowSize", "4", "--rate", "5000", "--events", "200", "--seed", "3", "--output", dir)
	if code != 0 || stderr != "" || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "part-") {
			t.Fatalf("unexpected file %s", e.Name())
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if l != "" {
				got = append(got, l)
			}
		}
	}
	slices.Sort(got)
	if want := naiveWindowJoin(3, 200, 5000, 4); !slices.Equal(got, want) {
		t.Errorf("%d lines, want %d", len(got), len(want))
	}
}

// TestWindowJoinBadFlags: a bad flag is a usage error (exit 1, the message naming the flag).
func TestWindowJoinBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--windowSize", "0"},
		{"--rate", "0"},
		{"--events", "-1"},
		{"--execution-mode", "fast"},
	} {
		code, _, stderr := runWeir(context.Background(), append([]string{"run", "window-join", "--events", "10"}, args...)...)
		if code != 1 || !strings.Contains(stderr, args[0]) {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}
