// Package identity is the worker's one identity store: organisations
// (implicit: an organisation exists through its users), workspaces,
// workspace role grants, instance users with their instance roles,
// invitations and API tokens, kept in a NATS JetStream key-value bucket
// that every api worker of a cluster shares.
//
// Each Store holds an in-memory view of the whole bucket, built by a full
// watch when it opens and kept current by that watch afterwards, so a
// grant, a revoke or a new token written by any api worker takes effect at
// the next request on every other one (the watch delivers in milliseconds),
// and a request's token and role lookups are map reads under a read lock,
// never a round trip to the server. A write made through a Store is in that
// Store's own view before the write call returns.
//
// # Layout of the bucket
//
// One bucket (Config.Bucket, default "geostat_identity"), JSON values:
//
//	ws.<org>.<id>               workspace record with its grants (user id → role)
//	wsname.<org>.<name hash>    claim of a workspace name: {"id": <workspace id>}
//	user.<id>                   instance user with its instance role per organisation
//	email.<email hash>          claim of an email address: {"id": <user id>}
//	token.<sha-256 hex>         API token: id, user, name, dates (never the secret)
//	inv.<org>.<id>              pending invitation
//	meta.registered             the one-off registration of existing workspaces is done
//
// Rules that span several writers are compare-and-set on revisions: the
// grants of a workspace live in its record, so "the last owner cannot be
// removed or demoted" is checked and written in one update of that record
// at the revision the check read; a workspace name is unique in its
// organisation (case-insensitively, among workspaces not deleted) through a
// claim key per name, created only if absent (a claim whose workspace no
// longer carries that name, or that was never completed within a minute,
// is taken over); email addresses likewise.
//
// # Principals and roles
//
// Authenticate turns a bearer token into a Principal: either a stored user
// (tokens "gst_" + 32 random bytes in base64url, shown once by CreateToken
// and kept only as their SHA-256 digest) or a static principal of
// Config.Static (the tokens file, GEOSTAT_TOKEN, the development token),
// read-only and never written to the bucket. Resolve answers the one role
// question of every area, (principal, organisation, workspace) → role and
// workspace state; RoleOfUser answers it for a user id, as a job does when
// it starts and before it commits.
//
// An instance admin of an organisation acts as owner of every workspace of
// it. A static entry that grants owner on "*" (every workspace of an
// organisation) is an instance admin of that organisation, and on "*" of
// "*" of every organisation; a static "*" grant of another role gives that
// role on every workspace. A static principal whose role in a workspace
// comes from a "*" grant registers a workspace id it is the first to use
// (Resolution.Registered), so scripts that invent workspace ids keep
// working; every other caller sees an unregistered workspace as unknown.
package identity
