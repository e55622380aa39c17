package duckdb

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/tpch"
)

// rssSlack is what the process may hold beyond its budget: the Go runtime,
// the binary, goroutine stacks and what the budget does not account.
const rssSlack = 64 << 20

// TestBudgetCLI runs `weir tpch` as its own process for every query under
// WEIR_BUDGET (a size such as 128MiB) and checks each answer against
// DuckDB's (run with its memory_limit set to the same budget) and each peak
// RSS against the budget plus 64 MiB. It logs every query's wall time, peak
// RSS and DuckDB's time under the limit (an in-process query on views of the
// same files). It runs only when WEIR_BUDGET is set;
// WEIR_BUDGET_QUERIES (say "9,18,21") picks queries.
func TestBudgetCLI(t *testing.T) {
	budget := os.Getenv("WEIR_BUDGET")
	if budget == "" {
		t.Skip("WEIR_BUDGET is not set")
	}
	limit, err := parseSize(budget)
	if err != nil {
		t.Fatalf("WEIR_BUDGET=%q: %v", budget, err)
	}
	timeBin, err := exec.LookPath("/usr/bin/time")
	if err != nil {
		t.Skip("GNU time (/usr/bin/time) is not installed")
	}
	dir := dataDir(t)
	bin := buildWeir(t)
	// DuckDB is timed under the same limit; where it fails there, the
	// answer comes from DuckDB without one
	limited := openDuckDB(t, dir, threads())
	if _, err := limited.Exec(fmt.Sprintf("SET memory_limit = '%s'", budget)); err != nil {
		t.Fatal(err)
	}
	db := openDuckDB(t, dir, threads())
	queries := tpch.Numbers()
	if s := os.Getenv("WEIR_BUDGET_QUERIES"); s != "" {
		queries = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				t.Fatalf("WEIR_BUDGET_QUERIES=%q: %v", s, err)
			}
			queries = append(queries, n)
		}
	}
	for _, n := range queries {
		t.Run(fmt.Sprintf("q%02d", n), func(t *testing.T) {
			// GNU time forks weir from its own small process: a child started
			// straight from this one would report this process's peak RSS
			// (Linux keeps the high-water mark of the image exec replaced).
			cmd := exec.Command(timeBin, "-f", "maxrss=%M", bin, "tpch", "--data", dir, "--query", strconv.Itoa(n), "--memory", budget,
				"--parallelism", strconv.Itoa(threads()), "--tmp", t.TempDir())
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			if err := cmd.Run(); err != nil {
				t.Fatalf("weir tpch --query %d: %v\n%s", n, err, stderr.String())
			}
			wall := time.Since(start)
			rss, err := peakRSS(stderr.String())
			if err != nil {
				t.Fatal(err)
			}
			rows, err := csv.NewReader(&stdout).ReadAll()
			if err != nil || len(rows) == 0 {
				t.Fatalf("weir's output is not CSV with a header: %v", err)
			}
			start = time.Now()
			want, err := queryRows(limited, querySQL(t, n))
			duck := time.Since(start)
			if err != nil {
				t.Logf("q%02d --memory %s: %.2f s wall, peak RSS %d MiB; DuckDB with memory_limit %s failed: %v",
					n, budget, wall.Seconds(), rss>>20, budget, err)
				want = duckRows(t, db, querySQL(t, n))
			} else {
				t.Logf("q%02d --memory %s: %.2f s wall, peak RSS %d MiB; DuckDB with memory_limit %s %.2f s (weir/DuckDB %.2f)",
					n, budget, wall.Seconds(), rss>>20, budget, duck.Seconds(), wall.Seconds()/duck.Seconds())
			}
			compareRows(t, rows[1:], want)
			if rss > limit+rssSlack {
				t.Errorf("peak RSS %d MiB above the budget %s plus 64 MiB", rss>>20, budget)
			}
		})
	}
}

// peakRSS returns the bytes of GNU time's "maxrss=K" line (KiB) in stderr.
func peakRSS(stderr string) (int64, error) {
	i := strings.LastIndex(stderr, "maxrss=")
	if i < 0 {
		return 0, fmt.Errorf("no maxrss line in weir's stderr:\n%s", stderr)
	}
	kib, err := strconv.ParseInt(strings.TrimSpace(stderr[i+len("maxrss="):]), 10, 64)
	return kib << 10, err
}

// parseSize reads sizes such as 128MiB, 2GiB or 1048576.
func parseSize(s string) (int64, error) {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			return n * u.mult, err
		}
	}
	return strconv.ParseInt(s, 10, 64)
}

// buildWeir builds the main module's weir binary for the test.
func buildWeir(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "weir")
	build := exec.Command("go", "build", "-o", bin, "./cmd/weir")
	build.Dir = "../.." // the main module
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
