package cli

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/sink"
	"github.com/weirdata/weir/stream/state"
)

// statsCSV writes a window-stats input of n events into a temporary file.
func statsCSV(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("user,ts,amount\n")
	for i := range n {
		fmt.Fprintf(&b, "u%d,%d,%d\n", i%7, 1_000_000+int64(i)*10, i%1000)
	}
	p := filepath.Join(t.TempDir(), "events.csv")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func statsArgs(input string, more ...string) []string {
	return append([]string{"run", "window-stats", "--key", "user", "--time", "ts", "--value", "amount",
		"--window", "tumbling:5s", "--input", input}, more...)
}

// A record no restart can cure ends a checkpointing job at once, with exit
// status 1 and its cause; nothing restarts.
func TestStreamPoisonRecordEndsJob(t *testing.T) {
	in := filepath.Join(t.TempDir(), "poison.csv")
	if err := os.WriteFile(in, []byte("user,ts,amount\nu1,1000,5\nu1,-9223372036854775808,5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	code, _, stderr := runWeir(context.Background(), statsArgs(in, "--checkpoint-dir", t.TempDir())...)
	if code != 1 || !strings.Contains(stderr, "poison.csv line 3, column ts: ") ||
		!strings.Contains(stderr, "marks a record without a timestamp") || strings.Contains(stderr, "restarting") {
		t.Fatalf("code %d, stderr %q", code, stderr)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %v", d)
	}
}

// A row the CSV reader refuses ends a checkpointing job as it ends one
// without checkpoints: exit status 1 and the file, line and column, at once
// (a restart would read the same row). The
// source's read is interrupted by checkpoint mail; the reader's own error
// must not pass for such an interruption (the job would read the same bad
// row again and again, in silence). The job runs under a deadline, so that
// a hang fails the test instead of stalling it.
func TestStreamBadRowWithCheckpoints(t *testing.T) {
	for _, c := range []struct{ name, rows, want string }{
		{"not a number", "u1,1000,5\nu1,abc,5\n", "bad.csv line 3, column ts"},
		{"a column missing", "u1,1000,5\nu1,2000\n", "bad.csv line 3"},
	} {
		for _, flags := range [][]string{{"--checkpoint-dir", ""}, {"--checkpoint-interval", "50ms"}, {"--savepoint-dir", ""}} {
			t.Run(c.name+" "+flags[0], func(t *testing.T) {
				in := filepath.Join(t.TempDir(), "bad.csv")
				if err := os.WriteFile(in, []byte("user,ts,amount\n"+c.rows), 0o644); err != nil {
					t.Fatal(err)
				}
				if flags[1] == "" {
					flags = []string{flags[0], t.TempDir()}
				}
				ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
				defer cancel()
				// the default restart strategy: the bad row is final, so
				// nothing restarts
				code, _, stderr := runWeir(ctx, statsArgs(in, flags...)...)
				if ctx.Err() != nil {
					t.Fatalf("the job did not end: code %d, stderr %q", code, stderr)
				}
				if code != 1 || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "attempt 1 failed") {
					t.Fatalf("code %d, stderr %q, want %q and no restart", code, stderr, c.want)
				}
			})
		}
	}
}

// A failure that recurs is printed for each attempt with its number, cause
// and the checkpoint it restores from, as many times as the strategy
// allows restarts; then the job fails with it, exit status 1.
func TestStreamRestartStrategyFlags(t *testing.T) {
	in := statsCSV(t, 100)
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(blocker, "out") // under a file: every attempt fails to create it
	code, _, stderr := runWeir(context.Background(), statsArgs(in, "--output", out, "--checkpoint-dir", t.TempDir(),
		"--restart-strategy", "fixed-delay", "--restart-attempts", "2", "--restart-delay", "1ms")...)
	if code != 1 {
		t.Fatalf("code %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"weir: attempt 1 failed: ", "weir: attempt 2 failed: ", "restarting in 1ms from the start (no checkpoint completed)",
		"attempt 3 failed and the restart strategy allows no more restarts (fixed-delay: 2 restarts)"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q does not hold %q", stderr, want)
		}
	}
	if n := strings.Count(stderr, "not a directory"); n != 3 {
		t.Errorf("the cause printed %d times, want 3: %q", n, stderr)
	}
	for _, bad := range [][]string{{"--restart-strategy", "forever"}, {"--restart-attempts", "-1"}, {"--tolerable-failed-checkpoints", "-2"}} {
		if code, _, stderr := runWeir(context.Background(), statsArgs(in, bad...)...); code != 1 || !strings.Contains(stderr, "(see 'weir run window-stats --help')") {
			t.Errorf("%v: code %d, stderr %q", bad, code, stderr)
		}
	}
}

// A checkpoint directory in use by another job is refused, naming it.
func TestStreamCheckpointDirLocked(t *testing.T) {
	ck := t.TempDir()
	d, err := checkpoint.OpenDir(ck, checkpoint.DirOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	code, _, stderr := runWeir(context.Background(), statsArgs(statsCSV(t, 10), "--checkpoint-dir", ck)...)
	if code != 1 || !strings.Contains(stderr, "in use by another job") || !strings.Contains(stderr, fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("code %d, stderr %q", code, stderr)
	}
}

// A finished job run again says so and succeeds; another input or another
// job on its checkpoint directory is refused; a stream job without a
// checkpoint to resume refuses an output directory that is not empty.
func TestStreamFinishedAndFingerprint(t *testing.T) {
	in, ck, out := statsCSV(t, 1000), t.TempDir(), filepath.Join(t.TempDir(), "out")
	args := statsArgs(in, "--checkpoint-dir", ck, "--output", out)
	if code, _, stderr := runWeir(context.Background(), args...); code != 0 {
		t.Fatalf("first run: code %d, %q", code, stderr)
	}
	want := readPartsSorted(t, out)
	code, _, stderr := runWeir(context.Background(), args...)
	if code != 0 || !strings.Contains(stderr, "the job already finished at checkpoint") {
		t.Fatalf("second run: code %d, %q", code, stderr)
	}
	if got := readPartsSorted(t, out); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the second run changed the output")
	}
	other := statsCSV(t, 1000)
	code, _, stderr = runWeir(context.Background(), statsArgs(other, "--checkpoint-dir", ck, "--output", t.TempDir())...)
	if code != 1 || !strings.Contains(stderr, "is a checkpoint of another job") {
		t.Fatalf("another input: code %d, %q", code, stderr)
	}
	code, _, stderr = runWeir(context.Background(), "run", "streaming-wordcount", "--checkpoint-dir", ck, "--output", t.TempDir())
	if code != 1 || !strings.Contains(stderr, "is a checkpoint of another job") {
		t.Fatalf("another job: code %d, %q", code, stderr)
	}
	// what the job computes is part of the job: another window, aggregate
	// or output is another job; how it runs is not
	for _, more := range [][]string{{"--output", out, "--window", "tumbling:10s"}, {"--output", out, "--aggregate", "count"}, {"--output", t.TempDir()}} {
		a := statsArgs(in, append([]string{"--checkpoint-dir", ck}, more...)...)
		if i := slices.Index(a, "tumbling:5s"); i >= 0 && slices.Contains(more, "tumbling:10s") {
			a = slices.Delete(a, i-1, i+1)
		}
		code, _, stderr = runWeir(context.Background(), a...)
		if code != 1 || !strings.Contains(stderr, "is a checkpoint of another job") {
			t.Fatalf("%v: code %d, %q", more, code, stderr)
		}
	}
	code, _, stderr = runWeir(context.Background(), append(args, "--parallelism", "3", "--memory", "128MiB", "--restart-strategy", "none")...)
	if code != 0 || !strings.Contains(stderr, "the job already finished at checkpoint") {
		t.Fatalf("another parallelism, memory and restart strategy: code %d, %q", code, stderr)
	}
	code, _, stderr = runWeir(context.Background(), statsArgs(in, "--output", out)...)
	if code != 1 || !strings.Contains(stderr, "--output "+out+" is not empty") {
		t.Fatalf("a second run into the output: code %d, %q", code, stderr)
	}
	if got := readPartsSorted(t, out); len(got) != len(want) {
		t.Errorf("the refused run changed the output: %d lines, want %d", len(got), len(want))
	}
}

// A crafted savepoint whose file sink committable names files outside the
// output is refused on restore, naming the entry, and nothing moves;
// savepoint inspect flags the entry.
func TestStreamCraftedSavepointRefused(t *testing.T) {
	in, ck, out := statsCSV(t, 1000), t.TempDir(), filepath.Join(t.TempDir(), "out")
	if code, _, stderr := runWeir(context.Background(), statsArgs(in, "--checkpoint-dir", ck, "--output", out)...); code != 0 {
		t.Fatalf("code %d, %q", code, stderr)
	}
	snap, err := checkpoint.Load(filepath.Join(ck, "chk-1"))
	if err != nil {
		t.Fatal(err)
	}
	evil := t.TempDir()
	payload, target := filepath.Join(evil, "payload.txt"), filepath.Join(evil, "target", "authorized_keys")
	if err := os.WriteFile(payload, []byte("ssh-ed25519 AAAA attacker\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	crafted := false
	for i, op := range snap.Operators {
		if op.Name != "FileSink" {
			continue
		}
		store := state.NewOperatorStore(state.OperatorOptions{Name: op.Name})
		list, err := state.GetOperatorListState(store, state.ListDescriptor[[]byte]{Name: stream.FileSinkCommittables})
		if err != nil {
			t.Fatal(err)
		}
		c := sink.Committable{Checkpoint: 1}
		b := []byte{1} // version 1: paths
		b = appendUvarintString(appendVarint(b, c.Checkpoint), payload)
		b = appendUvarintString(b, target)
		list.Update([][]byte{b})
		var buf bytes.Buffer
		if err := store.Snapshot(&buf); err != nil {
			t.Fatal(err)
		}
		store.Dispose()
		snap.Operators[i].Subtasks = []checkpoint.SubtaskState{{State: buf.Bytes()}}
		snap.Operators[i].Parallelism = 1
		crafted = true
	}
	if !crafted {
		t.Fatal("no FileSink operator in the checkpoint")
	}
	snap.Kind = checkpoint.Savepoint
	sp, err := checkpoint.WriteSavepoint(t.TempDir(), snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runWeir(context.Background(), "savepoint", "inspect", sp)
	if code != 1 || !strings.Contains(stdout, "REFUSED FileSinkCommittables entry 0") || !strings.Contains(stderr, "a restore refuses them") {
		t.Fatalf("inspect: code %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, _, stderr = runWeir(context.Background(), statsArgs(in, "--from-savepoint", sp, "--output", filepath.Join(t.TempDir(), "o"))...)
	if code != 1 || !strings.Contains(stderr, "entry 0") || !strings.Contains(stderr, "is not a part of this sink") {
		t.Fatalf("restore: code %d, %q", code, stderr)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Errorf("the target was written: %v", err)
	}
	if b, err := os.ReadFile(payload); err != nil || len(b) == 0 {
		t.Errorf("the payload moved: %v", err)
	}
}

func appendVarint(b []byte, v int64) []byte {
	u := uint64(v) << 1
	if v < 0 {
		u = ^u
	}
	for u >= 0x80 {
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}

func appendUvarintString(b []byte, s string) []byte {
	u := uint64(len(s))
	for u >= 0x80 {
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	return append(append(b, byte(u)), s...)
}

// A damaged checkpoint that a run passes over is printed with its cause;
// a savepoint directory a killed run left in progress is removed and said.
func TestStreamSkippedCheckpointAndStaleSavepoint(t *testing.T) {
	in, ck, out, sp := statsCSV(t, 1000), t.TempDir(), filepath.Join(t.TempDir(), "out"), t.TempDir()
	args := statsArgs(in, "--checkpoint-dir", ck, "--output", out, "--savepoint-dir", sp)
	if code, _, stderr := runWeir(context.Background(), args...); code != 0 {
		t.Fatalf("code %d, %q", code, stderr)
	}
	// a newer, damaged checkpoint
	damaged := filepath.Join(ck, "chk-9")
	if err := os.CopyFS(damaged, os.DirFS(filepath.Join(ck, "chk-1"))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(damaged, checkpoint.MetadataFile), []byte("weirckpt\x02broken"), 0o644); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(sp, ".savepoint-abcdef-0123456789ab.inprogress")
	if err := os.MkdirAll(filepath.Join(stale, "shared"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runWeir(context.Background(), args...)
	if code != 0 || strings.Count(stderr, "checkpoint "+damaged+" is damaged and skipped: checkpoint: "+damaged+"/_metadata: checksum mismatch") != 1 ||
		!strings.Contains(stderr, "the job already finished at checkpoint 1") {
		t.Fatalf("code %d, stderr %q", code, stderr)
	}
	if !strings.Contains(stderr, "removed "+stale+", a savepoint a killed run did not finish") {
		t.Errorf("stderr %q does not report the stale savepoint", stderr)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale savepoint directory: %v", err)
	}
}

// A checkpoint holds the sink's part names, not paths: a job whose final
// checkpoint was stored but whose parts were not yet committed (a crash
// between the two) commits them when run again from another working
// directory, with the paths given from there.
func TestStreamResumeFromAnotherDirectory(t *testing.T) {
	root := t.TempDir()
	in := statsCSV(t, 1000)
	if err := os.MkdirAll(filepath.Join(root, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(root, "a"))
	if code, _, stderr := runWeir(context.Background(), statsArgs(in, "--checkpoint-dir", "ck", "--output", "out", "--parallelism", "2")...); code != 0 {
		t.Fatalf("code %d, %q", code, stderr)
	}
	want := readPartsSorted(t, filepath.Join(root, "a", "out"))
	parts, _ := filepath.Glob(filepath.Join(root, "a", "out", "part-*"))
	if len(parts) == 0 {
		t.Fatal("no parts")
	}
	// the committables' pending names, plain bytes in the checkpoint's files
	var ck strings.Builder
	filepath.WalkDir(filepath.Join(root, "a", "ck"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			ck.Write(b)
		}
		return nil
	})
	pendings := map[string]string{}
	for _, m := range regexp.MustCompile(`\.(part-\d+-\d+)\.pending\.[0-9a-f]{16}`).FindAllStringSubmatch(ck.String(), -1) {
		pendings[m[1]] = m[0]
	}
	for _, p := range parts { // as before the commit
		if pendings[filepath.Base(p)] == "" {
			t.Fatalf("the checkpoint names no pending file of %s", p)
		}
		if err := os.Rename(p, filepath.Join(filepath.Dir(p), pendings[filepath.Base(p)])); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(root)
	code, _, stderr := runWeir(context.Background(), statsArgs(in, "--checkpoint-dir", "a/ck", "--output", "a/out", "--parallelism", "2")...)
	if code != 0 || !strings.Contains(stderr, "already finished") {
		t.Fatalf("from another directory: code %d, %q", code, stderr)
	}
	if got := readPartsSorted(t, filepath.Join(root, "a", "out")); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("committed %d lines, want %d", len(got), len(want))
	}
}
