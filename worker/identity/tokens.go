package identity

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// TokenPrefix starts every token CreateToken issues.
const TokenPrefix = "gst_"

// Token describes a stored token (never its secret).
type Token struct {
	ID         string     `json:"id"`
	UserID     string     `json:"user_id"`
	Name       string     `json:"name"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
}

func (r *tokenRecord) token() Token {
	return Token{ID: r.ID, UserID: r.UserID, Name: r.Name, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, LastUsedAt: r.LastUsedAt}
}

// NewToken is a token just created: Secret is the bearer token, shown this
// once; the store keeps only its SHA-256 digest.
type NewToken struct {
	Token
	Secret string `json:"token"`
}

// CreateToken issues a token for a user: "gst_" and 32 random bytes in
// base64url. name is 1 to 100 characters; expiresAt, when set, must be
// in the future.
func (s *Store) CreateToken(ctx context.Context, userID, name string, expiresAt *time.Time) (NewToken, error) {
	userID = strings.ToLower(userID)
	var p params
	if n := utf8.RuneCountInString(name); n < 1 || n > 100 {
		p.add("name", "must be 1 to 100 characters")
	}
	now := s.now()
	if expiresAt != nil && !expiresAt.After(now) {
		p.add("expires_at", "must be in the future")
	}
	if err := p.err(); err != nil {
		return NewToken{}, err
	}
	if err := s.sync(ctx); err != nil {
		return NewToken{}, err
	}
	if _, ok := s.User(userID); !ok {
		return NewToken{}, errorf(KindNotFound, "user %s not found", userID)
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return NewToken{}, fmt.Errorf("identity: token: %w", err)
	}
	secret := TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	r := &tokenRecord{ID: uuid.NewString(), UserID: userID, Name: name, CreatedAt: now}
	if expiresAt != nil {
		t := expiresAt.UTC()
		r.ExpiresAt = &t
	}
	ok, err := s.put(ctx, tokenKey(sha256.Sum256([]byte(secret))), r, 0)
	if err != nil {
		return NewToken{}, err
	}
	if !ok {
		return NewToken{}, fmt.Errorf("identity: token digest collision")
	}
	return NewToken{Token: r.token(), Secret: secret}, nil
}

// Tokens returns a user's tokens, oldest first.
func (s *Store) Tokens(userID string) []Token {
	userID = strings.ToLower(userID)
	var out []Token
	var digests [][sha256.Size]byte
	s.v.mu.RLock()
	for d, e := range s.v.tokens {
		if e.rec.UserID == userID {
			out = append(out, e.rec.token())
			digests = append(digests, d)
		}
	}
	s.v.mu.RUnlock()
	for i, d := range digests {
		if t, ok := s.touched.Load(d); ok {
			lu := t.(time.Time)
			out[i].LastUsedAt = &lu
		}
	}
	slices.SortFunc(out, func(a, b Token) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// RevokeToken deletes one of a user's tokens; it stops working at the next
// request on every api worker.
func (s *Store) RevokeToken(ctx context.Context, userID, tokenID string) error {
	userID, tokenID = strings.ToLower(userID), strings.ToLower(tokenID)
	if err := s.sync(ctx); err != nil {
		return err
	}
	s.v.mu.RLock()
	d, ok := s.v.tokenByID[tokenID]
	e := s.v.tokens[d]
	s.v.mu.RUnlock()
	if !ok || e.rec == nil || e.rec.UserID != userID {
		return errorf(KindNotFound, "token %s of user %s not found", tokenID, userID)
	}
	if _, err := s.del(ctx, tokenKey(d), 0); err != nil {
		return err
	}
	s.touched.Delete(d)
	return nil
}

// Authenticate returns the principal of a bearer token: a static
// principal's, or a stored token's user if the token is neither revoked nor
// expired and its user exists; ErrInvalidToken otherwise. It reads only the
// view (tokens are looked up by their SHA-256 digest, so lookup time says
// nothing about a secret), and records the use for last_used_at in memory
// at most once per TouchEvery.
func (s *Store) Authenticate(secret string) (*Principal, error) {
	d := sha256.Sum256([]byte(secret))
	if p, ok := s.statics[d]; ok {
		return p, nil
	}
	now := s.now()
	s.v.mu.RLock()
	e, ok := s.v.tokens[d]
	var u entry[userRecord]
	if ok {
		u = s.v.users[e.rec.UserID]
	}
	s.v.mu.RUnlock()
	if !ok || u.rec == nil {
		return nil, ErrInvalidToken
	}
	if e.rec.ExpiresAt != nil && !now.Before(*e.rec.ExpiresAt) {
		return nil, ErrInvalidToken
	}
	if e.rec.LastUsedAt == nil || now.Sub(*e.rec.LastUsedAt) >= s.cfg.TouchEvery {
		if t, ok := s.touched.Load(d); !ok || now.Sub(t.(time.Time)) >= s.cfg.TouchEvery {
			s.touched.Store(d, now)
		}
	}
	return &Principal{User: UserRef{ID: u.rec.ID, Name: u.rec.FullName, Email: u.rec.Email}, TokenID: e.rec.ID}, nil
}

// FlushLastUsed writes the last-used times recorded since the previous
// flush (the background flush does it every TouchEvery; Close does it too).
func (s *Store) FlushLastUsed(ctx context.Context) error {
	pending := map[[sha256.Size]byte]time.Time{}
	s.touched.Range(func(k, v any) bool {
		if s.touched.CompareAndDelete(k, v) {
			pending[k.([sha256.Size]byte)] = v.(time.Time)
		}
		return true
	})
	var first error
	for d, t := range pending {
		for range maxRetries {
			s.v.mu.RLock()
			e, ok := s.v.tokens[d]
			s.v.mu.RUnlock()
			if !ok || (e.rec.LastUsedAt != nil && !e.rec.LastUsedAt.Before(t)) {
				break // revoked, or a later use is written already
			}
			r := *e.rec
			r.LastUsedAt = &t
			done, err := s.put(ctx, tokenKey(d), &r, e.rev)
			if err != nil {
				if first == nil {
					first = err
				}
				break
			}
			if done {
				break
			}
		}
	}
	return first
}

func (s *Store) flushLoop(ctx context.Context) {
	t := time.NewTicker(s.cfg.TouchEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_ = s.FlushLastUsed(ctx)
		}
	}
}
