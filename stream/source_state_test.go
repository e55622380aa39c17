package stream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/internal/coordinator"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/watermark"
)

// readN reads batches from r until it has at least n records (n < 0: until
// the end), so that a snapshot falls between batches as in a task loop.
func readN[T any](t *testing.T, r source.Reader[T], n int) []T {
	t.Helper()
	var out []T
	for n < 0 || len(out) < n {
		b, err := r.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b.Records...)
	}
	return out
}

// checkSourceResume runs src at parallelism 2, each reader reading some of
// its records, snapshots every reader's operator state (SourceReaderState)
// and the enumerator, then restores at parallelism 1, 2 and 3
// (repartitioning the operator state by Flink's rules) and reads to the end,
// once with readers alone and once as the source of a job opened from the
// snapshots: the records before the snapshot and after the restore are
// exactly all records, each once.
func checkSourceResume[T comparable](t *testing.T, src source.Source[T], all []T, stop [2]int) {
	t.Helper()
	enum, err := src.Enumerator(2, nil)
	if err != nil {
		t.Fatal(err)
	}
	var before []T
	var snaps [][]byte
	for i := range 2 {
		r, err := src.Reader(source.ReaderContext{Subtask: i, Parallelism: 2, Splits: enum})
		if err != nil {
			t.Fatal(err)
		}
		before = append(before, readN(t, r, stop[i])...)
		snaps = append(snaps, readerState(t, r.Positions()))
		// the reader goes on after the snapshot; what it reads now is lost
		// with the failure the restore recovers from
		readN(t, r, 1)
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if len(before) == 0 || len(before) >= len(all) {
		t.Fatalf("the snapshot is not mid-stream: %d of %d records before it", len(before), len(all))
	}
	pending := enum.Snapshot()
	for _, p := range []int{1, 2, 3} {
		parts, err := state.RepartitionOperatorState(snaps, p)
		if err != nil {
			t.Fatal(err)
		}
		enum, err := src.Enumerator(p, &pending)
		if err != nil {
			t.Fatal(err)
		}
		got := slices.Clone(before)
		for i := range p {
			r, err := src.Reader(source.ReaderContext{Subtask: i, Parallelism: p, Splits: enum})
			if err != nil {
				t.Fatal(err)
			}
			r.AddSplits(readerSplits(t, parts[i]))
			got = append(got, readN(t, r, -1)...)
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if !sameMultiset(got, all) {
			t.Errorf("restored at parallelism %d: %d records, want the %d of the input each once", p, len(got), len(all))
		}

		env := New(Options{Parallelism: p})
		ds := FromSource(env, src, watermark.NoWatermarks[T](), "restored source")
		out := Collect(ds)
		enc, err := coordinator.EncodeEnumeratorState(pending)
		if err != nil {
			t.Fatal(err)
		}
		ost := checkpoint.OperatorState{ID: env.operatorIDs()[ds.n], Name: "restored source", Parallelism: len(snaps),
			Coordinator: enc}
		for _, b := range snaps {
			ost.Subtasks = append(ost.Subtasks, checkpoint.SubtaskState{State: b, Watermark: watermark.Min})
		}
		env.opts.Restore = &checkpoint.Snapshot{ID: 1, Operators: []checkpoint.OperatorState{ost}}
		if _, err := env.Execute(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := append(slices.Clone(before), out.Values()...); !sameMultiset(got, all) {
			t.Errorf("a job restored at parallelism %d: %d records, want the %d of the input each once", p, len(got), len(all))
		}
	}
}

// readerState returns a source subtask's operator state holding positions.
func readerState(t *testing.T, positions []source.Split) []byte {
	t.Helper()
	store := state.NewOperatorStore(state.OperatorOptions{Name: "src"})
	defer store.Dispose()
	list, err := state.GetOperatorListState(store, state.ListDescriptor[[]byte]{Name: SourceReaderState})
	if err != nil {
		t.Fatal(err)
	}
	var enc [][]byte
	for _, s := range positions {
		b, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		enc = append(enc, b)
	}
	list.Update(enc)
	var buf bytes.Buffer
	if err := store.Snapshot(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readerSplits returns the split positions of a source subtask's operator
// state.
func readerSplits(t *testing.T, b []byte) []source.Split {
	t.Helper()
	store := state.NewOperatorStore(state.OperatorOptions{Name: "src"})
	defer store.Dispose()
	if err := store.Restore(bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	list, err := state.GetOperatorListState(store, state.ListDescriptor[[]byte]{Name: SourceReaderState})
	if err != nil {
		t.Fatal(err)
	}
	var out []source.Split
	for _, e := range list.Get() {
		var s source.Split
		if err := s.UnmarshalBinary(e); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func sameMultiset[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	n := map[T]int{}
	for _, v := range a {
		n[v]++
	}
	for _, v := range b {
		n[v]--
		if n[v] < 0 {
			return false
		}
	}
	return true
}

func TestSourceResumeSlice(t *testing.T) {
	items := make([]int, 100)
	for i := range items {
		items[i] = i
	}
	checkSourceResume(t, source.FromSlice(items, source.BatchSize(7)), items, [2]int{10, 30})
}

func TestSourceResumeGenerator(t *testing.T) {
	fn := func(i int64) string { return fmt.Sprint("event-", i) }
	var all []string
	for i := range int64(90) {
		all = append(all, fn(i))
	}
	checkSourceResume(t, source.Generator(fn, 90, 0, source.BatchSize(4)), all, [2]int{5, 21})
}

func TestSourceResumeFiles(t *testing.T) {
	dir := t.TempDir()
	var all []string
	for f := range 3 {
		var sb strings.Builder
		for l := range 20 + 5*f {
			line := fmt.Sprintf("file %d line %d", f, l)
			sb.WriteString(line + "\n")
			all = append(all, line)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprint("in-", f, ".txt")), []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src, err := source.Files(source.Text(), dir, source.BatchSize(3))
	if err != nil {
		t.Fatal(err)
	}
	// reader 0 stops inside its first file, reader 1 inside its second
	checkSourceResume(t, src, all, [2]int{7, 30})
}
