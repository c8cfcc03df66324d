package aws_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
	"github.com/capstan-dev/capstan/pkg/test"
	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

// benchFleetLatency is what one CreateFleet takes on the endpoint in
// BenchmarkCreate50: seconds, as an instant fleet takes on real EC2.
const benchFleetLatency = 3 * time.Second

// BenchmarkCreate50 launches 50 identical NodeClaims at once, as the
// lifecycle controller's workers do after a scale-up, against the local
// endpoint answering each CreateFleet after benchFleetLatency; it reports
// the seconds the 50 launches take (docs/aws.md, "Launch concurrency").
// Run it with -benchtime=1x: one iteration is 50 launches.
func BenchmarkCreate50(b *testing.B) {
	for _, bc := range []struct {
		name  string
		batch aws.FleetBatchOptions
	}{
		{name: "batched", batch: aws.FleetBatchOptions{}},
		// A fleet per NodeClaim: the launches in parallel only.
		{name: "unbatched", batch: aws.FleetBatchOptions{MaxItems: 1}},
	} {
		b.Run(bc.name, func(b *testing.B) { benchmarkCreate(b, bc.batch) })
	}
}

func benchmarkCreate(b *testing.B, batch aws.FleetBatchOptions) {
	const n = 50
	profile := &simv1alpha1.CloudProfile{Spec: simv1alpha1.CloudProfileSpec{
		Region: "us-west-2", Zones: []string{"us-west-2a", "us-west-2b"}, Style: simv1alpha1.CloudStyleAWS,
		LaunchLatency: metav1.Duration{Duration: 2 * time.Second},
	}}
	api, cluster := endpoint(b, ec2endpoint.Options{Profile: profile, ClusterName: "bench", CreateFleetLatency: benchFleetLatency})
	class := readyNodeClass(b, api, "bench")
	fleets := &fleetSizes{EC2: api}
	p, err := aws.New(fleets, aws.Options{Region: "us-west-2", ClusterName: "bench", Clock: clock.RealClock{}, NodeClasses: nodeClasses{class.Name: class}, Cluster: cluster,
		FleetBatch: batch})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := p.Refresh(ctx); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for j := range n {
			nc := benchNodeClaim(class, fmt.Sprintf("bench-%d-%d", i, j))
			wg.Go(func() {
				if _, err := p.Create(ctx, nc); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/50-launches")
	b.ReportMetric(float64(len(fleets.sizes))/float64(b.N), "CreateFleet-calls/50-launches")
}

func benchNodeClaim(class *awsv1.EC2NodeClass, name string) *v1.NodeClaim {
	return test.NodeClaim(func(nc *v1.NodeClaim) {
		nc.Name = name
		nc.Labels = map[string]string{v1.NodePoolLabelKey: "default"}
		nc.Spec.NodeClassRef = &v1.NodeClassReference{Group: awsv1.Group, Kind: aws.NodeClassKind, Name: class.Name}
		nc.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
			{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5.large", "c5.large"}},
			{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeOnDemand}},
		}
	})
}
