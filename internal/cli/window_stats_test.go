package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

type statEvent struct {
	key   string
	ts    int64
	value int64
	line  string
}

// oracleWindow is one window of one key in naiveWindowStats.
type oracleWindow struct {
	start, end int64
	values     []int64
	pending    bool // its event-time timer at end - 1 is set
}

// naiveWindowStats runs events through Flink's event-time window rules,
// written out directly: the watermark starts at MinInt64 and, after every
// event (STREAMING), becomes max(watermark, largest timestamp - ooo - 1).
// An event's windows (tumbling or sliding: every [s, s+size) holding it;
// session: [ts, ts+gap) merged with the key's sessions it overlaps or
// touches) are dropped when late (end - 1 + lateness <= watermark); the
// others take the event and fire at once when end - 1 <= watermark (a late
// firing), else set their timer. An event no window took goes to the late
// output. When the watermark advances, windows with a timer at or below it
// fire and windows with end - 1 + lateness at or below it are removed. The
// input ends with the watermark MaxInt64. In BATCH mode the watermark stays
// at MinInt64 until the end, as in Flink: no event is late and every window
// fires once. Returns the firings "key,start,end,value" and the late lines,
// both sorted.
func naiveWindowStats(events []statEvent, kind string, size, slide, ooo, lateness int64, agg string, batch bool) (fired, late []string) {
	wm := int64(math.MinInt64)
	maxTs := int64(math.MinInt64)
	windows := map[string][]*oracleWindow{}
	fire := func(k string, w *oracleWindow) {
		var n, sum int64
		mn, mx := int64(math.MaxInt64), int64(math.MinInt64)
		for _, v := range w.values {
			n++
			sum += v
			mn, mx = min(mn, v), max(mx, v)
		}
		var val string
		switch agg {
		case "count":
			val = strconv.FormatInt(n, 10)
		case "min":
			val = strconv.FormatInt(mn, 10)
		case "max":
			val = strconv.FormatInt(mx, 10)
		case "avg":
			val = strconv.FormatFloat(float64(sum)/float64(n), 'f', -1, 64)
		default:
			val = strconv.FormatInt(sum, 10)
		}
		fired = append(fired, fmt.Sprintf("%s,%d,%d,%s", k, w.start, w.end, val))
	}
	advance := func(to int64) {
		if to <= wm {
			return
		}
		wm = to
		for k, ws := range windows {
			kept := ws[:0]
			for _, w := range ws {
				if w.pending && w.end-1 <= wm {
					w.pending = false
					fire(k, w)
				}
				if w.end-1+lateness > wm || w.end-1 == math.MaxInt64 {
					kept = append(kept, w)
				}
			}
			windows[k] = kept
		}
	}
	// add puts v into window w of key k (w already in windows[k]).
	add := func(k string, w *oracleWindow, v int64) {
		w.values = append(w.values, v)
		if w.end-1 <= wm {
			fire(k, w)
		} else {
			w.pending = true
		}
	}
	for _, e := range events {
		taken := false
		switch kind {
		case "session":
			nw := &oracleWindow{start: e.ts, end: e.ts + size}
			var rest []*oracleWindow
			merged := false
			for _, w := range windows[e.key] {
				if w.start <= nw.end && w.end >= nw.start {
					nw.start, nw.end = min(nw.start, w.start), max(nw.end, w.end)
					nw.values = append(nw.values, w.values...)
					merged = true
				} else {
					rest = append(rest, w)
				}
			}
			if merged || nw.end-1+lateness > wm {
				// A merge drops the merged windows' timers; the new window
				// sets its own when its end is ahead of the watermark.
				windows[e.key] = append(rest, nw)
				add(e.key, nw, e.value)
				taken = true
			}
		default:
			sl := size
			if kind == "sliding" {
				sl = slide
			}
			last := e.ts - ((e.ts%sl)+sl)%sl
			for s := last; s > e.ts-size; s -= sl {
				if s+size-1+lateness <= wm {
					continue
				}
				var w *oracleWindow
				for _, x := range windows[e.key] {
					if x.start == s {
						w = x
					}
				}
				if w == nil {
					w = &oracleWindow{start: s, end: s + size}
					windows[e.key] = append(windows[e.key], w)
				}
				add(e.key, w, e.value)
				taken = true
			}
		}
		if !taken {
			late = append(late, e.line)
		}
		maxTs = max(maxTs, e.ts)
		if !batch {
			advance(maxTs - ooo - 1)
		}
	}
	advance(math.MaxInt64)
	slices.Sort(fired)
	slices.Sort(late)
	return fired, late
}

