package files

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/geostat-engine/geostat/worker/internal/urlsign"
)

// SigningKeyFile is the name of the URL signing key in the data directory,
// shared with the blob URLs (see package urlsign).
const SigningKeyFile = urlsign.KeyFile

// Operations of signed content URLs.
const (
	opUpload   = "upload"
	opDownload = "download"
	opView     = "view"
)

// contentPrefix is the path prefix of the signed content URLs.
const contentPrefix = "/file/v2/content"

// versionRef names one version of a file.
type versionRef struct {
	org, ws, file string
	version       int64
}

// path is the path of ref's signed content URLs.
func (ref versionRef) path() string {
	return contentPrefix + "/" + ref.org + "/" + ref.ws + "/" + ref.file + "/" + strconv.FormatInt(ref.version, 10)
}

// signedURL returns baseURL + the signed content URL of ref for op, valid
// for ttl.
func (s *Store) signedURL(baseURL, op string, ref versionRef, ttl time.Duration) string {
	p := ref.path()
	return strings.TrimSuffix(baseURL, "/") + p + "?" + s.urls.Query(op, p, s.now().Add(ttl))
}

// verify checks the signature and expiry of a content URL's query for op.
// The signature is compared before the expiry, so a tampered URL never
// learns whether it would have expired.
func (s *Store) verify(op string, ref versionRef, q url.Values) error {
	// The content URL form before the one signer, accepted during the
	// upgrade window.
	legacy := func(exp int64) string {
		return fmt.Sprintf("geostat-files\n%s\n%s\n%s\n%s\n%d\n%d", op, ref.org, ref.ws, ref.file, ref.version, exp)
	}
	err := s.urls.Verify(op, ref.path(), q, s.now(), legacy)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, urlsign.ErrWrongOp):
		return errSignature("the URL is not a signed " + op + " URL")
	default:
		return errSignature(err.Error())
	}
}
