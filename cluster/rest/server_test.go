package rest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/weirdata/weir/cluster/rest"
	"github.com/weirdata/weir/cluster/rest/resttest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	jobA = "0123456789abcdef0123456789abcdef" // RUNNING
	jobB = "fedcba9876543210fedcba9876543210" // FINISHED
	// jobC is a well-formed id no fake holds.
	jobC = "11111111111111111111111111111111"
)

// newFake returns a leading Fake with the values the golden files hold.
func newFake() *resttest.Fake {
	return &resttest.Fake{
		OverviewValue: rest.Overview{TaskManagers: 2, SlotsTotal: 8, SlotsAvailable: 4, JobsRunning: 1, JobsFinished: 1,
			IsLeader: true, Version: "weir-test", Commit: "abc1234"},
		JobsValue: []rest.JobDetails{
			{
				JobOverview: rest.JobOverview{ID: jobA, Name: "window-stats", State: rest.StateRunning, Start: 1700000000000, End: -1,
					Duration: 5000, LastModification: 1700000004000},
				IsStoppable: true,
				Now:         1700000005000,
				Vertices: []rest.Vertex{
					{ID: "bc764cd8ddf7a0cff126f51c16239658", Name: "Source: events", Parallelism: 2, Status: rest.StateRunning,
						Start: 1700000000100, End: -1, Duration: 4900},
					{ID: "20ba6b65f97481d5570070de90e4e791", Name: "Window(TumblingEventTimeWindows(1000)) -> Sink: files", Parallelism: 2,
						Status: rest.StateRunning, Start: 1700000000200, End: -1, Duration: 4800},
				},
			},
			{
				JobOverview: rest.JobOverview{ID: jobB, Name: "wordcount", State: rest.StateFinished, Start: 1699999000000, End: 1699999060000,
					Duration: 60000, LastModification: 1699999060000},
				Now: 1700000005000,
			},
		},
		CheckpointsValue: map[string]rest.Checkpoints{
			jobA: {
				Counts: rest.CheckpointCounts{Restored: 1, Total: 12, InProgress: 1, Completed: 10, Failed: 1},
				Latest: rest.LatestCheckpoints{
					Completed: &rest.CompletedCheckpoint{ID: 11, Status: "COMPLETED", TriggerTimestamp: 1700000004000,
						LatestAckTimestamp: 1700000004200, ExternalPath: "s3://bucket/cp/" + jobA + "/chk-11"},
					Restored: &rest.RestoredCheckpoint{ID: 5, RestoreTimestamp: 1700000001000, ExternalPath: "s3://bucket/cp/" + jobA + "/chk-5"},
				},
			},
		},
		TaskManagersList: []rest.TaskManager{
			{ID: "tm-1", Path: "10.0.0.11:6124", DataPort: 6124, TimeSinceLastHeartbeat: 1700000004900, SlotsNumber: 4, FreeSlots: 2,
				Hardware: rest.Hardware{CPUCores: 4, ManagedMemory: 1 << 30}},
			{ID: "tm-2", Path: "10.0.0.12:6124", DataPort: 6124, TimeSinceLastHeartbeat: 1700000004800, SlotsNumber: 4, FreeSlots: 2,
				Hardware: rest.Hardware{CPUCores: 4}},
		},
		ExceptionsValue: map[string]rest.Exceptions{jobA: rest.NewExceptions([]rest.Exception{
			{Name: "attempt 1-1 failed", Stacktrace: "TaskManager tm-2 lost: no heartbeat for 5s", Timestamp: 1700000001000, TaskManagerID: "tm-2", Location: "10.0.0.12:6124"},
			{Name: "attempt 1-2 failed", Stacktrace: "csv: events.csv: row 7: column ts: bad time", Timestamp: 1700000003000, TaskManagerID: "tm-1", Location: "10.0.0.11:6124"},
		}, false)},
		StdoutValue: map[string][]byte{jobB: []byte("word,count\nweir,3\n")},
	}
}

// call sends method path with body (when not empty) and the token (when
// not empty) to the server at base, and returns the status and the body.
func call(t *testing.T, base, token, method, path, body string) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=UTF-8" {
		t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	return resp.StatusCode, b
}

