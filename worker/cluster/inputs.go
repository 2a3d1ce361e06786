package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// Job inputs are blobs an api worker stores in the Object Store for the
// shards of one job to read: inputs too large for the job's spec (one NATS
// message), such as the source data and target of an estimation or the
// tiles of an ensemble. The spec names an input by its SHA-256; its object
// is "in-<job>-<sha256>", so inputs never share an object with shard results
// (which Forget deletes) nor with another job's inputs (a job's inputs are
// deleted with DeleteInput when it ends, whatever other jobs run, or all at
// once with DeleteInputs when the worker that stored them died).

// inputName is the Object Store name of a job's input.
func inputName(job, digest string) string { return "in-" + job + "-" + digest }

// PutInput stores b as an input of job and returns its lowercase hex
// SHA-256, which the job's spec names. Storing the same bytes again for the
// same job does nothing.
func (q *Queue) PutInput(ctx context.Context, job string, b []byte) (string, error) {
	if !tokenRE.MatchString(job) {
		return "", fmt.Errorf("cluster: job id %q: want 1 to 128 letters, digits, '-' or '_'", job)
	}
	sum := sha256.Sum256(b)
	digest := hex.EncodeToString(sum[:])
	name, objDigest := inputName(job, digest), objectDigest(sum[:])
	if info, err := q.obs.GetInfo(ctx, name); err == nil && info.Digest == objDigest {
		return digest, nil
	}
	info, err := q.obs.Put(ctx, jetstream.ObjectMeta{Name: name, Opts: &jetstream.ObjectMetaOptions{ChunkSize: q.chunk}}, bytes.NewReader(b))
	if err != nil {
		return "", fmt.Errorf("cluster: storing an input of job %s: %w", job, err)
	}
	if info.Digest != objDigest {
		return "", fmt.Errorf("cluster: input %s of job %s stored with digest %s", digest, job, info.Digest)
	}
	return digest, nil
}

// ErrNoInput is returned for an input the Object Store does not hold (its
// job is over, or it was never stored).
var ErrNoInput = errors.New("cluster: no such input")

// Input reads the input of job with SHA-256 digest into buf's storage when
// it is large enough (else into a new slice) and returns it; the bytes are
// checked against the digest.
func (q *Queue) Input(ctx context.Context, job, digest string, buf []byte) ([]byte, error) {
	raw, err := hex.DecodeString(digest)
	if err != nil || len(raw) != sha256.Size {
		return nil, fmt.Errorf("cluster: input %q of job %s: not a SHA-256", digest, job)
	}
	r, err := q.obs.Get(ctx, inputName(job, digest))
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, fmt.Errorf("%w: %s of job %s", ErrNoInput, digest, job)
	}
	if err != nil {
		return nil, fmt.Errorf("cluster: input %s of job %s: %w", digest, job, err)
	}
	return readChecked(r, raw, buf, fmt.Sprintf("input %s of job %s", digest, job))
}

// DeleteInput deletes an input of job; deleting one that is not there does
// nothing.
func (q *Queue) DeleteInput(ctx context.Context, job, digest string) error {
	if err := q.obs.Delete(ctx, inputName(job, digest)); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
		return fmt.Errorf("cluster: deleting input %s of job %s: %w", digest, job, err)
	}
	return nil
}

// DeleteInputs deletes every input of job (for a job whose api worker died
// before it could delete them) and returns how many it deleted. It spares
// the inputs of every other job, including those whose id starts with
// job's.
func (q *Queue) DeleteInputs(ctx context.Context, job string) (int, error) {
	infos, err := q.obs.List(ctx)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("cluster: listing the inputs of job %s: %w", job, err)
	}
	prefix, n := inputName(job, ""), 0
	for _, info := range infos {
		digest, ok := strings.CutPrefix(info.Name, prefix)
		if !ok || len(digest) != 2*sha256.Size || strings.Trim(digest, "0123456789abcdef") != "" {
			continue
		}
		if err := q.obs.Delete(ctx, info.Name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
			return n, fmt.Errorf("cluster: deleting input %s of job %s: %w", digest, job, err)
		}
		n++
	}
	return n, nil
}
