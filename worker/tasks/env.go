package tasks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"runtime"

	"github.com/geostat-engine/geostat/tbsim"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/geostat-engine/geostat/worker/store"
)

// Version is one version of a stored object, decoded, with access to its
// blobs.
type Version struct {
	Object    *objects.Object
	ObjectID  string
	Path      string
	VersionID string
	Blobs     objects.BlobOpener
	// BlockModel is set for a block model object (KindBlockModel), whose
	// Object is then a shell with only its schema and name: the values
	// live in the block model area.
	BlockModel *BlockModelObject
}

// BlobSink receives the bytes of a new blob. Commit stores it under key
// (the SHA-256 of the bytes written; the sink checks it); Abort discards it.
type BlobSink interface {
	io.Writer
	Commit(ctx context.Context, key string) error
	Abort()
}

// ObjectStore is what the tasks need of the object store.
type ObjectStore interface {
	// Get returns the version a reference names: the latest, or the one
	// ref.Version pins. A missing object or version is ErrNotFound.
	Get(ctx context.Context, ref ObjectRef) (*Version, error)
	// NewBlob starts a blob upload in a workspace.
	NewBlob(ctx context.Context, org, workspace string) (BlobSink, error)
	// PutVersion writes doc as a new version of an existing object when its
	// latest version is still ifMatch (ErrStale otherwise), and returns the
	// new version id.
	PutVersion(ctx context.Context, org, workspace, objectID, ifMatch string, doc []byte, user store.User) (string, error)
	// CreateObject stores doc (whose uuid is null) as a new object at a
	// path, failing with ErrExists when an object is there, and returns the
	// new object's id and version id.
	CreateObject(ctx context.Context, org, workspace, path string, doc []byte, user store.User) (objectID, versionID string, err error)
}

// Errors an ObjectStore returns (wrapped).
var (
	ErrNotFound = errors.New("not found")
	ErrStale    = errors.New("the object was modified")
	ErrExists   = errors.New("an object already exists at the path")
)

// Access checks the caller's role in a workspace: write=false needs viewer,
// write=true needs editor. It returns an error carrying the HTTP status
// (a *StatusError) when access is denied.
type Access func(org, workspace string, write bool) error

// StatusError is an error answered with a specific HTTP status and problem
// document (see package problem).
type StatusError = problem.Error

// Env is what the tasks need of the worker.
type Env struct {
	Store ObjectStore
	// Threads bounds the goroutines one job computes with (0 = all cores).
	Threads int
	// MaxMemory is the memory a job may need, in bytes (0 = unbounded).
	MaxMemory int64
	Logger    *slog.Logger
	// PublicURL is the scheme and host references are written with,
	// e.g. "http://127.0.0.1:8080".
	PublicURL string
	// Files stores validation reports (nil: the report task is refused).
	Files ReportFiles
	// FreeDisk returns the free bytes of the data directory (nil: not
	// checked).
	FreeDisk func() (int64, error)
	// Cluster, when set, runs the conditional turning-bands simulations
	// (conditional-turning-bands, conditional-tbsim) as shards on the
	// cluster queue; nil runs them in this process.
	Cluster ClusterSimulator
	// Tiles, when set, runs knn, idw and kriging estimates onto large
	// targets as tiles on the cluster queue; nil runs them in this process.
	Tiles TileEstimator
	// Ensembles, when set, runs the location-wise statistics of large
	// ensembles as tiles on the cluster queue; nil runs them in this
	// process.
	Ensembles EnsembleStatistics
	// BlockModels, when set, is the embedded block model area: block model
	// objects are then sources of knn, idw, kriging and
	// continuous-distribution and targets of knn, idw and kriging (A.14).
	// nil refuses every block model reference with 422.
	BlockModels BlockModels
	// writeLocks serialises the writes of one object inside the worker
	// (set by Register; nil: writes rely on If-Match retries alone).
	writeLocks *keyedLocks
}

