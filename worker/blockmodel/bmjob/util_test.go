package bmjob

import (
	"bytes"
	"os"
)

func writeFile(path string, b []byte) error { return os.WriteFile(path, b, 0o644) }

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
