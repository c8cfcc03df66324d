package aws

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The request body reaches the server whole even though the caller
// closes its own as soon as the response is in.
func TestBufferedBodies(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_, _ = w.Write(b)
	}))
	defer srv.Close()
	for range 50 {
		body := io.NopCloser(strings.NewReader("Action=DescribeInstances&Version=2016-11-15"))
		req, err := http.NewRequest(http.MethodPost, srv.URL, body)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := NewHTTPClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil || string(got) != "Action=DescribeInstances&Version=2016-11-15" {
			t.Fatalf("echo %q, %v", got, err)
		}
	}
}

// A request body over MaxRequestBytes is refused, not buffered whole.
func TestBufferedBodiesAreCapped(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	req, err := http.NewRequest(http.MethodPost, srv.URL, io.NopCloser(bytes.NewReader(make([]byte, MaxRequestBytes+1))))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := NewHTTPClient().Do(req)
	if err == nil {
		_ = resp.Body.Close()
	}
	if want := "reading the request body, larger than the 16 MiB limit"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Do(a body over the cap) = %v, want an error with %q", err, want)
	}
}
