package stream

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/internal/graph"
	"github.com/weirdata/weir/stream/internal/op"
	"github.com/weirdata/weir/stream/internal/task"
	"github.com/weirdata/weir/stream/sink"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/watermark"
)

// TestFileSinkRestoredInJob: a job whose FileSink opens from the snapshots
// of two subtasks (restored at parallelism 1, 2 and 3) commits their
// pending parts, removes their in-progress ones, and ends with exactly the
// records before the snapshot and the job's own, committed.
func TestFileSinkRestoredInJob(t *testing.T) {
	for _, p := range []int{1, 2, 3} {
		dir := t.TempDir()
		fs := sink.Text(dir)
		var snaps [][]byte
		var pre []string
		for i := range 2 {
			o := openSinkOp(t, fs, i, 2)
			w := words(fmt.Sprint("s", i, "-"), 4)
			pre = append(pre, w...)
			pushLines(t, o, w...)
			snaps = append(snaps, sinkSnapshot(t, o, 7))
			pushLines(t, o, "lost")
		}
		parts, err := state.RepartitionOperatorState(snaps, p)
		if err != nil {
			t.Fatal(err)
		}
		post := words("job-", 20)
		env := New(Options{Parallelism: p})
		SinkTo(FromSlice(env, post), fs)
		sinkNode := env.p.Nodes[len(env.p.Nodes)-1]
		ost := checkpoint.OperatorState{ID: graph.OperatorIDs(env.p)[sinkNode], Name: "FileSink", Parallelism: len(parts)}
		for _, b := range parts {
			ost.Subtasks = append(ost.Subtasks, checkpoint.SubtaskState{State: b, Watermark: watermark.Min})
		}
		env.opts.Restore = &checkpoint.Snapshot{ID: 7, Operators: []checkpoint.OperatorState{ost}}
		if _, err := env.Execute(context.Background()); err != nil {
			t.Fatal(err)
		}
		if c, h := dirState(t, dir); !slices.Equal(c, sortedCat(pre, post)) || len(h) != 0 {
			t.Fatalf("parallelism %d: committed %v, hidden %v", p, c, h)
		}
	}
}

// fileSinkOp is the operator of a FileSink of lines.
type fileSinkOp = op.SinkWriter[string, sink.Committable]

// openSinkOp opens the FileSink operator of subtask i of p, as a task
// opens it.
func openSinkOp(t *testing.T, fs *sink.FileSink[string], i, p int) *fileSinkOp {
	t.Helper()
	rt := task.New(nil, task.Config{}, i, p, nil)
	c := &op.SinkCommit[sink.Committable]{}
	c.Reset(1, false)
	o := op.NewSinkWriter(op.TwoPhaseSpec(fs, FileSinkWriterState, FileSinkCommittables), c)
	rt.AddOperator(o, "sink", "FileSink")
	if err := rt.Open(); err != nil {
		t.Fatal(err)
	}
	return o
}

func pushLines(t *testing.T, o *fileSinkOp, lines ...string) {
	t.Helper()
	b := make([]Record[string], len(lines))
	for i, l := range lines {
		b[i] = Record[string]{Value: l}
	}
	if err := o.Push(b); err != nil {
		t.Fatal(err)
	}
}

func sinkSnapshot(t *testing.T, o *fileSinkOp, id int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := o.Snapshot(id, &buf); err != nil {
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
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

func sortedCat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	slices.Sort(out)
	return out
}