// sameJSON fails t unless got and want are the same JSON value.
func sameJSON(t *testing.T, what string, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: answer %q: %v", what, got, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: want %q: %v", what, want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, got, want)
	}
}

func serve(t *testing.T, c rest.Cluster, token string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(rest.NewHandler(c, rest.HandlerOptions{Token: token}))
	t.Cleanup(func() {
		srv.Close()
		http.DefaultClient.CloseIdleConnections()
	})
	return srv
}

// TestGolden checks each endpoint's answer against a file written from
// Flink's field names and the values the Fake holds.
func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		name, method, path, body string
		pending                  int
		failure                  string
		status                   int
		golden                   string
	}{
		{name: "overview", method: "GET", path: "/overview", status: 200, golden: "overview.json"},
		{name: "jobs", method: "GET", path: "/jobs", status: 200, golden: "jobs.json"},
		{name: "jobs overview", method: "GET", path: "/jobs/overview", status: 200, golden: "jobs_overview.json"},
		{name: "job", method: "GET", path: "/jobs/" + jobA, status: 200, golden: "job.json"},
		{name: "job upper case", method: "GET", path: "/jobs/" + strings.ToUpper(jobA), status: 200, golden: "job.json"},
		{name: "job without vertices", method: "GET", path: "/jobs/" + jobB, status: 200, golden: "job_finished.json"},
		{name: "checkpoints", method: "GET", path: "/jobs/" + jobA + "/checkpoints", status: 200, golden: "checkpoints.json"},
		{name: "taskmanagers", method: "GET", path: "/taskmanagers", status: 200, golden: "taskmanagers.json"},
		{name: "exceptions", method: "GET", path: "/jobs/" + jobA + "/exceptions", status: 200, golden: "exceptions.json"},
		{name: "no exceptions", method: "GET", path: "/jobs/" + jobB + "/exceptions", status: 200, golden: "exceptions_none.json"},
		{name: "result running", method: "GET", path: "/jobs/" + jobA + "/execution-result", status: 200, golden: "result_running.json"},
		{name: "result finished", method: "GET", path: "/jobs/" + jobB + "/execution-result", status: 200, golden: "result_finished.json"},
		{name: "submit", method: "POST", path: "/jobs", body: `{"args":["window-stats","--output","/out"]}`, status: 202, golden: "submit.json"},
		{name: "cancel", method: "PATCH", path: "/jobs/" + jobA + "?mode=cancel", status: 202, golden: "cancel.json"},
		{name: "cancel without mode", method: "PATCH", path: "/jobs/" + jobA, status: 202, golden: "cancel.json"},
		{name: "stop", method: "POST", path: "/jobs/" + jobA + "/stop", body: `{"targetDirectory":"s3://bucket/sp"}`, status: 202, golden: "trigger.json"},
		{name: "savepoint", method: "POST", path: "/jobs/" + jobA + "/savepoints", body: `{"target-directory":"s3://bucket/sp","cancel-job":false}`,
			status: 202, golden: "trigger.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, newFake(), "")
			status, body := call(t, srv.URL, "", tc.method, tc.path, tc.body)
			if status != tc.status {
				t.Fatalf("%s %s: status %d (%s), want %d", tc.method, tc.path, status, body, tc.status)
			}
			want, err := os.ReadFile(filepath.Join("testdata", tc.golden))
			if err != nil {
				t.Fatal(err)
			}
			sameJSON(t, tc.method+" "+tc.path, body, want)
		})
	}
}