func (e *Env) threads() int {
	if e.Threads > 0 && e.Threads < runtime.GOMAXPROCS(0) {
		return e.Threads
	}
	return runtime.GOMAXPROCS(0)
}

// ClusterSimulator runs a turning-bands simulation as shards on other
// processes and writes its ensembles into writers (one per output, in the
// order block, block normal score, point, point normal score), bit-identical
// to tbsim.Stream in this process. progress gets the done shards and their
// total. Package worker/cluster/simjob implements it.
type ClusterSimulator interface {
	Run(ctx context.Context, in tbsim.Input, p tbsim.Params, writers []*objects.TableWriter, progress func(done, total int)) error
}

// Needs is what a job is estimated to need: memory while it runs and disk
// for its output. Submit admits the job on these figures.
type Needs struct {
	Memory, Disk int64
}

// admit records a job's estimated memory and output disk needs in the
// request and refuses the job when it can never run: memory above MaxMemory
// (it could not run even alone), or an output larger than the data
// directory's free space. Both are 422 naming field and the figures.
func (e *Env) admit(req Request, field string, memory, disk float64) error {
	if req.Needs != nil {
		req.Needs.Memory = max(req.Needs.Memory, int64(min(memory, math.MaxInt64/2)))
		req.Needs.Disk = max(req.Needs.Disk, int64(min(disk, math.MaxInt64/2)))
	}
	if e.MaxMemory > 0 && memory > float64(e.MaxMemory) {
		return &ValidationError{Params: []InvalidParam{{Name: field, Reason: fmt.Sprintf(
			"the job needs about %.1f GiB of memory, more than the worker's limit of %.1f GiB (-max-memory)",
			memory/(1<<30), float64(e.MaxMemory)/(1<<30))}}}
	}
	if e.FreeDisk != nil {
		free, err := e.FreeDisk()
		if err != nil {
			return fmt.Errorf("free disk space: %w", err)
		}
		if disk > float64(free) {
			return &problem.Error{Status: http.StatusUnprocessableEntity, Type: problem.ComputeInsufficientStorage,
				Title: "Insufficient Storage.", Detail: fmt.Sprintf(
					"%s: the job's output needs about %s of disk, but the data directory has %s free",
					field, bytesText(disk), bytesText(float64(free))),
				Extra: map[string]any{"invalid-params": []InvalidParam{{Name: field, Reason: "the output does not fit on the worker's disk"}},
					"needed_bytes": int64(min(disk, math.MaxInt64/2)), "free_bytes": free}}
		}
	}
	return nil
}

