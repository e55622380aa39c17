package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirdata/weir/internal/golden"
)

// TestPlansGolden compares the optimized plans of the TPC-H programs with
// testdata/plans.txt, and those of the jobs of weir run on their default data
// with testdata/jobs.txt, in the format weir explain prints.
func TestPlansGolden(t *testing.T) {
	for _, file := range []string{"plans.txt", "jobs.txt"} {
		golden.RunFile(t, filepath.Join("testdata", file), func(t *testing.T, d *golden.Case) string {
			if d.Cmd != "explain" {
				t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
			}
			args := []string{"explain", "tpch", "--parallelism", d.Args["parallelism"], "--memory", "256MiB"}
			if job, ok := d.Arg("job"); ok {
				args[1] = job
			} else {
				args = append(args, "--data", tpchData, "--query", d.Args["query"])
			}
			code, stdout, stderr := runWeir(context.Background(), args...)
			if code != 0 {
				t.Fatalf("%s: exit %d: %s", d.Pos, code, stderr)
			}
			return stdout
		})
	}
}

// TestPlansReuseProperties checks the property reuse the golden plans show:
// in Q13 the orders are counted per customer (hash-partitioned on custkey)
// and then outer-joined with the customers on custkey, so at parallelism 8 the
// counts are forwarded into the join, not shuffled again, and only the
// customers are repartitioned.
func TestPlansReuseProperties(t *testing.T) {
	p := explainJSON(t, "--data", tpchData, "--query", "13", "--parallelism", "8", "--memory", "256MiB")
	find := func(p planJSON, id *int) int {
		for i := range p.Nodes {
			if id != nil && p.Nodes[i].ID == *id {
				return i
			}
		}
		return -1
	}
	join := -1
	for i := range p.Nodes {
		if p.Nodes[i].Operator == "Join" {
			join = i
		}
	}
	if join < 0 || len(p.Nodes[join].Inputs) != 2 {
		t.Fatalf("no Join with two inputs in the plan")
	}
	in := p.Nodes[join].Inputs
	if got := in[1].ShipStrategy; got != "FORWARD" {
		t.Errorf("Q13's join ships the per-customer counts %s, want FORWARD", got)
	}
	if r := find(p, in[1].ID); r < 0 || p.Nodes[r].Operator != "Reduce" || p.Nodes[r].Inputs[0].ShipStrategy != "HASH" {
		t.Errorf("the join's second input is not a grouping hash-partitioned on its key")
	}
	if got := in[0].ShipStrategy; got != "HASH" {
		t.Errorf("Q13's join ships the customers %s, want HASH", got)
	}
	// the tiny tables are broadcast wherever they meet a larger input
	for _, q := range []string{"5", "10"} {
		p := explainJSON(t, "--data", tpchData, "--query", q, "--parallelism", "2")
		for _, n := range p.Nodes {
			for _, in := range n.Inputs {
				k := find(p, in.ID)
				if k < 0 {
					continue
				}
				name := p.Nodes[k].Name
				if (strings.Contains(name, "Read nation") || strings.Contains(name, "Read region")) &&
					in.ShipStrategy != "BROADCAST" && in.ShipStrategy != "FORWARD" {
					t.Errorf("q%s: %s is shipped %s into %s", q, name, in.ShipStrategy, n.Name)
				}
			}
		}
	}
}
