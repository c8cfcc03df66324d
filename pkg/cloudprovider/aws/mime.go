package aws

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"net/textproto"
	"strings"

	"github.com/capstan-dev/capstan/pkg/readlimit"
)

// mimeBoundary separates the parts of the user data Capstan writes, the
// reference's boundary.
const mimeBoundary = "//"

// part is one part of a MIME multi-part document.
type part struct {
	contentType, body string
}

// mergeMIME is a MIME multi-part document (RFC 2046, as cloud-init and
// nodeadm read it) of the user's user data and then Capstan's parts. The
// user's user data, when it is a MIME document itself (it starts with
// MIME-Version: or Content-Type:, the reference's test), gives each of its
// parts with their headers; else it is one part, a shell script when it
// starts with #!, else of contentType. A user MIME document that does
// not parse is an error: the node would not read it either.
func mergeMIME(own, contentType string, parts ...part) (string, error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	if err := w.SetBoundary(mimeBoundary); err != nil {
		return "", fmt.Errorf("setting the MIME boundary, %w", err)
	}
	buf.WriteString("MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"" + mimeBoundary + "\"\r\n\r\n")
	if own != "" {
		if err := copyUserParts(w, own, contentType); err != nil {
			return "", err
		}
	}
	for _, p := range parts {
		if err := writePart(w, textproto.MIMEHeader{"Content-Type": {p.contentType}}, p.body); err != nil {
			return "", err
		}
	}
	if err := w.Close(); err != nil {
		return "", fmt.Errorf("closing the MIME document, %w", err)
	}
	return buf.String(), nil
}

func writePart(w *multipart.Writer, header textproto.MIMEHeader, body string) error {
	pw, err := w.CreatePart(header)
	if err != nil {
		return fmt.Errorf("adding a MIME part, %w", err)
	}
	if _, err := io.WriteString(pw, body); err != nil {
		return fmt.Errorf("writing a MIME part, %w", err)
	}
	return nil
}

// copyUserParts adds the user's user data to w: its parts, or itself as
// one part.
func copyUserParts(w *multipart.Writer, own, contentType string) error {
	trimmed := strings.TrimSpace(own)
	if !strings.HasPrefix(trimmed, "MIME-Version:") && !strings.HasPrefix(trimmed, "Content-Type:") {
		if strings.HasPrefix(own, "#!") {
			contentType = contentTypeShell
		}
		return writePart(w, textproto.MIMEHeader{"Content-Type": {contentType}}, own)
	}
	r, err := multipartReader(own)
	if err != nil {
		return fmt.Errorf("reading userData as MIME, %w", err)
	}
	for {
		p, err := r.NextRawPart()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading a part of userData, %w", err)
		}
		// A part is never longer than the document it is read from.
		body, err := readlimit.All(p, int64(len(own)))
		if err != nil {
			return fmt.Errorf("reading a part of userData, %w", err)
		}
		if err := writePart(w, p.Header, string(body)); err != nil {
			return err
		}
	}
}

// multipartReader reads the parts of a MIME multi-part document: its
// headers (a message's, RFC 5322) name a multipart/* Content-Type with
// its boundary.
func multipartReader(doc string) (*multipart.Reader, error) {
	msg, err := mail.ReadMessage(strings.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("reading the MIME headers, %w", err)
	}
	mediaType, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		return nil, fmt.Errorf("reading the Content-Type, %w", err)
	}
	if !strings.HasPrefix(mediaType, "multipart/") || params["boundary"] == "" {
		return nil, fmt.Errorf("content type %s is not multi-part with a boundary", mediaType)
	}
	return multipart.NewReader(msg.Body, params["boundary"]), nil
}
