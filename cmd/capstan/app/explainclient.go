package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"k8s.io/client-go/rest"

	"github.com/capstan-dev/capstan/pkg/explain"
	"github.com/capstan-dev/capstan/pkg/printable"
	"github.com/capstan-dev/capstan/pkg/readlimit"
)

// `capstan explain` is a careful client of whatever --controller-address
// names (docs/security.md, "What capstan explain sends where"): the
// kubeconfig's credentials go only over https and only to that address,
// no redirect is followed, what is read is capped, and what the address
// answers is escaped before it reaches the terminal.

// MaxAnswerBytes caps what `capstan explain` reads from a controller, so
// a wrong address or a hostile server cannot exhaust its memory.
const MaxAnswerBytes = 16 << 20

// maxExcerptBytes caps how much of an answer that is not an explanation
// (an error, a redirect, another server's page) an error quotes: enough
// for the controller's own error messages, never a whole page.
const maxExcerptBytes = 256

// askTimeout bounds one question to the controller.
const askTimeout = 30 * time.Second

// question is what explain asks: the request path, and the object the
// answer must explain (a pod as NAMESPACE/NAME).
type question struct {
	path, kind, name string
}

// controllerURL parses --controller-address: http (without a scheme)
// or https, a host, an optional path prefix; never user info, since
// credentials come from the kubeconfig and only go over https.
func controllerURL(address string) (*url.URL, error) {
	raw := address
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(strings.TrimSuffix(raw, "/"))
	switch {
	case err != nil:
		return nil, fmt.Errorf("parsing --controller-address %s, %w", printable.Quote(address), err)
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "", u.User != nil, u.RawQuery != "", u.Fragment != "":
		return nil, fmt.Errorf("--controller-address %s: want http[s]://HOST[:PORT], with no user, query or fragment", printable.Quote(address))
	}
	return u, nil
}

// ask gets the controller's answer to q into into. Over https it
// presents the kubeconfig's credentials (token, client certificate or
// exec plugin), which the controller checks with the API server
// (--metrics-secure); over http it presents none.
func ask(ctx context.Context, opts ExplainOptions, q question, into any) error {
	base, err := controllerURL(opts.Controller)
	if err != nil {
		return err
	}
	httpClient, err := controllerClient(opts, base)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, askTimeout)
	defer cancel()
	target := base.String() + q.path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return fmt.Errorf("asking the controller at %s, %w", printable.Quote(opts.Controller), err)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return fmt.Errorf("asking the controller at %s (run without --controller-address to compute from the API alone), %w", printable.Quote(opts.Controller), err)
	}
	defer func() { _ = resp.Body.Close() }()
	answered := &answerError{url: target, status: resp.Status, code: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), q: q}
	if resp.StatusCode != http.StatusOK {
		// Only an excerpt of an error is shown: read no more than it.
		excerpt := make([]byte, maxExcerptBytes+1)
		n, err := io.ReadFull(resp.Body, excerpt)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			return fmt.Errorf("reading the answer of %s, %w", target, err)
		}
		answered.body, answered.location = excerpt[:n], resp.Header.Get("Location")
		return answered
	}
	body, err := readlimit.All(resp.Body, MaxAnswerBytes)
	var tooLarge *readlimit.TooLargeError
	if errors.As(err, &tooLarge) {
		return fmt.Errorf("the controller at %s answered more than %d MiB; refusing to read it", printable.Quote(opts.Controller), MaxAnswerBytes>>20)
	}
	if err != nil {
		return fmt.Errorf("reading the answer of %s, %w", target, err)
	}
	answered.body = body
	if answered.err = json.Unmarshal(body, into); answered.err != nil || !explains(into, q) {
		return answered
	}
	return nil
}

// maxCABytes caps --controller-ca-file: a bundle of a few certificates
// is kilobytes.
const maxCABytes = 1 << 20

