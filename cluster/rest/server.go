package rest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxBody is the largest request body the server reads.
const maxBody = 1 << 20

// forwardedHeader marks a request a standby forwarded: its receiver never
// forwards it again, so that two standbys cannot forward in a loop.
const forwardedHeader = "X-Weir-Forwarded"

// contentType is the Content-Type of every answer, Flink's.
const contentType = "application/json; charset=UTF-8"

// HandlerOptions configure NewHandler.
type HandlerOptions struct {
	// Token, when not empty, is the bearer token every request must carry
	// (Authorization: Bearer <Token>); the server sends it on forwarded
	// requests too.
	Token string
	// Client forwards requests to the leader; nil is a client with no
	// timeout of its own (the request's context bounds it).
	Client *http.Client
}

// NewHandler returns the REST API over c. See the package documentation
// for the paths and the contracts.
func NewHandler(c Cluster, opts HandlerOptions) http.Handler {
	if opts.Client == nil {
		opts.Client = &http.Client{}
	}
	s := &server{c: c, opts: opts, mux: http.NewServeMux()}
	if opts.Token != "" {
		sum := sha256.Sum256([]byte("Bearer " + opts.Token))
		s.want = sum[:]
	}
	s.routes()
	return s
}

// server serves the REST API.
type server struct {
	c    Cluster
	opts HandlerOptions
	mux  *http.ServeMux
	want []byte // SHA-256 of the Authorization header wanted, nil without a token
}

// paths are the paths GET / lists.
var paths = []string{
	"GET /overview",
	"GET /jobs",
	"GET /jobs/overview",
	"POST /jobs",
	"GET /jobs/:jobid",
	"PATCH /jobs/:jobid?mode=cancel",
	"GET /jobs/:jobid/checkpoints",
	"GET /jobs/:jobid/exceptions",
	"GET /jobs/:jobid/execution-result",
	"POST /jobs/:jobid/stop",
	"POST /jobs/:jobid/savepoints",
	"GET /jobs/:jobid/savepoints/:triggerid",
	"GET /taskmanagers",
}

func (s *server) routes() {
	s.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"name": "weir", "paths": paths})
	})
	s.mux.HandleFunc("GET /overview", s.overview)
	s.mux.HandleFunc("GET /jobs", s.jobIDs)
	s.mux.HandleFunc("GET /jobs/overview", s.jobs)
	s.mux.HandleFunc("POST /jobs", s.submit)
	s.mux.HandleFunc("GET /jobs/{jid}", s.job)
	s.mux.HandleFunc("PATCH /jobs/{jid}", s.cancel)
	s.mux.HandleFunc("GET /jobs/{jid}/checkpoints", s.checkpoints)
	s.mux.HandleFunc("GET /jobs/{jid}/exceptions", s.exceptions)
	s.mux.HandleFunc("GET /jobs/{jid}/execution-result", s.result)
	s.mux.HandleFunc("POST /jobs/{jid}/stop", s.stop)
	s.mux.HandleFunc("POST /jobs/{jid}/savepoints", s.savepoints)
	s.mux.HandleFunc("GET /jobs/{jid}/savepoints/{trigger}", s.savepoint)
	s.mux.HandleFunc("GET /taskmanagers", s.taskManagers)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeErrors(w, http.StatusNotFound, fmt.Sprintf("rest: not found: %s %s", r.Method, r.URL.Path))
	})
}