// bytesText writes a byte count in MiB or GiB.
func bytesText(n float64) string {
	if n < 1<<30 {
		return fmt.Sprintf("%.1f MiB", n/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", n/(1<<30))
}

// loadObject resolves a task field's object reference for the caller,
// turning a missing object into an invalid parameter.
func loadObject(ctx context.Context, env *Env, access Access, org, field string, ref ObjectRef, write bool) (*Version, error) {
	if ref.Org != org {
		return nil, invalid(field, "the object belongs to organisation %s, not %s", ref.Org, org)
	}
	if err := access(ref.Org, ref.Workspace, write); err != nil {
		return nil, err
	}
	v, err := env.Store.Get(ctx, ref)
	if errors.Is(err, ErrNotFound) {
		return nil, invalid(field, "object not found: %s", ref.Raw)
	}
	if err != nil {
		return nil, objectData(field, ref.Raw, err)
	}
	if v.BlockModel != nil {
		if env.BlockModels == nil {
			return nil, invalid(field, "block model objects need the embedded block model area (this worker reads objects from a remote object store, -objects-url)")
		}
		return v, nil
	}
	// Lengths against the geometry are checked here, at submit, not when
	// the job reads the data.
	if err := v.Object.CheckLengths(); err != nil {
		return nil, objectData(field, ref.Raw, &objects.DataError{Err: err})
	}
	return v, nil
}

// objectData classifies an error met reading a task field's object: the
// object's own unusable document or data is a 422 naming the field, the
// object and the member; anything else (a failure to read) is wrapped as it
// is. When the member is known, invalid-params names it under the field
// (e.g. "target.origin", "source.locations.coordinates").
func objectData(field, object string, err error) error {
	if !objects.IsDataError(err) {
		return fmt.Errorf("%s: %w", field, err)
	}
	p := problem.From(err)
	extra := map[string]any{"field": field, "object": object}
	if m, ok := p.Extra["member"].(string); ok && m != "" {
		extra["member"] = m
		extra["invalid-params"] = []InvalidParam{{Name: field + "." + m, Reason: err.Error()}}
	}
	return &problem.Error{Status: http.StatusUnprocessableEntity, Type: problem.ComputeInvalidData, Title: "Invalid Object Data.",
		Detail: fmt.Sprintf("%s: the object %s cannot be used: %v", field, object, err), Extra: extra, Err: err}
}

// dataOf is objectData for a loaded version.
func dataOf(field string, v *Version, err error) error {
	name := v.Path
	if name == "" {
		name = v.ObjectID
	}
	return objectData(field, name, err)
}

// elements is the number of elements (locations or cells) of v's first
// attribute list; field names v in an error.
func elements(field string, v *Version) (int64, error) {
	n, err := v.Object.ExpectedLength(v.Object.AttributeLists()[0])
	if err != nil {
		return 0, dataOf(field, v, err)
	}
	return n, nil
}

func invalid(field, format string, args ...any) error {
	return &ValidationError{Params: []InvalidParam{{Name: field, Reason: fmt.Sprintf(format, args...)}}}
}

// requireKind checks the object kind of a task field.
func requireKind(field string, v *Version, kinds ...objects.Kind) error {
	for _, k := range kinds {
		if v.Object.Schema.Kind == k {
			return nil
		}
	}
	return invalid(field, "a %s object cannot be used here (want %s)", v.Object.Schema.Kind, kindList(kinds))
}

func kindList(kinds []objects.Kind) string {
	s := ""
	for i, k := range kinds {
		if i > 0 {
			s += ", "
		}
		s += string(k)
	}
	return s
}

// Kinds accepted by the tasks.
var (
	pointKinds  = []objects.Kind{objects.KindPointset, objects.KindDownholeIntervals}
	gridKinds   = []objects.Kind{objects.KindRegular3DGrid, objects.KindRegularMasked3DGrid}
	targetKinds = append(append([]objects.Kind{}, pointKinds...), gridKinds...)
)

// continuousAttribute resolves a single-column continuous attribute.
func continuousAttribute(field string, v *Version, expr string) (*objects.Attribute, error) {
	a, err := v.Object.ResolveAttribute(expr)
	if err != nil {
		return nil, invalid(field, "attribute not found: %v", err)
	}
	if !a.IsContinuous() || a.Width() != 1 {
		return nil, invalid(field, "attribute %q is a %s attribute, not a continuous attribute", a.Name, a.Type)
	}
	return a, nil
}

// readColumn reads a continuous attribute's single column.
func readColumn(ctx context.Context, v *Version, a *objects.Attribute) ([]float64, error) {
	cols, err := v.Object.ReadContinuous(ctx, v.Blobs, a)
	if err != nil {
		return nil, err
	}
	return cols[0], nil
}

// applyFilter evaluates a filter on an object and returns the rows that pass
// (nil when there is no filter).
func applyFilter(ctx context.Context, field string, v *Version, f *Filter, n int) ([]bool, error) {
	if f == nil {
		return nil, nil
	}
	return f.Eval(n, func(expr string) (*Column, error) {
		a, err := v.Object.ResolveAttribute(expr)
		if err != nil {
			return nil, invalid(field, "filter attribute not found: %v", err)
		}
		switch {
		case a.Type == objects.AttributeCategory:
			c, err := v.Object.ReadCategory(ctx, v.Blobs, a)
			if err != nil {
				return nil, dataOf(field, v, err)
			}
			return &Column{Keys: c.Keys, Names: c.Names, Valid: c.Valid}, nil
		case a.IsContinuous() && a.Width() == 1, a.Type == objects.AttributeInteger:
			cols, err := v.Object.ReadContinuous(ctx, v.Blobs, a)
			if err != nil {
				return nil, dataOf(field, v, err)
			}
			return &Column{Numeric: cols[0]}, nil
		case a.Type == objects.AttributeBool:
			vals, valid, err := v.Object.ReadBool(ctx, v.Blobs, a)
			if err != nil {
				return nil, dataOf(field, v, err)
			}
			num := make([]float64, len(vals))
			for i := range vals {
				switch {
				case !valid[i]:
					num[i] = math.NaN()
				case vals[i]:
					num[i] = 1
				}
			}
			return &Column{Numeric: num}, nil
		}
		return nil, invalid(field, "filter attribute %q is a %s attribute; filters read continuous, integer, bool or category attributes", a.Name, a.Type)
	})
}

// maskOut sets out[i] to NaN where keep[i] is false.
func maskOut(out []float64, keep []bool) {
	if keep == nil {
		return
	}
	for i, k := range keep {
		if !k {
			out[i] = math.NaN()
		}
	}
}

// endpoints are a task's source object with its attribute, and its target.
// A block model source or target (A.14) has its bmEnd set instead of
// sourceAttr (source) or the object's attributes (target).
type endpoints struct {
	source, target *Version
	sourceAttr     *objects.Attribute
	srcBM, tgtBM   *bmEnd
}

// loadEndpoints resolves a task's source (one of sourceKinds, with a
// continuous source attribute) and its target (one of targetKinds the
// caller may write to, with an existing attribute when the target updates
// one). Every problem names its field.
func loadEndpoints(ctx context.Context, env *Env, req Request, src Source, tgt Target, sourceKinds, targetKinds []objects.Kind) (endpoints, error) {
	var ep endpoints
	var err error
	if ep.source, err = loadObject(ctx, env, req.Access, req.Org, "source", src.Object, false); err != nil {
		return ep, err
	}
	if err := requireKind("source", ep.source, sourceKinds...); err != nil {
		return ep, err
	}
	if ep.source.BlockModel != nil {
		if ep.srcBM, err = openBlockModel(ctx, env, "source", ep.source, src.Object, false); err != nil {
			return ep, err
		}
		if err := ep.srcBM.sourceColumn("source.attribute", src.Attribute); err != nil {
			return ep, err
		}
		if err := ep.srcBM.checkFilter("source.filter", src.Filter); err != nil {
			return ep, err
		}
	} else if ep.sourceAttr, err = continuousAttribute("source.attribute", ep.source, src.Attribute); err != nil {
		return ep, err
	}
	if ep.target, err = loadObject(ctx, env, req.Access, req.Org, "target", tgt.Object, true); err != nil {
		return ep, err
	}
	if err := requireKind("target", ep.target, targetKinds...); err != nil {
		return ep, err
	}
	if ep.target.BlockModel != nil {
		if ep.tgtBM, err = openBlockModel(ctx, env, "target", ep.target, tgt.Object, true); err != nil {
			return ep, err
		}
		if err := ep.tgtBM.checkFilter("target.filter", tgt.Filter); err != nil {
			return ep, err
		}
		return ep, ep.tgtBM.targetColumn(tgt)
	}
	return ep, checkTargetAttribute("target.attribute", ep.target, tgt)
}

// sizes returns the number of source rows and target locations.
func (ep *endpoints) sizes() (nSrc, nTgt float64) {
	if ep.srcBM != nil {
		nSrc = float64(ep.srcBM.rows())
	} else {
		s, _ := ep.source.Object.ExpectedLength(ep.sourceAttr.List)
		nSrc = float64(s)
	}
	if ep.tgtBM != nil {
		nTgt = float64(ep.tgtBM.rows())
	} else {
		t, _ := ep.target.Object.ExpectedLength(ep.target.Object.AttributeLists()[0])
		nTgt = float64(t)
	}
	return nSrc, nTgt
}
