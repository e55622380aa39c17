package shuffle

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/collectors"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// startProxy runs an in-process toxiproxy from a loopback port to n.
func startProxy(t *testing.T, n *node) *toxiproxy.Proxy {
	t.Helper()
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	srv.Metrics.ProxyMetrics = collectors.NewProxyMetricCollectors()
	px := toxiproxy.NewProxy(srv, "shuffle", "127.0.0.1:0", n.addr)
	if err := px.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// a latency toxic's goroutine outlives Stop unless removed first
		px.Toxics.ResetToxics(context.Background())
		px.Stop()
	})
	return px
}

func addToxic(t *testing.T, px *toxiproxy.Proxy, json string) {
	t.Helper()
	if _, err := px.Toxics.AddToxicJson(strings.NewReader(json)); err != nil {
		t.Fatal(err)
	}
}

// TestLatencyKeepsOrder runs the exchange of TestOrderCreditAndEnd through a
// proxy that delays both directions with jitter: no frame is lost or
// reordered.
func TestLatencyKeepsOrder(t *testing.T) {
	n := startNode(t, Options{})
	px := startProxy(t, n)
	addToxic(t, px, `{"name":"up","type":"latency","stream":"upstream","attributes":{"latency":3,"jitter":3}}`)
	addToxic(t, px, `{"name":"down","type":"latency","stream":"downstream","attributes":{"latency":3,"jitter":3}}`)
	cl := newClient(t, Options{Name: "producer-tm"})
	exchange(testCtx(t), t, n, px.Listen, cl, "latency")
}

// TestFaultBreaks sends through a proxy, then resets the connection
// (reset_peer) or makes it swallow everything without closing (timeout):
// both sides report ErrBroken naming the other, the second by heartbeats.
func TestFaultBreaks(t *testing.T) {
	for _, toxic := range []string{
		`{"name":"reset","type":"reset_peer","stream":"upstream","attributes":{"timeout":0}}`,
		`{"name":"silence","type":"timeout","stream":"upstream","attributes":{"timeout":0}}`,
	} {
		t.Run(toxic[9:14], func(t *testing.T) {
			ctx := testCtx(t)
			n := startNode(t, fast)
			px := startProxy(t, n)
			in, err := n.srv.Inbox(killID.inbox(), 1, 4)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			opts := fast
			opts.Name = "producer-tm"
			cl := newClient(t, opts)
			pr, err := cl.Open(ctx, px.Listen, killID)
			if err != nil {
				t.Fatal(err)
			}
			prodErr := make(chan error, 1)
			go func() {
				// one frame, then the fault, then frames until the error
				err := pr.Send(ctx, payload(0, 0))
				if err == nil {
					addToxic(t, px, toxic)
				}
				for seq := 1; err == nil; seq++ {
					err = pr.Send(ctx, payload(0, seq))
				}
				prodErr <- err
			}()
			err = drain(ctx, t, in, func(Frame) {})
			if !errors.Is(err, ErrBroken) || !strings.Contains(err.Error(), "producer-tm") {
				t.Fatalf("Poll: %v, want ErrBroken naming producer-tm", err)
			}
			t.Log(err)
			err = <-prodErr
			if !errors.Is(err, ErrBroken) || !strings.Contains(err.Error(), px.Listen) {
				t.Fatalf("Send: %v, want ErrBroken naming %s", err, px.Listen)
			}
			t.Log(err)
		})
	}
}