// TestSavepointStatus follows a stop request from IN_PROGRESS to its
// location, and a savepoint that fails to its failure cause.
func TestSavepointStatus(t *testing.T) {
	f := newFake()
	f.Pending = 1
	srv := serve(t, f, "")
	status, body := call(t, srv.URL, "", "POST", "/jobs/"+jobA+"/stop", `{"targetDirectory":"s3://bucket/sp"}`)
	if status != 202 {
		t.Fatalf("stop: %d %s", status, body)
	}
	var tr struct {
		ID string `json:"request-id"`
	}
	if err := json.Unmarshal(body, &tr); err != nil {
		t.Fatal(err)
	}
	if got, want := f.Triggers(), []resttest.Trigger{{JID: jobA, Dir: "s3://bucket/sp", Stop: true}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("triggers %v, want %v", got, want)
	}
	path := "/jobs/" + jobA + "/savepoints/" + tr.ID
	for _, golden := range []string{"savepoint_in_progress.json", "savepoint_completed.json"} {
		status, body := call(t, srv.URL, "", "GET", path, "")
		want, err := os.ReadFile(filepath.Join("testdata", golden))
		if err != nil {
			t.Fatal(err)
		}
		if status != 200 {
			t.Fatalf("GET %s: %d %s", path, status, body)
		}
		sameJSON(t, golden, body, want)
	}
	if got := f.State(jobA); got != rest.StateFinished {
		t.Errorf("stopped job is %s, want FINISHED", got)
	}

	f = newFake()
	f.SavepointFailure = "checkpoint declined by subtask 1"
	srv = serve(t, f, "")
	if status, body := call(t, srv.URL, "", "POST", "/jobs/"+jobA+"/savepoints", `{"target-directory":"s3://bucket/sp"}`); status != 202 {
		t.Fatalf("savepoint: %d %s", status, body)
	}
	if got, want := f.Triggers(), []resttest.Trigger{{JID: jobA, Dir: "s3://bucket/sp"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("triggers %v, want %v", got, want)
	}
	status, body = call(t, srv.URL, "", "GET", "/jobs/"+jobA+"/savepoints/00000000000000000000000000000001", "")
	want, err := os.ReadFile(filepath.Join("testdata", "savepoint_failed.json"))
	if err != nil {
		t.Fatal(err)
	}
	if status != 200 {
		t.Fatalf("status %d %s", status, body)
	}
	sameJSON(t, "failed savepoint", body, want)
}

// errorsOf decodes Flink's error body.
func errorsOf(t *testing.T, body []byte) []string {
	t.Helper()
	var eb struct {
		Errors []string `json:"errors"`
	}
	if err := json.Unmarshal(body, &eb); err != nil || len(eb.Errors) == 0 {
		t.Fatalf("not an error body: %s (%v)", body, err)
	}
	return eb.Errors
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		says                     string
	}{
		{name: "unknown job", method: "GET", path: "/jobs/" + jobC, status: 404, says: jobC},
		{name: "unknown job checkpoints", method: "GET", path: "/jobs/" + jobC + "/checkpoints", status: 404, says: "not found"},
		{name: "unknown job cancel", method: "PATCH", path: "/jobs/" + jobC + "?mode=cancel", status: 404, says: "not found"},
		{name: "malformed job id", method: "GET", path: "/jobs/xyz", status: 400, says: "32 hexadecimal digits"},
		{name: "malformed job id 33", method: "GET", path: "/jobs/" + jobA + "0/checkpoints", status: 400, says: "job id"},
		{name: "malformed trigger id", method: "GET", path: "/jobs/" + jobA + "/savepoints/42", status: 400, says: "trigger id"},
		{name: "unknown trigger", method: "GET", path: "/jobs/" + jobA + "/savepoints/" + jobC, status: 404, says: "not found"},
		{name: "cancel finished job", method: "PATCH", path: "/jobs/" + jobB + "?mode=cancel", status: 409, says: "FINISHED"},
		{name: "stop finished job", method: "POST", path: "/jobs/" + jobB + "/stop", body: `{"targetDirectory":"/sp"}`, status: 409, says: "conflict"},
		{name: "cancel mode stop", method: "PATCH", path: "/jobs/" + jobA + "?mode=stop", status: 400, says: "mode"},
		{name: "stop without directory", method: "POST", path: "/jobs/" + jobA + "/stop", body: `{}`, status: 400, says: "directory"},
		{name: "stop with drain", method: "POST", path: "/jobs/" + jobA + "/stop", body: `{"targetDirectory":"/sp","drain":true}`, status: 400, says: "drain"},
		{name: "savepoint body of stop", method: "POST", path: "/jobs/" + jobA + "/savepoints", body: `{"targetDirectory":"/sp"}`, status: 400, says: "targetDirectory"},
		{name: "malformed body", method: "POST", path: "/jobs", body: `{"args":`, status: 400, says: "request body"},
		{name: "submission without args", method: "POST", path: "/jobs", body: `{"args":[]}`, status: 400, says: "invalid"},
		{name: "unknown path", method: "GET", path: "/jars", status: 404, says: "/jars"},
		{name: "unknown method", method: "DELETE", path: "/overview", status: 404, says: "DELETE /overview"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			srv := serve(t, f, "")
			status, body := call(t, srv.URL, "", tc.method, tc.path, tc.body)
			if status != tc.status {
				t.Fatalf("%s %s: status %d (%s), want %d", tc.method, tc.path, status, body, tc.status)
			}
			if msg := strings.Join(errorsOf(t, body), " "); !strings.Contains(msg, tc.says) {
				t.Errorf("%s %s: errors %q do not say %q", tc.method, tc.path, msg, tc.says)
			}
			if len(f.Cancelled()) != 0 || len(f.Triggers()) != 0 || len(f.Submitted()) != 0 {
				t.Errorf("a refused request changed the cluster: cancelled %v, triggers %v, submitted %v", f.Cancelled(), f.Triggers(), f.Submitted())
			}
		})
	}
}

