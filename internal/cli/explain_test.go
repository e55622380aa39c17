package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// answerRows returns the number of result rows of TPC-H query n in the answers
// DuckDB computed over the repository's data (testdata/tpch/answers).
func answerRows(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(tpchData, "answers", "sf0.01", file))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(strings.TrimSuffix(string(b), "\n"), "\n") // lines after the header
}

// planJSON is the part of weir explain's JSON the tests read.
type planJSON struct {
	Nodes []struct {
		ID             int      `json:"id"`
		Operator       string   `json:"operator"`
		Name           string   `json:"name"`
		DriverStrategy string   `json:"driver_strategy"`
		Parallelism    int      `json:"parallelism"`
		Combine        *bool    `json:"combine"`
		Notes          []string `json:"notes"`
		Estimates      *struct {
			Rows, Bytes *int64
		} `json:"estimates"`
		Costs           *struct{ Network, Disk, CPU float64 } `json:"costs"`
		CumulativeCosts *struct{ Network, Disk, CPU float64 } `json:"cumulative_costs"`
		Inputs          []struct {
			ID            *int   `json:"id"`
			ShipStrategy  string `json:"ship_strategy"`
			LocalStrategy string `json:"local_strategy"`
			ExchangeMode  string `json:"exchange_mode"`
		} `json:"inputs"`
		Actual *struct {
			Rows   int64   `json:"rows"`
			TimeMS float64 `json:"time_ms"`
		} `json:"actual"`
	} `json:"nodes"`
}

