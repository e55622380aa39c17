package dataset

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/optimizer"
)

type wideCustomer struct {
	ID     int64
	Nation string
	Note   string // long: the build side outgrows a few MiB
}

// TestTypedJoinOutgrowsItsMemory runs hash joins whose build side (4 MB of
// customers with long notes) fits an unlimited budget but not a 3 MiB one: there
// the typed build fills its first megabytes and then hands what it holds and
// the rest of its input to the spilling hash join. Every kind, either build
// side, equals the oracle, and the notes arrive intact.
func TestTypedJoinOutgrowsItsMemory(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	var cs []customer
	var wide []wideCustomer
	for i := int64(1); i <= 20000; i++ {
		if r.IntN(5) == 0 {
			continue
		}
		c := customer{ID: i, Nation: fmt.Sprintf("N%d", r.IntN(25))}
		cs = append(cs, c)
		wide = append(wide, wideCustomer{ID: i, Nation: c.Nation, Note: strings.Repeat(c.Nation, 100)})
	}
	var os []order
	for i := int64(1); i <= 30000; i++ {
		os = append(os, order{ID: i, Customer: 1 + r.Int64N(22000)})
	}
	combine := func(o *order, c *wideCustomer) joined {
		var j joined
		if o != nil {
			j.Order = o.ID
		}
		if c != nil {
			if c.Note != strings.Repeat(c.Nation, 100) {
				panic(fmt.Sprintf("customer %d: note %.20q… does not match nation %s", c.ID, c.Note, c.Nation))
			}
			j.Customer, j.Nation = c.ID, c.Nation
		}
		return j
	}
	kinds := []string{"inner", "left", "right", "full", "semi", "anti"}
	configs := []config{{"p1-unlimited", 1, 0}, {"p2-3MiB", 2, 3 << 20}}
	if testing.Short() {
		// The budget that makes the build side outgrow its memory.
		kinds, configs = []string{"inner", "full", "anti"}, configs[1:]
	}
	for _, kind := range kinds {
		want := oracleJoin(cs, os, kind)
		for _, hint := range []JoinHint{RepartitionHashFirst, RepartitionHashSecond} {
			if testing.Short() && (hint == RepartitionHashFirst) != (kind == "full") {
				continue // the race run: one build side per kind
			}
			for _, c := range configs {
				t.Run(fmt.Sprintf("%s/%s/%s", kind, hint, c.name), func(t *testing.T) {
					env := newEnv(t, c)
					ords, custs := FromSlice(env, os), FromSlice(env, wide)
					got := Collect(joinOfKind(kind, ords, custs, func(c wideCustomer) int64 { return c.ID }, combine, hint))
					res, err := env.Execute(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					if g := sortJoined(got.Values()); !slices.Equal(g, want) {
						t.Fatalf("got %d rows, want %d", len(g), len(want))
					}
					if c.memory > 0 && hint == RepartitionHashSecond && spilled(res) == 0 {
						t.Errorf("a 4 MB build side under a 3 MiB budget spilled nothing")
					}
					// the variant the join's subtasks ran, as EXPLAIN ANALYZE shows it
					var variant string
					for _, n := range res.Plan.Nodes {
						if n.Kind == optimizer.Join {
							variant = n.Actual.Variant
						}
					}
					switch {
					case c.memory == 0 && !strings.HasPrefix(variant, "typed-join-"):
						t.Errorf("variant %q with no budget, want a typed join", variant)
					case c.memory > 0 && hint == RepartitionHashSecond && !strings.Contains(variant, "hybrid-hash-after-overflow"):
						t.Errorf("variant %q under a 3 MiB budget, want hybrid-hash-after-overflow", variant)
					}
				})
			}
		}
	}
}

// sliceCollector appends what it collects.
type sliceCollector[T any] struct{ vals []T }

func (c *sliceCollector[T]) Collect(b []T) error { c.vals = append(c.vals, b...); return nil }
func (c *sliceCollector[T]) End() error          { return nil }
