// Package rest is a JobManager's REST API: Flink's paths and JSON field
// names over a Cluster.
package rest
