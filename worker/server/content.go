package server

import (
	"mime"
	"net/http"
)

// StoredContentCSP is the Content-Security-Policy of every response whose
// body is stored content (a file's bytes, a blob, a report page): the
// page's own inline styles and inline SVG, data: images and fonts, nothing
// else. No script runs, nothing is fetched, no form is sent, no other site
// frames it, and the page is sandboxed (it has no origin of its own, so it
// cannot read the worker's other answers either).
const StoredContentCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; sandbox"

// apiCSP is the Content-Security-Policy of every other answer (JSON,
// problem documents, metrics): nothing in them is to be run or loaded.
const apiCSP = "default-src 'none'; frame-ancestors 'none'"

// Disposition says how a browser is to present stored content.
type Disposition string

// Dispositions of stored content.
const (
	// Inline shows the content in the browser (under StoredContentCSP).
	Inline Disposition = "inline"
	// Attachment offers the content as a file to save.
	Attachment Disposition = "attachment"
)

// SetStoredContentHeaders sets the headers of an answer that serves stored
// bytes, whoever stored them: its Content-Type (application/octet-stream
// when contentType is empty, never left to the browser's sniffing),
// X-Content-Type-Options: nosniff, StoredContentCSP and Content-Disposition
// (d, with filename when it is not empty). Every route serving stored
// content calls it before writing the body, so that an uploaded HTML page
// with a script is inert whichever route serves it.
func SetStoredContentHeaders(h http.Header, contentType string, d Disposition, filename string) {
	if contentType == "" {
		contentType = "application/octet-stream"
	}
	h.Set("Content-Type", contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", StoredContentCSP)
	var params map[string]string
	if filename != "" {
		params = map[string]string{"filename": filename}
	}
	disposition := mime.FormatMediaType(string(d), params)
	if disposition == "" { // a name FormatMediaType cannot encode
		disposition = string(d)
	}
	h.Set("Content-Disposition", disposition)
}

// setDefaultSecurityHeaders sets the headers every answer of the worker
// carries (a route serving stored content overrides the policy with
// SetStoredContentHeaders): no content sniffing and a policy that runs and
// loads nothing.
func setDefaultSecurityHeaders(h http.Header) {
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", apiCSP)
}
