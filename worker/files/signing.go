package files

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/geostat-engine/geostat/worker/internal/atomicfile"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// SigningKeyFile is the name of the URL signing key under DATA/files.
const SigningKeyFile = "signing-key"

// Operations of signed content URLs.
const (
	opUpload   = "upload"
	opDownload = "download"
	opView     = "view"
)

// contentPrefix is the path prefix of the signed content URLs.
const contentPrefix = "/file/v2/content"

// loadKey reads root/signing-key, creating a random 32-byte key (mode 0600,
// written atomically) on first use so URLs survive restarts.
func loadKey(root, tmpDir string) ([]byte, error) {
	path := filepath.Join(root, SigningKeyFile)
	data, err := os.ReadFile(path)
	if err == nil && len(data) >= 32 {
		return data, nil
	}
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("files: signing key: %w", err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("files: signing key: %w", err)
	}
	if err := atomicfile.Write(tmpDir, path, key, nil); err != nil {
		return nil, fmt.Errorf("files: signing key: %w", err)
	}
	return key, nil
}

// mac is the hex HMAC-SHA256 of a content URL's operation, workspace, file,
// version and expiry (Unix seconds).
func (s *Store) mac(op string, ref versionRef, expires int64) string {
	m := hmac.New(sha256.New, s.key)
	fmt.Fprintf(m, "geostat-files\n%s\n%s\n%s\n%s\n%d\n%d", op, ref.org, ref.ws, ref.file, ref.version, expires)
	return hex.EncodeToString(m.Sum(nil))
}

// versionRef names one version of a file.
type versionRef struct {
	org, ws, file string
	version       int64
}

// signedURL returns baseURL + the signed content URL of ref for op, valid
// for ttl.
func (s *Store) signedURL(baseURL, op string, ref versionRef, ttl time.Duration) string {
	exp := s.now().Add(ttl).Unix()
	q := url.Values{"op": {op}, "se": {strconv.FormatInt(exp, 10)}, "sig": {s.mac(op, ref, exp)}}
	return strings.TrimSuffix(baseURL, "/") + contentPrefix + "/" + ref.org + "/" + ref.ws + "/" + ref.file + "/" +
		strconv.FormatInt(ref.version, 10) + "?" + q.Encode()
}

// verify checks the signature and expiry of a content URL's query for op.
// The signature is compared before the expiry, so a tampered URL never
// learns whether it would have expired.
func (s *Store) verify(op string, ref versionRef, q url.Values) error {
	if q.Get("op") != op {
		return errSignature("the URL is not a signed " + op + " URL")
	}
	exp, err := strconv.ParseInt(q.Get("se"), 10, 64)
	if err != nil {
		return errSignature("the URL has no valid expiry")
	}
	if !hmac.Equal([]byte(s.mac(op, ref, exp)), []byte(q.Get("sig"))) {
		return errSignature("the URL signature is not valid")
	}
	if s.now().Unix() > exp {
		return errSignature("the URL has expired; request a new one")
	}
	return nil
}
