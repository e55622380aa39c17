package view

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/weirdata/weir/stream"
)

// Report is what a stream job's attempt tells its JobManager.
type Report struct {
	Overview    stream.Overview          `json:"overview"`
	Checkpoints stream.CheckpointHistory `json:"checkpoints"`
	Plan        *stream.Plan             `json:"plan,omitempty"`
}

// Encode returns job j's Report now, with its plan (nil when unknown).
func Encode(j *stream.Job, plan *stream.Plan) []byte {
	r := Report{Overview: j.Overview(), Checkpoints: j.Checkpoints(), Plan: plan}
	finite(&r.Overview)
	b, err := json.Marshal(r)
	if err != nil {
		// Only a value JSON cannot hold fails, and finite removed those;
		// the JobManager ignores a report that does not decode.
		return nil
	}
	return b
}

// Decode reads a Report that Encode wrote.
func Decode(b []byte) (Report, error) {
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return Report{}, fmt.Errorf("view: decode a report: %w", err)
	}
	return r, nil
}

// finite replaces the shares and rates JSON cannot hold (NaN, ±Inf) with
// zero.
func finite(o *stream.Overview) {
	fix := func(f *float64) {
		if math.IsNaN(*f) || math.IsInf(*f, 0) {
			*f = 0
		}
	}
	for i := range o.Vertices {
		v := &o.Vertices[i]
		fix(&v.Busy)
		fix(&v.Idle)
		fix(&v.Backpressured)
		for k := range v.Operators {
			fix(&v.Operators[k].RecordsInPerSecond)
			fix(&v.Operators[k].RecordsOutPerSecond)
		}
		for k := range v.Subtasks {
			ms := v.Subtasks[k].Metrics
			for m := range ms {
				fix(&ms[m].Value)
				if h := ms[m].Histogram; h != nil {
					c := *h // the job's own may be shared
					c.Quantiles = append([]float64(nil), h.Quantiles...)
					fix(&c.Mean)
					fix(&c.StdDev)
					for q := range c.Quantiles {
						fix(&c.Quantiles[q])
					}
					ms[m].Histogram = &c
				}
			}
		}
	}
}
