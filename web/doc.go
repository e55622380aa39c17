// Package web serves what a person and a dashboard look at while a job
// runs: Flink's REST API (package rest), the jobs' metrics in Prometheus'
// text format (package metrics/prometheus) and a web UI over the REST API.
// `weir run <job> --web-ui H:P` serves it for its own job (package
// cluster/local); a JobManager serves it over its cluster the same way.
//
// # Model
//
// Handler routes:
//
//	GET /, /index.html   the web UI: one embedded page (static/index.html),
//	                     its script and style inline, no build step
//	GET /metrics         the Exporter's metrics, Prometheus' text format
//	anything else        the REST API: rest.NewHandler over the Cluster
//
// The REST API's own index (its GET /) gives way to the page, as in Flink,
// whose web UI and REST API share one port.
//
// The page polls the REST API with fetch() every second and draws, by its
// URL's fragment, the jobs list with the cluster's overview and
// TaskManagers (#/), or a job (#/jobs/<jid>): its state and the cancel and
// stop-with-savepoint buttons (PATCH /jobs/<jid>?mode=cancel and POST
// /jobs/<jid>/stop), its graph as SVG (vertices in the plan's order,
// columns by depth from the sources, edges labelled with their
// partitioning; each vertex with its parallelism, records in and out, rates,
// busy and backpressured shares and low watermark, coloured as Flink's web
// UI colours them: redder the busier, grey when backpressured), and its
// checkpoints (counts, the latest completed, savepoint and restored, the
// history with sizes, durations and alignment), its exceptions (the
// failures of its attempts, newest first: GET /jobs/<jid>/exceptions), and
// the TaskManagers with their slots, cores and managed memory.
//
// # Contracts
//
//   - Token: with Options.Token every path answers 401 without it. The REST
//     API and /metrics take only "Authorization: Bearer <token>"; the page
//     also takes "?token=<token>" in its URL, because a browser's first
//     load cannot send a header. The page then keeps the token in
//     sessionStorage (for this tab), removes it from the address bar, and
//     sends it as a bearer token with every request. The comparison takes
//     the same time for every wrong token.
//   - A nil Exporter serves /metrics as 404.
//   - The handler is safe for concurrent use and holds nothing per request
//     beyond the request.
package web
