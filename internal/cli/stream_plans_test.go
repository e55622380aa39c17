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
