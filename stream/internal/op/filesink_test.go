package op

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/clock"
	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/protocol"
	"github.com/weirdata/weir/stream/internal/task"
	"github.com/weirdata/weir/stream/sink"
	"github.com/weirdata/weir/stream/state"
)

// fileSinkOp is the operator of a FileSink of lines.
type fileSinkOp = SinkWriter[string, sink.Committable]

// openSinkOp opens the FileSink operator of subtask i of p, restored from
// snap when it is not nil, as a task opens it.
func openSinkOp(t *testing.T, fs *sink.FileSink[string], i, p int, snap []byte) *fileSinkOp {
	t.Helper()
	cfg := task.Config{Clock: clock.NewManual(time.UnixMilli(0))}
	if snap != nil {
		cfg.Restore = &protocol.TaskRestore{Operators: []protocol.OperatorRestore{{ID: "sink", States: [][]byte{snap}}}}
	}
	rt := task.New(nil, cfg, i, p, nil)
	c := &SinkCommit[sink.Committable]{}
	c.Reset(1, false)
	op := NewSinkWriter(TwoPhaseSpec(fs, "FileSinkWriterState", "FileSinkCommittables"), c)
	rt.AddOperator(op, "sink", "FileSink")
	if err := rt.Open(); err != nil {
		t.Fatal(err)
	}
	return op
}

func pushLines(t *testing.T, op *fileSinkOp, lines ...string) {
	t.Helper()
	b := make([]core.Record[string], len(lines))
	for i, l := range lines {
		b[i] = core.Record[string]{Value: l}
	}
	if err := op.Push(b); err != nil {
		t.Fatal(err)
	}
}

func sinkSnapshot(t *testing.T, op *fileSinkOp, id int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := op.Snapshot(id, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// dirState returns the lines of the committed parts, sorted, and the names
// of the hidden files.
func dirState(t *testing.T, dir string) (committed, hidden []string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			hidden = append(hidden, e.Name())
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		committed = append(committed, strings.Fields(string(b))...)
	}
	slices.Sort(committed)
	return committed, hidden
}

func words(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprint(prefix, i)
	}
	return out
}

func sortedCat(parts ...[]string) []string {
	out := slices.Concat(parts...)
	slices.Sort(out)
	return out
}

// TestFileSinkRestoreCommitsPending: a subtask snapshotted at checkpoint 1
// fails before the checkpoint's completion reaches it, after writing more;
// restored from the snapshot it commits checkpoint 1's pending part at open
// and removes the in-progress part of the failed run, so the directory
// holds exactly the records before the checkpoint and those written after
// the restore, as Flink's FileSink with its committer.
func TestFileSinkRestoreCommitsPending(t *testing.T) {
	dir := t.TempDir()
	fs := sink.Text(dir)
	op := openSinkOp(t, fs, 0, 1, nil)
	pre := words("a", 5)
	pushLines(t, op, pre...)
	snap := sinkSnapshot(t, op, 1)
	pushLines(t, op, words("lost", 3)...) // after the checkpoint: replayed by the source
	if c, h := dirState(t, dir); len(c) != 0 || len(h) != 2 {
		t.Fatalf("before the failure: committed %v, hidden %v", c, h)
	}
	op.w = nil // the failed run ends without cleaning up

	op2 := openSinkOp(t, fs, 0, 1, snap)
	if c, h := dirState(t, dir); !slices.Equal(c, sortedCat(pre)) || len(h) != 0 {
		t.Fatalf("after the restore: committed %v, hidden %v", c, h)
	}
	post := words("b", 4)
	pushLines(t, op2, post[:2]...)
	sinkSnapshot(t, op2, 2)
	pushLines(t, op2, post[2:]...)
	if err := op2.NotifyCheckpointComplete(2); err != nil {
		t.Fatal(err)
	}
	if c, _ := dirState(t, dir); !slices.Equal(c, sortedCat(pre, post[:2])) {
		t.Fatalf("after checkpoint 2: committed %v", c)
	}
	if err := op2.EndInput(); err != nil {
		t.Fatal(err)
	}
	if err := op2.Close(); err != nil {
		t.Fatal(err)
	}
	if c, h := dirState(t, dir); !slices.Equal(c, sortedCat(pre, post)) || len(h) != 0 {
		t.Fatalf("at the end: committed %v, hidden %v", c, h)
	}
}

