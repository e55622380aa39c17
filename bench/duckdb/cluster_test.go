package duckdb

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weirdata/weir/tpch"
)

// TestClusterCLI runs every TPC-H query with `weir tpch --jobmanager` on a
// JobManager and two TaskManagers of WEIR_BENCH_THREADS slots each, started
// from the weir binary on loopback, and checks each answer, printed by the
// submitting command, against DuckDB's. It logs each query's wall time
// (submission to answer). It runs only when WEIR_CLUSTER is set. With
// WEIR_CLUSTER_SPREAD set each query asks for the slots of both
// TaskManagers (--parallelism twice WEIR_BENCH_THREADS) and runs spread
// over them, which the JobManager's log must show for every query.
func TestClusterCLI(t *testing.T) {
	if os.Getenv("WEIR_CLUSTER") == "" {
		t.Skip("WEIR_CLUSTER is not set")
	}
	dir := dataDir(t)
	bin := buildWeir(t)
	jmLog := &syncBuffer{}
	restURL, rpcAddr := startJobManager(t, bin, jmLog)
	spread := os.Getenv("WEIR_CLUSTER_SPREAD") != ""
	for _, id := range []string{"tm1", "tm2"} {
		startProc(t, bin, "taskmanager", "--jobmanager", rpcAddr, "--slots", strconv.Itoa(threads()), "--id", id)
	}
	waitTaskManagers(t, restURL, 2)
	db := openDuckDB(t, dir, threads())
	for _, n := range tpch.Numbers() {
		t.Run(fmt.Sprintf("q%02d", n), func(t *testing.T) {
			args := []string{"tpch", "--data", dir, "--query", strconv.Itoa(n), "--jobmanager", restURL}
			if spread {
				args = append(args, "--parallelism", strconv.Itoa(2*threads()))
			}
			cmd := exec.Command(bin, args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			if err := cmd.Run(); err != nil {
				t.Fatalf("weir tpch --query %d --jobmanager: %v\n%s", n, err, stderr.String())
			}
			t.Logf("q%02d on the cluster: %.2f s wall", n, time.Since(start).Seconds())
			rows, err := csv.NewReader(&stdout).ReadAll()
			if err != nil || len(rows) == 0 {
				t.Fatalf("weir's output is not CSV with a header: %v", err)
			}
			compareRows(t, rows[1:], duckRows(t, db, querySQL(t, n)))
		})
	}
	if spread {
		if got := strings.Count(jmLog.String(), "deployed spread over"); got != len(tpch.Numbers()) {
			t.Fatalf("%d queries ran spread, want %d", got, len(tpch.Numbers()))
		}
	}
}

// waitTaskManagers waits until n TaskManagers registered with the
// JobManager at restURL (GET /taskmanagers), so that the first query finds
// every slot.
func waitTaskManagers(t *testing.T, restURL string, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(restURL + "/taskmanagers")
		if err == nil {
			var body struct {
				TaskManagers []json.RawMessage `json:"taskmanagers"`
			}
			err = json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if err == nil && len(body.TaskManagers) >= n {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%d TaskManagers did not register in 30 s", n)
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startProc starts the weir binary with args until the test ends.
func startProc(t *testing.T, bin string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		if t.Failed() {
			t.Logf("weir %s:\n%s", args[0], stderr.String())
		}
	})
}

// startJobManager starts a JobManager on free loopback ports and returns
// its REST URL and RPC address, from the line it prints when it listens;
// the rest of its log goes to log.
func startJobManager(t *testing.T, bin string, log io.Writer) (restURL, rpcAddr string) {
	t.Helper()
	cmd := exec.Command(bin, "jobmanager", "--checkpoint-dir", t.TempDir(), "--rest-address", "127.0.0.1:0", "--rpc-address", "127.0.0.1:0")
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		pw.Close()
	})
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if _, err := fmt.Sscanf(sc.Text(), "weir: JobManager: rpc %s rest %s", &rpcAddr, &restURL); err == nil {
			go io.Copy(log, pr)
			return restURL, strings.TrimSuffix(rpcAddr, ",")
		}
	}
	t.Fatal("the JobManager ended before it listened")
	return "", ""
}
