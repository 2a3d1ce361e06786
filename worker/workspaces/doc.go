// Package workspaces serves the workspace area of the worker under
// /workspace/ (workspaces, their users and roles, instance users,
// invitations, and the tokens of the self-hosted engine) over the identity
// store of package identity, and adapts that store to package server:
// Identity is the worker's server.Authenticator, and the server.Roles of
// every principal it authenticates answer each area's role questions from
// the store's live view (404 for an unknown workspace or no role, 410 for a
// deleted one, 403 for a role too low).
//
// The service opens the store on its NATS connection with the static
// principals of its configuration (StaticOf), wraps it (NewIdentity) and
// registers the routes (Register). docs/api.md section 9 lists the routes,
// the roles of each and the decisions.
package workspaces
