package linesort

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/internal/oracle"
)

// dirs are one sort's input, output and spill directories.
type dirs struct{ in, outDir, tmp string }

func newDirs(t *testing.T, data []byte) dirs {
	t.Helper()
	d := dirs{in: filepath.Join(t.TempDir(), "input.txt"), outDir: t.TempDir(), tmp: t.TempDir()}
	if err := os.WriteFile(d.in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}

func (d dirs) out() string { return filepath.Join(d.outDir, "sorted.txt") }

func (d dirs) job(memory int64, parallelism int) *Job {
	return New(Options{Input: d.in, Output: d.out(),
		Dataset: dataset.Options{Memory: memory, Parallelism: parallelism, TmpDir: d.tmp}})
}

// checkClean asserts that no spill file is left and that the output directory
// holds the output only if wantOutput.
func (d dirs) checkClean(t *testing.T, wantOutput bool) {
	t.Helper()
	if ents, _ := os.ReadDir(d.tmp); len(ents) != 0 {
		t.Errorf("spill directory not empty: %v", ents)
	}
	ents, _ := os.ReadDir(d.outDir)
	if want := map[bool]int{true: 1, false: 0}[wantOutput]; len(ents) != want {
		t.Errorf("output directory holds %v, want %d files", ents, want)
	}
}

func TestSort(t *testing.T) {
	for _, in := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"no-trailing-newline", []byte("b\nc\na")},
		{"nasty", oracle.NastyLines(1, 3000)},
		{"spilling", oracle.NastyLines(2, 40000)},
		{"skewed", append(bytes.Repeat([]byte("same\n"), 20000), "a\nz\n"...)},
	} {
		for _, cfg := range []struct {
			memory      int64
			parallelism int
		}{{256 << 20, 1}, {64 << 10, 1}, {64 << 10, 3}} {
			t.Run(fmt.Sprintf("%s/memory=%d/parallelism=%d", in.name, cfg.memory, cfg.parallelism), func(t *testing.T) {
				d := newDirs(t, in.data)
				j := d.job(cfg.memory, cfg.parallelism)
				s, err := j.Run(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(d.out())
				if err != nil {
					t.Fatal(err)
				}
				want := oracle.SortLines(in.data)
				if !bytes.Equal(got, want) {
					t.Fatalf("output differs from the oracle: %d bytes, want %d", len(got), len(want))
				}
				if s.Bytes != int64(len(want)) || s.Lines != int64(bytes.Count(want, []byte("\n"))) {
					t.Errorf("summary %+v, want %d lines and %d bytes", s, bytes.Count(want, []byte("\n")), len(want))
				}
				if p := j.Progress(); p.Read != int64(len(want)) || p.Written != int64(len(want)) || p.Size != int64(len(in.data)) {
					t.Errorf("progress %+v after the sort, want %d bytes read and written of %d", p, len(want), len(in.data))
				}
				d.checkClean(t, true)
			})
		}
	}
}

func TestSortInterrupted(t *testing.T) {
	data := oracle.NastyLines(4, 200000)
	// Interrupt while reading (and spilling), and while writing the output.
	for _, at := range []struct {
		event string
		n     int64
	}{{"read", 1}, {"read", 20}, {"read", 150}, {"write", 1}, {"write", 30}} {
		t.Run(fmt.Sprintf("%s=%d", at.event, at.n), func(t *testing.T) {
			d := newDirs(t, data)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var seen atomic.Int64
			j := d.job(256<<10, 2)
			j.hook = func(event string) {
				if event == at.event && seen.Add(1) == at.n {
					cancel()
				}
			}
			_, err := j.Run(ctx)
			if seen.Load() < at.n {
				t.Fatalf("the job saw %d %q events, fewer than %d", seen.Load(), at.event, at.n)
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("an interrupted sort returned %v, want context.Canceled", err)
			}
			d.checkClean(t, false)
		})
	}
}

func TestSampleBoundsAndRangeOf(t *testing.T) {
	var data []byte
	for i := range 10000 {
		data = fmt.Appendf(data, "%05d\n", i)
	}
	d := newDirs(t, data)
	f, err := os.Open(d.in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bounds, err := sampleBounds(f, int64(len(data)), 4)
	if err != nil || len(bounds) != 3 || !slices.IsSorted(bounds) {
		t.Fatalf("bounds %v, err %v: want 3 sorted bounds", bounds, err)
	}
	// the naive rule: range i holds bounds[i-1] < line <= bounds[i]
	for _, line := range []string{"", "00000", bounds[0], bounds[0] + "x", bounds[2], "99999", "~"} {
		want := 0
		for want < len(bounds) && bounds[want] < line {
			want++
		}
		if got := rangeOf(bounds, line); got != want {
			t.Errorf("rangeOf(%q) = %d, want %d", line, got, want)
		}
	}
}
