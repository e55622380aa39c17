package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weirdata/weir/nexmark"
	"github.com/weirdata/weir/nexmark/nexmarktest"
)

// genNexmark writes n events of seed at rate, delayed by up to disorder
// ms, with weir gen nexmark and returns the file and the events.
func genNexmark(t *testing.T, n, rate, disorder int64, seed uint64) (string, []nexmark.Event) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "events.jsonl")
	code, _, stderr := runWeir(context.Background(), "gen", "nexmark", "--events", strconv.FormatInt(n, 10), "--rate", strconv.FormatInt(rate, 10),
		"--seed", strconv.FormatUint(seed, 10), "--disorder", strconv.FormatInt(disorder, 10), "--out", path)
	if code != 0 {
		t.Fatalf("gen nexmark: exit %d: %s", code, stderr)
	}
	g := nexmark.NewGenerator(nexmark.Config{Seed: seed, Rate: rate})
	events := make([]nexmark.Event, n)
	for i := range n {
		g.Event(i, &events[i])
	}
	return path, events
}

// TestGenNexmark: the file holds the events, the same for the same flags,
// and stdout gets the same lines.
func TestGenNexmark(t *testing.T) {
	path, events := genNexmark(t, 3000, 1000, 500, 9)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != len(events) {
		t.Fatalf("%d lines, want %d", len(lines), len(events))
	}
	got := slices.Clone(lines)
	var want []string
	for i := range events {
		want = append(want, string(nexmark.AppendJSON(nil, &events[i])))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatal("the file's lines are not the generator's events")
	}
	code, stdout, stderr := runWeir(context.Background(), "gen", "nexmark", "--events", "3000", "--rate", "1000", "--seed", "9", "--disorder", "500")
	if code != 0 || stdout != string(b) {
		t.Fatalf("stdout differs from the file (exit %d: %s)", code, stderr)
	}
}

var nexmarkLine = regexp.MustCompile(`^nexmark (q\d+): events (\d+), wall [0-9.]+ s, cpu [0-9.]+ s, events/s \d+, events per cpu-second \d+(, skipped \d+.*)?$`)

// lastLine checks weir nexmark's last line on stderr and returns its
// count of events.
func lastLine(t *testing.T, q, stderr string) int64 {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	m := nexmarkLine.FindStringSubmatch(lines[len(lines)-1])
	if m == nil || m[1] != q {
		t.Fatalf("stderr ends with %q, want the nexmark %s line", lines[len(lines)-1], q)
	}
	n, _ := strconv.ParseInt(m[2], 10, 64)
	return n
}

// TestNexmarkAgainstOracle runs every query on a generated file out of
// order by up to 2 s, at parallelism 2, in streaming and batch mode: the
// CSV on stdout equals the oracle's rows.
func TestNexmarkAgainstOracle(t *testing.T) {
	n := int64(20000)
	path, events := genNexmark(t, n, 500, 2000, 4)
	for _, q := range nexmark.Queries {
		wantHeader, want := nexmarktest.Oracle(q, events)
		for _, mode := range []string{"streaming", "batch"} {
			code, stdout, stderr := runWeir(context.Background(), "nexmark", "--query", q, "--input", path, "--parallelism", "2",
				"--memory", "256MiB", "--execution-mode", mode, "--progress=false")
			if code != 0 {
				t.Fatalf("%s %s: exit %d: %s", q, mode, code, stderr)
			}
			if got := lastLine(t, q, stderr); got != n {
				t.Errorf("%s: %d events, want %d", q, got, n)
			}
			header, rows := nexmarktest.ReadCSV(t, stdout)
			nexmarktest.CheckRows(t, q+" "+mode, wantHeader, header, want, rows)
		}
	}
}

