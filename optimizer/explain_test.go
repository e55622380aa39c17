package optimizer

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/weirdata/weir/internal/golden"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The plans below are built by hand with every decision set, so that the
// renderings do not depend on a planner.

// wordCountPlan is source -> map -> reduce (with a combiner) -> sink.
func wordCountPlan() *Plan {
	src := &Node{ID: 0, Name: "lines at wc.go:10", Kind: Source, Parallelism: 4,
		Decision: Decision{Estimate: Estimate{Rows: 120000, Bytes: 7_680_000}, Cost: Costs{CPU: 120000},
			Cumulative: Costs{CPU: 120000}}}
	words := &Node{ID: 1, Name: "flatMap at wc.go:11", Kind: Map, Inputs: []*Node{src}, Parallelism: 4,
		Decision: Decision{Ship: []Ship{Forward}, Exchange: []Exchange{Pipelined},
			Estimate: Estimate{Rows: 1_200_000, Bytes: 38_400_000}, Cost: Costs{CPU: 1_200_000},
			Cumulative: Costs{CPU: 1_320_000}, Notes: []string{"chained into #0"}}}
	counts := &Node{ID: 2, Name: "reduce at wc.go:12", Kind: Reduce, Inputs: []*Node{words}, Parallelism: 4,
		Keyed: []bool{true}, Combinable: true,
		Decision: Decision{Ship: []Ship{Hash}, Exchange: []Exchange{Pipelined}, Local: HashAggregate, Combine: true,
			Estimate: Estimate{Rows: 5300, Bytes: -1}, Cost: Costs{Network: 169_600, Disk: 0, CPU: 1_205_300.5},
			Cumulative: Costs{Network: 169_600, CPU: 2_525_300.5},
			Notes:      []string{"combiner before the shuffle: 5.3K groups of 1.2M rows", "HASH(word)"}}}
	sink := &Node{ID: 3, Name: "collect at wc.go:13", Kind: Sink, Inputs: []*Node{counts}, Parallelism: 1,
		Decision: Decision{Ship: []Ship{Rebalance}, Exchange: []Exchange{Blocking},
			Estimate: Estimate{Rows: 5300, Bytes: -1}, Cost: Costs{Network: 169_600, CPU: 5300},
			Cumulative: Costs{Network: 339_200, CPU: 2_530_600.5}}}
	return &Plan{Nodes: []*Node{src, words, counts, sink}, Memory: 64 << 20}
}

// broadcastJoinPlan joins a large source with a small one it broadcasts; the
// names need escaping in DOT.
func broadcastJoinPlan() *Plan {
	big := &Node{ID: 0, Name: `orders "2024"`, Kind: Source, Parallelism: 2,
		Decision: Decision{Estimate: Estimate{Rows: 1_500_000, Bytes: 96_000_000}}}
	small := &Node{ID: 1, Name: `nation\table`, Kind: Source, Parallelism: 2,
		Decision: Decision{Estimate: Estimate{Rows: 25, Bytes: 1600}}}
	join := &Node{ID: 2, Name: "join\non nationkey", Kind: Join, Inputs: []*Node{big, small}, Parallelism: 2,
		Keyed: []bool{true, true},
		Decision: Decision{Ship: []Ship{Forward, Broadcast}, Exchange: []Exchange{Pipelined, Blocking},
			Local: HybridHashBuildSecond, Estimate: Estimate{Rows: 1_500_000, Bytes: 144_000_000},
			Cost: Costs{Network: 3200, CPU: 1_500_025}, Cumulative: Costs{Network: 3200, CPU: 1_500_025},
			Notes: []string{"broadcast the smaller input (25 rows)"}}}
	sink := &Node{ID: 3, Name: "output", Kind: Sink, Inputs: []*Node{join}, Parallelism: 2,
		Decision: Decision{Ship: []Ship{Forward}, Exchange: []Exchange{Pipelined},
			Estimate: Estimate{Rows: 1_500_000, Bytes: 144_000_000}, Cumulative: Costs{Network: 3200, CPU: 1_500_025}}}
	return &Plan{Nodes: []*Node{big, small, join, sink}}
}

