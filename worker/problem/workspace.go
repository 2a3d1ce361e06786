package problem

// WorkspaceBase is the base of the workspace area's problem types (the
// seed's workspace-service suffixes).
const WorkspaceBase = Base + "/workspace-service"

// Problem types of the workspace area (workspaces, users, roles, tokens).
const (
	WorkspaceNotFound         = WorkspaceBase + "/workspace-not-found"
	WorkspaceGone             = WorkspaceBase + "/gone"
	WorkspaceNameConflict     = WorkspaceBase + "/name-conflict"
	WorkspaceLastOwner        = WorkspaceBase + "/last-owner"
	WorkspaceValidation       = WorkspaceBase + "/validation"
	WorkspaceNotDeleted       = WorkspaceBase + "/not-deleted"
	WorkspaceUserExists       = WorkspaceBase + "/user-exists"
	WorkspaceBadRequest       = WorkspaceBase + "/bad-request"
	WorkspaceMissingToken     = WorkspaceBase + "/auth/missing-token"
	WorkspaceInvalidToken     = WorkspaceBase + "/auth/invalid-token"
	WorkspaceInsufficient     = WorkspaceBase + "/auth/insufficient-role"
	WorkspaceMethodNotAllowed = WorkspaceBase + "/method-not-allowed"
	WorkspaceInternal         = WorkspaceBase + "/internal"
)
