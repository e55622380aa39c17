package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/examples/streaming"
)

// TestStreamExamplesPrintWithDefaults runs every streaming example that
// needs no input (socket-window-wordcount needs a server, window-stats a
// file) with its default flags only, as the README shows them, and checks
// what it prints against the example's oracle: Flink's expected output where
// Flink has one, a naive run of the same rules otherwise. Each prints.
func TestStreamExamplesPrintWithDefaults(t *testing.T) {
	p := runtime.GOMAXPROCS(0) // the default --parallelism
	alerts, err := streaming.GenerateEvents(1, 0.05, 10000)
	if err != nil {
		t.Fatal(err)
	}
	topSpeeds := strings.Split(flinkTopSpeeds, "\n")
	slices.Sort(topSpeeds)
	sessions := []string{"(a,1,1)", "(a,10,1)", "(b,1,3)", "(c,11,1)", "(c,6,1)"}
	for _, c := range []struct {
		job   string
		check func(t *testing.T, lines []string) // nil: the lines equal want
		want  []string
	}{
		{"streaming-wordcount", nil, runningTuples(flinkCounts(t))},
		{"state-machine", nil, naiveAlerts(alerts)},
		{"iterate", nil, slices.Sorted(slices.Values(flinkIterateResults))},
		{"session-windowing", nil, sessions},
		{"top-speed-windowing", nil, topSpeeds},
		{"window-wordcount", nil, naiveWindowWordCount(streaming.WordCountText, 10, 5)},
		{"side-output", func(t *testing.T, lines []string) { checkSideOutput(t, "side-output", lines) }, nil},
	} {
		t.Run(c.job, func(t *testing.T) {
			code, stdout, stderr := runWeir(context.Background(), "run", c.job)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			got := printedLines(t, stdout, p)
			if len(got) == 0 {
				t.Fatal("it printed nothing")
			}
			if c.check != nil {
				c.check(t, got)
			} else if !slices.Equal(got, c.want) {
				t.Errorf("%d lines, want %d; first %q, want %q", len(got), len(c.want), got[:min(3, len(got))], c.want[:min(3, len(c.want))])
			}
		})
	}
}

// TestWindowJoinPrintsWithDefaults runs window-join with its default flags,
// unbounded generators releasing 3 elements a second each, for 6 seconds:
// it prints the joins of the first windows of 2 s, each a line of the
// nested-loop join of the first elements, before it is interrupted.
func TestWindowJoinPrintsWithDefaults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for 6 seconds")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Second)
	defer cancel()
	code, stdout, stderr := runWeir(ctx, "run", "window-join")
	if code != ExitInterrupted || stderr != "weir: interrupted\n" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	got := printedLines(t, stdout, runtime.GOMAXPROCS(0))
	if len(got) == 0 {
		t.Fatal("it printed nothing in 6 seconds")
	}
	left := map[string]int{}
	for _, l := range naiveWindowJoin(1, 60, 3, 2000) {
		left[l]++
	}
	for _, l := range got {
		if left[l] == 0 {
			t.Fatalf("%q is no join of the generated elements (or came too often)", l)
		}
		left[l]--
	}
}

// TestREADMEStreamSamples runs every stream job command of README.md that
// needs no file, server or Ctrl-C (at --parallelism 1 unless it sets one)
// and checks that each sample line its comment shows, "(...)", "ALERT ..."
// or "rejected: ...", is a line the command prints.
func TestREADMEStreamSamples(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	sample := regexp.MustCompile(`\((?:[^()]|\([^()]*\))*\)|ALERT [0-9.]+ : \w+ -> \w|rejected: \w+`)
	checked := 0
	for _, line := range strings.Split(string(b), "\n") {
		cmd, comment, ok := strings.Cut(line, "#")
		if !strings.HasPrefix(line, "go run ./cmd/weir run ") || !ok {
			continue
		}
		args := strings.Fields(strings.TrimPrefix(cmd, "go run ./cmd/weir "))
		if skip := slices.ContainsFunc(args, func(a string) bool {
			return slices.Contains([]string{"--input", "--output", "--grades", "--monitor", "socket-window-wordcount", "window-stats"}, a)
		}); skip || (args[1] == "window-join" && !slices.Contains(args, "--events")) {
			continue
		}
		if !slices.Contains(args, "--parallelism") {
			args = append(args, "--parallelism", "1")
		}
		samples := sample.FindAllString(comment, -1)
		if len(samples) == 0 {
			continue
		}
		code, stdout, stderr := runWeir(context.Background(), args...)
		if code != 0 || stderr != "" {
			t.Fatalf("%v: exit %d, stderr %q", args, code, stderr)
		}
		printed := strings.Split(stdout, "\n")
		for _, s := range samples {
			if !slices.Contains(printed, s) {
				t.Errorf("README: %v never prints %q", args, s)
			}
		}
		checked++
	}
	if checked < 6 {
		t.Fatalf("checked %d README commands", checked)
	}
}
