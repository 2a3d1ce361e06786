package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"512MiB": 512 << 20, "8GiB": 8 << 30, "1.5GiB": 3 << 29, "2GB": 2e9, "1000": 1000, "64KiB": 64 << 10} {
		got, err := parseBytes(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "lots", "-1GiB", "0", "GiB"} {
		_, err := parseBytes(bad)
		assert.Error(t, err, bad)
	}
}
