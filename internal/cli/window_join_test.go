package cli

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
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

// joinLine is a line "time,name,value" of a window-join input file.
type joinLine struct {
	ts   int64
	name string
	v    int64
}

// readJoinLines parses a window-join input file for the oracle: the name
// as it is (Flink's parser does not trim it).
func readJoinLines(t *testing.T, path string) []joinLine {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []joinLine
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		f := strings.Split(l, ",")
		ts, err1 := strconv.ParseInt(f[0], 10, 64)
		v, err2 := strconv.ParseInt(f[2], 10, 64)
		if len(f) != 3 || err1 != nil || err2 != nil {
			t.Fatalf("%s: bad line %q", path, l)
		}
		out = append(out, joinLine{ts, f[1], v})
	}
	return out
}

// naiveFileJoin joins grades and salaries by a nested loop: a grade and a
// salary of one name whose times fall in one tumbling window of size (the
// window of t is floor(t / size)) give "(name,grade,salary)". Sorted.
func naiveFileJoin(grades, salaries []joinLine, size int64) []string {
	win := func(ts int64) int64 {
		w := ts / size
		if ts%size < 0 {
			w--
		}
		return w
	}
	var out []string
	for _, g := range grades {
		for _, s := range salaries {
			if g.name == s.name && win(g.ts) == win(s.ts) {
				out = append(out, fmt.Sprintf("(%s,%d,%d)", g.name, g.v, s.v))
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestWindowJoinFlinkData joins Flink's WindowJoinData.GRADES_INPUT and
// SALARIES_INPUT (testdata/window_join_*.txt; the time is the first field)
// as files, at two window sizes, parallelism 1 and 2, in STREAMING and
// BATCH: every line has the form Flink's WindowJoinITCase checks, and the
// lines are the nested-loop join's (Flink's test data has no expected
// output: its ITCase stamps ingestion time and checks the form only).
func TestWindowJoinFlinkData(t *testing.T) {
	gradesPath, salariesPath := filepath.Join("testdata", "window_join_grades.txt"), filepath.Join("testdata", "window_join_salaries.txt")
	grades, salaries := readJoinLines(t, gradesPath), readJoinLines(t, salariesPath)
	if len(grades) != 100 || len(salaries) != 100 {
		t.Fatalf("%d grades, %d salaries", len(grades), len(salaries))
	}
	form := regexp.MustCompile(`^\([a-z]+,(\d),(\d)+\)$`)
	for _, c := range []struct {
		window string
		size   int64
	}{{"5ms", 5}, {"", 2000}} {
		want := naiveFileJoin(grades, salaries, c.size)
		if len(want) < 50 {
			t.Fatalf("window %d: the oracle joined %d pairs", c.size, len(want))
		}
		for _, mode := range []string{"streaming", "batch"} {
			for _, p := range []int{1, 2} {
				args := []string{"run", "window-join", "--grades", gradesPath, "--salaries", salariesPath,
					"--parallelism", fmt.Sprint(p), "--execution-mode", mode}
				if c.window != "" {
					args = append(args, "--window", c.window)
				}
				code, stdout, stderr := runWeir(context.Background(), args...)
				if code != 0 || stderr != "" {
					t.Fatalf("window %d %s p%d: exit %d, stderr %q", c.size, mode, p, code, stderr)
				}
				got := printedLines(t, stdout, p)
				for _, l := range got {
					if !form.MatchString(l) {
						t.Fatalf("window %d: line %q has not the form %s", c.size, l, form)
					}
				}
				if !slices.Equal(got, want) {
					t.Errorf("window %d %s p%d: %d lines, want %d", c.size, mode, p, len(got), len(want))
				}
			}
		}
	}
}

// TestWindowJoinFiles joins generated files (times in order with repeats,
// negative times, names with spaces and commas quoted) against the nested
// loop, writing part files, at several window sizes.
func TestWindowJoinFiles(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	names := []string{"ann", "bo", "cy", "a b", "x,y"}
	write := func(name string, n int, maxV int64) (string, []joinLine) {
		var b strings.Builder
		var lines []joinLine
		ts := int64(-40)
		for range n {
			ts += r.Int64N(3)
			l := joinLine{ts, names[r.IntN(len(names))], 1 + r.Int64N(maxV)}
			lines = append(lines, l)
			q := l.name
			if strings.Contains(q, ",") {
				q = `"` + q + `"`
			}
			fmt.Fprintf(&b, "%d,%s,%d\n", l.ts, q, l.v)
		}
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p, lines
	}
	gp, grades := write("g.csv", 300, 5)
	sp, salaries := write("s.csv", 250, 10000)
	for _, size := range []int64{1, 7, 30} {
		want := naiveFileJoin(grades, salaries, size)
		for _, p := range []int{1, 2} {
			out := filepath.Join(t.TempDir(), "out")
			code, stdout, stderr := runWeir(context.Background(), "run", "window-join", "--grades", gp, "--salaries", sp,
				"--window", fmt.Sprint(size), "--parallelism", fmt.Sprint(p), "--output", out)
			if code != 0 || stderr != "" || stdout != "" {
				t.Fatalf("window %d p%d: exit %d, stdout %q, stderr %q", size, p, code, stdout, stderr)
			}
			if got := readPartsSorted(t, out); !slices.Equal(got, want) {
				t.Errorf("window %d p%d: %d lines, want %d", size, p, len(got), len(want))
			}
		}
	}
}

// TestWindowJoinFileErrors: the two files go together, a malformed line and
// a time without a window name the file, the line and the column.
func TestWindowJoinFileErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.txt")
	os.WriteFile(good, []byte("0,tom,1\n1,tom,2\n"), 0o644)
	for name, c := range map[string]struct{ data, want string }{
		"badv.txt":  {"0,tom,1\n1,tom,x\n", "badv.txt line 2, column value: parsing \"x\""},
		"short.txt": {"0,tom,1\n1,tom\n", "short.txt line 2: 2 fields, want 3"},
		"edge.txt":  {"0,tom,1\n9223372036854775807,tom,2\n", "edge.txt line 2, column time: the time 9223372036854775807 has no tumbling:2s window"},
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(c.data), 0o644)
		code, _, stderr := runWeir(context.Background(), "run", "window-join", "--grades", good, "--salaries", p)
		if code != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", name, code, stderr, c.want)
		}
	}
	for _, args := range [][]string{
		{"--grades", good},
		{"--salaries", good},
		{"--grades", good, "--salaries", good, "--events", "5"},
		{"--window", "0s"},
		{"--window", "2s", "--windowSize", "100"},
	} {
		code, _, stderr := runWeir(context.Background(), append([]string{"run", "window-join"}, args...)...)
		if code != 1 || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}
