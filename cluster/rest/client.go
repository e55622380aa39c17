package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ErrUnreachable wraps the error of a request that reached no JobManager:
// refused, timed out, or no answer.
var ErrUnreachable = errors.New("rest: JobManager unreachable")

// Error is a JobManager's answer other than 2xx: its status and Flink's
// errors. It unwraps to ErrNotFound (404), ErrConflict (409) or ErrInvalid
// (400), so that a Client is a Cluster whose errors mean what the server's
// Cluster's did.
type Error struct {
	Status   int
	Messages []string
}

func (e *Error) Error() string {
	msg := strings.Join(e.Messages, "; ")
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	return fmt.Sprintf("rest: %d %s", e.Status, msg)
}

// Unwrap returns the sentinel error e's status stands for, or nil.
func (e *Error) Unwrap() error {
	switch e.Status {
	case http.StatusNotFound:
		return ErrNotFound
	case http.StatusConflict:
		return ErrConflict
	case http.StatusBadRequest:
		return ErrInvalid
	}
	return nil
}

// Client is a Cluster over a JobManager's REST API. Its methods are safe
// for concurrent use; each request lasts as long as its context allows.
type Client struct {
	base  string
	token string
	// HTTP sends the requests. NewClient's dials time out after 10 s and
	// has no other timeout: contexts bound the requests.
	HTTP *http.Client
	// PollInterval is how often WaitSavepoint asks; NewClient sets 100 ms.
	PollInterval time.Duration
}

// NewClient returns a Client of the JobManager at baseURL (http://host:port;
// host:port alone is taken as http), sending token as a bearer token when
// it is not empty.
func NewClient(baseURL, token string) *Client {
	base := strings.TrimSuffix(baseURL, "/")
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	return &Client{base: base, token: token, HTTP: &http.Client{Transport: tr}, PollInterval: 100 * time.Millisecond}
}

var _ Cluster = (*Client)(nil)

// do sends method path with the JSON of in (when not nil) and decodes a
// 2xx answer into out (when not nil).
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("rest: %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return fmt.Errorf("rest: %s %s: %w", method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("rest: %s %s%s: %w", method, c.base, path, ctx.Err())
		}
		return fmt.Errorf("%w at %s: %w", ErrUnreachable, c.base, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("rest: %s %s%s: reading the answer: %w", method, c.base, path, err)
	}
	if resp.StatusCode/100 != 2 {
		var eb errorBody
		if json.Unmarshal(b, &eb) != nil || len(eb.Errors) == 0 {
			eb.Errors = []string{strings.TrimSpace(string(b))}
			if eb.Errors[0] == "" {
				eb.Errors = nil
			}
		}
		return &Error{Status: resp.StatusCode, Messages: eb.Errors}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("rest: %s %s%s: decoding the answer: %w", method, c.base, path, err)
	}
	return nil
}

// Overview is GET /overview.
func (c *Client) Overview(ctx context.Context) (Overview, error) {
	var o Overview
	err := c.do(ctx, http.MethodGet, "/overview", nil, &o)
	return o, err
}

// Jobs is GET /jobs/overview.
func (c *Client) Jobs(ctx context.Context) ([]JobOverview, error) {
	var out struct {
		Jobs []JobOverview `json:"jobs"`
	}
	err := c.do(ctx, http.MethodGet, "/jobs/overview", nil, &out)
	return out.Jobs, err
}

// Job is GET /jobs/:jid.
func (c *Client) Job(ctx context.Context, jid string) (JobDetails, error) {
	var j JobDetails
	err := c.do(ctx, http.MethodGet, "/jobs/"+url.PathEscape(jid), nil, &j)
	return j, err
}

// Checkpoints is GET /jobs/:jid/checkpoints.
func (c *Client) Checkpoints(ctx context.Context, jid string) (Checkpoints, error) {
	var cp Checkpoints
	err := c.do(ctx, http.MethodGet, "/jobs/"+url.PathEscape(jid)+"/checkpoints", nil, &cp)
	return cp, err
}

