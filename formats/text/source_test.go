package text

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/weirdata/weir/formats"
)

// oracle splits data into lines the naive way.
func oracle(data string) []string {
	if data == "" {
		return nil
	}
	lines := strings.Split(data, "\n")
	if strings.HasSuffix(data, "\n") {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// readAll reads every split of src, in order, copying nothing: the strings must
// stay valid after the callbacks.
func readAll(t testing.TB, src *Source) []string {
	t.Helper()
	ctx := context.Background()
	splits, err := src.Splits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, sp := range splits {
		err := src.Read(ctx, sp, func(b []string) error {
			out = append(out, b...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func writeFile(t testing.TB, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSplitsExactlyOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var long strings.Builder
	for long.Len() < 5000 {
		long.WriteString("long-line-")
	}
	cases := map[string]string{
		"empty":        "",
		"one newline":  "\n",
		"no trailing":  "a\nbb\nccc",
		"blank lines":  "\n\n\na\n\n",
		"crlf":         "a\r\nb\r\n\r\n",
		"unicode":      "héllo\n世界\n🙂\n",
		"longer chunk": "x\n" + long.String() + "\ny\n" + long.String(),
	}
	var b strings.Builder
	for i := range 500 {
		fmt.Fprintf(&b, "%d:%s\n", i, strings.Repeat("z", rng.IntN(40)))
	}
	cases["random"] = b.String()
	for name, data := range cases {
		p := writeFile(t, data)
		want := oracle(data)
		splitSizes, chunks := []int64{1, 2, 3, 7, 64, 1000, 1 << 30}, []int{1, 5, 4096}
		if len(data) > 1000 {
			splitSizes, chunks = []int64{97, 1000, 1 << 30}, []int{5, 4096}
		}
		for _, split := range splitSizes {
			for _, chunk := range chunks {
				src, err := OpenWith(p, Options{SplitSize: split, ChunkSize: chunk, BatchRows: 3})
				if err != nil {
					t.Fatal(err)
				}
				got := readAll(t, src)
				if !slices.Equal(got, want) {
					t.Fatalf("%s split %d chunk %d: got %d lines, want %d", name, split, chunk, len(got), len(want))
				}
			}
		}
	}
}

func TestRoundTripParallel(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	sink := NewSink(dir)
	const n = 4
	want := make([][]string, n)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		for j := range 1000 * (i + 1) {
			want[i] = append(want[i], fmt.Sprintf("part %d line %d ü", i, j))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := sink.Create(context.Background(), i, n)
			if err != nil {
				errs[i] = err
				return
			}
			for b := range slices.Chunk(want[i], 77) {
				if err := w.Write(b); err != nil {
					w.Abort()
					errs[i] = err
					return
				}
			}
			if errs[i] = w.Close(); errs[i] == nil {
				errs[i] = w.Commit()
			}
			w.Abort() // a no-op after Commit
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != n {
		t.Fatalf("%d files in output, want %d (no temporaries)", len(ents), n)
	}
	src, err := OpenWith(dir, Options{SplitSize: 5000})
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, src); !slices.Equal(got, slices.Concat(want...)) {
		t.Fatalf("round trip differs: %d lines", len(got))
	}
	// Splits read concurrently give the same lines.
	splits, _ := src.Splits(context.Background())
	parts := make([][]string, len(splits))
	for i, sp := range splits {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs := src.Read(context.Background(), sp, func(b []string) error {
				parts[i] = append(parts[i], b...)
				return nil
			})
			if errs != nil {
				t.Error(errs)
			}
		}()
	}
	wg.Wait()
	if got := slices.Concat(parts...); !slices.Equal(got, slices.Concat(want...)) {
		t.Fatal("concurrent split reads differ")
	}
}

func TestAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.txt")
	w, err := NewSink(p).Create(context.Background(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	w.Abort()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("abort left %v", ents)
	}
	if err := w.Write([]string{"c"}); err == nil {
		t.Fatal("write after abort succeeded")
	}
}

func TestTwoPhaseCommit(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	final := filepath.Join(dir, "x.txt")
	names := func() []string {
		var out []string
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			out = append(out, e.Name())
		}
		return out
	}

	// Close then Abort leaves nothing.
	w, err := NewSink(final).Create(ctx, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]string{"a"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := names(); len(got) != 1 || got[0] == "x.txt" {
		t.Fatalf("after Close: %v, want one temporary file", got)
	}
	w.Abort()
	w.Abort()
	if got := names(); len(got) != 0 {
		t.Fatalf("Close then Abort left %v", got)
	}
	if err := w.Commit(); err == nil {
		t.Fatal("Commit after Abort succeeded")
	}

	// Commit without Close is an error naming the file and publishes nothing.
	w, err = NewSink(final).Create(ctx, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]string{"a"})
	if err := w.Commit(); err == nil || !strings.Contains(err.Error(), "formats/text: commit "+final) {
		t.Fatalf("Commit without Close: %v", err)
	}
	w.Abort()
	if got := names(); len(got) != 0 {
		t.Fatalf("Commit without Close, then Abort, left %v", got)
	}

	// Write, Close, Commit publishes the file; Write and Close after Close fail.
	w, err = NewSink(final).Create(ctx, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]string{"c"}); err == nil {
		t.Fatal("Write after Close succeeded")
	}
	if err := w.Close(); err == nil {
		t.Fatal("second Close succeeded")
	}
	if _, err := os.Stat(final); !os.IsNotExist(err) {
		t.Fatalf("the final file exists before Commit: %v", err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err == nil {
		t.Fatal("second Commit succeeded")
	}
	w.Abort() // a no-op after Commit
	if got := names(); !slices.Equal(got, []string{"x.txt"}) {
		t.Fatalf("after Commit: %v", got)
	}
	if b, err := os.ReadFile(final); err != nil || string(b) != "a\nb\n" {
		t.Fatalf("committed %q, %v", b, err)
	}
	// A committed file can be taken back.
	if err := w.(formats.Remover).Remove(); err != nil {
		t.Fatal(err)
	}
	if got := names(); len(got) != 0 {
		t.Fatalf("after Remove: %v", got)
	}
}

func TestErrors(t *testing.T) {
	if _, err := Open(filepath.Join(t.TempDir(), "missing.txt")); err == nil || !strings.Contains(err.Error(), "missing.txt") {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "*.nothing")); err == nil {
		t.Fatal("empty glob: no error")
	}
	p := writeFile(t, "a\nb\n")
	src, _ := Open(p)
	splits, _ := src.Splits(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := src.Read(ctx, splits[0], func([]string) error { return nil }); err == nil {
		t.Fatal("cancelled read: no error")
	}
	boom := fmt.Errorf("boom")
	if err := src.Read(context.Background(), splits[0], func([]string) error { return boom }); err != boom {
		t.Fatalf("callback error: %v", err)
	}
}

func TestGlobAndStats(t *testing.T) {
	dir := t.TempDir()
	for i, s := range []string{"a\n", "b\nc\n"} {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.log", i)), []byte(s), 0o644)
	}
	src, err := Open(filepath.Join(dir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, src); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("glob read %q", got)
	}
	st, _ := src.Stats(context.Background())
	if st.Bytes != 6 || st.Rows != -1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestReadAllocs(t *testing.T) {
	var b strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	p := writeFile(t, b.String())
	src, _ := OpenWith(p, Options{ChunkSize: 1 << 20})
	splits, _ := src.Splits(context.Background())
	n := 0
	allocs := testing.AllocsPerRun(3, func() {
		n = 0
		src.Read(context.Background(), splits[0], func(b []string) error { n += len(b); return nil })
	})
	// Per Read: the file, the batch, a chunk buffer per MiB: a handful, not per line.
	if n != 20000 || allocs > 20 {
		t.Fatalf("read %d lines with %v allocs", n, allocs)
	}
}

func FuzzText(f *testing.F) {
	f.Add([]byte("a\nb"), int64(1))
	f.Add([]byte("\r\n\n"), int64(2))
	f.Fuzz(func(t *testing.T, data []byte, split int64) {
		if split <= 0 || split > 1<<20 {
			split = 1 + split&15
			if split <= 0 {
				split = 1
			}
		}
		p := writeFile(t, string(data))
		src, err := OpenWith(p, Options{SplitSize: split, ChunkSize: 3})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := readAll(t, src), oracle(string(data)); !slices.Equal(got, want) {
			t.Fatalf("got %q want %q", got, want)
		}
	})
}

func BenchmarkRead(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 50<<20; i++ {
		fmt.Fprintf(&sb, "%d|some log text of moderate length for line %d\n", i, i*7)
	}
	p := writeFile(b, sb.String())
	src, _ := Open(p)
	splits, _ := src.Splits(context.Background())
	b.SetBytes(int64(sb.Len()))
	b.ResetTimer()
	for b.Loop() {
		for _, sp := range splits {
			src.Read(context.Background(), sp, func([]string) error { return nil })
		}
	}
}

func TestCommitFailure(t *testing.T) {
	dir := t.TempDir()
	final := filepath.Join(dir, "x.txt")
	os.MkdirAll(filepath.Join(final, "sub"), 0o755)
	w, err := NewSink(final).Create(context.Background(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]string{"a"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err == nil || !strings.Contains(err.Error(), "formats/text: commit "+final) {
		t.Fatalf("commit: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("left %v", ents)
	}
}
