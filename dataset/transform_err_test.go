package dataset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/formats/text"
)

// TestErrFunctions: MapErr, FlatMapErr and FilterErr give the results of
// their plain forms when fn does not fail; when fn fails on one record the
// job fails with that error, wrapped with the operator's name, and an Output
// of the chain commits nothing (goleak checks no task is left running).
func TestErrFunctions(t *testing.T) {
	bad := errors.New("bad record")
	in := make([]int, 1000)
	for i := range in {
		in[i] = i
	}
	build := map[string]func(ds *DataSet[int], failAt int) *DataSet[string]{
		"MapErr": func(ds *DataSet[int], failAt int) *DataSet[string] {
			return MapErr(ds, func(x int) (string, error) {
				if x == failAt {
					return "", bad
				}
				return fmt.Sprint(x), nil
			})
		},
		"FlatMapErr": func(ds *DataSet[int], failAt int) *DataSet[string] {
			return FlatMapErr(ds, func(x int, emit func(string)) error {
				if x == failAt {
					return bad
				}
				emit(fmt.Sprint(x))
				return nil
			})
		},
		"FilterErr": func(ds *DataSet[int], failAt int) *DataSet[string] {
			kept := FilterErr(ds, func(x int) (bool, error) {
				if x == failAt {
					return false, bad
				}
				return true, nil
			})
			return Map(kept, func(x int) string { return fmt.Sprint(x) })
		},
	}
	for name, op := range build {
		t.Run(name, func(t *testing.T) {
			env := New(Options{Parallelism: 2, BatchSize: 64})
			got := Collect(op(FromSlice(env, in), -1))
			if _, err := env.Execute(context.Background()); err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, x := range in {
				want = append(want, fmt.Sprint(x))
			}
			vals := slices.Clone(got.Values())
			slices.Sort(vals)
			slices.Sort(want)
			if !slices.Equal(vals, want) {
				t.Fatalf("got %d values, want %d", len(vals), len(want))
			}

			dir := filepath.Join(t.TempDir(), "out")
			env = New(Options{Parallelism: 2, BatchSize: 64})
			Output(op(FromSlice(env, in), 700), "out", text.NewSink(dir))
			_, err := env.Execute(context.Background())
			if !errors.Is(err, bad) || !strings.Contains(err.Error(), "dataset: "+name+" at ") {
				t.Fatalf("got %v, want the record's error wrapped with %s's name", err, name)
			}
			ents, _ := os.ReadDir(dir)
			if len(ents) != 0 {
				t.Fatalf("the failed job left %d files", len(ents))
			}
		})
	}
}
