package service_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/worker/demo"
	"github.com/geostat-engine/geostat/worker/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConsimValidationReport runs consim with perform_validation on the
// demo workspace: the result has the validation summary, the report's
// reference and the dashboard link, which serves the page, and no message.
func TestConsimValidationReport(t *testing.T) {
	s, c, _ := start(t, t.TempDir(), service.Options{MaxJobs: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := s.SeedDemo(ctx)
	require.NoError(t, err)
	url := func(p string) string {
		return c.Base + "/geoscience-object/orgs/" + demo.Org + "/workspaces/" + demo.Workspace + "/objects/path/" + p
	}
	job, err := c.RunTask(ctx, demo.Org, "consim", map[string]any{
		"source_object": url(demo.PointsPath), "source_attribute": "cu", "target_object": url(demo.MaskedGridPath),
		"variogram_model": url(demo.VariogramPath),
		"neighborhood": map[string]any{"max_samples": 16, "ellipsoid": map[string]any{
			"ellipsoid_ranges": map[string]any{"major": 150, "semi_major": 100, "minor": 30}}},
		"number_of_lines": 50, "number_of_simulations": 3, "number_of_simulations_to_save": 1,
		"perform_validation": true,
		"report_context":     map[string]any{"title": "Consim check", "details": []any{map[string]any{"label": "Domain", "value": "ore"}}},
	})
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	var res struct {
		Message           *string
		ValidationSummary *struct {
			ReferenceMean float64 `json:"reference_mean"`
			Mean          float64
		} `json:"validation_summary"`
		ValidationReport struct{ Reference, Name string } `json:"validation_report"`
		Links            struct{ Dashboard, View string }
		Target           struct {
			SummaryAttributes map[string]struct{ Reference, Name string } `json:"summary_attributes"`
		}
	}
	require.NoError(t, json.Unmarshal(job.Results, &res))
	assert.Nil(t, res.Message)
	require.NotNil(t, res.ValidationSummary)
	assert.Greater(t, res.ValidationSummary.ReferenceMean, 0.0, "%s", job.Results)
	assert.Greater(t, res.ValidationSummary.Mean, 0.0)
	assert.Len(t, res.Target.SummaryAttributes, 4)
	checkReportView(t, res.Links.View, c.Base)
	page, err := c.Do(ctx, http.MethodGet, res.Links.Dashboard, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, page.Status)
	assert.Contains(t, string(page.Body), "Consim check")
	rec, err := c.Do(ctx, http.MethodGet, res.ValidationReport.Reference, nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, rec.Status, "%s", rec.Body)
}
