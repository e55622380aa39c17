package nexmark_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/weirdata/weir/nexmark"
	"github.com/weirdata/weir/nexmark/nexmarktest"
	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/source"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// generate returns events 0 to n-1 of c.
func generate(c nexmark.Config, n int64) []nexmark.Event {
	g := nexmark.NewGenerator(c)
	out := make([]nexmark.Event, n)
	for i := range n {
		g.Event(i, &out[i])
	}
	return out
}

// writeEvents writes the events of c as a JSON-lines file, delayed out of
// order by up to disorder ms, and returns its path.
func writeEvents(t testing.TB, c nexmark.Config, n, disorder int64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), fmt.Sprintf("events-%d-%d.jsonl", n, disorder))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := nexmark.WriteJSON(context.Background(), f, nexmark.WriteOptions{Config: c, Events: n, Disorder: disorder}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// runQuery runs query q with p's input at parallelism par in mode and
// returns its CSV output.
func runQuery(t testing.TB, q string, p nexmark.Params, par int, mode stream.Mode) (string, nexmark.Stats) {
	t.Helper()
	var out bytes.Buffer
	p.Query = q
	st, err := nexmark.Run(context.Background(), nexmark.Options{Stream: stream.Options{Parallelism: par, Mode: mode, Memory: 256 << 20}, Stdout: &out}, p)
	if err != nil {
		t.Fatalf("%s p=%d mode %d: %v", q, par, mode, err)
	}
	return out.String(), st
}

var modes = []struct {
	name string
	mode stream.Mode
}{{"streaming", stream.Streaming}, {"batch", stream.Batch}}

// TestQueriesAgainstOracle runs every query over generated files, in order
// and out of order by up to 2 s, at parallelism 1 and 2 in STREAMING and
// BATCH mode, and compares the rows with the oracle's by the formats
// note's rule.
func TestQueriesAgainstOracle(t *testing.T) {
	n := int64(30000)
	if testing.Short() {
		n = 12000
	}
	c := nexmark.Config{Seed: 7, Rate: 500} // 60 s of event time: several windows and sessions
	events := generate(c, n)
	files := map[string]string{"ordered": writeEvents(t, c, n, 0), "disordered": writeEvents(t, c, n, 2000)}
	for _, q := range nexmark.Queries {
		wantHeader, want := nexmarktest.Oracle(q, events)
		if len(want) == 0 {
			t.Fatalf("%s: the oracle has no rows: the case tests nothing", q)
		}
		for _, file := range []string{"ordered", "disordered"} {
			for _, par := range []int{1, 2} {
				for _, m := range modes {
					what := fmt.Sprintf("%s %s p=%d %s", q, file, par, m.name)
					t.Run(what, func(t *testing.T) {
						out, st := runQuery(t, q, nexmark.Params{Input: files[file]}, par, m.mode)
						if st.Events != n {
							t.Errorf("%d events counted, want %d", st.Events, n)
						}
						header, rows := nexmarktest.ReadCSV(t, out)
						nexmarktest.CheckRows(t, what, wantHeader, header, want, rows)
					})
				}
			}
		}
	}
}

// TestQueriesDefaultRate runs the windowed and joining queries at the
// suite's default rate, 10 events per millisecond, over 25 s of events:
// many events share a millisecond, and auctions expire within a second.
func TestQueriesDefaultRate(t *testing.T) {
	if testing.Short() {
		t.Skip("a larger input")
	}
	n := int64(250000)
	c := nexmark.Config{Seed: 3}
	events := generate(c, n)
	file := writeEvents(t, c, n, 2000)
	for _, q := range []string{"q3", "q4", "q5", "q7", "q8", "q9", "q11"} {
		wantHeader, want := nexmarktest.Oracle(q, events)
		out, _ := runQuery(t, q, nexmark.Params{Input: file}, 2, stream.Streaming)
		header, rows := nexmarktest.ReadCSV(t, out)
		nexmarktest.CheckRows(t, q, wantHeader, header, want, rows)
	}
}

// TestQueriesGenerator runs every query over the in-process generator at
// parallelism 2: its splits together make every event once.
func TestQueriesGenerator(t *testing.T) {
	n := int64(20000)
	c := nexmark.Config{Seed: 11, Rate: 400}
	events := generate(c, n)
	for _, q := range nexmark.Queries {
		for _, m := range modes {
			wantHeader, want := nexmarktest.Oracle(q, events)
			out, st := runQuery(t, q, nexmark.Params{Events: n, Generator: c}, 2, m.mode)
			if st.Events != n {
				t.Errorf("%s: %d events counted, want %d", q, st.Events, n)
			}
			header, rows := nexmarktest.ReadCSV(t, out)
			nexmarktest.CheckRows(t, q+" generator "+m.name, wantHeader, header, want, rows)
		}
	}
}

// TestQueriesEmptyInput: an empty file gives the header and no rows.
func TestQueriesEmptyInput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.jsonl")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, q := range nexmark.Queries {
		for _, m := range modes {
			out, st := runQuery(t, q, nexmark.Params{Input: path}, 2, m.mode)
			header, _ := nexmark.Header(q, false)
			if out != header+"\n" || st.Events != 0 {
				t.Errorf("%s %s: %q and %d events, want the header alone", q, m.name, out, st.Events)
			}
		}
	}
}

