package identity

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// wsRecord is the stored form of a workspace: its fields and its grants.
type wsRecord struct {
	Workspace
	Grants map[string]Role `json:"grants"`
}

// userRecord is the stored form of an instance user.
type userRecord struct {
	ID        string                  `json:"id"`
	Email     string                  `json:"email"`
	FullName  string                  `json:"full_name"`
	CreatedAt time.Time               `json:"created_at"`
	Orgs      map[string]InstanceRole `json:"orgs"`
}

// tokenRecord is the stored form of a token: never the secret.
type tokenRecord struct {
	ID         string     `json:"id"`
	UserID     string     `json:"user_id"`
	Name       string     `json:"name"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
}

// claim is the value of a name or email claim key.
type claim struct {
	ID string    `json:"id"`
	At time.Time `json:"at"`
}

// entry is a view value with the revision it was read at.
type entry[T any] struct {
	rec *T
	rev uint64
}

type orgWS struct{ org, id string }

// view is the in-memory copy of the bucket. Only the watch goroutine
// writes it; records are never modified in place (a change replaces the
// pointer), so a reader may keep a record after unlocking.
type view struct {
	mu          sync.RWMutex
	workspaces  map[orgWS]entry[wsRecord]
	users       map[string]entry[userRecord]
	byEmail     map[string]string // lower-case email → user id
	tokens      map[[sha256.Size]byte]entry[tokenRecord]
	tokenByID   map[string][sha256.Size]byte
	invitations map[string]entry[Invitation] // key → invitation
	claims      map[string]entry[claim]      // wsname.* and email.* keys
	registered  bool
}

func newView() view {
	return view{
		workspaces: map[orgWS]entry[wsRecord]{}, users: map[string]entry[userRecord]{},
		byEmail: map[string]string{}, tokens: map[[sha256.Size]byte]entry[tokenRecord]{},
		tokenByID: map[string][sha256.Size]byte{}, invitations: map[string]entry[Invitation]{},
		claims: map[string]entry[claim]{},
	}
}

func decode[T any](e jetstream.KeyValueEntry) *T {
	if e.Operation() != jetstream.KeyValuePut {
		return nil
	}
	v := new(T)
	if json.Unmarshal(e.Value(), v) != nil {
		return nil // a value this version cannot read counts as absent
	}
	return v
}

// apply brings one watched entry (a put, delete or purge) into the view.
func (v *view) apply(e jetstream.KeyValueEntry) {
	key, rev := e.Key(), e.Revision()
	prefix, rest, _ := strings.Cut(key, ".")
	v.mu.Lock()
	defer v.mu.Unlock()
	switch prefix {
	case "ws":
		org, id, _ := strings.Cut(rest, ".")
		k := orgWS{org, id}
		if r := decode[wsRecord](e); r != nil {
			v.workspaces[k] = entry[wsRecord]{r, rev}
		} else {
			delete(v.workspaces, k)
		}
	case "user":
		if old, ok := v.users[rest]; ok {
			delete(v.byEmail, strings.ToLower(old.rec.Email))
		}
		if r := decode[userRecord](e); r != nil {
			v.users[rest] = entry[userRecord]{r, rev}
			v.byEmail[strings.ToLower(r.Email)] = rest
		} else {
			delete(v.users, rest)
		}
	case "token":
		var d [sha256.Size]byte
		if len(rest) != hex.EncodedLen(len(d)) {
			return
		}
		if _, err := hex.Decode(d[:], []byte(rest)); err != nil {
			return
		}
		if old, ok := v.tokens[d]; ok {
			delete(v.tokenByID, old.rec.ID)
		}
		if r := decode[tokenRecord](e); r != nil {
			v.tokens[d] = entry[tokenRecord]{r, rev}
			v.tokenByID[r.ID] = d
		} else {
			delete(v.tokens, d)
		}
	case "inv":
		if r := decode[Invitation](e); r != nil {
			v.invitations[key] = entry[Invitation]{r, rev}
		} else {
			delete(v.invitations, key)
		}
	case "wsname", "email":
		if r := decode[claim](e); r != nil {
			v.claims[key] = entry[claim]{r, rev}
		} else {
			delete(v.claims, key)
		}
	case "meta":
		if key == registeredKey {
			v.registered = e.Operation() == jetstream.KeyValuePut
		}
	}
}
