// Package urlsign makes and checks the signed URLs the worker hands out for
// blob uploads and downloads (/blobs/...) and for file content
// (/file/v2/content/...). A signed URL is its own credential, like a
// pre-signed object-store URL: its query carries
//
//	op=<operation>&se=<expiry, Unix seconds>&sig=<hex HMAC-SHA256>
//
// where sig is the HMAC-SHA256, under the worker's one URL-signing key, of
// the canonical string
//
//	"geostat-url/v1\n" + op + "\n" + path + "\n" + se
//
// path being the URL path (it names the area, blobs or file content, and
// every id the URL addresses). A URL signed for one operation or path is not
// valid for another, the signature is compared in constant time, and it is
// checked before the expiry, so a tampered URL never learns whether it would
// have expired.
//
// The key is DATA/url-signing-key (KeyFile): 32 random bytes created on first
// start (written to a temporary file, fsynced, linked into place, mode 0600)
// and read at every start, so URLs survive restarts.
//
// Upgrade from the two earlier schemes (blob URLs signed with
// DATA/url-signing-key over "op\norg\nws\nname\nse", file content URLs with
// DATA/files/signing-key over "geostat-files\nop\norg\nws\nfile\nversion\nse"):
// DATA/url-signing-key is kept if it exists, and is otherwise created from
// DATA/files/signing-key. The files key, if present, is moved to
// DATA/url-signing-key.retired (RetiredKeyFile), whose modification time
// records the upgrade. For LegacyWindow after the upgrade, URLs in the old
// forms, signed with either old key, are still accepted until their own
// expiry, so links handed out just before an upgrade keep working; the first
// start after the window removes the retired key and the old forms are no
// longer accepted.
package urlsign

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/geostat-engine/geostat/worker/internal/atomicfile"
)

// KeyFile is the name of the URL-signing key in the data directory.
const KeyFile = "url-signing-key"

// RetiredKeyFile is the name, in the data directory, of the file content key
// of the earlier scheme during LegacyWindow after an upgrade.
const RetiredKeyFile = "url-signing-key.retired"

// legacyFilesKey is the file content key of the earlier scheme, relative to
// the data directory.
const legacyFilesKey = "files/signing-key"

// LegacyWindow is how long after an upgrade URLs signed in the earlier forms
// are accepted (each still only until its own expiry). It is longer than the
// default URL validity of an hour.
const LegacyWindow = 24 * time.Hour

// tmpPattern names the temporary files a new key is written to; those a
// crash left are removed at the next Load (the worker's lock on its data
// directory keeps two starts from running Load at once).
const tmpPattern = ".url-signing-key-*"

// keyLen is the length of a new key.
const keyLen = 32

// Errors of Verify; each is a 403 to the client, the message its detail.
var (
	ErrWrongOp      = errors.New("the URL is not a signed URL for this operation")
	ErrNoExpiry     = errors.New("the URL has no valid expiry")
	ErrBadSignature = errors.New("the URL signature is not valid")
	ErrExpired      = errors.New("the URL has expired; request a new one")
)

// Signer signs and verifies URLs with the worker's key.
type Signer struct {
	key []byte
	// retired is the earlier file content key, accepted (with key) for the
	// earlier URL forms until legacyUntil (Unix seconds); nil when none (no
	// earlier form is accepted then).
	retired     []byte
	legacyUntil int64
}

// New returns a Signer with key (at least 32 bytes), accepting no earlier
// URL forms.
func New(key []byte) (*Signer, error) {
	if len(key) < keyLen {
		return nil, fmt.Errorf("urlsign: the key has %d bytes, want at least %d", len(key), keyLen)
	}
	return &Signer{key: bytes.Clone(key)}, nil
}

// Load reads the key of dataDir, creating it on first start and migrating
// the earlier file content key (see the package comment). now is the
// clock the upgrade window is measured with.
func Load(dataDir string, now time.Time) (*Signer, error) {
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, fmt.Errorf("urlsign: %w", err)
	}
	stale, err := filepath.Glob(filepath.Join(dataDir, tmpPattern))
	if err != nil {
		return nil, fmt.Errorf("urlsign: %w", err)
	}
	for _, f := range stale {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("urlsign: removing %s: %w", f, err)
		}
	}
	path := filepath.Join(dataDir, KeyFile)
	legacyPath := filepath.Join(dataDir, legacyFilesKey)
	key, err := readKey(path)
	if err != nil {
		return nil, err
	}
	oldFiles, err := readKey(legacyPath)
	if err != nil {
		return nil, err
	}
	if key == nil {
		if key = oldFiles; key == nil {
			key = make([]byte, keyLen)
			if _, err := rand.Read(key); err != nil {
				return nil, fmt.Errorf("urlsign: %w", err)
			}
		}
		if key, err = create(dataDir, path, key); err != nil {
			return nil, err
		}
	}
	s := &Signer{key: key}
	retiredPath := filepath.Join(dataDir, RetiredKeyFile)
	if oldFiles != nil {
		// The upgrade: the retired copy is written (its mtime is now) before
		// the old file goes, so a crash in between only repeats this step.
		if err := atomicfile.Write(dataDir, retiredPath, oldFiles, nil); err != nil {
			return nil, fmt.Errorf("urlsign: retiring %s: %w", legacyPath, err)
		}
		if err := atomicfile.Remove(legacyPath); err != nil {
			return nil, fmt.Errorf("urlsign: retiring %s: %w", legacyPath, err)
		}
	}
	retired, err := readKey(retiredPath)
	if err != nil {
		return nil, err
	}
	if retired != nil {
		fi, err := os.Stat(retiredPath)
		if err != nil {
			return nil, fmt.Errorf("urlsign: %w", err)
		}
		until := fi.ModTime().Add(LegacyWindow)
		if !now.Before(until) {
			if err := atomicfile.Remove(retiredPath); err != nil {
				return nil, fmt.Errorf("urlsign: removing %s: %w", retiredPath, err)
			}
		} else {
			s.retired, s.legacyUntil = retired, until.Unix()
		}
	}
	return s, nil
}

