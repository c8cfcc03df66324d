package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// recorder is a server that records the Authorization header of every
// request it receives: what a redirect's target would learn.
type recorder struct {
	mu   sync.Mutex
	auth []string
}

func (r *recorder) record(req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.auth = append(r.auth, req.Header.Get("Authorization"))
}

func (r *recorder) handler(answer string) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		r.record(req)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(answer))
	}
}

func (r *recorder) received() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.auth
}

// reply is what the test's controller answers; "{plain}" and "{other}"
// in Location are the plain-HTTP server's and the other host's address.
type reply struct {
	status                      int
	contentType, body, location string
}

// hasControl says whether s has a byte a terminal could act on: a rune
// that does not print other than a newline, or a byte that is not UTF-8.
func hasControl(s string) bool {
	return !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r != '\n' && !unicode.IsPrint(r) })
}

// `capstan explain` against a real TLS server (and a plain one): it
// follows no redirect, so neither plain HTTP nor another host receives
// the kubeconfig's token; sends credentials only over https; escapes
// what the controller says before printing it; and says which address
// answered what when that is not a controller's answer.
func TestExplainIsACarefulClient(t *testing.T) {
	const token = "s3cret"
	kubeconfigWithToken(t, token)
	const nodeAnswer = `{"nodeClaim": "n", "nodePool": "p", "lifecycle": "Ready", "disruption": "none"}`
	for _, tc := range []struct {
		name   string
		reply  reply
		output string
		// plain runs the controller over plain HTTP, with opts as given;
		// user puts basic-auth credentials in its address.
		plain, user bool
		opts        ExplainOptions
		// wantErr are substrings of the error, wantOut of the output.
		wantErr, wantOut []string
	}{{
		name:    "a redirect to plain HTTP",
		reply:   reply{status: http.StatusFound, location: "{plain}/explain/node/n"},
		wantErr: []string{"{controller}/explain/node/n answered 302 Found, a redirect to {plain}/explain/node/n", "follows no redirect"},
	}, {
		name:    "a redirect to another host",
		reply:   reply{status: http.StatusTemporaryRedirect, location: "{other}/explain/node/n"},
		wantErr: []string{"{controller}/explain/node/n answered 307 Temporary Redirect, a redirect to {other}/explain/node/n"},
	}, {
		name:    "an http address with --controller-insecure-skip-tls-verify",
		plain:   true,
		opts:    ExplainOptions{ControllerInsecure: true},
		reply:   reply{status: http.StatusOK, contentType: "application/json", body: nodeAnswer},
		wantErr: []string{"the kubeconfig's credentials are sent only over https", "{controller}"},
	}, {
		name:    "an http address with --controller-ca-file",
		plain:   true,
		opts:    ExplainOptions{ControllerCAFile: "ca.crt"},
		reply:   reply{status: http.StatusOK, contentType: "application/json", body: nodeAnswer},
		wantErr: []string{"the kubeconfig's credentials are sent only over https"},
	}, {
		name:    "an http address, without credentials",
		plain:   true,
		reply:   reply{status: http.StatusOK, contentType: "application/json", body: nodeAnswer},
		wantOut: []string{"NodeClaim n (node none yet, NodePool p): Ready"},
	}, {
		name:    "an http address with a user and password",
		plain:   true,
		user:    true,
		reply:   reply{status: http.StatusOK, contentType: "application/json", body: nodeAnswer},
		wantErr: []string{"want http[s]://HOST[:PORT], with no user"},
	}, {
		name: "escape sequences in the answer",
		reply: reply{status: http.StatusOK, contentType: "application/json",
			body: `{"nodeClaim": "n", "nodePool": "p\u001b[2J", "lifecycle": "Ready\r", "disruption": "\u001b]0;owned\u0007 \u009b2J \u202e", "unknown": ["a\nNodeClaim forged"]}`},
		wantOut: []string{`NodeClaim n (node none yet, NodePool p\x1b[2J): Ready\r`, `disruption: \x1b]0;owned\a \u009b2J \u202e`, `not known here: a\nNodeClaim forged`},
	}, {
		name: "escape sequences in the answer, as JSON",
		reply: reply{status: http.StatusOK, contentType: "application/json",
			body: `{"nodeClaim": "n", "nodePool": "p\u001b[2J", "lifecycle": "Ready\r", "disruption": "\u009b2J \u202e \u007f"}`},
		output:  "json",
		wantOut: []string{`"nodePool": "p\u001b[2J"`, `"lifecycle": "Ready\r"`, `"disruption": "\u009b2J \u202e \u007f"`},
	}, {
		name:    "escape sequences in an error",
		reply:   reply{status: http.StatusInternalServerError, contentType: "text/plain; charset=utf-8", body: "boom\x1b[2J\r\x1b]0;owned\x07\n"},
		wantErr: []string{`{controller}/explain/node/n answered 500 Internal Server Error with text/plain; charset=utf-8: boom\x1b[2J\r\x1b]0;owned\a`},
	}, {
		name:    "a long error, cut short",
		reply:   reply{status: http.StatusForbidden, contentType: "text/plain", body: strings.Repeat("\x1b", 100) + strings.Repeat("x", 10000)},
		wantErr: []string{`answered 403 Forbidden with text/plain: \x1b\x1b`, strings.Repeat("x", 100) + "…"},
	}, {
		name:    "an HTML page",
		reply:   reply{status: http.StatusOK, contentType: "text/html", body: "<html><title>Grafana</title></html>"},
		wantErr: []string{"{controller}/explain/node/n answered 200 OK with text/html, not a Capstan controller's explanation", "<html><title>Grafana</title></html>"},
	}, {
		name:    "a plain 404",
		reply:   reply{status: http.StatusNotFound, contentType: "text/plain; charset=utf-8", body: "404 page not found\n"},
		wantErr: []string{"{controller}/explain/node/n answered 404 Not Found with text/plain; charset=utf-8: 404 page not found"},
	}, {
		name:    "truncated JSON",
		reply:   reply{status: http.StatusOK, contentType: "application/json", body: `{"nodeClaim": "n`},
		wantErr: []string{`{controller}/explain/node/n answered 200 OK with application/json, not a Capstan controller's explanation`, `{"nodeClaim": "n`},
	}, {
		name:    "JSON explaining something else",
		reply:   reply{status: http.StatusOK, body: `{"status": "ok"}`},
		wantErr: []string{`{controller}/explain/node/n answered 200 OK with no Content-Type, not a Capstan controller's explanation of node n: {"status": "ok"}`},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			plainTarget, otherTarget := &recorder{}, &recorder{}
			plain := httptest.NewServer(plainTarget.handler(nodeAnswer))
			defer plain.Close()
			other := httptest.NewTLSServer(otherTarget.handler(nodeAnswer))
			defer other.Close()
			// Another host name for the same machine.
			otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
			expand := strings.NewReplacer("{plain}", plain.URL, "{other}", otherURL)
			asked := &recorder{}
			handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				asked.record(r)
				if tc.reply.location != "" {
					w.Header().Set("Location", expand.Replace(tc.reply.location))
				}
				if tc.reply.contentType != "" {
					w.Header().Set("Content-Type", tc.reply.contentType)
				} else {
					// Not sniffed: the header is absent.
					w.Header()["Content-Type"] = nil
				}
				w.WriteHeader(tc.reply.status)
				_, _ = w.Write([]byte(tc.reply.body))
			})
			var controller *httptest.Server
			opts := tc.opts
			if tc.plain {
				controller = httptest.NewServer(handler)
			} else {
				controller = httptest.NewTLSServer(handler)
				opts.ControllerInsecure = true
			}
			defer controller.Close()
			opts.Controller, opts.Output = controller.URL, "text"
			if tc.user {
				opts.Controller = strings.Replace(controller.URL, "://", "://u:p@", 1)
			}
			if tc.output != "" {
				opts.Output = tc.output
			}
			expand = strings.NewReplacer("{plain}", plain.URL, "{other}", otherURL, "{controller}", controller.URL)

			var out strings.Builder
			err := runExplain(context.Background(), &out, opts, "node", "n")
			switch {
			case err == nil && len(tc.wantErr) > 0:
				t.Errorf("no error; printed:\n%.1000s", out.String())
			case err != nil && len(tc.wantErr) == 0:
				t.Errorf("error: %v", err)
			case err != nil:
				for _, want := range tc.wantErr {
					if !strings.Contains(err.Error(), expand.Replace(want)) {
						t.Errorf("error\n%.1000v\nlacks\n%s", err, expand.Replace(want))
					}
				}
				if hasControl(err.Error()) || strings.Contains(err.Error(), "\n") {
					t.Errorf("error %q is not one escaped line", err)
				}
				// At worst an excerpt's byte is escaped in 4 (\x1b).
				if len(err.Error()) > 5*maxExcerptBytes {
					t.Errorf("error of %d bytes for an excerpt of at most %d", len(err.Error()), maxExcerptBytes)
				}
			}
			for _, want := range tc.wantOut {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output\n%s\nlacks\n%s", out.String(), want)
				}
			}
			if hasControl(out.String()) {
				t.Errorf("output %q has control characters", out.String())
			}
			// Whatever else happened, no credential went anywhere but
			// to an https controller.
			if tc.plain && slices.ContainsFunc(asked.received(), func(a string) bool { return a != "" }) {
				t.Errorf("the plain-HTTP controller received Authorization %q", asked.received())
			}
			if diff := cmp.Diff([]string(nil), append(plainTarget.received(), otherTarget.received()...)); diff != "" {
				t.Errorf("requests to the redirect targets, by Authorization (-want +got):\n%s", diff)
			}
		})
	}
}

