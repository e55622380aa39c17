package chaos

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// A disk-backend job killed mid-run leaves its spill directory (its Pebble
// store in it); the resumed run removes it and leaves the temporary
// directory empty once it ends, with the output of an uninterrupted run.
func TestKilledSpillDirRemoved(t *testing.T) {
	bin := weir(t)
	jb := windowStatsJob(t, 4000)
	want, _ := uninterrupted(t, bin, jb)
	tmp, ck, out := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "out")
	args := append(slices.Clone(jb.args), "--output", out, "--checkpoint-dir", ck, "--checkpoint-interval", "100ms",
		"--state-backend", "disk", "--tmp", tmp, "--rate", "1000")
	if runKilled(t, bin, args, 1500*time.Millisecond) {
		t.Skip("the job ended before the kill")
	}
	left, _ := filepath.Glob(filepath.Join(tmp, "weir-spill-*"))
	if len(left) != 1 {
		t.Fatalf("after the kill: spill directories %v, want the killed run's", left)
	}
	runToEnd(t, bin, args)
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("the temporary directory holds %d entries after the resumed run", len(ents))
	}
	if got := committed(t, out); !slices.Equal(got, want) {
		lost, dup := diff(want, got)
		t.Errorf("committed %d lines, want %d: %d lost, %d duplicated", len(got), len(want), lost, dup)
	}
}