// Exceptions is GET /jobs/:jid/exceptions.
func (c *Client) Exceptions(ctx context.Context, jid string) (Exceptions, error) {
	var ex Exceptions
	err := c.do(ctx, http.MethodGet, "/jobs/"+url.PathEscape(jid)+"/exceptions", nil, &ex)
	return ex, err
}

// Result is GET /jobs/:jid/execution-result.
func (c *Client) Result(ctx context.Context, jid string) (JobResult, error) {
	var r JobResult
	err := c.do(ctx, http.MethodGet, "/jobs/"+url.PathEscape(jid)+"/execution-result", nil, &r)
	return r, err
}

// TaskManagers is GET /taskmanagers.
func (c *Client) TaskManagers(ctx context.Context) ([]TaskManager, error) {
	var out struct {
		TaskManagers []TaskManager `json:"taskmanagers"`
	}
	err := c.do(ctx, http.MethodGet, "/taskmanagers", nil, &out)
	return out.TaskManagers, err
}

// Submit is POST /jobs.
func (c *Client) Submit(ctx context.Context, s Submission) (string, error) {
	var out submitResponse
	if err := c.do(ctx, http.MethodPost, "/jobs", s, &out); err != nil {
		return "", err
	}
	return out.ID, nil
}

// Cancel is PATCH /jobs/:jid?mode=cancel.
func (c *Client) Cancel(ctx context.Context, jid string) error {
	return c.do(ctx, http.MethodPatch, "/jobs/"+url.PathEscape(jid)+"?mode=cancel", nil, nil)
}

// TriggerSavepoint is POST /jobs/:jid/stop with stop, else POST
// /jobs/:jid/savepoints; it returns the request id.
func (c *Client) TriggerSavepoint(ctx context.Context, jid, dir string, stop bool) (string, error) {
	var out triggerResponse
	var err error
	if stop {
		err = c.do(ctx, http.MethodPost, "/jobs/"+url.PathEscape(jid)+"/stop", stopRequest{TargetDirectory: dir}, &out)
	} else {
		err = c.do(ctx, http.MethodPost, "/jobs/"+url.PathEscape(jid)+"/savepoints", savepointRequest{TargetDirectory: dir}, &out)
	}
	return out.RequestID, err
}

// Savepoint is GET /jobs/:jid/savepoints/:triggerid.
func (c *Client) Savepoint(ctx context.Context, jid, trigger string) (Savepoint, error) {
	var out savepointStatus
	if err := c.do(ctx, http.MethodGet, "/jobs/"+url.PathEscape(jid)+"/savepoints/"+url.PathEscape(trigger), nil, &out); err != nil {
		return Savepoint{}, err
	}
	sp := Savepoint{Status: out.Status.ID}
	if op := out.Operation; op != nil {
		sp.Location = op.Location
		if op.FailureCause != nil {
			sp.Failure = op.FailureCause.StackTrace
			if sp.Failure == "" {
				sp.Failure = op.FailureCause.Class
			}
		}
	}
	return sp, nil
}

// Leader returns the Client's base URL: the JobManager it asks forwards
// to the leader itself.
func (c *Client) Leader(context.Context) (string, error) { return c.base, nil }

// WaitSavepoint asks for the savepoint or stop request trigger of job jid
// every PollInterval until it completes, and returns it; a savepoint that
// failed is returned with an error saying why.
func (c *Client) WaitSavepoint(ctx context.Context, jid, trigger string) (Savepoint, error) {
	t := time.NewTicker(c.PollInterval)
	defer t.Stop()
	for {
		sp, err := c.Savepoint(ctx, jid, trigger)
		if err != nil {
			return sp, err
		}
		if sp.Status == StatusCompleted {
			if sp.Failure != "" {
				return sp, fmt.Errorf("rest: savepoint of job %s failed: %s", jid, sp.Failure)
			}
			return sp, nil
		}
		select {
		case <-ctx.Done():
			return sp, fmt.Errorf("rest: waiting for the savepoint of job %s: %w", jid, ctx.Err())
		case <-t.C:
		}
	}
}