func TestControllerURL(t *testing.T) {
	for _, tc := range []struct {
		address, want, wantErr string
	}{
		{address: "localhost:8080", want: "http://localhost:8080"},
		{address: "https://capstan.example:8443/", want: "https://capstan.example:8443"},
		{address: "https://proxy.example/capstan", want: "https://proxy.example/capstan"},
		{address: "ftp://capstan.example", wantErr: "want http[s]://HOST[:PORT]"},
		{address: "https://u:p@capstan.example", wantErr: "with no user"},
		{address: "https://capstan.example?x=1", wantErr: "with no user, query or fragment"},
		{address: "https://", wantErr: "want http[s]://HOST[:PORT]"},
		{address: "http://a\x1b[2J", wantErr: `parsing --controller-address "http://a\x1b[2J"`},
	} {
		t.Run(tc.address, func(t *testing.T) {
			u, err := controllerURL(tc.address)
			var got, gotErr string
			if err != nil {
				gotErr = err.Error()
			} else {
				got = u.String()
			}
			if got != tc.want || !strings.Contains(gotErr, tc.wantErr) || (tc.wantErr == "") != (err == nil) {
				t.Errorf("controllerURL(%q) = %q, %v; want %q, an error with %q", tc.address, got, err, tc.want, tc.wantErr)
			}
		})
	}
}