func TestToken(t *testing.T) {
	f := newFake()
	srv := serve(t, f, "s3cret")
	for _, tc := range []struct {
		name, auth string
		status     int
	}{
		{"none", "", 401},
		{"wrong", "Bearer s3cre", 401},
		{"longer", "Bearer s3cret2", 401},
		{"not bearer", "Basic s3cret", 401},
		{"right", "Bearer s3cret", 200},
	} {
		for _, path := range []string{"/", "/overview", "/jobs/overview", "/jobs/" + jobA} {
			req, err := http.NewRequest("GET", srv.URL+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Errorf("%s: GET %s: status %d (%s), want %d", tc.name, path, resp.StatusCode, body, tc.status)
			}
			if tc.status == 401 {
				if msg := errorsOf(t, body); !strings.Contains(msg[0], "token") {
					t.Errorf("%s: 401 says %q", tc.name, msg)
				}
				if resp.Header.Get("WWW-Authenticate") == "" {
					t.Errorf("%s: 401 without WWW-Authenticate", tc.name)
				}
			}
		}
	}
	// A refused cancel does not reach the cluster.
	if status, _ := call(t, srv.URL, "wrong", "PATCH", "/jobs/"+jobA+"?mode=cancel", ""); status != 401 || len(f.Cancelled()) != 0 {
		t.Errorf("cancel with a wrong token: status %d, cancelled %v", status, f.Cancelled())
	}
}