func explainJSON(t *testing.T, args ...string) planJSON {
	t.Helper()
	code, stdout, stderr := runWeir(context.Background(), append([]string{"explain", "tpch", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var p planJSON
	if err := json.Unmarshal([]byte(stdout), &p); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	return p
}

func TestExplainTPCHJSON(t *testing.T) {
	p := explainJSON(t, "--data", tpchData, "--query", "3", "--parallelism", "2")
	if len(p.Nodes) < 4 {
		t.Fatalf("%d nodes: q3 reads three tables and has a sink", len(p.Nodes))
	}
	ids := map[int]bool{}
	sources, sinks := 0, 0
	for _, n := range p.Nodes {
		if n.Operator == "" || n.Name == "" || n.DriverStrategy == "" || n.Parallelism < 1 || n.Combine == nil ||
			n.Estimates == nil || n.Costs == nil || n.CumulativeCosts == nil || n.Notes == nil || n.Inputs == nil {
			t.Errorf("node %d lacks fields: %+v", n.ID, n)
		}
		if n.Actual != nil {
			t.Errorf("node %d has actuals without --analyze", n.ID)
		}
		for _, in := range n.Inputs {
			if in.ID == nil || !ids[*in.ID] {
				t.Errorf("node %d: input %v is not a node listed before it", n.ID, in.ID)
			}
			if !regexp.MustCompile(`^(FORWARD|HASH|RANGE|BROADCAST|REBALANCE|CUSTOM)$`).MatchString(in.ShipStrategy) ||
				!regexp.MustCompile(`^(NONE|SORT|COMBININGSORT)$`).MatchString(in.LocalStrategy) ||
				!regexp.MustCompile(`^(PIPELINED|BLOCKING)$`).MatchString(in.ExchangeMode) {
				t.Errorf("node %d: input %+v", n.ID, in)
			}
		}
		ids[n.ID] = true
		switch n.Operator {
		case "Source":
			sources++
		case "Sink":
			sinks++
		}
	}
	if sources != 3 || sinks != 1 {
		t.Errorf("%d sources and %d sinks, want 3 (customer, orders, lineitem) and 1", sources, sinks)
	}
}

func TestExplainTPCHTextAndDOT(t *testing.T) {
	args := []string{"--data", tpchData, "--query", "3", "--parallelism", "2"}
	p := explainJSON(t, args...)
	inputs := 0
	for _, n := range p.Nodes {
		inputs += len(n.Inputs)
	}

	code, text, stderr := runWeir(context.Background(), append([]string{"explain", "tpch"}, args...)...)
	if code != 0 {
		t.Fatalf("text: exit %d, stderr %q", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "#") || !strings.Contains(lines[0], " Sink ") {
		t.Errorf("the tree does not start at the sink:\n%s", text)
	}
	if got := strings.Count(text, "─ in"); got != inputs {
		t.Errorf("text has %d edges, JSON %d inputs:\n%s", got, inputs, text)
	}
	if strings.Contains(text, "actual") {
		t.Errorf("text shows actuals without --analyze:\n%s", text)
	}

	code, dot, stderr := runWeir(context.Background(), append([]string{"explain", "tpch", "--format", "dot"}, args...)...)
	if code != 0 {
		t.Fatalf("dot: exit %d, stderr %q", code, stderr)
	}
	if !strings.HasPrefix(dot, "digraph") || !strings.HasSuffix(dot, "}\n") {
		t.Errorf("not a digraph:\n%s", dot)
	}
	if got := strings.Count(dot, " -> "); got != inputs {
		t.Errorf("DOT has %d edges, want one per input (%d):\n%s", got, inputs, dot)
	}
	if got := len(regexp.MustCompile(`(?m)^  n\d+ \[label=`).FindAllString(dot, -1)); got != len(p.Nodes) {
		t.Errorf("DOT has %d nodes, want %d", got, len(p.Nodes))
	}
}

// corruptLineitem returns a TPC-H directory whose lineitem.parquet opens but
// fails to read (as in TestTPCHErrors), with the other tables linked.
func corruptLineitem(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	ents, err := os.ReadDir(tpchData)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".parquet") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(tpchData, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "lineitem.parquet" {
			for i := 4; i < len(data)/2; i++ {
				data[i] = byte(i * 7)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestExplainDoesNotRun plans a query over a table that cannot be read: the
// plan comes out, and only running it fails.
func TestExplainDoesNotRun(t *testing.T) {
	dir := corruptLineitem(t)
	for _, args := range [][]string{
		{"explain", "tpch", "--data", dir, "--query", "6", "--parallelism", "2"},
		{"explain", "tpch", "--data", dir, "--query", "6", "--parallelism", "2", "--format", "json"},
	} {
		code, stdout, stderr := runWeir(context.Background(), args...)
		if code != 0 || !strings.Contains(stdout, "Sink") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q: want the plan", args, code, stdout, stderr)
		}
	}
	for _, args := range [][]string{
		{"explain", "tpch", "--analyze", "--data", dir, "--query", "6", "--parallelism", "2"},
		{"tpch", "--data", dir, "--query", "6", "--parallelism", "2"},
	} {
		code, _, stderr := runWeir(context.Background(), args...)
		if code != 1 || !strings.Contains(stderr, "lineitem") {
			t.Errorf("%v: exit %d, stderr %q: want the read to fail", args, code, stderr)
		}
	}
}

// sinkActualRows returns the actual rows on the text tree's first line (the sink).
func sinkActualRows(t *testing.T, text string) int {
	t.Helper()
	first, _, _ := strings.Cut(text, "\n")
	m := regexp.MustCompile(`^#\d+ Sink .*\| actual rows=(\d+) `).FindStringSubmatch(first)
	if m == nil {
		t.Fatalf("the first line is not an analyzed sink:\n%s", text)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func TestExplainAnalyzeTPCH(t *testing.T) {
	for _, c := range []struct {
		query, answers string
	}{{"3", "q03.csv"}, {"1", "q01.csv"}} {
		want := answerRows(t, c.answers)
		args := []string{"--data", tpchData, "--query", c.query, "--parallelism", "2"}
		code, text, stderr := runWeir(context.Background(), append([]string{"explain", "tpch", "--analyze"}, args...)...)
		if code != 0 {
			t.Fatalf("q%s: exit %d, stderr %q", c.query, code, stderr)
		}
		if got := sinkActualRows(t, text); got != want {
			t.Errorf("q%s: sink actual rows=%d, want the answer's %d rows:\n%s", c.query, got, want, text)
		}
		if bad := regexp.MustCompile(`(?m)^[^#│└├ ]`).FindString(text); bad != "" {
			t.Errorf("q%s: a line is not part of the plan (the result rows printed?):\n%s", c.query, text)
		}

		p := explainJSON(t, append([]string{"--analyze"}, args...)...)
		for _, n := range p.Nodes {
			if n.Actual == nil {
				t.Fatalf("q%s: node %d has no actual", c.query, n.ID)
			}
			if n.Operator == "Sink" && n.Actual.Rows != int64(want) {
				t.Errorf("q%s: JSON sink actual rows %d, want %d", c.query, n.Actual.Rows, want)
			}
		}

		// The sink received exactly the rows weir tpch prints.
		code, csv, stderr := runWeir(context.Background(), append([]string{"tpch"}, args...)...)
		if code != 0 || strings.Count(csv, "\n") != want+1 {
			t.Errorf("q%s: weir tpch: exit %d, %d CSV lines, stderr %q; want %d rows", c.query, code, strings.Count(csv, "\n"), stderr, want)
		}
	}
}

func TestExplainRunExample(t *testing.T) {
	out := t.TempDir()
	output := filepath.Join(out, "counts.txt")
	code, stdout, stderr := runWeir(context.Background(), "explain", "wordcount", "--output", output,
		"--parallelism", "2")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{" Sink ", " Reduce ", "local=HASH_AGGREGATE combine", "in0:HASH/"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, stdout)
		}
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("weir explain ran the job: %v", ents)
	}
	code, stdout, stderr = runWeir(context.Background(), "explain", "enum-triangles", "--format", "json")
	var p planJSON
	if code != 0 || json.Unmarshal([]byte(stdout), &p) != nil || len(p.Nodes) == 0 {
		t.Errorf("explain enum-triangles --format json: exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}
}

// TestExplainEveryJob explains every job of weir run and weir tpch in every
// format, on its default data: the plan goes to stdout, nothing to stderr, and
// the three formats show the same operators and edges.
func TestExplainEveryJob(t *testing.T) {
	for _, j := range explainJobs() {
		args := []string{"explain", j.name, "--parallelism", "2"}
		if j.name == "tpch" {
			args = append(args, "--data", tpchData, "--query", "3")
		}
		code, text, stderr := runWeir(context.Background(), args...)
		if code != 0 || stderr != "" {
			t.Fatalf("%v: exit %d, stderr %q", args, code, stderr)
		}
		code, js, stderr := runWeir(context.Background(), append(args, "--format", "json")...)
		var p planJSON
		if code != 0 || stderr != "" || json.Unmarshal([]byte(js), &p) != nil {
			t.Fatalf("%v --format json: exit %d, stderr %q, stdout:\n%s", args, code, stderr, js)
		}
		code, dot, stderr := runWeir(context.Background(), append(args, "--format", "dot")...)
		if code != 0 || stderr != "" || !strings.HasPrefix(dot, "digraph") {
			t.Fatalf("%v --format dot: exit %d, stderr %q, stdout:\n%s", args, code, stderr, dot)
		}
		inputs, sinks := 0, 0
		for _, n := range p.Nodes {
			inputs += len(n.Inputs)
			if n.Operator == "Sink" {
				sinks++
			}
			if n.Actual != nil {
				t.Errorf("%s: node %d has actuals without --analyze", j.name, n.ID)
			}
		}
		if sinks == 0 {
			t.Errorf("%s: the plan has no sink:\n%s", j.name, js)
		}
		if got := strings.Count(text, "─ in"); got != inputs {
			t.Errorf("%s: text has %d edges, JSON %d inputs:\n%s", j.name, got, inputs, text)
		}
		if got := strings.Count(dot, " -> "); got != inputs {
			t.Errorf("%s: DOT has %d edges, JSON %d inputs:\n%s", j.name, got, inputs, dot)
		}
	}
}

// TestExplainIterationExchanges checks that weir explain prints the exchanges
// an iteration job runs with (the loops' fix-ups included: edges inside a loop
// pipelined, a loop's feeders blocking), the same as the plan weir explain
// --analyze prints after running it.
func TestExplainIterationExchanges(t *testing.T) {
	edges := regexp.MustCompile(`in\d+:[A-Z]+/[A-Z]+`)
	for _, job := range []string{"connected-components", "pagerank", "sssp", "kmeans"} {
		code, planned, stderr := runWeir(context.Background(), "explain", job, "--parallelism", "2")
		if code != 0 {
			t.Fatalf("explain %s: exit %d, stderr %q", job, code, stderr)
		}
		code, analyzed, stderr := runWeir(context.Background(), "explain", job, "--analyze", "--parallelism", "2")
		if code != 0 {
			t.Fatalf("explain %s --analyze: exit %d, stderr %q", job, code, stderr)
		}
		got, want := edges.FindAllString(planned, -1), edges.FindAllString(analyzed, -1)
		if len(got) == 0 || !slices.Equal(got, want) {
			t.Errorf("%s: explain shows the edges %v, the job ran with %v\n%s", job, got, want, planned)
		}
		if job == "kmeans" && !strings.Contains(planned, "its producer also feeds an iteration") {
			t.Errorf("explain %s lacks the note on a loop's feeder:\n%s", job, planned)
		}
	}
}

// TestExplainAnalyzeRunExample checks that weir explain --analyze prints the
// plan with actual rows on stdout, and not the result: the sink received
// exactly the lines a plain run prints.
func TestExplainAnalyzeRunExample(t *testing.T) {
	code, stdout, stderr := runWeir(context.Background(), "explain", "wordcount", "--analyze", "--parallelism", "2")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	_, plain, _ := runWeir(context.Background(), "run", "wordcount", "--parallelism", "2")
	if plain == "" {
		t.Fatal("weir run wordcount printed nothing")
	}
	if got, want := sinkActualRows(t, stdout), strings.Count(plain, "\n"); got != want {
		t.Errorf("sink actual rows=%d, want the %d lines of a plain run:\n%s", got, want, stdout)
	}
	if bad := regexp.MustCompile(`(?m)^[^#│└├ ]`).FindString(stdout); bad != "" {
		t.Errorf("a line is not part of the plan (the result printed?):\n%s", stdout)
	}
}

func TestExplainUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"explain", "tpch", "--data", tpchData, "--query", "3", "--format", "yaml"},
		{"explain", "weblog", "--format", "TEXT"},
		{"explain", "pagerank", "--iterations", "0"},
		{"explain", "tpch", "--data", tpchData, "--query", "23"},
		{"explain", "tpch", "--query", "3"},
		{"explain", "sort"},
		{"tpch", "--data", tpchData, "--query", "3", "--explain"},
		{"run", "wordcount", "--explain"},
		{"gen", "lines", "--out", "x", "--size", "1KiB", "--memory", "1GiB"},
	} {
		code, stdout, stderr := runWeir(context.Background(), args...)
		if code != 1 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "--help") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q: want a one-line usage error", args, code, stdout, stderr)
		}
	}
}
