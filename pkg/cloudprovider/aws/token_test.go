package aws_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

// tokenRecorder passes EC2 requests to the endpoint, recording each
// CreateFleet's ClientToken, and answers the first with a throttling 503
// (which the SDK retries) and the second with UnauthorizedOperation
// (which it does not).
type tokenRecorder struct {
	next   http.Handler
	mu     sync.Mutex
	tokens []string
}

func (r *tokenRecorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	req.Body = io.NopCloser(bytes.NewReader(body))
	form, _ := url.ParseQuery(string(body))
	if form.Get("Action") != "CreateFleet" {
		r.next.ServeHTTP(w, req)
		return
	}
	r.mu.Lock()
	r.tokens = append(r.tokens, form.Get("ClientToken"))
	n := len(r.tokens)
	r.mu.Unlock()
	answer := func(status int, code string) {
		w.WriteHeader(status)
		_, _ = io.WriteString(w, `<Response><Errors><Error><Code>`+code+`</Code><Message>refused</Message></Error></Errors><RequestID>r</RequestID></Response>`)
	}
	switch n {
	case 1:
		answer(http.StatusServiceUnavailable, "Unavailable")
	case 2:
		answer(http.StatusBadRequest, "UnauthorizedOperation")
	default:
		r.next.ServeHTTP(w, req)
	}
}

// Each launch attempt is a new request with a new client token; the SDK's
// own retry of one request repeats its token (EC2 idempotency: the same
// token replays the first answer). A NodeClaim refused once launches on
// the next attempt instead of getting the refusal replayed.
func TestFleetClientTokenPerAttempt(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	profile := &simv1alpha1.CloudProfile{Spec: simv1alpha1.CloudProfileSpec{
		Region: "us-west-2", Zones: []string{"us-west-2a"}, Style: simv1alpha1.CloudStyleAWS, LaunchLatency: metav1.Duration{Duration: time.Second},
	}}
	srv, err := ec2endpoint.New(ec2endpoint.Options{Profile: profile, Clock: clk, ClusterName: "tokens"})
	if err != nil {
		t.Fatal(err)
	}
	rec := &tokenRecorder{next: srv}
	hs := httptest.NewServer(rec)
	t.Cleanup(func() {
		hs.Close()
		_ = srv.Close()
	})
	api := ec2.New(ec2.Options{
		Region: "us-west-2", BaseEndpoint: awssdk.String(hs.URL), HTTPClient: aws.NewHTTPClient(),
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = 3
			o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
		}),
	})
	class := readyNodeClass(t, api, "tokens")
	p, err := aws.New(api, aws.Options{Region: "us-west-2", ClusterName: "tokens", Clock: clk, NodeClasses: nodeClasses{class.Name: class},
		Cluster: aws.KnownCluster{Endpoint: "https://tokens.eks.test", CABundle: "Q0E=", ServiceCIDR: "172.20.0.0/16"}})
	if err != nil {
		t.Fatal(err)
	}
	nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "tokens-abcde", UID: "uid-1", Labels: map[string]string{v1.NodePoolLabelKey: "tokens"}}}
	nc.Spec.NodeClassRef = &v1.NodeClassReference{Group: awsv1.Group, Kind: aws.NodeClassKind, Name: class.Name}
	nc.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
		{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5.large"}},
		{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeOnDemand}},
	}

	_, err = p.Create(ctx, nc)
	if ce, ok := cloudprovider.AsCreateError(err); !ok || ce.Code != "UnauthorizedOperation" {
		t.Fatalf("first attempt: %v, want a refusal with code UnauthorizedOperation", err)
	}
	if _, err := p.Create(ctx, nc); err != nil {
		t.Fatalf("second attempt: %v", err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.tokens) != 3 {
		t.Fatalf("%d CreateFleet requests (tokens %q), want 3", len(rec.tokens), rec.tokens)
	}
	if rec.tokens[0] == "" || rec.tokens[0] != rec.tokens[1] {
		t.Errorf("the SDK's retry sent token %q after %q: want the same, set", rec.tokens[1], rec.tokens[0])
	}
	if rec.tokens[2] == "" || rec.tokens[2] == rec.tokens[0] {
		t.Errorf("the second attempt reused token %q: want a new one", rec.tokens[2])
	}
	for _, tok := range rec.tokens {
		if tok == string(nc.UID) {
			t.Errorf("token %q is the NodeClaim's UID", tok)
		}
	}
}