// applyChangelog folds a changelog's rows (op first) into the table it
// ends as.
func applyChangelog(t *testing.T, rows [][]string) [][]string {
	t.Helper()
	count := map[string]int{}
	byKey := map[string][]string{}
	for _, r := range rows {
		k := strings.Join(r[1:], "\x00")
		byKey[k] = r[1:]
		switch r[0] {
		case "+I", "+U":
			count[k]++
		case "-U", "-D":
			count[k]--
			if count[k] < 0 {
				t.Fatalf("%s retracts a row not there: %q", r[0], r)
			}
		default:
			t.Fatalf("bad op %q", r[0])
		}
	}
	var out [][]string
	keys := make([]string, 0, len(count))
	for k := range count {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for range count[k] {
			out = append(out, byKey[k])
		}
	}
	return out
}

// TestChangelog runs q3, q4 and q9 with the op column, as an unbounded
// source does: the changelog folds into the oracle's final table.
func TestChangelog(t *testing.T) {
	n := int64(20000)
	c := nexmark.Config{Seed: 5, Rate: 500}
	events := generate(c, n)
	file := writeEvents(t, c, n, 1000)
	for _, q := range []string{"q3", "q4", "q9"} {
		wantHeader, want := nexmarktest.Oracle(q, events)
		out, _ := runQuery(t, q, nexmark.Params{Input: file, Changelog: true}, 2, stream.Streaming)
		header, rows := nexmarktest.ReadCSV(t, out)
		if len(header) == 0 || header[0] != "op" {
			t.Fatalf("%s: header %q, want op first", q, header)
		}
		updates := 0
		for _, r := range rows {
			if r[0] != "+I" {
				updates++
			}
		}
		if q == "q4" && updates == 0 {
			t.Errorf("q4: no update in the changelog")
		}
		nexmarktest.CheckRows(t, q+" changelog", wantHeader, header[1:], want, applyChangelog(t, rows))
	}
}

// TestBadLine: a line that does not decode fails the job naming the file
// and the line; with SkipBad it is counted and the rest is computed.
func TestBadLine(t *testing.T) {
	c := nexmark.Config{Seed: 2, Rate: 500}
	n := int64(3000)
	path := writeEvents(t, c, n, 0)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	lines = append(lines[:1000], append([]string{`{"event_type":2,"person":null,"auction":null,"bid":{"auction":1` + "\n"}, lines[1000:]...)...)
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = nexmark.Run(context.Background(), nexmark.Options{Stream: stream.Options{Parallelism: 2}, Stdout: &bytes.Buffer{}}, nexmark.Params{Query: "q0", Input: bad})
	var pe *source.ParseError
	if !errors.As(err, &pe) || pe.Line != 1001 || !strings.Contains(err.Error(), bad+" line 1001: nexmark: ") || !stream.IsUnrecoverable(err) {
		t.Fatalf("got %v, want a parse error naming %s line 1001", err, bad)
	}
	for _, m := range modes {
		out, st := runQuery(t, "q0", nexmark.Params{Input: bad, SkipBad: true}, 2, m.mode)
		if st.Skipped != 1 || st.Events != n+1 || !strings.HasPrefix(st.FirstSkipped, bad+" line 1001: nexmark: ") {
			t.Errorf("%s: skipped %d (%q) of %d events, want 1 of %d naming line 1001", m.name, st.Skipped, st.FirstSkipped, st.Events, n+1)
		}
		wantHeader, want := nexmarktest.Oracle("q0", generate(c, n))
		header, rows := nexmarktest.ReadCSV(t, out)
		nexmarktest.CheckRows(t, "q0 skipping "+m.name, wantHeader, header, want, rows)
	}
}

// readParts returns the committed part files of dir concatenated in name
// order, failing on files left uncommitted.
func readParts(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Fatalf("%s left in %s", e.Name(), dir)
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
}

// TestStopAndResume stops queries with state (joins, windows, timers)
// with a savepoint while the throttled generator runs, and resumes them
// from it at another parallelism: the part files of both runs hold the
// oracle's rows exactly once, the header first.
func TestStopAndResume(t *testing.T) {
	n := int64(30000)
	c := nexmark.Config{Seed: 12, Rate: 500}
	events := generate(c, n)
	for _, q := range []string{"q5", "q8", "q9", "q11"} {
		t.Run(q, func(t *testing.T) {
			dir := t.TempDir()
			p := nexmark.Params{Query: q, Events: n, Generator: c, Output: filepath.Join(dir, "out")}
			first := nexmark.Options{Stream: stream.Options{Parallelism: 2, SourceRate: 30000, AutoWatermarkInterval: 10 * time.Millisecond}}
			first.Configure = func(env *stream.Env) { env.EnableCheckpointing(time.Hour) }
			saved := make(chan string, 1)
			first.Stream.Started = func(j *stream.Job) {
				go func() {
					time.Sleep(300 * time.Millisecond)
					path, err := j.StopWithSavepoint(context.Background(), filepath.Join(dir, "sp"))
					if err != nil {
						t.Error(err)
					}
					saved <- path
				}()
			}
			st, err := nexmark.Run(context.Background(), first, p)
			if err != nil {
				t.Fatal(err)
			}
			path := <-saved
			if t.Failed() {
				return
			}
			if st.Events == 0 || st.Events >= n {
				t.Fatalf("the first run read %d of %d events: it did not stop midway", st.Events, n)
			}
			snap, err := checkpoint.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			second := nexmark.Options{Stream: stream.Options{Parallelism: 3, Restore: snap}}
			if _, err := nexmark.Run(context.Background(), second, p); err != nil {
				t.Fatal(err)
			}
			wantHeader, want := nexmarktest.Oracle(q, events)
			header, rows := nexmarktest.ReadCSV(t, readParts(t, p.Output))
			nexmarktest.CheckRows(t, q+" stopped and resumed", wantHeader, header, want, rows)
		})
	}
}