// TestFileSinkRestoreOlderCheckpoint: checkpoint 2 was snapshotted but never
// completed; a restore from checkpoint 1 removes checkpoint 2's pending part
// and the in-progress one, and commits nothing twice.
func TestFileSinkRestoreOlderCheckpoint(t *testing.T) {
	dir := t.TempDir()
	fs := sink.Text(dir)
	op := openSinkOp(t, fs, 0, 1, nil)
	pre := words("a", 3)
	pushLines(t, op, pre...)
	snap1 := sinkSnapshot(t, op, 1)
	if err := op.NotifyCheckpointComplete(1); err != nil {
		t.Fatal(err)
	}
	pushLines(t, op, words("x", 3)...)
	sinkSnapshot(t, op, 2)
	pushLines(t, op, words("y", 3)...)
	op.w = nil

	op2 := openSinkOp(t, fs, 0, 1, snap1)
	if c, h := dirState(t, dir); !slices.Equal(c, sortedCat(pre)) || len(h) != 0 {
		t.Fatalf("after the restore: committed %v, hidden %v", c, h)
	}
	post := words("b", 2)
	pushLines(t, op2, post...)
	if err := op2.EndInput(); err != nil {
		t.Fatal(err)
	}
	if c, h := dirState(t, dir); !slices.Equal(c, sortedCat(pre, post)) || len(h) != 0 {
		t.Fatalf("at the end: committed %v, hidden %v", c, h)
	}
}

// TestFileSinkRestoreRescaled: two subtasks snapshotted at checkpoint 1,
// restored at parallelism 1 and 3 (FileSinkWriterState as union state,
// FileSinkCommittables split): the pending parts of both are committed, the
// in-progress parts of both removed, and the new parts reuse no name.
func TestFileSinkRestoreRescaled(t *testing.T) {
	for _, p := range []int{1, 3} {
		dir := t.TempDir()
		fs := sink.Text(dir)
		var snaps [][]byte
		var pre []string
		for i := range 2 {
			op := openSinkOp(t, fs, i, 2, nil)
			w := words(fmt.Sprint("s", i, "-"), 3+i)
			pre = append(pre, w...)
			pushLines(t, op, w...)
			snaps = append(snaps, sinkSnapshot(t, op, 1))
			pushLines(t, op, "lost")
			op.w = nil
		}
		parts, err := state.RepartitionOperatorState(snaps, p)
		if err != nil {
			t.Fatal(err)
		}
		var ops []*fileSinkOp
		for i := range p {
			ops = append(ops, openSinkOp(t, fs, i, p, parts[i]))
		}
		if c, h := dirState(t, dir); !slices.Equal(c, sortedCat(pre)) || len(h) != 0 {
			t.Fatalf("parallelism %d after the restore: committed %v, hidden %v", p, c, h)
		}
		var post []string
		before, _ := os.ReadDir(dir)
		for i, op := range ops {
			w := words(fmt.Sprint("n", i, "-"), 2)
			post = append(post, w...)
			pushLines(t, op, w...)
			if err := op.EndInput(); err != nil {
				t.Fatal(err)
			}
		}
		after, _ := os.ReadDir(dir)
		if len(after) != len(before)+p {
			t.Fatalf("parallelism %d: %d files before, %d after writing %d new parts: a name was reused", p, len(before), len(after), p)
		}
		if c, h := dirState(t, dir); !slices.Equal(c, sortedCat(pre, post)) || len(h) != 0 {
			t.Fatalf("parallelism %d at the end: committed %v, hidden %v", p, c, h)
		}
	}
}
