package clustertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weirdata/weir/cluster/rest"
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
	bin, data, _, restURL, tms := tpchCluster(t, 2)
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

// tpchCluster starts a JobManager and TaskManagers tm1 and tm2 of slots
// slots each, and returns the weir binary, the SF 0.01 data, the
// JobManager, its REST URL and the TaskManagers, once both registered.
func tpchCluster(t *testing.T, slots int) (bin, data string, jm *proc, restURL string, tms []*proc) {
	t.Helper()
	bin = weir(t)
	data, err := filepath.Abs(tpchData)
	if err != nil {
		t.Fatal(err)
	}
	jm, rpcAddr, restURL := startJobManager(t, bin, t.TempDir())
	for _, id := range []string{"tm1", "tm2"} {
		tms = append(tms, start(t, bin, "taskmanager", "--jobmanager", rpcAddr, "--slots", fmt.Sprint(slots), "--id", id, "--memory", "256MiB"))
	}
	waitTaskManagers(t, restURL, 2)
	return bin, data, jm, restURL, tms
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

// TestTPCHSpread runs the 22 TPC-H queries with `weir tpch --jobmanager
// --parallelism 2` on two TaskManagers of one slot each: no TaskManager
// can hold a query, so each runs spread over both, which exchange its
// records over their data planes. Each answer equals DuckDB's.
func TestTPCHSpread(t *testing.T) {
	bin, data, jm, restURL, tms := tpchCluster(t, 1)
	for n := 1; n <= 22; n++ {
		cmd := exec.Command(bin, "tpch", "--data", data, "--query", fmt.Sprint(n), "--parallelism", "2", "--jobmanager", restURL)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if err == nil {
			err = compareAnswer(stdout.String(), filepath.Join(data, "answers", "sf0.01", fmt.Sprintf("q%02d.csv", n)))
		}
		if err != nil {
			t.Errorf("q%d: %v\n%s", n, err, stderr.String())
		}
	}
	if got := strings.Count(jm.stderr.String(), "deployed spread over TaskManagers"); got != 22 {
		t.Errorf("%d queries ran spread, want 22", got)
	}
	for i, tm := range tms {
		if got := strings.Count(tm.stderr.String(), "share "+fmt.Sprint(i)+" of 2"); got == 0 {
			t.Errorf("TaskManager tm%d ran no share %d", i+1, i)
		}
	}
}

// waitTaskManagers waits until n TaskManagers registered.
func waitTaskManagers(t *testing.T, restURL string, n int) {
	t.Helper()
	c := rest.NewClient(restURL, "")
	deadline := time.Now().Add(20 * time.Second)
	for {
		tms, err := c.TaskManagers(context.Background())
		if err == nil && len(tms) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d TaskManagers registered (%v), want %d", len(tms), err, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTPCHSpreadShareLost: a spread query one of whose TaskManagers is
// stopped (SIGSTOP) before it runs its share fails once the other's
// shuffle and the JobManager's heartbeats give that TaskManager up; the
// JobManager cancels the other share and runs the query again on the
// TaskManager left, and its answer equals DuckDB's.
func TestTPCHSpreadShareLost(t *testing.T) {
	bin, data, jm, restURL, tms := tpchCluster(t, 1)
	if err := tms[1].cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "tpch", "--data", data, "--query", "9", "--parallelism", "2", "--jobmanager", restURL)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil {
		err = compareAnswer(stdout.String(), filepath.Join(data, "answers", "sf0.01", "q09.csv"))
	}
	if err != nil {
		t.Fatalf("q9: %v\n%s", err, stderr.String())
	}
	log := jm.stderr.String()
	for _, want := range []string{
		"attempt 1-1 deployed spread over TaskManagers tm1 (1), tm2 (1)",
		"attempt 1-2 deployed on TaskManager tm1 with 1 slots",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the JobManager's log has no %q", want)
		}
	}
	if !strings.Contains(log, "attempt 1-1 failed") {
		t.Errorf("the spread attempt did not fail")
	}
}

// TestWordCountSpread runs weir run wordcount --output spread over two
// TaskManagers (its input split by byte ranges between them): the file
// it commits equals the one an embedded run writes.
func TestWordCountSpread(t *testing.T) {
	bin := weir(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	var b strings.Builder
	for i := range 200000 {
		fmt.Fprintf(&b, "w%d the quick w%d brown fox\n", i%1009, i%13)
	}
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	embedded, spread := filepath.Join(dir, "embedded.txt"), filepath.Join(dir, "spread.txt")
	if out, err := exec.Command(bin, "run", "wordcount", "--input", in, "--output", embedded, "--parallelism", "2").CombinedOutput(); err != nil {
		t.Fatalf("embedded: %v\n%s", err, out)
	}
	jm, rpcAddr, restURL := startJobManager(t, bin, t.TempDir())
	for _, id := range []string{"tm1", "tm2"} {
		start(t, bin, "taskmanager", "--jobmanager", rpcAddr, "--slots", "1", "--id", id, "--memory", "256MiB")
	}
	waitTaskManagers(t, restURL, 2)
	if out, err := exec.Command(bin, "run", "wordcount", "--input", in, "--output", spread, "--parallelism", "2", "--jobmanager", restURL).CombinedOutput(); err != nil {
		t.Fatalf("spread: %v\n%s", err, out)
	}
	if !strings.Contains(jm.stderr.String(), "deployed spread over TaskManagers") {
		t.Fatal("the job did not run spread")
	}
	want, err := os.ReadFile(embedded)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(spread)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 || string(got) != string(want) {
		t.Fatalf("the spread run's output (%d bytes) differs from the embedded one's (%d bytes)", len(got), len(want))
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 3 {
		t.Fatalf("the output directory holds %d entries, want 3 (no temporary files left)", len(ents))
	}
}
