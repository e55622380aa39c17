package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirdata/weir/internal/golden"
)

// TestPlansGolden compares the optimized plans of the TPC-H programs with
// testdata/plans.txt, in the format `weir explain tpch` prints.
func TestPlansGolden(t *testing.T) {
	golden.RunFile(t, filepath.Join("testdata", "plans.txt"), func(t *testing.T, d *golden.Case) string {
		if d.Cmd != "explain" {
			t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
		}
		code, stdout, stderr := runWeir(context.Background(), "explain", "tpch", "--data", tpchData,
			"--query", d.Args["query"], "--parallelism", d.Args["parallelism"], "--memory", "256MiB")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", d.Pos, code, stderr)
		}
		return stdout
	})
}

// TestPlansReuseProperties checks the property reuse the golden plans show:
// at parallelism 8, broadcasting the orders side of Q3's join with lineitem
// costs more than repartitioning both on orderkey, and the grouping after the
// join (its keys include orderkey) is then forwarded, not shuffled again.
func TestPlansReuseProperties(t *testing.T) {
	p := explainJSON(t, "--data", tpchData, "--query", "3", "--parallelism", "8", "--memory", "256MiB")
	find := func(p planJSON, id *int) int {
		for i := range p.Nodes {
			if id != nil && p.Nodes[i].ID == *id {
				return i
			}
		}
		return -1
	}
	reduce := -1
	for i := range p.Nodes {
		if p.Nodes[i].Operator == "Reduce" {
			reduce = i
		}
	}
	if reduce < 0 || len(p.Nodes[reduce].Inputs) != 1 {
		t.Fatalf("no Reduce with one input in the plan")
	}
	if got := p.Nodes[reduce].Inputs[0].ShipStrategy; got != "FORWARD" {
		t.Errorf("Q3's grouping ships its input %s, want FORWARD", got)
	}
	j := find(p, p.Nodes[reduce].Inputs[0].ID)
	if j < 0 || p.Nodes[j].Operator != "Join" || p.Nodes[j].Inputs[0].ShipStrategy != "HASH" || p.Nodes[j].Inputs[1].ShipStrategy != "HASH" {
		t.Errorf("the grouping's input is not a join repartitioned on both sides")
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