// diamondPlan is a DAG: one source feeds a map and a sort-merge join's other
// side through a filter, and both rejoin; nothing is estimated.
func diamondPlan() *Plan {
	src := &Node{ID: 0, Name: "edges", Kind: Source, Parallelism: 3,
		Decision: Decision{Estimate: Estimate{Rows: -1, Bytes: -1}}}
	deg := &Node{ID: 1, Name: "degrees", Kind: Reduce, Inputs: []*Node{src}, Parallelism: 3, Keyed: []bool{true},
		Decision: Decision{Ship: []Ship{Hash}, Exchange: []Exchange{Pipelined}, InputLocal: []InputLocal{LocalCombiningSort},
			Local: SortGroup, Estimate: Estimate{Rows: -1, Bytes: -1}}}
	filt := &Node{ID: 2, Name: "no self-loops", Kind: Map, Inputs: []*Node{src}, Parallelism: 3,
		Decision: Decision{Ship: []Ship{Forward}, Exchange: []Exchange{Pipelined}, Estimate: Estimate{Rows: -1, Bytes: -1}}}
	join := &Node{ID: 3, Name: "annotate", Kind: Join, Inputs: []*Node{filt, deg}, Parallelism: 3, Keyed: []bool{true, true},
		Decision: Decision{Ship: []Ship{Hash, Forward}, Exchange: []Exchange{Blocking, Pipelined},
			InputLocal: []InputLocal{LocalSort, LocalSort}, Local: SortMerge, Estimate: Estimate{Rows: -1, Bytes: -1},
			Notes: []string{"reuses HASH(vertex) of #1"}}}
	sink := &Node{ID: 4, Name: "print", Kind: Sink, Inputs: []*Node{join}, Parallelism: 1,
		Decision: Decision{Ship: []Ship{Rebalance}, Exchange: []Exchange{Pipelined}, Estimate: Estimate{Rows: -1, Bytes: -1}}}
	return &Plan{Nodes: []*Node{src, deg, filt, join, sink}}
}

// analyzedPlan is wordCountPlan after a run (EXPLAIN ANALYZE).
func analyzedPlan() *Plan {
	p := wordCountPlan()
	p.Nodes[0].Actual = &Actual{Rows: 118_000, Time: 41*time.Millisecond + 300*time.Microsecond, PeakMemory: 0}
	p.Nodes[1].Actual = &Actual{Rows: 1_190_311, Time: 41*time.Millisecond + 300*time.Microsecond}
	p.Nodes[2].Actual = &Actual{Rows: 5211, Time: 2*time.Second + 120*time.Millisecond, PeakMemory: 16 << 20,
		Spilled: 3_500_000, Replanned: true, Variant: "typed-dense+serialized-hash-after-overflow"}
	p.Nodes[3].Actual = &Actual{Rows: 5211, Time: 800 * time.Microsecond, PeakMemory: 1 << 10}
	return p
}

var explainPlans = []struct {
	name string
	plan func() *Plan
}{
	{"wordcount", wordCountPlan},
	{"broadcast_join", broadcastJoinPlan},
	{"diamond", diamondPlan},
	{"analyze", analyzedPlan},
}

func TestExplainGolden(t *testing.T) {
	for _, c := range explainPlans {
		t.Run(c.name, func(t *testing.T) {
			p := c.plan()
			dir := filepath.Join("testdata", "explain")
			golden.Check(t, filepath.Join(dir, c.name+".txt"), p.Text())
			js, err := p.JSON()
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join(dir, c.name+".json"), string(js))
			golden.Check(t, filepath.Join(dir, c.name+".dot"), p.DOT())
		})
	}
}

