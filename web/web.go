package web

import (
	"crypto/sha256"
	"crypto/subtle"
	_ "embed" // the page
	"net/http"

	"github.com/weirdata/weir/cluster/rest"
	"github.com/weirdata/weir/metrics/prometheus"
)

// page is the web UI: one HTML file with its script and style.
//
//go:embed static/index.html
var page []byte

// Options configure Handler.
type Options struct {
	// Token, when not empty, is the bearer token every request must carry.
	Token string
}

// Handler returns the web UI, /metrics of exp and the REST API over c on
// one handler. See the package documentation for the paths and the token.
func Handler(c rest.Cluster, exp *prometheus.Exporter, opts Options) http.Handler {
	g := guard{}
	if opts.Token != "" {
		g.header = sha256.Sum256([]byte("Bearer " + opts.Token))
		g.query = sha256.Sum256([]byte(opts.Token))
		g.on = true
	}
	mux := http.NewServeMux()
	index := g.wrap(true, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Referrer-Policy", "no-referrer")
		_, _ = w.Write(page)
	}))
	mux.Handle("GET /{$}", index)
	mux.Handle("GET /index.html", index)
	if exp != nil {
		mux.Handle("GET /metrics", g.wrap(false, exp.Handler()))
	} else {
		mux.Handle("GET /metrics", g.wrap(false, http.NotFoundHandler()))
	}
	mux.Handle("/", rest.NewHandler(c, rest.HandlerOptions{Token: opts.Token}))
	return mux
}

// guard checks the token of the paths it wraps.
type guard struct {
	on            bool
	header, query [sha256.Size]byte
}

// wrap answers 401 for a request without the token; with query, a
// "token" query parameter is taken too.
func (g guard) wrap(query bool, h http.Handler) http.Handler {
	if !g.on {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := sha256.Sum256([]byte(r.Header.Get("Authorization")))
		ok := subtle.ConstantTimeCompare(got[:], g.header[:]) == 1
		if query && !ok {
			got = sha256.Sum256([]byte(r.URL.Query().Get("token")))
			ok = subtle.ConstantTimeCompare(got[:], g.query[:]) == 1
		}
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="weir"`)
			http.Error(w, "web: a token is required (Authorization: Bearer <token>, or ?token= on the page's URL)", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}
