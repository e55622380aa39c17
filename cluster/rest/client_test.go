package rest_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/cluster/rest"
	"github.com/weirdata/weir/cluster/rest/resttest"
)

// newClient returns a Client of srv that closes its connections when the
// test ends.
func newClient(t *testing.T, url, token string) *rest.Client {
	t.Helper()
	c := rest.NewClient(url, token)
	c.PollInterval = time.Millisecond
	t.Cleanup(c.HTTP.CloseIdleConnections)
	return c
}

// TestClientRoundTrip reads every value of a Fake back through a server
// and a Client, through a standby too.
func TestClientRoundTrip(t *testing.T) {
	f := newFake()
	leader := serve(t, f, "tok")
	standby := serve(t, &resttest.Fake{Standby: true, LeaderURL: leader.URL}, "tok")
	for _, tc := range []struct {
		base, url string
		leads     bool
	}{
		{leader.URL, leader.URL, true},
		{strings.TrimPrefix(leader.URL, "http://") + "/", leader.URL, true},
		{standby.URL, standby.URL, false},
	} {
		c := newClient(t, tc.base, "tok")
		ctx := context.Background()
		o, err := c.Overview(ctx)
		wantO := f.OverviewValue
		wantO.IsLeader = tc.leads
		if err != nil || o != wantO {
			t.Errorf("Overview %+v, %v; want %+v", o, err, wantO)
		}
		jobs, err := c.Jobs(ctx)
		want, _ := f.Jobs(ctx)
		if err != nil || !reflect.DeepEqual(jobs, want) {
			t.Errorf("Jobs %+v, %v; want %+v", jobs, err, want)
		}
		j, err := c.Job(ctx, jobA)
		if err != nil || !reflect.DeepEqual(j, f.JobsValue[0]) {
			t.Errorf("Job %+v, %v; want %+v", j, err, f.JobsValue[0])
		}
		cp, err := c.Checkpoints(ctx, jobA)
		if err != nil || !reflect.DeepEqual(cp, f.CheckpointsValue[jobA]) {
			t.Errorf("Checkpoints %+v, %v; want %+v", cp, err, f.CheckpointsValue[jobA])
		}
		ex, err := c.Exceptions(ctx, jobA)
		if err != nil || !reflect.DeepEqual(ex, f.ExceptionsValue[jobA]) {
			t.Errorf("Exceptions %+v, %v; want %+v", ex, err, f.ExceptionsValue[jobA])
		}
		tms, err := c.TaskManagers(ctx)
		if err != nil || !reflect.DeepEqual(tms, f.TaskManagersList) {
			t.Errorf("TaskManagers %+v, %v; want %+v", tms, err, f.TaskManagersList)
		}
		if l, err := c.Leader(ctx); err != nil || l != tc.url {
			t.Errorf("Leader %q, %v; want %q", l, err, tc.url)
		}
	}
}

