package cli

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/weirdata/weir/connectors/kafka"
)

// kafkaPasswordEnv is the environment variable --kafka-sasl-password
// defaults to, so that the password need not be on the command line.
const kafkaPasswordEnv = "WEIR_KAFKA_SASL_PASSWORD"

// kafkaFlags are the flags that say how to reach a Kafka cluster, one to
// one the fields of kafka.Config.
type kafkaFlags struct {
	brokers, clientID                  string
	timeout                            time.Duration
	tls, insecure                      bool
	caFile, certFile, keyFile, tlsName string
	mechanism, user, password          string
}

// kafkaConnFlags are the names of kafkaFlags: how a job reaches the
// cluster, not what it computes (a resume may change them, and the
// password stays out of the checkpoints' fingerprint).
var kafkaConnFlags = []string{"kafka-brokers", "kafka-client-id", "kafka-timeout", "kafka-tls", "kafka-tls-ca",
	"kafka-tls-cert", "kafka-tls-key", "kafka-tls-server-name", "kafka-tls-insecure-skip-verify",
	"kafka-sasl-mechanism", "kafka-sasl-user", "kafka-sasl-password"}

func init() {
	for _, n := range kafkaConnFlags {
		operational[n] = true
	}
}

func (k *kafkaFlags) bind(f *pflag.FlagSet) {
	f.StringVar(&k.brokers, "kafka-brokers", "", "Kafka seed brokers, host:port,...")
	f.StringVar(&k.clientID, "kafka-client-id", "weir", "the client id the Kafka clients give the brokers")
	f.DurationVar(&k.timeout, "kafka-timeout", kafka.DefaultTimeout, "bound of every wait on the Kafka cluster; an unreachable cluster is an error within it")
	f.BoolVar(&k.tls, "kafka-tls", false, "connect to the brokers over TLS (implied by the other --kafka-tls-* flags)")
	f.StringVar(&k.caFile, "kafka-tls-ca", "", "PEM file of the certificate authorities to trust (default: the system's)")
	f.StringVar(&k.certFile, "kafka-tls-cert", "", "PEM client certificate, for mutual TLS (with --kafka-tls-key)")
	f.StringVar(&k.keyFile, "kafka-tls-key", "", "PEM key of --kafka-tls-cert")
	f.StringVar(&k.tlsName, "kafka-tls-server-name", "", "name the brokers' certificates are checked against (default: each broker's host)")
	f.BoolVar(&k.insecure, "kafka-tls-insecure-skip-verify", false, "accept any broker certificate (tests only)")
	f.StringVar(&k.mechanism, "kafka-sasl-mechanism", "", "SASL mechanism: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	f.StringVar(&k.user, "kafka-sasl-user", "", "SASL user")
	f.StringVar(&k.password, "kafka-sasl-password", "", "SASL password (default: $"+kafkaPasswordEnv+")")
}

// config returns the kafka.Config of the flags; a configuration that
// cannot work is a usage error.
func (k *kafkaFlags) config() (kafka.Config, error) {
	c := kafka.Config{Brokers: kafka.ParseBrokers(k.brokers), ClientID: k.clientID, Timeout: k.timeout}
	if k.tls || k.caFile != "" || k.certFile != "" || k.keyFile != "" || k.tlsName != "" || k.insecure {
		c.TLS = &kafka.TLS{CAFile: k.caFile, CertFile: k.certFile, KeyFile: k.keyFile, ServerName: k.tlsName, InsecureSkipVerify: k.insecure}
	}
	if k.mechanism != "" || k.user != "" {
		pw := k.password
		if pw == "" {
			pw = os.Getenv(kafkaPasswordEnv)
		}
		c.SASL = &kafka.SASL{Mechanism: k.mechanism, User: k.user, Password: pw}
	}
	if k.timeout <= 0 {
		return c, &usageError{err: fmt.Errorf("--kafka-timeout must be positive, got %v", k.timeout)}
	}
	if err := c.Validate(); err != nil {
		return c, &usageError{err: fmt.Errorf("--kafka-*: %w", err)}
	}
	return c, nil
}
