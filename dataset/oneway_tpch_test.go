//go:build !race

package dataset_test

import (
	"fmt"
	"testing"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/tpch"
)

// The TPC-H queries join the programs of the one-way planning tests except
// under the race detector: building the queries with it is the module's
// largest compile, and what they run is the dataset runtime that its own
// tests race-test.
func init() {
	tpchPrograms = func() []program {
		var out []program
		for q := 1; q <= 22; q++ {
			spec, ok := tpch.Query(q)
			if !ok {
				continue
			}
			out = append(out, program{fmt.Sprintf("tpch-q%02d", q), func(t *testing.T, env *dataset.Env) func() []string {
				rows, err := spec.Build(env, tpchData)
				if err != nil {
					t.Fatal(err)
				}
				return func() []string { return lines(rows()) }
			}})
		}
		return out
	}
}

const tpchData = "../testdata/tpch"