// TestTextStructure checks what the text tree must hold whatever the golden
// files say: every node in full exactly once, one line per edge, notes.
func TestTextStructure(t *testing.T) {
	full := regexp.MustCompile(`#(\d+) [A-Z][A-Za-z]* "`)
	ref := regexp.MustCompile(`#(\d+) \(see above\)$`)
	note := regexp.MustCompile(`^[│ ]*-- `)
	for _, c := range explainPlans {
		p := c.plan()
		text := p.Text()
		if p.Text() != text {
			t.Errorf("%s: Text is not stable", c.name)
		}
		seen := map[string]int{}
		refs, notes, edges := 0, 0, 0
		for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
			if note.MatchString(line) {
				notes++
				continue
			}
			if strings.Contains(line, "─ in") {
				edges++
			}
			if m := ref.FindStringSubmatch(line); m != nil {
				refs++
				continue
			}
			m := full.FindStringSubmatch(line)
			if m == nil {
				t.Errorf("%s: line %q is neither an operator, a reference nor a note", c.name, line)
				continue
			}
			seen[m[1]]++
			if hasActual := strings.Contains(line, "| actual rows="); hasActual != (c.name == "analyze") {
				t.Errorf("%s: line %q: actual shown %v", c.name, line, hasActual)
			}
		}
		wantEdges, wantNotes, multi := 0, 0, 0
		consumers := map[*Node]int{}
		for _, n := range p.Nodes {
			if seen[fmt.Sprint(n.ID)] != 1 {
				t.Errorf("%s: #%d printed in full %d times, want once", c.name, n.ID, seen[fmt.Sprint(n.ID)])
			}
			wantEdges += len(n.Inputs)
			wantNotes += len(n.Decision.Notes)
			for _, in := range n.Inputs {
				consumers[in]++
			}
		}
		for _, k := range consumers {
			multi += k - 1
		}
		if edges != wantEdges || notes != wantNotes || refs != multi {
			t.Errorf("%s: %d edges, %d notes, %d references; want %d, %d, %d:\n%s",
				c.name, edges, notes, refs, wantEdges, wantNotes, multi, text)
		}
	}
}

func TestTextLine(t *testing.T) {
	p := wordCountPlan()
	want := `#2 Reduce "reduce at wc.go:12" p=4 local=HASH_AGGREGATE combine est(rows=5.3K bytes=?) ` +
		`cost(net=169.6K disk=0 cpu=1.2M) total(net=169.6K disk=0 cpu=2.5M)`
	if got := operatorLine(p.Nodes[2]); got != want {
		t.Errorf("operator line\n%s\nwant\n%s", got, want)
	}
	if got := edgeText(diamondPlan().Nodes[3], 0); got != "in0:HASH/BLOCKING/SORT" {
		t.Errorf("edge %q", got)
	}
	// Unplanned: no decisions at all.
	n := &Node{ID: 7, Kind: Map, Inputs: []*Node{{ID: 6}}}
	if got := edgeText(n, 0); got != "in0:?/?" {
		t.Errorf("undecided edge %q", got)
	}
}

func TestHuman(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {12, "12"}, {12.5, "12.5"}, {999, "999"}, {1000, "1K"}, {1234, "1.2K"}, {999_949, "999.9K"},
		{999_960, "1M"}, {3_400_000, "3.4M"}, {5e9, "5G"}, {-1, "?"}, {1e30, "1000000000000E"},
	} {
		if got := human(c.v); got != c.want {
			t.Errorf("human(%v) = %q, want %q", c.v, got, c.want)
		}
	}
	if got := humanCount(-1); got != "?" {
		t.Errorf("humanCount(-1) = %q", got)
	}
}

