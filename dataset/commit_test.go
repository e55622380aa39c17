package dataset

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weirdata/weir/formats"
	"github.com/weirdata/weir/formats/csv"
	"github.com/weirdata/weir/formats/text"
)

// Close makes memWriter (ops_test.go) a formats.Writer: it keeps its records
// in memory, so there is nothing to complete.
func (w *memWriter) Close() error { return nil }

// signalSink wraps a sink so that a test can wait until every writer has
// closed (or aborted) its file, and counts commits.
type signalSink[T any] struct {
	formats.Sink[T]
	settled *sync.WaitGroup // Done once per writer, at its Close or first Abort
	commits atomic.Int32
}

func (s *signalSink[T]) Create(ctx context.Context, i, n int) (formats.Writer[T], error) {
	w, err := s.Sink.Create(ctx, i, n)
	if err != nil {
		return nil, err
	}
	return &signalWriter[T]{Writer: w, s: s}, nil
}

type signalWriter[T any] struct {
	formats.Writer[T]
	s       *signalSink[T]
	settled bool
}

func (w *signalWriter[T]) settle() {
	if !w.settled {
		w.settled = true
		w.s.settled.Done()
	}
}

func (w *signalWriter[T]) Close() error {
	err := w.Writer.Close()
	w.settle()
	return err
}

func (w *signalWriter[T]) Commit() error {
	w.s.commits.Add(1)
	return w.Writer.Commit()
}

func (w *signalWriter[T]) Abort() {
	w.Writer.Abort()
	w.settle()
}

func (w *signalWriter[T]) Remove() error { return w.Writer.(formats.Remover).Remove() }

// dirNames lists dir's entries ("" entries when it does not exist).
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

type kv struct {
	K int    `weir:"k"`
	V string `weir:"v"`
}

// TestOutputCommitsAfterJob runs a program with two Outputs (text and CSV,
// two subtasks each) and a branch that fails only after every Output writer
// has closed its temporary file: the failed job must leave no file, temporary
// or final. Run again on the same Env without the failure, the job leaves
// exactly the expected files.
func TestOutputCommitsAfterJob(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	linesDir, rowsDir := filepath.Join(dir, "lines"), filepath.Join(dir, "rows")
	var lines []string
	var rows []kv
	for i := range 1000 {
		lines = append(lines, fmt.Sprintf("line %d", i))
		rows = append(rows, kv{K: i, V: fmt.Sprintf("v%d", i%7)})
	}

	env := New(Options{Parallelism: 2, BatchSize: 64})
	var settled sync.WaitGroup
	textSink := &signalSink[string]{Sink: text.NewSink(linesDir), settled: &settled}
	csvSink := &signalSink[kv]{Sink: csv.NewSink[kv](rowsDir, csv.Options{}), settled: &settled}
	Output(FromSlice(env, lines), "lines", textSink)
	Output(FromSlice(env, rows), "rows", csvSink)
	var fail atomic.Bool
	var tempsAtFailure atomic.Int32
	Count(Map(FromSlice(env, []int{1, 2, 3, 4}), func(x int) int {
		settled.Wait() // every Output writer has closed its file
		if x == 3 && fail.Load() {
			n := 0
			for _, d := range []string{linesDir, rowsDir} {
				ents, _ := os.ReadDir(d)
				for _, e := range ents {
					if strings.HasPrefix(e.Name(), ".") {
						n++
					}
				}
			}
			tempsAtFailure.Store(int32(n))
			panic("boom")
		}
		return x
	}))

	fail.Store(true)
	settled.Add(4)
	_, err := env.Execute(ctx)
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("failing job: err = %v", err)
	}
	if got := tempsAtFailure.Load(); got != 4 {
		t.Fatalf("%d closed temporary files when the job failed, want 4", got)
	}
	if c := textSink.commits.Load() + csvSink.commits.Load(); c != 0 {
		t.Errorf("failing job: %d commits", c)
	}
	for _, d := range []string{linesDir, rowsDir} {
		if got := dirNames(t, d); len(got) != 0 {
			t.Errorf("failing job left %v in %s", got, d)
		}
	}

	fail.Store(false)
	settled.Add(4)
	if _, err := env.Execute(ctx); err != nil {
		t.Fatal(err)
	}
	if got := dirNames(t, linesDir); !slices.Equal(got, []string{"part-00000.txt", "part-00001.txt"}) {
		t.Fatalf("lines: %v", got)
	}
	if got := dirNames(t, rowsDir); !slices.Equal(got, []string{"part-00000.csv", "part-00001.csv"}) {
		t.Fatalf("rows: %v", got)
	}
	for i := range 2 {
		lo, hi := len(lines)*i/2, len(lines)*(i+1)/2
		var want strings.Builder
		for _, l := range lines[lo:hi] {
			want.WriteString(l + "\n")
		}
		checkFile(t, filepath.Join(linesDir, fmt.Sprintf("part-%05d.txt", i)), want.String())
		want.Reset()
		want.WriteString("k,v\n")
		for _, r := range rows[lo:hi] {
			fmt.Fprintf(&want, "%d,%s\n", r.K, r.V)
		}
		checkFile(t, filepath.Join(rowsDir, fmt.Sprintf("part-%05d.csv", i)), want.String())
	}
	if c := textSink.commits.Load() + csvSink.commits.Load(); c != 4 {
		t.Errorf("%d commits, want 4", c)
	}
}

func checkFile(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != want {
		t.Errorf("%s holds %d bytes, want %d:\n%.200s", path, len(b), len(want), b)
	}
}

// TestOutputCommitFailure makes the last commit of a job fail (its final name
// is a non-empty directory): the files already committed are removed, the
// other writers abort, and the error names the Output.
func TestOutputCommitFailure(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.MkdirAll(filepath.Join(b, "part-00001.txt", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	lines := []string{"x", "y", "z", "w"}
	env := New(Options{Parallelism: 2})
	Output(FromSlice(env, lines), "a", text.NewSink(a))
	Output(FromSlice(env, lines), "b", text.NewSink(b))
	_, err := env.Execute(context.Background())
	if err == nil || !strings.Contains(err.Error(), "Output b at") || !strings.Contains(err.Error(), "formats/text: commit") {
		t.Fatalf("err = %v", err)
	}
	if got := dirNames(t, a); len(got) != 0 {
		t.Errorf("a holds %v after the failed commit", got)
	}
	if got := dirNames(t, b); !slices.Equal(got, []string{"part-00001.txt"}) {
		t.Errorf("b holds %v after the failed commit, want only the blocking directory", got)
	}
}

// TestOutputCommitFailureNoRemover: a committed writer that cannot remove its
// output is reported with the commit's failure.
func TestOutputCommitFailureNoRemover(t *testing.T) {
	dir := t.TempDir()
	b := filepath.Join(dir, "b")
	if err := os.MkdirAll(filepath.Join(b, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	in := sales(1, 10)
	env := New(Options{Parallelism: 1})
	mem := &memSink{}
	Output(FromSlice(env, in), "mem", formats.Sink[sale](mem))
	Output(FromSlice(env, []string{"x"}), "b", text.NewSink(b))
	_, err := env.Execute(context.Background())
	if err == nil || !strings.Contains(err.Error(), "Output b at") || !strings.Contains(err.Error(), "cannot be removed") {
		t.Fatalf("err = %v", err)
	}
	if got := dirNames(t, b); !slices.Equal(got, []string{"sub"}) {
		t.Errorf("b holds %v, want only sub", got)
	}
}