// genStatEvents makes n events over a few keys in roughly ascending time,
// with some out of order by up to spread and a few far behind (late).
func genStatEvents(seed uint64, n int, spread int64) ([]statEvent, string) {
	r := rand.New(rand.NewPCG(seed, 7))
	var b strings.Builder
	b.WriteString("id,user,amount,ts\n")
	var events []statEvent
	t := int64(1_700_000_000_000)
	for i := range n {
		t += r.Int64N(120)
		ts := t
		switch x := r.IntN(20); {
		case x < 5:
			ts -= r.Int64N(spread)
		case x == 0:
			ts -= spread + r.Int64N(5*spread)
		}
		e := statEvent{key: "u" + strconv.Itoa(r.IntN(4)), ts: ts, value: r.Int64N(100) - 20}
		e.line = fmt.Sprintf("%d,%s,%d,%d", i, e.key, e.value, e.ts)
		events = append(events, e)
		b.WriteString(e.line + "\n")
	}
	return events, b.String()
}

func readLinesSorted(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	if s := strings.TrimRight(string(b), "\n"); s != "" {
		lines = strings.Split(s, "\n")
	}
	sort.Strings(lines)
	return lines
}

// readPartsSorted returns the lines of the committed part files of the
// output directory dir (the files whose names do not start with a dot),
// sorted; a directory not created has none. A hidden file left is an error.
func readPartsSorted(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("%s: %s left in the output", dir, e.Name())
			continue
		}
		lines = append(lines, readLinesSorted(t, filepath.Join(dir, e.Name()))...)
	}
	sort.Strings(lines)
	return lines
}

// hasRefiring reports whether a window of lines fired more than once.
func hasRefiring(lines []string) bool {
	seen := map[string]bool{}
	for _, l := range lines {
		w := l[:strings.LastIndexByte(l, ',')]
		if seen[w] {
			return true
		}
		seen[w] = true
	}
	return false
}

