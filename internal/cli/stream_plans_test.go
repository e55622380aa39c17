package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

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