func TestJSONFields(t *testing.T) {
	for _, c := range explainPlans {
		p := c.plan()
		b, err := p.JSON()
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Nodes []map[string]json.RawMessage `json:"nodes"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(doc.Nodes) != len(p.Nodes) {
			t.Fatalf("%s: %d nodes, want %d", c.name, len(doc.Nodes), len(p.Nodes))
		}
		for i, jn := range doc.Nodes {
			n := p.Nodes[i]
			for _, f := range []string{"id", "operator", "name", "driver_strategy", "parallelism", "estimates",
				"costs", "cumulative_costs", "notes", "inputs", "combine"} {
				if _, ok := jn[f]; !ok {
					t.Errorf("%s: node %d lacks %q", c.name, n.ID, f)
				}
			}
			if _, ok := jn["actual"]; ok != (n.Actual != nil) {
				t.Errorf("%s: node %d: actual present %v", c.name, n.ID, ok)
			}
			var typed struct {
				ID        int
				Operator  string
				Name      string
				Estimates struct{ Rows, Bytes *int64 }
				Inputs    []struct {
					ID            int
					ShipStrategy  string `json:"ship_strategy"`
					LocalStrategy string `json:"local_strategy"`
					ExchangeMode  string `json:"exchange_mode"`
				}
				Actual *struct {
					Rows   int64
					TimeMS float64 `json:"time_ms"`
				}
			}
			raw, _ := json.Marshal(jn)
			if err := json.Unmarshal(raw, &typed); err != nil {
				t.Fatal(err)
			}
			if typed.ID != n.ID || typed.Operator != n.Kind.String() || typed.Name != n.Name {
				t.Errorf("%s: node %+v", c.name, typed)
			}
			if (typed.Estimates.Rows == nil) != (n.Decision.Estimate.Rows < 0) ||
				(typed.Estimates.Rows != nil && *typed.Estimates.Rows != n.Decision.Estimate.Rows) {
				t.Errorf("%s: node %d: estimated rows %v, want %d", c.name, n.ID, typed.Estimates.Rows, n.Decision.Estimate.Rows)
			}
			if len(typed.Inputs) != len(n.Inputs) {
				t.Fatalf("%s: node %d: %d inputs", c.name, n.ID, len(typed.Inputs))
			}
			for k, in := range typed.Inputs {
				if in.ID != n.Inputs[k].ID || in.ShipStrategy != n.Decision.Ship[k].String() ||
					in.ExchangeMode != n.Decision.Exchange[k].String() || in.LocalStrategy != inputLocal(n, k).String() {
					t.Errorf("%s: node %d input %d: %+v", c.name, n.ID, k, in)
				}
			}
			if n.Actual != nil && (typed.Actual.Rows != n.Actual.Rows ||
				typed.Actual.TimeMS != float64(n.Actual.Time.Microseconds())/1000) {
				t.Errorf("%s: node %d: actual %+v, want %+v", c.name, n.ID, typed.Actual, n.Actual)
			}
		}
	}
}

// dotStatement matches the statements DOT renders: node and edge statements
// with a bracketed attribute list of key=value pairs whose values are quoted
// strings (with escapes) or bare words.
var (
	dotValue    = `(?:"(?:[^"\\\n]|\\.)*"|[A-Za-z0-9_.]+)`
	dotAttrs    = `\[[a-z]+=` + dotValue + `(?:, [a-z]+=` + dotValue + `)*\]`
	dotNodeStmt = regexp.MustCompile(`^  n(\d+) ` + dotAttrs + `;$`)
	dotEdgeStmt = regexp.MustCompile(`^  n(\d+) -> n(\d+) ` + dotAttrs + `;$`)
	dotDefault  = regexp.MustCompile(`^  (?:rankdir=BT|(?:node|edge) ` + dotAttrs + `);$`)
)

func TestDOTStructure(t *testing.T) {
	for _, c := range explainPlans {
		p := c.plan()
		dot := p.DOT()
		lines := strings.Split(strings.TrimSuffix(dot, "\n"), "\n")
		if lines[0] != "digraph plan {" || lines[len(lines)-1] != "}" {
			t.Fatalf("%s: not a digraph:\n%s", c.name, dot)
		}
		nodes := map[string]bool{}
		edges := map[string]int{}
		for _, l := range lines[1 : len(lines)-1] {
			if m := dotNodeStmt.FindStringSubmatch(l); m != nil {
				nodes[m[1]] = true
				continue
			}
			if m := dotEdgeStmt.FindStringSubmatch(l); m != nil {
				edges[m[1]+"->"+m[2]]++
				if strings.Contains(l, "BLOCKING") != strings.Contains(l, "dashed") ||
					strings.Contains(l, "BROADCAST") != strings.Contains(l, "bold") {
					t.Errorf("%s: edge style does not match its strategy: %s", c.name, l)
				}
				continue
			}
			if !dotDefault.MatchString(l) {
				t.Errorf("%s: not a DOT statement: %q", c.name, l)
			}
		}
		want := map[string]int{}
		for _, n := range p.Nodes {
			if !nodes[fmt.Sprint(n.ID)] {
				t.Errorf("%s: no DOT node for #%d", c.name, n.ID)
			}
			for _, in := range n.Inputs {
				want[fmt.Sprintf("%d->%d", in.ID, n.ID)]++
			}
		}
		if fmt.Sprint(edges) != fmt.Sprint(want) {
			t.Errorf("%s: edges %v, want one per input %v", c.name, edges, want)
		}
	}
}

func TestDOTEscape(t *testing.T) {
	for in, want := range map[string]string{
		`plain`:        `plain`,
		`a "quoted" b`: `a \"quoted\" b`,
		`back\slash`:   `back\\slash`,
		"two\nlines":   `two\nlines`,
		"crlf\r\nend":  `crlf\nend`,
		`\"`:           `\\\"`,
	} {
		if got := dotEscape(in); got != want {
			t.Errorf("dotEscape(%q) = %q, want %q", in, got, want)
		}
	}
}