// TestWindowStatsOracle compares window-stats with naiveWindowStats over
// generated event files with out-of-order and late events: tumbling,
// sliding and session windows, with and without allowed lateness, every
// aggregate, at parallelism 1 and 2, in STREAMING and BATCH.
func TestWindowStatsOracle(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		window        string
		kind          string
		size, slide   int64
		ooo, lateness int64
		agg           string
	}{
		{"tumbling:1s", "tumbling", 1000, 0, 200, 0, "sum"},
		{"tumbling:500ms", "tumbling", 500, 0, 100, 800, "count"},
		{"sliding:1000,300", "sliding", 1000, 300, 150, 400, "max"},
		{"sliding:2s,1s", "sliding", 2000, 1000, 0, 0, "avg"},
		{"session:300ms", "session", 300, 0, 100, 0, "min"},
		{"session:250", "session", 250, 0, 50, 600, "sum"},
	}
	sawLate, sawLateFiring := false, false
	for i, c := range cases {
		events, data := genStatEvents(uint64(i+1), 1500, 400)
		in := filepath.Join(dir, fmt.Sprintf("events%d.csv", i))
		if err := os.WriteFile(in, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		for m, mode := range []string{"streaming", "batch"} {
			ps := []int{1, 2}
			if testing.Short() {
				ps = ps[(i+m)%2:][:1] // each case and mode at one parallelism, alternating
			}
			want, wantLate := naiveWindowStats(events, c.kind, c.size, c.slide, c.ooo, c.lateness, c.agg, mode == "batch")
			if mode == "streaming" {
				sawLate = sawLate || len(wantLate) > 0
				sawLateFiring = sawLateFiring || hasRefiring(want)
			} else if len(wantLate) != 0 {
				t.Fatalf("%s batch: the oracle has late events", c.window)
			}
			for _, p := range ps {
				out, lateOut := filepath.Join(dir, fmt.Sprintf("out%d-%s-%d", i, mode, p)), filepath.Join(dir, fmt.Sprintf("late%d-%s-%d", i, mode, p))
				code, stdout, stderr := runWeir(context.Background(), "run", "window-stats", "--input", in,
					"--key", "user", "--time", "ts", "--value", "amount", "--window", c.window,
					"--out-of-orderness", fmt.Sprint(c.ooo), "--allowed-lateness", fmt.Sprint(c.lateness),
					"--aggregate", c.agg, "--execution-mode", mode, "--parallelism", fmt.Sprint(p),
					"--output", out, "--late-output", lateOut)
				if code != 0 || stderr != "" || stdout != "" {
					t.Fatalf("%s %s p%d: exit %d, stdout %q, stderr %q", c.window, mode, p, code, stdout, stderr)
				}
				if got := readPartsSorted(t, out); !slices.Equal(got, want) {
					t.Errorf("%s %s p%d: %d firings, want %d", c.window, mode, p, len(got), len(want))
					for j := 0; j < min(len(got), len(want)); j++ {
						if got[j] != want[j] {
							t.Errorf("first difference: %q, want %q", got[j], want[j])
							break
						}
					}
				}
				if got := readPartsSorted(t, lateOut); !slices.Equal(got, wantLate) {
					t.Errorf("%s %s p%d: %d late events, want %d", c.window, mode, p, len(got), len(wantLate))
				}
			}
		}
	}
	if !sawLate || !sawLateFiring {
		t.Errorf("the generated inputs have late events %v, late firings %v", sawLate, sawLateFiring)
	}
}