// ServeHTTP checks the token, reads the body whole (a forwarded request
// sends it again) and routes the request.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.want != nil {
		got := sha256.Sum256([]byte(r.Header.Get("Authorization")))
		if subtle.ConstantTimeCompare(got[:], s.want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="weir"`)
			writeErrors(w, http.StatusUnauthorized, "rest: missing or wrong bearer token")
			return
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		writeErrors(w, http.StatusBadRequest, fmt.Sprintf("rest: reading the request body: %v", err))
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r = r.WithContext(context.WithValue(r.Context(), bodyKey{}, body))
	s.mux.ServeHTTP(w, r)
}

// bodyKey keys the request body in a request's context.
type bodyKey struct{}

func (s *server) overview(w http.ResponseWriter, r *http.Request) {
	o, err := s.c.Overview(r.Context())
	if errors.Is(err, ErrNotLeader) {
		s.forward(w, r, func(status int, body []byte) []byte {
			// is-leader is the answering JobManager's: this one does not lead.
			var o Overview
			if status != http.StatusOK || json.Unmarshal(body, &o) != nil {
				return body
			}
			o.IsLeader = false
			b, err := json.Marshal(o)
			if err != nil {
				return body
			}
			return b
		})
		return
	}
	s.answer(w, r, http.StatusOK, o, err)
}

// jobIDs is GET /jobs: Flink's list of ids and statuses.
func (s *server) jobIDs(w http.ResponseWriter, r *http.Request) {
	jobs, err := s.c.Jobs(r.Context())
	type idStatus struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	out := make([]idStatus, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, idStatus{ID: j.ID, Status: j.State})
	}
	s.answer(w, r, http.StatusOK, map[string]any{"jobs": out}, err)
}

func (s *server) jobs(w http.ResponseWriter, r *http.Request) {
	jobs, err := s.c.Jobs(r.Context())
	if jobs == nil {
		jobs = []JobOverview{}
	}
	s.answer(w, r, http.StatusOK, map[string]any{"jobs": jobs}, err)
}

func (s *server) job(w http.ResponseWriter, r *http.Request) {
	jid, ok := pathID(w, r, "jid", "job id")
	if !ok {
		return
	}
	j, err := s.c.Job(r.Context(), jid)
	if j.Vertices == nil {
		j.Vertices = []Vertex{}
	}
	s.answer(w, r, http.StatusOK, j, err)
}

func (s *server) checkpoints(w http.ResponseWriter, r *http.Request) {
	jid, ok := pathID(w, r, "jid", "job id")
	if !ok {
		return
	}
	cp, err := s.c.Checkpoints(r.Context(), jid)
	s.answer(w, r, http.StatusOK, cp, err)
}

func (s *server) exceptions(w http.ResponseWriter, r *http.Request) {
	jid, ok := pathID(w, r, "jid", "job id")
	if !ok {
		return
	}
	ex, err := s.c.Exceptions(r.Context(), jid)
	if ex.History.Entries == nil {
		ex.History.Entries = []Exception{}
	}
	s.answer(w, r, http.StatusOK, ex, err)
}

func (s *server) result(w http.ResponseWriter, r *http.Request) {
	jid, ok := pathID(w, r, "jid", "job id")
	if !ok {
		return
	}
	res, err := s.c.Result(r.Context(), jid)
	s.answer(w, r, http.StatusOK, res, err)
}

func (s *server) taskManagers(w http.ResponseWriter, r *http.Request) {
	tms, err := s.c.TaskManagers(r.Context())
	if tms == nil {
		tms = []TaskManager{}
	}
	s.answer(w, r, http.StatusOK, map[string]any{"taskmanagers": tms}, err)
}

// submitResponse is the answer to POST /jobs.
type submitResponse struct {
	ID     string `json:"jid"`
	JobURL string `json:"jobUrl"`
}

func (s *server) submit(w http.ResponseWriter, r *http.Request) {
	var sub Submission
	if !decode(w, r, &sub) {
		return
	}
	jid, err := s.c.Submit(r.Context(), sub)
	s.answer(w, r, http.StatusAccepted, submitResponse{ID: jid, JobURL: "/jobs/" + jid}, err)
}

func (s *server) cancel(w http.ResponseWriter, r *http.Request) {
	jid, ok := pathID(w, r, "jid", "job id")
	if !ok {
		return
	}
	if mode := r.URL.Query().Get("mode"); mode != "" && mode != "cancel" {
		writeErrors(w, http.StatusBadRequest, fmt.Sprintf("rest: mode %q: want cancel (stop a job with POST /jobs/:jobid/stop)", mode))
		return
	}
	err := s.c.Cancel(r.Context(), jid)
	s.answer(w, r, http.StatusAccepted, struct{}{}, err)
}

// stopRequest is the body of POST /jobs/:jid/stop, Flink's
// StopWithSavepointRequestBody.
type stopRequest struct {
	TargetDirectory string `json:"targetDirectory"`
	Drain           bool   `json:"drain"`
}

// savepointRequest is the body of POST /jobs/:jid/savepoints, Flink's
// SavepointTriggerRequestBody.
type savepointRequest struct {
	TargetDirectory string `json:"target-directory"`
	CancelJob       bool   `json:"cancel-job"`
}

// triggerResponse is the answer to a savepoint or stop request.
type triggerResponse struct {
	RequestID string `json:"request-id"`
}

func (s *server) stop(w http.ResponseWriter, r *http.Request) {
	jid, ok := pathID(w, r, "jid", "job id")
	if !ok {
		return
	}
	var req stopRequest
	if !decode(w, r, &req) {
		return
	}
	if req.Drain {
		writeErrors(w, http.StatusBadRequest, "rest: drain is not supported: weir stops a job with a savepoint without advancing its watermarks")
		return
	}
	trigger, err := s.c.TriggerSavepoint(r.Context(), jid, req.TargetDirectory, true)
	s.answer(w, r, http.StatusAccepted, triggerResponse{RequestID: trigger}, err)
}

func (s *server) savepoints(w http.ResponseWriter, r *http.Request) {
	jid, ok := pathID(w, r, "jid", "job id")
	if !ok {
		return
	}
	var req savepointRequest
	if !decode(w, r, &req) {
		return
	}
	trigger, err := s.c.TriggerSavepoint(r.Context(), jid, req.TargetDirectory, req.CancelJob)
	s.answer(w, r, http.StatusAccepted, triggerResponse{RequestID: trigger}, err)
}

// savepointStatus is the answer to GET /jobs/:jid/savepoints/:triggerid,
// Flink's AsynchronousOperationResult of a SavepointInfo.
type savepointStatus struct {
	Status struct {
		ID string `json:"id"`
	} `json:"status"`
	Operation *savepointInfo `json:"operation"`
}

// savepointInfo is Flink's SavepointInfo: a location or a failure cause.
type savepointInfo struct {
	Location     string        `json:"location,omitempty"`
	FailureCause *failureCause `json:"failure-cause,omitempty"`
}

// failureCause carries the fields of Flink's SerializedThrowable that a
// Go error has: its class and its message as the stack trace.
type failureCause struct {
	Class      string `json:"class"`
	StackTrace string `json:"stack-trace"`
}

func (s *server) savepoint(w http.ResponseWriter, r *http.Request) {
	jid, ok := pathID(w, r, "jid", "job id")
	if !ok {
		return
	}
	trigger, ok := pathID(w, r, "trigger", "trigger id")
	if !ok {
		return
	}
	sp, err := s.c.Savepoint(r.Context(), jid, trigger)
	var out savepointStatus
	out.Status.ID = sp.Status
	switch {
	case sp.Status == StatusInProgress:
	case sp.Failure != "":
		out.Operation = &savepointInfo{FailureCause: &failureCause{Class: "weir.SavepointFailure", StackTrace: sp.Failure}}
	default:
		out.Operation = &savepointInfo{Location: sp.Location}
	}
	if err == nil && sp.Status != StatusInProgress && sp.Status != StatusCompleted {
		err = fmt.Errorf("rest: savepoint %s of job %s has status %q: want %s or %s", trigger, jid, sp.Status, StatusInProgress, StatusCompleted)
	}
	s.answer(w, r, http.StatusOK, out, err)
}

// answer writes v with status, or the error err maps to; a standby
// (ErrNotLeader) forwards the request to the leader.
func (s *server) answer(w http.ResponseWriter, r *http.Request, status int, v any, err error) {
	switch {
	case err == nil:
		writeJSON(w, status, v)
	case errors.Is(err, ErrNotLeader):
		s.forward(w, r, nil)
	case errors.Is(err, ErrNotFound):
		writeErrors(w, http.StatusNotFound, err.Error())
	case errors.Is(err, ErrConflict):
		writeErrors(w, http.StatusConflict, err.Error())
	case errors.Is(err, ErrInvalid):
		writeErrors(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		writeErrors(w, http.StatusServiceUnavailable, err.Error())
	default:
		writeErrors(w, http.StatusInternalServerError, err.Error())
	}
}

// forward sends r to the leader and writes its answer, passed through
// edit when not nil. It answers 503 when no JobManager leads, the leader
// cannot be reached, or r was forwarded already.
func (s *server) forward(w http.ResponseWriter, r *http.Request, edit func(status int, body []byte) []byte) {
	if r.Header.Get(forwardedHeader) != "" {
		writeErrors(w, http.StatusServiceUnavailable, "rest: forwarded to a JobManager that does not lead; leadership is changing, try again")
		return
	}
	leader, err := s.c.Leader(r.Context())
	if err != nil {
		writeErrors(w, http.StatusServiceUnavailable, fmt.Sprintf("rest: no leader to forward to: %v", err))
		return
	}
	if leader == "" {
		writeErrors(w, http.StatusServiceUnavailable, "rest: this JobManager does not lead and no JobManager leads the cluster; try again once one is elected")
		return
	}
	body, _ := r.Context().Value(bodyKey{}).([]byte)
	url := strings.TrimSuffix(leader, "/") + r.URL.RequestURI()
	req, err := http.NewRequestWithContext(r.Context(), r.Method, url, bytes.NewReader(body))
	if err != nil {
		writeErrors(w, http.StatusServiceUnavailable, fmt.Sprintf("rest: forwarding to the leader at %s: %v", leader, err))
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	if s.opts.Token != "" {
		req.Header.Set("Authorization", "Bearer "+s.opts.Token)
	}
	req.Header.Set(forwardedHeader, "1")
	resp, err := s.opts.Client.Do(req)
	if err != nil {
		writeErrors(w, http.StatusServiceUnavailable, fmt.Sprintf("rest: forwarding to the leader at %s: %v", leader, err))
		return
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		writeErrors(w, http.StatusServiceUnavailable, fmt.Sprintf("rest: reading the leader's answer from %s: %v", leader, err))
		return
	}
	if edit != nil {
		out = edit(resp.StatusCode, out)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(out)
}

// pathID returns the path value name, a 32-digit hexadecimal id as
// Flink's JobID and TriggerId, in lower case; it answers 400 otherwise.
func pathID(w http.ResponseWriter, r *http.Request, name, what string) (string, bool) {
	id := r.PathValue(name)
	if !validID(id) {
		writeErrors(w, http.StatusBadRequest, fmt.Sprintf("rest: %s %q: want 32 hexadecimal digits", what, id))
		return "", false
	}
	return strings.ToLower(id), true
}

// validID reports whether id is 32 hexadecimal digits.
func validID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// decode reads r's JSON body into v, refusing unknown fields; it answers
// 400 when the body does not decode. An empty body leaves v as it is.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	body, _ := r.Context().Value(bodyKey{}).([]byte)
	if len(bytes.TrimSpace(body)) == 0 {
		return true
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeErrors(w, http.StatusBadRequest, fmt.Sprintf("rest: request body of %s %s: %v", r.Method, r.URL.Path, err))
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeErrors(w, http.StatusInternalServerError, fmt.Sprintf("rest: encoding the answer: %v", err))
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// errorBody is Flink's ErrorResponseBody.
type errorBody struct {
	Errors []string `json:"errors"`
}

func writeErrors(w http.ResponseWriter, status int, msgs ...string) {
	b, _ := json.Marshal(errorBody{Errors: msgs})
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
