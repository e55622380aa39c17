package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirdata/weir/internal/golden"
	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/state"
)

// testSavepoint writes a savepoint of three operators into a temporary
// directory and returns its path: a source whose subtask holds operator
// state (its split positions) and in-flight records, a keyed operator of
// parallelism 2 over 8 key groups whose first subtask names a shared file,
// and an operator whose state is not a state snapshot.
func testSavepoint(t *testing.T) string {
	t.Helper()
	ops := state.NewOperatorStore(state.OperatorOptions{Name: "source"})
	splits, err := state.GetOperatorListState(ops, state.ListDescriptor[string]{Name: "SourceReaderState"})
	if err != nil {
		t.Fatal(err)
	}
	splits.AddAll([]string{"split-0@120", "split-1@75"})
	var src bytes.Buffer
	if err := ops.Snapshot(&src); err != nil {
		t.Fatal(err)
	}
	keyed := make([]checkpoint.SubtaskState, 2)
	for i := range keyed {
		groups, err := state.RangeForOperatorIndex(8, 2, i)
		if err != nil {
			t.Fatal(err)
		}
		b, err := state.NewBackend[string](state.Options{Name: "counts", MaxParallelism: 8, Groups: groups})
		if err != nil {
			t.Fatal(err)
		}
		count, err := state.GetValueState(b, state.ValueDescriptor[int64]{Name: "count"})
		if err != nil {
			t.Fatal(err)
		}
		seen, err := state.GetListState(b, state.ListDescriptor[string]{Name: "seen"})
		if err != nil {
			t.Fatal(err)
		}
		for k := range 12 {
			key := fmt.Sprintf("word-%d", k)
			if g := b.KeyGroup(key); g < groups.Start || g > groups.End {
				continue
			}
			b.SetCurrentKey(key)
			count.Update(int64(k))
			if k%4 == 0 {
				seen.AddAll([]string{"a", "bb"})
			}
		}
		var buf bytes.Buffer
		if err := b.Snapshot(&buf, groups); err != nil {
			t.Fatal(err)
		}
		keyed[i].State = buf.Bytes()
	}
	keyed[0].Shared = []string{"000001.sst"}
	s := &checkpoint.Snapshot{ID: 12, Kind: checkpoint.Savepoint, Timestamp: 1_700_000_123_456, Finished: true,
		Operators: []checkpoint.OperatorState{
			{ID: "source-1", Name: "Source: words", Parallelism: 1, MaxParallelism: 128, Coordinator: []byte("enumerator"),
				Subtasks: []checkpoint.SubtaskState{{State: src.Bytes(), InFlight: []byte("two records")}}},
			{ID: "counts", Name: "KeyedProcess", Parallelism: 2, MaxParallelism: 8, Subtasks: keyed},
			{ID: "raw", Name: "Raw", Parallelism: 1, MaxParallelism: 128,
				Subtasks: []checkpoint.SubtaskState{{State: []byte("raw bytes")}}},
		}}
	shared := func(name string) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader("sst file " + name)), nil
	}
	path, err := checkpoint.WriteSavepoint(t.TempDir(), s, shared)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSavepointInspect: weir savepoint inspect lists a savepoint's
// operators, subtasks, shared files and the sections of its keyed and
// operator state, as testdata/savepoint_inspect.txt and .json hold them
// (the savepoint's path replaced by $SAVEPOINT).
func TestSavepointInspect(t *testing.T) {
	path := testSavepoint(t)
	for _, tc := range []struct {
		args   []string
		golden string
	}{
		{[]string{path}, "savepoint_inspect.txt"},
		{[]string{filepath.Join(path, "_metadata"), "--format", "json"}, "savepoint_inspect.json"},
	} {
		code, stdout, stderr := runWeir(context.Background(), append([]string{"savepoint", "inspect"}, tc.args...)...)
		if code != 0 {
			t.Fatalf("inspect %v: exit %d, stderr %q", tc.args, code, stderr)
		}
		golden.Check(t, filepath.Join("testdata", tc.golden), strings.ReplaceAll(stdout, path, "$SAVEPOINT"))
	}
	// The JSON's sections add up to the state the savepoint holds.
	_, stdout, _ := runWeir(context.Background(), "savepoint", "inspect", path, "--format", "json")
	var d snapshotDesc
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		t.Fatal(err)
	}
	s, err := checkpoint.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, op := range d.Operators {
		for j, st := range op.Subtasks {
			if want := len(s.Operators[i].Subtasks[j].State); st.StateBytes != want {
				t.Errorf("%s subtask %d: state_bytes %d, want %d", op.ID, j, st.StateBytes, want)
			}
		}
	}
	entries := 0
	for _, st := range d.Operators[1].Subtasks {
		for _, sec := range st.Sections {
			if sec.State == "count" {
				entries += sec.Entries
			}
		}
	}
	if entries != 12 {
		t.Errorf("the count sections hold %d keys, want 12", entries)
	}
}

func TestSavepointInspectErrors(t *testing.T) {
	path := testSavepoint(t)
	state := filepath.Join(path, "op1-1.state")
	b, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	if err := os.WriteFile(state, b, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "nothing")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{path}, "weir: checkpoint: " + state + ": checksum mismatch\n"},
		{[]string{missing}, "weir: checkpoint: " + missing + ": no such file or directory\n"},
		{[]string{path, "--format", "yaml"}, `weir: --format "yaml": want text or json (see 'weir savepoint inspect --help')` + "\n"},
		{nil, "weir: accepts 1 arg(s), received 0 (see 'weir savepoint inspect --help')\n"},
	} {
		code, stdout, stderr := runWeir(context.Background(), append([]string{"savepoint", "inspect"}, tc.args...)...)
		if code != 1 || stdout != "" || stderr != tc.want {
			t.Errorf("inspect %v: exit %d, stdout %q, stderr %q; want exit 1 and %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
}