// TestWindowStatsStdout prints to stdout without "N> " prefixes, at
// parallelism 2, the firings of a hand-checked input.
func TestWindowStatsStdout(t *testing.T) {
	in := filepath.Join(t.TempDir(), "ev.csv")
	data := "user,ts,amount\na,1000,1\nb,1500,2\na,2500,3\na,900,4\na,4000,5\na,1200,6\na,1999,7\n"
	if err := os.WriteFile(in, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runWeir(context.Background(), "run", "window-stats", "--input", in, "--key", "user",
		"--time", "ts", "--value", "amount", "--window", "tumbling:1s", "--allowed-lateness", "2500", "--parallelism", "2")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	got := strings.Split(strings.TrimRight(stdout, "\n"), "\n")
	sort.Strings(got)
	// a@900 is late for [0,1000) (999 + 2500 > 2499: kept, a late firing);
	// a@1200 and a@1999 fire [1000,2000) again (1999 + 2500 > 3999).
	want := []string{"a,0,1000,4", "a,1000,2000,1", "a,1000,2000,14", "a,1000,2000,7", "a,2000,3000,3", "a,4000,5000,5", "b,1000,2000,2"}
	if !slices.Equal(got, want) {
		t.Errorf("%q, want %q", got, want)
	}
}

// TestWindowStatsBadInput names the file, the line and the column, each
// package's prefix once.
func TestWindowStatsBadInput(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct{ data, want string }{
		"nocol.csv":  {"user,amount\na,1\n", `nocol.csv has no column for field(s) Time (column "ts")`},
		"empty.csv":  {"", `empty.csv: no header line`},
		"badts.csv":  {"user,ts,amount\na,1,1\nb,12x,1\n", `badts.csv line 3, column ts: parsing "12x": invalid syntax`},
		"badval.csv": {"user,ts,amount\na,1,1\n\nb,2,one\n", `badval.csv line 4, column amount: parsing "one": invalid syntax`},
		"short.csv":  {"user,ts,amount\na,1\n", `short.csv line 2: 2 fields, want 3`},
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(c.data), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "out")
		code, _, stderr := runWeir(context.Background(), "run", "window-stats", "--input", path, "--key", "user",
			"--time", "ts", "--value", "amount", "--window", "tumbling:1s", "--output", out)
		if code != 1 || !strings.Contains(stderr, "weir: examples/streaming: window stats: ") || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", name, code, stderr, c.want)
		}
		if strings.Contains(stderr, "formats/csv: formats: ") || strings.Contains(stderr, "stream/source: formats/csv: ") {
			t.Errorf("%s: stacked prefixes in %q", name, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: the output was written", name)
		}
	}
	fifo := filepath.Join(dir, "fifo.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err == nil {
		code, _, stderr := runWeir(context.Background(), "run", "window-stats", "--input", fifo, "--key", "user",
			"--time", "ts", "--value", "amount", "--window", "tumbling:1s")
		if code != 1 || !strings.Contains(stderr, fifo+" is a named pipe") {
			t.Errorf("named pipe: exit %d, stderr %q", code, stderr)
		}
	}
	for _, args := range [][]string{
		{"--window", "hopping:1s"}, {"--window", "tumbling:1s", "--aggregate", "median"},
		{"--window", "tumbling:1s", "--out-of-orderness", "-5"}, {"--window", "sliding:1s"},
	} {
		code, _, stderr := runWeir(context.Background(), append([]string{"run", "window-stats", "--input", "x.csv",
			"--key", "k", "--time", "t", "--value", "v"}, args...)...)
		if code != 1 || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// runStats runs window-stats over data with the columns user, ts and amount
// and the extra flags, and returns the exit code, the printed lines sorted
// and stderr.
func runStats(t *testing.T, data string, flags ...string) (int, []string, string) {
	t.Helper()
	in := filepath.Join(t.TempDir(), "ev.csv")
	if err := os.WriteFile(in, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"run", "window-stats", "--input", in, "--key", "user", "--time", "ts", "--value", "amount",
		"--window", "tumbling:5s", "--parallelism", "2"}, flags...)
	code, stdout, stderr := runWeir(context.Background(), args...)
	var lines []string
	if s := strings.TrimRight(stdout, "\n"); s != "" {
		lines = strings.Split(s, "\n")
	}
	sort.Strings(lines)
	return code, lines, stderr
}

// TestWindowStatsCSV reads the input as RFC 4180 CSV: a byte-order mark
// before the header, quoted keys holding the delimiter and quotes, a quoted
// newline, quoted numbers, CRLF line ends; the results quote a key as the
// input did, and a late record goes to the late output as it is in the
// input.
func TestWindowStatsCSV(t *testing.T) {
	data := "\ufeffid,user,ts,amount\r\n" +
		"1,\"a,b\",1000,5\r\n" +
		"2,\"say \"\"hi\"\"\",1500,\"2.5\"\r\n" +
		"4,\"a,b\",2000,1\r\n" +
		"\"3\nx\",two,7000,1\r\n" +
		"5,\"late,\"\"q\"\"\nx\",100,9\r\n"
	late := filepath.Join(t.TempDir(), "late")
	code, got, stderr := runStats(t, data, "--late-output", late)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	// keys written back as CSV fields: quoted when they hold a comma or a
	// quote
	want := []string{`"a,b",0,5000,6`, `"say ""hi""",0,5000,2.5`, "two,5000,10000,1"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got := readPartsSorted(t, late); !slices.Equal(got, []string{"5,\"late,\"\"q\"\"", "x\",100,9"}) {
		t.Fatalf("late output %q", got)
	}
}

// TestWindowStatsRefusesBadNumbers names the file, the line and the column
// of NaN, infinities, hexadecimal floats and digit separators, and the limit
// of a record too long.
func TestWindowStatsRefusesBadNumbers(t *testing.T) {
	for _, v := range []string{"NaN", "Inf", "-Inf", "infinity", "0x1p3", "1_000"} {
		code, _, stderr := runStats(t, "user,ts,amount\nu1,1000,1\nu1,2000,"+v+"\n")
		if code != 1 || !strings.Contains(stderr, "ev.csv line 3, column amount: parsing \""+v+"\"") {
			t.Errorf("%s: exit %d, stderr %q", v, code, stderr)
		}
	}
	code, _, stderr := runStats(t, "user,ts,amount\nu1,1000,1\nu1,2000,\"0x1p3\"\nu2,1,"+strings.Repeat("7", 17<<20)+"\n")
	if code != 1 || !strings.Contains(stderr, "ev.csv line 3, column amount") {
		t.Errorf("quoted hex: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runStats(t, "user,ts,amount\nu1,1000,1\nu2,1,"+strings.Repeat("7", 17<<20)+"\n")
	if code != 1 || !strings.Contains(stderr, "ev.csv line 3: a record longer than the limit of 16777216 bytes") {
		t.Errorf("long line: exit %d, stderr %.300q", code, stderr)
	}
}

// TestWindowStatsTimeEdges refuses a time whose window would reach past the
// int64 range, and math.MinInt64 (no timestamp), as an error naming the
// file, the line and the column, in tumbling, sliding and session windows;
// the times at the edges of the range are windowed with an end after their
// start.
func TestWindowStatsTimeEdges(t *testing.T) {
	const maxTs, minTs = math.MaxInt64, math.MinInt64
	for _, c := range []struct {
		window  string
		lo, hi  int64  // the outermost times with windows
		loLine  string // the firing of lo (sum 5)
		hiLine  string // the firing of hi (sum 7)
		session bool
	}{
		{"tumbling:5s", -9223372036854775000, 9223372036854774999,
			"u1,-9223372036854775000,-9223372036854770000,5", "u2,9223372036854770000,9223372036854775000,7", false},
		{"sliding:5s,5s", -9223372036854775000, 9223372036854774999,
			"u1,-9223372036854775000,-9223372036854770000,5", "u2,9223372036854770000,9223372036854775000,7", false},
		{"session:5s", minTs + 1, maxTs - 5000, "u1,-9223372036854775807,-9223372036854770807,5", "u2,9223372036854770807,9223372036854775807,7", true},
	} {
		good := fmt.Sprintf("user,ts,amount\nu1,%d,5\nu2,%d,7\n", c.lo, c.hi)
		code, got, stderr := runStats(t, good, "--window", c.window)
		if code != 0 || !slices.Equal(got, []string{c.loLine, c.hiLine}) {
			t.Errorf("%s: exit %d, %q, stderr %q", c.window, code, got, stderr)
		}
		bad := []int64{minTs, maxTs}
		if !c.session {
			bad = append(bad, c.lo-1)
		}
		bad = append(bad, c.hi+1)
		for _, ts := range bad {
			data := fmt.Sprintf("user,ts,amount\nu1,1000,1\n\nu1,%d,5\nu1,2000,1\n", ts)
			code, got, stderr := runStats(t, data, "--window", c.window)
			want := fmt.Sprintf("ev.csv line 4, column ts: the time %d ", ts)
			if code != 1 || !strings.Contains(stderr, want) || len(got) != 0 {
				t.Errorf("%s, %d: exit %d, %q, stderr %q; want %q", c.window, ts, code, got, stderr, want)
			}
		}
	}
}
