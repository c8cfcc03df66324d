package aws

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
)

// ClientNodeClasses reads EC2NodeClasses through a (cache-backed)
// client.
type ClientNodeClasses struct {
	Client client.Reader
}

// EC2NodeClass implements NodeClasses.
func (n ClientNodeClasses) EC2NodeClass(ctx context.Context, name string) (*awsv1.EC2NodeClass, error) {
	nc := &awsv1.EC2NodeClass{}
	if err := n.Client.Get(ctx, client.ObjectKey{Name: name}, nc); err != nil {
		return nil, fmt.Errorf("getting ec2nodeclass %s, %w", name, err)
	}
	return nc, nil
}

// Refresher reloads the provider's catalog every Interval while the
// manager runs (prices and reservations move, types come and go), and
// deletes launch templates no launch has used for LaunchTemplateTTL.
type Refresher struct {
	Provider *Provider
	Interval time.Duration
}

// Start implements manager.Runnable.
func (r Refresher) Start(ctx context.Context) error {
	for {
		if err := r.Provider.Refresh(ctx); err != nil {
			log.FromContext(ctx).Error(err, "refreshing the aws catalog")
		}
		if err := r.Provider.collectLaunchTemplates(ctx); err != nil {
			log.FromContext(ctx).Error(err, "collecting launch templates")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-r.Provider.opts.Clock.After(r.Interval):
		}
	}
}
