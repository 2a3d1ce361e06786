package identity

import (
	"context"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// User is an instance user and its instance role in each of its
// organisations.
type User struct {
	ID        string                  `json:"id"`
	Email     string                  `json:"email"`
	FullName  string                  `json:"full_name"`
	CreatedAt time.Time               `json:"created_at"`
	Orgs      map[string]InstanceRole `json:"orgs"`
}

func (r *userRecord) user() User {
	u := User{ID: r.ID, Email: r.Email, FullName: r.FullName, CreatedAt: r.CreatedAt, Orgs: make(map[string]InstanceRole, len(r.Orgs))}
	for o, x := range r.Orgs {
		u.Orgs[o] = x
	}
	return u
}

// Invitation is a pending invitation of an email address to an
// organisation; creating a user with that email consumes it.
type Invitation struct {
	ID             string       `json:"id"`
	Org            string       `json:"org_id"`
	Email          string       `json:"email"`
	Role           InstanceRole `json:"role"`
	CreatedAt      time.Time    `json:"created_date"`
	ExpiresAt      time.Time    `json:"expiration_date"`
	InvitedByEmail string       `json:"invited_by_email"`
}

// Status is "pending" until the invitation expires, then "expired".
func (i Invitation) Status(now time.Time) string {
	if now.Before(i.ExpiresAt) {
		return "pending"
	}
	return "expired"
}

// InvitationLifetime is how long an invitation stays pending.
const InvitationLifetime = 7 * 24 * time.Hour

func checkEmail(p *params, email string) {
	a, err := mail.ParseAddress(email)
	if err != nil || a.Address != email || len(email) > 254 {
		p.add("email", "%q is not an email address", email)
	}
}

// User returns an instance user by id.
func (s *Store) User(id string) (User, bool) {
	s.v.mu.RLock()
	defer s.v.mu.RUnlock()
	e := s.v.users[strings.ToLower(id)]
	if e.rec == nil {
		return User{}, false
	}
	return e.rec.user(), true
}

// UserByEmail returns an instance user by email (case-insensitively).
func (s *Store) UserByEmail(email string) (User, bool) {
	s.v.mu.RLock()
	id, ok := s.v.byEmail[strings.ToLower(email)]
	s.v.mu.RUnlock()
	if !ok {
		return User{}, false
	}
	return s.User(id)
}

// Users returns the users of org sorted by email.
func (s *Store) Users(org string) []User {
	org = strings.ToLower(org)
	var out []User
	s.v.mu.RLock()
	for _, e := range s.v.users {
		if _, ok := e.rec.Orgs[org]; ok {
			out = append(out, e.rec.user())
		}
	}
	s.v.mu.RUnlock()
	slices.SortFunc(out, func(a, b User) int { return strings.Compare(strings.ToLower(a.Email), strings.ToLower(b.Email)) })
	return out
}

// updateUser applies change to a copy of a user's record and writes it at
// the revision read (remove: delete the record instead), retrying on a
// concurrent change.
func (s *Store) updateUser(ctx context.Context, id string, change func(r *userRecord) (remove bool, err error)) (*userRecord, error) {
	if err := s.sync(ctx); err != nil {
		return nil, err
	}
	for range maxRetries {
		s.v.mu.RLock()
		e := s.v.users[id]
		s.v.mu.RUnlock()
		if e.rec == nil {
			return nil, errorf(KindNotFound, "user %s not found", id)
		}
		r := *e.rec
		r.Orgs = make(map[string]InstanceRole, len(e.rec.Orgs))
		for o, x := range e.rec.Orgs {
			r.Orgs[o] = x
		}
		remove, err := change(&r)
		if err != nil {
			return nil, err
		}
		var ok bool
		if remove {
			ok, err = s.del(ctx, userKey(id), e.rev)
		} else {
			ok, err = s.put(ctx, userKey(id), &r, e.rev)
		}
		if err != nil {
			return nil, err
		}
		if ok {
			return &r, nil
		}
	}
	return nil, fmt.Errorf("identity: user %s: too many concurrent changes", id)
}

// CreateUser makes email an instance user of org with role (empty: the
// role of a pending invitation of that email, else member), consuming the
// org's invitations of that email. An email that already has a user gets
// org added to it; ErrUserExists if that user is in org already.
func (s *Store) CreateUser(ctx context.Context, by *Principal, org, email, fullName string, role InstanceRole) (User, error) {
	var p params
	if !isUUID(org) {
		p.add("org_id", "%q is not a UUID", org)
	}
	org = strings.ToLower(org)
	checkEmail(&p, email)
	if utf8.RuneCountInString(fullName) > 200 {
		p.add("full_name", "at most 200 characters")
	}
	if role != "" && !role.Valid() {
		p.add("roles", "%q, want admin or member", role)
	}
	if err := p.err(); err != nil {
		return User{}, err
	}
	if err := s.sync(ctx); err != nil {
		return User{}, err
	}
	invs := s.invitationsOf(org, email)
	if role == "" {
		role = InstanceMember
		now := s.now()
		for _, inv := range invs {
			if inv.rec.Status(now) == "pending" && inv.rec.Role == InstanceAdmin {
				role = InstanceAdmin
			}
		}
	}
	var out User
	if existing, ok := s.UserByEmail(email); ok {
		r, err := s.updateUser(ctx, existing.ID, func(r *userRecord) (bool, error) {
			if _, in := r.Orgs[org]; in {
				return false, errorf(KindUserExists, "%s is a user of the organisation already", email)
			}
			r.Orgs[org] = role
			return false, nil
		})
		if err != nil {
			return User{}, err
		}
		out = r.user()
	} else {
		id := uuid.NewString()
		ok, err := s.claimEmail(ctx, email, id)
		if err != nil {
			return User{}, err
		}
		if !ok {
			return User{}, errorf(KindUserExists, "%s is a user already", email)
		}
		r := &userRecord{ID: id, Email: email, FullName: fullName, CreatedAt: s.now(), Orgs: map[string]InstanceRole{org: role}}
		if _, err := s.put(ctx, userKey(id), r, 0); err != nil {
			return User{}, err
		}
		out = r.user()
	}
	for _, inv := range invs {
		if _, err := s.del(ctx, invKey(org, inv.rec.ID), inv.rev); err != nil {
			return User{}, err
		}
	}
	return out, nil
}

// claimEmail reserves email for user id: ok false when a user holds it.
func (s *Store) claimEmail(ctx context.Context, email, id string) (bool, error) {
	key := emailKey(email)
	for range maxRetries {
		s.v.mu.RLock()
		c, held := s.v.claims[key]
		var holder entry[userRecord]
		if held {
			holder = s.v.users[c.rec.ID]
		}
		s.v.mu.RUnlock()
		var rev uint64
		if held {
			if c.rec.ID == id {
				return true, nil
			}
			live := holder.rec != nil && strings.EqualFold(holder.rec.Email, email)
			if live || (holder.rec == nil && s.now().Sub(c.rec.At) < claimStale) {
				return false, nil
			}
			rev = c.rev
		}
		ok, err := s.put(ctx, key, claim{ID: id, At: s.now()}, rev)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, fmt.Errorf("identity: claiming email: too many concurrent changes")
}

// SetUserRole sets a user's instance role in org (ErrNotFound if the user
// is not in org).
func (s *Store) SetUserRole(ctx context.Context, org, userID string, role InstanceRole) (User, error) {
	org, userID = strings.ToLower(org), strings.ToLower(userID)
	if !role.Valid() {
		return User{}, &Error{Kind: KindValidation, Params: []InvalidParam{{Name: "roles", Reason: fmt.Sprintf("%q, want admin or member", role)}}}
	}
	r, err := s.updateUser(ctx, userID, func(r *userRecord) (bool, error) {
		if _, ok := r.Orgs[org]; !ok {
			return false, errorf(KindNotFound, "user %s is not in the organisation", userID)
		}
		r.Orgs[org] = role
		return false, nil
	})
	if err != nil {
		return User{}, err
	}
	return r.user(), nil
}

// RemoveUser removes a user from org: its grants in every workspace of org
// go (the last-owner rule does not hold it back: removing a user is an
// admin's act), and when org was its last organisation the user and all
// its tokens are deleted. Takes effect at the next request everywhere.
func (s *Store) RemoveUser(ctx context.Context, by *Principal, org, userID string) error {
	org, userID = strings.ToLower(org), strings.ToLower(userID)
	var gone bool
	var email string
	_, err := s.updateUser(ctx, userID, func(r *userRecord) (bool, error) {
		if _, ok := r.Orgs[org]; !ok {
			return false, errorf(KindNotFound, "user %s is not in the organisation", userID)
		}
		delete(r.Orgs, org)
		gone, email = len(r.Orgs) == 0, r.Email
		return gone, nil
	})
	if err != nil {
		return err
	}
	if gone {
		for _, t := range s.Tokens(userID) {
			if err := s.RevokeToken(ctx, userID, t.ID); err != nil && !isKind(err, KindNotFound) {
				return err
			}
		}
		s.v.mu.RLock()
		c, held := s.v.claims[emailKey(email)]
		s.v.mu.RUnlock()
		if held && c.rec.ID == userID {
			if _, err := s.del(ctx, emailKey(email), c.rev); err != nil {
				return err
			}
		}
	}
	var wss []string
	s.v.mu.RLock()
	for k, e := range s.v.workspaces {
		if _, ok := e.rec.Grants[userID]; ok && k.org == org {
			wss = append(wss, k.id)
		}
	}
	s.v.mu.RUnlock()
	for _, ws := range wss {
		_, err := s.updateWS(ctx, org, ws, func(r *wsRecord) error {
			delete(r.Grants, userID)
			r.UpdatedAt, r.UpdatedBy = s.now(), ref(by)
			return nil
		})
		if err != nil {
			return fmt.Errorf("identity: removing user %s from workspace %s: %w", userID, ws, err)
		}
	}
	return nil
}

func isKind(err error, k Kind) bool {
	e, ok := err.(*Error)
	return ok && e.Kind == k
}

// invitationsOf returns org's invitations of email.
func (s *Store) invitationsOf(org, email string) []entry[Invitation] {
	var out []entry[Invitation]
	s.v.mu.RLock()
	defer s.v.mu.RUnlock()
	for _, e := range s.v.invitations {
		if e.rec.Org == org && strings.EqualFold(e.rec.Email, email) {
			out = append(out, e)
		}
	}
	return out
}

// Invite records a pending invitation of email to org with role (empty:
// member), valid InvitationLifetime; an earlier invitation of the same
// email is replaced. ErrUserExists when the email is a user of org.
func (s *Store) Invite(ctx context.Context, by *Principal, org, email string, role InstanceRole) (Invitation, error) {
	var p params
	if !isUUID(org) {
		p.add("org_id", "%q is not a UUID", org)
	}
	org = strings.ToLower(org)
	checkEmail(&p, email)
	if role == "" {
		role = InstanceMember
	}
	if !role.Valid() {
		p.add("roles", "%q, want admin or member", role)
	}
	if err := p.err(); err != nil {
		return Invitation{}, err
	}
	if err := s.sync(ctx); err != nil {
		return Invitation{}, err
	}
	if u, ok := s.UserByEmail(email); ok {
		if _, in := u.Orgs[org]; in {
			return Invitation{}, errorf(KindUserExists, "%s is a user of the organisation already", email)
		}
	}
	now := s.now()
	inv := Invitation{ID: uuid.NewString(), Org: org, Email: email, Role: role, CreatedAt: now, ExpiresAt: now.Add(InvitationLifetime), InvitedByEmail: ref(by).Email}
	if _, err := s.put(ctx, invKey(org, inv.ID), &inv, 0); err != nil {
		return Invitation{}, err
	}
	for _, old := range s.invitationsOf(org, email) {
		if old.rec.ID != inv.ID {
			if _, err := s.del(ctx, invKey(org, old.rec.ID), old.rev); err != nil {
				return Invitation{}, err
			}
		}
	}
	return inv, nil
}

// Invitations returns org's invitations (pending and expired) oldest first.
func (s *Store) Invitations(org string) []Invitation {
	org = strings.ToLower(org)
	var out []Invitation
	s.v.mu.RLock()
	for _, e := range s.v.invitations {
		if e.rec.Org == org {
			out = append(out, *e.rec)
		}
	}
	s.v.mu.RUnlock()
	slices.SortFunc(out, func(a, b Invitation) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// DeleteInvitation deletes one of org's invitations (ErrNotFound if none).
func (s *Store) DeleteInvitation(ctx context.Context, org, id string) error {
	org, id = strings.ToLower(org), strings.ToLower(id)
	key := invKey(org, id)
	if !isUUID(id) {
		return errorf(KindNotFound, "invitation %s not found", id)
	}
	if err := s.sync(ctx); err != nil {
		return err
	}
	s.v.mu.RLock()
	e, ok := s.v.invitations[key]
	s.v.mu.RUnlock()
	if !ok {
		return errorf(KindNotFound, "invitation %s not found", id)
	}
	_, err := s.del(ctx, key, e.rev)
	return err
}
