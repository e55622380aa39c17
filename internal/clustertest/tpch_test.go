package clustertest

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	answers "github.com/weirdata/weir/internal/oracle"
)

// tpchData is the SF 0.01 TPC-H data of the repository, with DuckDB's
// answers.
const tpchData = "../../testdata/tpch"

// TestTPCHCluster runs the 22 TPC-H queries with `weir tpch --jobmanager`
// on a JobManager and two TaskManagers of two slots, two queries at a
// time so that both TaskManagers run them: each query's answer, printed
// by the submitting command as the job printed it on its TaskManager,
// equals DuckDB's.
func TestTPCHCluster(t *testing.T) {
	bin := weir(t)
	data, err := filepath.Abs(tpchData)
	if err != nil {
		t.Fatal(err)
	}
	_, rpcAddr, restURL := startJobManager(t, bin, t.TempDir())
	var tms []*proc
	for _, id := range []string{"tm1", "tm2"} {
		tms = append(tms, start(t, bin, "taskmanager", "--jobmanager", rpcAddr, "--slots", "2", "--id", id, "--memory", "256MiB"))
	}
	queries := make(chan int, 22)
	for n := 1; n <= 22; n++ {
		queries <- n
	}
	close(queries)
	var wg sync.WaitGroup
	var mu sync.Mutex
	failures := map[int]string{}
	for range 2 {
		wg.Go(func() {
			for n := range queries {
				cmd := exec.Command(bin, "tpch", "--data", data, "--query", fmt.Sprint(n), "--jobmanager", restURL)
				var stdout, stderr strings.Builder
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				if err == nil {
					err = compareAnswer(stdout.String(), filepath.Join(data, "answers", "sf0.01", fmt.Sprintf("q%02d.csv", n)))
				}
				if err != nil {
					mu.Lock()
					failures[n] = fmt.Sprintf("%v\n%s", err, stderr.String())
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	for n := 1; n <= 22; n++ {
		if f, ok := failures[n]; ok {
			t.Errorf("q%d: %s", n, f)
		}
	}
	for i, tm := range tms {
		if !strings.Contains(tm.stderr.String(), "running job") {
			t.Errorf("TaskManager tm%d ran no query", i+1)
		}
	}
}

// compareAnswer compares a query's CSV output with DuckDB's answer file.
func compareAnswer(out, answer string) error {
	want, err := answers.ReadAnswer(answer)
	if err != nil {
		return err
	}
	got, err := answers.ParseCSV([]byte(out))
	if err != nil {
		return fmt.Errorf("the output: %w", err)
	}
	if len(got) == 1 && len(want) == 2 && len(want[1]) == 1 && want[1][0] == "" && strings.HasSuffix(out, "\n\n") {
		got = append(got, []string{""})
	}
	return answers.CompareAnswer(got, want)
}