// TestForward sends every request to a standby and expects the leader's
// answers and the leader's cluster to take the changes.
func TestForward(t *testing.T) {
	leaderFake := newFake()
	leader := serve(t, leaderFake, "tok")
	standbyFake := &resttest.Fake{Standby: true, LeaderURL: leader.URL}
	standby := serve(t, standbyFake, "tok")

	for _, tc := range []struct{ method, path, body, golden string }{
		{"GET", "/jobs", "", "jobs.json"},
		{"GET", "/jobs/overview", "", "jobs_overview.json"},
		{"GET", "/jobs/" + jobA, "", "job.json"},
		{"GET", "/jobs/" + jobA + "/checkpoints", "", "checkpoints.json"},
		{"GET", "/jobs/" + jobA + "/exceptions", "", "exceptions.json"},
		{"GET", "/taskmanagers", "", "taskmanagers.json"},
		{"POST", "/jobs", `{"args":["window-stats"]}`, "submit.json"},
		{"POST", "/jobs/" + jobA + "/savepoints", `{"target-directory":"s3://bucket/sp"}`, "trigger.json"},
		{"GET", "/jobs/" + jobA + "/savepoints/00000000000000000000000000000001", "", "savepoint_completed.json"},
		{"PATCH", "/jobs/" + jobA + "?mode=cancel", "", "cancel.json"},
	} {
		status, body := call(t, standby.URL, "tok", tc.method, tc.path, tc.body)
		if status/100 != 2 {
			t.Fatalf("%s %s: status %d %s", tc.method, tc.path, status, body)
		}
		want, err := os.ReadFile(filepath.Join("testdata", tc.golden))
		if err != nil {
			t.Fatal(err)
		}
		sameJSON(t, "forwarded "+tc.method+" "+tc.path, body, want)
	}
	if got := leaderFake.Submitted(); len(got) != 1 || !reflect.DeepEqual(got[0].Args, []string{"window-stats"}) {
		t.Errorf("leader took submissions %v", got)
	}
	if got := leaderFake.Cancelled(); !reflect.DeepEqual(got, []string{jobA}) {
		t.Errorf("leader cancelled %v", got)
	}

	// Errors come back as the leader said them.
	if status, body := call(t, standby.URL, "tok", "GET", "/jobs/"+jobC, ""); status != 404 || !strings.Contains(errorsOf(t, body)[0], jobC) {
		t.Errorf("forwarded unknown job: %d %s", status, body)
	}
	if status, _ := call(t, standby.URL, "tok", "PATCH", "/jobs/"+jobB+"?mode=cancel", ""); status != 409 {
		t.Errorf("forwarded cancel of a finished job: %d", status)
	}

	// The overview is the leader's, but is-leader is the standby's.
	status, body := call(t, standby.URL, "tok", "GET", "/overview", "")
	if status != 200 {
		t.Fatalf("overview: %d %s", status, body)
	}
	var o rest.Overview
	if err := json.Unmarshal(body, &o); err != nil {
		t.Fatal(err)
	}
	want := leaderFake.OverviewValue
	want.IsLeader = false
	if o != want {
		t.Errorf("forwarded overview %+v, want %+v", o, want)
	}

	// Without the token the standby refuses before forwarding.
	if status, _ := call(t, standby.URL, "", "GET", "/jobs/overview", ""); status != 401 {
		t.Errorf("standby without token: %d", status)
	}
}

func TestNoLeader(t *testing.T) {
	standby := serve(t, &resttest.Fake{Standby: true}, "")
	status, body := call(t, standby.URL, "", "GET", "/jobs/overview", "")
	if status != 503 || !strings.Contains(errorsOf(t, body)[0], "no JobManager leads") {
		t.Errorf("no leader: %d %s", status, body)
	}

	// Two standbys naming each other: one forwarding, then 503.
	a := &resttest.Fake{Standby: true}
	b := &resttest.Fake{Standby: true}
	sa, sb := serve(t, a, ""), serve(t, b, "")
	a.LeaderURL, b.LeaderURL = sb.URL, sa.URL
	status, body = call(t, sa.URL, "", "POST", "/jobs", `{"args":["x"]}`)
	if status != 503 || !strings.Contains(errorsOf(t, body)[0], "does not lead") {
		t.Errorf("standby loop: %d %s", status, body)
	}

	// A leader that is gone.
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	s := serve(t, &resttest.Fake{Standby: true, LeaderURL: gone.URL}, "")
	status, body = call(t, s.URL, "", "GET", "/taskmanagers", "")
	if status != 503 || !strings.Contains(errorsOf(t, body)[0], gone.URL) {
		t.Errorf("unreachable leader: %d %s", status, body)
	}
}

func TestIndex(t *testing.T) {
	srv := serve(t, newFake(), "")
	status, body := call(t, srv.URL, "", "GET", "/", "")
	var idx struct {
		Paths []string `json:"paths"`
	}
	if status != 200 || json.Unmarshal(body, &idx) != nil {
		t.Fatalf("GET /: %d %s", status, body)
	}
	// Every listed GET path without parameters answers 200.
	n := 0
	for _, p := range idx.Paths {
		if method, path, _ := strings.Cut(p, " "); method == "GET" && !strings.Contains(path, ":") {
			n++
			if status, body := call(t, srv.URL, "", "GET", path, ""); status != 200 {
				t.Errorf("GET %s: %d %s", path, status, body)
			}
		}
	}
	if n != 4 {
		t.Errorf("index lists %d GET paths without parameters, want 4 (/overview, /jobs, /jobs/overview, /taskmanagers): %v", n, idx.Paths)
	}
}
