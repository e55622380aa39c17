package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/weirdata/weir/stream/checkpoint"
)

// Config says how to reach an S3-compatible store.
type Config struct {
	// Endpoint is the store's address: host[:port], or a URL whose scheme
	// says HTTP or HTTPS. Empty: Amazon S3 (s3.amazonaws.com).
	Endpoint string
	// AccessKeyID, SecretAccessKey and SessionToken are the credentials;
	// empty keys make anonymous requests.
	AccessKeyID, SecretAccessKey, SessionToken string
	// Region is the bucket's region; empty lets the client find it.
	Region string
	// Insecure uses plain HTTP for an endpoint given without a scheme.
	Insecure bool
	// PathStyle sends path-style requests (host/bucket/key), as MinIO and
	// most stores but Amazon S3 want. A non-AWS endpoint implies it.
	PathStyle bool
	// Timeout bounds each request (default 30 s).
	Timeout time.Duration
}

// ConfigFromEnv returns the configuration the AWS environment variables
// give: AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION or
// AWS_DEFAULT_REGION.
func ConfigFromEnv() Config {
	c := Config{
		Endpoint:        os.Getenv("AWS_ENDPOINT_URL_S3"),
		AccessKeyID:     os.Getenv("AWS_ACCESS_KEY_ID"),
		SecretAccessKey: os.Getenv("AWS_SECRET_ACCESS_KEY"),
		SessionToken:    os.Getenv("AWS_SESSION_TOKEN"),
		Region:          os.Getenv("AWS_REGION"),
	}
	if c.Endpoint == "" {
		c.Endpoint = os.Getenv("AWS_ENDPOINT_URL")
	}
	if c.Region == "" {
		c.Region = os.Getenv("AWS_DEFAULT_REGION")
	}
	return c
}

// IsURL reports whether s is an s3:// URL.
func IsURL(s string) bool { return strings.HasPrefix(s, "s3://") }

// ParseURL splits s3://bucket/prefix into the bucket and the prefix
// (without slashes at its ends; empty for the bucket's root).
func ParseURL(s string) (bucket, prefix string, err error) {
	rest, ok := strings.CutPrefix(s, "s3://")
	if !ok {
		return "", "", fmt.Errorf("s3: %q is not an s3://bucket/prefix URL", s)
	}
	bucket, prefix, _ = strings.Cut(rest, "/")
	if bucket == "" {
		return "", "", fmt.Errorf("s3: %q names no bucket", s)
	}
	return bucket, strings.Trim(prefix, "/"), nil
}

var _ checkpoint.Bucket = (*Bucket)(nil)

// Bucket is one bucket of a store, a checkpoint.Bucket.
type Bucket struct {
	c       *minio.Client
	name    string
	where   string // the endpoint, for messages
	timeout time.Duration
}

// Open returns bucket name of the store cfg reaches, after checking that
// the bucket exists: an unreachable store or a missing bucket is an error
// naming the endpoint.
func Open(ctx context.Context, cfg Config, name string) (*Bucket, error) {
	endpoint, secure, pathStyle := "s3.amazonaws.com", !cfg.Insecure, cfg.PathStyle
	if cfg.Endpoint != "" {
		endpoint = cfg.Endpoint
		if u, err := url.Parse(cfg.Endpoint); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
			endpoint, secure = u.Host, u.Scheme == "https"
		}
		if !strings.HasSuffix(endpoint, "amazonaws.com") {
			pathStyle = true
		}
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	lookup := minio.BucketLookupAuto
	if pathStyle {
		lookup = minio.BucketLookupPath
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: timeout}).DialContext
	tr.ResponseHeaderTimeout = timeout
	var creds *credentials.Credentials
	if cfg.AccessKeyID != "" || cfg.SecretAccessKey != "" {
		creds = credentials.NewStaticV4(cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken)
	} else {
		creds = credentials.New(&credentials.Static{}) // anonymous
	}
	c, err := minio.New(endpoint, &minio.Options{Creds: creds, Secure: secure, Region: cfg.Region,
		BucketLookup: lookup, Transport: tr, MaxRetries: 1})
	if err != nil {
		return nil, fmt.Errorf("s3: %s: %w", endpoint, err)
	}
	b := &Bucket{c: c, name: name, where: endpoint, timeout: timeout}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ok, err := c.BucketExists(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("s3: bucket %s at %s: %w", name, endpoint, err)
	}
	if !ok {
		return nil, fmt.Errorf("s3: bucket %s at %s does not exist", name, endpoint)
	}
	return b, nil
}

// String returns the bucket's URL, s3://name.
func (b *Bucket) String() string { return "s3://" + b.name }

func (b *Bucket) err(op, key string, err error) error {
	if notFound(err) {
		return fmt.Errorf("s3: %s %s/%s: %w", op, b, key, fs.ErrNotExist)
	}
	return fmt.Errorf("s3: %s %s/%s at %s: %w", op, b, key, b.where, err)
}

func notFound(err error) bool {
	code := minio.ToErrorResponse(err).Code
	return code == minio.NoSuchKey || code == "NotFound"
}

// Put stores the size bytes of r under key.
func (b *Bucket) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	// An empty object goes unsigned: a streaming signature would send it
	// chunked, which not every store takes.
	opts := minio.PutObjectOptions{DisableMultipart: size < 64<<20, DisableContentSha256: size == 0}
	if _, err := b.c.PutObject(ctx, b.name, key, r, size, opts); err != nil {
		return b.err("put", key, err)
	}
	return nil
}

// Get opens the object at key; a missing key is an error wrapping
// fs.ErrNotExist.
func (b *Bucket) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	o, err := b.c.GetObject(ctx, b.name, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, b.err("get", key, err)
	}
	// The request is sent by the first read or Stat: make it now, so that
	// a missing key is told here.
	if _, err := o.Stat(); err != nil {
		o.Close()
		return nil, b.err("get", key, err)
	}
	return readCloser{o: o, b: b, key: key}, nil
}

type readCloser struct {
	o   *minio.Object
	b   *Bucket
	key string
}

func (r readCloser) Read(p []byte) (int, error) {
	n, err := r.o.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = r.b.err("read", r.key, err)
	}
	return n, err
}

func (r readCloser) Close() error { return r.o.Close() }

// Size returns the length of the object at key.
func (b *Bucket) Size(ctx context.Context, key string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	info, err := b.c.StatObject(ctx, b.name, key, minio.StatObjectOptions{})
	if err != nil {
		return 0, b.err("stat", key, err)
	}
	return info.Size, nil
}

// List returns every key starting with prefix, sorted.
func (b *Bucket) List(ctx context.Context, prefix string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	var keys []string
	for o := range b.c.ListObjects(ctx, b.name, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			return nil, b.err("list", prefix, o.Err)
		}
		keys = append(keys, o.Key)
	}
	slices.Sort(keys) // S3 lists in this order already; not every store does
	return keys, nil
}

// Delete removes the object at key.
func (b *Bucket) Delete(ctx context.Context, key string) error {
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	if err := b.c.RemoveObject(ctx, b.name, key, minio.RemoveObjectOptions{}); err != nil && !notFound(err) {
		return b.err("delete", key, err)
	}
	return nil
}
