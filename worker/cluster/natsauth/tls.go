package natsauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// ServerTLS is the TLS configuration of a listening server: its
// certificate chain and key (PEM files).
func ServerTLS(certFile, keyFile string) (*tls.Config, error) {
	if certFile == "" || keyFile == "" {
		return nil, errors.New("natsauth: TLS needs both a certificate and a key")
	}
	cfg, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: certFile, KeyFile: keyFile})
	if err != nil {
		return nil, fmt.Errorf("natsauth: TLS certificate %s, key %s: %w", certFile, keyFile, err)
	}
	return cfg, nil
}

// ClientTLS makes a joining connection use TLS and verify the server's
// certificate against the CA certificates of caFile (PEM).
func ClientTLS(caFile string) (nats.Option, error) {
	b, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("natsauth: TLS CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("natsauth: TLS CA %s: no PEM certificate in it", caFile)
	}
	return nats.Secure(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}), nil
}

// TLSFiles are the files NewTLS writes.
type TLSFiles struct {
	// CA is the certificate of the CA (for -nats-tls-ca of joining
	// workers); its key is not kept.
	CA string
	// Cert and Key are the server's certificate and key (for
	// -nats-tls-cert and -nats-tls-key of the listening worker).
	Cert, Key string
}

// NewTLS writes in dir (created with mode 0700 when missing; files mode
// 0600, never overwritten) a new self-signed CA certificate (ca.pem) and a
// server certificate signed by it (server-cert.pem, server-key.pem) for
// hosts (DNS names or IP addresses the joining workers dial), valid for
// validity from now. The CA's key is discarded: to add a host, generate
// new files.
func NewTLS(dir string, hosts []string, validity time.Duration) (TLSFiles, error) {
	f := TLSFiles{CA: filepath.Join(dir, "ca.pem"), Cert: filepath.Join(dir, "server-cert.pem"), Key: filepath.Join(dir, "server-key.pem")}
	if len(hosts) == 0 {
		return f, errors.New("natsauth: a server certificate needs at least one host name or address")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return f, fmt.Errorf("natsauth: %w", err)
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return f, fmt.Errorf("natsauth: CA key: %w", err)
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "geostat NATS CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(validity),
		IsCA: true, BasicConstraintsValid: true, MaxPathLenZero: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return f, fmt.Errorf("natsauth: CA certificate: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return f, fmt.Errorf("natsauth: server key: %w", err)
	}
	leaf := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: hosts[0]},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(validity),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		h = strings.TrimSpace(h)
		if ip := net.ParseIP(h); ip != nil {
			leaf.IPAddresses = append(leaf.IPAddresses, ip)
		} else if h != "" {
			leaf.DNSNames = append(leaf.DNSNames, h)
		}
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return f, fmt.Errorf("natsauth: CA certificate: %w", err)
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		return f, fmt.Errorf("natsauth: server certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return f, fmt.Errorf("natsauth: server key: %w", err)
	}
	for _, w := range []struct {
		path, typ string
		der       []byte
	}{{f.CA, "CERTIFICATE", caDER}, {f.Cert, "CERTIFICATE", leafDER}, {f.Key, "PRIVATE KEY", keyDER}} {
		if err := writeNew(w.path, pem.EncodeToMemory(&pem.Block{Type: w.typ, Bytes: w.der})); err != nil {
			return f, err
		}
	}
	return f, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(fmt.Sprintf("natsauth: reading random bytes: %v", err)) // crypto/rand does not fail
	}
	return n
}
