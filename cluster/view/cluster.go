package view

import (
	"context"
	"time"

	"github.com/weirdata/weir/cluster"
	"github.com/weirdata/weir/cluster/rest"
	"github.com/weirdata/weir/metrics/prometheus"
	"github.com/weirdata/weir/stream"
)

// Source is a JobManager as a Cluster reads it: its REST answers and the
// Reports of each job's attempts (cluster/jobmanager's JobManager).
type Source interface {
	rest.Cluster
	// Reports returns the latest Report of each attempt of job jid that
	// sent one, oldest first, and the job's restarts.
	Reports(ctx context.Context, jid string) ([]cluster.AttemptReport, int, error)
}

// Cluster is a Source whose jobs' answers carry what their attempts
// reported.
type Cluster struct {
	Source
}

var _ rest.Cluster = Cluster{}

// reports decodes the Reports of job jid, oldest first (a spread
// attempt's merged over its shares), skipping those that do not decode.
func (c Cluster) reports(ctx context.Context, jid string) ([]Report, int, error) {
	rs, restarts, err := c.Reports(ctx, jid)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Report, 0, len(rs))
	for _, r := range rs {
		if d, err := latest(r); err == nil {
			out = append(out, d)
		}
	}
	return out, restarts, nil
}

// Job is the Source's answer with each vertex's metrics from the latest
// Report and the plan under the vertices' ids.
func (c Cluster) Job(ctx context.Context, jid string) (rest.JobDetails, error) {
	d, err := c.Source.Job(ctx, jid)
	if err != nil {
		return d, err
	}
	rs, _, err := c.Reports(ctx, jid)
	if err != nil || len(rs) == 0 {
		return d, err
	}
	last, err := latest(rs[len(rs)-1])
	if err != nil {
		return d, nil // a report that does not decode is ignored
	}
	ov := last.Overview.Vertices
	if len(ov) != len(d.Vertices) {
		return d, nil // the vertices are not the Overview's: nothing to match
	}
	ids := make([]string, len(d.Vertices))
	for i := range d.Vertices {
		d.Vertices[i].Metrics = VertexMetrics(ov[i])
		ids[i] = d.Vertices[i].ID
	}
	d.Plan = Plan(jid, d.Name, last.Plan, ids)
	d.Memory = Memory(last.Overview)
	return d, nil
}

// Checkpoints is the Source's answer with the history of every attempt's
// completed checkpoints, newest first, and the failed ones counted.
func (c Cluster) Checkpoints(ctx context.Context, jid string) (rest.Checkpoints, error) {
	cp, err := c.Source.Checkpoints(ctx, jid)
	if err != nil {
		return cp, err
	}
	rs, _, err := c.reports(ctx, jid)
	if err != nil {
		return cp, err
	}
	h := merged(rs, 0)
	cp.History = History(h)
	cp.Counts.Failed = h.Failed
	cp.Counts.Total += h.Failed
	return cp, nil
}

// merged is the checkpoint history of all the reports' attempts, oldest
// first, with restarts.
func merged(rs []Report, restarts int) stream.CheckpointHistory {
	h := stream.CheckpointHistory{Restarts: restarts}
	for _, r := range rs {
		h.Completed = append(h.Completed, r.Checkpoints.Completed...)
		h.Restores = append(h.Restores, r.Checkpoints.Restores...)
		h.Failed += r.Checkpoints.Failed
	}
	return h
}

// Jobs are src's jobs that have not ended, as an Exporter lists them
// (Exporter.List): uptime from their submission, restarts as the Source
// counts them, the checkpoints of all their attempts and the latest
// attempt's Overview. A job that vanished between the calls is left out.
func Jobs(ctx context.Context, src Source) []prometheus.Listed {
	jobs, err := src.Jobs(ctx)
	if err != nil {
		return nil
	}
	var out []prometheus.Listed
	for _, jo := range jobs {
		if rest.Ended(jo.State) {
			continue
		}
		rs, restarts, err := Cluster{src}.reports(ctx, jo.ID)
		if err != nil {
			continue
		}
		j := &job{id: jo.ID, status: status(jo.State), history: merged(rs, restarts)}
		if n := len(rs); n > 0 {
			j.overview = rs[n-1].Overview
		}
		out = append(out, prometheus.Listed{Name: jo.Name, Job: j, Start: time.UnixMilli(jo.Start)})
	}
	return out
}

// status is the stream.Status of a job in REST state s.
func status(s string) stream.Status {
	switch s {
	case rest.StateCreated, rest.StateInitializing:
		return stream.Created
	case rest.StateFinished:
		return stream.Finished
	case rest.StateFailed:
		return stream.Failed
	case rest.StateCanceled:
		return stream.Canceled
	}
	return stream.Running
}

// job is a job of a Source as a prometheus.Job: what its reports said.
type job struct {
	id       string
	status   stream.Status
	overview stream.Overview
	history  stream.CheckpointHistory
}

func (j *job) ID() string                            { return j.id }
func (j *job) Status() stream.Status                 { return j.status }
func (j *job) Overview() stream.Overview             { return j.overview }
func (j *job) Checkpoints() stream.CheckpointHistory { return j.history }
