package cli

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/cluster/rest"
	"github.com/weirdata/weir/cluster/rest/resttest"
)

const (
	listRunning    = "0123456789abcdef0123456789abcdef"
	listRestarting = "11111111111111111111111111111111"
	listCreated    = "22222222222222222222222222222222"
	listFinished   = "33333333333333333333333333333333"
	listCanceled   = "44444444444444444444444444444444"
)

// listFake holds a job in each group of weir list.
func listFake() *resttest.Fake {
	job := func(id, name, state string, start int64) rest.JobDetails {
		return rest.JobDetails{JobOverview: rest.JobOverview{ID: id, Name: name, State: state, Start: start, End: -1}}
	}
	return &resttest.Fake{JobsValue: []rest.JobDetails{
		job(listRunning, "window-stats", rest.StateRunning, 1700000200000),
		job(listFinished, "wordcount", rest.StateFinished, 1700000050000),
		job(listRestarting, "top-speed", rest.StateRestarting, 1700000100000),
		job(listCreated, "tpch q1", rest.StateCreated, 1700000300000),
		job(listCanceled, "pagerank", rest.StateCanceled, 1700000000000),
	}}
}

// serveFake serves f with the token tok for one test.
func serveFake(t *testing.T, f *resttest.Fake, tok string) string {
	t.Helper()
	srv := httptest.NewServer(rest.NewHandler(f, rest.HandlerOptions{Token: tok}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// at is the start time as flink list prints it: local time.
func at(ms int64) string { return time.UnixMilli(ms).Format("02.01.2006 15:04:05") }

func TestListCommand(t *testing.T) {
	url := serveFake(t, listFake(), "tok")
	running := "------------------ Running/Restarting Jobs -------------------\n" +
		at(1700000100000) + " : " + listRestarting + " : top-speed (RESTARTING)\n" +
		at(1700000200000) + " : " + listRunning + " : window-stats (RUNNING)\n" +
		"--------------------------------------------------------------\n" +
		"----------------------- Scheduled Jobs -----------------------\n" +
		at(1700000300000) + " : " + listCreated + " : tpch q1 (CREATED)\n" +
		"--------------------------------------------------------------\n"
	code, out, errOut := runWeir(t.Context(), "list", "--jobmanager", url, "--rest-token", "tok")
	if want := "Waiting for response...\n" + running; code != 0 || out != want {
		t.Errorf("weir list: exit %d, stderr %q, output:\n%s\nwant:\n%s", code, errOut, out, want)
	}

	// --all, the token from the environment, the address without scheme.
	t.Setenv(restTokenEnv, "tok")
	code, out, errOut = runWeir(t.Context(), "list", "--all", "--jobmanager", strings.TrimPrefix(url, "http://"))
	want := "Waiting for response...\n" + running +
		"---------------------- Terminated Jobs -----------------------\n" +
		at(1700000000000) + " : " + listCanceled + " : pagerank (CANCELED)\n" +
		at(1700000050000) + " : " + listFinished + " : wordcount (FINISHED)\n" +
		"--------------------------------------------------------------\n"
	if code != 0 || out != want {
		t.Errorf("weir list --all: exit %d, stderr %q, output:\n%s\nwant:\n%s", code, errOut, out, want)
	}

	// No jobs.
	code, out, _ = runWeir(t.Context(), "list", "-a", "--jobmanager", serveFake(t, &resttest.Fake{}, "tok"))
	if want := "Waiting for response...\nNo running jobs.\nNo scheduled jobs.\nNo terminated jobs.\n"; code != 0 || out != want {
		t.Errorf("weir list of no jobs: exit %d, output:\n%s", code, out)
	}

	// A wrong token.
	code, _, errOut = runWeir(t.Context(), "list", "--jobmanager", url, "--rest-token", "nope")
	if code != 1 || !strings.Contains(errOut, "401") || !strings.Contains(errOut, "token") {
		t.Errorf("weir list with a wrong token: exit %d, stderr %q", code, errOut)
	}
}

func TestCancelCommand(t *testing.T) {
	f := listFake()
	url := serveFake(t, f, "")
	code, out, errOut := runWeir(t.Context(), "cancel", listRunning, "--jobmanager", url)
	if want := "Cancelling job " + listRunning + ".\nCancelled job " + listRunning + ".\n"; code != 0 || out != want {
		t.Errorf("weir cancel: exit %d, stderr %q, output:\n%s", code, errOut, out)
	}
	if got := f.Cancelled(); !reflect.DeepEqual(got, []string{listRunning}) {
		t.Errorf("cancelled %v", got)
	}
	for _, tc := range []struct{ jid, says string }{
		{listFinished, "409"},
		{"55555555555555555555555555555555", "404"},
		{"not-a-job", "400"},
	} {
		code, out, errOut := runWeir(t.Context(), "cancel", tc.jid, "--jobmanager", url)
		if code != 1 || !strings.Contains(errOut, tc.says) || strings.Contains(out, "Cancelled") {
			t.Errorf("weir cancel %s: exit %d, stdout %q, stderr %q", tc.jid, code, out, errOut)
		}
	}
	if got := f.Cancelled(); len(got) != 1 {
		t.Errorf("refused cancels changed the cluster: %v", got)
	}
}

func TestStopCommand(t *testing.T) {
	f := listFake()
	f.Pending = 2
	url := serveFake(t, f, "tok")
	code, out, errOut := runWeir(t.Context(), "stop", listRunning, "--savepoint-dir", "s3://bucket/sp", "--jobmanager", url, "--rest-token", "tok")
	want := "Suspending job \"" + listRunning + "\" with a savepoint.\nSavepoint completed. Path: s3://bucket/sp/savepoint-1\n"
	if code != 0 || out != want {
		t.Errorf("weir stop: exit %d, stderr %q, output:\n%s\nwant:\n%s", code, errOut, out, want)
	}
	if got, want := f.Triggers(), []resttest.Trigger{{JID: listRunning, Dir: "s3://bucket/sp", Stop: true}}; !reflect.DeepEqual(got, want) {
		t.Errorf("triggers %v, want %v", got, want)
	}
	if got := f.State(listRunning); got != rest.StateFinished {
		t.Errorf("stopped job is %s", got)
	}

	// A savepoint that fails, a job that ended, no --savepoint-dir.
	f = listFake()
	f.SavepointFailure = "disk full"
	url = serveFake(t, f, "")
	code, out, errOut = runWeir(t.Context(), "stop", listRunning, "-p", "/sp", "--jobmanager", url)
	if code != 1 || !strings.Contains(errOut, "disk full") || strings.Contains(out, "Savepoint completed") {
		t.Errorf("weir stop of a failing savepoint: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, _, errOut = runWeir(t.Context(), "stop", listFinished, "-p", "/sp", "--jobmanager", url)
	if code != 1 || !strings.Contains(errOut, "409") {
		t.Errorf("weir stop of a finished job: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = runWeir(t.Context(), "stop", listRunning, "--jobmanager", url)
	if code != 1 || !strings.Contains(errOut, "savepoint-dir") {
		t.Errorf("weir stop without --savepoint-dir: exit %d, stderr %q", code, errOut)
	}
}

func TestJobManagerUnreachable(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	for _, args := range [][]string{
		{"list", "--jobmanager", gone.URL},
		{"cancel", listRunning, "--jobmanager", gone.URL},
		{"stop", listRunning, "-p", "/sp", "--jobmanager", gone.URL},
	} {
		code, _, errOut := runWeir(t.Context(), args...)
		if code != 1 || !strings.Contains(errOut, "JobManager unreachable at "+gone.URL) {
			t.Errorf("weir %s: exit %d, stderr %q", strings.Join(args, " "), code, errOut)
		}
	}
	code, _, errOut := runWeir(t.Context(), "list")
	if code != 1 || !strings.Contains(errOut, "jobmanager") {
		t.Errorf("weir list without --jobmanager: exit %d, stderr %q", code, errOut)
	}
}
