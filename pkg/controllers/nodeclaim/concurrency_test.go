package nodeclaim

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
	"github.com/capstan-dev/capstan/pkg/test"
)

// gate holds each launch until want launches are in flight together (or
// a while has passed, so a controller that launches one at a time still
// ends), and records the most in flight at once.
type gate struct {
	cloudprovider.CloudProvider
	want    int
	mu      sync.Mutex
	in, max int
	all     chan struct{}
}

func (g *gate) Create(ctx context.Context, nc *v1.NodeClaim) (*v1.NodeClaim, error) {
	g.mu.Lock()
	g.in++
	g.max = max(g.max, g.in)
	if g.in == g.want {
		close(g.all)
	}
	g.mu.Unlock()
	select {
	case <-g.all:
	case <-time.After(3 * time.Second):
	}
	defer func() {
		g.mu.Lock()
		g.in--
		g.mu.Unlock()
	}()
	return g.CloudProvider.Create(ctx, nc)
}

func (g *gate) most() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.max
}

// NodeClaims launch side by side, up to MaxConcurrentReconciles at once:
// a launch that takes seconds on a real cloud does not hold up the
// others (docs/aws.md, "Launch concurrency").
func TestLaunchesRunConcurrently(t *testing.T) {
	const n = 3
	g := test.NewGomega(t)
	launches := &gate{want: n, all: make(chan struct{})}
	f := startWith(t, setup{workers: n, cloud: func(c *sim.Cloud) cloudprovider.CloudProvider {
		launches.CloudProvider = c
		return launches
	}})
	var claims []*v1.NodeClaim
	for range n {
		claims = append(claims, f.claim(t))
	}
	g.Eventually(func(g gomega.Gomega) {
		for _, nc := range claims {
			g.Expect(launched(g, nc).Status).To(gomega.Equal(metav1.ConditionTrue))
		}
	}).Should(gomega.Succeed())
	if got := launches.most(); got != n {
		t.Errorf("at most %d launches in flight at once, want %d", got, n)
	}
}