// controllerClient follows no redirect: a redirect is an error naming
// where it points. Over https it authenticates as the kubeconfig's user,
// trusting the controller's serving certificate per --controller-ca-file
// (or not verifying it, with --controller-insecure-skip-tls-verify); over
// http it has no credentials, and the flags that only make sense for
// https are refused rather than ignored.
func controllerClient(opts ExplainOptions, base *url.URL) (*http.Client, error) {
	c := &http.Client{}
	if base.Scheme == "https" {
		cfg, err := getConfig()
		if err != nil {
			return nil, fmt.Errorf("loading kubeconfig for the controller's credentials, %w", err)
		}
		cfg = rest.CopyConfig(cfg)
		// The kubeconfig's CA and server name are the API server's, not
		// the controller's.
		cfg.CAFile, cfg.CAData, cfg.ServerName = "", nil, ""
		cfg.Insecure = opts.ControllerInsecure
		if !cfg.Insecure && opts.ControllerCAFile != "" {
			// Read here, capped, rather than by client-go, which reads
			// the whole file.
			if cfg.CAData, err = readlimit.File(opts.ControllerCAFile, maxCABytes); err != nil {
				return nil, fmt.Errorf("reading --controller-ca-file, %w", err)
			}
		}
		if c, err = rest.HTTPClientFor(cfg); err != nil {
			return nil, fmt.Errorf("building the controller client, %w", err)
		}
	} else if opts.ControllerCAFile != "" || opts.ControllerInsecure {
		return nil, fmt.Errorf("--controller-ca-file and --controller-insecure-skip-tls-verify are for an https controller, and %s is http: the kubeconfig's credentials are sent only over https", base)
	}
	// rest's round trippers add the credentials to every request, the
	// redirected ones too, whatever scheme and host those go to.
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c, nil
}

// explains says whether an answer explains what q asked about: the
// pod, the NodePool, or the node by its Node's or NodeClaim's name.
func explains(answer any, q question) bool {
	switch a := answer.(type) {
	case *explain.Pod:
		return a.Pod == q.name
	case *explain.NodePool:
		return a.NodePool == q.name
	case *explain.Node:
		return a.NodeClaim == q.name || a.Node == q.name
	}
	return false
}

// answerError is an answer that is not an explanation: a redirect, an
// error status, or what another server says. Its text names the address
// and quotes a short excerpt of the body, escaped: it comes from the
// network and goes to a terminal.
type answerError struct {
	url, status, contentType, location string
	code                               int
	q                                  question
	body                               []byte
	// err is why a 200 answer could not be decoded, if it could not.
	err error
}

func (e *answerError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s answered %s", e.url, e.status)
	if e.location != "" {
		fmt.Fprintf(&b, ", a redirect to %s; explain follows no redirect, so that credentials go only to the address given: pass the controller's own address", e.location)
		return printable.Line(b.String())
	}
	if e.contentType == "" {
		b.WriteString(" with no Content-Type")
	} else {
		fmt.Fprintf(&b, " with %s", e.contentType)
	}
	if e.code == http.StatusOK {
		fmt.Fprintf(&b, ", not a Capstan controller's explanation of %s %s", e.q.kind, e.q.name)
		if e.err != nil {
			fmt.Fprintf(&b, " (%v)", e.err)
		}
	}
	if excerpt := excerpt(e.body); excerpt != "" {
		b.WriteString(": " + excerpt)
	}
	return printable.Line(b.String())
}

func (e *answerError) Unwrap() error { return e.err }

// excerpt is body's start, at most maxExcerptBytes cut at a rune, with
// an ellipsis when there is more.
func excerpt(body []byte) string {
	if len(body) <= maxExcerptBytes {
		return strings.TrimSpace(string(body))
	}
	cut := maxExcerptBytes
	for cut > maxExcerptBytes-utf8.UTFMax && !utf8.RuneStart(body[cut]) {
		cut--
	}
	return strings.TrimSpace(string(body[:cut])) + "…"
}
