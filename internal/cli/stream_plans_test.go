package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirdata/weir/examples/streaming"
	"github.com/weirdata/weir/internal/golden"
)

// TestStreamPlansGolden compares the stream graphs weir explain prints for
// the stream jobs with testdata/stream_plans.txt; flags holds the job's own
// flags, comma-separated.
func TestStreamPlansGolden(t *testing.T) {
	golden.RunFile(t, filepath.Join("testdata", "stream_plans.txt"), func(t *testing.T, d *golden.Case) string {
		if d.Cmd != "explain" {
			t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
		}
		args := []string{"explain", d.Args["job"], "--parallelism", d.Args["parallelism"], "--memory", "256MiB", "--format", d.Args["format"]}
		if f, ok := d.Arg("flags"); ok {
			args = append(args, strings.Split(f, ",")...)
		}
		code, stdout, stderr := runWeir(context.Background(), args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", d.Pos, code, stderr)
		}
		return stdout
	})
}

// TestStreamExplainAnalyze runs streaming-wordcount under explain
// --analyze with checkpoints: the plan is followed by what ran, each
// operator's records against the words of Flink's text counted here, and
// the JSON form holds the same counts and the checkpoint history.
func TestStreamExplainAnalyze(t *testing.T) {
	words := 0
	for _, l := range streaming.WordCountText {
		streaming.Tokenize(l, func(string) { words++ })
	}
	args := []string{"explain", "streaming-wordcount", "--parallelism", "2", "--analyze", "--checkpoint-interval", "10ms"}
	code, stdout, stderr := runWeir(context.Background(), args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := "actual:\n  task \"FromSlice\" p=2 wall="
	if !strings.Contains(stdout, want) || !strings.Contains(stdout, fmt.Sprintf("    FlatMap in=%d out=%d\n", len(streaming.WordCountText), words)) ||
		!strings.Contains(stdout, fmt.Sprintf("    Sum in=%d out=%d\n", words, words)) || !strings.Contains(stdout, "\ncheckpoints: ") {
		t.Fatalf("explain --analyze printed:\n%s", stdout)
	}
	code, stdout, stderr = runWeir(context.Background(), append(args, "--format", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var a struct {
		Plan  struct{ Mode string }
		Tasks []struct {
			Name      string
			Operators []struct {
				Name                  string
				RecordsIn, RecordsOut int64
			}
		}
		Checkpoints *struct{ Completed []struct{ ID int64 } }
	}
	if err := json.Unmarshal([]byte(stdout), &a); err != nil {
		t.Fatal(err)
	}
	if a.Plan.Mode != "STREAMING" || len(a.Tasks) != 2 || a.Tasks[1].Operators[0].RecordsIn != int64(words) || a.Checkpoints == nil {
		t.Fatalf("explain --analyze --format json: %+v", a)
	}
}

// TestStreamExplainAnalyzeMetrics: explain --analyze of window-stats prints
// the user metrics of its window function, a counter of firings per
// subtask scoped <operator>.<subtask>, in text and JSON; over the
// subtasks they count the lines weir run prints for the same input.
func TestStreamExplainAnalyzeMetrics(t *testing.T) {
	flags := []string{"window-stats", "--input", "testdata/window_stats_events.csv", "--key", "user", "--time", "ts",
		"--value", "amount", "--window", "tumbling:1s", "--parallelism", "2"}
	code, stdout, stderr := runWeir(context.Background(), append([]string{"run"}, append(flags, "--progress=false")...)...)
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	lines := strings.Count(stdout, "\n")
	if lines == 0 {
		t.Fatalf("run printed nothing")
	}
	code, stdout, stderr = runWeir(context.Background(), append(append([]string{"explain"}, flags...), "--analyze")...)
	if code != 0 {
		t.Fatalf("explain: exit %d: %s", code, stderr)
	}
	const op = "Window(Aggregate, Process)"
	sum := 0
	for i := range 2 {
		prefix := fmt.Sprintf("      %s.%d.firings counter ", op, i)
		at := strings.Index(stdout, prefix)
		if at < 0 {
			t.Fatalf("no %q in:\n%s", prefix, stdout)
		}
		var n int
		if _, err := fmt.Sscanf(stdout[at+len(prefix):], "%d", &n); err != nil {
			t.Fatal(err)
		}
		sum += n
	}
	if !strings.Contains(stdout, "    metrics:\n") || sum != lines {
		t.Fatalf("firings counted %d, want the %d lines of weir run:\n%s", sum, lines, stdout)
	}
	code, stdout, stderr = runWeir(context.Background(), append(append([]string{"explain"}, flags...), "--analyze", "--format", "json")...)
	if code != 0 {
		t.Fatalf("explain json: exit %d: %s", code, stderr)
	}
	var a struct {
		Tasks []struct {
			Name    string
			Metrics []struct {
				Scope []string
				Name  string
				Kind  string
				Count int
			}
		}
	}
	if err := json.Unmarshal([]byte(stdout), &a); err != nil {
		t.Fatal(err)
	}
	jsum := 0
	for _, task := range a.Tasks {
		for _, m := range task.Metrics {
			if task.Name != op || m.Name != "firings" || m.Kind != "counter" || len(m.Scope) != 2 || m.Scope[0] != op {
				t.Errorf("task %s: metric %+v", task.Name, m)
			}
			jsum += m.Count
		}
	}
	if jsum != lines {
		t.Fatalf("JSON firings %d, want %d", jsum, lines)
	}
}
