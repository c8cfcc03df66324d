package explainserver

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// When MaxConcurrent requests are being answered, another is refused at
// once with 429 and Retry-After, not queued.
func TestConcurrencyIsBounded(t *testing.T) {
	s := &Server{slots: make(chan struct{}, MaxConcurrent)}
	for range MaxConcurrent {
		s.slots <- struct{}{}
	}
	called := false
	rec := httptest.NewRecorder()
	s.answer(func(*http.Request) (any, error) { called = true; return nil, nil })(rec, httptest.NewRequest(http.MethodGet, Path+"node/x", nil))
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" || called {
		t.Errorf("busy server answered %d (called %t); want 429 with Retry-After", rec.Code, called)
	}
	<-s.slots
	rec = httptest.NewRecorder()
	s.answer(func(*http.Request) (any, error) { return map[string]string{}, nil })(rec, httptest.NewRequest(http.MethodGet, Path+"node/x", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("with a free slot: %d, want 200", rec.Code)
	}
}
