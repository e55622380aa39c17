package cli

import (
	"fmt"
	"sync"
	"time"
)

// progressEvery is how often a progress line is redrawn.
const progressEvery = 250 * time.Millisecond

// startProgress redraws a progress line on j.progress (if set) until the returned
// stop function is called; stop waits for the goroutine and ends the line.
func (j *sortJob) startProgress(inputSize int64) (stop func()) {
	if j.progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				j.drawProgress(inputSize)
				fmt.Fprintln(j.progress)
				return
			case <-t.C:
				j.drawProgress(inputSize)
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
		})
	}
}

func (j *sortJob) drawProgress(inputSize int64) {
	switch j.phase.Load() {
	case phaseRead:
		fmt.Fprintf(j.progress, "\rweir sort: reading %s of %s%s\033[K", humanBytes(j.read.Load()), humanBytes(inputSize), percent(j.read.Load(), inputSize))
	default:
		fmt.Fprintf(j.progress, "\rweir sort: merging, wrote %s of %s%s\033[K", humanBytes(j.written.Load()), humanBytes(j.read.Load()), percent(j.written.Load(), j.read.Load()))
	}
}

func percent(n, total int64) string {
	if total <= 0 {
		return ""
	}
	return fmt.Sprintf(" (%d%%)", n*100/total)
}
