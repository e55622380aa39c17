package sink

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/clock"
	"github.com/weirdata/weir/formats"
	"github.com/weirdata/weir/formats/csv"
	"github.com/weirdata/weir/formats/formatstest"
	"github.com/weirdata/weir/formats/parquet"
	"github.com/weirdata/weir/formats/text"
)

// rec is the record the file sink tests write.
type rec struct {
	ID    int64
	Name  string
	Score float64
}

func (r rec) line() string { return fmt.Sprintf("%d|%s|%v", r.ID, r.Name, r.Score) }

// fileFormat builds a sink of rec and reads back what its committed files
// hold, each record as rec.line.
type fileFormat struct {
	name string
	sink func(dir string, opts ...Option) *FileSink[rec]
	read func(t *testing.T, dir string) []string
}

var fileFormats = []fileFormat{
	{
		name: "text",
		sink: func(dir string, opts ...Option) *FileSink[rec] {
			return Rows(dir, func(dst []byte, r rec) []byte { return append(append(dst, r.line()...), '\n') }, opts...)
		},
		read: func(t *testing.T, dir string) []string {
			src, err := text.Open(dir)
			return readAll(t, src, err, func(s string) string { return s })
		},
	},
	{
		name: "csv",
		sink: func(dir string, opts ...Option) *FileSink[rec] { return CSV[rec](dir, csv.Options{}, opts...) },
		read: func(t *testing.T, dir string) []string {
			src, err := csv.Open[rec](dir, csv.Options{})
			return readAll(t, src, err, rec.line)
		},
	},
	{
		name: "parquet",
		sink: func(dir string, opts ...Option) *FileSink[rec] {
			return Parquet[rec](dir, []parquet.SinkOption{parquet.RowGroupRows(3)}, opts...)
		},
		read: func(t *testing.T, dir string) []string {
			src, err := parquet.Open[rec](dir)
			return readAll(t, src, err, rec.line)
		},
	},
}

// readAll reads every split of src (an error from opening it fails the test).
func readAll[T any](t *testing.T, src formats.Source[T], err error, line func(T) string) []string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	out, err := formatstest.ReadAll(context.Background(), src, line)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// recs returns n records starting at id from.
func recs(from, n int) []rec {
	out := make([]rec, n)
	for i := range out {
		id := int64(from + i)
		out[i] = rec{ID: id, Name: fmt.Sprintf("name,%d \"q\"", id), Score: float64(id) / 4}
	}
	return out
}

func lines(rs []rec) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.line()
	}
	return out
}

// sameRecords fails the test unless got and want hold the same records the
// same number of times.
func sameRecords(t *testing.T, got, want []string) {
	t.Helper()
	got, want = slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Errorf("committed files hold %d records, want %d (exactly once each)", len(got), len(want))
		for i := 0; i < len(got) || i < len(want); i++ {
			var g, w string
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if g != w {
				t.Errorf("first difference at %d: got %q, want %q", i, g, w)
				break
			}
		}
	}
}

// names lists the directory's file names, committed (no leading dot) and
// hidden.
func names(t *testing.T, dir string) (committed, hidden []string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			hidden = append(hidden, e.Name())
		} else {
			committed = append(committed, e.Name())
		}
	}
	return committed, hidden
}

// newClock returns a clock tests move by hand.
func newClock() *clock.Manual { return clock.NewManual(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)) }

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