// readKey reads a key file: nil when it does not exist (or is too short to
// be a key, as a torn write of the earlier scheme could leave it).
func readKey(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("urlsign: reading %s: %w", path, err)
	}
	if len(data) < keyLen {
		return nil, nil
	}
	return data, nil
}

// create writes key to path unless path exists: through a temporary file in
// dir (mode 0600), fsynced, then hard-linked into place, which fails rather
// than replaces if another start created the key first; that key is then
// returned. A short file left by the earlier non-atomic writer is replaced.
func create(dir, path string, key []byte) ([]byte, error) {
	f, err := os.CreateTemp(dir, tmpPattern)
	if err != nil {
		return nil, fmt.Errorf("urlsign: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.Write(key)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("urlsign: writing %s: %w", path, err)
	}
	if short, rerr := os.ReadFile(path); rerr == nil && len(short) < keyLen {
		if err := os.Rename(tmp, path); err != nil {
			return nil, fmt.Errorf("urlsign: writing %s: %w", path, err)
		}
	} else if err := os.Link(tmp, path); errors.Is(err, os.ErrExist) {
		existing, rerr := readKey(path)
		if rerr != nil {
			return nil, rerr
		}
		if existing == nil {
			return nil, fmt.Errorf("urlsign: %s appeared, too short to be a key", path)
		}
		return existing, nil
	} else if err != nil {
		return nil, fmt.Errorf("urlsign: writing %s: %w", path, err)
	}
	if err := atomicfile.SyncDir(dir); err != nil {
		return nil, fmt.Errorf("urlsign: %w", err)
	}
	return key, nil
}

// mac returns the hex HMAC-SHA256 of the canonical string of a URL.
func (s *Signer) mac(op, path string, expires int64) string {
	m := hmac.New(sha256.New, s.key)
	io.WriteString(m, "geostat-url/v1\n"+op+"\n"+path+"\n"+strconv.FormatInt(expires, 10))
	return hex.EncodeToString(m.Sum(nil))
}

// Query returns the encoded query (op, se, sig) that signs path for op until
// expires.
func (s *Signer) Query(op, path string, expires time.Time) string {
	exp := expires.Unix()
	return url.Values{"op": {op}, "se": {strconv.FormatInt(exp, 10)}, "sig": {s.mac(op, path, exp)}}.Encode()
}

// Verify checks that q signs path for op and has not expired at now. The
// error is one of ErrWrongOp, ErrNoExpiry, ErrBadSignature and ErrExpired.
// legacy, when not nil, gives the canonical string of the earlier scheme
// for this URL and expiry; it is tried only during the upgrade window.
func (s *Signer) Verify(op, path string, q url.Values, now time.Time, legacy func(expires int64) string) error {
	if q.Get("op") != op {
		return ErrWrongOp
	}
	exp, err := strconv.ParseInt(q.Get("se"), 10, 64)
	if err != nil {
		return ErrNoExpiry
	}
	sig := []byte(q.Get("sig"))
	if !hmac.Equal([]byte(s.mac(op, path, exp)), sig) && !s.legacyValid(sig, exp, now, legacy) {
		return ErrBadSignature
	}
	if now.Unix() > exp {
		return ErrExpired
	}
	return nil
}

// legacyValid reports whether sig is an earlier-form signature, with either
// earlier key, of a URL expiring at exp, within the upgrade window.
func (s *Signer) legacyValid(sig []byte, exp int64, now time.Time, legacy func(int64) string) bool {
	if legacy == nil || s.retired == nil || now.Unix() > s.legacyUntil || exp > s.legacyUntil {
		return false
	}
	msg := legacy(exp)
	ok := false
	for _, k := range [][]byte{s.key, s.retired} {
		m := hmac.New(sha256.New, k)
		io.WriteString(m, msg)
		ok = hmac.Equal([]byte(hex.EncodeToString(m.Sum(nil))), sig) || ok
	}
	return ok
}