// TestNexmarkGenerator: the in-process generator's events are those of
// weir gen nexmark with the same flags.
func TestNexmarkGenerator(t *testing.T) {
	_, events := genNexmark(t, 8000, 300, 0, 6)
	wantHeader, want := nexmarktest.Oracle("q7", events)
	code, stdout, stderr := runWeir(context.Background(), "nexmark", "--query", "q7", "--events", "8000", "--rate", "300", "--seed", "6",
		"--parallelism", "2", "--memory", "256MiB", "--progress=false")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := lastLine(t, "q7", stderr); got != 8000 {
		t.Errorf("%d events, want 8000", got)
	}
	header, rows := nexmarktest.ReadCSV(t, stdout)
	nexmarktest.CheckRows(t, "q7 generator", wantHeader, header, want, rows)
}

// TestNexmarkOutputDir writes q5 to part files under checkpoints: the
// parts in name order are the header and the oracle's rows.
func TestNexmarkOutputDir(t *testing.T) {
	path, events := genNexmark(t, 20000, 500, 2000, 8)
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := runWeir(context.Background(), "nexmark", "--query", "q5", "--input", path, "--parallelism", "2", "--memory", "256MiB",
		"--output", out, "--checkpoint-interval", "20ms", "--progress=false")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	ents, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var csv strings.Builder
	for _, e := range ents { // ReadDir sorts by name
		if strings.HasPrefix(e.Name(), ".") {
			t.Fatalf("%s left behind", e.Name())
		}
		b, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		csv.Write(b)
	}
	if len(ents) == 0 || ents[0].Name() != "part-0-0" {
		t.Fatalf("parts %v, want part-0-0 first", ents)
	}
	wantHeader, want := nexmarktest.Oracle("q5", events)
	header, rows := nexmarktest.ReadCSV(t, csv.String())
	nexmarktest.CheckRows(t, "q5 parts", wantHeader, header, want, rows)
}

// TestNexmarkBadLine: a malformed line fails the job with status 1,
// naming the file and the line; --on-bad-record skip counts it and goes
// on.
func TestNexmarkBadLine(t *testing.T) {
	path, events := genNexmark(t, 500, 500, 0, 1)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	lines = slices.Insert(lines, 6, "{\"event_type\":2,\"bid\":{\"auction\":12,\n")
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runWeir(context.Background(), "nexmark", "--query", "q2", "--input", bad, "--parallelism", "2", "--progress=false")
	if code != 1 || !strings.Contains(stderr, bad+" line 7: nexmark: byte ") {
		t.Fatalf("exit %d: %s; want status 1 naming %s line 7", code, stderr, bad)
	}
	code, stdout, stderr := runWeir(context.Background(), "nexmark", "--query", "q0", "--input", bad, "--parallelism", "2",
		"--on-bad-record", "skip", "--progress=false")
	if code != 0 || !strings.Contains(stderr, ", skipped 1 (the first: "+bad+" line 7: ") {
		t.Fatalf("exit %d: %s; want the skipped line counted", code, stderr)
	}
	if got := lastLine(t, "q0", stderr); got != 501 {
		t.Errorf("%d events, want 501", got)
	}
	wantHeader, want := nexmarktest.Oracle("q0", events)
	header, rows := nexmarktest.ReadCSV(t, stdout)
	nexmarktest.CheckRows(t, "q0 skipping", wantHeader, header, want, rows)
}

// TestNexmarkUsage: bad flags are usage errors.
func TestNexmarkUsage(t *testing.T) {
	for _, args := range [][]string{
		{"nexmark", "--query", "q6", "--events", "10"},
		{"nexmark", "--query", "q1"},
		{"nexmark", "--query", "q1", "--events", "10", "--input", "x.jsonl"},
		{"nexmark", "--query", "q1", "--events", "10", "--on-bad-record", "ignore"},
		{"nexmark", "--query", "q1", "--events", "10", "--output", "x", "--discard"},
		{"gen", "nexmark", "--events", "10", "--rate", "0"},
	} {
		code, _, stderr := runWeir(context.Background(), args...)
		if code != 1 || !strings.Contains(stderr, "--help") {
			t.Errorf("%q: exit %d: %s; want a usage error", args, code, stderr)
		}
	}
}
