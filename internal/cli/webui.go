package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/weirdata/weir/cluster/local"
	"github.com/weirdata/weir/metrics/prometheus"
	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/web"
)

// webUIFlags are --web-ui of a stream job of weir run, and the token of
// its --rest-token (registered by submitFlags).
type webUIFlags struct {
	addr  string
	token *string
}

// register adds --web-ui to f; token is the value of --rest-token.
func (w *webUIFlags) register(f *pflag.FlagSet, token *string) {
	f.StringVar(&w.addr, "web-ui", "", "serve the web UI, Flink's REST API and /metrics (Prometheus) at host:port while the job runs, requiring --rest-token; an empty host is 127.0.0.1, port 0 picks one (the address is printed)")
	w.token = token
}

// webUI is the server of --web-ui while its command runs.
type webUI struct {
	srv     *http.Server
	cluster *local.Cluster
	exp     *prometheus.Exporter
	served  chan error
	plan    *stream.Plan

	mu      sync.Mutex
	stopped string // the savepoint of a stop through the REST API
}

// webUIAddr is addr with 127.0.0.1 for an empty host: the UI answers on
// all interfaces only when asked so (0.0.0.0: or [::]:).
func webUIAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", &usageError{fmt.Errorf("--web-ui %q: %w (want host:port, e.g. 127.0.0.1:8081 or :8081)", addr, err)}
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// start listens on --web-ui and serves until close, printing the address
// to out; nil without --web-ui.
func (w *webUIFlags) start(out io.Writer, slots int, memory int64, savepointDir string) (*webUI, error) {
	if w.addr == "" {
		return nil, nil
	}
	addr, err := webUIAddr(w.addr)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--web-ui: %w", err)
	}
	token := *w.token
	if token == "" {
		token = os.Getenv(restTokenEnv)
	}
	u := &webUI{exp: prometheus.New(nil), served: make(chan error, 1)}
	u.cluster = local.New(local.Options{Slots: slots, Memory: memory, SavepointDir: savepointDir, Stopped: func(_, path string) {
		u.mu.Lock()
		defer u.mu.Unlock()
		u.stopped = path
	}})
	u.srv = &http.Server{Handler: web.Handler(u.cluster, u.exp, web.Options{Token: token}), ReadHeaderTimeout: 10 * time.Second}
	go func() { u.served <- u.srv.Serve(l) }()
	if _, err := fmt.Fprintf(out, "Web UI at http://%s/\n", l.Addr()); err != nil {
		u.close()
		return nil, err
	}
	return u, nil
}

// planned keeps the job's plan for its graph.
func (u *webUI) planned(p *stream.Plan) error {
	u.plan = p
	return nil
}

// started serves job j under name.
func (u *webUI) started(name string, j *stream.Job) {
	u.cluster.Add(name, j, u.plan)
	u.exp.Add(name, j)
}

// savepoint returns the path of the savepoint a stop through the REST API
// wrote, or "", once the savepoints in progress ended (at most 10 s
// after the job's end).
func (u *webUI) savepoint() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = u.cluster.WaitSavepoints(ctx)
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.stopped
}

// close stops serving: the requests in progress get 5 seconds to end.
func (u *webUI) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = u.srv.Shutdown(ctx)
	if err := <-u.served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		_ = u.srv.Close()
	}
	u.cluster.Close()
}