func TestClientChanges(t *testing.T) {
	f := newFake()
	f.Pending = 2
	srv := serve(t, f, "")
	c := newClient(t, srv.URL, "")
	ctx := context.Background()

	jid, err := c.Submit(ctx, rest.Submission{Args: []string{"top-speed", "--parallelism", "2"}})
	if err != nil || jid != "00000000000000000000000000abc001" {
		t.Fatalf("Submit %q, %v", jid, err)
	}
	if got := f.Submitted(); len(got) != 1 || !reflect.DeepEqual(got[0].Args, []string{"top-speed", "--parallelism", "2"}) {
		t.Errorf("submitted %v", got)
	}
	if err := c.Cancel(ctx, jid); err != nil {
		t.Fatal(err)
	}
	if got := f.State(jid); got != rest.StateCanceled {
		t.Errorf("cancelled job is %s", got)
	}

	trigger, err := c.TriggerSavepoint(ctx, jobA, "/sp", true)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := c.Savepoint(ctx, jobA, trigger)
	if err != nil || sp != (rest.Savepoint{Status: rest.StatusInProgress}) {
		t.Errorf("first Savepoint %+v, %v", sp, err)
	}
	sp, err = c.WaitSavepoint(ctx, jobA, trigger)
	if want := (rest.Savepoint{Status: rest.StatusCompleted, Location: "/sp/savepoint-1"}); err != nil || sp != want {
		t.Errorf("WaitSavepoint %+v, %v; want %+v", sp, err, want)
	}
	if got, want := f.Triggers()[0].Stop, true; got != want {
		t.Errorf("stop request taken as stop=%v", got)
	}

	// A savepoint that fails.
	f = newFake()
	f.SavepointFailure = "disk full"
	srv = serve(t, f, "")
	c = newClient(t, srv.URL, "")
	trigger, err = c.TriggerSavepoint(ctx, jobA, "/sp", false)
	if err != nil {
		t.Fatal(err)
	}
	if f.Triggers()[0].Stop {
		t.Errorf("savepoint request taken as a stop")
	}
	sp, err = c.WaitSavepoint(ctx, jobA, trigger)
	if err == nil || !strings.Contains(err.Error(), "disk full") || sp.Failure != "disk full" {
		t.Errorf("failed savepoint: %+v, %v", sp, err)
	}
}

func TestClientErrors(t *testing.T) {
	srv := serve(t, newFake(), "tok")
	c := newClient(t, srv.URL, "tok")
	ctx := context.Background()

	_, err := c.Job(ctx, jobC)
	var re *rest.Error
	if !errors.Is(err, rest.ErrNotFound) || !errors.As(err, &re) || re.Status != 404 || !strings.Contains(err.Error(), jobC) {
		t.Errorf("unknown job: %v", err)
	}
	if err := c.Cancel(ctx, jobB); !errors.Is(err, rest.ErrConflict) || !strings.Contains(err.Error(), "FINISHED") {
		t.Errorf("cancel of a finished job: %v", err)
	}
	if _, err := c.TriggerSavepoint(ctx, jobA, "", true); !errors.Is(err, rest.ErrInvalid) {
		t.Errorf("stop without directory: %v", err)
	}
	if _, err := c.Job(ctx, "nope"); !errors.Is(err, rest.ErrInvalid) || !strings.Contains(err.Error(), "hexadecimal") {
		t.Errorf("malformed id: %v", err)
	}
	if _, err := newClient(t, srv.URL, "bad").Overview(ctx); !errors.As(err, &re) || re.Status != 401 || !strings.Contains(err.Error(), "token") {
		t.Errorf("wrong token: %v", err)
	}
	if _, err := newClient(t, srv.URL, "").Overview(ctx); !errors.As(err, &re) || re.Status != 401 {
		t.Errorf("no token: %v", err)
	}

	// A server that does not lead and knows no leader.
	nl := serve(t, notLeader{}, "")
	if _, err := newClient(t, nl.URL, "").Jobs(ctx); !errors.As(err, &re) || re.Status != 503 {
		t.Errorf("no leader: %v", err)
	}

	// Nothing listens.
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	if _, err := newClient(t, gone.URL, "").Jobs(ctx); !errors.Is(err, rest.ErrUnreachable) || !strings.Contains(err.Error(), gone.URL) {
		t.Errorf("unreachable: %v", err)
	}

	// The context bounds a request that gets no answer.
	block := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-block:
		}
	}))
	defer slow.Close()
	defer close(block)
	tctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := newClient(t, slow.URL, "").Overview(tctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("timeout: %v", err)
	}
}

// notLeader is a Cluster every method of which but Leader says it does
// not lead.
type notLeader struct{ rest.Cluster }

func (notLeader) Jobs(context.Context) ([]rest.JobOverview, error) { return nil, rest.ErrNotLeader }
func (notLeader) Leader(context.Context) (string, error)           { return "", nil }
