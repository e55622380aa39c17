package source

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

func splitsNamed(n int) []Split {
	out := make([]Split, n)
	for i := range out {
		out[i] = Split{ID: fmt.Sprint("s", i), Len: 1}
	}
	return out
}

// ids asks subtask for splits until the enumerator has none left for it.
func ids(t *testing.T, e Enumerator, subtask int) []string {
	t.Helper()
	var out []string
	for {
		g, err := e.Request(subtask)
		if err != nil {
			t.Fatal(err)
		}
		if g.Status == NoMore {
			return out
		}
		if g.Status != Assigned {
			t.Fatalf("status %v from a bounded enumerator", g.Status)
		}
		out = append(out, g.Split.ID)
	}
}

func TestEnumeratorStatic(t *testing.T) {
	c := newConfig([]Option{Assign(Static)})
	e, err := newEnumerator(splitsNamed(5), 2, c, nil, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(t, e, 1); !slices.Equal(got, []string{"s1", "s3"}) {
		t.Fatalf("reader 1 got %v", got)
	}
	g, _ := e.Request(0)
	if g.Split.ID != "s0" {
		t.Fatalf("reader 0's first split is %v", g.Split)
	}
	st := e.Snapshot()
	if got := splitIDs(st.Pending); !slices.Equal(got, []string{"s2", "s4"}) {
		t.Fatalf("pending %v", got)
	}
	// Restored with 2 readers, the pending splits are dealt again.
	e2, err := newEnumerator(nil, 2, c, &st, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := ids(t, e2, 0), ids(t, e2, 1); !slices.Equal(a, []string{"s2"}) || !slices.Equal(b, []string{"s4"}) {
		t.Fatalf("restored: reader 0 got %v, reader 1 got %v", a, b)
	}
}

func TestEnumeratorOnRequest(t *testing.T) {
	e, err := newEnumerator(splitsNamed(4), 3, newConfig(nil), nil, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sub := range []int{2, 2, 0} {
		g, _ := e.Request(sub)
		got = append(got, g.Split.ID)
	}
	if !slices.Equal(got, []string{"s0", "s1", "s2"}) {
		t.Fatalf("got %v", got)
	}
	// A failed reader's split comes back and goes to the next reader that asks.
	e.AddSplitsBack([]Split{{ID: "s1", Offset: 7, Records: 7, Len: 9}})
	if st := e.Snapshot(); !slices.Equal(splitIDs(st.Pending), []string{"s3", "s1"}) {
		t.Fatalf("pending %v", splitIDs(st.Pending))
	}
	if got := ids(t, e, 1); !slices.Equal(got, []string{"s3", "s1"}) {
		t.Fatalf("reader 1 got %v", got)
	}
}

// TestReadersShareSplits reads files with three readers taking turns: each
// file is read once, by one reader, and OnRequest spreads them.
func TestReadersShareSplits(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for i := range 9 {
		line := fmt.Sprint("line of file ", i)
		writeFile(t, dir, fmt.Sprintf("f%d.txt", i), line+"\n")
		want = append(want, line)
	}
	for _, a := range []Assignment{OnRequest, Static} {
		src, err := Files(Text(), dir, Assign(a))
		if err != nil {
			t.Fatal(err)
		}
		res := readWhole(t, src, 3)
		got := slices.Sorted(slices.Values(res.all))
		if !slices.Equal(got, want) || len(res.ended) != 9 {
			t.Fatalf("assignment %v: got %v, %d ended", a, got, len(res.ended))
		}
	}
}

func splitIDs(s []Split) []string {
	out := make([]string, len(s))
	for i := range s {
		out[i] = s[i].ID
	}
	return out
}

// TestReadersConcurrent drains three readers at once, one goroutine each, as
// subtasks run: every file's lines are read once, in order, by one reader.
func TestReadersConcurrent(t *testing.T) {
	dir := t.TempDir()
	want := map[string][]string{}
	for i := range 30 {
		name := fmt.Sprintf("f%02d.txt", i)
		var lines []string
		for j := range i % 7 {
			lines = append(lines, fmt.Sprint(name, " line ", j))
		}
		writeFile(t, dir, name, strings.Join(lines, "\n"))
		want[filepath.Join(dir, name)] = lines
	}
	src, err := Files(Text(), dir, BatchSize(2))
	if err != nil {
		t.Fatal(err)
	}
	_, rs := newReaders(t, src, 3, nil)
	results := make([]result[string], len(rs))
	var wg sync.WaitGroup
	for i, r := range rs {
		results[i] = result[string]{bySplit: map[string][]string{}}
		wg.Go(func() {
			for {
				b, err := r.Next(t.Context())
				if err == io.EOF {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				results[i].check(t, b)
			}
		})
	}
	wg.Wait()
	got := map[string][]string{}
	for _, res := range results {
		for _, id := range res.ended {
			if _, dup := got[id]; dup {
				t.Fatalf("%s read by two readers", id)
			}
			got[id] = res.bySplit[id]
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d files read, want %d", len(got), len(want))
	}
	for id, lines := range want {
		if !slices.Equal(got[id], lines) {
			t.Fatalf("%s: got %q, want %q", id, got[id], lines)
		}
	}
}
