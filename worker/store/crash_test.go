package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const crashDirEnv = "GEOSTAT_STORE_CRASH_CHILD_DIR"

// TestCrashChild is the child half of TestCrashBetweenBlobAndCommit: it runs
// only when re-executed with crashDirEnv set. It uploads the blob of a new
// attribute, then writes a new version and stops at the hook between the
// fsync of the version file and its rename, announcing it on stdout; the
// parent then kills it with SIGKILL.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("child process of TestCrashBetweenBlobAndCommit")
	}
	s, err := OpenEmbedded(EmbeddedOptions{Dir: dir, Schemas: objecttest.Schemas(t)})
	require.NoError(t, err)
	s.hook = func(point string) {
		if point == "version-synced" {
			fmt.Println("AT_COMMIT_POINT")
			os.Stdout.Sync()
			select {} // wait to be killed
		}
	}
	v, err := s.GetObject(ctx, testWS, Ref{Path: "crash/points.json"})
	require.NoError(t, err)
	o, err := objects.Decode(v.Object)
	require.NoError(t, err)
	b := objecttest.NewBlobs()
	key := b.Float64([][]float64{{7, 8}}, []string{"new"})
	data, _ := b.Get(key)
	require.NoError(t, s.PutBlob(ctx, testWS, key, bytes.NewReader(data)))
	fmt.Println("BLOB_WRITTEN " + key)
	_, err = o.WriteContinuous(objects.AttributeTarget{Operation: objects.OperationCreate, Name: "new"},
		objects.ContinuousValues{Data: key, Length: 2, Width: 1})
	require.NoError(t, err)
	body, err := o.JSON()
	require.NoError(t, err)
	_, err = s.PutObject(ctx, testWS, PutRequest{ID: v.ObjectID, Object: body, By: alice})
	t.Fatalf("the hook should have stopped the put: %v", err)
}

// TestCrashBetweenBlobAndCommit kills a process that has written a blob and
// the new version's file (fsynced, not yet renamed) and checks that the
// previous version is intact, still the latest, and readable, and that the
// store accepts new versions afterwards.
func TestCrashBetweenBlobAndCommit(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir)
	doc, _ := pointsetDoc(t, s)
	v1 := put(t, s, PutRequest{Path: "crash/points.json", Object: objecttest.JSON(doc)})

	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.v")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var blobKey string
	deadline := time.After(20 * time.Second)
wait:
	for {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "child exited before reaching the commit point")
			if k, found := strings.CutPrefix(l, "BLOB_WRITTEN "); found {
				blobKey = k
			}
			if l == "AT_COMMIT_POINT" {
				break wait
			}
		case <-deadline:
			cmd.Process.Kill()
			t.Fatal("child did not reach the commit point")
		}
	}
	// The new version's bytes are on disk, fsynced, under tmp/.
	pending, err := os.ReadDir(filepath.Join(dir, "tmp"))
	require.NoError(t, err)
	require.NotEmpty(t, pending, "the new version was written and synced before the crash")
	require.NoError(t, cmd.Process.Kill()) // SIGKILL: no cleanup runs
	_ = cmd.Wait()
	go func() {
		for range lines {
		}
	}()

	s2 := openTest(t, dir)
	ok, err := s2.BlobExists(ctx, testWS, blobKey)
	require.NoError(t, err)
	assert.True(t, ok, "the blob written before the crash is kept (orphaned, harmless)")
	got, err := s2.GetObject(ctx, testWS, Ref{Path: "crash/points.json", IncludeVersions: true})
	require.NoError(t, err)
	assert.Equal(t, v1.VersionID, got.VersionID, "the previous version is still the latest")
	assert.Len(t, got.History, 1)
	assert.JSONEq(t, string(v1.Object), string(got.Object))
	o, err := objects.Decode(got.Object)
	require.NoError(t, err)
	a, err := o.ResolveAttribute("grade")
	require.NoError(t, err)
	vals, err := o.ReadContinuous(ctx, Blobs(s2, testWS, got), a)
	require.NoError(t, err)
	assert.Equal(t, [][]float64{{1, 2}}, vals, "and readable, blobs included")
	left, err := os.ReadDir(filepath.Join(dir, "tmp"))
	require.NoError(t, err)
	assert.Empty(t, left, "leftover temporary files are removed at open")

	var m map[string]any
	require.NoError(t, json.Unmarshal(got.Object, &m))
	v2 := put(t, s2, PutRequest{ID: v1.ObjectID, Object: objecttest.JSON(m)})
	assert.NotEqual(t, v1.VersionID, v2.VersionID)
}
