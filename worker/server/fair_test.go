package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fairnessDurationEnv sets how long TestFairAdmission keeps the busy
// callers busy (a Go duration; default 5s). The run is 20s:
//
//	GEOSTAT_FAIRNESS_DURATION=20s go test ./worker/server -run TestFairAdmission -v
const fairnessDurationEnv = "GEOSTAT_FAIRNESS_DURATION"

// TestFairAdmission: with the default limits (64 in flight, 16 per token),
// four tokens each keep 30 requests in flight (slow uploads: PUT /data
// bodies sent over 150-440 ms, as a slow link would) while a fifth token
// reads an object every 200 ms. The busy tokens are held to their shares
// (they get 429) and the fifth gets no error, with a p99 latency under 2 s.
// Before fair admission the four took the 64 slots and the fifth got 503.
func TestFairAdmission(t *testing.T) {
	duration := 5 * time.Second
	if v := os.Getenv(fairnessDurationEnv); v != "" {
		d, err := time.ParseDuration(v)
		require.NoError(t, err, "%s", fairnessDurationEnv)
		duration = d
	}
	const busyTokens, perToken = 4, 30
	var entries []server.TokenEntry
	for i := range busyTokens + 1 {
		entries = append(entries, server.TokenEntry{Token: fmt.Sprintf("token-%d", i),
			User: store.User{ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i+1)},
			Orgs: map[string]map[string]server.Role{org: {server.Any: server.RoleOwner}}})
	}
	app := startApp(t, server.Options{TokensFile: writeTokens(t, entries)})
	reader := newClient(t, app, fmt.Sprintf("token-%d", busyTokens))
	reader.postObject("p.json", mustJSON(setupPointset(t, reader)))

	transport := &http.Transport{MaxIdleConnsPerHost: 2 * busyTokens * perToken}
	defer transport.CloseIdleConnections()
	hc := &http.Client{Transport: transport}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()

	// The busy callers: each request sends "[" at once (the worker admits
	// it on its headers) and the rest of its body after its hold.
	var statuses [busyTokens]struct {
		sync.Mutex
		n map[int]int
	}
	limited := make(chan int, busyTokens*perToken) // a token got 429
	var wg sync.WaitGroup
	for tok := range busyTokens {
		statuses[tok].n = map[int]int{}
		for g := range perToken {
			wg.Add(1)
			go func() {
				defer wg.Done()
				hold := 150*time.Millisecond + time.Duration(g)*10*time.Millisecond
				name := sha256.Sum256(fmt.Appendf(nil, "%d-%d", tok, g))
				rest := `{"name":"` + hex.EncodeToString(name[:]) + `"}]`
				for ctx.Err() == nil {
					status, err := slowPut(ctx, hc, app.URL()+wsPrefix+"/data", fmt.Sprintf("token-%d", tok), rest, hold)
					if err != nil {
						continue // the test stopped
					}
					statuses[tok].Lock()
					statuses[tok].n[status]++
					statuses[tok].Unlock()
					if status == http.StatusTooManyRequests {
						select {
						case limited <- tok:
						default:
						}
					}
				}
			}()
		}
	}
	// The pool is taken before the reads start: every busy token was held
	// to its share at least once (bounded).
	seen := map[int]bool{}
	deadline := time.After(30 * time.Second)
	for len(seen) < busyTokens {
		select {
		case tok := <-limited:
			seen[tok] = true
		case <-deadline:
			t.Fatalf("the busy tokens never reached their limits: %v", seen)
		}
	}

	// The fifth caller reads every 200 ms.
	type read struct {
		status  int
		err     error
		latency time.Duration
	}
	var reads []read
	var mu sync.Mutex
	var rwg sync.WaitGroup
	tick := time.NewTicker(200 * time.Millisecond)
	for end := time.After(duration); ; {
		select {
		case <-tick.C:
			rwg.Add(1)
			go func() {
				defer rwg.Done()
				start := time.Now()
				status, err := get(hc, app.URL()+wsPrefix+"/objects/path/p.json", reader.token)
				mu.Lock()
				reads = append(reads, read{status, err, time.Since(start)})
				mu.Unlock()
			}()
			continue
		case <-end:
		}
		break
	}
	tick.Stop()
	rwg.Wait()
	stop()
	wg.Wait()

	require.GreaterOrEqual(t, len(reads), int(duration/(200*time.Millisecond))-2)
	latencies := make([]time.Duration, len(reads))
	var failed []string
	for i, r := range reads {
		if r.err != nil || r.status != http.StatusOK {
			failed = append(failed, fmt.Sprintf("read %d: status %d, error %v", i, r.status, r.err))
		}
		latencies[i] = r.latency
	}
	assert.Empty(t, failed, "the fifth caller's reads of %d", len(reads))
	slices.Sort(latencies)
	p99 := latencies[(len(latencies)*99+99)/100-1]
	assert.Less(t, p99, 2*time.Second, "p99 of the fifth caller's reads")
	for tok := range busyTokens {
		n := statuses[tok].n
		t.Logf("token %d: %v", tok, n)
		assert.Positive(t, n[http.StatusOK], "token %d was served", tok)
		assert.Positive(t, n[http.StatusTooManyRequests], "token %d was held to its share", tok)
		for status := range n {
			assert.Contains(t, []int{http.StatusOK, http.StatusTooManyRequests}, status, "token %d", tok)
		}
	}
	t.Logf("%d reads, p99 %v, max %v", len(reads), p99, latencies[len(latencies)-1])
}

// slowPut sends PUT url with the body "[" then, after hold, rest; it
// returns the status.
func slowPut(ctx context.Context, hc *http.Client, url, token, rest string, hold time.Duration) (int, error) {
	pr, pw := io.Pipe()
	go func() {
		if _, err := pw.Write([]byte("[")); err != nil {
			return
		}
		select {
		case <-time.After(hold):
		case <-ctx.Done():
			pw.CloseWithError(ctx.Err())
			return
		}
		_, err := io.Copy(pw, strings.NewReader(rest))
		pw.CloseWithError(err)
	}()
	defer pr.CloseWithError(io.ErrClosedPipe) // unblocks the writer when the answer came first
	return send(ctx, hc, http.MethodPut, url, token, pr)
}

// get sends GET url with a token and returns the status.
func get(hc *http.Client, url, token string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return send(ctx, hc, http.MethodGet, url, token, nil)
}

// send sends method url with a token and body, reads the answer to its end
// and returns its status.
func send(ctx context.Context, hc *http.Client, method, url, token string, body io.Reader) (int, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}
