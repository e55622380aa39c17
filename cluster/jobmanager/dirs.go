package jobmanager

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/weirdata/weir/stream/checkpoint/s3"
)

// jobDir is the directory of job id's attempts: <CheckpointDir>/<id>.
func (jm *JobManager) jobDir(id string) string {
	return strings.TrimSuffix(jm.opts.CheckpointDir, "/") + "/" + id
}

// attemptDir is the checkpoint directory of an attempt of job id.
func (jm *JobManager) attemptDir(id, attempt string) string {
	return jm.jobDir(id) + "/" + attempt
}

// pruneAttempts removes the directories under job id's of the attempts
// before keep (of this leadership or an earlier one), and anything else
// there that is no attempt's. It runs beside the job: an attempt deployed
// after keep sorts after it and is left alone.
func (jm *JobManager) pruneAttempts(ctx context.Context, id, keep string) error {
	dir := jm.jobDir(id)
	superseded := func(name string) bool { return name != keep && !attemptAfter(name, keep) }
	if !s3.IsURL(dir) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("jobmanager: the attempts of job %s: %w", id, err)
		}
		var errs []error
		for _, e := range entries {
			if superseded(e.Name()) {
				errs = append(errs, os.RemoveAll(filepath.Join(dir, e.Name())))
			}
		}
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("jobmanager: remove the superseded attempts of job %s: %w", id, err)
		}
		return nil
	}
	return jm.removeKeys(ctx, dir, func(rel string) bool { a, _, _ := strings.Cut(rel, "/"); return superseded(a) })
}

// attemptAfter reports whether name is an attempt id ("<epoch>-<n>")
// deployed after attempt id keep: of a later epoch, or of keep's with a
// larger n.
func attemptAfter(name, keep string) bool {
	e, n, ok := parseAttempt(name)
	ke, kn, kok := parseAttempt(keep)
	return ok && kok && (e > ke || e == ke && n > kn)
}

func parseAttempt(id string) (epoch, n int64, ok bool) {
	a, b, found := strings.Cut(id, "-")
	if !found {
		return 0, 0, false
	}
	epoch, err1 := strconv.ParseInt(a, 10, 64)
	n, err2 := strconv.ParseInt(b, 10, 64)
	return epoch, n, err1 == nil && err2 == nil
}

// removeJobDir removes job id's directory, with every attempt's
// checkpoints.
func (jm *JobManager) removeJobDir(ctx context.Context, id string) error {
	dir := jm.jobDir(id)
	if !s3.IsURL(dir) {
		if err := os.RemoveAll(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("jobmanager: remove the checkpoints of job %s: %w", id, err)
		}
		return nil
	}
	return jm.removeKeys(ctx, dir, func(string) bool { return true })
}

// removeKeys deletes the objects under the s3:// URL dir whose key,
// relative to dir, remove selects.
func (jm *JobManager) removeKeys(ctx context.Context, dir string, remove func(rel string) bool) error {
	name, prefix, err := s3.ParseURL(dir)
	if err != nil {
		return fmt.Errorf("jobmanager: %w", err)
	}
	b, err := s3.Open(ctx, s3.ConfigFromEnv(), name)
	if err != nil {
		return fmt.Errorf("jobmanager: %w", err)
	}
	prefix = strings.Trim(prefix, "/") + "/"
	keys, err := b.List(ctx, prefix)
	if err != nil {
		return fmt.Errorf("jobmanager: list %s: %w", dir, err)
	}
	var errs []error
	for _, k := range keys {
		if remove(strings.TrimPrefix(k, prefix)) {
			errs = append(errs, b.Delete(ctx, k))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("jobmanager: remove under %s: %w", dir, err)
	}
	return nil
}
