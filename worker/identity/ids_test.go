package identity

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The instance role ids are part of the interface: clients keep them.
func TestInstanceRoleIDsFixed(t *testing.T) {
	assert.Equal(t, "4427c76e-9e32-5ad0-91e3-74ae05194a26", InstanceAdmin.ID())
	assert.Equal(t, "1907014d-2e1d-52c4-be28-ce654be90a73", InstanceMember.ID())
}

func TestErrorsMapToProblems(t *testing.T) {
	for k, want := range map[Kind]struct {
		typ    string
		status int
	}{
		KindNotFound:     {"workspace-service/workspace-not-found", 404},
		KindGone:         {"workspace-service/gone", 410},
		KindNameConflict: {"workspace-service/name-conflict", 409},
		KindLastOwner:    {"workspace-service/last-owner", 409},
		KindValidation:   {"workspace-service/validation", 422},
		KindActive:       {"workspace-service/not-deleted", 303},
	} {
		assert.Equal(t, want.typ, k.ProblemType())
		assert.Equal(t, want.status, k.Status())
	}
	err := error(errorf(KindGone, "workspace %s is deleted", ws1))
	assert.ErrorIs(t, err, ErrGone)
	assert.NotErrorIs(t, err, ErrNotFound)
	assert.Contains(t, err.Error(), ws1)
}
