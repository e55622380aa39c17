package kafka

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// DefaultTimeout is Config.Timeout when it is zero.
const DefaultTimeout = 30 * time.Second

// Config says how to reach a Kafka cluster: what a command line takes as
// --kafka-brokers, --kafka-tls*, --kafka-sasl-* flags. Sources and sinks
// copy it when they are built.
type Config struct {
	// Brokers are the seed brokers, host:port each.
	Brokers []string
	// ClientID names the clients to the brokers ("weir" when empty).
	ClientID string
	// Timeout bounds each operation that waits on the cluster: reaching
	// it, listing partitions and offsets, flushing a writer on a barrier,
	// committing a transaction. Zero means DefaultTimeout. An unreachable
	// cluster is an error within it.
	Timeout time.Duration
	// TLS, when set, connects over TLS.
	TLS *TLS
	// SASL, when set, authenticates the connections.
	SASL *SASL
}

// TLS is the TLS setup of Config.
type TLS struct {
	// CAFile is a PEM file of the certificate authorities to trust; empty
	// means the system's.
	CAFile string
	// CertFile and KeyFile are a PEM client certificate and its key, for
	// brokers that authenticate clients by TLS; both or neither.
	CertFile, KeyFile string
	// ServerName overrides the name the brokers' certificates are checked
	// against (the host of each broker's address by default).
	ServerName string
	// InsecureSkipVerify accepts any certificate: for tests only.
	InsecureSkipVerify bool
	// Config, when set, is used as it is and the fields above are ignored.
	Config *tls.Config
}

// SASL is the SASL setup of Config.
type SASL struct {
	// Mechanism is PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512.
	Mechanism string
	User      string
	Password  string
}

// The SASL mechanisms Config supports.
const (
	SASLPlain       = "PLAIN"
	SASLScramSHA256 = "SCRAM-SHA-256"
	SASLScramSHA512 = "SCRAM-SHA-512"
)

// ErrConfig is wrapped by the errors of a Config that cannot work.
var ErrConfig = errors.New("connectors/kafka: bad configuration")

// Validate says what is wrong with c, if anything.
func (c Config) Validate() error {
	if len(c.Brokers) == 0 {
		return fmt.Errorf("%w: no brokers", ErrConfig)
	}
	for _, b := range c.Brokers {
		if b == "" || strings.ContainsAny(b, " \t,") {
			return fmt.Errorf("%w: broker %q is not host:port", ErrConfig, b)
		}
	}
	if c.Timeout < 0 {
		return fmt.Errorf("%w: negative timeout %v", ErrConfig, c.Timeout)
	}
	if s := c.SASL; s != nil {
		switch strings.ToUpper(s.Mechanism) {
		case SASLPlain, SASLScramSHA256, SASLScramSHA512:
		default:
			return fmt.Errorf("%w: SASL mechanism %q (want %s, %s or %s)", ErrConfig, s.Mechanism, SASLPlain, SASLScramSHA256, SASLScramSHA512)
		}
		if s.User == "" {
			return fmt.Errorf("%w: SASL without a user", ErrConfig)
		}
	}
	if t := c.TLS; t != nil && t.Config == nil && (t.CertFile == "") != (t.KeyFile == "") {
		return fmt.Errorf("%w: TLS needs both a certificate and its key, or neither", ErrConfig)
	}
	return nil
}

// timeout is Timeout or its default.
func (c Config) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

// ParseBrokers splits a comma-separated list of brokers, as a --kafka-brokers
// flag holds it.
func ParseBrokers(s string) []string {
	var out []string
	for _, b := range strings.Split(s, ",") {
		if b = strings.TrimSpace(b); b != "" {
			out = append(out, b)
		}
	}
	return out
}

// options returns the client options of c, with extra appended.
func (c Config) options(extra ...kgo.Opt) ([]kgo.Opt, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	id := c.ClientID
	if id == "" {
		id = "weir"
	}
	to := c.timeout()
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.Brokers...),
		kgo.ClientID(id),
		kgo.DialTimeout(min(to, 10*time.Second)),
		kgo.RetryTimeout(to),
		// a client closes at once: no final telemetry push to wait for
		kgo.DisableClientMetrics(),
	}
	if c.TLS != nil {
		tc, err := c.TLS.config()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	if s := c.SASL; s != nil {
		var m sasl.Mechanism
		switch strings.ToUpper(s.Mechanism) {
		case SASLPlain:
			m = plain.Auth{User: s.User, Pass: s.Password}.AsMechanism()
		case SASLScramSHA256:
			m = scram.Auth{User: s.User, Pass: s.Password}.AsSha256Mechanism()
		default:
			m = scram.Auth{User: s.User, Pass: s.Password}.AsSha512Mechanism()
		}
		opts = append(opts, kgo.SASL(m))
	}
	return append(opts, extra...), nil
}

func (t *TLS) config() (*tls.Config, error) {
	if t.Config != nil {
		return t.Config.Clone(), nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName, InsecureSkipVerify: t.InsecureSkipVerify}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("%w: TLS CA file: %w", ErrConfig, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: TLS CA file %s holds no PEM certificate", ErrConfig, t.CAFile)
		}
		tc.RootCAs = pool
	}
	if t.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: TLS client certificate: %w", ErrConfig, err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// ErrUnreachable is wrapped by the error of a cluster that did not answer
// within Config.Timeout.
var ErrUnreachable = errors.New("connectors/kafka: brokers unreachable")

// connect returns a client of c with extra options, once a broker answered
// within the timeout.
func (c Config) connect(extra ...kgo.Opt) (*kgo.Client, error) {
	opts, err := c.options(extra...)
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout())
	defer cancel()
	if err := cl.Ping(ctx); err != nil {
		cl.Close()
		return nil, c.unreachable(err)
	}
	return cl, nil
}

// unreachable wraps err, a failure to reach the cluster.
func (c Config) unreachable(err error) error {
	return fmt.Errorf("%w: %s within %v: %w", ErrUnreachable, strings.Join(c.Brokers, ","), c.timeout(), err)
}

// opContext returns a context for one operation on the cluster.
func (c Config) opContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), c.timeout())
}
